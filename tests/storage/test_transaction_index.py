"""The aborted-transaction index (``.txnindex``): Kafka's 34-byte entries byte for byte, a state
machine (append / truncate / reset / collect / reopen) against a model, the list of entries, on
files and in memory, and the typed errors for what cannot be right."""

from __future__ import annotations

import os
import shutil
import struct
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from kafkalite.storage.errors import CorruptAbortedTxnError, CorruptIndexError, InvalidOffsetError
from kafkalite.storage.files import TXN_INDEX_FILE_SUFFIX, transaction_index_file
from kafkalite.storage.transaction_index import (
    ENTRY_SIZE,
    AbortedTxn,
    TransactionIndex,
    TxnIndexSearchResult,
)
from kafkalite.storage.volume import FILES, MemoryVolume, Volume

MEMORY_ROOT = Path("/kafkalite-memory-test-txnindex")  # never created: a memory volume's names only


@pytest.fixture(params=["files", "memory"])
def where(request, tmp_path):
    """(volume, directory) on disk and in memory."""
    if request.param == "files":
        yield FILES, tmp_path
    else:
        volume = MemoryVolume()
        volume.mkdir(MEMORY_ROOT)
        yield volume, MEMORY_ROOT
        volume.close()


def _write(volume: Volume, path: Path, data: bytes) -> None:
    fd = volume.open_fd(path)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)
    finally:
        os.close(fd)


# -- the format --------------------------------------------------------------------------------------


def test_the_file_name_is_kafkas(tmp_path):
    assert TXN_INDEX_FILE_SUFFIX == ".txnindex"
    assert transaction_index_file(tmp_path, 100) == tmp_path / "00000000000000000100.txnindex"
    assert transaction_index_file(tmp_path, 100, ".deleted").name == "00000000000000000100.txnindex.deleted"


def test_an_entry_is_kafkas_34_big_endian_bytes():
    txn = AbortedTxn(producer_id=0x0102030405060708, first_offset=100, last_offset=0x1_0000_0000,
                     last_stable_offset=2**63 - 1)
    expected = (
        bytes.fromhex("0000")  # version 0
        + bytes.fromhex("0102030405060708")  # producer id
        + bytes.fromhex("0000000000000064")  # first offset 100
        + bytes.fromhex("0000000100000000")  # last offset 2^32
        + bytes.fromhex("7fffffffffffffff")  # last stable offset
    )
    assert ENTRY_SIZE == 34 and len(expected) == 34
    assert txn.encode() == expected
    assert AbortedTxn.decode(expected) == txn
    assert AbortedTxn.decode(b"\xff" * 3 + expected, 3) == txn
    assert AbortedTxn(-1, 0, 0, 0).encode()[2:10] == b"\xff" * 8  # signed, as Java's longs


@given(st.tuples(*[st.integers(-(2**63), 2**63 - 1)] * 4))
def test_entries_round_trip(fields):
    txn = AbortedTxn(*fields)
    assert AbortedTxn.decode(txn.encode()) == txn
    assert txn.encode() == struct.pack(">hqqqq", 0, *fields)


def test_the_index_file_holds_the_entries_in_order(where):
    volume, directory = where
    path = transaction_index_file(directory, 0)
    index = TransactionIndex(path, 0, volume=volume)
    assert not volume.exists(path)  # created by the first append, as Kafka's
    a, b = AbortedTxn(7, 0, 10, 11), AbortedTxn(8, 5, 20, 5)
    index.append(a)
    index.append(b)
    index.flush()
    assert volume.read_bytes(path) == a.encode() + b.encode()
    assert index.entries == 2 and index.last_offset == 20
    index.close()


# -- what Kafka's TransactionIndexTest checks -------------------------------------------------------


def test_collect_aborted_is_kafkas_search(where):
    volume, directory = where
    index = TransactionIndex(transaction_index_file(directory, 0), 0, volume=volume)
    txns = [AbortedTxn(0, 0, 10, 11), AbortedTxn(1, 5, 15, 13), AbortedTxn(2, 18, 35, 25),
            AbortedTxn(3, 32, 50, 40)]
    for txn in txns:
        index.append(txn)
    assert index.collect_aborted(0, 32) == TxnIndexSearchResult(txns[:3], True)  # 40 >= 32
    assert index.collect_aborted(0, 100) == TxnIndexSearchResult(txns, False)  # none reaches 100
    assert index.collect_aborted(16, 18) == TxnIndexSearchResult([], True)  # 25 >= 18 at the third
    assert index.collect_aborted(16, 19) == TxnIndexSearchResult([txns[2]], True)
    assert index.collect_aborted(36, 45) == TxnIndexSearchResult([txns[3]], False)
    index.close()


def test_truncate_to_drops_the_entries_ending_at_or_after(where):
    volume, directory = where
    index = TransactionIndex(transaction_index_file(directory, 0), 0, volume=volume)
    txns = [AbortedTxn(0, 0, 2, 3), AbortedTxn(1, 5, 6, 20), AbortedTxn(2, 15, 16, 20)]
    for txn in txns:
        index.append(txn)
    index.truncate_to(16)
    assert index.all_aborted_txns() == txns[:2] and index.last_offset == 6
    index.truncate_to(100)  # nothing at or after: nothing removed
    assert index.all_aborted_txns() == txns[:2]
    index.truncate_to(3)
    assert index.all_aborted_txns() == txns[:1] and index.last_offset == 2
    index.append(AbortedTxn(3, 4, 5, 6))  # only above what is left
    index.reset()
    assert index.all_aborted_txns() == [] and index.last_offset is None
    index.append(AbortedTxn(4, 0, 1, 2))
    assert index.all_aborted_txns() == [AbortedTxn(4, 0, 1, 2)]
    index.close()


def test_rename_and_delete(where):
    volume, directory = where
    path = transaction_index_file(directory, 10)
    index = TransactionIndex(path, 10, volume=volume)
    index.rename(path.with_name(path.name + ".deleted"))  # no file yet: only the name moves
    assert not volume.exists(path) and not volume.exists(index.path)
    index.append(AbortedTxn(1, 10, 12, 13))
    assert volume.exists(index.path)
    index.rename(path)
    assert volume.exists(path) and not volume.exists(path.with_name(path.name + ".deleted"))
    index.append(AbortedTxn(1, 14, 15, 16))  # the descriptor open before the rename still writes it
    assert volume.read_bytes(path) == AbortedTxn(1, 10, 12, 13).encode() + AbortedTxn(1, 14, 15, 16).encode()
    index.delete()
    assert not volume.exists(path)
    assert index.all_aborted_txns() == [] and index.collect_aborted(0, 100) == TxnIndexSearchResult([], False)
    index.delete()  # absent: nothing


def test_a_reopened_index_keeps_last_offset_growing(where):
    volume, directory = where
    path = transaction_index_file(directory, 0)
    index = TransactionIndex(path, 0, volume=volume)
    index.append(AbortedTxn(1, 0, 10, 11))
    index.close()
    index = TransactionIndex(path, 0, volume=volume)
    with pytest.raises(InvalidOffsetError):
        index.append(AbortedTxn(2, 3, 9, 11))
    index.append(AbortedTxn(2, 3, 12, 13))
    assert [t.last_offset for t in index.all_aborted_txns()] == [10, 12]
    index.close()


# -- what cannot be right: typed errors ----------------------------------------------------------------


def test_short_and_wrong_version_entries_are_corrupt():
    entry = AbortedTxn(1, 2, 3, 4).encode()
    for short in (b"", entry[:33], entry[:1]):
        with pytest.raises(CorruptAbortedTxnError, match="34 bytes"):
            AbortedTxn.decode(short)
    with pytest.raises(CorruptAbortedTxnError):
        AbortedTxn.decode(entry, 1)
    for version in (1, -1, 0x7FFF):
        with pytest.raises(CorruptAbortedTxnError, match=f"version {version}"):
            AbortedTxn.decode(struct.pack(">h", version) + entry[2:])
    assert issubclass(CorruptAbortedTxnError, CorruptIndexError)  # the loader recovers the segment


def test_fields_must_be_int64():
    for bad in (2**63, -(2**63) - 1):
        with pytest.raises(ValueError, match="int64"):
            AbortedTxn(bad, 0, 0, 0)
    with pytest.raises(ValueError, match="int64"):
        AbortedTxn(0, 0, "1", 0)  # type: ignore[arg-type]


def test_last_offsets_must_grow(where):
    volume, directory = where
    index = TransactionIndex(transaction_index_file(directory, 0), 0, volume=volume)
    index.append(AbortedTxn(1, 0, 10, 11))
    for last in (9, 10):  # below, and equal: Kafka requires them to grow strictly
        with pytest.raises(InvalidOffsetError, match="must increase"):
            index.append(AbortedTxn(2, 0, last, 11))
    assert index.all_aborted_txns() == [AbortedTxn(1, 0, 10, 11)]
    index.close()


def test_a_torn_entry_is_never_read_and_fails_the_sanity_check(where):
    volume, directory = where
    path = transaction_index_file(directory, 0)
    a, b = AbortedTxn(1, 0, 10, 11), AbortedTxn(2, 5, 20, 21)
    _write(volume, path, a.encode() + b.encode()[:20])  # an unclean stop during the second append
    index = TransactionIndex(path, 0, volume=volume)
    assert index.all_aborted_txns() == [a] and index.entries == 1
    assert index.collect_aborted(0, 100) == TxnIndexSearchResult([a], False)
    with pytest.raises(CorruptIndexError, match="not a multiple of 34"):
        index.sanity_check()
    index.append(b)  # written over the torn bytes
    assert volume.read_bytes(path) == a.encode() + b.encode()
    index.sanity_check()
    index.close()


def test_a_wrong_version_in_the_file_is_corrupt(where):
    volume, directory = where
    path = transaction_index_file(directory, 0)
    good, bad = AbortedTxn(1, 0, 10, 11).encode(), b"\x00\x01" + AbortedTxn(2, 5, 20, 21).encode()[2:]
    _write(volume, path, good + bad)
    index = TransactionIndex(path, 0, volume=volume)  # opening reads nothing
    for call in (index.sanity_check, index.all_aborted_txns, lambda: index.collect_aborted(0, 100),
                 lambda: index.append(AbortedTxn(3, 30, 30, 31)), lambda: index.truncate_to(15)):
        with pytest.raises(CorruptAbortedTxnError, match="version 1"):
            call()
    # What comes before the bad entry is still read, as Kafka's iterator does.
    assert index.collect_aborted(0, 11) == TxnIndexSearchResult([AbortedTxn(1, 0, 10, 11)], True)
    index.truncate_to(5)
    assert index.all_aborted_txns() == []
    index.close()


def test_an_entry_before_the_base_offset_fails_the_sanity_check(where):
    volume, directory = where
    path = transaction_index_file(directory, 100)
    _write(volume, path, AbortedTxn(1, 90, 99, 100).encode())
    index = TransactionIndex(path, 100, volume=volume)
    with pytest.raises(CorruptIndexError, match="less than start offset 100"):
        index.sanity_check()
    index.reset()
    index.sanity_check()
    index.append(AbortedTxn(1, 90, 100, 101))  # a transaction may begin in an earlier segment
    index.sanity_check()
    index.close()


def test_an_absent_file_is_an_empty_index(where):
    volume, directory = where
    index = TransactionIndex(transaction_index_file(directory, 0), 0, volume=volume)
    index.sanity_check()
    index.truncate_to(0)
    index.reset()
    index.flush()
    assert index.entries == 0 and index.last_offset is None
    assert index.collect_aborted(0, 10) == TxnIndexSearchResult([], False)
    assert not volume.exists(index.path)
    index.close()


# -- the model ---------------------------------------------------------------------------------------

BASE = 100


class TxnIndexMachine(RuleBasedStateMachine):
    """Appends, truncations, resets, searches over random ranges and reopens (after a clean close or
    just dropping the descriptor) against the list of entries the index should hold."""

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="kafkalite-txnindex-model-"))
        self.volume = self.make_volume()
        self.volume.mkdir(self.root)
        self.path = transaction_index_file(self.root, BASE)
        self.index = TransactionIndex(self.path, BASE, volume=self.volume)
        self.model: list[AbortedTxn] = []

    def make_volume(self) -> Volume:
        return FILES

    def teardown(self) -> None:
        self.index.close()
        shutil.rmtree(self.root, ignore_errors=True)

    @property
    def last(self) -> int:
        return self.model[-1].last_offset if self.model else BASE - 1

    @rule(producer=st.integers(0, 5), gap=st.integers(1, 20), length=st.integers(0, 40),
          lso_back=st.integers(0, 30))
    def append(self, producer: int, gap: int, length: int, lso_back: int) -> None:
        last = self.last + gap
        txn = AbortedTxn(producer, last - length, last, max(last + 1 - lso_back, BASE))
        self.index.append(txn)
        self.model.append(txn)

    @rule(data=st.data())
    def append_out_of_order(self, data: st.DataObject) -> None:
        if not self.model:
            return
        last = data.draw(st.integers(BASE - 5, self.last))
        with pytest.raises(InvalidOffsetError):
            self.index.append(AbortedTxn(9, last, last, last + 1))

    @rule(data=st.data())
    def truncate(self, data: st.DataObject) -> None:
        offset = data.draw(st.integers(BASE - 5, self.last + 5))
        self.index.truncate_to(offset)
        self.model = [t for t in self.model if t.last_offset < offset]

    @rule()
    def reset(self) -> None:
        self.index.reset()
        self.model = []

    @rule(data=st.data())
    def collect(self, data: st.DataObject) -> None:
        # The entries' own offsets, where the search's comparisons turn, as often as any other.
        edges = sorted({o + d for t in self.model for o in (t.first_offset, t.last_offset,
                                                             t.last_stable_offset) for d in (-1, 0, 1)})
        start = data.draw(st.one_of(st.integers(0, self.last + 10), st.sampled_from(edges or [0])))
        end = data.draw(st.one_of(st.integers(start, self.last + 20),
                                  st.sampled_from([e for e in edges if e >= start] or [start])))
        expected, complete = [], False
        for t in self.model:
            if t.last_offset >= start and t.first_offset < end:
                expected.append(t)
            if t.last_stable_offset >= end:
                complete = True
                break
        assert self.index.collect_aborted(start, end) == TxnIndexSearchResult(expected, complete)

    @rule(clean=st.booleans(), rename=st.booleans())
    def reopen(self, clean: bool, rename: bool) -> None:
        if clean:
            self.index.flush()
            self.index.close()
        else:
            self.index.close_handler()
        if rename:  # as a segment's files are renamed .swap and back
            self.index.rename(self.path.with_name(self.path.name + ".swap"))
            self.index.rename(self.path)
        self.index = TransactionIndex(self.path, BASE, volume=self.volume)

    @invariant()
    def agrees(self) -> None:
        assert self.index.all_aborted_txns() == self.model
        assert self.index.last_offset == (self.model[-1].last_offset if self.model else None)
        assert self.index.entries == len(self.model)
        if self.volume.exists(self.path):
            assert self.volume.read_bytes(self.path) == b"".join(t.encode() for t in self.model)
        else:
            assert not self.model
        self.index.sanity_check()


TxnIndexMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
TestTxnIndexModel = TxnIndexMachine.TestCase


class MemoryTxnIndexMachine(TxnIndexMachine):
    """The same machine on a memory volume: the same model holds, and nothing reaches the disk."""

    def make_volume(self) -> Volume:
        return MemoryVolume()

    def teardown(self) -> None:
        self.index.close()
        assert isinstance(self.volume, MemoryVolume)
        self.volume.close()
        assert os.listdir(self.root) == []  # the directory mkdtemp made stays empty
        shutil.rmtree(self.root, ignore_errors=True)


MemoryTxnIndexMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
TestMemoryTxnIndexModel = MemoryTxnIndexMachine.TestCase
