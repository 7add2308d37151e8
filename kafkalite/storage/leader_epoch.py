"""A partition's leader epoch cache (LeaderEpochFileCache.java, KIP-101): for each leader epoch
that wrote to the log, the offset of its first batch, kept in ``leader-epoch-checkpoint``.

The leader adds an entry when it appends the first batch of a new epoch; followers take the epochs
stamped on the batches they copy. OffsetForLeaderEpoch answers from ``end_offset_for``: the end
of an epoch is the start of the next larger one, or the log end offset for the latest. Truncating
the log truncates the cache from the end; deleting its head (retention, DeleteRecords) truncates it
from the start. Every change is written to the checkpoint at once, as Kafka's ``assign`` does (Kafka
writes truncations in the background; the few a follower makes are not worth a thread here).
"""

from __future__ import annotations

import bisect
import logging
import threading

from kafkalite.storage.checkpoint import EpochEntry, LeaderEpochCheckpointFile

log = logging.getLogger("kafkalite.storage.leader_epoch")

UNDEFINED_EPOCH = -1  # OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH
UNDEFINED_EPOCH_OFFSET = -1


class LeaderEpochFileCache:
    """Entries ordered by epoch, with start offsets that grow with the epoch."""

    def __init__(self, checkpoint: LeaderEpochCheckpointFile, name: str = "") -> None:
        self.checkpoint = checkpoint
        self._name = name
        self._lock = threading.Lock()
        self._epochs: list[EpochEntry] = []
        for entry in checkpoint.read():
            self._assign(entry)

    # -- reads -----------------------------------------------------------------------------------

    def entries(self) -> list[EpochEntry]:
        return list(self._epochs)

    @property
    def latest_entry(self) -> EpochEntry | None:
        return self._epochs[-1] if self._epochs else None

    @property
    def latest_epoch(self) -> int | None:
        return self._epochs[-1].epoch if self._epochs else None

    @property
    def earliest_entry(self) -> EpochEntry | None:
        return self._epochs[0] if self._epochs else None

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """(epoch, end offset) for OffsetForLeaderEpoch: the largest epoch <= the requested one and
        the start offset of the first epoch above it, or the log end offset when the requested
        epoch is the latest; (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET) when unknown."""
        with self._lock:
            epochs = self._epochs
            if requested_epoch == UNDEFINED_EPOCH or not epochs:
                return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
            if epochs[-1].epoch == requested_epoch:
                return requested_epoch, log_end_offset
            higher = bisect.bisect_right(epochs, requested_epoch, key=lambda e: e.epoch)
            if higher == len(epochs):
                return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
            if higher == 0:
                # Older than every epoch kept: its data is gone; the follower restarts from the
                # first epoch we know.
                return requested_epoch, epochs[0].start_offset
            return epochs[higher - 1].epoch, epochs[higher].start_offset

    def start_offset_of(self, epoch: int) -> int | None:
        """Where ``epoch`` starts, if this cache has it."""
        for entry in reversed(self._epochs):
            if entry.epoch == epoch:
                return entry.start_offset
        return None

    def epoch_for_offset(self, offset: int) -> int | None:
        """The epoch whose range holds ``offset``."""
        i = bisect.bisect_right(self._epochs, offset, key=lambda e: e.start_offset)
        return self._epochs[i - 1].epoch if i else None

    # -- changes ---------------------------------------------------------------------------------

    def assign(self, epoch: int, start_offset: int) -> None:
        """Record that ``epoch`` starts at ``start_offset`` unless it is already the latest epoch
        (with a start no later); entries it contradicts (an epoch not below it or a start not
        below its start) are removed first."""
        with self._lock:
            if self._assign(EpochEntry(epoch, start_offset)):
                self._write()

    def _assign(self, entry: EpochEntry) -> bool:
        if entry.epoch < 0 or entry.start_offset < 0:
            raise ValueError(f"Received invalid partition leader epoch entry {entry}")
        latest = self._epochs[-1] if self._epochs else None
        if latest is not None and latest.epoch == entry.epoch and entry.start_offset >= latest.start_offset:
            return False
        removed = []
        while self._epochs and (
            self._epochs[-1].epoch >= entry.epoch or self._epochs[-1].start_offset >= entry.start_offset
        ):
            removed.append(self._epochs.pop())
        if len(removed) > 1 or (removed and removed[0].start_offset != entry.start_offset):
            log.warning(
                "[LeaderEpochCache %s] New epoch entry %s caused truncation of conflicting entries %s.",
                self._name,
                entry,
                removed,
            )
        self._epochs.append(entry)
        return True

    def truncate_from_end(self, end_offset: int) -> None:
        """Remove the entries starting at or after ``end_offset`` (after the log is truncated)."""
        with self._lock:
            if end_offset < 0 or not self._epochs or self._epochs[-1].start_offset < end_offset:
                return
            while self._epochs and self._epochs[-1].start_offset >= end_offset:
                self._epochs.pop()
            self._write()

    def truncate_from_start(self, start_offset: int) -> None:
        """Drop the entries wholly below ``start_offset``; the last epoch starting at or below it
        now starts there (the log start offset moved past its first batches)."""
        with self._lock:
            i = bisect.bisect_right(self._epochs, start_offset, key=lambda e: e.start_offset)
            if i == 0:
                return
            kept = EpochEntry(self._epochs[i - 1].epoch, start_offset)
            self._epochs[:i] = [kept]
            self._write()

    def clear(self) -> None:
        with self._lock:
            self._epochs.clear()
            self._write()

    def _write(self) -> None:
        self.checkpoint.write(self._epochs)
