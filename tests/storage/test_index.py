from __future__ import annotations

import bisect
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalite.storage.errors import CorruptIndexError, InvalidOffsetError
from kafkalite.storage.index import NO_TIMESTAMP, OffsetIndex, OffsetPosition, TimeIndex, TimestampOffset

MAX = 10 * 1024 * 1024


def test_offset_index_file_is_kafkas_big_endian_8_byte_entries(tmp_path):
    index = OffsetIndex(tmp_path / "00000000000000000100.index", 100, MAX)
    index.append(105, 4096)
    index.append(100 + 2**31 - 1, 2**31 - 1)  # the largest relative offset and position
    index.close()
    assert (tmp_path / "00000000000000000100.index").read_bytes() == (
        bytes.fromhex("00000005 00001000") + bytes.fromhex("7fffffff 7fffffff")
    )


def test_time_index_file_is_kafkas_big_endian_12_byte_entries(tmp_path):
    index = TimeIndex(tmp_path / "00000000000000000100.timeindex", 100, MAX)
    index.maybe_append(1_700_000_000_000, 107)
    index.close()
    assert (tmp_path / "00000000000000000100.timeindex").read_bytes() == struct.pack(
        ">qi", 1_700_000_000_000, 7
    ) == bytes.fromhex("0000018bcfe56800 00000007")


def test_offset_lookup_is_largest_entry_at_or_below(tmp_path):
    index = OffsetIndex(tmp_path / "0.index", 50, MAX)
    assert index.lookup(60) == OffsetPosition(50, 0)  # empty: the base offset at position 0
    for offset, position in [(55, 100), (60, 200), (70, 300)]:
        index.append(offset, position)
    assert index.lookup(49) == OffsetPosition(50, 0)
    assert index.lookup(54) == OffsetPosition(50, 0)
    assert index.lookup(55) == OffsetPosition(55, 100)
    assert index.lookup(69) == OffsetPosition(60, 200)
    assert index.lookup(10**12) == OffsetPosition(70, 300)
    assert index.lookup_position(250) == OffsetPosition(60, 200)
    assert index.lookup_position(99) == OffsetPosition(50, 0)
    assert index.last_offset == 70 and index.entries == 3


def test_offset_index_refuses_out_of_order_and_overflowing_offsets(tmp_path):
    index = OffsetIndex(tmp_path / "0.index", 10, MAX)
    index.append(20, 0)
    with pytest.raises(InvalidOffsetError):
        index.append(20, 10)
    with pytest.raises(InvalidOffsetError):
        index.append(10 + 2**31, 10)  # does not fit 4 bytes relative to the base
    assert not index.can_append_offset(9) and index.can_append_offset(10 + 2**31 - 1)


def test_full_index(tmp_path):
    index = OffsetIndex(tmp_path / "0.index", 0, 16)  # room for two entries
    index.append(1, 0)
    assert not index.is_full()
    index.append(2, 10)
    assert index.is_full()
    with pytest.raises(InvalidOffsetError, match="full"):
        index.append(3, 20)
    # the time index keeps its last slot for the entry a rolled segment gets
    tindex = TimeIndex(tmp_path / "0.timeindex", 0, 36)
    tindex.maybe_append(1, 1)
    assert not tindex.is_full()
    tindex.maybe_append(2, 2)
    assert tindex.is_full()
    tindex.maybe_append(3, 3, skip_full_check=True)
    assert tindex.entries == 3


@pytest.mark.parametrize(
    ("offset", "left"),
    [(0, 0), (55, 0), (56, 1), (60, 1), (61, 2), (70, 2), (71, 3), (1000, 3)],
)
def test_offset_index_truncate_to(tmp_path, offset, left):
    """Kafka's three cases: no entry at or below (all go), one exactly at it (it goes), one below."""
    index = OffsetIndex(tmp_path / "0.index", 50, MAX)
    for o, p in [(55, 100), (60, 200), (70, 300)]:
        index.append(o, p)
    index.truncate_to(offset)
    assert index.entries == left
    assert (tmp_path / "0.index").stat().st_size == 8 * left
    if left:
        index.append(index.last_offset + 1, 999)  # appends go on after the truncation


def test_time_index_lookup_and_truncate(tmp_path):
    index = TimeIndex(tmp_path / "0.timeindex", 100, MAX)
    assert index.lookup(5) == TimestampOffset(NO_TIMESTAMP, 100)
    index.maybe_append(1000, 100)
    index.maybe_append(1000, 103)  # not above the last timestamp: ignored
    index.maybe_append(2000, 110)
    index.maybe_append(3000, 120)
    assert index.entries == 3
    assert index.lookup(999) == TimestampOffset(NO_TIMESTAMP, 100)
    assert index.lookup(2500) == TimestampOffset(2000, 110)
    assert index.last_entry == TimestampOffset(3000, 120)
    with pytest.raises(InvalidOffsetError):
        index.maybe_append(4000, 119)
    index.truncate_to(115)
    assert index.last_entry == TimestampOffset(2000, 110)
    index.truncate_to(110)
    assert index.last_entry == TimestampOffset(1000, 100)
    index.truncate_to(0)
    assert index.entries == 0 and index.last_entry == TimestampOffset(NO_TIMESTAMP, 100)


def test_read_only_index_is_mapped_and_reopens(tmp_path):
    path = tmp_path / "0.index"
    index = OffsetIndex(path, 0, MAX)
    for i in range(1, 1000):
        index.append(i * 3, i * 4096)
    index.make_read_only()
    assert not index.writable
    assert index.lookup(301) == OffsetPosition(300, 100 * 4096)
    index.close()
    reopened = OffsetIndex(path, 0, MAX, writable=False)
    assert reopened.entries == 999 and reopened.last_offset == 2997
    assert reopened.lookup(2000) == OffsetPosition(1998, 666 * 4096)
    reopened.sanity_check()
    # truncating a read-only index makes it writable again (the log truncated back into it)
    reopened.truncate_to(1500)
    assert reopened.writable and reopened.last_offset == 1497
    reopened.close()


def test_torn_entry_is_corrupt_when_read_and_dropped_when_written(tmp_path):
    path = tmp_path / "0.index"
    path.write_bytes(struct.pack(">ii", 1, 10) + struct.pack(">ii", 2, 20) + b"\x00\x00\x00")
    with pytest.raises(CorruptIndexError, match="multiple of 8"):
        OffsetIndex(path, 0, MAX, writable=False).sanity_check()
    index = OffsetIndex(path, 0, MAX)
    assert index.entries == 2
    index.append(3, 30)
    index.close()
    assert path.read_bytes() == struct.pack(">iiiiii", 1, 10, 2, 20, 3, 30)


def test_index_below_its_base_is_corrupt(tmp_path):
    path = tmp_path / "0.index"
    path.write_bytes(struct.pack(">ii", -5, 0))
    with pytest.raises(CorruptIndexError, match="less than the base offset"):
        OffsetIndex(path, 100, MAX, writable=False).sanity_check()


@given(
    deltas=st.lists(st.integers(1, 1000), max_size=200),
    targets=st.lists(st.integers(-10, 250_000), max_size=20),
    cut=st.integers(0, 250_000),
)
def test_offset_index_against_a_model(tmp_path_factory, deltas, targets, cut):
    """Lookups and truncation agree with a sorted list of (offset, position)."""
    path = tmp_path_factory.mktemp("idx") / "0.index"
    index = OffsetIndex(path, 7, MAX)
    model: list[tuple[int, int]] = []
    offset = 7
    for i, d in enumerate(deltas):
        offset += d
        index.append(offset, i * 100)
        model.append((offset, i * 100))

    def expected(target: int) -> OffsetPosition:
        i = bisect.bisect_right([o for o, _ in model], target)
        return OffsetPosition(*model[i - 1]) if i else OffsetPosition(7, 0)

    for target in targets:
        assert index.lookup(target) == expected(target)
    index.truncate_to(cut)
    model = [(o, p) for o, p in model if o < cut]
    assert [index.entry(i) for i in range(index.entries)] == [OffsetPosition(*e) for e in model]
    index.make_read_only()
    for target in targets:
        assert index.lookup(target) == expected(target)
    index.close()
