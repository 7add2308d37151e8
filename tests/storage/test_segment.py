from __future__ import annotations

import os

from kafkalite.protocol.records import read_header
from kafkalite.storage.config import LogConfig
from kafkalite.storage.index import TimestampOffset
from kafkalite.storage.segment import LogSegment, RollParams
from tests.support.batches import batch


class Clock:
    def __init__(self, now: int = 1_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def segment(tmp_path, base: int = 0, clock: Clock | None = None, **config: int) -> LogSegment:
    return LogSegment(tmp_path, base, LogConfig(**config), clock or Clock())


def fill(seg: LogSegment, counts: list[int], start: int | None = None, timestamp: int = 1_000) -> list[bytes]:
    """Append one batch per count, offsets following each other; the batches' bytes."""
    offset = seg.base_offset if start is None else start
    out = []
    for count in counts:
        b = batch(count, timestamp=timestamp + offset, base_offset=offset)
        seg.append(offset + count - 1, timestamp + offset + count - 1, offset + count - 1, b)
        out.append(bytes(b))
        offset += count
    return out


def test_files_are_named_by_the_20_digit_base_offset(tmp_path):
    seg = segment(tmp_path, base=1234)
    fill(seg, [1])
    seg.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "00000000000000001234.index",
        "00000000000000001234.log",
        "00000000000000001234.timeindex",
    ]


def test_log_file_holds_the_batches_exactly_as_appended(tmp_path):
    seg = segment(tmp_path, base=40)
    written = fill(seg, [3, 1, 5])
    seg.close()
    assert (tmp_path / "00000000000000000040.log").read_bytes() == b"".join(written)


def test_read_returns_whole_batches_from_the_one_holding_the_offset(tmp_path):
    seg = segment(tmp_path, base=100)
    written = fill(seg, [5, 5, 5])  # offsets 100-104, 105-109, 110-114
    sizes = [len(b) for b in written]
    got = seg.read(107, max_size=10_000)
    assert got is not None
    assert (got.position, got.size) == (sizes[0], sizes[1] + sizes[2])
    assert got.read() == written[1] + written[2]
    assert got.fd == seg.fd  # a slice of the segment file itself, for sendfile
    assert seg.read(115, 10_000) is None  # past the last batch


def test_read_stops_at_max_bytes_on_a_batch_boundary(tmp_path):
    seg = segment(tmp_path)
    written = fill(seg, [1] * 10)
    size = len(written[0])
    got = seg.read(0, max_size=3 * size + size // 2)
    assert got is not None and got.size == 3 * size
    assert got.read() == b"".join(written[:3])


def test_read_returns_the_first_batch_even_if_larger_than_max_bytes(tmp_path):
    """KIP-74: at least one batch, so a consumer always progresses."""
    seg = segment(tmp_path)
    written = fill(seg, [50, 1])
    got = seg.read(10, max_size=1)
    assert got is not None and got.read() == written[0]
    empty = seg.read(10, max_size=1, min_one_message=False)
    assert empty is not None and empty.size == 0


def test_read_stops_before_max_position(tmp_path):
    seg = segment(tmp_path)
    written = fill(seg, [2, 2, 2])
    boundary = len(written[0]) + len(written[1])
    got = seg.read(0, 10_000, max_position=boundary)
    assert got is not None and got.read() == written[0] + written[1]
    nothing = seg.read(4, 10_000, max_position=boundary)
    assert nothing is not None and nothing.size == 0


def test_sparse_index_every_index_interval_bytes(tmp_path):
    seg = segment(tmp_path, index_interval_bytes=500)
    written = fill(seg, [1] * 40)
    size = len(written[0])
    positions = [seg.offset_index.entry(i).position for i in range(seg.offset_index.entries)]
    # an entry once more than 500 bytes were appended since the last one, at a batch start
    step = (500 // size + 1) * size
    assert positions == list(range(step, size * 40, step))
    for i in range(seg.offset_index.entries):
        entry = seg.offset_index.entry(i)
        header = read_header(os.pread(seg.fd, 61, entry.position))
        assert header.last_offset == entry.offset
    # the time index follows, with the largest timestamp so far
    assert seg.time_index.entries == seg.offset_index.entries


def test_reads_through_the_index_match_a_linear_scan(tmp_path):
    """Every (offset, max bytes) read equals the answer of scanning all batches from the start."""
    seg = segment(tmp_path, index_interval_bytes=256)
    counts = [1, 3, 7, 2, 1, 1, 5, 4, 9, 1] * 6
    written = fill(seg, counts)
    starts, ends, pos = [], [], 0
    for b in written:
        starts.append(pos)
        pos += len(b)
        ends.append(pos)
    first_offsets = [sum(counts[:i]) for i in range(len(counts))]
    for offset in range(0, sum(counts), 3):
        i = max(j for j, f in enumerate(first_offsets) if f <= offset)
        for max_size in (1, 200, 700, 5000, 100_000):
            got = seg.read(offset, max_size)
            assert got is not None
            last = i
            while last + 1 < len(written) and ends[last + 1] - starts[i] <= max_size:
                last += 1
            assert (got.position, got.size) == (starts[i], ends[last] - starts[i])


def test_truncate_to_removes_the_batch_holding_the_offset_and_later_ones(tmp_path):
    seg = segment(tmp_path, index_interval_bytes=100)
    written = fill(seg, [4] * 10)
    cut = sum(len(b) for b in written[:6])
    assert seg.truncate_to(26) == seg.size + sum(len(b) for b in written[6:]) - cut
    assert seg.size == cut and seg.read_next_offset() == 24
    assert seg.offset_index.last_offset < 24
    assert seg.max_timestamp_and_offset() == TimestampOffset(1_000 + 23, 23)
    fill(seg, [2], start=24)  # appends go on from there
    assert seg.read_next_offset() == 26


def test_recovery_rebuilds_the_same_indexes(tmp_path):
    seg = segment(tmp_path, index_interval_bytes=300)
    fill(seg, [1, 2, 3] * 30)
    seg.on_become_inactive()
    index_bytes = seg.offset_index.path.read_bytes()
    time_bytes = seg.time_index.path.read_bytes()
    assert len(index_bytes) > 8
    seg.offset_index.reset()
    recovered = seg.recover()
    assert (recovered.truncated_bytes, recovered.reason) == (0, None)
    seg.on_become_inactive()
    assert seg.offset_index.path.read_bytes() == index_bytes
    assert seg.time_index.path.read_bytes() == time_bytes


def test_recovery_cuts_a_torn_tail(tmp_path):
    seg = segment(tmp_path)
    written = fill(seg, [2, 2, 2])
    seg.close()
    path = tmp_path / "00000000000000000000.log"
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size - 5)  # the last batch lost its end
    seg = segment(tmp_path)
    recovered = seg.recover()
    assert recovered.truncated_bytes == len(written[2]) - 5
    assert path.read_bytes() == written[0] + written[1]
    assert seg.read_next_offset() == 4


def test_recovery_cuts_at_a_corrupted_byte(tmp_path):
    seg = segment(tmp_path, index_interval_bytes=100)
    written = fill(seg, [3] * 12)
    seg.close()
    path = tmp_path / "00000000000000000000.log"
    bad = sum(len(b) for b in written[:7]) + 70  # inside the 8th batch's records (under its CRC)
    data = bytearray(path.read_bytes())
    data[bad] ^= 0xFF
    path.write_bytes(data)
    seg = segment(tmp_path, index_interval_bytes=100)
    recovered = seg.recover()
    assert recovered.position == sum(len(b) for b in written[:7])
    assert "CRC" in (recovered.reason or "")
    assert path.read_bytes() == b"".join(written[:7])
    assert seg.read_next_offset() == 21
    assert seg.offset_index.last_offset < 21
    assert seg.time_index.last_entry.offset <= 20


def test_find_batch_by_timestamp(tmp_path):
    seg = segment(tmp_path, index_interval_bytes=100)
    fill(seg, [5] * 20, timestamp=10_000)  # record at offset o has timestamp 10_000 + o
    found = seg.find_batch_by_timestamp(10_042, starting_offset=0)
    assert found is not None
    assert (found[1].base_offset, found[1].last_offset) == (40, 44)
    found = seg.find_batch_by_timestamp(0, starting_offset=12)
    assert found is not None and found[1].base_offset == 10
    assert seg.find_batch_by_timestamp(20_000, 0) is None


def test_should_roll(tmp_path):
    clock = Clock(5_000_000)
    seg = segment(tmp_path, base=10, clock=clock)

    def params(size: int = 100, ts: int = 1_000, offset: int = 11, ms: int = 10_000) -> RollParams:
        return RollParams(ms, 1000, ts, offset, size, clock())

    assert not seg.should_roll(params())
    fill(seg, [1], timestamp=1_000)  # the first batch's timestamp is 1010
    assert not seg.should_roll(params(ts=11_010))
    assert seg.should_roll(params(ts=11_011))  # segment.ms past the first batch's timestamp
    assert seg.should_roll(params(size=1000 - seg.size + 1))  # segment.bytes
    assert seg.should_roll(params(offset=10 + 2**31))  # no longer fits a relative offset
    assert seg.time_waited_for_roll(clock(), 2_010) == 1_000
