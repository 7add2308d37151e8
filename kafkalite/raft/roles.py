"""The roles of a Raft voter and the transitions between them, as Kafka 4's QuorumState (the
class comment, KIP-595 with KIP-996's Prospective state). Observers are not modelled: every node
here is a voter.

| role        | transitions out                                                                  |
|-------------|----------------------------------------------------------------------------------|
| Unattached  | Unattached (higher epoch, or a vote granted), Prospective (election timeout),     |
|             | Follower (a leader at >= epoch)                                                  |
| Prospective | Unattached (higher epoch; pre-vote lost or timed out, no leader known),           |
|             | Candidate (a majority of pre-votes), Follower (leader found, or lost with a known |
|             | leader)                                                                          |
| Candidate   | Unattached (higher epoch), Prospective (election timeout or loss, after the       |
|             | backoff), Leader (a majority of votes), Follower (another won this epoch)         |
| Leader      | Unattached (higher epoch), Resigned (shutdown, check-quorum), Follower (a leader  |
|             | at a higher epoch)                                                               |
| Follower    | Unattached (higher epoch), Prospective (fetch timeout), Follower (higher epoch)   |
| Resigned    | Unattached (higher epoch, or the election timeout: epoch + 1), Follower           |

A node that is the only voter goes to Candidate (then Leader) from any role but Leader.
Every transition but to Resigned is written to the quorum-state file first (Resigned lives in
memory only: after a restart a former leader is Resigned again, read from the file)."""

from __future__ import annotations

import enum


class Role(enum.Enum):
    UNATTACHED = "Unattached"
    PROSPECTIVE = "Prospective"
    CANDIDATE = "Candidate"
    LEADER = "Leader"
    FOLLOWER = "Follower"
    RESIGNED = "Resigned"


_U, _P, _C, _L, _F, _R = (Role.UNATTACHED, Role.PROSPECTIVE, Role.CANDIDATE, Role.LEADER,
                          Role.FOLLOWER, Role.RESIGNED)

TRANSITIONS: dict[Role, frozenset[Role]] = {
    _U: frozenset({_U, _P, _F}),
    _P: frozenset({_U, _C, _F}),
    _C: frozenset({_U, _P, _L, _F}),
    _L: frozenset({_U, _R, _F}),
    _F: frozenset({_U, _P, _F}),
    _R: frozenset({_U, _F}),
}
SOLE_VOTER_TRANSITIONS: dict[Role, frozenset[Role]] = {
    role: targets | (frozenset({_C}) if role is not _L else frozenset())
    for role, targets in TRANSITIONS.items()
}


class IllegalTransitionError(RuntimeError):
    """A transition the table (or its epoch rule) does not allow: a bug, never a peer's doing."""


def check_transition(source: Role, target: Role, epoch: int, new_epoch: int, sole_voter: bool) -> None:
    """Raise IllegalTransitionError unless ``source`` at ``epoch`` may become ``target`` at
    ``new_epoch``: the table above plus Kafka's epoch rules (epochs never go back; Candidate is
    epoch + 1; Leader, Resigned and Prospective keep the epoch; a second Follower or Unattached
    in the same epoch only from a role without a leader)."""
    table = SOLE_VOTER_TRANSITIONS if sole_voter else TRANSITIONS
    if target not in table[source]:
        raise IllegalTransitionError(f"{source.value} -> {target.value} is not a transition")
    if new_epoch < epoch:
        raise IllegalTransitionError(f"{source.value} -> {target.value}: epoch {epoch} -> {new_epoch}")
    same = new_epoch == epoch
    if target is _C and not (new_epoch == epoch + 1 or (same and sole_voter and source is _C)):
        raise IllegalTransitionError(f"Candidate at epoch {new_epoch} from epoch {epoch}")
    if target in (_L, _R, _P) and not same:
        raise IllegalTransitionError(f"{target.value} must keep epoch {epoch}, not {new_epoch}")
    if target is _F and same and source in (_F, _L, _R):
        raise IllegalTransitionError(f"{source.value} -> Follower in the same epoch {epoch}")
    if target is _U and same and source not in (_U, _P):
        raise IllegalTransitionError(f"{source.value} -> Unattached in the same epoch {epoch}")
