"""Snapshot files (KIP-630): one per snapshot id, ``<endOffset:020d>-<epoch:010d>.checkpoint`` in
the metadata partition's directory, written as ``<name>.checkpoint.part``, fsynced and renamed
(Kafka's FileRawSnapshotWriter.freeze), so a crash leaves no half snapshot under the final name.

A snapshot's bytes (what FetchSnapshot moves in chunks, ``size`` = their length) are a small
header then the state machine's payload: magic ``KLSN``, a format version (int16 0) and the
payload's CRC-32 (zlib), so a follower checks what it assembled from chunks before loading it.
``directory`` None keeps them in memory."""

from __future__ import annotations

import os
import re
import struct
import zlib
from pathlib import Path

from kafkalite.raft.messages import OffsetAndEpoch
from kafkalite.storage.volume import FILES, Volume, glob, pwrite_all

SUFFIX = ".checkpoint"
PART_SUFFIX = ".checkpoint.part"
_HEADER = struct.Struct(">4shI")
_MAGIC = b"KLSN"
_NAME = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")


class CorruptSnapshotError(ValueError):
    pass


def file_name(snapshot_id: OffsetAndEpoch) -> str:
    return f"{snapshot_id.offset:020d}-{snapshot_id.epoch:010d}{SUFFIX}"


def encode(payload: bytes) -> bytes:
    return _HEADER.pack(_MAGIC, 0, zlib.crc32(payload)) + payload


def decode(data: bytes) -> bytes:
    """The payload of a snapshot's bytes; CorruptSnapshotError when they do not check out."""
    if len(data) < _HEADER.size:
        raise CorruptSnapshotError("snapshot shorter than its header")
    magic, version, crc = _HEADER.unpack_from(data, 0)
    payload = data[_HEADER.size:]
    if magic != _MAGIC or version != 0 or zlib.crc32(payload) != crc:
        raise CorruptSnapshotError("snapshot header or checksum does not match")
    return payload


class SnapshotStore:
    """The snapshots of one log, oldest first."""

    def __init__(self, directory: str | None, volume: Volume = FILES) -> None:
        self._dir = Path(directory) if directory is not None else None
        self._volume = volume
        self._memory: dict[OffsetAndEpoch, bytes] = {}
        if self._dir is not None:
            volume.mkdir(self._dir)
            for part in glob(volume, self._dir, "*" + PART_SUFFIX):
                volume.unlink(part)  # a write cut short by a crash

    def ids(self) -> list[OffsetAndEpoch]:
        if self._dir is None:
            return sorted(self._memory, key=lambda s: (s.offset, s.epoch))
        out = []
        for path in glob(self._volume, self._dir, "*" + SUFFIX):
            m = _NAME.match(path.name)
            if m:
                out.append(OffsetAndEpoch(int(m.group(1)), int(m.group(2))))
        return sorted(out, key=lambda s: (s.offset, s.epoch))

    def write(self, snapshot_id: OffsetAndEpoch, data: bytes) -> None:
        """Store a snapshot's bytes (header included) under its id."""
        if self._dir is None:
            self._memory[snapshot_id] = data
            return
        final = self._dir / file_name(snapshot_id)
        part = final.with_name(final.name + ".part")
        self._volume.unlink(part)
        fd = self._volume.open_fd(part)
        try:
            pwrite_all(fd, data, 0)
            os.fsync(fd)
        finally:
            os.close(fd)
        self._volume.replace(part, final)
        self._volume.fsync_dir(self._dir)

    def read(self, snapshot_id: OffsetAndEpoch) -> bytes | None:
        if self._dir is None:
            return self._memory.get(snapshot_id)
        try:
            return self._volume.read_bytes(self._dir / file_name(snapshot_id))
        except FileNotFoundError:
            return None

    def delete(self, snapshot_id: OffsetAndEpoch) -> None:
        if self._dir is None:
            self._memory.pop(snapshot_id, None)
            return
        self._volume.unlink(self._dir / file_name(snapshot_id))
