"""The opening of a partition's log (Kafka's LogLoader): leftovers of an interrupted deletion or
cleaning removed, a cleaned segment renamed ``.swap`` completed, orphaned indexes dropped, the
segments opened into a LocalLog (local_log.py) with their missing or corrupt indexes rebuilt and,
after an unclean shutdown, recovery: the segments from the one holding the recovery point are
re-read and the log cut at the first invalid byte. Then the leader epoch cache is trimmed to the
log and the offsets the log starts from are known.

A recovered segment's ``.txnindex`` is rebuilt from its batches, which needs the producers (their
open transactions) as of the segment's start: ``producer_state_at(base_offset)`` gives them
(Kafka's recoverSegment rebuilds a ProducerStateManager up to there), and a snapshot at the
segment's end is taken once it is recovered, so the next segment starts from it. The log's own
producer state is rebuilt after the load by the UnifiedLog (log.py), as it is after a
truncation.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import NamedTuple

from kafkalite.storage.errors import CorruptIndexError
from kafkalite.storage.files import (
    CLEANED_FILE_SUFFIX,
    DELETED_FILE_SUFFIX,
    INDEX_FILE_SUFFIX,
    LOG_FILE_SUFFIX,
    SWAP_FILE_SUFFIX,
    TEMP_FILE_SUFFIX,
    TIME_INDEX_FILE_SUFFIX,
    TXN_INDEX_FILE_SUFFIX,
    log_file,
    offset_from_file_name,
    offset_index_file,
    time_index_file,
    transaction_index_file,
)
from kafkalite.storage.leader_epoch import LeaderEpochFileCache
from kafkalite.storage.local_log import LocalLog
from kafkalite.storage.producer_state import ProducerStateManager
from kafkalite.storage.segment import LogSegment, Recovered
from kafkalite.storage.volume import glob

log = logging.getLogger("kafkalite.storage.log")


class LoadedLogOffsets(NamedTuple):
    """Where a loaded log starts and ends (Kafka's LoadedLogOffsets)."""

    log_start_offset: int
    recovery_point: int
    log_end_offset: int


class LogLoader:
    """Loads ``local`` (empty) from its directory; ``log_start_checkpoint`` and ``recovery_point``
    are the log dir's checkpoints, ``clean`` whether the last shutdown was; ``producer_state_at``
    the producers as of a segment's base offset, for its recovery (None: the .txnindex is not
    rebuilt)."""

    def __init__(self, local: LocalLog, leader_epoch_cache: LeaderEpochFileCache, log_start_checkpoint: int,
                 recovery_point: int, clean: bool,
                 producer_state_at: Callable[[int], ProducerStateManager] | None = None) -> None:
        self.local = local
        self.producer_state_at = producer_state_at
        self.leader_epoch_cache = leader_epoch_cache
        self.log_start_checkpoint = log_start_checkpoint
        self.recovery_point = recovery_point
        self.clean = clean

    def load(self) -> LoadedLogOffsets:
        """Kafka's LogLoader.load: clear leftovers, open segments, recover what may be torn. Sets
        the LocalLog's log end offset, recovery point and pending flush."""
        local, volume, log_start_checkpoint = self.local, self.local.volume, self.log_start_checkpoint
        for path in volume.children(local.dir):
            name = path.name
            if name.endswith((DELETED_FILE_SUFFIX, CLEANED_FILE_SUFFIX, TEMP_FILE_SUFFIX)):
                volume.unlink(path)  # a deletion or rewrite a stop interrupted
        self._complete_swaps()
        for path in sorted(volume.children(local.dir)):
            if path.suffix in (INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX):
                if not volume.exists(log_file(local.dir, offset_from_file_name(path.name))):
                    log.warning("Found an orphaned index file %s, with no corresponding log file.", path)
                    volume.unlink(path)
            elif path.suffix == LOG_FILE_SUFFIX:
                base = offset_from_file_name(path.name)
                index_missing = not volume.exists(offset_index_file(local.dir, base))
                segment = LogSegment(local.dir, base, local.config, local.now_ms, active=False, volume=volume)
                local.add_segment(segment)
                try:
                    if index_missing:
                        raise FileNotFoundError(f"no offset index for {path}")
                    segment.sanity_check()
                except (FileNotFoundError, CorruptIndexError) as e:
                    log.warning("Rebuilding the indexes of %s: %s", path, e)
                    self._recover_segment(segment)
        log_end_offset = self._recover_log()
        if log_end_offset is not None and log_end_offset < log_start_checkpoint:
            log.warning(
                "Deleting all segments of %s because the log end offset %d is below the log start offset %d",
                local.dir,
                log_end_offset,
                log_start_checkpoint,
            )
            for segment in local.segments():
                local.remove_segment(segment)
                segment.delete()
            self.leader_epoch_cache.clear()
        if not local.num_segments:
            local.new_segment(log_start_checkpoint)
        for segment in local.segments()[:-1]:
            if segment.offset_index.writable:  # recovered: rebuilt indexes to trim and release
                segment.on_become_inactive()
        active = local.active_segment
        active.make_active()
        end = local.log_end_offset = active.read_next_offset()
        self.leader_epoch_cache.truncate_from_end(end)
        self.leader_epoch_cache.truncate_from_start(log_start_checkpoint)
        local.recovery_point = end if self.clean else min(self.recovery_point, end)
        local.flush_pending = local.recovery_point
        return LoadedLogOffsets(max(log_start_checkpoint, local.first_base_offset), local.recovery_point, end)

    def _recover_log(self) -> int | None:
        """Without the clean-shutdown marker, re-read the segments from the one holding the
        recovery point; cut the log at the first invalid byte and drop every segment after it."""
        local = self.local
        if self.clean or not local.num_segments:
            return local.active_segment.read_next_offset() if local.num_segments else None
        segments = local.segments()
        first = max(local.floor_index(self.recovery_point), 0)
        for i, segment in enumerate(segments[first:], start=first):
            recovered = self._recover_segment(segment)
            if recovered.truncated_bytes > 0:
                cut_at = segment.read_next_offset()
                log.warning(
                    "Corruption found in segment %s of %s-%d at byte %d: %s; truncated %d bytes, "
                    "the log now ends at offset %d",
                    segment.base_offset,
                    local.topic,
                    local.partition,
                    recovered.position,
                    recovered.reason,
                    recovered.truncated_bytes,
                    cut_at,
                )
                for later in segments[i + 1 :]:
                    local.remove_segment(later)
                    later.delete()
                break
        return local.active_segment.read_next_offset()

    def _recover_segment(self, segment: LogSegment) -> Recovered:
        if self.producer_state_at is None:
            return segment.recover(self.leader_epoch_cache)
        state = self.producer_state_at(segment.base_offset)
        recovered = segment.recover(self.leader_epoch_cache, state)
        # So that recovering the next segment does not replay this one again.
        state.take_snapshot(segment.read_next_offset())
        return recovered

    def _complete_swaps(self) -> None:
        """A cleaned segment renamed ``.swap`` replaces the segments it covers (Kafka's
        completeSwapOperations): the cleaner stopped between the rename and the old segments'
        removal. A ``.swap`` index without its ``.swap`` log is a leftover."""
        local, volume = self.local, self.local.volume
        for path in glob(volume, local.dir, f"*{LOG_FILE_SUFFIX}{SWAP_FILE_SUFFIX}"):
            base = offset_from_file_name(path.name)
            swapped = LogSegment(local.dir, base, local.config, local.now_ms, active=False,
                                 suffix=SWAP_FILE_SUFFIX, volume=volume)
            try:
                end = swapped.read_next_offset()
            finally:
                swapped.close()
            for old in glob(volume, local.dir, f"*{LOG_FILE_SUFFIX}"):
                old_base = offset_from_file_name(old.name)
                if base <= old_base < max(end, base + 1):
                    for stale in (old, offset_index_file(local.dir, old_base),
                                  time_index_file(local.dir, old_base),
                                  transaction_index_file(local.dir, old_base)):
                        volume.unlink(stale)
            for suffix_path in (path, offset_index_file(local.dir, base, SWAP_FILE_SUFFIX),
                                time_index_file(local.dir, base, SWAP_FILE_SUFFIX),
                                transaction_index_file(local.dir, base, SWAP_FILE_SUFFIX)):
                if volume.exists(suffix_path):
                    unswapped = suffix_path.with_name(suffix_path.name.removesuffix(SWAP_FILE_SUFFIX))
                    volume.replace(suffix_path, unswapped)
            log.info("Completed the swap of cleaned segment %d of %s-%d", base, local.topic, local.partition)
        for leftover in glob(volume, local.dir, f"*{SWAP_FILE_SUFFIX}"):
            volume.unlink(leftover)
