"""Kafka's checkpoint files (server-common CheckpointFile, storage's OffsetCheckpointFile and
LeaderEpochCheckpointFile) and the clean shutdown marker (CleanShutdownFileHandler).

A checkpoint is text: a version line (0), a count line, then one entry a line::

    0
    2
    my-topic 0 42        (offset checkpoints: topic partition offset)
    my-topic 1 7

or ``epoch start_offset`` lines in a partition's ``leader-epoch-checkpoint``. It is written to
``<name>.tmp``, flushed, fsynced and renamed over the old file, then the directory is fsynced, so
a crash leaves either the old file or the new one, never a mix.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Generic, NamedTuple, TypeVar

from kafkalite.storage.files import CLEAN_SHUTDOWN_FILE_NAME
from kafkalite.storage.volume import FILES, Volume

T = TypeVar("T")

CURRENT_VERSION = 0


class CheckpointError(OSError):
    """A checkpoint file that cannot be read (wrong version, malformed line, wrong count)."""


class TopicPartition(NamedTuple):
    topic: str
    partition: int


class EpochEntry(NamedTuple):
    epoch: int
    start_offset: int


class CheckpointFile(Generic[T]):
    """One checkpoint file of entries of type T; ``to_line`` and ``from_line`` are Kafka's
    EntryFormatter (``from_line`` returns None for a malformed line)."""

    def __init__(
        self,
        path: Path,
        to_line: Callable[[T], str],
        from_line: Callable[[str], T | None],
        version: int = CURRENT_VERSION,
        volume: Volume = FILES,
    ) -> None:
        self.path = path
        self.volume = volume
        self.version = version
        self._to_line = to_line
        self._from_line = from_line
        # One writer at a time (Kafka's CheckpointFile.write is synchronized): two writers of the
        # same file through the same ``.tmp`` would rename it from under each other.
        self._lock = threading.Lock()

    def write(self, entries: Iterable[T], sync: bool = True) -> None:
        items = list(entries)
        text = "".join([f"{self.version}\n{len(items)}\n", *(self._to_line(e) + "\n" for e in items)])
        with self._lock:
            self.volume.write_atomically(self.path, text.encode(), sync)

    def read(self) -> list[T]:
        """The entries; an absent or empty file has none (Kafka creates it empty)."""
        try:
            lines = self.volume.read_bytes(self.path).decode("utf-8").splitlines()
        except FileNotFoundError:
            return []
        if not lines:
            return []
        if self._int(lines[0]) != self.version:
            raise CheckpointError(
                f"Unrecognised version:{lines[0]}, expected version: {self.version} "
                f"in checkpoint file at: {self.path}"
            )
        if len(lines) < 2:
            return []
        expected = self._int(lines[1])
        entries = []
        for line in lines[2:]:
            entry = self._from_line(line)
            if entry is None:
                raise self._malformed(line)
            entries.append(entry)
        if len(entries) != expected:
            raise CheckpointError(
                f"Expected [{expected}] entries in checkpoint file [{self.path}], "
                f"but found only [{len(entries)}]"
            )
        return entries

    def _int(self, line: str) -> int:
        try:
            return int(line)
        except ValueError:
            raise self._malformed(line) from None

    def _malformed(self, line: str) -> CheckpointError:
        return CheckpointError(f"Malformed line in checkpoint file [{self.path}]: {line}")


def _offset_from_line(line: str) -> tuple[TopicPartition, int] | None:
    parts = line.split()
    if len(parts) != 3:
        return None
    try:
        return TopicPartition(parts[0], int(parts[1])), int(parts[2])
    except ValueError:
        return None


class OffsetCheckpointFile:
    """A log dir's map of partition to offset: ``recovery-point-offset-checkpoint``,
    ``log-start-offset-checkpoint``, ``replication-offset-checkpoint``."""

    def __init__(self, path: Path, volume: Volume = FILES) -> None:
        self._file: CheckpointFile[tuple[TopicPartition, int]] = CheckpointFile(
            path, lambda e: f"{e[0].topic} {e[0].partition} {e[1]}", _offset_from_line, volume=volume
        )

    @property
    def path(self) -> Path:
        return self._file.path

    def write(self, offsets: Mapping[TopicPartition, int]) -> None:
        self._file.write(offsets.items())

    def read(self) -> dict[TopicPartition, int]:
        return dict(self._file.read())


def _epoch_from_line(line: str) -> EpochEntry | None:
    parts = line.split()
    if len(parts) != 2:
        return None
    try:
        return EpochEntry(int(parts[0]), int(parts[1]))
    except ValueError:
        return None


class LeaderEpochCheckpointFile:
    """A partition's ``leader-epoch-checkpoint``: ``epoch start_offset`` lines."""

    def __init__(self, path: Path, volume: Volume = FILES) -> None:
        self._file: CheckpointFile[EpochEntry] = CheckpointFile(
            path, lambda e: f"{e.epoch} {e.start_offset}", _epoch_from_line, volume=volume
        )

    @property
    def path(self) -> Path:
        return self._file.path

    def write(self, entries: Iterable[EpochEntry], sync: bool = True) -> None:
        self._file.write(entries, sync)

    def read(self) -> list[EpochEntry]:
        return self._file.read()


class CleanShutdownFile:
    """A log dir's ``.kafka_cleanshutdown`` marker: written (fsynced) after every log was flushed
    and checkpointed at shutdown, deleted once the logs are loaded at start-up. Its content is
    Kafka's JSON, ``{"version":0,"brokerEpoch":N}``."""

    def __init__(self, log_dir: Path, volume: Volume = FILES) -> None:
        self.path = log_dir / CLEAN_SHUTDOWN_FILE_NAME
        self.volume = volume

    def exists(self) -> bool:
        return self.volume.exists(self.path)

    def write(self, broker_epoch: int = -1) -> None:
        text = json.dumps({"version": CURRENT_VERSION, "brokerEpoch": broker_epoch}, separators=(",", ":"))
        self.volume.write_atomically(self.path, text.encode())

    def read(self) -> int | None:
        """The broker epoch it holds, or None when absent or unreadable."""
        try:
            epoch = json.loads(self.volume.read_bytes(self.path))["brokerEpoch"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return epoch if isinstance(epoch, int) else None

    def delete(self) -> None:
        self.volume.unlink(self.path)
