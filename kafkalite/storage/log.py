"""The log of one partition (Kafka's UnifiedLog with its LocalLog and LogLoader): its segments in
order of base offset, the log start offset, log end offset, high watermark and recovery point,
the leader epoch cache, the idempotent producers' state, appends as leader and as follower,
reads, rolls, truncation, retention, and recovery after an unclean shutdown.

Offsets, lowest first: log start offset <= high watermark <= log end offset. Consumers read below
the high watermark (which the caller sets: the replication layer owns it), replicas up to the log
end. Segments are kept in a dict by base offset beside a sorted list of base offsets, so finding
the segment of an offset is a bisect.

One lock per log (Kafka's ``lock synchronized``) serialises appends, rolls, truncation, retention
and reads' bookkeeping; reads parse only batch headers and return file slices, so they hold it
briefly. Nothing here starts a thread: flushing rolled segments, the retention check and producer
expiry are methods the caller schedules (LogManager gathers them).

Producer state (producer_state.py) follows the log: each roll snapshots it at the new segment's
base offset and a clean close at the log end offset; loading takes the latest snapshot the log
can continue from and replays the batch headers after it; truncation reloads it the same way;
retention deletes the snapshots of the segments it deletes.
"""

from __future__ import annotations

import bisect
import enum
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from kafkalite.protocol.records import BatchHeader, iter_batches, stamp
from kafkalite.protocol.records.records import decode_records
from kafkalite.storage.checkpoint import LeaderEpochCheckpointFile
from kafkalite.storage.config import LogConfig
from kafkalite.storage.errors import (
    CorruptIndexError,
    InvalidRecordError,
    OffsetOutOfRangeError,
    RecordBatchTooLargeError,
    RecordTooLargeError,
    UnexpectedAppendOffsetError,
)
from kafkalite.storage.files import (
    CLEANED_FILE_SUFFIX,
    DELETED_FILE_SUFFIX,
    INDEX_FILE_SUFFIX,
    LEADER_EPOCH_CHECKPOINT_FILENAME,
    LOG_FILE_SUFFIX,
    SWAP_FILE_SUFFIX,
    TEMP_FILE_SUFFIX,
    TIME_INDEX_FILE_SUFFIX,
    log_file,
    offset_from_file_name,
    offset_index_file,
    parse_partition_dir_name,
    time_index_file,
)
from kafkalite.storage.index import NO_TIMESTAMP
from kafkalite.storage.leader_epoch import UNDEFINED_EPOCH_OFFSET, LeaderEpochFileCache
from kafkalite.storage.producer_state import DEFAULT_PRODUCER_ID_EXPIRATION_MS, ProducerStateManager
from kafkalite.storage.segment import (
    FileSlice,
    LogSegment,
    Recovered,
    RollParams,
    TimestampAndOffset,
    records_at_or_after,
)
from kafkalite.storage.volume import FILES, Volume, glob

log = logging.getLogger("kafkalite.storage.log")

EMPTY = FileSlice(-1, 0, 0)


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class FetchIsolation(enum.Enum):
    """How far a read may go (Kafka's FetchIsolation)."""

    LOG_END = "log_end"  # replicas
    HIGH_WATERMARK = "high_watermark"  # consumers, read_uncommitted
    TXN_COMMITTED = (
        "txn_committed"  # read_committed: the last stable offset, the high watermark until transactions exist
    )


class LogAppendInfo(NamedTuple):
    first_offset: int
    last_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int
    valid_bytes: int
    # A retried idempotent batch: nothing was appended; the offsets and timestamp are the
    # original batch's (valid_bytes still counts the bytes received, as Kafka's).
    duplicate: bool = False


class TimestampedBatch(NamedTuple):
    """A batch found by timestamp: its bytes (to decompress for the exact record) and header."""

    records: FileSlice
    header: BatchHeader


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
        self.topic, self.partition = parse_partition_dir_name(directory.name)
        self.config = config
        self._now_ms = now_ms
        self._lock = threading.RLock()
        self._segments: dict[int, LogSegment] = {}
        self._bases: list[int] = []  # sorted base offsets of _segments
        self._deleted: list[tuple[int, LogSegment]] = []  # (delete at ms, segment renamed .deleted)
        self._hw_position: tuple[int, int, int] | None = None  # (high watermark, segment base, position)
        self._flush_pending = 0  # the base offset of the last rolled-to segment, for flush_rolled
        self.truncations = 0  # how many times the log was truncated (the cleaner's check)
        volume.mkdir(directory)
        self.leader_epoch_cache = LeaderEpochFileCache(
            LeaderEpochCheckpointFile(directory / LEADER_EPOCH_CHECKPOINT_FILENAME, volume),
            f"{self.topic}-{self.partition}",
        )
        self.producer_state = ProducerStateManager(
            directory, f"{self.topic}-{self.partition}", producer_id_expiration_ms, volume
        )
        self._load(log_start_offset, recovery_point, had_clean_shutdown)

    # -- loading ---------------------------------------------------------------------------------

    def _load(self, log_start_checkpoint: int, recovery_point: int, clean: bool) -> None:
        """Kafka's LogLoader.load: clear leftovers, open segments, recover what may be torn."""
        volume = self.volume
        for path in volume.children(self.dir):
            name = path.name
            if name.endswith((DELETED_FILE_SUFFIX, CLEANED_FILE_SUFFIX, TEMP_FILE_SUFFIX)):
                volume.unlink(path)  # a deletion or rewrite a stop interrupted
        self._complete_swaps()
        for path in sorted(volume.children(self.dir)):
            if path.suffix in (INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX):
                if not volume.exists(log_file(self.dir, offset_from_file_name(path.name))):
                    log.warning("Found an orphaned index file %s, with no corresponding log file.", path)
                    volume.unlink(path)
            elif path.suffix == LOG_FILE_SUFFIX:
                base = offset_from_file_name(path.name)
                index_missing = not volume.exists(offset_index_file(self.dir, base))
                segment = LogSegment(self.dir, base, self.config, self._now_ms, active=False, volume=volume)
                self._add_segment(segment)
                try:
                    if index_missing:
                        raise FileNotFoundError(f"no offset index for {path}")
                    segment.sanity_check()
                except (FileNotFoundError, CorruptIndexError) as e:
                    log.warning("Rebuilding the indexes of %s: %s", path, e)
                    self._recover_segment(segment)
        log_end_offset = self._recover_log(recovery_point, clean)
        if log_end_offset is not None and log_end_offset < log_start_checkpoint:
            log.warning(
                "Deleting all segments of %s because the log end offset %d is below the log start offset %d",
                self.dir,
                log_end_offset,
                log_start_checkpoint,
            )
            for segment in list(self._segments.values()):
                self._remove_segment(segment)
                segment.delete()
            self.leader_epoch_cache.clear()
        if not self._segments:
            self._add_segment(LogSegment(self.dir, log_start_checkpoint, self.config, self._now_ms,
                                          volume=self.volume))
        for segment in self.segments()[:-1]:
            if segment.offset_index.writable:  # recovered: rebuilt indexes to trim and release
                segment.on_become_inactive()
        active = self.active_segment
        active.make_active()
        self._log_end_offset = active.read_next_offset()
        self.leader_epoch_cache.truncate_from_end(self._log_end_offset)
        self.leader_epoch_cache.truncate_from_start(log_start_checkpoint)
        self.log_start_offset = max(log_start_checkpoint, self._bases[0])
        self.recovery_point = self._log_end_offset if clean else min(recovery_point, self._log_end_offset)
        self._flush_pending = self.recovery_point
        self._high_watermark = self.log_start_offset
        self._load_producer_state(at_load=True)

    def _recover_log(self, recovery_point: int, clean: bool) -> int | None:
        """Without the clean-shutdown marker, re-read the segments from the one holding the
        recovery point; cut the log at the first invalid byte and drop every segment after it."""
        if clean or not self._segments:
            return self.active_segment.read_next_offset() if self._segments else None
        first = max(bisect.bisect_right(self._bases, recovery_point) - 1, 0)
        for i, base in enumerate(self._bases[first:], start=first):
            segment = self._segments[base]
            recovered = self._recover_segment(segment)
            if recovered.truncated_bytes > 0:
                cut_at = segment.read_next_offset()
                log.warning(
                    "Corruption found in segment %s of %s-%d at byte %d: %s; truncated %d bytes, "
                    "the log now ends at offset %d",
                    base,
                    self.topic,
                    self.partition,
                    recovered.position,
                    recovered.reason,
                    recovered.truncated_bytes,
                    cut_at,
                )
                for later in [self._segments[b] for b in self._bases[i + 1 :]]:
                    self._remove_segment(later)
                    later.delete()
                break
        return self.active_segment.read_next_offset()

    def _recover_segment(self, segment: LogSegment) -> Recovered:
        return segment.recover(self.leader_epoch_cache)

    def _load_producer_state(self, at_load: bool = False) -> None:
        """The producers as of the log end offset (Kafka's rebuildProducerState): the latest
        snapshot at or below it, then the headers of the batches after it; without one, the
        headers from the start of the first segment."""
        state = self.producer_state
        end = self._log_end_offset
        state.delete_snapshots_above(end)  # truncated away, or past what a crash left
        state.delete_snapshots_below(self._bases[0])  # no batch left to replay from there
        if at_load:
            state.remove_stray_snapshots(self._bases)
        start = state.load_latest_snapshot()
        if start is None:
            # Kafka starts at the log start offset; the batches DeleteRecords put below it are
            # still here and the state in memory had kept their producers, so they count too.
            start = self._bases[0]
        if start < end:
            self._replay_producers(start)
            state.take_snapshot(end)  # so that the next load does not replay them again
        state.remove_expired_producers(self._now_ms())

    def _replay_producers(self, start: int) -> None:
        """Feed the producer state the headers of the batches from ``start`` on, unchecked as a
        follower's; no record is read, none decompressed."""
        replay = self.producer_state.prepare_update(validate=False)
        for base in self._bases[max(self._floor_index(start), 0) :]:
            segment = self._segments[base]
            position = 0
            if base < start:
                found = segment.translate_offset(start)
                if found is None:
                    continue
                position = found[0]
            for _, header in segment.batches_from(position):
                if header.producer_id >= 0:
                    replay.append(header, header.base_offset)
        self.producer_state.update(replay)

    def _complete_swaps(self) -> None:
        """A cleaned segment renamed ``.swap`` replaces the segments it covers (Kafka's
        completeSwapOperations): the cleaner stopped between the rename and the old segments'
        removal. A ``.swap`` index without its ``.swap`` log is a leftover."""
        volume = self.volume
        for path in glob(volume, self.dir, f"*{LOG_FILE_SUFFIX}{SWAP_FILE_SUFFIX}"):
            base = offset_from_file_name(path.name)
            swapped = LogSegment(self.dir, base, self.config, self._now_ms, active=False,
                                 suffix=SWAP_FILE_SUFFIX, volume=volume)
            try:
                end = swapped.read_next_offset()
            finally:
                swapped.close()
            for old in glob(volume, self.dir, f"*{LOG_FILE_SUFFIX}"):
                old_base = offset_from_file_name(old.name)
                if base <= old_base < max(end, base + 1):
                    for stale in (old, offset_index_file(self.dir, old_base),
                                  time_index_file(self.dir, old_base)):
                        volume.unlink(stale)
            for suffix_path in (path, offset_index_file(self.dir, base, SWAP_FILE_SUFFIX),
                                time_index_file(self.dir, base, SWAP_FILE_SUFFIX)):
                if volume.exists(suffix_path):
                    unswapped = suffix_path.with_name(suffix_path.name.removesuffix(SWAP_FILE_SUFFIX))
                    volume.replace(suffix_path, unswapped)
            log.info("Completed the swap of cleaned segment %d of %s-%d", base, self.topic, self.partition)
        for leftover in glob(volume, self.dir, f"*{SWAP_FILE_SUFFIX}"):
            volume.unlink(leftover)

    # -- segments --------------------------------------------------------------------------------

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
            if (truncations != self.truncations or old[-1] is self.active_segment
                    or any(self._segments.get(s.base_offset) is not s for s in old)):
                return False
            new.change_file_suffixes(CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX)
            for segment in old:
                self._remove_segment(segment)
            self._add_segment(new)
            self._schedule_delete_removed(old)
            new.change_file_suffixes(SWAP_FILE_SUFFIX, "")
            self._hw_position = None  # positions in the replaced segments mean nothing now
            return True

    def _schedule_delete_removed(self, segments: list[LogSegment]) -> None:
        delete_at = self._now_ms() + self.config.file_delete_delay_ms
        for segment in segments:
            segment.change_file_suffixes("", DELETED_FILE_SUFFIX)
            self._deleted.append((delete_at, segment))


    def _add_segment(self, segment: LogSegment) -> None:
        if segment.base_offset not in self._segments:
            bisect.insort(self._bases, segment.base_offset)
        self._segments[segment.base_offset] = segment

    def _remove_segment(self, segment: LogSegment) -> None:
        del self._segments[segment.base_offset]
        del self._bases[bisect.bisect_left(self._bases, segment.base_offset)]

    @property
    def active_segment(self) -> LogSegment:
        return self._segments[self._bases[-1]]

    def segments(self) -> list[LogSegment]:
        with self._lock:
            return [self._segments[b] for b in self._bases]

    def _floor_index(self, offset: int) -> int:
        """Index in _bases of the segment that would hold ``offset`` (-1 if below them all)."""
        return bisect.bisect_right(self._bases, offset) - 1

    @property
    def num_segments(self) -> int:
        return len(self._bases)

    @property
    def size(self) -> int:
        """Bytes in every segment."""
        with self._lock:
            return sum(s.size for s in self._segments.values())

    # -- offsets ---------------------------------------------------------------------------------

    @property
    def log_end_offset(self) -> int:
        return self._log_end_offset

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    def update_high_watermark(self, offset: int) -> int:
        """Set the high watermark, kept within [log start offset, log end offset]; the value set."""
        with self._lock:
            self._high_watermark = min(max(offset, self.log_start_offset), self._log_end_offset)
            return self._high_watermark

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
        epoch, offset = self.leader_epoch_cache.end_offset_for(leader_epoch, self._log_end_offset)
        return None if offset == UNDEFINED_EPOCH_OFFSET else (offset, epoch)

    # -- append ------------------------------------------------------------------------------------

    def append_as_leader(self, records: bytearray | memoryview, leader_epoch: int) -> LogAppendInfo:
        """Append validated batches, stamping each one's base offset (from the log end offset on)
        and partition leader epoch in place; the offsets they were given."""
        with self._lock:
            headers = self._headers(records)
            for _, header in headers:
                if header.size > self.config.max_message_bytes:
                    raise RecordTooLargeError(
                        f"The batch of {header.size} bytes is larger than max.message.bytes "
                        f"({self.config.max_message_bytes}) of {self.topic}-{self.partition}"
                    )
            # max.message.bytes first, then the segment size, as Kafka checks them.
            self._check_fits_segment(records)
            if self.config.compact:
                self._check_keys(records, headers)
            first = self._log_end_offset
            producers = None
            offset = first
            for _, header in headers:
                if header.producer_id >= 0:
                    duplicate = self.producer_state.find_duplicate(header)
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
                        producers = self.producer_state.prepare_update(validate=True)
                    producers.append(header, offset)  # refused before anything is stamped
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
                self.producer_state.update(producers)  # after a roll's snapshot, which must not see them
            return info

    def append_as_follower(self, records: bytearray | memoryview | bytes) -> LogAppendInfo:
        """Append batches copied from the leader, offsets and epochs as they are."""
        with self._lock:
            self._check_fits_segment(records)
            headers = self._headers(records)
            expected = first = headers[0][1].base_offset
            max_ts, offset_of_max_ts = NO_TIMESTAMP, -1
            for _, header in headers:
                next_offset = max(expected, self._log_end_offset)
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
            self._track_producers(headers)
            return info

    def _track_producers(self, headers: list[tuple[int, BatchHeader]]) -> None:
        """Update the producer state with a follower's batches, unchecked: the leader checked them."""
        update = None
        for _, header in headers:
            if header.producer_id >= 0:
                if update is None:
                    update = self.producer_state.prepare_update(validate=False)
                update.append(header, header.base_offset)
        if update is not None:
            self.producer_state.update(update)

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
        segment = self.active_segment
        if segment.should_roll(
            RollParams(self.config.segment_ms, self.config.segment_bytes, max_ts, last, size, self._now_ms())
        ):
            segment = self.roll(first)
        segment.append(last, max_ts, offset_of_max_ts, records)
        self._log_end_offset = last + 1
        return LogAppendInfo(first, last, max_ts, offset_of_max_ts, size)

    def roll(self, expected_next_offset: int | None = None) -> LogSegment:
        """Start a new active segment at the log end offset (or ``expected_next_offset`` if later)."""
        with self._lock:
            new_offset = max(expected_next_offset or 0, self._log_end_offset)
            active = self.active_segment
            if new_offset in self._segments:
                if active.base_offset != new_offset or active.size:
                    raise RuntimeError(
                        f"Trying to roll a new log segment at {new_offset} that already exists"
                    )
                # An empty active segment at that offset (Kafka replaces it by a fresh one).
                self._remove_segment(active)
                active.delete()
            else:
                active.on_become_inactive()
            for path in (log_file(self.dir, new_offset), offset_index_file(self.dir, new_offset)):
                self.volume.unlink(path)  # leftovers of an earlier segment at that offset
            segment = LogSegment(self.dir, new_offset, self.config, self._now_ms, volume=self.volume)
            self._add_segment(segment)
            self._flush_pending = new_offset
            # The state of the batches below the new segment; an append that rolls updates it after.
            self.producer_state.take_snapshot(new_offset)
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
        batch whole when ``min_one_message``), none at or past the isolation's bound; EMPTY when
        there is nothing to read yet. OffsetOutOfRangeError outside [log start, log end]."""
        with self._lock:
            if start_offset < self.log_start_offset or start_offset > self._log_end_offset:
                raise OffsetOutOfRangeError(
                    f"Received request for offset {start_offset} for partition "
                    f"{self.topic}-{self.partition}, "
                    f"but we only have log segments from offset {self.log_start_offset} "
                    f"up to {self._log_end_offset}."
                )
            upper = self._log_end_offset if isolation is FetchIsolation.LOG_END else self._high_watermark
            if start_offset >= upper:
                return EMPTY
            i = max(self._floor_index(start_offset), 0)
            while i < len(self._bases):
                segment = self._segments[self._bases[i]]
                if segment.base_offset >= upper:
                    break
                found = segment.read(
                    start_offset, max_bytes, self._max_position(segment, upper), min_one_message
                )
                if found is not None:
                    return found if found.size else EMPTY
                i += 1
            return EMPTY

    def _max_position(self, segment: LogSegment, upper: int) -> int | None:
        """Where reads of ``segment`` must stop to stay below offset ``upper``; None for its end."""
        if upper >= self._log_end_offset or self._floor_index(upper) > self._floor_index(segment.base_offset):
            return None
        if self._hw_position is not None and self._hw_position[:2] == (upper, segment.base_offset):
            return self._hw_position[2]
        found = segment.translate_offset(upper)
        position = segment.size if found is None else found[0]
        if upper == self._high_watermark:
            self._hw_position = (
                upper,
                segment.base_offset,
                position,
            )  # reads repeat it until the next append
        return position

    def fetch_offset_by_timestamp(self, timestamp: int) -> TimestampAndOffset | None:
        """The first record at or after ``timestamp`` from the log start offset on (ListOffsets
        by time), or None if every record is older. The caller bounds it by the high watermark."""
        with self._lock:
            for base in self._bases:
                segment = self._segments[base]
                if segment.max_timestamp_so_far >= timestamp:
                    found = segment.find_offset_by_timestamp(timestamp, self.log_start_offset)
                    if found is not None:
                        return found
            return None

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
            for base in self._bases:
                segment = self._segments[base]
                if segment.max_timestamp_so_far >= timestamp:
                    found = segment.find_batch_by_timestamp(timestamp, self.log_start_offset)
                    if found is not None:
                        return TimestampedBatch(FileSlice(segment.fd, found[0], found[1].size), found[1])
            return None

    def max_timestamp_batch(self) -> TimestampedBatch | None:
        """The batch holding the largest timestamp (ListOffsets MAX_TIMESTAMP, -3)."""
        with self._lock:
            segment = max(self.segments(), key=lambda s: s.max_timestamp_so_far)
            ts, offset = segment.max_timestamp_and_offset()
            if ts < 0:
                return None
            for pos, header in segment.batches_from(segment.offset_index.lookup(offset).position):
                if header.max_timestamp == ts:
                    return TimestampedBatch(FileSlice(segment.fd, pos, header.size), header)
            return None

    # -- truncate ---------------------------------------------------------------------------------

    def truncate_to(self, target_offset: int) -> bool:
        """Remove every batch at or above ``target_offset`` (a follower diverging from its
        leader); whether anything was removed."""
        if target_offset < 0:
            raise ValueError(f"Cannot truncate partition {self.topic}-{self.partition} to a negative offset")
        with self._lock:
            if target_offset >= self._log_end_offset:
                self.leader_epoch_cache.truncate_from_end(self._log_end_offset)
                return False
            log.info("Truncating %s-%d to offset %d", self.topic, self.partition, target_offset)
            if self._bases[0] > target_offset:
                self.truncate_fully_and_start_at(target_offset)
                return True
            self._schedule_delete(
                [self._segments[b] for b in self._bases[self._floor_index(target_offset) + 1 :]]
            )
            active = self.active_segment
            active.truncate_to(target_offset)
            active.make_active()
            # Kafka sets the target; the end of what is left is the same at batch boundaries and,
            # unlike the target inside a batch, what a restart would find.
            self._log_end_offset = active.read_next_offset()
            self._after_truncation(self._log_end_offset)
            self.log_start_offset = min(self._log_end_offset, self.log_start_offset)
            self._load_producer_state()
            return True

    def truncate_fully_and_start_at(self, new_offset: int) -> None:
        """Drop every segment and start empty at ``new_offset``."""
        with self._lock:
            self._schedule_delete(self.segments())
            self._add_segment(LogSegment(self.dir, new_offset, self.config, self._now_ms, volume=self.volume))
            self.leader_epoch_cache.clear()
            self.producer_state.truncate_fully()
            self._log_end_offset = new_offset
            self.log_start_offset = new_offset
            self._after_truncation(new_offset)

    def _after_truncation(self, offset: int) -> None:
        self.truncations += 1  # a cleaning started before must not swap its copy in
        self.leader_epoch_cache.truncate_from_end(offset)
        self._high_watermark = min(self._high_watermark, self._log_end_offset)
        self.recovery_point = min(self.recovery_point, offset)
        self._flush_pending = min(self._flush_pending, offset)
        self._hw_position = None

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
            upper_bound = following.base_offset if following else self._log_end_offset
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
        following_base = self._bases[self._bases.index(deletable[-1].base_offset) + 1]
        self.maybe_increment_log_start_offset(following_base)
        self._schedule_delete(deletable)
        # The state stays (producers are forgotten only by expiry); the snapshot at the first
        # segment left and those after it can still be loaded.
        self.producer_state.delete_snapshots_below(self._bases[0])
        return len(deletable)

    def _schedule_delete(self, segments: list[LogSegment]) -> None:
        """Take segments out of the log at once; their files are renamed ``.deleted`` and removed
        file.delete.delay.ms later, since a fetch may still be sending from them."""
        for segment in segments:
            log.info(
                "Deleting segment %d of %s-%d (%d bytes)",
                segment.base_offset,
                self.topic,
                self.partition,
                segment.size,
            )
            self._remove_segment(segment)
        self._schedule_delete_removed(segments)

    def delete_expired_files(self) -> None:
        """Remove the files of deleted segments whose file.delete.delay.ms has passed."""
        with self._lock:
            now = self._now_ms()
            due = [s for at, s in self._deleted if at <= now]
            self._deleted = [(at, s) for at, s in self._deleted if at > now]
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
            offset = self._log_end_offset if offset is None else min(offset, self._log_end_offset)
            if offset <= self.recovery_point:
                return
            first = max(self._floor_index(self.recovery_point), 0)
            segments = [self._segments[b] for b in self._bases[first:] if b < offset]
        for segment in segments:
            segment.flush()  # outside the lock: appends go on meanwhile
        with self._lock:
            self.recovery_point = max(self.recovery_point, min(offset, self._log_end_offset))

    def flush_rolled(self) -> None:
        """Flush up to the last rolled segment (Kafka's scheduled flush after a roll)."""
        if self._flush_pending > self.recovery_point:
            self.flush(self._flush_pending)

    def close(self) -> None:
        """Kafka's clean close: a producer snapshot at the log end offset, so that the next load
        replays nothing, then the segments' files."""
        with self._lock:
            self.producer_state.take_snapshot(self._log_end_offset)
            self._close_segments()

    def _close_segments(self) -> None:
        for segment in self._segments.values():
            segment.close()
        for _, segment in self._deleted:
            segment.delete()
        self._deleted = []

    def close_handlers(self) -> None:
        """Close every file without writing anything, as a process killed at this point would."""
        with self._lock:
            for segment in [*self._segments.values(), *(s for _, s in self._deleted)]:
                segment.close_handlers()

    def delete(self) -> None:
        """Close and remove the whole directory."""
        with self._lock:
            self._close_segments()
            self._segments.clear()
            self._bases.clear()
            self.volume.rmtree(self.dir)

    def __repr__(self) -> str:
        return (
            f"Log({self.topic}-{self.partition}, start={self.log_start_offset}, hw={self._high_watermark}, "
            f"end={self._log_end_offset}, segments={len(self._bases)})"
        )
