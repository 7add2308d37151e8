"""ReplicatedLog: the metadata log of one Raft node (Kafka's ReplicatedLog/KafkaMetadataLog),
its epoch cache and its snapshots.

``directory`` None keeps everything in memory. Otherwise ``directory`` is the
``__cluster_metadata-0`` directory and holds ``entries.log`` (one frame per entry: size u32,
CRC-32 u32 of the rest, offset i64, epoch i32, control u8, data), the snapshots (snapshots.py) and
the quorum-state file (quorum_state.py, its own store). Appends and truncations are fsynced before
they return, so whatever a node answered after them survives a crash. The epoch cache (Kafka's
leader-epoch-checkpoint) is rebuilt from the frames when the log is opened, as Kafka's recovery
rebuilds it; a torn last frame is cut off.

Offsets are exclusive where Kafka's are: ``end_offset`` is the next offset to write."""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Sequence
from enum import Enum
from pathlib import Path

from kafkalite.raft import snapshots
from kafkalite.raft.messages import Entry, OffsetAndEpoch
from kafkalite.raft.snapshots import SnapshotStore
from kafkalite.storage.volume import FILES, Volume, pwrite_all

ENTRIES_FILE = "entries.log"
_FRAME = struct.Struct(">IIqiB")  # size (of what follows the crc), crc, offset, epoch, control
_BODY = struct.Struct(">qiB")


class ValidKind(Enum):
    VALID = "valid"
    DIVERGING = "diverging"
    SNAPSHOT = "snapshot"


def _frame(entry: Entry) -> bytes:
    body = _BODY.pack(entry.offset, entry.epoch, 1 if entry.control else 0) + entry.data
    return struct.pack(">II", len(body), zlib.crc32(body)) + body


def _parse(data: bytes) -> tuple[list[Entry], list[int], int]:
    """The entries of a file's bytes, their positions, and the length of the valid prefix."""
    entries: list[Entry] = []
    positions: list[int] = []
    pos = 0
    while pos + _FRAME.size <= len(data):
        size, crc = struct.unpack_from(">II", data, pos)
        end = pos + 8 + size
        if size < _BODY.size or end > len(data) or zlib.crc32(data[pos + 8:end]) != crc:
            break
        offset, epoch, control = _BODY.unpack_from(data, pos + 8)
        if entries and (offset != entries[-1].offset + 1 or epoch < entries[-1].epoch):
            break
        entries.append(Entry(offset, epoch, bytes(data[pos + 8 + _BODY.size:end]), bool(control)))
        positions.append(pos)
        pos = end
    return entries, positions, pos


class ReplicatedLog:
    def __init__(self, directory: str | None, volume: Volume = FILES) -> None:
        self.directory = directory
        self._volume = volume
        self._path = Path(directory) / ENTRIES_FILE if directory is not None else None
        self._snapshots = SnapshotStore(directory, volume)
        self._entries: list[Entry] = []
        self._positions: list[int] = []  # byte position of each entry's frame in the file
        self._file_size = 0
        self._start = 0
        self._epochs: list[tuple[int, int]] = []  # (epoch, start offset), ascending
        if self._path is not None:
            self._load()
        self._trim_to_latest_snapshot()

    # ----- reading -----------------------------------------------------------------------------
    @property
    def start_offset(self) -> int:
        return self._start

    @property
    def end_offset(self) -> int:
        return self._start + len(self._entries)

    @property
    def last_epoch(self) -> int:
        """The epoch of the last entry; with no entry the latest snapshot's epoch, else 0."""
        if self._entries:
            return self._entries[-1].epoch
        latest = self.latest_snapshot_id()
        return latest.epoch if latest is not None else 0

    def end_offset_and_epoch(self) -> OffsetAndEpoch:
        return OffsetAndEpoch(self.end_offset, self.last_epoch)

    def entry(self, offset: int) -> Entry | None:
        if self._start <= offset < self.end_offset:
            return self._entries[offset - self._start]
        return None

    def read(self, start: int, max_entries: int | None = None, max_bytes: int | None = None,
             end: int | None = None) -> list[Entry]:
        """Entries from ``start`` (>= start_offset) up to ``end`` (default: the end), at most
        ``max_entries`` and ``max_bytes`` of data, but at least one entry when there is one."""
        if start < self._start:
            raise ValueError(f"offset {start} is below the log start offset {self._start}")
        stop = self.end_offset if end is None else min(end, self.end_offset)
        out: list[Entry] = []
        size = 0
        for offset in range(start, stop):
            e = self._entries[offset - self._start]
            if out and ((max_entries is not None and len(out) >= max_entries)
                        or (max_bytes is not None and size + len(e.data) > max_bytes)):
                break
            out.append(e)
            size += len(e.data)
        return out

    # ----- epochs (Kafka's LeaderEpochFileCache.endOffsetFor and KafkaMetadataLog) ----------------
    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        """The end offset of the largest epoch <= ``epoch`` in this log, with that epoch."""
        result = self._cache_end_offset_for(epoch)
        if result is None:
            return self.end_offset_and_epoch()
        earliest = self.earliest_snapshot_id()
        if earliest is not None and result.offset == earliest.offset and result.epoch < earliest.epoch:
            return earliest  # older than any epoch of the log: the snapshot at its start
        return result

    def _cache_end_offset_for(self, epoch: int) -> OffsetAndEpoch | None:
        if not self._epochs or epoch < 0:
            return None
        latest_epoch = self._epochs[-1][0]
        if epoch == latest_epoch:
            return OffsetAndEpoch(self.end_offset, epoch)
        higher = next((e for e in self._epochs if e[0] > epoch), None)
        if higher is None:
            return None
        floor = None
        for e in self._epochs:
            if e[0] <= epoch:
                floor = e
        return OffsetAndEpoch(higher[1], epoch if floor is None else floor[0])

    def validate(self, offset: int, epoch: int) -> tuple[ValidKind, OffsetAndEpoch]:
        """ReplicatedLog.validateOffsetAndEpoch: is a fetch at ``offset`` after ``epoch`` on this
        log (VALID), past where the fetcher's log diverges (DIVERGING with the end offset and
        epoch to truncate to), or below what this log keeps (SNAPSHOT with the latest id)?"""
        latest = self.latest_snapshot_id()
        if offset == 0 and latest is not None and latest.offset > 0:
            return ValidKind.SNAPSHOT, latest  # a new replica starts from the snapshot
        if self._start == 0 and offset == 0:
            return ValidKind.VALID, OffsetAndEpoch(0, 0)
        earliest = self.earliest_snapshot_id()
        if earliest is not None and latest is not None and (
                offset < self._start or (offset == self._start and epoch != earliest.epoch)
                or epoch < earliest.epoch):
            return ValidKind.SNAPSHOT, latest
        end = self.end_offset_for_epoch(epoch)
        if end.epoch != epoch or end.offset < offset:
            return ValidKind.DIVERGING, end
        return ValidKind.VALID, OffsetAndEpoch(offset, epoch)

    # ----- writing -----------------------------------------------------------------------------
    def append(self, entries: Sequence[Entry]) -> None:
        """Append entries that continue the log (contiguous offsets from end_offset, epochs not
        going back), durably."""
        if not entries:
            return
        expected, last = self.end_offset, self.last_epoch
        for e in entries:
            if e.offset != expected or e.epoch < last:
                raise ValueError(f"entry {e.offset}@{e.epoch} does not continue the log at "
                                 f"{expected}@{last}")
            expected, last = expected + 1, e.epoch
        if self._path is not None:
            frames = [_frame(e) for e in entries]
            fd = self._volume.open_fd(self._path)
            try:
                pwrite_all(fd, b"".join(frames), self._file_size)
                os.fsync(fd)
            finally:
                os.close(fd)
            for f in frames:
                self._positions.append(self._file_size)
                self._file_size += len(f)
        for e in entries:
            if not self._epochs or self._epochs[-1][0] < e.epoch:
                self._epochs.append((e.epoch, e.offset))
            self._entries.append(e)

    def truncate_to(self, offset: int) -> None:
        """Drop the entries at ``offset`` and above (all of them when ``offset`` <= start)."""
        if offset >= self.end_offset:
            return
        keep = max(0, offset - self._start)
        if self._path is not None:
            size = self._positions[keep] if keep < len(self._positions) else self._file_size
            fd = self._volume.open_fd(self._path)
            try:
                os.ftruncate(fd, size)
                os.fsync(fd)
            finally:
                os.close(fd)
            del self._positions[keep:]
            self._file_size = size
        del self._entries[keep:]
        new_end = self.end_offset
        self._epochs = [e for e in self._epochs if e[1] < new_end]

    def truncation_offset(self, end: OffsetAndEpoch) -> int:
        """ReplicatedLog.truncateToEndOffset's offset: where this log ends for the epoch a leader's
        DivergingEpoch names, no further than the leader's end offset for it."""
        if end.epoch == 0:
            return min(end.offset, self.end_offset)
        local = self.end_offset_for_epoch(end.epoch)
        return min(local.offset, end.offset) if local.epoch == end.epoch else local.offset

    def truncate_to_end_offset(self, end: OffsetAndEpoch) -> int:
        """Truncate at ``truncation_offset(end)``; the offset truncated to."""
        offset = self.truncation_offset(end)
        self.truncate_to(offset)
        return offset

    # ----- snapshots ---------------------------------------------------------------------------
    def latest_snapshot_id(self) -> OffsetAndEpoch | None:
        ids = self._snapshots.ids()
        return ids[-1] if ids else None

    def earliest_snapshot_id(self) -> OffsetAndEpoch | None:
        ids = self._snapshots.ids()
        return ids[0] if ids else None

    def read_snapshot(self, snapshot_id: OffsetAndEpoch) -> bytes | None:
        """A snapshot's bytes as FetchSnapshot sends them (header and payload)."""
        return self._snapshots.read(snapshot_id)

    def latest_snapshot(self) -> tuple[OffsetAndEpoch, bytes] | None:
        """The newest snapshot's id and payload."""
        latest = self.latest_snapshot_id()
        if latest is None:
            return None
        data = self._snapshots.read(latest)
        return None if data is None else (latest, snapshots.decode(data))

    def create_snapshot(self, snapshot_id: OffsetAndEpoch, payload: bytes) -> None:
        """Store a snapshot of everything below ``snapshot_id.offset`` (its epoch: that of the entry
        before it), then drop the entries it covers. An id not newer than the latest is ignored."""
        latest = self.latest_snapshot_id()
        if latest is not None and snapshot_id.offset <= latest.offset:
            return
        if not self._start < snapshot_id.offset <= self.end_offset:
            raise ValueError(f"snapshot end offset {snapshot_id.offset} outside the log "
                             f"({self._start}, {self.end_offset}]")
        before = self._entries[snapshot_id.offset - 1 - self._start]
        if before.epoch != snapshot_id.epoch:
            raise ValueError(f"snapshot epoch {snapshot_id.epoch} is not that of offset "
                             f"{before.offset} ({before.epoch})")
        self._snapshots.write(snapshot_id, snapshots.encode(payload))
        self._trim_to_latest_snapshot()

    def install_snapshot(self, snapshot_id: OffsetAndEpoch, data: bytes) -> None:
        """A snapshot fetched from the leader (its bytes, checked here): the log restarts after it."""
        snapshots.decode(data)
        self._snapshots.write(snapshot_id, data)
        self.truncate_to(self._start)
        self._start = snapshot_id.offset
        self._rewrite([], [])
        self._trim_to_latest_snapshot()

    # ----- internals ---------------------------------------------------------------------------
    def _load(self) -> None:
        assert self._path is not None
        try:
            data = self._volume.read_bytes(self._path)
        except FileNotFoundError:
            data = b""
        entries, positions, valid = _parse(data)
        if valid < len(data):  # a torn or corrupt tail: cut it off, as Kafka's recovery does
            fd = self._volume.open_fd(self._path)
            try:
                os.ftruncate(fd, valid)
                os.fsync(fd)
            finally:
                os.close(fd)
        self._entries, self._positions, self._file_size = entries, positions, valid
        if entries:
            self._start = entries[0].offset
        else:
            latest = self.latest_snapshot_id()
            self._start = latest.offset if latest is not None else 0
        self._epochs = []
        for e in entries:
            if not self._epochs or self._epochs[-1][0] < e.epoch:
                self._epochs.append((e.epoch, e.offset))

    def _trim_to_latest_snapshot(self) -> None:
        """Drop the entries below the latest snapshot and the older snapshots."""
        latest = self.latest_snapshot_id()
        if latest is None:
            return
        if latest.offset > self._start:
            if latest.offset >= self.end_offset:
                keep_entries: list[Entry] = []
            else:
                keep_entries = self._entries[latest.offset - self._start:]
            self._start = latest.offset
            self._rewrite_entries(keep_entries)
        for old in self._snapshots.ids()[:-1]:
            self._snapshots.delete(old)

    def _rewrite_entries(self, entries: list[Entry]) -> None:
        frames = [_frame(e) for e in entries]
        positions, pos = [], 0
        for f in frames:
            positions.append(pos)
            pos += len(f)
        self._rewrite(entries, positions, b"".join(frames))

    def _rewrite(self, entries: list[Entry], positions: list[int], data: bytes = b"") -> None:
        if self._path is not None:
            self._volume.write_atomically(self._path, data)
        self._entries, self._positions, self._file_size = entries, positions, len(data)
        self._epochs = []
        for e in entries:
            if not self._epochs or self._epochs[-1][0] < e.epoch:
                self._epochs.append((e.epoch, e.offset))
        if entries:
            self._epochs[0] = (self._epochs[0][0], self._start)
