"""A segment's sparse indexes in Kafka's file formats (OffsetIndex.java, TimeIndex.java,
AbstractIndex.java), all big-endian:

- ``.index``: 8-byte entries, a 4-byte offset relative to the segment's base offset and the 4-byte
  position in the ``.log`` file of the batch (or appended chunk of batches) it points into;
- ``.timeindex``: 12-byte entries, an 8-byte timestamp and a 4-byte relative offset, meaning "every
  record after this offset has a timestamp above this one"; appended only when the timestamp grows.

Lookups find the largest entry at or below a target by binary search: O(log n), nothing parsed
ahead. Unlike Kafka, files are not preallocated (``segment.index.bytes`` still caps the entries, so
a full index still rolls the segment): the active segment's index keeps its bytes in a bytearray
and appends to the file; a rolled segment's index is memory-mapped read-only on its first lookup, so
memory stays bounded by the active segments however long the log grows. No checksum: after an
unclean shutdown the indexes of the segments being recovered are rebuilt from the log.
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar, NamedTuple

from kafkalite.storage.errors import CorruptIndexError, InvalidOffsetError
from kafkalite.storage.volume import FILES, Volume

NO_TIMESTAMP = -1  # RecordBatch.NO_TIMESTAMP
_INT32_MAX = 2**31 - 1

_Buffer = bytearray | mmap.mmap | bytes
_Field = Callable[[_Buffer, int], int]

_OFFSET_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")


class OffsetPosition(NamedTuple):
    offset: int
    position: int


class TimestampOffset(NamedTuple):
    timestamp: int
    offset: int


class _Index:
    """What both indexes share: the file, the entries (in a bytearray while writable, mmapped when
    read-only), binary search and truncation."""

    entry_size: ClassVar[int]

    def __init__(self, path: Path, base_offset: int, max_index_size: int, writable: bool = True,
                 volume: Volume = FILES) -> None:
        if max_index_size < self.entry_size:
            raise ValueError(f"Invalid max index size: {max_index_size}")
        self.path = path
        self.base_offset = base_offset
        self.max_entries = max_index_size // self.entry_size
        self._fd: int | None = None
        self._data: _Buffer | None = None  # None: read-only and not mapped yet
        self._map: mmap.mmap | None = None
        self.volume = volume
        os.close(volume.open_fd(path))  # created if absent
        self._length = volume.size(path)
        self._entries = self._length // self.entry_size
        if writable:
            self.make_writable()

    # -- state -------------------------------------------------------------------------------

    @property
    def entries(self) -> int:
        return self._entries

    @property
    def writable(self) -> bool:
        return self._fd is not None

    def is_full(self) -> bool:
        return self._entries >= self.max_entries

    def size_in_bytes(self) -> int:
        return self._entries * self.entry_size

    def can_append_offset(self, offset: int) -> bool:
        """Whether ``offset`` fits a 4-byte offset relative to the base offset."""
        return 0 <= offset - self.base_offset <= _INT32_MAX

    def relative_offset(self, offset: int) -> int:
        if not self.can_append_offset(offset):
            raise InvalidOffsetError(f"Integer overflow for offset: {offset} ({self.path})")
        return offset - self.base_offset

    def sanity_check(self) -> None:
        """Raise CorruptIndexError if the file cannot be a valid index (Kafka's sanityCheck)."""
        self.check_size()

    def check_size(self) -> None:
        """Raise CorruptIndexError if the file does not hold whole entries."""
        if self._length % self.entry_size:
            raise CorruptIndexError(
                f"Index file {self.path} is corrupt, found {self._length} bytes which is neither "
                f"positive nor a multiple of {self.entry_size}"
            )

    # -- modes ---------------------------------------------------------------------------------

    def make_writable(self) -> None:
        """Hold the entries in memory and the file open for appends (the active segment's index)."""
        if self._fd is not None:
            return
        self._unmap()
        self._fd = self.volume.open_fd(self.path)
        data = bytearray(os.pread(self._fd, self._length, 0))
        # A torn last entry (unclean stop during an append) is dropped, never read.
        self._entries = len(data) // self.entry_size
        del data[self._entries * self.entry_size :]
        self._data = data

    def make_read_only(self) -> None:
        """Release the in-memory copy and trim the file to its entries (a rolled segment's index);
        it is mapped again on the next lookup."""
        if self._fd is None:
            return
        os.ftruncate(self._fd, self.size_in_bytes())
        self._length = self.size_in_bytes()
        os.close(self._fd)
        self._fd = None
        self._data = None

    def _buffer(self) -> _Buffer:
        if self._data is None:
            if self._length == 0:
                self._data = b""  # an empty file cannot be mapped
            else:
                self._map = self.volume.map_read(self.path)
                self._data = self._map
        return self._data

    def _unmap(self) -> None:
        if self._map is not None:
            self._map.close()
            self._map = None
        self._data = None

    # -- entries ---------------------------------------------------------------------------------

    def _append_entry(self, entry: bytes) -> None:
        if self._fd is None:
            self.make_writable()
        assert self._fd is not None and isinstance(self._data, bytearray)
        os.pwrite(self._fd, entry, self.size_in_bytes())
        self._data += entry
        self._entries += 1
        self._length = self.size_in_bytes()

    def _largest_lower_bound_slot(self, target: int, field: _Field) -> int:
        """The last slot whose field is <= target, or -1 (fields grow with the slot)."""
        data = self._buffer()
        if self._entries == 0 or field(data, 0) > target:
            return -1
        lo, hi = 0, self._entries - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if field(data, mid) <= target:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def truncate_to_entries(self, entries: int) -> None:
        self.make_writable()
        assert self._fd is not None and isinstance(self._data, bytearray)
        entries = min(entries, self._entries)
        self._entries = entries
        del self._data[entries * self.entry_size :]
        os.ftruncate(self._fd, entries * self.entry_size)
        self._length = entries * self.entry_size

    def reset(self) -> None:
        """Remove every entry (before a rebuild)."""
        self.truncate_to_entries(0)

    def _truncate_to_offset(self, offset: int, relative_field: _Field) -> None:
        """Remove the entries at or above ``offset`` (Kafka's three cases: none at or below it,
        one exactly at it, or one below it)."""
        slot = self._largest_lower_bound_slot(offset - self.base_offset, relative_field)
        if slot < 0:
            entries = 0
        elif relative_field(self._buffer(), slot) == offset - self.base_offset:
            entries = slot
        else:
            entries = slot + 1
        self.truncate_to_entries(entries)

    # -- files -----------------------------------------------------------------------------------

    def flush(self) -> None:
        if self._fd is not None:
            os.fsync(self._fd)

    def rename(self, path: Path) -> None:
        self.volume.replace(self.path, path)
        self.path = path

    def close(self) -> None:
        self.make_read_only()
        self._unmap()

    def close_handler(self) -> None:
        """Close the file without trimming it (a disk failure, or a crash in tests)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._unmap()

    def delete(self) -> None:
        self.close()
        self.volume.unlink(self.path)


def _offset_relative(data: _Buffer, slot: int) -> int:
    return int(_I32.unpack_from(data, slot * 8)[0])


def _offset_position(data: _Buffer, slot: int) -> int:
    return int(_I32.unpack_from(data, slot * 8 + 4)[0])


def _time_timestamp(data: _Buffer, slot: int) -> int:
    return int(_I64.unpack_from(data, slot * 12)[0])


def _time_relative(data: _Buffer, slot: int) -> int:
    return int(_I32.unpack_from(data, slot * 12 + 8)[0])


class OffsetIndex(_Index):
    """Offset to file position (OffsetIndex.java)."""

    entry_size = 8

    def __init__(self, path: Path, base_offset: int, max_index_size: int, writable: bool = True,
                 volume: Volume = FILES) -> None:
        super().__init__(path, base_offset, max_index_size, writable, volume)

    def sanity_check(self) -> None:
        super().sanity_check()
        if self._entries and self.last_offset < self.base_offset:
            raise CorruptIndexError(
                f"Corrupt index found, index file {self.path} has non-zero size but the last offset "
                f"is {self.last_offset} which is less than the base offset {self.base_offset}"
            )

    @property
    def last_offset(self) -> int:
        """The last entry's offset, or the base offset when empty."""
        return self.entry(self._entries - 1).offset if self._entries else self.base_offset

    def entry(self, n: int) -> OffsetPosition:
        if not 0 <= n < self._entries:
            raise IndexError(
                f"Attempt to fetch the {n}th entry from index {self.path}, which has size {self._entries}"
            )
        rel, pos = _OFFSET_ENTRY.unpack_from(self._buffer(), n * 8)
        return OffsetPosition(self.base_offset + rel, pos)

    def lookup(self, target_offset: int) -> OffsetPosition:
        """The entry with the largest offset <= target_offset, or (base offset, 0)."""
        slot = self._largest_lower_bound_slot(target_offset - self.base_offset, _offset_relative)
        return OffsetPosition(self.base_offset, 0) if slot < 0 else self.entry(slot)

    def lookup_position(self, position: int) -> OffsetPosition:
        """The entry with the largest position <= ``position``, or (base offset, 0): a batch
        boundary that a read of whole batches up to ``position`` may jump to."""
        slot = self._largest_lower_bound_slot(position, _offset_position)
        return OffsetPosition(self.base_offset, 0) if slot < 0 else self.entry(slot)

    def append(self, offset: int, position: int) -> None:
        if self.is_full():
            raise InvalidOffsetError(f"Attempt to append to a full index (size = {self._entries}).")
        if self._entries and offset <= self.last_offset:
            raise InvalidOffsetError(
                f"Attempt to append an offset {offset} to position {self._entries} no larger than "
                f"the last offset appended ({self.last_offset}) to {self.path}"
            )
        self._append_entry(_OFFSET_ENTRY.pack(self.relative_offset(offset), position))

    def truncate_to(self, offset: int) -> None:
        """Remove the entries for offsets >= ``offset``."""
        self._truncate_to_offset(offset, _offset_relative)


class TimeIndex(_Index):
    """Timestamp to offset (TimeIndex.java)."""

    entry_size = 12

    def __init__(self, path: Path, base_offset: int, max_index_size: int, writable: bool = True,
                 volume: Volume = FILES) -> None:
        super().__init__(path, base_offset, max_index_size, writable, volume)

    def is_full(self) -> bool:
        # Kafka keeps the last slot for the entry a segment gets when it is rolled or closed.
        return self._entries >= self.max_entries - 1

    def sanity_check(self) -> None:
        super().sanity_check()
        if self._entries:
            last = self.last_entry
            if last.timestamp < self.entry(0).timestamp or last.offset < self.base_offset:
                raise CorruptIndexError(f"Corrupt time index found, time index file ({self.path})")

    @property
    def last_entry(self) -> TimestampOffset:
        """The last entry, or (NO_TIMESTAMP, base offset) when empty."""
        return (
            self.entry(self._entries - 1)
            if self._entries
            else TimestampOffset(NO_TIMESTAMP, self.base_offset)
        )

    def entry(self, n: int) -> TimestampOffset:
        if not 0 <= n < self._entries:
            raise IndexError(
                f"Attempt to fetch the {n}th entry from time index {self.path} which has size {self._entries}"
            )
        ts, rel = _TIME_ENTRY.unpack_from(self._buffer(), n * 12)
        return TimestampOffset(ts, self.base_offset + rel)

    def lookup(self, target_timestamp: int) -> TimestampOffset:
        """The entry with the largest timestamp <= target_timestamp, or (NO_TIMESTAMP, base offset)."""
        slot = self._largest_lower_bound_slot(target_timestamp, _time_timestamp)
        return TimestampOffset(NO_TIMESTAMP, self.base_offset) if slot < 0 else self.entry(slot)

    def maybe_append(self, timestamp: int, offset: int, skip_full_check: bool = False) -> None:
        """Append (timestamp, offset) if the timestamp is above the last entry's."""
        if not skip_full_check and self.is_full():
            raise InvalidOffsetError(f"Attempt to append to a full time index (size = {self._entries}).")
        last = self.last_entry
        if self._entries and offset < last.offset:
            raise InvalidOffsetError(
                f"Attempt to append an offset ({offset}) to slot {self._entries} no larger than the "
                f"last offset appended ({last.offset}) to {self.path}"
            )
        if self._entries and timestamp < last.timestamp:
            raise InvalidOffsetError(
                f"Attempt to append a timestamp ({timestamp}) to slot {self._entries} no larger than "
                f"the last timestamp appended ({last.timestamp}) to {self.path}"
            )
        if timestamp > last.timestamp:
            self._append_entry(_TIME_ENTRY.pack(timestamp, self.relative_offset(offset)))

    def truncate_to(self, offset: int) -> None:
        """Remove the entries for offsets >= ``offset``."""
        self._truncate_to_offset(offset, _time_relative)
