"""The frame decoder: arbitrary chunking, limits checked before any body is buffered."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalite.protocol import DecodeError, FrameDecoder, FrameTooLarge, frame


@given(st.lists(st.binary(max_size=50), max_size=8), st.data())
def test_any_chunking_yields_the_same_frames(payloads, data):
    stream = b"".join(frame(p) for p in payloads)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    decoder = FrameDecoder()
    got = []
    last = 0
    for cut in [*cuts, len(stream)]:
        decoder.feed(stream[last:cut])
        last = cut
        got.extend(decoder.frames())
    assert got == payloads
    assert decoder.buffered == 0


def test_one_byte_at_a_time():
    stream = frame(b"hello") + frame(b"") + frame(b"world")
    decoder = FrameDecoder()
    got = []
    for i in range(len(stream)):
        decoder.feed(stream[i:i + 1])
        got.extend(decoder.frames())
    assert got == [b"hello", b"", b"world"]


def test_many_frames_in_one_chunk():
    decoder = FrameDecoder()
    decoder.feed(b"".join(frame(i.to_bytes(2, "big")) for i in range(1000)))
    assert list(decoder.frames()) == [i.to_bytes(2, "big") for i in range(1000)]


def test_oversized_frame_rejected_from_its_size_alone():
    decoder = FrameDecoder(max_size=100)
    decoder.feed(struct.pack(">i", 101))  # no body sent at all
    with pytest.raises(FrameTooLarge) as info:
        list(decoder.frames())
    assert info.value.offset == 0
    assert decoder.buffered == 0
    # The decoder stays failed: the connection is to be closed, as Kafka does.
    with pytest.raises(FrameTooLarge):
        decoder.feed(b"x")


def test_negative_size_rejected():
    decoder = FrameDecoder()
    decoder.feed(frame(b"ok") + struct.pack(">i", -5))
    frames = decoder.frames()
    assert next(frames) == b"ok"
    with pytest.raises(DecodeError, match="negative") as info:
        next(frames)
    assert info.value.offset == 6
    assert not isinstance(info.value, FrameTooLarge)
