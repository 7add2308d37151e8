"""KafkaChannel queuing SplicedFrames (Fetch responses with records left in their files), without a
socket: the test takes each part as a socket and sendfile would (a part at a time, partially), and
the wire gets the frame's bytes in order, with the response completed once, at its last byte. A TLS
channel reads the slices and wraps the bytes instead."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalite.common.file_slice import FileSlice
from kafkalite.network.channel import KafkaChannel, part_size
from kafkalite.protocol import SplicedFrame

from .test_channel import channel, tls_channel


@pytest.fixture(scope="module")
def records_fd() -> Iterator[int]:
    """An open file the slices point into; the tests write what they need at its end."""
    with tempfile.TemporaryFile() as f:
        yield f.fileno()


def spliced(fd: int, pieces: list[tuple[bool, bytes]]) -> SplicedFrame:
    """A frame of ``pieces``: (True, data) a slice of ``data`` written to the file, (False, data)
    bytes. Consecutive bytes pieces are joined and empty ones dropped, as encode_response does."""
    parts: list[bytes | FileSlice] = []
    for in_file, data in pieces:
        if not data:
            continue
        if in_file:
            position = os.lseek(fd, 0, os.SEEK_END)
            os.write(fd, data)
            parts.append(FileSlice(fd, position, len(data)))
        elif parts and type(parts[-1]) is bytes:
            parts[-1] += data
        else:
            parts.append(data)
    return SplicedFrame(tuple(parts), sum(map(part_size, parts)))


def take(c: KafkaChannel, fraction: float) -> tuple[bytes, bool]:
    """What a socket (bytes) or sendfile (a slice) takes of the part to write now: at least a byte,
    and never past the part. The bytes taken, and whether that completed a response."""
    part = c.send_buffer
    assert part is not None
    n = max(1, int(part_size(part) * fraction))
    if type(part) is FileSlice:
        data = os.pread(part.fd, n, part.position)
    else:
        data = bytes(part[:n])
    return data, c.sent(n)


PIECES = st.lists(st.tuples(st.booleans(), st.binary(max_size=300)), max_size=10).filter(
    lambda ps: any(d for _, d in ps))
WRITES = st.one_of(
    st.tuples(st.just("response"), PIECES),
    st.tuples(st.just("own bytes"), st.binary(min_size=1, max_size=50)),
    st.tuples(st.just("take"), st.floats(0, 1)),
)


@given(st.lists(WRITES, max_size=30))
def test_parts_go_out_in_order_and_complete_each_response_once_at_its_last_byte(records_fd, events):
    """Responses with slices (one at a time, as a muted channel has them), bytes of the channel's
    own (SASL tokens) before and after, and a socket taking any part of the part to write now:
    the wire is the frames' bytes in order, and ``sent`` says True exactly at each response's end."""
    c = channel()
    written, wire = b"", b""
    response_end = None  # where the queued response ends in ``written``
    completions = expected = 0

    def taken(data: bytes, done: bool) -> None:
        nonlocal wire, response_end, completions, expected
        wire += data
        completions += done
        if response_end is not None and len(wire) >= response_end:
            expected += 1
            response_end = None
        assert completions == expected

    for kind, arg in events:
        if kind == "response" and response_end is None:
            frame = spliced(records_fd, arg)
            c.write(frame)
            written += frame.to_bytes()
            response_end = len(written)
        elif kind == "own bytes":
            c.write(arg, answers_request=False)
            written += arg
        elif kind == "take" and c.send_buffer is not None:
            taken(*take(c, arg))
        assert written.startswith(wire)
        assert c.queued_bytes == len(written) - len(wire)
        assert c.response_end == (0 if response_end is None else response_end - len(wire))
    while c.send_buffer is not None:
        taken(*take(c, 1.0))
    assert wire == written and completions == expected and not c.send_rest


def test_a_slice_taken_in_part_leaves_the_rest_of_it_to_send(records_fd):
    c = channel()
    frame = spliced(records_fd, [(False, b"head"), (True, b"R" * 1000), (False, b"tail")])
    c.write(frame)
    assert c.send_buffer == b"head" and c.response_end == len(frame) == 1008
    assert not c.sent(4)
    first = c.send_buffer
    assert type(first) is FileSlice and first.size == 1000  # len() of it would be 3
    assert not c.sent(300)
    assert c.send_buffer == FileSlice(first.fd, first.position + 300, 700)
    assert c.queued_bytes == c.response_end == 704
    assert not c.sent(700)
    assert c.send_buffer == b"tail" and c.sent(4) and c.send_buffer is None


def test_a_failed_socket_drops_every_part(records_fd):
    c = channel()
    c.write(spliced(records_fd, [(False, b"head"), (True, b"R" * 10), (False, b"tail")]))
    c.sent(2)
    assert c.drop_send() is True
    assert c.send_buffer is None and not c.send_rest and c.queued_bytes == 0
    c.write(b"next")
    assert c.sent(4) is True


def test_a_tls_channel_reads_the_slices_and_wraps_their_bytes(records_fd, contexts):
    c, peer = tls_channel(contexts)
    frame = spliced(records_fd, [(False, b"head"), (True, os.urandom(50_000)), (False, b"tail")])
    c.write(frame)
    assert type(c.send_buffer) is not FileSlice and not c.send_rest  # TLS records only
    completions = 0
    while c.send_buffer is not None:
        completions += peer.take(c, 0.3)
    assert completions == 1
    assert peer.read_all() == frame.to_bytes()


def test_a_tls_channel_refuses_a_frame_whose_file_was_truncated(contexts):
    c, _ = tls_channel(contexts)
    with tempfile.TemporaryFile() as f:
        frame = spliced(f.fileno(), [(False, b"head"), (True, b"R" * 100)])
        os.ftruncate(f.fileno(), 40)
        with pytest.raises(EOFError):
            c.write(frame)
    assert c.send_buffer is None and c.response_end == 0  # nothing half queued
