"""One segment of a partition's log (LogSegment.java): the ``.log`` file of record batches exactly
as appended, its sparse ``.index`` and ``.timeindex``, and its ``.txnindex`` of the transactions
aborted by markers it holds (created by the first such abort), named by the segment's base offset.
The ``.txnindex`` follows the segment through truncation, renames (``.deleted``, ``.cleaned``,
``.swap``) and deletion; recovery rebuilds it from the batches, given the producer state as of the
segment's start (Kafka's recover(producerStateManager, ...)).

Reads never copy records into Python: ``read`` answers with a FileSlice (file descriptor, position,
size) of whole batches, which the network layer hands to ``sendfile``. Only batch headers (61
bytes each) are parsed, and only those between the index entry at or below the wanted offset and
the end of the read, so a read costs the same in a 1 MB segment as in a 1 GB one.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

from kafkalite.common.file_slice import FileSlice  # also imported from here (storage.log, server)
from kafkalite.protocol.records import (
    BATCH_HEADER_SIZE,
    LOG_OVERHEAD,
    BatchHeader,
    CorruptRecordError,
    TimestampType,
    decode_records,
    read_header,
    validate_batch,
)
from kafkalite.protocol.records.batch import MIN_BATCH_LENGTH
from kafkalite.storage.config import LogConfig
from kafkalite.storage.files import log_file, offset_index_file, time_index_file, transaction_index_file
from kafkalite.storage.index import NO_TIMESTAMP, OffsetIndex, TimeIndex, TimestampOffset
from kafkalite.storage.leader_epoch import LeaderEpochFileCache
from kafkalite.storage.producer_state import AppendOrigin, CompletedTxn, ProducerStateManager, read_marker
from kafkalite.storage.transaction_index import AbortedTxn, TransactionIndex, TxnIndexSearchResult
from kafkalite.storage.volume import FILES, Volume, pwrite_all

Buffer = bytes | bytearray | memoryview

# How much of the .log a scan of batch headers reads at a time: a few index intervals' worth.
_HEADER_WINDOW = 16 * 1024
# How much recovery reads at a time (whole batches are CRC-checked, so they must be in memory).
_RECOVERY_WINDOW = 1024 * 1024


class TimestampAndOffset(NamedTuple):
    """A record found by timestamp (Kafka's FileRecords.TimestampAndOffset)."""

    timestamp: int
    offset: int
    leader_epoch: int | None


def records_at_or_after(
    batch: bytes, header: BatchHeader, timestamp: int, starting_offset: int
) -> TimestampAndOffset | None:
    """The first record of ``batch`` with a timestamp >= ``timestamp`` and an offset >=
    ``starting_offset`` (the batch decompressed if it must be)."""
    epoch = header.partition_leader_epoch if header.partition_leader_epoch >= 0 else None
    log_append_time = header.timestamp_type is TimestampType.LOG_APPEND_TIME
    for record in decode_records(batch, 0, header):
        # A LogAppendTime batch's records all carry the time the broker wrote it.
        ts = header.max_timestamp if log_append_time else header.base_timestamp + record.timestamp_delta
        offset = header.base_offset + record.offset_delta
        if ts >= timestamp and offset >= starting_offset:
            return TimestampAndOffset(ts, offset, epoch)
    return None


class RollParams(NamedTuple):
    max_segment_ms: int
    max_segment_bytes: int
    max_timestamp_in_messages: int
    max_offset_in_messages: int
    messages_size: int
    now: int


class Recovered(NamedTuple):
    """What ``LogSegment.recover`` found: bytes cut from the end, and why (None when all valid)."""

    truncated_bytes: int
    reason: str | None
    position: int  # where the first invalid byte was (the new size)


class LogSegment:
    """A segment: append (the active one only), read, search, roll checks, truncate, recover."""

    def __init__(
        self,
        directory: Path,
        base_offset: int,
        config: LogConfig,
        now_ms: Callable[[], int],
        active: bool = True,
        suffix: str = "",
        volume: Volume = FILES,
    ) -> None:
        self.base_offset = base_offset
        self.volume = volume
        self.index_interval_bytes = config.index_interval_bytes
        self.log_path = log_file(directory, base_offset, suffix)
        self._fd = volume.open_fd(self.log_path)
        self._size = os.fstat(self._fd).st_size
        index_bytes = config.segment_index_bytes
        self.offset_index = OffsetIndex(
            offset_index_file(directory, base_offset, suffix), base_offset, index_bytes, active, volume)
        self.time_index = TimeIndex(
            time_index_file(directory, base_offset, suffix), base_offset, index_bytes, active, volume)
        self.txn_index = TransactionIndex(transaction_index_file(directory, base_offset, suffix), base_offset,
                                          volume)
        # Kafka's randomSegmentJitter: spreads the rolls of partitions created together.
        jitter = min(config.segment_jitter_ms, config.segment_ms)
        self.roll_jitter_ms = random.randrange(jitter) if jitter > 0 else 0
        self._now_ms = now_ms
        self.created = now_ms()
        self._bytes_since_last_index_entry = 0
        self._max_timestamp_and_offset: TimestampOffset | None = None  # None: read the time index
        self._rolling_based_timestamp: int | None = None  # the first batch's, once known

    # -- state -----------------------------------------------------------------------------------

    @property
    def size(self) -> int:
        return self._size

    @property
    def fd(self) -> int:
        return self._fd

    def max_timestamp_and_offset(self) -> TimestampOffset:
        """The largest timestamp in the segment and the (last) offset of its batch."""
        if self._max_timestamp_and_offset is None:
            self._max_timestamp_and_offset = self.time_index.last_entry
        return self._max_timestamp_and_offset

    @property
    def max_timestamp_so_far(self) -> int:
        return self.max_timestamp_and_offset().timestamp

    def largest_timestamp(self) -> int:
        """What retention.ms compares: the largest record timestamp, or the file's mtime if none."""
        ts = self.max_timestamp_so_far
        return ts if ts >= 0 else self.last_modified()

    def last_modified(self) -> int:
        return self.volume.mtime_ms(self.log_path)

    def can_convert_to_relative_offset(self, offset: int) -> bool:
        return self.offset_index.can_append_offset(offset)

    def sanity_check(self) -> None:
        """CorruptIndexError if an index file's size is not whole entries (the segment is then
        recovered). Only sizes: like Kafka's loading, it reads no index, so opening a log of many
        segments maps none of them; the segments a crash may have torn are recovered anyway."""
        for index in (self.offset_index, self.time_index):
            index.check_size()
        self.txn_index.sanity_check()  # most segments have none: nothing read then

    # -- append ----------------------------------------------------------------------------------

    def append(
        self,
        largest_offset: int,
        largest_timestamp: int,
        shallow_offset_of_max_timestamp: int,
        records: Buffer,
    ) -> None:
        """Append ``records`` (whole batches, offsets assigned) at the end of the ``.log``; one
        index entry, for the chunk's start, once index.interval.bytes have passed since the last."""
        n = len(records)
        if n == 0:
            return
        position = self._size
        if position == 0:
            self._rolling_based_timestamp = largest_timestamp
        if not self.can_convert_to_relative_offset(largest_offset):
            raise ValueError(f"offset {largest_offset} does not fit segment {self.base_offset}'s index")
        self._write_at(records, position)
        self._size = position + n
        if largest_timestamp > self.max_timestamp_so_far:
            self._max_timestamp_and_offset = TimestampOffset(
                largest_timestamp, shallow_offset_of_max_timestamp
            )
        if self._bytes_since_last_index_entry > self.index_interval_bytes:
            self.offset_index.append(largest_offset, position)
            self.time_index.maybe_append(*self.max_timestamp_and_offset())
            self._bytes_since_last_index_entry = 0
        self._bytes_since_last_index_entry += n

    def update_txn_index(self, completed: CompletedTxn, last_stable_offset: int) -> None:
        """Record an aborted transaction whose marker this segment holds (Kafka's updateTxnIndex)."""
        if completed.is_aborted:
            self.txn_index.append(AbortedTxn(completed.producer_id, completed.first_offset,
                                             completed.last_offset, last_stable_offset))

    def collect_aborted_txns(self, fetch_offset: int, upper_bound_offset: int) -> TxnIndexSearchResult:
        return self.txn_index.collect_aborted(fetch_offset, upper_bound_offset)

    def read_batch(self, position: int, header: BatchHeader) -> bytes:
        """The whole batch at ``position`` (a control batch's marker, say)."""
        return os.pread(self._fd, header.size, position)

    def _write_at(self, data: Buffer, position: int) -> None:
        try:
            pwrite_all(self._fd, data, position)
        except OSError:
            # A half-written batch (a full disk) must not stay for the next append to follow.
            os.ftruncate(self._fd, position)
            raise

    # -- scans -----------------------------------------------------------------------------------

    def batches_from(self, position: int = 0, end: int | None = None) -> Iterator[tuple[int, BatchHeader]]:
        """(position, header) of each whole batch between ``position`` (a batch boundary) and
        ``end`` (the segment's size by default); a partial batch at the end is not yielded."""
        end = self._size if end is None else min(end, self._size)
        window, window_start = b"", position
        pos = position
        while end - pos >= BATCH_HEADER_SIZE:  # no batch is smaller than its header
            if pos + BATCH_HEADER_SIZE > window_start + len(window):
                window_start = pos
                window = os.pread(self._fd, min(_HEADER_WINDOW, end - pos), pos)
                if len(window) < BATCH_HEADER_SIZE:
                    return
            header = read_header(window, pos - window_start)
            if header.batch_length < MIN_BATCH_LENGTH:
                raise CorruptRecordError(f"batch length {header.batch_length} in {self.log_path}", pos)
            if header.size > end - pos:
                return
            yield pos, header
            pos += header.size

    def translate_offset(self, offset: int, starting_position: int = 0) -> tuple[int, BatchHeader] | None:
        """Position and header of the first batch whose last offset is >= ``offset``."""
        start = max(self.offset_index.lookup(offset).position, starting_position)
        for pos, header in self.batches_from(start):
            if header.last_offset >= offset:
                return pos, header
        return None

    def read(
        self, start_offset: int, max_size: int, max_position: int | None = None, min_one_message: bool = True
    ) -> FileSlice | None:
        """Whole batches from the one holding ``start_offset``: as many as fit in ``max_size`` bytes
        and end at or before ``max_position``, and at least that first batch when
        ``min_one_message`` (KIP-74) even if it is larger. None if no batch reaches
        ``start_offset``; an empty slice if the first batch lies past ``max_position``."""
        if max_size < 0:
            raise ValueError(f"Invalid max size {max_size} for log read from segment {self.log_path}")
        found = self.translate_offset(start_offset)
        if found is None:
            return None
        start, first = found
        limit = self._size if max_position is None else min(max_position, self._size)
        first_end = start + first.size
        if first_end > limit or (first.size > max_size and not min_one_message):
            return FileSlice(self._fd, start, 0)
        cap = min(limit, start + max(max_size, first.size))
        end = first_end
        # Batches up to the last index entry below the cap are whole by construction: jump there
        # and parse only the headers after it.
        jump = self.offset_index.lookup_position(cap).position
        if jump > end:
            end = jump
        for pos, header in self.batches_from(end, cap):
            end = pos + header.size
        return FileSlice(self._fd, start, end - start)

    def read_next_offset(self) -> int:
        """The offset after the last batch (the base offset if empty): scans from the last index
        entry to the end."""
        next_offset = self.base_offset
        for _, header in self.batches_from(self.offset_index.lookup(self.offset_index.last_offset).position):
            next_offset = header.next_offset
        return next_offset

    def find_batch_by_timestamp(self, timestamp: int, starting_offset: int) -> tuple[int, BatchHeader] | None:
        """The first batch whose max timestamp is >= ``timestamp`` and that reaches
        ``starting_offset`` (Kafka's findOffsetByTimestamp up to the batch: the record within it
        is for the caller, who may have to decompress)."""
        found = self.time_index.lookup(timestamp)
        position = self.offset_index.lookup(max(found.offset, starting_offset)).position
        for pos, header in self.batches_from(position):
            if header.max_timestamp >= timestamp and header.last_offset >= starting_offset:
                return pos, header
        return None

    def find_offset_by_timestamp(self, timestamp: int, starting_offset: int) -> TimestampAndOffset | None:
        """The first record with a timestamp >= ``timestamp`` and an offset >= ``starting_offset``
        (Kafka's findOffsetByTimestamp): the time index narrows the scan to a few batches, and
        only batches whose max timestamp reaches the target are decoded."""
        found = self.time_index.lookup(timestamp)
        position = self.offset_index.lookup(max(found.offset, starting_offset)).position
        for pos, header in self.batches_from(position):
            if header.max_timestamp >= timestamp and header.last_offset >= starting_offset:
                hit = records_at_or_after(
                    FileSlice(self._fd, pos, header.size).read(), header, timestamp, starting_offset
                )
                if hit is not None:
                    return hit
        return None

    # -- roll --------------------------------------------------------------------------------------

    def should_roll(self, params: RollParams) -> bool:
        """Kafka's shouldRoll: full by bytes, old by segment.ms, an index full, or an offset that no
        longer fits a relative offset."""
        reached_roll_ms = (
            self.time_waited_for_roll(params.now, params.max_timestamp_in_messages)
            > params.max_segment_ms - self.roll_jitter_ms
        )
        size = self._size
        return (
            size > params.max_segment_bytes - params.messages_size
            or (size > 0 and reached_roll_ms)
            or self.offset_index.is_full()
            or self.time_index.is_full()
            or not self.can_convert_to_relative_offset(params.max_offset_in_messages)
        )

    def time_waited_for_roll(self, now: int, message_timestamp: int) -> int:
        """Since the first batch's timestamp (by the incoming batch's), or since creation when the
        first batch has none."""
        if self._rolling_based_timestamp is None:
            for _, header in self.batches_from(0):
                self._rolling_based_timestamp = header.max_timestamp
                break
        ts = -1 if self._rolling_based_timestamp is None else self._rolling_based_timestamp
        return message_timestamp - ts if ts >= 0 else now - self.created

    def on_become_inactive(self) -> None:
        """The segment was rolled: give the time index its final entry, trim the index files and
        drop their in-memory copies (mapped again on demand)."""
        self.time_index.maybe_append(*self.max_timestamp_and_offset(), skip_full_check=True)
        self.offset_index.make_read_only()
        self.time_index.make_read_only()

    def make_active(self) -> None:
        """The segment takes appends again (after the log was truncated back into it)."""
        self.offset_index.make_writable()
        self.time_index.make_writable()

    # -- truncate and recover --------------------------------------------------------------------

    def truncate_to(self, offset: int) -> int:
        """Remove the batches from the one holding ``offset`` on, and their index entries; the
        number of bytes removed."""
        found = self.translate_offset(offset)
        self.offset_index.truncate_to(offset)
        self.time_index.truncate_to(offset)
        self.txn_index.truncate_to(offset)
        truncated = 0
        if found is not None:
            truncated = self._size - found[0]
            self._truncate_file(found[0])
        if self._size == 0:
            self.created = self._now_ms()
            self._rolling_based_timestamp = None
        self._bytes_since_last_index_entry = 0
        if self.max_timestamp_so_far >= 0:
            self._max_timestamp_and_offset = self._read_largest_timestamp()
        return truncated

    def _truncate_file(self, size: int) -> None:
        os.ftruncate(self._fd, size)
        self._size = size

    def _read_largest_timestamp(self) -> TimestampOffset:
        last = self.time_index.last_entry
        best = last
        for _, header in self.batches_from(self.offset_index.lookup(last.offset).position):
            if header.max_timestamp > best.timestamp:
                best = TimestampOffset(header.max_timestamp, header.last_offset)
        return best

    def recover(self, leader_epoch_cache: LeaderEpochFileCache | None = None,
                producer_state: ProducerStateManager | None = None) -> Recovered:
        """Re-read every batch, check each one's framing, CRC-32C and offsets, rebuild the indexes
        (and the leader epochs the batches carry), and cut the file at the first invalid byte.
        With ``producer_state`` (the producers as of the segment's base offset), the batches'
        producers update it and the ``.txnindex`` is rebuilt from the aborts among them."""
        self.offset_index.reset()
        self.time_index.reset()
        self.txn_index.reset()
        self._max_timestamp_and_offset = TimestampOffset(NO_TIMESTAMP, self.base_offset)
        valid = 0
        last_index_entry = 0
        next_offset = self.base_offset
        reason = None
        try:
            for header, window, at in self._valid_batches():
                if header.base_offset < next_offset or not self.can_convert_to_relative_offset(
                    header.last_offset
                ):
                    # baseOffset is outside the CRC: check it against its neighbours.
                    raise CorruptRecordError(
                        f"batch base offset {header.base_offset} out of order after offset {next_offset - 1}",
                        valid,
                    )
                if header.max_timestamp > self.max_timestamp_so_far:
                    self._max_timestamp_and_offset = TimestampOffset(header.max_timestamp, header.last_offset)
                if valid - last_index_entry > self.index_interval_bytes:
                    self.offset_index.append(header.last_offset, valid)
                    self.time_index.maybe_append(*self.max_timestamp_and_offset())
                    last_index_entry = valid
                valid += header.size
                next_offset = header.next_offset
                epoch = header.partition_leader_epoch
                if leader_epoch_cache is not None and epoch >= 0:
                    latest = leader_epoch_cache.latest_epoch
                    if latest is None or epoch > latest:
                        leader_epoch_cache.assign(epoch, header.base_offset)
                if producer_state is not None and header.producer_id >= 0:
                    self._update_producer_state(producer_state, header, window, at)
        except CorruptRecordError as e:
            reason = str(e)
        truncated = self._size - valid
        if truncated > 0 and reason is None:
            reason = f"a partial batch of {truncated} bytes at the end"
        self._truncate_file(valid)
        self._bytes_since_last_index_entry = valid - last_index_entry
        self.time_index.maybe_append(*self.max_timestamp_and_offset(), skip_full_check=True)
        return Recovered(truncated, reason, valid)

    def _update_producer_state(self, state: ProducerStateManager, header: BatchHeader, window: bytes,
                               at: int) -> None:
        """Kafka's LogSegment.updateProducerState: a recovered batch's producer, unchecked; an
        abort it ends goes to the ``.txnindex``."""
        info = state.prepare_update(AppendOrigin.REPLICATION)
        marker = read_marker(window, at, header) if header.is_control else None
        completed = info.append(header, header.base_offset, marker)
        state.update(info)
        if completed is not None:
            self.update_txn_index(completed, state.last_stable_offset(completed))
            state.complete_txn(completed)

    def _valid_batches(self) -> Iterator[tuple[BatchHeader, bytes, int]]:
        """Each batch from the start, validated (CorruptRecordError at the first bad one, its
        position in the file), with the bytes holding it and where it is in them; stops quietly
        before a partial batch at the end."""
        pos = 0
        size = self._size
        window, window_start = b"", 0
        while size - pos >= LOG_OVERHEAD:
            at = pos - window_start
            if at + LOG_OVERHEAD > len(window):
                window_start, window, at = pos, os.pread(self._fd, min(_RECOVERY_WINDOW, size - pos), pos), 0
            length = int.from_bytes(window[at + 8 : at + LOG_OVERHEAD], "big", signed=True)
            if length < MIN_BATCH_LENGTH:
                raise CorruptRecordError(f"batch length {length} below the minimum {MIN_BATCH_LENGTH}", pos)
            if length + LOG_OVERHEAD > size - pos:
                return  # a torn tail (or a length past the end): the caller cuts it
            if at + length + LOG_OVERHEAD > len(window):
                # Never more than the file holds, so a corrupt length cannot ask for gigabytes.
                read = max(min(_RECOVERY_WINDOW, size - pos), length + LOG_OVERHEAD)
                window_start, window, at = pos, os.pread(self._fd, read, pos), 0
            try:
                # Compacted batches hold fewer records than their offset range.
                header = validate_batch(window, at, exact_count=False)
            except CorruptRecordError as e:
                raise CorruptRecordError(e.reason, pos + e.offset - at) from None
            yield header, window, at
            pos += header.size

    # -- files -------------------------------------------------------------------------------------

    def flush(self) -> None:
        os.fsync(self._fd)
        self.offset_index.flush()
        self.time_index.flush()
        self.txn_index.flush()

    def change_file_suffixes(self, old: str, new: str) -> None:
        for path, rename in (
            (self.log_path, self._rename_log),
            (self.offset_index.path, self.offset_index.rename),
            (self.time_index.path, self.time_index.rename),
            (self.txn_index.path, self.txn_index.rename),
        ):
            name = path.name.removesuffix(old) if old else path.name
            rename(path.with_name(name + new))

    def _rename_log(self, path: Path) -> None:
        self.volume.replace(self.log_path, path)
        self.log_path = path

    def close(self) -> None:
        """Close the files; a segment closed cleanly keeps its largest timestamp in its time index."""
        if self._fd < 0:
            return
        if self.time_index.writable:
            self.time_index.maybe_append(*self.max_timestamp_and_offset(), skip_full_check=True)
        self.offset_index.close()
        self.time_index.close()
        self.txn_index.close()
        os.close(self._fd)
        self._fd = -1

    def close_handlers(self) -> None:
        """Close the files without writing anything (Kafka's closeHandlers)."""
        if self._fd < 0:
            return
        self.offset_index.close_handler()
        self.time_index.close_handler()
        self.txn_index.close_handler()
        os.close(self._fd)
        self._fd = -1

    def delete(self) -> None:
        """Close and remove the files."""
        self.close()
        for path in (self.log_path, self.offset_index.path, self.time_index.path):
            self.volume.unlink(path)
        self.txn_index.delete()

    def __repr__(self) -> str:
        return f"LogSegment(baseOffset={self.base_offset}, size={self._size})"
