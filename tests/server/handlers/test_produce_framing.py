"""Produce's check of a batch's record framing by runs of one size (handlers/produce.py
``records_frame``) against the record-by-record walk (protocol/records ``check_records``): it
accepts only what the walk accepts, and accepts the batches producers send."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalite.common.errors import ApiError
from kafkalite.protocol.primitives import read_varint
from kafkalite.protocol.records import (
    BatchHeader,
    CorruptRecordError,
    Record,
    build_batch,
    check_records,
    read_header,
)
from kafkalite.protocol.records.batch import RECORDS_OFFSET
from kafkalite.server.handlers.produce import records_frame, validate_records


def _batch(sizes: list[int], key: bytes | None = None) -> bytearray:
    return bytearray(build_batch([Record(i, i, key, b"v" * size) for i, size in enumerate(sizes)],
                                 base_timestamp=1_700_000_000_000, producer_id=7, producer_epoch=0,
                                 base_sequence=0))


def _walk_accepts(buf: bytearray, header: BatchHeader) -> bool:
    try:
        check_records(buf, 0, header)
    except CorruptRecordError:
        return False
    return True


@pytest.mark.parametrize("sizes", [
    [1], [100] * 3, [100] * 10_000, [5] * 9_000, [100] * 70 + [101] * 70 + [100] * 70,
    list(range(1, 300)), [8_000] * 20, [20_000] * 3,
], ids=["one", "three", "10000x100", "9000x5", "runs", "growing", "8000B", "3-byte-prefix"])
def test_producers_batches_frame(sizes: list[int]) -> None:
    buf = _batch(sizes)
    header = read_header(buf)
    framed = records_frame(buf, header.records_count, RECORDS_OFFSET, header.size)
    # Records over 8,191 bytes have 3-byte length prefixes: left to the walk.
    assert framed is (max(sizes) < 8_150)
    assert validate_records(memoryview(buf)) is not None


@settings(max_examples=300, deadline=None)
@given(run=st.lists(st.integers(1, 200), min_size=1, max_size=4), repeat=st.integers(1, 120),
       flips=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)), max_size=3),
       count_delta=st.integers(-2, 2), cut=st.integers(0, 3))
def test_accepts_only_what_the_walk_accepts(run: list[int], repeat: int, flips: list[tuple[int, int]],
                                            count_delta: int, cut: int) -> None:
    """Random batches of runs of sizes, bytes changed, a records count off, cut short: where
    ``records_frame`` says they frame, the walk agrees (it may say False where the walk accepts:
    then the walk decides)."""
    buf = _batch(run * repeat)
    header = read_header(buf)
    for position, value in flips:
        buf[RECORDS_OFFSET + position % (header.size - RECORDS_OFFSET)] = value
    count = max(header.records_count + count_delta, 0)
    end = header.size - cut
    if records_frame(buf, count, RECORDS_OFFSET, end):
        assert _walk_accepts(buf[:end], header._replace(records_count=count, batch_length=end - 12))
    if not flips and count_delta == 0 and cut == 0:
        assert records_frame(buf, count, RECORDS_OFFSET, end)


def test_a_broken_run_is_refused_as_the_walk_refuses_it() -> None:
    buf = _batch([100] * 1_000)
    header = read_header(buf)
    # A length prefix in the middle of a run says one byte more: the walk loses the framing.
    position = previous = RECORDS_OFFSET
    for _ in range(500):
        length, after = read_varint(bytes(buf), position)
        previous, position = position, after + length
    assert buf[position:position + 2] == buf[previous:previous + 2]  # in a run of one size
    buf[position] += 2  # zigzag: length + 1
    assert not records_frame(buf, header.records_count, RECORDS_OFFSET, header.size)
    with pytest.raises(ApiError):
        validate_records(memoryview(buf))  # the CRC, then the walk, refuse it
