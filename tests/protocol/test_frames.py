"""The frame decoder: arbitrary chunking, limits checked before any body is buffered."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalite.protocol import UNLIMITED_FRAME_SIZE, DecodeError, FrameDecoder, FrameTooLarge, frame
from kafkalite.protocol.frames import DIRECT_MIN, DIRECT_SHARE


@given(st.lists(st.binary(max_size=50), max_size=8), st.data())
def test_any_chunking_yields_the_same_frames(payloads, data):
    stream = b"".join(frame(p) for p in payloads)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    decoder = FrameDecoder(UNLIMITED_FRAME_SIZE)
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
    decoder = FrameDecoder(UNLIMITED_FRAME_SIZE)
    got = []
    for i in range(len(stream)):
        decoder.feed(stream[i:i + 1])
        got.extend(decoder.frames())
    assert got == [b"hello", b"", b"world"]


def test_many_frames_in_one_chunk():
    decoder = FrameDecoder(UNLIMITED_FRAME_SIZE)
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
    decoder = FrameDecoder(UNLIMITED_FRAME_SIZE)
    decoder.feed(frame(b"ok") + struct.pack(">i", -5))
    frames = decoder.frames()
    assert next(frames) == b"ok"
    with pytest.raises(DecodeError, match="negative") as info:
        next(frames)
    assert info.value.offset == 6
    assert not isinstance(info.value, FrameTooLarge)


def _read_like_a_socket(decoder: FrameDecoder, stream: bytes, chunk: int) -> list[bytes]:
    """What the Processor does: into the frame's own buffer when the decoder offers one, else
    a ``recv`` of ``chunk`` bytes fed in."""
    got: list[bytes] = []
    pos = 0
    while pos < len(stream):
        view = decoder.body_view()
        if view is None:
            decoder.feed(stream[pos:pos + chunk])
            pos += min(chunk, len(stream) - pos)
        else:
            n = min(len(view), chunk, len(stream) - pos)
            view[:n] = stream[pos:pos + n]
            view.release()
            decoder.body_received(n)
            pos += n
        got.extend(bytes(f) for f in decoder.frames())
    return got


@given(st.lists(st.sampled_from([0, 7, DIRECT_MIN - 1, DIRECT_MIN, 3 * DIRECT_MIN + 5]), max_size=5),
       st.sampled_from([1000, 16384, 65536, 1 << 20]))
def test_large_frames_read_in_place_yield_the_same_frames(sizes, chunk):
    payloads = [bytes([i % 251]) * size for i, size in enumerate(sizes)]
    stream = b"".join(frame(p) for p in payloads)
    decoder = FrameDecoder(UNLIMITED_FRAME_SIZE)
    assert _read_like_a_socket(decoder, stream, chunk) == payloads
    assert decoder.buffered == 0 and decoder.partial_size == 0 and decoder.body_view() is None


def test_a_large_frame_is_read_in_place_once_a_quarter_of_it_is_in():
    size = 8 * DIRECT_MIN
    payload = bytes(range(256)) * (size // 256)
    stream = frame(payload)
    decoder = FrameDecoder(UNLIMITED_FRAME_SIZE)
    # Its size alone, and then less than a quarter: buffered as it comes, no buffer of its size.
    decoder.feed(stream[:4 + size // DIRECT_SHARE - 1])
    assert list(decoder.frames()) == [] and decoder.body_view() is None
    assert decoder.partial_size == size and decoder.buffered == 4 + size // DIRECT_SHARE - 1
    decoder.feed(stream[4 + size // DIRECT_SHARE - 1:4 + size // DIRECT_SHARE])
    assert list(decoder.frames()) == []
    view = decoder.body_view()
    assert view is not None and len(view) == size - size // DIRECT_SHARE
    assert decoder.partial_size == size and decoder.buffered == size // DIRECT_SHARE
    # The rest lands in the frame itself, and the frame handed over is that buffer.
    view[:] = stream[4 + size // DIRECT_SHARE:]
    view.release()
    decoder.body_received(size - size // DIRECT_SHARE)
    (got,) = decoder.frames()
    assert type(got) is bytearray and got == payload
    assert decoder.partial_size == 0 and decoder.buffered == 0


def test_bytes_fed_past_a_frame_read_in_place_start_the_next():
    big = b"b" * (2 * DIRECT_MIN)
    stream = frame(big) + frame(b"next") + frame(b"and")
    decoder = FrameDecoder(UNLIMITED_FRAME_SIZE)
    decoder.feed(stream[:4 + DIRECT_MIN])  # half of it: read in place from here on
    assert list(decoder.frames()) == [] and decoder.body_view() is not None
    decoder.feed(stream[4 + DIRECT_MIN:])  # a TLS-like reader feeds the rest and beyond
    assert list(decoder.frames()) == [big, b"next", b"and"]


def test_a_small_frame_is_never_read_in_place():
    decoder = FrameDecoder(UNLIMITED_FRAME_SIZE)
    decoder.feed(frame(b"x" * (DIRECT_MIN - 1))[:-1])
    assert list(decoder.frames()) == [] and decoder.body_view() is None
