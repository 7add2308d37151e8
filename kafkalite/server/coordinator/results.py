"""What the group coordinator answers (Kafka's JoinGroupResult, SyncGroupResult, GroupSummary) and
where it writes what must outlive it (``OffsetsStore``: the group's partition of
``__consumer_offsets``); shared by the membership (group_coordinator.py), the offsets (offsets.py)
and the handlers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .log_store import ProducerFields

NO_GENERATION = -1
NO_MEMBER = ""


@dataclass(frozen=True)
class JoinResult:
    error: int
    generation_id: int = NO_GENERATION
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str = NO_MEMBER
    member_id: str = NO_MEMBER
    members: tuple[tuple[str, str | None, bytes], ...] = ()  # the leader's: (id, instance id, metadata)


@dataclass(frozen=True)
class SyncResult:
    error: int
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


@dataclass(frozen=True)
class MemberSummary:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@dataclass(frozen=True)
class GroupSummary:
    """A group as DescribeGroups shows it (Kafka's GroupSummary)."""

    state: str
    protocol_type: str
    protocol_data: str
    members: tuple[MemberSummary, ...]


class OffsetsStore(Protocol):
    """Where the coordinator's records go: the group's partition of __consumer_offsets."""

    def append(self, group_id: str, records: list[tuple[bytes, bytes | None]],
               done: Callable[[int], None], producer: ProducerFields | None = None,
               placed: Callable[[int], None] | None = None) -> None:
        """Append ``records`` (key, value or None) and call ``done`` with an error code once
        committed or refused; a transactional batch of ``producer`` when given (TxnOffsetCommit's).
        ``placed``, if given, is told the batch's base offset as soon as the leader appended it,
        before ``done``."""
