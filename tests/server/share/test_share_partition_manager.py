"""SharePartitionManager with a log of real batches and persisters that answer at once or later:
share sessions (epochs, limit), the start from share.auto.offset.reset, fetches waiting for a
state that loads later, acknowledgements answered only once written, released and expired
records written and woken, max_records across partitions, leadership that leaves, a write that
fails (the share-partition read again)."""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from typing import Any

from kafkalite.common.errors import ApiError
from kafkalite.protocol import error_codes as E
from kafkalite.server.share.manager import GroupShareSettings, SharePartitionManager
from kafkalite.server.share.persister import InMemoryPersister, ShareStateKey, StateBatch
from kafkalite.server.share.session import SharePartitionRef
from kafkalite.server.share.settings import SharePartitionConfig
from kafkalite.server.share.share_partition import AckBatch, AcquiredRange
from tests.support.raw_requests import batch

TOPIC_ID = uuid.UUID(int=7)
REF = SharePartitionRef("t", TOPIC_ID, 0)
KEY = ShareStateKey("g", TOPIC_ID.bytes, 0)
CONFIG = SharePartitionConfig(record_lock_duration_ms=1000, min_record_lock_duration_ms=1000,
                              max_share_sessions=2)


class Log:
    """Batches of 3 records each, from offset 0."""

    def __init__(self, batches: int, log_start: int = 0) -> None:
        self.data = b""
        self.log_start = log_start
        self.end = 0
        self.leader = True
        self.times: list[tuple[int, int]] = []  # (base offset, the batch's timestamp)
        for _ in range(batches):
            self.append(3)

    def append(self, records: int, timestamp: int = 0) -> None:
        b = bytearray(batch([b"v%d" % i for i in range(records)]))
        b[0:8] = struct.pack(">q", self.end)  # the base offset (outside the CRC)
        self.data += bytes(b)
        self.times.append((self.end, timestamp))
        self.end += records

    def offset_for_timestamp(self, topic: str, partition: int, timestamp: int) -> int:
        self._check()
        return next((base for base, ts in self.times if ts >= timestamp), self.end)

    def read(self, topic: str, partition: int, offset: int, max_bytes: int) -> bytes:
        """Whole batches from the one holding ``offset``, at most ``max_bytes`` but at least one."""
        self._check()
        pos, start = 0, None
        while pos < len(self.data):
            base, length = struct.unpack_from(">qi", self.data, pos)
            count = struct.unpack_from(">i", self.data, pos + 23)[0] + 1  # last offset delta + 1
            if start is None and base + count > offset:
                start = pos
            if start is not None and pos + length + 12 - start > max_bytes and pos > start:
                break
            pos += length + 12
        return b"" if start is None else self.data[start:pos]

    def bounds(self, topic: str, partition: int) -> tuple[int, int]:
        self._check()
        return self.log_start, self.end

    def leader_epoch(self, topic: str, partition: int) -> int:
        self._check()
        return 0

    def _check(self) -> None:
        if not self.leader:
            raise ApiError(E.NOT_LEADER_OR_FOLLOWER, "moved")


class LaterPersister(InMemoryPersister):
    """Answers when told to (``answer``), as a persister over the network does."""

    def __init__(self) -> None:
        super().__init__()
        self.pending: list[Callable[[], None]] = []

    def read_state(self, key: Any, leader_epoch: int, done: Any) -> None:
        self.pending.append(lambda: InMemoryPersister.read_state(self, key, leader_epoch, done))

    def initialize_state(self, key: Any, state_epoch: int, start_offset: int, done: Any) -> None:
        self.pending.append(lambda: InMemoryPersister.initialize_state(self, key, state_epoch, start_offset,
                                                                       done))

    def write_state(self, key: Any, state_epoch: int, leader_epoch: int, start_offset: int, batches: Any,
                    done: Any) -> None:
        self.pending.append(lambda: InMemoryPersister.write_state(self, key, state_epoch, leader_epoch,
                                                                  start_offset, batches, done))

    def answer(self) -> None:
        while self.pending:
            self.pending.pop(0)()


class Clock:
    now = 0

    def __call__(self) -> int:
        return self.now


def manager(log: Log, persister: Any = None, reset: str = "earliest", wakes: list | None = None,
            clock: Clock | None = None) -> SharePartitionManager:
    return SharePartitionManager(
        CONFIG, persister or InMemoryPersister(), log,
        wake=(lambda t, p: wakes.append((t, p))) if wakes is not None else (lambda t, p: None),
        group_settings=lambda group: GroupShareSettings(reset), now_ms=clock or Clock(), start_timer=False)


def acquired(m: SharePartitionManager, member: str, max_records: int = 100, **kw: Any) -> list[AcquiredRange]:
    fetched = m.fetch("g", member, [REF], max_records, 1 << 20, **kw)[REF]
    assert fetched.error == E.NONE
    return list(fetched.acquired)


def test_sessions_open_continue_close_and_are_bounded():
    m = manager(Log(1))
    assert m.session("g", "a", 1, [REF], [])[0] == E.SHARE_SESSION_NOT_FOUND
    assert m.session("g", "a", 0, [REF], []) == (E.NONE, [REF])
    assert m.session("g", "a", 2, [], [])[0] == E.INVALID_SHARE_SESSION_EPOCH
    assert m.session("g", "a", 1, [], []) == (E.NONE, [REF])  # the session keeps its partitions
    assert m.session("g", "a", 2, [], [(TOPIC_ID, 0)]) == (E.NONE, [])  # forgotten
    assert m.check_session("g", "a", 3) == E.NONE  # a ShareAcknowledge moves the epoch too
    assert m.check_session("g", "a", 3) == E.INVALID_SHARE_SESSION_EPOCH
    assert m.session("g", "b", 0, [], [])[0] == E.NONE
    assert m.session("g", "c", 0, [], [])[0] == E.SHARE_SESSION_LIMIT_REACHED  # max 2
    m.close_session("g", "a")
    assert m.session("g", "c", 0, [], [])[0] == E.NONE


def test_the_start_comes_from_share_auto_offset_reset():
    log = Log(2)
    assert acquired(manager(log, reset="latest"), "a") == []  # from the end: nothing yet
    log.append(2)
    latest = manager(log, reset="latest")
    assert acquired(latest, "a") == []
    log.append(1)
    assert acquired(latest, "a") == [AcquiredRange(8, 8, 1)]
    assert acquired(manager(Log(2), reset="earliest"), "a") == [AcquiredRange(0, 5, 1)]


def test_by_duration_starts_at_the_first_record_no_older_than_the_duration():
    log = Log(0)
    log.append(3, timestamp=1000)
    log.append(3, timestamp=5000)
    clock = Clock()
    clock.now = 6000
    assert acquired(manager(log, reset="by_duration:PT2S", clock=clock), "a") == [AcquiredRange(3, 5, 1)]
    assert acquired(manager(log, reset="by_duration:PT10S", clock=clock), "a") == [AcquiredRange(0, 5, 1)]
    assert acquired(manager(log, reset="by_duration:PT0S", clock=clock), "a") == []  # none that new


def test_the_state_read_from_the_persister_is_where_fetching_goes_on():
    persister = InMemoryPersister()
    persister.write_state(KEY, 0, 0, 3, [StateBatch(3, 3, 2, 1), StateBatch(4, 5, 0, 2)], lambda e: None)
    m = manager(Log(3), persister)
    assert acquired(m, "a") == [AcquiredRange(4, 5, 3), AcquiredRange(6, 8, 1)]


def test_a_fetch_waits_for_a_state_that_loads_later():
    persister = LaterPersister()
    woken: list[str] = []
    m = manager(Log(1), persister)
    assert acquired(m, "a", on_loaded=lambda: woken.append("a")) == []
    assert woken == []
    persister.answer()  # read, then initialize: the waiter is woken once, without the lock held
    assert woken == ["a"]
    assert acquired(m, "a") == [AcquiredRange(0, 2, 1)]


def test_an_acknowledgement_is_answered_once_written():
    persister = LaterPersister()
    wakes: list = []
    m = manager(Log(1), persister, wakes=wakes)
    acquired(m, "a")
    persister.answer()
    assert acquired(m, "a") == [AcquiredRange(0, 2, 1)]
    answers: list[dict] = []
    m.acknowledge("g", "a", {REF: [AckBatch(0, 2, (1, 2, 3))]}, answers.append)
    assert answers == [] and wakes == []
    persister.answer()
    assert answers == [{REF: E.NONE}] and wakes == [("t", 0)]  # the released record can be fetched
    persister.read_state(KEY, 0, lambda r: answers.append(r))
    persister.answer()
    assert answers[-1].start_offset == 1 and answers[-1].batches[0] == StateBatch(1, 1, 0, 1)
    m.acknowledge("g", "b", {REF: [AckBatch(1, 1, (1,))]}, answers.append)  # b holds nothing
    assert answers[-1] == {REF: E.INVALID_RECORD_STATE}


def test_expired_locks_and_closed_sessions_give_records_back_and_are_written():
    clock = Clock()
    persister = InMemoryPersister()
    wakes: list = []
    m = manager(Log(2), persister, wakes=wakes, clock=clock)
    m.session("g", "a", 0, [REF], [])
    assert acquired(m, "a", max_records=3) == [AcquiredRange(0, 2, 1)]
    assert acquired(m, "b", max_records=3) == [AcquiredRange(3, 5, 1)]
    clock.now = 1000
    m.expire_locks()
    assert wakes == [("t", 0)]
    assert acquired(m, "b", max_records=2) == [AcquiredRange(0, 1, 2)]
    m.session("g", "b", 0, [REF], [])
    m.close_session("g", "b")  # b's records of its session's partitions go back
    assert acquired(m, "a") == [AcquiredRange(0, 1, 3), AcquiredRange(2, 5, 2)]
    states: list = []
    persister.read_state(KEY, 0, states.append)
    # Written after the expiry (0-5, delivered once) and the close (0-1, delivered twice).
    assert list(states[0].batches) == [StateBatch(0, 1, 0, 2), StateBatch(2, 5, 0, 1)]


def test_errors_and_leadership():
    log = Log(1)
    m = manager(log)
    unknown = SharePartitionRef(None, uuid.uuid4(), 0)
    assert m.fetch("g", "a", [unknown], 10, 100)[unknown].error == E.UNKNOWN_TOPIC_ID
    acquired(m, "a")
    log.leader = False
    assert m.fetch("g", "a", [REF], 10, 100)[REF].error == E.NOT_LEADER_OR_FOLLOWER
    m.forget_partition("t", 0)
    assert m.holds("g") == []
    log.leader = True
    assert acquired(m, "b") == [AcquiredRange(0, 2, 1)]  # the state as the persister has it


def test_the_log_is_read_in_chunks_until_enough_is_acquired(monkeypatch):
    from kafkalite.server.share import manager as manager_module

    monkeypatch.setattr(manager_module, "READ_CHUNK_BYTES", 1)  # one batch a read
    log = Log(4)
    reads: list[int] = []
    read = log.read
    log.read = lambda t, p, offset, size: reads.append(offset) or read(t, p, offset, size)  # type: ignore[method-assign]
    m = manager(log)
    fetched = m.fetch("g", "a", [REF], 7, 1 << 20)[REF]
    assert fetched.acquired == (AcquiredRange(0, 6, 1),) and reads == [0, 3, 6]
    assert len(fetched.records or b"") == len(log.data) // 4 * 3  # the three batches holding 0-6
    # The client's MaxBytes bounds what is read: here one batch.
    assert m.fetch("g", "b", [REF], 100, 1)[REF].acquired == (AcquiredRange(7, 8, 1),)


def test_a_fenced_write_or_a_forgotten_group_reads_the_state_again():
    persister = InMemoryPersister()
    m = manager(Log(1), persister)
    assert acquired(m, "a") == [AcquiredRange(0, 2, 1)]
    persister.initialize_state(KEY, 5, 2, lambda e: None)  # the state restarted elsewhere (epoch 5, at 2)
    answers: list[dict] = []
    m.acknowledge("g", "a", {REF: [AckBatch(0, 0, (1,))]}, answers.append)
    assert answers == [{REF: E.FENCED_STATE_EPOCH}]
    assert acquired(m, "b") == [AcquiredRange(2, 2, 1)]  # read again: from 2
    m.forget_group("g")
    assert m.holds("g") == []


class FailingPersister(InMemoryPersister):
    """Writes fail while ``error`` is set (a share coordinator that stayed unavailable)."""

    error = E.NONE

    def write_state(self, key: Any, state_epoch: int, leader_epoch: int, start_offset: int, batches: Any,
                    done: Any) -> None:
        if self.error:
            done(self.error)
            return
        super().write_state(key, state_epoch, leader_epoch, start_offset, batches, done)


def test_a_change_that_could_not_be_written_is_not_kept():
    # Kept, the acceptance the client was told failed held offset 0 as done: never delivered
    # again here, yet delivered again by the next leader (which reads the persisted state).
    persister = FailingPersister()
    m = manager(Log(1), persister)
    assert acquired(m, "a") == [AcquiredRange(0, 2, 1)]
    persister.error = E.COORDINATOR_NOT_AVAILABLE
    answers: list[dict] = []
    m.acknowledge("g", "a", {REF: [AckBatch(0, 0, (1,))]}, answers.append)
    assert answers == [{REF: E.COORDINATOR_NOT_AVAILABLE}]
    persister.error = E.NONE
    # The state is read again: nothing of 0-2 was written, so all three can be delivered.
    assert acquired(m, "b") == [AcquiredRange(0, 2, 1)]


class InterleavingPersister(InMemoryPersister):
    """Runs ``hook`` inside the first write, before storing it: another thread's change made
    between the first write's computing and its reaching the persister."""

    def __init__(self) -> None:
        super().__init__()
        self.hook: Callable[[], None] | None = None

    def write_state(self, key: Any, state_epoch: int, leader_epoch: int, start_offset: int, batches: Any,
                    done: Any) -> None:
        hook, self.hook = self.hook, None
        if hook is not None:
            hook()
        super().write_state(key, state_epoch, leader_epoch, start_offset, batches, done)


def test_writes_reach_the_persister_in_the_order_they_were_made():
    # Before: the later write (offset 1 accepted) was stored first, the earlier one (offset 1
    # released) over it: the next leader delivered the accepted record again.
    persister = InterleavingPersister()
    m = manager(Log(1), persister)
    assert acquired(m, "a") == [AcquiredRange(0, 2, 1)]
    answers: list[dict] = []

    def b_takes_and_accepts_offset_1() -> None:
        assert acquired(m, "b", max_records=1) == [AcquiredRange(1, 1, 2)]
        m.acknowledge("g", "b", {REF: [AckBatch(1, 1, (1,))]}, answers.append)
    persister.hook = b_takes_and_accepts_offset_1
    m.acknowledge("g", "a", {REF: [AckBatch(1, 1, (2,))]}, answers.append)  # a releases offset 1
    assert answers == [{REF: E.NONE}, {REF: E.NONE}]
    states: list = []
    persister.read_state(KEY, 0, states.append)
    assert list(states[0].batches) == [StateBatch(1, 1, 2, 2)]  # ACKNOWLEDGED, delivered twice
    m.forget_partition("t", 0)  # a new leader: 0 and 2 again, not 1
    assert acquired(m, "c") == [AcquiredRange(0, 0, 1), AcquiredRange(2, 2, 1)]
