"""A segment's aborted transactions in Kafka's ``.txnindex`` format (TransactionIndex.java,
AbortedTxn.java): a sequence of 34-byte big-endian entries,

    version int16 (0) | producerId int64 | firstOffset int64 | lastOffset int64 | lastStableOffset int64

one for each transaction whose abort marker the segment holds, in the order of their markers, so
``lastOffset`` (the marker's offset) grows from entry to entry. A read_committed Fetch collects the
entries overlapping what it returns (``collect_aborted``) and sends their producer ids and first
offsets, so that the consumer drops the aborted records.

As in Kafka, the file is the truth and is created by the first append: most segments hold no
aborted transaction and have no ``.txnindex``. Reads go to the file each time (nothing is held in
memory but the last entry's offset); a torn last entry (an unclean stop during an append) is never
read, the next append writes over it, and ``sanity_check`` reports it. Unlike Kafka, which forgets
the last offset when it reopens a file, the last entry is read back before the next append, so
that ``lastOffset`` keeps growing across a restart.

Each LogSegment (segment.py) has one: the log appends an entry when an abort marker it writes
ends a transaction with data (leader and follower alike, and recovery when it rebuilds it), with
the producer state's last stable offset then; truncation, renames and deletion follow the segment.
"""

from __future__ import annotations

import os
import struct
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from kafkalite.storage.errors import CorruptAbortedTxnError, CorruptIndexError, InvalidOffsetError
from kafkalite.storage.volume import FILES, Volume, pwrite_all

CURRENT_VERSION = 0  # AbortedTxn.CURRENT_VERSION
_ENTRY = struct.Struct(">hqqqq")
ENTRY_SIZE = _ENTRY.size  # AbortedTxn.TOTAL_SIZE, 34
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True)
class AbortedTxn:
    """One aborted transaction: its producer, its first offset and the offset of its abort marker
    (``last_offset``), and the partition's last stable offset when it was aborted (the first offset
    of the earliest transaction still open then, or the marker's offset + 1)."""

    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int

    def __post_init__(self) -> None:
        for name in ("producer_id", "first_offset", "last_offset", "last_stable_offset"):
            value = getattr(self, name)
            if not isinstance(value, int) or not _INT64_MIN <= value <= _INT64_MAX:
                raise ValueError(f"AbortedTxn {name} must be an int64, not {value!r}")

    def encode(self) -> bytes:
        """The 34-byte entry, version 0."""
        return _ENTRY.pack(
            CURRENT_VERSION, self.producer_id, self.first_offset, self.last_offset, self.last_stable_offset
        )

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview, offset: int = 0) -> AbortedTxn:
        """The entry at ``offset`` in ``data``; CorruptAbortedTxnError if fewer than 34 bytes are
        there or its version is not 0."""
        if offset < 0 or len(data) - offset < ENTRY_SIZE:
            raise CorruptAbortedTxnError(
                f"An aborted transaction entry is {ENTRY_SIZE} bytes, found {max(len(data) - offset, 0)}"
            )
        version, producer_id, first, last, lso = _ENTRY.unpack_from(data, offset)
        if version != CURRENT_VERSION:
            raise CorruptAbortedTxnError(
                f"Unexpected aborted transaction version {version}, current version is {CURRENT_VERSION}"
            )
        return cls(producer_id, first, last, lso)


class TxnIndexSearchResult(NamedTuple):
    """The aborted transactions of a segment overlapping a fetch range, and whether the search is
    complete: when not, the transactions aborted in the next segments may overlap the range too."""

    aborted_transactions: list[AbortedTxn]
    is_complete: bool


def _pread_fully(fd: int, length: int) -> bytes:
    chunks, done = [], 0
    while done < length:
        chunk = os.pread(fd, length - done, done)
        if not chunk:
            break  # truncated meanwhile: what was read is what there is
        chunks.append(chunk)
        done += len(chunk)
    return b"".join(chunks)


class TransactionIndex:
    """The ``.txnindex`` of the segment starting at ``base_offset``, through ``volume``."""

    def __init__(self, path: Path, base_offset: int, volume: Volume = FILES) -> None:
        self.path = path
        self.base_offset = base_offset
        self.volume = volume
        self._lock = threading.Lock()  # the descriptor, opened on first use
        self._fd: int | None = None
        self._last_offset: int | None = None
        self._last_offset_known = False  # read back from the file on the first append

    # -- the file ----------------------------------------------------------------------------------

    def _channel(self, create: bool) -> int | None:
        """The open descriptor; None if the file does not exist and ``create`` is False."""
        with self._lock:
            if self._fd is None:
                try:
                    self._fd = self.volume.open_fd(self.path, create=create)
                except FileNotFoundError:
                    if create:
                        raise
                    return None
            return self._fd

    def _size(self) -> int:
        fd = self._channel(create=False)
        return 0 if fd is None else os.fstat(fd).st_size

    def _read(self) -> bytes:
        """The file's whole entries (a torn last one left out)."""
        fd = self._channel(create=False)
        if fd is None:
            return b""
        size = os.fstat(fd).st_size
        data = _pread_fully(fd, size - size % ENTRY_SIZE)
        return data[: len(data) - len(data) % ENTRY_SIZE]

    def _entries_with_positions(self) -> Iterator[tuple[AbortedTxn, int]]:
        data = self._read()
        for position in range(0, len(data), ENTRY_SIZE):
            try:
                yield AbortedTxn.decode(data, position), position
            except CorruptAbortedTxnError as e:
                raise CorruptAbortedTxnError(f"{e} at position {position} of {self.path}") from None

    # -- state -------------------------------------------------------------------------------------

    @property
    def entries(self) -> int:
        """How many whole entries the file holds."""
        return self._size() // ENTRY_SIZE

    @property
    def last_offset(self) -> int | None:
        """The last entry's ``last_offset``, or None when there is none."""
        if not self._last_offset_known:
            fd = self._channel(create=False)
            whole = self._size() // ENTRY_SIZE * ENTRY_SIZE
            if fd is None or whole == 0:
                self._last_offset = None
            else:
                entry = os.pread(fd, ENTRY_SIZE, whole - ENTRY_SIZE)
                try:
                    self._last_offset = AbortedTxn.decode(entry).last_offset
                except CorruptAbortedTxnError as e:
                    raise CorruptAbortedTxnError(f"{e} at the end of {self.path}") from None
            self._last_offset_known = True
        return self._last_offset

    def all_aborted_txns(self) -> list[AbortedTxn]:
        return [txn for txn, _ in self._entries_with_positions()]

    def sanity_check(self) -> None:
        """CorruptIndexError if the file cannot be right: not whole entries, an entry of another
        version, or one that ends before the segment's base offset (Kafka's sanityCheck)."""
        size = self._size()
        if size % ENTRY_SIZE:
            raise CorruptIndexError(
                f"Transaction index file {self.path} is corrupt, found {size} bytes which is not a "
                f"multiple of {ENTRY_SIZE}"
            )
        for txn, _ in self._entries_with_positions():
            if txn.last_offset < self.base_offset:
                raise CorruptIndexError(
                    f"Last offset of aborted transaction {txn} in index {self.path} is less than start "
                    f"offset {self.base_offset}"
                )

    # -- entries -----------------------------------------------------------------------------------

    def append(self, aborted: AbortedTxn) -> None:
        """Add an entry after the last; InvalidOffsetError unless its ``last_offset`` is above the
        last entry's (Kafka requires them to grow strictly: each is a different marker's offset)."""
        last = self.last_offset
        if last is not None and aborted.last_offset <= last:
            raise InvalidOffsetError(
                f"The last offset of appended transactions must increase sequentially, but "
                f"{aborted.last_offset} is not greater than current last offset {last} of index {self.path}"
            )
        fd = self._channel(create=True)
        assert fd is not None
        size = os.fstat(fd).st_size
        end = size - size % ENTRY_SIZE
        if end != size:
            os.ftruncate(fd, end)  # a torn entry, never read: written over
        pwrite_all(fd, aborted.encode(), end)
        self._last_offset = aborted.last_offset
        self._last_offset_known = True

    def collect_aborted(self, fetch_offset: int, upper_bound_offset: int) -> TxnIndexSearchResult:
        """The entries overlapping [fetch_offset, upper_bound_offset): ``last_offset >= fetch_offset``
        and ``first_offset < upper_bound_offset``; complete at the first entry whose last stable
        offset reaches the upper bound, since no transaction aborted later began below it
        (Kafka's collectAbortedTxns)."""
        # Every read_committed fetch reads the file from its start (as Kafka's): the entries are
        # unpacked in one C loop and only those overlapping become AbortedTxn objects.
        found = []
        for position, (version, producer_id, first, last, lso) in enumerate(_ENTRY.iter_unpack(self._read())):
            if version != CURRENT_VERSION:
                raise CorruptAbortedTxnError(
                    f"Unexpected aborted transaction version {version}, current version is "
                    f"{CURRENT_VERSION} at position {position * ENTRY_SIZE} of {self.path}"
                )
            if last >= fetch_offset and first < upper_bound_offset:
                found.append(AbortedTxn(producer_id, first, last, lso))
            if lso >= upper_bound_offset:
                return TxnIndexSearchResult(found, True)
        return TxnIndexSearchResult(found, False)

    def truncate_to(self, offset: int) -> None:
        """Remove the entries whose ``last_offset`` is at or above ``offset`` (with those after)."""
        previous: int | None = None
        for txn, position in self._entries_with_positions():
            if txn.last_offset >= offset:
                fd = self._channel(create=False)
                if fd is not None:
                    os.ftruncate(fd, position)
                self._last_offset, self._last_offset_known = previous, True
                return
            previous = txn.last_offset

    def reset(self) -> None:
        """Remove every entry (before the segment is recovered); an absent file stays absent."""
        fd = self._channel(create=False)
        if fd is not None:
            os.ftruncate(fd, 0)
        self._last_offset, self._last_offset_known = None, True

    # -- files -------------------------------------------------------------------------------------

    def flush(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.fsync(self._fd)

    def rename(self, path: Path) -> None:
        """Rename the file, if there is one yet (Kafka's renameTo); an open descriptor stays valid."""
        if self.volume.exists(self.path):
            self.volume.replace(self.path, path)
        self.path = path

    def close(self) -> None:
        """Close the descriptor; a later read or append opens the file again."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def close_handler(self) -> None:
        """The same as ``close``: nothing of this index waits to be written (named as the other
        indexes' for a segment's closeHandlers)."""
        self.close()

    def delete(self) -> None:
        """Close and remove the file, if there is one."""
        self.close()
        self.volume.unlink(self.path)
        self._last_offset, self._last_offset_known = None, True

    def __repr__(self) -> str:
        return f"TransactionIndex(path={self.path}, baseOffset={self.base_offset})"
