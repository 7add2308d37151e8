"""The log of one partition (Kafka's UnifiedLog): the log start offset, high watermark, last stable
offset and log end offset, the leader epoch cache, the idempotent and transactional producers'
state, appends as leader and as follower, reads within an isolation's bound, rolls, truncation,
retention, flushes. Its segments
and their files are a LocalLog's (local_log.py); opening them, and recovery after an unclean
shutdown, the LogLoader's (log_loader.py).

Offsets, lowest first: log start offset <= last stable offset <= high watermark <= log end offset.
Consumers read below the high watermark (which the caller sets: the replication layer owns it),
read_committed ones below the last stable offset, replicas up to the log end.

Transactions (issue 27): a leader's append says who appends (AppendOrigin): only a coordinator
writes control batches (the COMMIT/ABORT markers of WriteTxnMarkers); a client's batches are
checked for epochs, sequences and duplicates, a coordinator's for epochs. The producer state keeps
the open transactions and those ended above the high watermark; the first of them is the first
unstable offset, and the last stable offset is it when below the high watermark, else the high
watermark (Kafka's lastStableOffset). An abort marker adds an entry to its segment's ``.txnindex``
(followers' appends and recovery as well), which ``collect_aborted_transactions`` reads for a
read_committed fetch.

One lock per log (Kafka's ``lock synchronized``) serialises appends, rolls, truncation, retention
and reads' bookkeeping, the LocalLog's included; reads parse only batch headers and return file
slices, so they hold it briefly. Nothing here starts a thread: flushing rolled segments, the
retention check and producer expiry are methods the caller schedules (LogManager gathers them).

Producer state (producer_state.py) follows the log: each roll snapshots it at the new segment's
base offset and a clean close at the log end offset; loading takes the latest snapshot the log
can continue from and replays the batch headers after it; truncation reloads it the same way;
retention deletes the snapshots of the segments it deletes.
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from kafkalite.protocol.records import BatchHeader, iter_batches, stamp
from kafkalite.protocol.records.batch import Buffer
from kafkalite.protocol.records.records import decode_records
from kafkalite.storage.checkpoint import LeaderEpochCheckpointFile
from kafkalite.storage.config import LogConfig
from kafkalite.storage.errors import (
    InvalidRecordError,
    OffsetOutOfRangeError,
    RecordBatchTooLargeError,
    RecordTooLargeError,
    UnexpectedAppendOffsetError,
)
from kafkalite.storage.files import LEADER_EPOCH_CHECKPOINT_FILENAME, parse_log_dir_name
from kafkalite.storage.index import NO_TIMESTAMP
from kafkalite.storage.leader_epoch import UNDEFINED_EPOCH_OFFSET, LeaderEpochFileCache
from kafkalite.storage.local_log import EMPTY, LocalLog, TimestampedBatch
from kafkalite.storage.log_loader import LogLoader
from kafkalite.storage.producer_state import (
    DEFAULT_PRODUCER_ID_EXPIRATION_MS,
    AppendOrigin,
    CompletedTxn,
    ProducerAppendInfo,
    ProducerStateManager,
    read_marker,
)
from kafkalite.storage.segment import (
    FileSlice,
    LogSegment,
    RollParams,
    TimestampAndOffset,
    records_at_or_after,
)
from kafkalite.storage.transaction_index import AbortedTxn
from kafkalite.storage.volume import FILES, Volume

__all__ = [
    "EMPTY",
    "AbortedTxn",
    "AppendOrigin",
    "FetchIsolation",
    "Log",
    "LogAppendInfo",
    "TimestampedBatch",
    "wall_clock_ms",
]

log = logging.getLogger("kafkalite.storage.log")


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class FetchIsolation(enum.Enum):
    """How far a read may go (Kafka's FetchIsolation)."""

    LOG_END = "log_end"  # replicas
    HIGH_WATERMARK = "high_watermark"  # consumers, read_uncommitted
    TXN_COMMITTED = "txn_committed"  # read_committed: the last stable offset


class LogAppendInfo(NamedTuple):
    first_offset: int
    last_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int
    valid_bytes: int
    # A retried idempotent batch: nothing was appended; the offsets and timestamp are the
    # original batch's (valid_bytes still counts the bytes received, as Kafka's).
    duplicate: bool = False


class Log:
    """One partition's log in ``directory`` (``<log.dir>/<topic>-<partition>``), loaded (and
    recovered if the last shutdown was not clean) when constructed."""

    def __init__(
        self,
        directory: Path,
        config: LogConfig,
        *,
        log_start_offset: int = 0,
        recovery_point: int = 0,
        had_clean_shutdown: bool = False,
        now_ms: Callable[[], int] = wall_clock_ms,
        producer_id_expiration_ms: int = DEFAULT_PRODUCER_ID_EXPIRATION_MS,
        volume: Volume = FILES,
    ) -> None:
        self.dir = directory
        self.volume = volume
        self.topic, self.partition = parse_log_dir_name(directory.name)
        self._now_ms = now_ms
        self._lock = threading.RLock()
        self.truncations = 0  # how many times the log was truncated (the cleaner's check)
        volume.mkdir(directory)
        self._local = LocalLog(directory, config, now_ms, volume)
        self.leader_epoch_cache = LeaderEpochFileCache(
            LeaderEpochCheckpointFile(directory / LEADER_EPOCH_CHECKPOINT_FILENAME, volume),
            f"{self.topic}-{self.partition}",
        )
        self._producer_id_expiration_ms = producer_id_expiration_ms
        loaded = LogLoader(self._local, self.leader_epoch_cache, log_start_offset, recovery_point,
                           had_clean_shutdown, self._producer_state_at).load()
        # After the load: its recovery may have written snapshots.
        self.producer_state = self._new_producer_state()
        self.log_start_offset = loaded.log_start_offset
        self._high_watermark = self.log_start_offset
        self._load_producer_state(at_load=True)

    # -- producer state ----------------------------------------------------------------------------

    @property
    def producer_id_expiration_ms(self) -> int:
        return self._producer_id_expiration_ms

    @producer_id_expiration_ms.setter
    def producer_id_expiration_ms(self, ms: int) -> None:
        """producer.id.expiration.ms changed while running: the next expiration check uses it."""
        self._producer_id_expiration_ms = ms
        self.producer_state.producer_id_expiration_ms = ms

    def _new_producer_state(self) -> ProducerStateManager:
        return ProducerStateManager(
            self.dir, f"{self.topic}-{self.partition}", self._producer_id_expiration_ms, self.volume
        )

    def _producer_state_at(self, offset: int) -> ProducerStateManager:
        """A new state of the producers of the batches below ``offset`` (a segment's base offset),
        for the recovery of that segment (Kafka's recoverSegment): the latest snapshot at or below
        it, then the batches from there."""
        state = self._new_producer_state()
        start = state.load_latest_snapshot(at_most=offset)
        self._replay_producers(state, self._local.first_base_offset if start is None else start, offset)
        return state

    def _load_producer_state(self, at_load: bool = False) -> None:
        """The producers as of the log end offset (Kafka's rebuildProducerState): the latest
        snapshot at or below it, then the headers of the batches after it; without one, the
        headers from the start of the first segment."""
        state = self.producer_state
        end = self._local.log_end_offset
        state.delete_snapshots_above(end)  # truncated away, or past what a crash left
        state.delete_snapshots_below(self._local.first_base_offset)  # no batch left to replay from there
        if at_load:
            state.remove_stray_snapshots(self._local.base_offsets())
        start = state.load_latest_snapshot()
        if start is None:
            # Kafka starts at the log start offset; the batches DeleteRecords put below it are
            # still here and the state in memory had kept their producers, so they count too.
            start = self._local.first_base_offset
        if start < end:
            self._replay_producers(state, start)
            state.take_snapshot(end)  # so that the next load does not replay them again
        state.on_high_watermark_updated(self._high_watermark)
        state.remove_expired_producers(self._now_ms())

    def _replay_producers(self, state: ProducerStateManager, start: int, end: int | None = None) -> None:
        """Feed ``state`` the headers of the batches from ``start`` (up to the segment at ``end``),
        unchecked as a follower's; no record is read but transaction markers', none decompressed.
        The .txnindex is not touched (Kafka's loadProducersFromRecords)."""
        replay = state.prepare_update(AppendOrigin.REPLICATION)
        completed: list[CompletedTxn] = []
        for segment in self._local.segments_from(start):
            if end is not None and segment.base_offset >= end:
                break
            position = 0
            if segment.base_offset < start:
                found = segment.translate_offset(start)
                if found is None:
                    continue
                position = found[0]
            for pos, header in segment.batches_from(position):
                if header.producer_id >= 0:
                    marker = None
                    if header.is_control:
                        marker = read_marker(segment.read_batch(pos, header), 0, header)
                    done = replay.append(header, header.base_offset, marker)
                    if done is not None:
                        completed.append(done)
        state.update(replay)
        for txn in completed:
            state.complete_txn(txn)

    # -- segments --------------------------------------------------------------------------------

    @property
    def config(self) -> LogConfig:
        return self._local.config

    @config.setter
    def config(self, config: LogConfig) -> None:
        self._local.config = config

    @property
    def clock(self) -> Callable[[], int]:
        """The log's clock in ms (a test's, or the wall clock)."""
        return self._now_ms

    def replace_segments(self, old: list[LogSegment], new: LogSegment, truncations: int) -> bool:
        """Swap ``new`` (a cleaned copy of ``old``, its files suffixed ``.cleaned``) in for ``old``
        (Kafka's replaceSegments); False, and nothing changed, if ``old`` are no longer all in the
        log (deleted by retention meanwhile) or the log was truncated since ``truncations`` was
        read (the copy may hold what the truncation removed). The old files go after
        file.delete.delay.ms, since a fetch may still be sending from them."""
        with self._lock:
            return truncations == self.truncations and self._local.replace_segments(old, new)

    @property
    def active_segment(self) -> LogSegment:
        return self._local.active_segment

    def segments(self) -> list[LogSegment]:
        with self._lock:
            return self._local.segments()

    @property
    def num_segments(self) -> int:
        return self._local.num_segments

    @property
    def size(self) -> int:
        """Bytes in every segment."""
        with self._lock:
            return self._local.size

    # -- offsets ---------------------------------------------------------------------------------

    @property
    def log_end_offset(self) -> int:
        return self._local.log_end_offset

    @property
    def recovery_point(self) -> int:
        """Offsets below it are flushed: recovery after an unclean shutdown starts there."""
        return self._local.recovery_point

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    def update_high_watermark(self, offset: int) -> int:
        """Set the high watermark, kept within [log start offset, log end offset]; the value set.
        The transactions ended below it are stable now (the last stable offset may move)."""
        with self._lock:
            self._high_watermark = min(max(offset, self.log_start_offset), self._local.log_end_offset)
            self.producer_state.on_high_watermark_updated(self._high_watermark)
            return self._high_watermark

    @property
    def first_unstable_offset(self) -> int | None:
        """The first offset of the earliest transaction open or ended above the high watermark,
        at least the log start offset; None when there is none."""
        with self._lock:
            first = self.producer_state.first_unstable_offset()
            return None if first is None else max(first, self.log_start_offset)

    @property
    def last_stable_offset(self) -> int:
        """What read_committed consumers may read below: the first unstable offset if below the
        high watermark, else the high watermark (Kafka's lastStableOffset)."""
        with self._lock:
            first = self.first_unstable_offset
            return first if first is not None and first < self._high_watermark else self._high_watermark

    def maybe_increment_log_start_offset(self, offset: int) -> bool:
        """Move the log start offset up (DeleteRecords, retention); never past the high watermark."""
        with self._lock:
            if offset > self._high_watermark:
                raise OffsetOutOfRangeError(
                    f"Cannot increment the log start offset to {offset} of partition {self.topic}-"
                    f"{self.partition} since it is larger than the high watermark {self._high_watermark}"
                )
            if offset <= self.log_start_offset:
                return False
            self.log_start_offset = offset
            self.leader_epoch_cache.truncate_from_start(offset)
            self.producer_state.on_log_start_offset_incremented(offset)
            return True

    # -- leader epochs ---------------------------------------------------------------------------

    @property
    def latest_epoch(self) -> int | None:
        return self.leader_epoch_cache.latest_epoch

    def maybe_assign_epoch_start_offset(self, leader_epoch: int, start_offset: int) -> None:
        """A new leader's epoch starts at its log end offset (Partition.makeLeader)."""
        with self._lock:
            self.leader_epoch_cache.assign(leader_epoch, start_offset)

    def end_offset_for_epoch(self, leader_epoch: int) -> tuple[int, int] | None:
        """(end offset, epoch) for OffsetForLeaderEpoch, or None when the epoch is unknown."""
        epoch, offset = self.leader_epoch_cache.end_offset_for(leader_epoch, self._local.log_end_offset)
        return None if offset == UNDEFINED_EPOCH_OFFSET else (offset, epoch)

    # -- append ------------------------------------------------------------------------------------

    def append_as_leader(
        self, records: bytearray | memoryview, leader_epoch: int, origin: AppendOrigin = AppendOrigin.CLIENT
    ) -> LogAppendInfo:
        """Append validated batches, stamping each one's base offset (from the log end offset on)
        and partition leader epoch in place; the offsets they were given. ``origin`` says who
        appends: control batches (transaction markers) only from a COORDINATOR
        (InvalidRecordError otherwise); a client's retries of cached batches are answered as
        duplicates."""
        with self._lock:
            headers = self._headers(records)
            for _, header in headers:
                if header.size > self.config.max_message_bytes:
                    raise RecordTooLargeError(
                        f"The batch of {header.size} bytes is larger than max.message.bytes "
                        f"({self.config.max_message_bytes}) of {self.topic}-{self.partition}"
                    )
                if header.is_control and origin is not AppendOrigin.COORDINATOR:
                    raise InvalidRecordError(
                        f"Only a transaction coordinator writes control records ({origin.name} append to "
                        f"{self.topic}-{self.partition})"
                    )
            # max.message.bytes first, then the segment size, as Kafka checks them.
            self._check_fits_segment(records)
            if self.config.compact:
                self._check_keys(records, headers)
            first = self._local.log_end_offset
            producers: ProducerAppendInfo | None = None
            completed: list[CompletedTxn] = []
            offset = first
            for pos, header in headers:
                if header.producer_id >= 0:
                    duplicate = (
                        self.producer_state.find_duplicate(header) if origin is AppendOrigin.CLIENT else None
                    )
                    if duplicate is not None:
                        # A retry whose response was lost: the whole append is answered by it (Kafka).
                        return LogAppendInfo(
                            duplicate.first_offset,
                            duplicate.last_offset,
                            duplicate.timestamp,
                            duplicate.last_offset,
                            len(records),
                            duplicate=True,
                        )
                    if producers is None:
                        producers = self.producer_state.prepare_update(origin)
                    marker = read_marker(records, pos, header) if header.is_control else None
                    done = producers.append(header, offset, marker)  # refused before anything is stamped
                    if done is not None:
                        completed.append(done)
                offset += header.last_offset_delta + 1
            offset = first
            max_ts, offset_of_max_ts = NO_TIMESTAMP, -1
            for pos, header in headers:
                stamp(records, pos, offset, leader_epoch)
                offset += header.last_offset_delta + 1
                if header.max_timestamp > max_ts:
                    max_ts, offset_of_max_ts = header.max_timestamp, offset - 1
            if leader_epoch >= 0:
                self.leader_epoch_cache.assign(leader_epoch, first)
            info = self._append(records, first, offset - 1, max_ts, offset_of_max_ts)
            if producers is not None:
                # After a roll's snapshot, which must not see them.
                self._update_producers(producers, completed)
            return info

    def _update_producers(self, producers: ProducerAppendInfo, completed: list[CompletedTxn]) -> None:
        """Apply an append's producers; each transaction it ended leaves the open ones, an abort
        with its entry in the active segment's .txnindex (where its marker went)."""
        state = self.producer_state
        state.update(producers)
        segment = self._local.active_segment
        for txn in completed:
            segment.update_txn_index(txn, state.last_stable_offset(txn))
            state.complete_txn(txn)

    def append_as_follower(self, records: bytearray | memoryview | bytes) -> LogAppendInfo:
        """Append batches copied from the leader, offsets and epochs as they are; their producers
        and transactions are tracked unchecked, aborts indexed as the leader did."""
        with self._lock:
            self._check_fits_segment(records)
            headers = self._headers(records)
            expected = first = headers[0][1].base_offset
            max_ts, offset_of_max_ts = NO_TIMESTAMP, -1
            for _, header in headers:
                next_offset = max(expected, self._local.log_end_offset)
                if header.base_offset < next_offset:
                    raise UnexpectedAppendOffsetError(
                        f"Unexpected offset in append to {self.topic}-{self.partition}. First offset "
                        f"{header.base_offset} is less than the next offset {next_offset}.",
                        first,
                        headers[-1][1].last_offset,
                    )
                expected = header.next_offset
                if header.max_timestamp > max_ts:
                    max_ts, offset_of_max_ts = header.max_timestamp, header.last_offset
            for _, header in headers:
                if header.partition_leader_epoch >= 0:
                    self.leader_epoch_cache.assign(header.partition_leader_epoch, header.base_offset)
            info = self._append(records, first, expected - 1, max_ts, offset_of_max_ts)
            self._track_producers(records, headers)
            return info

    def _track_producers(self, records: Buffer, headers: list[tuple[int, BatchHeader]]) -> None:
        """Update the producer state with a follower's batches, unchecked: the leader checked them."""
        update = None
        completed: list[CompletedTxn] = []
        for pos, header in headers:
            if header.producer_id >= 0:
                if update is None:
                    update = self.producer_state.prepare_update(AppendOrigin.REPLICATION)
                marker = read_marker(records, pos, header) if header.is_control else None
                done = update.append(header, header.base_offset, marker)
                if done is not None:
                    completed.append(done)
        if update is not None:
            self._update_producers(update, completed)

    def _headers(self, records: bytearray | memoryview | bytes) -> list[tuple[int, BatchHeader]]:
        """The batches' headers (only whole batches; the caller checks they fit a segment)."""
        headers = list(iter_batches(records))
        covered = headers[-1][0] + headers[-1][1].size if headers else 0
        if not headers or covered != len(records):
            raise ValueError(f"{len(records) - covered} bytes of {len(records)} are not whole batches")
        return headers

    def _check_keys(self, records: bytearray | memoryview, headers: list[tuple[int, BatchHeader]]) -> None:
        """A compacted log keeps the last record of each key: a record without one could never
        be cleaned away (LogValidator's check; the only time a produce decodes its records)."""
        for pos, header in headers:
            if any(r.key is None for r in decode_records(records, pos, header)):
                raise InvalidRecordError(f"Compacted topic cannot accept message without key in topic "
                                         f"partition {self.topic}-{self.partition}.")

    def _check_fits_segment(self, records: bytearray | memoryview | bytes) -> None:
        if len(records) > self.config.segment_bytes:
            raise RecordBatchTooLargeError(
                f"Message batch size is {len(records)} bytes in append to partition {self.topic}-"
                f"{self.partition}, which exceeds the maximum configured segment size of "
                f"{self.config.segment_bytes}."
            )

    def _append(
        self,
        records: bytearray | memoryview | bytes,
        first: int,
        last: int,
        max_ts: int,
        offset_of_max_ts: int,
    ) -> LogAppendInfo:
        size = len(records)
        config = self._local.config
        segment = self._local.active_segment
        if segment.should_roll(
            RollParams(config.segment_ms, config.segment_bytes, max_ts, last, size, self._now_ms())
        ):
            segment = self.roll(first)
        self._local.append(segment, records, last, max_ts, offset_of_max_ts)
        return LogAppendInfo(first, last, max_ts, offset_of_max_ts, size)

    def roll(self, expected_next_offset: int | None = None) -> LogSegment:
        """Start a new active segment at the log end offset (or ``expected_next_offset`` if later)."""
        with self._lock:
            segment = self._local.roll(expected_next_offset)
            # The state of the batches below the new segment; an append that rolls updates it after.
            self.producer_state.take_snapshot(segment.base_offset)
            return segment

    # -- read ---------------------------------------------------------------------------------------

    def read(
        self,
        start_offset: int,
        max_bytes: int,
        isolation: FetchIsolation = FetchIsolation.HIGH_WATERMARK,
        min_one_message: bool = True,
    ) -> FileSlice:
        """Whole batches from the one holding ``start_offset``, at most ``max_bytes`` (but the first
        batch whole when ``min_one_message``), none at or past the isolation's bound (the log end,
        the high watermark, or the last stable offset); EMPTY when there is nothing to read yet.
        OffsetOutOfRangeError outside [log start, log end]."""
        with self._lock:
            end = self._local.log_end_offset
            if start_offset < self.log_start_offset or start_offset > end:
                raise OffsetOutOfRangeError(
                    f"Received request for offset {start_offset} for partition "
                    f"{self.topic}-{self.partition}, "
                    f"but we only have log segments from offset {self.log_start_offset} "
                    f"up to {end}."
                )
            if isolation is FetchIsolation.LOG_END:
                upper = end
            elif isolation is FetchIsolation.TXN_COMMITTED:
                upper = self.last_stable_offset
            else:
                upper = self._high_watermark
            if start_offset >= upper:
                return EMPTY
            return self._local.read(start_offset, max_bytes, upper, min_one_message)

    def collect_aborted_transactions(self, start_offset: int, upper_offset: int) -> list[AbortedTxn]:
        """The aborted transactions overlapping [start_offset, upper_offset): marker at or after
        ``start_offset`` and first offset below ``upper_offset`` (Kafka's
        collectAbortedTransactions); a read_committed fetch gives ``upper_offset`` as the offset
        after what it returned (``fetch_upper_bound_offset``)."""
        with self._lock:
            return self._local.collect_aborted_transactions(start_offset, upper_offset)

    def has_aborted_transactions_from(self, start_offset: int) -> bool:
        """False when collect_aborted_transactions from ``start_offset`` is empty whatever its upper
        offset (no segment from there on holds an aborted transaction): a read_committed fetch
        then needs neither its upper offset nor the transaction indexes read."""
        with self._lock:
            return self._local.has_aborted_transactions_from(start_offset)

    def fetch_upper_bound_offset(self, records: FileSlice) -> int | None:
        """The offset after the last batch of ``records`` (a slice ``read`` returned), found from
        the offset index and the headers after its entry; None for an empty slice or one of a
        segment no longer in the log."""
        if records.size <= 0:
            return None
        with self._lock:
            segment = next((s for s in reversed(self._local.segments()) if s.fd == records.fd), None)
            if segment is None:
                return None
            end = records.position + records.size
            # An index entry is a batch's start: the last one inside the slice, or its start.
            start = max(records.position, segment.offset_index.lookup_position(end - 1).position)
            upper = None
            for _, header in segment.batches_from(start, end):
                upper = header.next_offset
            return upper

    def fetch_offset_by_timestamp(self, timestamp: int) -> TimestampAndOffset | None:
        """The first record at or after ``timestamp`` from the log start offset on (ListOffsets
        by time), or None if every record is older. The caller bounds it by the high watermark."""
        with self._lock:
            return self._local.fetch_offset_by_timestamp(timestamp, self.log_start_offset)

    def fetch_max_timestamp(self) -> TimestampAndOffset | None:
        """The first record with the largest timestamp (ListOffsets MAX_TIMESTAMP, -3)."""
        top = self.max_timestamp_batch()
        if top is None:
            return None
        return records_at_or_after(top.records.read(), top.header, top.header.max_timestamp, 0)

    def find_batch_by_timestamp(self, timestamp: int) -> TimestampedBatch | None:
        """The first batch holding a record with a timestamp >= ``timestamp`` (ListOffsets by time):
        the exact record is in it, found by decoding its records."""
        with self._lock:
            return self._local.find_batch_by_timestamp(timestamp, self.log_start_offset)

    def max_timestamp_batch(self) -> TimestampedBatch | None:
        """The batch holding the largest timestamp (ListOffsets MAX_TIMESTAMP, -3)."""
        with self._lock:
            return self._local.max_timestamp_batch()

    # -- truncate ---------------------------------------------------------------------------------

    def truncate_to(self, target_offset: int) -> bool:
        """Remove every batch at or above ``target_offset`` (a follower diverging from its
        leader); whether anything was removed."""
        if target_offset < 0:
            raise ValueError(f"Cannot truncate partition {self.topic}-{self.partition} to a negative offset")
        with self._lock:
            if target_offset >= self._local.log_end_offset:
                self.leader_epoch_cache.truncate_from_end(self._local.log_end_offset)
                return False
            log.info("Truncating %s-%d to offset %d", self.topic, self.partition, target_offset)
            if self._local.first_base_offset > target_offset:
                self.truncate_fully_and_start_at(target_offset)
                return True
            self._after_truncation(self._local.truncate_to(target_offset))
            self.log_start_offset = min(self._local.log_end_offset, self.log_start_offset)
            self._load_producer_state()  # the open transactions as of the new end, ended ones above the HW
            return True

    def truncate_fully_and_start_at(self, new_offset: int) -> None:
        """Drop every segment and start empty at ``new_offset``."""
        with self._lock:
            self._local.truncate_fully_and_start_at(new_offset)
            self.leader_epoch_cache.clear()
            self.producer_state.truncate_fully()
            self.log_start_offset = new_offset
            self._after_truncation(new_offset)

    def _after_truncation(self, offset: int) -> None:
        """What the log keeps beside its segments, once the LocalLog was truncated to ``offset``."""
        self.truncations += 1  # a cleaning started before must not swap its copy in
        self.leader_epoch_cache.truncate_from_end(offset)
        self._high_watermark = min(self._high_watermark, self._local.log_end_offset)

    # -- retention --------------------------------------------------------------------------------

    def delete_old_segments(self) -> int:
        """Kafka's deleteOldSegments: segments wholly below the log start offset, then (with
        cleanup.policy delete) the oldest while the log is over retention.bytes and those whose
        newest record is older than retention.ms. Only segments wholly below the high watermark
        go, and the log keeps at least one segment. Also removes the files of segments deleted
        file.delete.delay.ms ago. The number of segments deleted."""
        with self._lock:
            deleted = self._delete_old_segments(
                lambda segment, following: (
                    following is not None and following.base_offset <= self.log_start_offset
                )
            )
            if self.config.delete:
                deleted += self._delete_retention_size_breached()
                deleted += self._delete_retention_ms_breached()
        self.delete_expired_files()
        return deleted

    def _delete_retention_ms_breached(self) -> int:
        retention_ms = self.config.retention_ms
        if retention_ms < 0:
            return 0
        now = self._now_ms()
        return self._delete_old_segments(lambda segment, _: now - segment.largest_timestamp() > retention_ms)

    def _delete_retention_size_breached(self) -> int:
        retention = self.config.retention_bytes
        size = self.size
        if retention < 0 or size < retention:
            return 0
        excess = size - retention

        def over(segment: LogSegment, _: LogSegment | None) -> bool:
            nonlocal excess
            if excess - segment.size < 0:
                return False
            excess -= segment.size
            return True

        return self._delete_old_segments(over)

    def _delete_old_segments(self, predicate: Callable[[LogSegment, LogSegment | None], bool]) -> int:
        segments = self.segments()
        deletable: list[LogSegment] = []
        for i, segment in enumerate(segments):
            following = segments[i + 1] if i + 1 < len(segments) else None
            upper_bound = following.base_offset if following else self._local.log_end_offset
            # Never at or past the high watermark, so the log start offset cannot pass it.
            if self._high_watermark < upper_bound or not predicate(segment, following):
                break
            if following is None and segment.size == 0:
                break  # an empty active segment is never deleted
            deletable.append(segment)
        if not deletable:
            return 0
        if len(deletable) == len(segments):
            # Kafka: "we must always have at least one segment".
            self.roll()
        following_base = self._local.higher_segment(deletable[-1].base_offset).base_offset
        self.maybe_increment_log_start_offset(following_base)
        self._local.schedule_delete(deletable)
        # The state stays (producers are forgotten only by expiry); the snapshot at the first
        # segment left and those after it can still be loaded.
        self.producer_state.delete_snapshots_below(self._local.first_base_offset)
        return len(deletable)

    def delete_expired_files(self) -> None:
        """Remove the files of deleted segments whose file.delete.delay.ms has passed."""
        with self._lock:
            due = self._local.take_expired_deletions()
        for segment in due:
            segment.delete()

    # -- producers ---------------------------------------------------------------------------------

    def remove_expired_producers(self, now_ms: int | None = None) -> int:
        """Forget the producers whose last batch is older than producer.id.expiration.ms (Kafka's
        PeriodicProducerExpirationCheck); how many. A forgotten producer may start again at any
        sequence."""
        with self._lock:
            return self.producer_state.remove_expired_producers(self._now_ms() if now_ms is None else now_ms)

    # -- flush, close, delete ---------------------------------------------------------------------

    def flush(self, offset: int | None = None) -> None:
        """fsync the segments holding offsets from the recovery point up to ``offset`` (the log end
        offset by default), which becomes the recovery point."""
        with self._lock:
            offset = self._local.log_end_offset if offset is None else min(offset, self._local.log_end_offset)
            recovery_point = self._local.recovery_point
            if offset <= recovery_point:
                return
            segments = [s for s in self._local.segments_from(recovery_point) if s.base_offset < offset]
        for segment in segments:
            segment.flush()  # outside the lock: appends go on meanwhile
        with self._lock:
            local = self._local
            local.recovery_point = max(local.recovery_point, min(offset, local.log_end_offset))

    def flush_rolled(self) -> None:
        """Flush up to the last rolled segment (Kafka's scheduled flush after a roll)."""
        if self._local.flush_pending > self._local.recovery_point:
            self.flush(self._local.flush_pending)

    def close(self) -> None:
        """Kafka's clean close: a producer snapshot at the log end offset, so that the next load
        replays nothing, then the segments' files."""
        with self._lock:
            self.producer_state.take_snapshot(self._local.log_end_offset)
            self._local.close()

    def close_handlers(self) -> None:
        """Close every file without writing anything, as a process killed at this point would."""
        with self._lock:
            self._local.close_handlers()

    def delete(self) -> None:
        """Close and remove the whole directory."""
        with self._lock:
            self._local.delete()

    def __repr__(self) -> str:
        return (
            f"Log({self.topic}-{self.partition}, start={self.log_start_offset}, hw={self._high_watermark}, "
            f"end={self._local.log_end_offset}, segments={self._local.num_segments})"
        )
