"""One share-partition on its leader (Kafka's SharePartition): which records of a partition a share
group has in flight, in which state, for whom, and how often delivered.

The in-flight window runs from the start offset (every record below it is done with) to the end
offset (the next record never acquired). Each record in it has a state and a delivery count; an
ACQUIRED record also has its member and the time its lock expires. The state changes only along
``TRANSITIONS`` (Kafka's RecordState.validateTransition): AVAILABLE -> ACQUIRED;
ACQUIRED -> AVAILABLE, ACKNOWLEDGED or ARCHIVED; ACKNOWLEDGED and ARCHIVED are terminal. A
record going back to AVAILABLE at the delivery count limit is ARCHIVED instead (a poison record).
The start offset moves past terminal records, so the window holds at most
group.share.partition.max.record.locks records.

Not thread-safe: its SharePartitionManager calls it under one lock. Time comes from ``now_ms``
(tests give a fake clock).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import NamedTuple

from kafkalite.protocol import error_codes as E

from .persister import StateBatch


class RecordState(enum.IntEnum):
    """Kafka's RecordState, with its ids (persisted as ShareSnapshot's DeliveryState)."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4


class AckType(enum.IntEnum):
    """The acknowledge types on the wire (AcknowledgeType; 0 is a gap in the batches sent)."""

    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3


S = RecordState
TRANSITIONS: dict[RecordState, frozenset[RecordState]] = {
    S.AVAILABLE: frozenset({S.ACQUIRED, S.ARCHIVED}),
    S.ACQUIRED: frozenset({S.AVAILABLE, S.ACKNOWLEDGED, S.ARCHIVED}),
    S.ACKNOWLEDGED: frozenset(),
    S.ARCHIVED: frozenset(),
}
TERMINAL = frozenset({S.ACKNOWLEDGED, S.ARCHIVED})
# SharePartition.fetchRecordState: what an acknowledgement makes of an ACQUIRED record.
ACK_TARGET: dict[AckType, RecordState] = {
    AckType.GAP: S.ARCHIVED,
    AckType.ACCEPT: S.ACKNOWLEDGED,
    AckType.RELEASE: S.AVAILABLE,
    AckType.REJECT: S.ARCHIVED,
}


class AcquiredRange(NamedTuple):
    """An AcquiredRecords entry of a ShareFetch answer."""

    first_offset: int
    last_offset: int
    delivery_count: int


class AckBatch(NamedTuple):
    """An AcknowledgementBatch: one type for the whole range, or one per offset."""

    first_offset: int
    last_offset: int
    types: tuple[int, ...]


@dataclass
class InFlight:
    state: RecordState
    delivery_count: int = 0
    member_id: str | None = None
    lock_deadline_ms: int = 0


def ack_types_per_offset(batch: AckBatch) -> list[AckType] | None:
    """The type of each offset of ``batch``; None if the batch is malformed (INVALID_REQUEST)."""
    length = batch.last_offset - batch.first_offset + 1
    if length <= 0 or not batch.types:
        return None
    try:
        types = [AckType(t) for t in batch.types]
    except ValueError:
        return None
    if len(types) == 1:
        return types * length
    return types if len(types) == length else None


class SharePartition:
    def __init__(self, lock_duration_ms: Callable[[], int], delivery_count_limit: int, max_record_locks: int,
                 now_ms: Callable[[], int]) -> None:
        self.lock_duration_ms = lock_duration_ms
        self.delivery_count_limit = delivery_count_limit
        self.max_record_locks = max_record_locks
        self.now_ms = now_ms
        self.start_offset = 0
        self.end_offset = 0
        self.state_epoch = 0
        self.records: dict[int, InFlight] = {}  # offsets in [start_offset, end_offset)

    # --- state from the persister ------------------------------------------------------------

    def load(self, state_epoch: int, start_offset: int, batches: Iterable[StateBatch]) -> None:
        """The state as last written: records in the batches get their state and count; the end
        offset follows the last batch (records never acquired are not in flight)."""
        self.state_epoch = state_epoch
        self.start_offset = self.end_offset = start_offset
        self.records.clear()
        for b in batches:
            for offset in range(max(b.first_offset, start_offset), b.last_offset + 1):
                state = RecordState(b.delivery_state)
                if state is S.ACQUIRED:  # a lock does not outlive its leader
                    state = S.AVAILABLE
                self.records[offset] = InFlight(state, b.delivery_count)
            self.end_offset = max(self.end_offset, b.last_offset + 1)
        for offset in range(self.start_offset, self.end_offset):
            self.records.setdefault(offset, InFlight(S.AVAILABLE))
        self._advance_start()

    # --- acquisition -------------------------------------------------------------------------

    def next_fetch_offset(self) -> int:
        """Where the next read of the log starts: the first AVAILABLE record, else the end offset."""
        for offset in range(self.start_offset, self.end_offset):
            if self.records[offset].state is S.AVAILABLE:
                return offset
        return self.end_offset

    def can_acquire(self) -> bool:
        """Whether an AVAILABLE record is in flight or the window has room for new ones."""
        return (self.end_offset - self.start_offset < self.max_record_locks
                or any(r.state is S.AVAILABLE for r in self.records.values()))

    def acquire(self, member_id: str, batches: Iterable[tuple[int, int, bool]], max_records: int
                ) -> list[AcquiredRange]:
        """Acquire for ``member_id`` the AVAILABLE and new records of the log's ``batches``
        ((base offset, last offset, is a control batch), as read), at most ``max_records``; a
        control batch's records are archived (never delivered). Returns the ranges acquired."""
        now = self.now_ms()
        deadline = now + self.lock_duration_ms()
        acquired: list[AcquiredRange] = []
        count = 0
        for base, last, control in batches:
            for offset in range(max(base, self.start_offset), last + 1):
                if count >= max_records:
                    return acquired
                record = self.records.get(offset)
                if record is None:
                    if offset < self.end_offset:
                        continue  # below the end and not in flight: done with
                    if self.end_offset - self.start_offset >= self.max_record_locks:
                        return acquired
                    for gap in range(self.end_offset, offset):  # compacted away: nothing to deliver
                        self.records[gap] = InFlight(S.ARCHIVED)
                    record = self.records[offset] = InFlight(S.AVAILABLE)
                    self.end_offset = offset + 1
                if record.state is not S.AVAILABLE:
                    continue
                if control:
                    record.state = S.ARCHIVED
                    continue
                record.state = S.ACQUIRED
                record.delivery_count += 1
                record.member_id = member_id
                record.lock_deadline_ms = deadline
                count += 1
                if (acquired and acquired[-1].last_offset == offset - 1
                        and acquired[-1].delivery_count == record.delivery_count):
                    acquired[-1] = acquired[-1]._replace(last_offset=offset)
                else:
                    acquired.append(AcquiredRange(offset, offset, record.delivery_count))
        self._advance_start()
        return acquired

    # --- acknowledgement and release ---------------------------------------------------------

    def acknowledge(self, member_id: str, batches: list[AckBatch]) -> tuple[int, list[int]]:
        """Apply ``member_id``'s acknowledgements: (error, offsets changed). Each batch is all or
        nothing: INVALID_RECORD_STATE if a record of it in the window is not ACQUIRED by this
        member (its lock expired, or it was never its); records below the start offset are done
        with and ignored; a malformed batch is INVALID_REQUEST."""
        changed: list[int] = []
        error = E.NONE
        for batch in batches:
            types = ack_types_per_offset(batch)
            if types is None:
                error = error or E.INVALID_REQUEST
                continue
            # A gap (an offset the client got no record for: compacted, a control batch) needs
            # no lock when it is not in flight or already done with.
            offsets = [(o, t) for o, t in zip(range(batch.first_offset, batch.last_offset + 1), types,
                                               strict=True)
                       if o >= self.start_offset and not (t is AckType.GAP and self._done_with(o))]
            if any(not self._held_by(o, member_id) for o, _ in offsets):
                error = error or E.INVALID_RECORD_STATE
                continue
            for offset, ack in offsets:
                self._settle(self.records[offset], ACK_TARGET[ack])
                changed.append(offset)
        self._advance_start()
        return error, changed

    def release_member(self, member_id: str) -> list[int]:
        """Every record ``member_id`` holds goes back (its session closed, or it left)."""
        changed = [o for o, r in self.records.items() if r.state is S.ACQUIRED and r.member_id == member_id]
        for offset in changed:
            self._settle(self.records[offset], S.AVAILABLE)
        self._advance_start()
        return changed

    def expire_locks(self) -> list[int]:
        """Records whose lock expired go back: AVAILABLE, or ARCHIVED at the delivery limit."""
        now = self.now_ms()
        changed = [o for o, r in self.records.items() if r.state is S.ACQUIRED and r.lock_deadline_ms <= now]
        for offset in changed:
            self._settle(self.records[offset], S.AVAILABLE)
        self._advance_start()
        return changed

    def next_lock_deadline(self) -> int | None:
        deadlines = [r.lock_deadline_ms for r in self.records.values() if r.state is S.ACQUIRED]
        return min(deadlines) if deadlines else None

    def _held_by(self, offset: int, member_id: str) -> bool:
        record = self.records.get(offset)
        return record is not None and record.state is S.ACQUIRED and record.member_id == member_id

    def _done_with(self, offset: int) -> bool:
        record = self.records.get(offset)
        return record is None or record.state in TERMINAL

    def _settle(self, record: InFlight, target: RecordState) -> None:
        if target is S.AVAILABLE and record.delivery_count >= self.delivery_count_limit:
            target = S.ARCHIVED
        assert target in TRANSITIONS[record.state], (record.state, target)
        record.state = target
        record.member_id = None
        record.lock_deadline_ms = 0

    def _advance_start(self) -> None:
        """The start offset moves past terminal records (they leave the window)."""
        while self.start_offset < self.end_offset and self.records[self.start_offset].state in TERMINAL:
            del self.records[self.start_offset]
            self.start_offset += 1

    def move_start_to(self, offset: int) -> None:
        """The log's start moved past records in flight (retention, DeleteRecords): they are gone."""
        if offset <= self.start_offset:
            return
        for o in range(self.start_offset, min(offset, self.end_offset)):
            self.records.pop(o, None)
        self.start_offset = offset
        self.end_offset = max(self.end_offset, offset)

    # --- what the persister is told ----------------------------------------------------------

    def state_batches(self, offsets: Iterable[int]) -> list[StateBatch]:
        """The persisted form of ``offsets`` (ACQUIRED is written as AVAILABLE: a lock does not
        outlive the leader; offsets that left the window are not written, the start offset says
        it), as runs."""
        batches: list[StateBatch] = []
        for offset in sorted(set(offsets)):
            record = self.records.get(offset)
            if record is None:
                continue
            state = S.AVAILABLE if record.state is S.ACQUIRED else record.state
            last = batches[-1] if batches else None
            if (last is not None and last.last_offset + 1 == offset
                    and (last.delivery_state, last.delivery_count) == (state, record.delivery_count)):
                batches[-1] = StateBatch(last.first_offset, offset, state, record.delivery_count)
            else:
                batches.append(StateBatch(offset, offset, int(state), record.delivery_count))
        return batches
