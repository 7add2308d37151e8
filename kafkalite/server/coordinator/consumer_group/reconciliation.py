"""A member's way from its current assignment to its target (Kafka's CurrentAssignmentBuilder),
as one transition function over the MemberState table:

| state | member reports | next |
|---|---|---|
| STABLE, epoch == target epoch | - | unchanged |
| STABLE, epoch < target epoch | - | compute (below) |
| UNREVOKED_PARTITIONS | still owns a partition pending revocation | unchanged (epoch kept) |
| UNREVOKED_PARTITIONS | revoked them all | compute |
| UNRELEASED_PARTITIONS | - | compute (another member may have released) |

compute: kept = current ∩ target; revoke = current - target; new = target - current, less
the partitions another member still holds (its assigned or pending revocation ones).
- revoke non-empty and the member owns one of them -> UNREVOKED_PARTITIONS: assigned = kept,
  epoch kept (a partition is revoked before it is assigned elsewhere);
- else new partitions held by others -> UNRELEASED_PARTITIONS, epoch = target epoch, assigned =
  kept + the free new ones;
- else STABLE, epoch = target epoch, assigned = kept + new.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field

from .assignors import Assignment, TopicId


class MemberState(enum.IntEnum):
    STABLE = 0
    UNREVOKED_PARTITIONS = 1
    UNRELEASED_PARTITIONS = 2
    UNKNOWN = 127


@dataclass(frozen=True)
class Reconciled:
    """What a member holds: its state and epochs, its assigned partitions and those it must revoke."""

    state: MemberState = MemberState.STABLE
    member_epoch: int = 0
    previous_member_epoch: int = -1
    assigned: Assignment = field(default_factory=dict)
    pending_revocation: Assignment = field(default_factory=dict)


def _owns_any(owned: Assignment | None, partitions: Assignment) -> bool:
    """The member still reports one of ``partitions`` (None: it did not say, so it does)."""
    if owned is None:
        return any(partitions.values())
    return any(owned.get(t, frozenset()) & ps for t, ps in partitions.items())


def _compute(
    current: Reconciled,
    target_epoch: int,
    target: Assignment,
    owned: Assignment | None,
    held_by_other: Callable[[TopicId, int], bool],
) -> Reconciled:
    kept: dict[TopicId, frozenset[int]] = {}
    revoke: dict[TopicId, frozenset[int]] = {}
    assignable: dict[TopicId, frozenset[int]] = {}
    unreleased = False
    for t in set(current.assigned) | set(target):
        have, want = current.assigned.get(t, frozenset()), target.get(t, frozenset())
        if have & want:
            kept[t] = have & want
        if have - want:
            revoke[t] = have - want
        free = frozenset(p for p in want - have if not held_by_other(t, p))
        unreleased = unreleased or len(free) < len(want - have)
        if have & want or free:
            assignable[t] = (have & want) | free
    if revoke and _owns_any(owned, revoke):
        return Reconciled(
            MemberState.UNREVOKED_PARTITIONS,
            current.member_epoch,
            current.previous_member_epoch,
            kept,
            revoke,
        )
    state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
    previous = current.member_epoch if target_epoch != current.member_epoch else current.previous_member_epoch
    return Reconciled(state, target_epoch, previous, assignable, {})


def reconcile(
    current: Reconciled,
    target_epoch: int,
    target: Assignment,
    owned: Assignment | None,
    held_by_other: Callable[[TopicId, int], bool],
) -> Reconciled:
    """The member's next state (the table above). ``owned``: what its heartbeat reported it owns
    (None when it did not send it); ``held_by_other(topic, partition)``: another member holds it."""
    state = current.state
    if state == MemberState.STABLE and current.member_epoch == target_epoch:
        return current
    if state == MemberState.UNREVOKED_PARTITIONS and _owns_any(owned, current.pending_revocation):
        return current
    if state == MemberState.UNKNOWN:
        raise ValueError("a member in an unknown state")
    return _compute(current, target_epoch, target, owned, held_by_other)
