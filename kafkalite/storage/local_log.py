"""The local files of one partition's log (Kafka's LocalLog): its segments in order of base offset,
the log end offset, the recovery point, and what is done to the segments themselves: append to
the active one, roll, read, find by timestamp, collect the aborted transactions a read_committed
fetch must be told of (from the segments' ``.txnindex``), truncate, swap in a cleaned copy,
schedule the deletion of segments (renamed ``.deleted``, removed file.delete.delay.ms later),
close.

Segments are kept in a dict by base offset beside a sorted list of base offsets, so finding the
segment of an offset is a bisect.

A LocalLog has no lock and knows nothing of the high watermark, the log start offset, leader
epochs or producers: its UnifiedLog (log.py) holds the lock around every call and keeps those.
Its segments are opened and recovered by the LogLoader (log_loader.py).
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from kafkalite.protocol.records import BatchHeader
from kafkalite.storage.config import LogConfig
from kafkalite.storage.files import (
    CLEANED_FILE_SUFFIX,
    DELETED_FILE_SUFFIX,
    SWAP_FILE_SUFFIX,
    log_file,
    offset_index_file,
    parse_log_dir_name,
    time_index_file,
    transaction_index_file,
)
from kafkalite.storage.segment import FileSlice, LogSegment, TimestampAndOffset
from kafkalite.storage.transaction_index import AbortedTxn
from kafkalite.storage.volume import Volume

log = logging.getLogger("kafkalite.storage.log")

EMPTY = FileSlice(-1, 0, 0)


class TimestampedBatch(NamedTuple):
    """A batch found by timestamp: its bytes (to decompress for the exact record) and header."""

    records: FileSlice
    header: BatchHeader


class LocalLog:
    """The segments of the log in ``directory`` (``<log.dir>/<topic>-<partition>``); empty until
    the LogLoader adds them."""

    def __init__(self, directory: Path, config: LogConfig, now_ms: Callable[[], int], volume: Volume) -> None:
        self.dir = directory
        self.volume = volume
        self.topic, self.partition = parse_log_dir_name(directory.name)
        self.config = config
        self.now_ms = now_ms
        self._segments: dict[int, LogSegment] = {}
        self._bases: list[int] = []  # sorted base offsets of _segments
        self._deleted: list[tuple[int, LogSegment]] = []  # (delete at ms, segment renamed .deleted)
        # (upper bound, segment base, position): where reads stop below the high watermark, which
        # reads repeat until the next append.
        self._bound_position: tuple[int, int, int] | None = None
        self.log_end_offset = 0
        self.recovery_point = 0  # offsets below it are flushed
        self.flush_pending = 0  # the base offset of the last rolled-to segment, for flush_rolled

    # -- segments --------------------------------------------------------------------------------

    def new_segment(self, base_offset: int) -> LogSegment:
        """A new (active) segment at ``base_offset``, added to the log."""
        segment = LogSegment(self.dir, base_offset, self.config, self.now_ms, volume=self.volume)
        self.add_segment(segment)
        return segment

    def add_segment(self, segment: LogSegment) -> None:
        if segment.base_offset not in self._segments:
            bisect.insort(self._bases, segment.base_offset)
        self._segments[segment.base_offset] = segment

    def remove_segment(self, segment: LogSegment) -> None:
        del self._segments[segment.base_offset]
        del self._bases[bisect.bisect_left(self._bases, segment.base_offset)]

    def contains(self, segment: LogSegment) -> bool:
        return self._segments.get(segment.base_offset) is segment

    @property
    def active_segment(self) -> LogSegment:
        return self._segments[self._bases[-1]]

    @property
    def first_base_offset(self) -> int:
        return self._bases[0]

    def base_offsets(self) -> list[int]:
        return list(self._bases)

    def segments(self) -> list[LogSegment]:
        return [self._segments[b] for b in self._bases]

    def segments_from(self, offset: int) -> list[LogSegment]:
        """The segments from the one holding ``offset`` (the first if it is below them all) on."""
        return [self._segments[b] for b in self._bases[max(self.floor_index(offset), 0) :]]

    def higher_segment(self, base_offset: int) -> LogSegment:
        """The segment after the one at ``base_offset``."""
        return self._segments[self._bases[self._bases.index(base_offset) + 1]]

    def floor_index(self, offset: int) -> int:
        """Index in _bases of the segment that would hold ``offset`` (-1 if below them all)."""
        return bisect.bisect_right(self._bases, offset) - 1

    @property
    def num_segments(self) -> int:
        return len(self._bases)

    @property
    def size(self) -> int:
        """Bytes in every segment."""
        return sum(s.size for s in self._segments.values())

    # -- append, roll ------------------------------------------------------------------------------

    def append(self, segment: LogSegment, records: bytearray | memoryview | bytes, last: int, max_ts: int,
               offset_of_max_ts: int) -> None:
        """Append to ``segment`` (the active one) batches ending at offset ``last``."""
        segment.append(last, max_ts, offset_of_max_ts, records)
        self.log_end_offset = last + 1

    def roll(self, expected_next_offset: int | None = None) -> LogSegment:
        """Start a new active segment at the log end offset (or ``expected_next_offset`` if later)."""
        new_offset = max(expected_next_offset or 0, self.log_end_offset)
        active = self.active_segment
        if new_offset in self._segments:
            if active.base_offset != new_offset or active.size:
                raise RuntimeError(
                    f"Trying to roll a new log segment at {new_offset} that already exists"
                )
            # An empty active segment at that offset (Kafka replaces it by a fresh one).
            self.remove_segment(active)
            active.delete()
        else:
            active.on_become_inactive()
        for name in (log_file, offset_index_file, time_index_file, transaction_index_file):
            self.volume.unlink(name(self.dir, new_offset))  # leftovers of an earlier segment at that offset
        segment = self.new_segment(new_offset)
        self.flush_pending = new_offset
        return segment

    # -- read ---------------------------------------------------------------------------------------

    def read(self, start_offset: int, max_bytes: int, upper: int, min_one_message: bool) -> FileSlice:
        """Whole batches from the one holding ``start_offset``, at most ``max_bytes`` (but the first
        batch whole when ``min_one_message``), none at or past offset ``upper``; EMPTY when there is
        nothing."""
        i = max(self.floor_index(start_offset), 0)
        while i < len(self._bases):
            segment = self._segments[self._bases[i]]
            if segment.base_offset >= upper:
                break
            found = segment.read(start_offset, max_bytes, self._max_position(segment, upper), min_one_message)
            if found is not None:
                return found if found.size else EMPTY
            i += 1
        return EMPTY

    def _max_position(self, segment: LogSegment, upper: int) -> int | None:
        """Where reads of ``segment`` must stop to stay below offset ``upper``; None for its end.
        A bound below the log end offset is the high watermark: its position is kept."""
        if upper >= self.log_end_offset or self.floor_index(upper) > self.floor_index(segment.base_offset):
            return None
        if self._bound_position is not None and self._bound_position[:2] == (upper, segment.base_offset):
            return self._bound_position[2]
        found = segment.translate_offset(upper)
        position = segment.size if found is None else found[0]
        self._bound_position = (upper, segment.base_offset, position)  # reads repeat it until the next append
        return position

    def has_aborted_transactions_from(self, fetch_offset: int) -> bool:
        """Whether a transaction index from the segment holding ``fetch_offset`` on has an entry
        ending at or after it: if none has, every collect_aborted_transactions from there is
        empty, whatever its bound. Entries are in marker order, so an index's last entry says;
        the index keeps it known (no file read after the first)."""
        for base in self._bases[max(self.floor_index(fetch_offset), 0) :]:
            last = self._segments[base].txn_index.last_offset
            if last is not None and last >= fetch_offset:
                return True
        return False

    def collect_aborted_transactions(self, fetch_offset: int, upper_bound_offset: int) -> list[AbortedTxn]:
        """The aborted transactions overlapping [fetch_offset, upper_bound_offset): from the
        segment holding ``fetch_offset`` on, until a segment's index says no later abort can
        overlap (Kafka's LocalLog.collectAbortedTransactions)."""
        found: list[AbortedTxn] = []
        for base in self._bases[max(self.floor_index(fetch_offset), 0) :]:
            result = self._segments[base].collect_aborted_txns(fetch_offset, upper_bound_offset)
            found.extend(result.aborted_transactions)
            if result.is_complete:
                break
        return found

    def fetch_offset_by_timestamp(self, timestamp: int, log_start_offset: int) -> TimestampAndOffset | None:
        """The first record at or after ``timestamp`` from ``log_start_offset`` on, or None."""
        for base in self._bases:
            segment = self._segments[base]
            if segment.max_timestamp_so_far >= timestamp:
                found = segment.find_offset_by_timestamp(timestamp, log_start_offset)
                if found is not None:
                    return found
        return None

    def find_batch_by_timestamp(self, timestamp: int, log_start_offset: int) -> TimestampedBatch | None:
        """The first batch from ``log_start_offset`` on holding a record with a timestamp >= ``timestamp``."""
        for base in self._bases:
            segment = self._segments[base]
            if segment.max_timestamp_so_far >= timestamp:
                found = segment.find_batch_by_timestamp(timestamp, log_start_offset)
                if found is not None:
                    return TimestampedBatch(FileSlice(segment.fd, found[0], found[1].size), found[1])
        return None

    def max_timestamp_batch(self) -> TimestampedBatch | None:
        """The batch holding the largest timestamp."""
        segment = max(self.segments(), key=lambda s: s.max_timestamp_so_far)
        ts, offset = segment.max_timestamp_and_offset()
        if ts < 0:
            return None
        for pos, header in segment.batches_from(segment.offset_index.lookup(offset).position):
            if header.max_timestamp == ts:
                return TimestampedBatch(FileSlice(segment.fd, pos, header.size), header)
        return None

    # -- truncate, replace, delete ----------------------------------------------------------------

    def truncate_to(self, target_offset: int) -> int:
        """Remove every batch at or above ``target_offset``, which is in or above the first
        segment and below the log end offset; the new log end offset."""
        self.schedule_delete(self.segments_from(target_offset)[1:])
        active = self.active_segment
        active.truncate_to(target_offset)
        active.make_active()
        # Kafka sets the target; the end of what is left is the same at batch boundaries and,
        # unlike the target inside a batch, what a restart would find.
        self.log_end_offset = active.read_next_offset()
        self._after_truncation(self.log_end_offset)
        return self.log_end_offset

    def truncate_fully_and_start_at(self, new_offset: int) -> None:
        """Drop every segment and start empty at ``new_offset``."""
        self.schedule_delete(self.segments())
        self.new_segment(new_offset)
        self.log_end_offset = new_offset
        self._after_truncation(new_offset)

    def _after_truncation(self, offset: int) -> None:
        self.recovery_point = min(self.recovery_point, offset)
        self.flush_pending = min(self.flush_pending, offset)
        self._bound_position = None

    def replace_segments(self, old: list[LogSegment], new: LogSegment) -> bool:
        """Swap ``new`` (a cleaned copy of ``old``, its files suffixed ``.cleaned``) in for ``old``
        (Kafka's replaceSegments); False, and nothing changed, if ``old`` are no longer all in the
        log (deleted by retention meanwhile) or reach the active segment. The old files go after
        file.delete.delay.ms, since a fetch may still be sending from them."""
        if old[-1] is self.active_segment or not all(self.contains(s) for s in old):
            return False
        new.change_file_suffixes(CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX)
        for segment in old:
            self.remove_segment(segment)
        self.add_segment(new)
        self._schedule_delete_removed(old)
        new.change_file_suffixes(SWAP_FILE_SUFFIX, "")
        self._bound_position = None  # positions in the replaced segments mean nothing now
        return True

    def schedule_delete(self, segments: list[LogSegment]) -> None:
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
            self.remove_segment(segment)
        self._schedule_delete_removed(segments)

    def _schedule_delete_removed(self, segments: list[LogSegment]) -> None:
        delete_at = self.now_ms() + self.config.file_delete_delay_ms
        for segment in segments:
            segment.change_file_suffixes("", DELETED_FILE_SUFFIX)
            self._deleted.append((delete_at, segment))

    def take_expired_deletions(self) -> list[LogSegment]:
        """The deleted segments whose file.delete.delay.ms has passed, forgotten: the caller
        deletes their files."""
        now = self.now_ms()
        due = [s for at, s in self._deleted if at <= now]
        self._deleted = [(at, s) for at, s in self._deleted if at > now]
        return due

    # -- close --------------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the segments' files; remove those of the deleted segments."""
        for segment in self._segments.values():
            segment.close()
        for _, segment in self._deleted:
            segment.delete()
        self._deleted = []

    def close_handlers(self) -> None:
        """Close every file without writing anything, as a process killed at this point would."""
        for segment in [*self._segments.values(), *(s for _, s in self._deleted)]:
            segment.close_handlers()

    def delete(self) -> None:
        """Close and remove the whole directory."""
        self.close()
        self._segments.clear()
        self._bases.clear()
        self.volume.rmtree(self.dir)
