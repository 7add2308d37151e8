"""A consumer group as the coordinator keeps it (Kafka's classic GroupMetadata and
MemberMetadata): its state, generation, members and their protocols, committed offsets, and the
offsets transactional producers committed that their transactions have not ended yet.

The states and which state each may be entered from, as one table (Kafka's GroupState
validPreviousStates); ``transition_to`` refuses any other move, so a bug shows as an error, not
as a group in a state no handler expects:

- Empty: no members (offsets may remain); a JoinGroup starts a rebalance.
- PreparingRebalance: waiting for every known member to (re)join, until the rebalance timeout.
- CompletingRebalance: the generation is chosen; waiting for the leader's SyncGroup assignment.
- Stable: every member has its assignment; heartbeats keep it so.
- Dead: removed (DeleteGroups, or its offsets partition moved away).
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any


class GroupState(enum.Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


S = GroupState
VALID_PREVIOUS_STATES: dict[GroupState, frozenset[GroupState]] = {
    S.EMPTY: frozenset({S.PREPARING_REBALANCE}),
    S.PREPARING_REBALANCE: frozenset({S.STABLE, S.COMPLETING_REBALANCE, S.EMPTY}),
    S.COMPLETING_REBALANCE: frozenset({S.PREPARING_REBALANCE}),
    S.STABLE: frozenset({S.COMPLETING_REBALANCE}),
    S.DEAD: frozenset({S.STABLE, S.PREPARING_REBALANCE, S.COMPLETING_REBALANCE, S.EMPTY, S.DEAD}),
}


class IllegalStateTransition(RuntimeError):
    pass


@dataclass
class MemberMetadata:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]  # (name, metadata), the member's order of preference
    assignment: bytes = b""
    # What a waiting JoinGroup / SyncGroup answers through (None: not waiting).
    await_join: Callable[[Any], None] | None = None
    await_sync: Callable[[Any], None] | None = None
    last_heartbeat_ms: int = 0
    is_new: bool = False  # joined during this rebalance with a fresh id (Kafka's isNew)

    def metadata(self, protocol: str) -> bytes:
        for name, metadata in self.protocols:
            if name == protocol:
                return metadata
        raise KeyError(protocol)

    def matches(self, protocols: list[tuple[str, bytes]]) -> bool:
        return self.protocols == protocols


@dataclass(frozen=True)
class CommittedOffset:
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int = -1
    # Where its record is in __consumer_offsets (Kafka's recordOffset, appendedBatchOffset): of a
    # regular and a transactional commit of one partition, the one written later wins. -1: not
    # known (not appended yet).
    record_offset: int = field(default=-1, compare=False)

    def written_before(self, other: CommittedOffset) -> bool:
        """Whether this offset's record precedes ``other``'s (Kafka's olderThan); an offset whose
        place is not known counts as older."""
        return self.record_offset < 0 or other.record_offset < 0 or self.record_offset < other.record_offset


@dataclass
class GroupMetadata:
    group_id: str
    state: GroupState = GroupState.EMPTY
    state_timestamp: int = -1
    generation_id: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str | None = None
    members: dict[str, MemberMetadata] = field(default_factory=dict)
    pending_members: set[str] = field(default_factory=set)  # ids handed out by MEMBER_ID_REQUIRED
    static_members: dict[str, str] = field(default_factory=dict)  # group.instance.id -> member id
    offsets: dict[tuple[str, int], CommittedOffset] = field(default_factory=dict)
    # Transactional offsets not yet ended, per producer id (Kafka's pendingTransactionalOffsetCommits):
    # made committed by the transaction's COMMIT marker, dropped by its ABORT.
    pending_txn_offsets: dict[int, dict[tuple[str, int], CommittedOffset]] = field(default_factory=dict)
    new_member_added: bool = False

    # --- state -----------------------------------------------------------------------------------

    def is_in(self, *states: GroupState) -> bool:
        return self.state in states

    def transition_to(self, state: GroupState, now_ms: int = -1) -> None:
        if self.state not in VALID_PREVIOUS_STATES[state]:
            raise IllegalStateTransition(f"Group {self.group_id} should be in one of "
                                         f"{sorted(s.value for s in VALID_PREVIOUS_STATES[state])} "
                                         f"before moving to {state.value}, not {self.state.value}")
        self.state = state
        self.state_timestamp = now_ms

    def can_rebalance(self) -> bool:
        return self.state in VALID_PREVIOUS_STATES[GroupState.PREPARING_REBALANCE]

    # --- transactional offsets (Kafka's GroupMetadata *TxnOffsetCommit*) ---------------------------

    def prepare_txn_offsets(self, producer_id: int, offsets: dict[tuple[str, int], CommittedOffset]) -> None:
        """Offsets a transaction commits, pending from before their append (prepareTxnOffsetCommit)."""
        self.pending_txn_offsets.setdefault(producer_id, {}).update(offsets)

    def txn_offsets_appended(self, producer_id: int, offsets: dict[tuple[str, int], CommittedOffset],
                             record_offset: int) -> None:
        """Their record is at ``record_offset`` (onTxnOffsetCommitAppend): the pending offsets that
        are still these take the place; ones the transaction ended or replaced meanwhile are left."""
        pending = self.pending_txn_offsets.get(producer_id)
        if pending is None:
            return
        for tp, offset in offsets.items():
            if pending.get(tp) == offset:
                pending[tp] = replace(offset, record_offset=record_offset)

    def txn_offsets_failed(self, producer_id: int, offsets: dict[tuple[str, int], CommittedOffset]) -> None:
        """Their append failed (failPendingTxnOffsetCommit): they are no longer pending."""
        pending = self.pending_txn_offsets.get(producer_id)
        if pending is None:
            return
        for tp, offset in offsets.items():
            if pending.get(tp) == offset and pending[tp].record_offset < 0:
                del pending[tp]
        if not pending:
            del self.pending_txn_offsets[producer_id]

    def complete_txn_offsets(self, producer_id: int, commit: bool) -> int:
        """The producer's transaction ended (completePendingTxnOffsetCommit): on COMMIT its offsets
        become the committed ones, unless a committed offset was written after them; on ABORT they
        go. How many became committed. Offsets whose append has not completed are dropped (Kafka
        cannot meet them: the producer waits for TxnOffsetCommit's answer before ending)."""
        pending = self.pending_txn_offsets.pop(producer_id, None)
        if not pending or not commit:
            return 0
        moved = 0
        for tp, offset in pending.items():
            if offset.record_offset < 0:
                continue
            current = self.offsets.get(tp)
            if current is None or current.written_before(offset):
                self.offsets[tp] = offset
                moved += 1
        return moved

    def commit_offset(self, tp: tuple[str, int], offset: CommittedOffset) -> None:
        """A regular commit's offset, once appended (onOffsetCommitAppend): kept unless the
        committed one was written after it (a transaction's, committed meanwhile)."""
        current = self.offsets.get(tp)
        if current is None or current.written_before(offset):
            self.offsets[tp] = offset

    def remove_offsets(self, partitions: list[tuple[str, int]]) -> None:
        """Committed and pending offsets of ``partitions`` removed (a tombstone's, Kafka's removeOffsets)."""
        for tp in partitions:
            self.offsets.pop(tp, None)
        for producer_id in list(self.pending_txn_offsets):
            pending = self.pending_txn_offsets[producer_id]
            for tp in partitions:
                pending.pop(tp, None)
            if not pending:
                del self.pending_txn_offsets[producer_id]

    def has_pending_txn_offset(self, tp: tuple[str, int]) -> bool:
        return any(tp in pending for pending in self.pending_txn_offsets.values())

    def has_offsets(self) -> bool:
        """Committed or pending offsets (Kafka's hasOffsets): a group with none may go."""
        return bool(self.offsets) or bool(self.pending_txn_offsets)

    # --- members -------------------------------------------------------------------------------

    def add(self, member: MemberMetadata) -> None:
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.leader_id is None:
            self.leader_id = member.member_id
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id
        self.members[member.member_id] = member

    def remove(self, member_id: str) -> MemberMetadata | None:
        member = self.members.pop(member_id, None)
        self.pending_members.discard(member_id)
        if member is not None and member.group_instance_id is not None:
            if self.static_members.get(member.group_instance_id) == member_id:
                del self.static_members[member.group_instance_id]
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        return member

    def has_all_members_joined(self) -> bool:
        return (all(m.await_join is not None for m in self.members.values())
                and not self.pending_members)

    def not_yet_rejoined(self) -> list[MemberMetadata]:
        return [m for m in self.members.values() if m.await_join is None]

    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    # --- protocols ------------------------------------------------------------------------------

    def supports(self, protocol_type: str, protocols: list[tuple[str, bytes]]) -> bool:
        """Kafka's supportsProtocols: a new member must share the type and one protocol."""
        if not protocol_type or not protocols:
            return False
        if not self.members:
            return True
        names = {name for name, _ in protocols}
        return protocol_type == self.protocol_type and bool(names & self.candidate_protocols())

    def candidate_protocols(self) -> set[str]:
        """The protocols every member supports."""
        sets = [{name for name, _ in m.protocols} for m in self.members.values()]
        return set.intersection(*sets) if sets else set()

    def select_protocol(self) -> str:
        """Kafka's selectProtocol: each member votes for its first candidate; most votes win
        (ties: the first in the members' order of preference, as Kafka's maxBy)."""
        candidates = self.candidate_protocols()
        votes: Counter[str] = Counter()
        order: list[str] = []
        for m in self.members.values():
            choice = next(name for name, _ in m.protocols if name in candidates)
            votes[choice] += 1
            if choice not in order:
                order.append(choice)
        return max(order, key=lambda name: votes[name])

    def init_next_generation(self, now_ms: int) -> None:
        """A new generation from the members that rejoined (Kafka's initNextGeneration)."""
        if self.members:
            self.generation_id += 1
            self.protocol_name = self.select_protocol()
            for m in self.members.values():
                m.is_new = False
            self.transition_to(GroupState.COMPLETING_REBALANCE, now_ms)
        else:
            self.generation_id += 1
            self.protocol_type = None
            self.protocol_name = None
            self.transition_to(GroupState.EMPTY, now_ms)
        self.new_member_added = False
