"""Log compaction: Kafka's LogCleaner for logs with ``cleanup.policy`` compact.

A compacted log keeps at least the last record of every key. The cleaner works on the *dirty*
part of a log, from the offset its last round reached (``cleaner-offset-checkpoint`` in each log
dir) to the first offset it may not touch yet: the active segment, the last stable offset (so the
high watermark) and records younger than ``min.compaction.lag.ms``, always rounded down to a
segment boundary. A round:

1. reads the dirty segments and maps each key (its MD5, as Kafka's SkimpyOffsetMap, 24 bytes of
   ``log.cleaner.dedupe.buffer.size`` each) to the last offset it has there; a full map ends the
   round early, at a segment boundary;
2. rewrites every segment from the log start up to where the map reaches, in groups that fit one
   segment: a record stays if no later record has its key; a tombstone (null value) stays until
   its segment is ``delete.retention.ms`` older than the last segment already clean (the delete
   horizon); a batch keeps its base offset, last offset, producer fields and codec, so offsets,
   sequences and leader epochs mean what they meant; a batch left empty that is a producer's last
   stays whole, so that the producer's state can still be rebuilt from the log;
3. swaps each cleaned group in (``.cleaned`` -> ``.swap`` -> the segment's name; a start after a
   crash completes a ``.swap``, see LogLoader._complete_swaps) and deletes the old segments after
   ``file.delete.delay.ms``, since a fetch may still be sending from them.

Transactions (Kafka's CleanedTransactionMetadata): the cleaner never passes the last stable
offset, so every transaction it meets has ended. The aborted ones come from the segments'
``.txnindex``; their records are dropped (and never enter the key map, where they would hide a
committed record of their key), and their index entry goes to the cleaned segment holding the
marker as long as some batch of theirs is left (a producer's last batch stays whole, see above).
A COMMIT or ABORT marker stays while its transaction has data in the log, and past the delete
horizon, as a tombstone does, once it has none; a producer's last marker (no data batch left in
its epoch) stays for its epoch's sake.

The log picked is the one with the largest dirty ratio (dirty bytes over cleanable bytes) at or above
``min.cleanable.dirty.ratio``, or any whose oldest dirty record waited ``max.compaction.lag.ms``.
Records without a key cannot be compacted; Produce refuses them for compacted topics.
"""

from __future__ import annotations

import hashlib
import heapq
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from kafkalite.protocol.records.batch import BatchHeader, TimestampType
from kafkalite.protocol.records.control import ControlRecordType, decode_control_key
from kafkalite.protocol.records.records import Record, build_batch, decode_records

from .checkpoint import OffsetCheckpointFile, TopicPartition
from .config import CleanerConfig
from .files import CLEANED_FILE_SUFFIX
from .log import Log
from .producer_state import ProducerStateEntry
from .segment import LogSegment
from .transaction_index import AbortedTxn, TransactionIndex
from .volume import FILES, Volume

log = logging.getLogger(__name__)

CLEANER_OFFSET_CHECKPOINT_FILENAME = "cleaner-offset-checkpoint"
OFFSET_MAP_ENTRY_BYTES = 24  # Kafka's SkimpyOffsetMap: a 16-byte MD5 and an 8-byte offset
OFFSET_MAP_LOAD_FACTOR = 0.9  # Kafka's log.cleaner.io.buffer.load.factor


class OffsetMap:
    """Key (by MD5) -> the last offset seen for it, holding at most ``slots`` keys."""

    def __init__(self, memory: int) -> None:
        self.slots = max(1, int(memory // OFFSET_MAP_ENTRY_BYTES * OFFSET_MAP_LOAD_FACTOR))
        self._map: dict[bytes, int] = {}

    @staticmethod
    def _hash(key: bytes) -> bytes:
        return hashlib.md5(key, usedforsecurity=False).digest()

    def put(self, key: bytes, offset: int) -> bool:
        """Record ``offset`` for ``key``; False (and nothing changed) when a new key does not fit."""
        digest = self._hash(key)
        if digest not in self._map and len(self._map) >= self.slots:
            return False
        self._map[digest] = offset
        return True

    def get(self, key: bytes) -> int:
        return self._map.get(self._hash(key), -1)


class CleanStats(NamedTuple):
    end_offset: int  # the first offset not cleaned: where the next round starts
    bytes_read: int
    bytes_written: int
    records_removed: int


class LogToClean(NamedTuple):
    log: Log
    first_dirty_offset: int
    first_uncleanable_offset: int
    clean_bytes: int
    dirty_bytes: int

    @property
    def dirty_ratio(self) -> float:
        total = self.clean_bytes + self.dirty_bytes
        return self.dirty_bytes / total if total else 0.0


def cleanable_range(log: Log, checkpointed: int | None, now_ms: int) -> LogToClean | None:
    """The part of ``log`` a round may clean (Kafka's LogCleanerManager.cleanableOffsets), rounded
    to segment boundaries; None when there is nothing dirty below the first uncleanable offset."""
    segments = log.segments()
    if len(segments) < 2:
        return None  # only the active segment, which is never cleaned
    if checkpointed is not None and checkpointed > log.log_end_offset:
        checkpointed = None  # truncated below where cleaning had reached: start over
    first_dirty = max(checkpointed or 0, log.log_start_offset)
    limit = min(segments[-1].base_offset, log.last_stable_offset)  # Kafka: never past the LSO
    lag = log.config.min_compaction_lag_ms
    if lag > 0:
        for segment in segments:
            if segment.largest_timestamp() > now_ms - lag:
                limit = min(limit, segment.base_offset)
                break
    # Whole segments only: the segment holding the limit stays dirty.
    bases = [s.base_offset for s in segments]
    uncleanable = max((b for b in bases if b <= limit), default=bases[0])
    dirty_start = max((b for b in bases if b <= first_dirty), default=bases[0])
    if dirty_start >= uncleanable:
        return None
    clean = sum(s.size for s in segments if s.base_offset < dirty_start)
    dirty = sum(s.size for s in segments if dirty_start <= s.base_offset < uncleanable)
    return LogToClean(log, dirty_start, uncleanable, clean, dirty)


class CleanedTransactionMetadata:
    """The transactions met while a cleaning walks the log in order (Kafka's
    CleanedTransactionMetadata): ``aborted`` are the aborted transactions of the range (from the
    ``.txnindex``), ``cleaned_index`` the cleaned segment's, which gets the entries of the aborted
    transactions with a batch still in the log."""

    def __init__(self, aborted: list[AbortedTxn], cleaned_index: TransactionIndex | None = None) -> None:
        self._aborted = [(txn.first_offset, txn.last_offset, txn) for txn in aborted]
        heapq.heapify(self._aborted)
        self._ongoing_committed: set[int] = set()  # producers of a transaction with a batch seen
        self._ongoing_aborted: dict[int, tuple[AbortedTxn, list[int]]] = {}  # pid -> (txn, [last batch])
        self.cleaned_index = cleaned_index

    def _consume_aborted_up_to(self, offset: int) -> None:
        while self._aborted and self._aborted[0][0] <= offset:
            txn = heapq.heappop(self._aborted)[2]
            self._ongoing_aborted.setdefault(txn.producer_id, (txn, []))

    def on_batch_read(self, header: BatchHeader) -> bool:
        """A data batch: whether it belongs to an aborted transaction (its records can go)."""
        self._consume_aborted_up_to(header.last_offset)
        if not header.is_transactional:
            return False
        aborted = self._ongoing_aborted.get(header.producer_id)
        if aborted is not None:
            aborted[1][:] = [header.last_offset]
            return True
        self._ongoing_committed.add(header.producer_id)
        return False

    def on_control_batch_read(self, header: BatchHeader, data: bytes) -> bool:
        """A control batch: whether it may go (its transaction has no batch left in the range);
        an abort whose transaction still has one keeps its entry in the cleaned index."""
        self._consume_aborted_up_to(header.last_offset)
        records = decode_records(data, 0, header)
        if not records:
            return True  # emptied already
        control = decode_control_key(records[0].key).type
        producer_id = header.producer_id
        if control is ControlRecordType.ABORT:
            aborted = self._ongoing_aborted.pop(producer_id, None)
            if aborted is not None and aborted[1]:
                if self.cleaned_index is not None:
                    self.cleaned_index.append(aborted[0])
                return False
            return True
        if control is ControlRecordType.COMMIT:
            seen = producer_id in self._ongoing_committed
            self._ongoing_committed.discard(producer_id)
            return not seen
        return False


def _read_batches(segment: LogSegment) -> Iterator[tuple[BatchHeader, bytes]]:
    for position, header in segment.batches_from():
        yield header, os.pread(segment.fd, header.size, position)


class Cleaner:
    """Cleans one log at a time (Kafka's Cleaner). The delete horizon comes from the segments'
    modification times, not from a clock."""

    def __init__(self, dedupe_buffer_size: int) -> None:
        self.dedupe_buffer_size = dedupe_buffer_size

    def clean(self, target: LogToClean) -> CleanStats:
        log_ = target.log
        truncations = log_.truncations  # read before the segments: a later truncation voids the round
        segments = log_.segments()
        offset_map = OffsetMap(self.dedupe_buffer_size)
        end = self._build_offset_map(log_, segments, target.first_dirty_offset,
                                     target.first_uncleanable_offset, offset_map)
        if end <= target.first_dirty_offset:
            log.warning("Cannot clean %s-%d: log.cleaner.dedupe.buffer.size holds %d keys, fewer than one "
                        "segment has", log_.topic, log_.partition, offset_map.slots)
            return CleanStats(target.first_dirty_offset, 0, 0, 0)
        clean_below = [s for s in segments if s.base_offset < target.first_dirty_offset]
        # Kafka's delete horizon: tombstones live delete.retention.ms past the last clean segment.
        horizon = (clean_below[-1].last_modified() if clean_below else 0) - log_.config.delete_retention_ms
        stats = [0, 0, 0]
        to_clean = [s for s in segments if s.base_offset < end]
        # One walk over the groups in order: a transaction may begin in one group and end in another.
        txns = CleanedTransactionMetadata(log_.collect_aborted_transactions(to_clean[0].base_offset, end))
        for group in _group_by_size(to_clean, end, log_.config.segment_bytes):
            self._clean_group(log_, group, offset_map, txns, horizon, truncations, stats)
        return CleanStats(end, *stats)

    def _build_offset_map(self, log_: Log, segments: Sequence[LogSegment], start: int, end: int,
                          offset_map: OffsetMap) -> int:
        """Fill the map from the dirty segments, aborted records left out; the segment boundary it
        reaches (``end``, or the base of the segment where the map filled up: that segment's keys
        are only partly in)."""
        txns = CleanedTransactionMetadata(log_.collect_aborted_transactions(start, end))
        for segment in segments:
            if segment.base_offset < start:
                continue
            if segment.base_offset >= end:
                return end
            for header, data in _read_batches(segment):
                if header.is_control:
                    txns.on_control_batch_read(header, data)
                    continue
                if txns.on_batch_read(header):
                    continue  # aborted: its keys must not hide committed records
                for record in decode_records(data, 0, header):
                    offset = header.base_offset + record.offset_delta
                    if record.key is not None and not offset_map.put(record.key, offset):
                        return segment.base_offset
        return end

    def _clean_group(self, log_: Log, group: list[LogSegment], offset_map: OffsetMap,
                     txns: CleanedTransactionMetadata, horizon: int, truncations: int,
                     stats: list[int]) -> None:
        base = group[0].base_offset
        cleaned = LogSegment(log_.dir, base, log_.config, log_.clock, active=True, suffix=CLEANED_FILE_SUFFIX,
                             volume=log_.volume)
        try:
            producers = log_.producer_state.active_producers()
            txns.cleaned_index = cleaned.txn_index
            for segment in group:
                keep_tombstones = segment.last_modified() > horizon
                for header, data in _read_batches(segment):
                    stats[0] += len(data)
                    kept = self._filter(header, data, offset_map, keep_tombstones, producers, txns, stats)
                    if kept is not None:
                        cleaned.append(header.last_offset, header.max_timestamp, header.last_offset, kept)
                        stats[1] += len(kept)
            cleaned.flush()
            cleaned.on_become_inactive()
            log_.volume.set_mtime_ms(cleaned.log_path, max(s.last_modified() for s in group))
            if not log_.replace_segments(group, cleaned, truncations):
                log.info("Cleaning of %s-%d from %d dropped: its segments changed meanwhile", log_.topic,
                         log_.partition, base)
                cleaned.delete()
        except BaseException:
            cleaned.delete()
            raise

    @staticmethod
    def _filter(header: BatchHeader, data: bytes, offset_map: OffsetMap, keep_tombstones: bool,
                producers: dict[int, ProducerStateEntry], txns: CleanedTransactionMetadata,
                stats: list[int]) -> bytes | None:
        """The batch as it stays: whole, rebuilt with the records that stay, or None."""
        producer = producers.get(header.producer_id) if header.producer_id >= 0 else None
        if header.is_control:
            discardable = txns.on_control_batch_read(header, data)
            # A producer's last marker (no data batch left in its epoch) keeps its epoch (Kafka's
            # isBatchLastRecordOfProducer).
            last_of_producer = (producer is not None and producer.last_data_offset < 0
                                and producer.producer_epoch == header.producer_epoch)
            if discardable and not keep_tombstones and not last_of_producer:
                stats[2] += header.records_count
                return None
            return data
        records = decode_records(data, 0, header)
        producer_last = producer is not None and producer.last_data_offset == header.last_offset
        if txns.on_batch_read(header):  # an aborted transaction's
            if producer_last:
                return data  # kept for the producer state; its .txnindex entry stays with it
            stats[2] += len(records)
            return None
        kept: list[Record] = []
        for r in records:
            offset = header.base_offset + r.offset_delta
            if r.key is not None:
                latest = offset_map.get(r.key)
                if latest > offset:
                    continue  # a later record of the key is in the map
                if r.value is None and not keep_tombstones:
                    continue  # a tombstone past the delete horizon
            kept.append(r)
        stats[2] += len(records) - len(kept)
        if len(kept) == len(records):
            return data
        if not kept:
            # A producer's last batch keeps its header fields for the producer state: kept whole.
            if producer_last:
                stats[2] -= len(records)
                return data
            return None
        log_append = header.timestamp_type is TimestampType.LOG_APPEND_TIME
        return build_batch(
            kept, header.base_offset, header.compression, base_timestamp=header.base_timestamp,
            max_timestamp=header.max_timestamp if log_append else None, timestamp_type=header.timestamp_type,
            producer_id=header.producer_id, producer_epoch=header.producer_epoch,
            base_sequence=header.base_sequence, partition_leader_epoch=header.partition_leader_epoch,
            is_transactional=header.is_transactional, last_offset_delta=header.last_offset_delta)


def _group_by_size(segments: Sequence[LogSegment], end: int, max_size: int) -> Iterator[list[LogSegment]]:
    """Consecutive segments whose sizes add up to at most ``max_size`` and whose offsets fit one
    segment's 32-bit relative offsets (Kafka's groupSegmentsBySize); ``end`` is where the last
    one ends (each other ends where the next begins, so no segment is read for it)."""
    group: list[LogSegment] = []
    size = 0
    ends = [s.base_offset for s in segments[1:]] + [end]
    for segment, segment_end in zip(segments, ends, strict=True):
        if group and (size + segment.size > max_size or segment_end - group[0].base_offset > 2**31 - 1):
            yield group
            group, size = [], 0
        group.append(segment)
        size += segment.size
    if group:
        yield group


class LogCleaner:
    """The cleaner threads and the choice of log (Kafka's LogCleaner and LogCleanerManager).

    ``logs`` gives the logs of each log dir; the cleaned-up-to offsets are checkpointed per dir.
    """

    def __init__(self, config: CleanerConfig, logs: Callable[[], dict[Path, dict[TopicPartition, Log]]],
                 now_ms: Callable[[], int] | None = None, volume: Volume = FILES) -> None:
        self.config = config
        self.volume = volume  # where the cleaner's offset checkpoints go (the logs' volume)
        self._logs = logs
        self._now_ms = now_ms or (lambda: int(time.time() * 1000))
        self._lock = threading.Lock()
        self._in_progress: set[int] = set()  # id() of logs being cleaned
        self._checkpoints: dict[Path, dict[TopicPartition, int]] = {}
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._started = False  # between startup and shutdown
        self._reconfigure_lock = threading.Lock()
        self.rounds = 0  # finished rounds, for tests and metrics

    # --- checkpoints -----------------------------------------------------------------------------

    def _checkpoint_file(self, log_dir: Path) -> OffsetCheckpointFile:
        return OffsetCheckpointFile(log_dir / CLEANER_OFFSET_CHECKPOINT_FILENAME, self.volume)

    def _checkpoint(self, log_dir: Path) -> dict[TopicPartition, int]:
        if log_dir not in self._checkpoints:
            try:
                self._checkpoints[log_dir] = self._checkpoint_file(log_dir).read()
            except OSError as e:
                log.warning("Ignoring %s: %s", self._checkpoint_file(log_dir).path, e)
                self._checkpoints[log_dir] = {}
        return self._checkpoints[log_dir]

    def cleaned_offset(self, log_dir: Path, tp: TopicPartition) -> int | None:
        """Where the next round of ``tp``'s log starts (None: it was never cleaned)."""
        with self._lock:
            return self._checkpoint(log_dir).get(tp)

    def _update_checkpoint(self, log_dir: Path, tp: TopicPartition, offset: int | None) -> None:
        with self._lock:
            offsets = self._checkpoint(log_dir)
            if offset is None:
                offsets.pop(tp, None)
            else:
                offsets[tp] = offset
            live = self._logs().get(log_dir, {})
            for gone in [k for k in offsets if k not in live]:
                del offsets[gone]
            self._checkpoint_file(log_dir).write(offsets)

    # --- choosing -------------------------------------------------------------------------------

    def grab_filthiest_log(self) -> tuple[Path, TopicPartition, LogToClean] | None:
        """The compacted log most in need of cleaning, marked in progress; None if none is."""
        now = self._now_ms()
        best: tuple[float, Path, TopicPartition, LogToClean] | None = None
        with self._lock:
            for log_dir, logs in self._logs().items():
                checkpoint = self._checkpoint(log_dir)
                for tp, log_ in logs.items():
                    if not log_.config.compact or id(log_) in self._in_progress:
                        continue
                    target = cleanable_range(log_, checkpoint.get(tp), now)
                    if target is None:
                        continue
                    ratio = target.dirty_ratio
                    overdue = self._overdue(target, now)
                    if ratio < log_.config.min_cleanable_dirty_ratio and not overdue:
                        continue
                    score = float("inf") if overdue else ratio
                    if best is None or score > best[0]:
                        best = (score, log_dir, tp, target)
            if best is None:
                return None
            self._in_progress.add(id(best[3].log))
            return best[1], best[2], best[3]

    @staticmethod
    def _overdue(target: LogToClean, now: int) -> bool:
        lag = target.log.config.max_compaction_lag_ms
        for segment in target.log.segments():
            if target.first_dirty_offset <= segment.base_offset < target.first_uncleanable_offset:
                first = segment.max_timestamp_so_far
                ts = first if first >= 0 else segment.last_modified()
                return now - ts > lag
        return False

    # --- cleaning -------------------------------------------------------------------------------

    def clean_once(self) -> CleanStats | None:
        """One round on the filthiest log, if any (what a cleaner thread does each time)."""
        grabbed = self.grab_filthiest_log()
        if grabbed is None:
            return None
        log_dir, tp, target = grabbed
        try:
            stats = Cleaner(self.config.dedupe_buffer_size // max(1, self.config.num_threads)).clean(target)
            self._update_checkpoint(log_dir, tp, stats.end_offset)
            log.info("Cleaned %s-%d up to offset %d: %d bytes read, %d written, %d records removed",
                     tp.topic, tp.partition, stats.end_offset, stats.bytes_read, stats.bytes_written,
                     stats.records_removed)
            return stats
        finally:
            with self._lock:
                self._in_progress.discard(id(target.log))
                self.rounds += 1

    def forget(self, log_dir: Path, tp: TopicPartition) -> None:
        """A log deleted or truncated: its cleaning starts over from its start."""
        self._update_checkpoint(log_dir, tp, None)

    def startup(self) -> None:
        self._started = True
        if not self.config.enable:
            return
        for i in range(self.config.num_threads):
            thread = threading.Thread(target=self._run, args=(self._stop,),
                                      name=f"kafka-log-cleaner-thread-{i}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def _run(self, stop: threading.Event) -> None:
        # Its own stop event: a thread a reconfiguration did not wait for still stops.
        while not stop.is_set():
            try:
                cleaned = self.clean_once()
            except Exception:
                log.exception("The log cleaner's round failed; trying again in %d ms", self.config.backoff_ms)
                cleaned = None
            if cleaned is None:
                stop.wait(self.config.backoff_ms / 1000)

    def reconfigure(self, config: CleanerConfig, timeout: float = 10.0) -> None:
        """New settings (Kafka's LogCleaner.reconfigure): the threads finish their round and stop,
        and as many as ``config`` says start again (log.cleaner.threads grows or shrinks them)."""
        with self._reconfigure_lock:
            started = self._started
            self.shutdown(timeout)
            self.config = config
            self._stop = threading.Event()
            if started:  # not before startup, nor after the last shutdown
                self.startup()

    @property
    def num_threads(self) -> int:
        """Cleaner threads running."""
        return sum(1 for t in self._threads if t.is_alive())

    def shutdown(self, timeout: float = 10.0) -> None:
        self._started = False
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout)
        self._threads = []
