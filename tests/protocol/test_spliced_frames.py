"""Bytes fields holding FileSlices: encode_response leaves them in their files (a SplicedFrame)
and the frame, once read back, is byte for byte the frame of the same response with the bytes in
place — for every version of Fetch, whose records are what the log hands out as slices."""

from __future__ import annotations

import os
import struct
import tempfile

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalite.common.file_slice import FileSlice
from kafkalite.protocol import (
    EncodeError,
    SplicedFrame,
    decode_response,
    encode_body,
    encode_request,
    encode_response,
)
from kafkalite.protocol.error_counts import error_counts
from kafkalite.protocol.messages import fetch, produce

from .strategies import struct_value

FETCH = fetch.FETCH.key
Topic = fetch.RESPONSE["responses"]
Partition = Topic["partitions"]


def partitions(body: object) -> list:
    return [p for t in body.responses for p in t.partitions]  # type: ignore[attr-defined]


def into_file(f: object, body: object, gaps: list[int]) -> list[FileSlice]:
    """Each partition's records (not null) written to ``f`` after a gap of other bytes and
    replaced by a slice of them; the slices in the order of the response."""
    fd = f.fileno()  # type: ignore[attr-defined]
    slices = []
    for i, p in enumerate(partitions(body)):
        if p.records is None:
            continue
        os.write(fd, b"\xee" * gaps[i % len(gaps)])
        position = os.lseek(fd, 0, os.SEEK_CUR)
        os.write(fd, p.records)
        p.records = FileSlice(fd, position, len(p.records))
        slices.append(p.records)
    return slices


VERSIONS = range(fetch.FETCH.versions.low, fetch.FETCH.versions.high + 1)


def test_every_fetch_version_is_covered():
    assert list(VERSIONS) == list(range(19))


@pytest.mark.slow
@pytest.mark.parametrize("version", VERSIONS)
@given(data=st.data())
def test_a_fetch_response_with_slices_is_the_same_frame_once_read(version, data):
    body = data.draw(struct_value(fetch.RESPONSE, version))
    # Besides what was drawn (null, empty or not, records anywhere), one topic with records for sure.
    topic = data.draw(struct_value(fetch.FETCHABLE_TOPIC_RESPONSE, version))
    topic.partitions.insert(data.draw(st.integers(0, len(topic.partitions))),
                            data.draw(struct_value(fetch.PARTITION_DATA, version)))
    for p in topic.partitions:
        p.records = p.records or data.draw(st.binary(min_size=1, max_size=40))
    body.responses.insert(data.draw(st.integers(0, len(body.responses))), topic)
    gaps = data.draw(st.lists(st.integers(0, 5), min_size=1, max_size=4))
    corr = data.draw(st.integers(-(2**31), 2**31 - 1))
    expected = encode_response(FETCH, version, corr, body)
    counts = error_counts(FETCH, version, body)
    with tempfile.TemporaryFile() as f:
        slices = into_file(f, body, gaps)
        frame = encode_response(FETCH, version, corr, body)
        spliced = [s for s in slices if s.size]
        assert isinstance(frame, SplicedFrame)
        assert len(frame) == len(expected)
        assert frame.to_bytes() == expected
        # The slices themselves, in order, not copies of their bytes; no empty part between.
        assert [p for p in frame.parts if type(p) is FileSlice] == spliced
        assert all(p for p in frame.parts if type(p) is bytes)
        assert error_counts(FETCH, version, body) == counts
        assert decode_response(frame.to_bytes()[4:], FETCH, version)[0] == corr


def fetch_v4(*records: bytes | FileSlice) -> object:
    return fetch.RESPONSE(responses=[Topic(topic="t", partitions=[
        Partition(partition_index=i, high_watermark=7, records=r) for i, r in enumerate(records)])])


def test_the_parts_are_the_bytes_around_each_slice_whose_size_prefixes_it(tmp_path):
    path = tmp_path / "segment.log"
    path.write_bytes(b"A" * 100 + b"B" * 50)
    fd = os.open(path, os.O_RDONLY)
    try:
        first, second = FileSlice(fd, 0, 100), FileSlice(fd, 100, 50)
        frame = encode_response(FETCH, 4, 9, fetch_v4(first, second))
        assert isinstance(frame, SplicedFrame)
        head, s1, middle, s2 = frame.parts  # v4 ends with the last partition's records
        assert s1 is first and s2 is second
        assert struct.unpack(">ii", head[:8]) == (len(frame) - 4, 9)
        assert struct.unpack(">i", head[-4:])[0] == 100 and struct.unpack(">i", middle[-4:])[0] == 50
        assert len(frame) == len(head) + 100 + len(middle) + 50
        assert "2 file slices" in repr(frame)
    finally:
        os.close(fd)


def test_a_file_truncated_under_a_slice_cannot_be_read_into_a_frame(tmp_path):
    path = tmp_path / "segment.log"
    path.write_bytes(b"R" * 64)
    fd = os.open(path, os.O_RDWR)
    try:
        frame = encode_response(FETCH, 12, 1, fetch_v4(FileSlice(fd, 0, 64)))
        assert isinstance(frame, SplicedFrame)
        os.ftruncate(fd, 10)
        with pytest.raises(EOFError, match="54 bytes short"):
            frame.to_bytes()
    finally:
        os.close(fd)


def test_without_slices_a_response_is_plain_bytes():
    frame = encode_response(FETCH, 12, 1, fetch_v4(b"abc", FileSlice(-1, 0, 0)))
    assert type(frame) is bytes
    assert frame == encode_response(FETCH, 12, 1, fetch_v4(b"abc", b""))
    produced = produce.RESPONSE(responses=[], throttle_time_ms=0)
    assert type(encode_response(produce.PRODUCE.key, 9, 1, produced)) is bytes


def test_a_slice_outside_a_response_frame_is_an_error_not_a_silent_copy(tmp_path):
    path = tmp_path / "segment.log"
    path.write_bytes(b"R" * 8)
    fd = os.open(path, os.O_RDONLY)
    try:
        body = fetch_v4(FileSlice(fd, 0, 8))
        with pytest.raises(EncodeError, match="FileSlice"):
            encode_body(FETCH, 12, body, response=True)
        Data = produce.REQUEST["topic_data"]
        request = produce.REQUEST(acks=1, timeout_ms=10, topic_data=[Data(name="t", partition_data=[
            Data["partition_data"](index=0, records=FileSlice(fd, 0, 8))])])
        with pytest.raises(EncodeError, match="FileSlice"):
            encode_request(produce.PRODUCE.key, 9, 1, "c", request)
        # An empty slice is empty bytes anywhere.
        assert encode_body(FETCH, 12, fetch_v4(FileSlice(-1, 0, 0)), response=True) == encode_body(
            FETCH, 12, fetch_v4(b""), response=True)
    finally:
        os.close(fd)
