"""The share-partition leader's side of share groups (Kafka's SharePartitionManager): the
share-partitions of the partitions this broker leads, their share sessions, the record locks'
timer, and the persister every change is written through.

- A share-partition is made on first use: its state is read through the ``Persister``; a group
  that never read the partition starts it at share.auto.offset.reset (latest: the high watermark,
  earliest: the log start) and initializes that state. Until then fetches find nothing
  (``fetch`` starts the load; a waiting ShareFetch is woken when it is done).
- ``fetch`` acquires records for a member from the log (read up to the high watermark) and
  returns the batches holding them with the acquired ranges.
- ``acknowledge`` applies a member's acknowledgements and answers once the changes are written
  (Kafka writes before it answers, so an acknowledged record is never redelivered by the next
  leader).
- A lock that expires (the ``share-lock-timer`` thread, at the earliest deadline) and a session
  that closes put the records back (AVAILABLE, or ARCHIVED at the delivery count limit); that
  is written too, and waiting fetches of the partition are woken (``wake``).
- A write that fails (fenced, or the share coordinator unavailable past its retries) drops the
  share-partition: the next fetch reads the state again, so nothing the persister lacks is held
  as done here.

One lock guards everything here; ``wake`` and the answers' callbacks run outside it (they take
purgatory operation locks, which are above this one).
"""

from __future__ import annotations

import heapq
import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from kafkalite.common.errors import ApiError
from kafkalite.controller.group_configs import parse_duration_ms
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.records.batch import BatchHeader, iter_batches

from .persister import UNINITIALIZED_STATE_EPOCH, Persister, ReadStateResult, ShareStateKey, StateBatch
from .session import FINAL_EPOCH, INITIAL_EPOCH, SharePartitionRef, ShareSession, ShareSessionCache
from .settings import SharePartitionConfig
from .share_partition import AckBatch, AcquiredRange, SharePartition

log = logging.getLogger("kafkalite.server.share")

CONTROL_FLAG = 0x20  # a batch's attributes bit 5: a control batch (transaction markers)
READ_CHUNK_BYTES = 256 * 1024


class ShareLog(Protocol):
    """What the manager reads of the partitions this broker leads (the ReplicaManager's)."""

    def read(self, topic: str, partition: int, offset: int, max_bytes: int) -> bytes:
        """Whole batches from ``offset`` below the high watermark; ApiError (e.g.
        NOT_LEADER_OR_FOLLOWER, OFFSET_OUT_OF_RANGE) as a Fetch gets them."""

    def bounds(self, topic: str, partition: int) -> tuple[int, int]:
        """(log start offset, high watermark); ApiError if not led here."""

    def leader_epoch(self, topic: str, partition: int) -> int: ...

    def offset_for_timestamp(self, topic: str, partition: int, timestamp: int) -> int:
        """The first offset whose record's timestamp is at or after ``timestamp``, below the high
        watermark; the high watermark if none is (ListOffsets by time)."""


@dataclass(frozen=True)
class GroupShareSettings:
    """A group's share settings (Kafka's GroupConfig: share.auto.offset.reset,
    share.record.lock.duration.ms; None: the broker's)."""

    auto_offset_reset: str = "latest"
    record_lock_duration_ms: int | None = None


class PartitionFetch(NamedTuple):
    error: int
    records: bytes | None = None
    acquired: tuple[AcquiredRange, ...] = ()


INITIALIZING, ACTIVE = "initializing", "active"


class _Write(NamedTuple):
    """A write of the state, as computed under the lock."""

    state_epoch: int
    leader_epoch: int
    start_offset: int
    batches: list[StateBatch]
    done: Callable[[int], None]


@dataclass
class _Entry:
    ref: SharePartitionRef
    key: ShareStateKey
    partition: SharePartition
    status: str = INITIALIZING
    error: int = E.NONE  # of a load that failed: told once, then the load is tried again
    writing: int = 0  # writes sent to the persister, not yet answered
    waiters: list[Callable[[], None]] = field(default_factory=list)
    outbox: deque[_Write] = field(default_factory=deque)  # writes not yet handed to the persister
    sending: bool = False  # a thread is handing them over


BY_DURATION = "by_duration:"  # share.auto.offset.reset=by_duration:<ISO-8601 duration>


def _now_ms() -> int:
    return int(time.time() * 1000)


def _run(callbacks: list[Callable[[], None]]) -> None:
    for callback in callbacks:
        try:
            callback()
        except Exception:  # one waiter's bug must not cost the others their wake-up
            log.exception("Waking a share fetch failed")


class SharePartitionManager:
    def __init__(self, config: SharePartitionConfig, persister: Persister, share_log: ShareLog,
                 wake: Callable[[str, int], object] = lambda topic, partition: None,
                 group_settings: Callable[[str], GroupShareSettings] | None = None,
                 now_ms: Callable[[], int] = _now_ms, start_timer: bool = True) -> None:
        self.config = config
        self.persister = persister
        self.log = share_log
        self.wake = wake
        self.group_settings = group_settings or (lambda group: GroupShareSettings(config.auto_offset_reset))
        self.now_ms = now_ms
        self._lock = threading.RLock()
        self.sessions = ShareSessionCache(config.max_share_sessions)
        self.partitions: dict[tuple[str, uuid.UUID, int], _Entry] = {}
        self._deadlines: list[tuple[int, tuple[str, uuid.UUID, int]]] = []
        self._timer_wakeup = threading.Condition(self._lock)
        self._stopped = False
        self._timer: threading.Thread | None = None
        if start_timer:
            self._timer = threading.Thread(target=self._run_timer, name="share-lock-timer", daemon=True)
            self._timer.start()

    def shutdown(self) -> None:
        with self._lock:
            self._stopped = True
            self._timer_wakeup.notify_all()
        if self._timer is not None:
            self._timer.join(5)

    # --- sessions ----------------------------------------------------------------------------

    def session(self, group_id: str, member_id: str, epoch: int, added: list[SharePartitionRef],
                forgotten: list[tuple[uuid.UUID, int]]) -> tuple[int, list[SharePartitionRef]]:
        """(error, the partitions to fetch) of a ShareFetch of ``epoch``; a closing one
        (FINAL_EPOCH) fetches nothing."""
        with self._lock:
            if epoch == FINAL_EPOCH:
                return self.sessions.check(group_id, member_id, epoch), []
            error, session = self.sessions.open_or_continue(group_id, member_id, epoch, added, forgotten)
            if error or session is None:
                return error, []
            if epoch == INITIAL_EPOCH:
                self._forget_idle(group_id, member_id, session)
            return E.NONE, list(session.partitions.values())

    def _forget_idle(self, group_id: str, member_id: str, session: ShareSession) -> None:
        """Under the lock: the group's first share session here reads the state of its idle
        share-partitions again (none of their records locked, no write unanswered: what is cached is
        what was written). The group's offsets may have been altered or its state deleted meanwhile
        on another broker (both need the group empty), which this leader would otherwise learn of
        only at its next write, serving the old state until then."""
        if any(g == group_id and m != member_id for g, m in self.sessions.sessions):
            return
        for ref in session.partitions.values():
            key = (group_id, ref.topic_id, ref.partition)
            entry = self.partitions.get(key)
            if (entry is not None and entry.status == ACTIVE and not entry.writing
                    and entry.partition.next_lock_deadline() is None):
                del self.partitions[key]

    def check_session(self, group_id: str, member_id: str, epoch: int) -> int:
        """The error of a ShareAcknowledge of ``epoch``; a good one moves the epoch on."""
        with self._lock:
            error = self.sessions.check(group_id, member_id, epoch)
            if not error and epoch != FINAL_EPOCH:
                self.sessions.advance(group_id, member_id)
            return error

    def close_session(self, group_id: str, member_id: str) -> None:
        """The member's session ends (epoch -1): the records it holds go back."""
        with self._lock:
            session: ShareSession | None = self.sessions.close(group_id, member_id)
            refs = list(session.partitions.values()) if session is not None else []
        self.release(group_id, member_id, refs)

    # --- fetch -------------------------------------------------------------------------------

    def fetch(self, group_id: str, member_id: str, refs: list[SharePartitionRef], max_records: int,
              max_bytes: int, on_loaded: Callable[[], None] | None = None
              ) -> dict[SharePartitionRef, PartitionFetch]:
        """Acquire records of ``refs`` for the member, at most ``max_records`` (and about
        ``max_bytes``) in all. A partition still loading answers nothing; ``on_loaded`` is called
        (outside the lock) when it is ready."""
        out: dict[SharePartitionRef, PartitionFetch] = {}
        records_left, bytes_left = max(max_records, 1), max(max_bytes, 1)
        with self._lock:
            for ref in refs:
                if ref.topic is None:
                    out[ref] = PartitionFetch(E.UNKNOWN_TOPIC_ID)
                    continue
                entry = self._entry(group_id, ref, on_loaded)
                if entry.error:
                    out[ref] = PartitionFetch(entry.error)
                    del self.partitions[(group_id, ref.topic_id, ref.partition)]
                    continue
                if entry.status != ACTIVE or records_left <= 0 or bytes_left <= 0:
                    out[ref] = PartitionFetch(E.NONE)
                    continue
                try:
                    fetched = self._acquire(entry, member_id, records_left, bytes_left)
                except ApiError as e:
                    out[ref] = PartitionFetch(e.code)
                    continue
                out[ref] = fetched
                records_left -= sum(r.last_offset - r.first_offset + 1 for r in fetched.acquired)
                bytes_left -= len(fetched.records or b"")
        return out

    def _acquire(self, entry: _Entry, member_id: str, max_records: int, max_bytes: int) -> PartitionFetch:
        sp, ref = entry.partition, entry.ref
        assert ref.topic is not None
        log_start, high_watermark = self.log.bounds(ref.topic, ref.partition)
        if log_start > sp.start_offset:
            sp.move_start_to(log_start)
        if not sp.can_acquire():
            return PartitionFetch(E.NONE)
        offset = sp.next_fetch_offset()
        data = b""
        batches: list[tuple[int, BatchHeader]] = []
        acquired: list[AcquiredRange] = []
        count = 0
        # The log is read in chunks until enough is acquired: the window holds few records, the
        # client's MaxBytes (50 MiB for librdkafka) would read far more than can be acquired.
        while offset < high_watermark and len(data) < max_bytes and count < max_records:
            size = min(READ_CHUNK_BYTES, max_bytes - len(data))
            chunk = self.log.read(ref.topic, ref.partition, offset, size)
            found = list(iter_batches(chunk))
            if not found:
                break
            base = len(data)
            data += chunk[:found[-1][0] + found[-1][1].size]
            batches += [(base + pos, h) for pos, h in found]
            for r in sp.acquire(member_id, [(h.base_offset, h.last_offset, bool(h.attributes & CONTROL_FLAG))
                                            for _, h in found], max_records - count):
                count += r.last_offset - r.first_offset + 1
                prev = acquired[-1] if acquired else None
                if prev is not None and prev.last_offset + 1 == r.first_offset and \
                        prev.delivery_count == r.delivery_count:
                    acquired[-1] = prev._replace(last_offset=r.last_offset)
                else:
                    acquired.append(r)
            if not sp.can_acquire():
                break
            offset = found[-1][1].next_offset
        if not acquired:
            return PartitionFetch(E.NONE)
        first, last = acquired[0].first_offset, acquired[-1].last_offset
        # The batches that hold what was acquired, whole (the client drops what it was not given).
        held = [(pos, h) for pos, h in batches if h.last_offset >= first and h.base_offset <= last]
        start, end = held[0][0], held[-1][0] + held[-1][1].size
        deadline = sp.next_lock_deadline()
        if deadline is not None:
            heapq.heappush(self._deadlines, (deadline, (entry.key.group_id, ref.topic_id, ref.partition)))
            self._timer_wakeup.notify_all()
        return PartitionFetch(E.NONE, bytes(data[start:end]), tuple(acquired))

    def _entry(self, group_id: str, ref: SharePartitionRef, on_loaded: Callable[[], None] | None) -> _Entry:
        key = (group_id, ref.topic_id, ref.partition)
        entry = self.partitions.get(key)
        if entry is not None:
            if entry.status != ACTIVE and on_loaded is not None and on_loaded not in entry.waiters:
                entry.waiters.append(on_loaded)
            return entry
        lock_ms = self.group_settings(group_id).record_lock_duration_ms
        sp = SharePartition(lambda: self.config.lock_duration_ms(lock_ms), self.config.delivery_count_limit,
                            self.config.max_record_locks, self.now_ms)
        state_key = ShareStateKey(group_id, ref.topic_id.bytes, ref.partition)
        entry = self.partitions[key] = _Entry(ref, state_key, sp)
        assert ref.topic is not None
        try:
            leader_epoch = self.log.leader_epoch(ref.topic, ref.partition)
        except ApiError as e:
            entry.error = e.code
            return entry
        self.persister.read_state(entry.key, leader_epoch, lambda result: self._state_read(entry, result))
        # A persister that answered at once (in memory) loaded it already: nobody to wake. One
        # that answers later, on its own thread, wakes the waiters without this lock held.
        if entry.status != ACTIVE and not entry.error and on_loaded is not None:
            entry.waiters.append(on_loaded)
        return entry

    def _state_read(self, entry: _Entry, result: ReadStateResult) -> None:
        waiters: list[Callable[[], None]] = []
        start: int | None = None
        with self._lock:
            if result.error:
                log.warning("Reading the share state of %s failed: error %d", entry.key, result.error)
                waiters = self._loaded(entry, result.error)
            elif result.state_epoch != UNINITIALIZED_STATE_EPOCH:
                entry.partition.load(result.state_epoch, result.start_offset, result.batches)
                waiters = self._loaded(entry, E.NONE)
            else:
                assert entry.ref.topic is not None
                try:
                    log_start, high_watermark = self.log.bounds(entry.ref.topic, entry.ref.partition)
                except ApiError as e:
                    waiters = self._loaded(entry, e.code)
                else:
                    reset = self.group_settings(entry.key.group_id).auto_offset_reset
                    start = log_start if reset == "earliest" else high_watermark
                    if reset.startswith(BY_DURATION):
                        # KIP-932's by_duration: the first record no older than the duration.
                        since = self.now_ms() - parse_duration_ms(reset[len(BY_DURATION):])
                        try:
                            start = self.log.offset_for_timestamp(entry.ref.topic, entry.ref.partition, since)
                        except ApiError as e:
                            start = None
                            waiters = self._loaded(entry, e.code)
        _run(waiters)
        if start is not None:
            at = start
            self.persister.initialize_state(entry.key, 0, at,
                                            lambda error: self._initialized(entry, at, error))

    def _initialized(self, entry: _Entry, start: int, error: int) -> None:
        with self._lock:
            if not error:
                entry.partition.load(0, start, [])
            waiters = self._loaded(entry, error)
        _run(waiters)

    @staticmethod
    def _loaded(entry: _Entry, error: int) -> list[Callable[[], None]]:
        """Under the lock: the load ended; returns the waiters to call once the lock is free."""
        if error:
            entry.error = error
        else:
            entry.status = ACTIVE
        waiters, entry.waiters = entry.waiters, []
        return waiters

    # --- acknowledgements and releases -------------------------------------------------------

    def acknowledge(self, group_id: str, member_id: str, acks: dict[SharePartitionRef, list[AckBatch]],
                    done: Callable[[dict[SharePartitionRef, int]], None]) -> None:
        """Apply the member's acknowledgements; ``done`` gets each partition's error once every
        change is written (on this thread if the persister answers at once)."""
        results: dict[SharePartitionRef, int] = {}
        writes: list[tuple[_Entry, list[int], SharePartitionRef]] = []
        with self._lock:
            for ref, batches in acks.items():
                entry = self.partitions.get((group_id, ref.topic_id, ref.partition))
                if ref.topic is None:
                    results[ref] = E.UNKNOWN_TOPIC_ID
                elif entry is None or entry.status != ACTIVE:
                    # Nothing was acquired here for this group: not led here, or nothing held.
                    results[ref] = (self._not_held_error(ref) if entry is None
                                    else E.COORDINATOR_LOAD_IN_PROGRESS)
                else:
                    error, changed = entry.partition.acknowledge(member_id, batches)
                    results[ref] = error
                    if changed:
                        writes.append((entry, changed, ref))
        self._write_all(writes, results, done)

    def _not_held_error(self, ref: SharePartitionRef) -> int:
        assert ref.topic is not None
        try:
            self.log.bounds(ref.topic, ref.partition)
        except ApiError as e:
            return e.code
        return E.INVALID_RECORD_STATE

    def release(self, group_id: str, member_id: str, refs: list[SharePartitionRef]) -> None:
        """The member's records of ``refs`` go back (its session closed)."""
        writes: list[tuple[_Entry, list[int], SharePartitionRef]] = []
        with self._lock:
            for ref in refs:
                entry = self.partitions.get((group_id, ref.topic_id, ref.partition))
                if entry is not None and entry.status == ACTIVE:
                    changed = entry.partition.release_member(member_id)
                    if changed:
                        writes.append((entry, changed, ref))
        self._write_all(writes, {}, lambda results: None)

    def _write_all(self, writes: list[tuple[_Entry, list[int], SharePartitionRef]],
                   results: dict[SharePartitionRef, int],
                   done: Callable[[dict[SharePartitionRef, int]], None]) -> None:
        if not writes:
            done(results)
            return
        pending = [len(writes)]
        count_lock = threading.Lock()

        def written(entry: _Entry, ref: SharePartitionRef, error: int) -> None:
            if error:
                log.warning("Writing the share state of %s failed: error %d", entry.key, error)
                results[ref] = results.get(ref) or error
                # The state here is no longer what was persisted: read it again. Fenced, it moved
                # on without us (offsets altered, a new leader); otherwise the change is not
                # written, and kept here it would hold as done a record whose acknowledgement the
                # client was told failed (Kafka rolls such a change back).
                self._drop(entry)
            assert ref.topic is not None
            self.wake(ref.topic, ref.partition)  # released records can be fetched
            with count_lock:
                pending[0] -= 1
                last = pending[0] == 0
            if last:
                done(results)

        for entry, changed, ref in writes:
            self._write(entry, changed, lambda error, e=entry, r=ref: written(e, r, error))  # type: ignore[misc]

    def _write(self, entry: _Entry, changed: list[int], done: Callable[[int], None]) -> None:
        def written(error: int) -> None:
            with self._lock:
                entry.writing -= 1  # the first share session's idle check counts these
            done(error)

        with self._lock:
            sp = entry.partition
            assert entry.ref.topic is not None
            try:
                leader_epoch = self.log.leader_epoch(entry.ref.topic, entry.ref.partition)
            except ApiError as e:
                error = e.code
            else:
                error = E.NONE
                entry.writing += 1
                entry.outbox.append(_Write(sp.state_epoch, leader_epoch, sp.start_offset,
                                           sp.state_batches(changed), written))
        if error:
            done(error)
            return
        self._send(entry)

    def _send(self, entry: _Entry) -> None:
        """Hand the entry's writes to the persister in the order they were made, one thread at a
        time: two threads' writes of the same records must not reach it the other way round (the
        coordinator keeps the last state written of each offset)."""
        with self._lock:
            if entry.sending:
                return  # the sending thread takes this one too, after the ones before it
            entry.sending = True
        while True:
            with self._lock:
                if not entry.outbox:
                    entry.sending = False
                    return
                w = entry.outbox.popleft()
            try:
                self.persister.write_state(entry.key, w.state_epoch, w.leader_epoch, w.start_offset,
                                           w.batches, w.done)
            except BaseException:
                with self._lock:
                    entry.sending = False
                raise

    # --- the locks' timer --------------------------------------------------------------------

    def expire_locks(self) -> None:
        """Release the records whose lock expired (the timer's work; tests call it directly)."""
        now = self.now_ms()
        writes: list[tuple[_Entry, list[int], SharePartitionRef]] = []
        with self._lock:
            due: set[tuple[str, uuid.UUID, int]] = set()
            while self._deadlines and self._deadlines[0][0] <= now:
                due.add(heapq.heappop(self._deadlines)[1])
            for key in due:
                entry = self.partitions.get(key)
                if entry is None or entry.status != ACTIVE:
                    continue
                changed = entry.partition.expire_locks()
                if changed:
                    writes.append((entry, changed, entry.ref))
                deadline = entry.partition.next_lock_deadline()
                if deadline is not None:
                    heapq.heappush(self._deadlines, (deadline, key))
        self._write_all(writes, {}, lambda results: None)

    def _run_timer(self) -> None:
        while True:
            with self._lock:
                if self._stopped:
                    return
                wait = (self._deadlines[0][0] - self.now_ms()) / 1000 if self._deadlines else 1.0
                if wait > 0:
                    self._timer_wakeup.wait(min(wait, 1.0))
                    continue
            try:
                self.expire_locks()
            except Exception:  # a bug must not stop the timer: log it, go on
                log.exception("Expiring share record locks failed")

    def forget_partition(self, topic: str, partition: int) -> None:
        """The partition's leadership left this broker: its share-partitions go (the next leader
        reads their state), and so do the locks they held."""
        with self._lock:
            for key in [k for k, e in self.partitions.items() if e.ref.topic == topic and k[2] == partition]:
                del self.partitions[key]

    def _drop(self, entry: _Entry) -> None:
        """Forget a share-partition: the next fetch reads its state again."""
        with self._lock:
            key = (entry.key.group_id, entry.ref.topic_id, entry.ref.partition)
            if self.partitions.get(key) is entry:
                del self.partitions[key]

    def forget_group(self, group_id: str) -> None:
        """The group's state was deleted or altered elsewhere (DeleteGroups,
        Alter/DeleteShareGroupOffsets): its share-partitions here read it again when next used."""
        with self._lock:
            for key in [k for k in self.partitions if k[0] == group_id]:
                del self.partitions[key]

    def holds(self, group_id: str) -> list[tuple[uuid.UUID, int]]:
        """The partitions of ``group_id`` with a share-partition here."""
        with self._lock:
            return [(t, p) for g, t, p in self.partitions if g == group_id]
