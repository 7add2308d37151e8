"""Where a log's files live: the one interface every file operation of the storage goes through,
on disk (``FileVolume``, the default) or in memory (``MemoryVolume``, log.storage=memory).

Paths stay ``pathlib.Path`` values (the names Kafka gives a log's files, files.py); only what
touches them goes through a Volume. Both hand out real file descriptors, so what the log does
with one (``pread``, ``pwrite``, ``ftruncate``, ``fsync``, ``mmap`` of an index, ``sendfile`` of a
Fetch's records from a FileSlice) is the same code on either.

The memory volume keeps each file's bytes in an anonymous memory file (``os.memfd_create``;
where that does not exist, an already-unlinked temporary file) and its names in a dict: nothing
is created on disk, and nothing is left behind when the process ends, however it ends. An open
descriptor keeps a file's bytes after the file is removed, as on disk. The volume outlives a
broker that uses it: a broker restarted in the same process with the same volume finds its logs.
"""

from __future__ import annotations

import fnmatch
import mmap
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Protocol


class Volume(Protocol):
    def open_fd(self, path: Path, create: bool = True) -> int:
        """A read-write descriptor of ``path`` (created if ``create``), which the caller closes.
        FileNotFoundError if it does not exist and ``create`` is False."""

    def read_bytes(self, path: Path) -> bytes: ...

    def write_atomically(self, path: Path, data: bytes, sync: bool = True) -> None:
        """Replace ``path`` by ``data`` through ``path.tmp`` and a rename."""

    def exists(self, path: Path) -> bool: ...

    def is_dir(self, path: Path) -> bool: ...

    def children(self, directory: Path) -> list[Path]: ...

    def mkdir(self, directory: Path) -> None:
        """With its parents; nothing if it exists."""

    def unlink(self, path: Path) -> None:
        """Remove a file; nothing if it is absent."""

    def replace(self, source: Path, target: Path) -> None:
        """Rename a file or a directory (over ``target``)."""

    def rmtree(self, directory: Path) -> None:
        """Remove a directory and all below it; nothing if absent."""

    def size(self, path: Path) -> int: ...

    def mtime_ms(self, path: Path) -> int: ...

    def set_mtime_ms(self, path: Path, ms: int) -> None: ...

    def fsync_dir(self, directory: Path) -> None:
        """Make renames and removals in ``directory`` durable."""

    def map_read(self, path: Path) -> mmap.mmap:
        """A read-only map of a non-empty file."""


def pwrite_all(fd: int, data: bytes | bytearray | memoryview, position: int) -> None:
    """All of ``data`` at ``position`` (pwrite may write less than asked). The view is released
    even when a write fails, so that the caller's bytearray can be resized afterwards."""
    with memoryview(data) as view:
        written = 0
        while written < len(view):
            written += os.pwrite(fd, view[written:], position + written)


def glob(volume: Volume, directory: Path, pattern: str) -> list[Path]:
    """The children of ``directory`` whose names match ``pattern`` (fnmatch), sorted."""
    return sorted(p for p in volume.children(directory) if fnmatch.fnmatchcase(p.name, pattern))


def _temp_name(path: Path) -> Path:
    return path.with_name(path.name + ".tmp")


class FileVolume:
    """Files in directories on disk."""

    def open_fd(self, path: Path, create: bool = True) -> int:
        return os.open(path, os.O_RDWR | (os.O_CREAT if create else 0), 0o644)

    def read_bytes(self, path: Path) -> bytes:
        return Path(path).read_bytes()

    def write_atomically(self, path: Path, data: bytes, sync: bool = True) -> None:
        tmp = _temp_name(path)
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            if sync:
                os.fsync(f.fileno())
        os.replace(tmp, path)
        if sync:
            self.fsync_dir(path.parent)

    def exists(self, path: Path) -> bool:
        return os.path.exists(path)

    def is_dir(self, path: Path) -> bool:
        return os.path.isdir(path)

    def children(self, directory: Path) -> list[Path]:
        return list(Path(directory).iterdir())

    def mkdir(self, directory: Path) -> None:
        os.makedirs(directory, exist_ok=True)

    def unlink(self, path: Path) -> None:
        Path(path).unlink(missing_ok=True)

    def replace(self, source: Path, target: Path) -> None:
        os.replace(source, target)

    def rmtree(self, directory: Path) -> None:
        shutil.rmtree(directory, ignore_errors=True)

    def size(self, path: Path) -> int:
        return os.stat(path).st_size

    def mtime_ms(self, path: Path) -> int:
        return os.stat(path).st_mtime_ns // 1_000_000

    def set_mtime_ms(self, path: Path, ms: int) -> None:
        os.utime(path, (ms / 1000, ms / 1000))

    def fsync_dir(self, directory: Path) -> None:
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def map_read(self, path: Path) -> mmap.mmap:
        with open(path, "rb") as f:
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


FILES = FileVolume()  # what the storage uses unless given another volume


def _anonymous_file(name: str) -> int:
    if hasattr(os, "memfd_create"):
        return os.memfd_create(name[-200:] or "kafkalite", os.MFD_CLOEXEC)
    f = tempfile.TemporaryFile()  # already unlinked: nothing to leave behind either
    fd = os.dup(f.fileno())
    f.close()
    return fd


class MemoryVolume:
    """Files in memory: names in a dict, bytes in anonymous memory files."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._files: dict[str, int] = {}  # path -> the memory file's own descriptor
        self._dirs: set[str] = set()

    @staticmethod
    def _key(path: Path | str) -> str:
        return os.path.normpath(os.fspath(path))

    def open_fd(self, path: Path, create: bool = True) -> int:
        key = self._key(path)
        with self._lock:
            fd = self._files.get(key)
            if fd is None:
                if not create:
                    raise FileNotFoundError(2, "No such file", key)
                parent = os.path.dirname(key)
                if parent not in self._dirs:
                    raise FileNotFoundError(2, "No such directory", parent)
                fd = self._files[key] = _anonymous_file(os.path.basename(key))
            return os.dup(fd)

    def read_bytes(self, path: Path) -> bytes:
        fd = self.open_fd(path, create=False)
        try:
            chunks, pos = [], 0
            while chunk := os.pread(fd, 1 << 20, pos):
                chunks.append(chunk)
                pos += len(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def write_atomically(self, path: Path, data: bytes, sync: bool = True) -> None:
        tmp = _temp_name(path)
        self.unlink(tmp)
        fd = self.open_fd(tmp)
        try:
            pwrite_all(fd, data, 0)
        finally:
            os.close(fd)
        self.replace(tmp, path)

    def exists(self, path: Path) -> bool:
        key = self._key(path)
        with self._lock:
            return key in self._files or key in self._dirs

    def is_dir(self, path: Path) -> bool:
        with self._lock:
            return self._key(path) in self._dirs

    def children(self, directory: Path) -> list[Path]:
        key = self._key(directory)
        with self._lock:
            if key not in self._dirs:
                raise FileNotFoundError(2, "No such directory", key)
            names = [k for k in (*self._files, *self._dirs) if os.path.dirname(k) == key and k != key]
        return [Path(directory) / os.path.basename(k) for k in names]

    def mkdir(self, directory: Path) -> None:
        key = self._key(directory)
        with self._lock:
            while key not in self._dirs:
                self._dirs.add(key)
                parent = os.path.dirname(key)
                if parent == key:
                    break
                key = parent

    def unlink(self, path: Path) -> None:
        key = self._key(path)
        with self._lock:
            fd = self._files.pop(key, None)
        if fd is not None:
            os.close(fd)  # descriptors still open elsewhere keep the bytes

    def replace(self, source: Path, target: Path) -> None:
        src, dst = self._key(source), self._key(target)
        with self._lock:
            if src in self._files:
                old = self._files.pop(dst, None)
                self._files[dst] = self._files.pop(src)
                if old is not None:
                    os.close(old)
                return
            if src not in self._dirs:
                raise FileNotFoundError(2, "No such file or directory", src)
            prefix = src + os.sep
            for k in [k for k in self._files if k.startswith(prefix)]:
                self._files[dst + k[len(src):]] = self._files.pop(k)
            for k in [k for k in self._dirs if k == src or k.startswith(prefix)]:
                self._dirs.discard(k)
                self._dirs.add(dst + k[len(src):])

    def rmtree(self, directory: Path) -> None:
        key = self._key(directory)
        prefix = key + os.sep
        with self._lock:
            gone = [k for k in self._files if k.startswith(prefix)]
            fds = [self._files.pop(k) for k in gone]
            self._dirs -= {k for k in self._dirs if k == key or k.startswith(prefix)}
        for fd in fds:
            os.close(fd)

    def _fd(self, path: Path) -> int:
        key = self._key(path)
        fd = self._files.get(key)
        if fd is None:
            raise FileNotFoundError(2, "No such file", key)
        return fd

    def size(self, path: Path) -> int:
        with self._lock:
            return os.fstat(self._fd(path)).st_size

    def mtime_ms(self, path: Path) -> int:
        with self._lock:  # a memory file's times move with its writes, as a file's do
            return os.fstat(self._fd(path)).st_mtime_ns // 1_000_000

    def set_mtime_ms(self, path: Path, ms: int) -> None:
        with self._lock:
            os.utime(self._fd(path), (ms / 1000, ms / 1000))

    def fsync_dir(self, directory: Path) -> None:
        pass  # names in memory are as durable as they get

    def map_read(self, path: Path) -> mmap.mmap:
        fd = self.open_fd(path, create=False)
        try:
            return mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        finally:
            os.close(fd)

    def __del__(self) -> None:
        try:
            self.close()  # the memory files' own descriptors, which nothing else would close
        except Exception:  # at interpreter exit, or after a failed __init__
            pass

    def close(self) -> None:
        """Forget every file (the descriptors still open elsewhere keep theirs)."""
        with self._lock:
            fds, self._files = list(self._files.values()), {}
            self._dirs.clear()
        for fd in fds:
            os.close(fd)
