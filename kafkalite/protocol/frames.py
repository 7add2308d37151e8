"""Size-prefixed frames: a decoder fed arbitrary chunks that yields whole frame payloads."""

from __future__ import annotations

import struct
from collections.abc import Iterator

from .errors import DecodeError, FrameTooLarge

_SIZE = struct.Struct(">i")

# Kafka's NetworkReceive.UNLIMITED: the limit of a client, which reads a response of any size a frame
# can declare (a server reads requests up to its socket.request.max.bytes).
UNLIMITED_FRAME_SIZE = 2**31 - 1
# A frame at least this large, once a quarter of it is in, is read straight into a buffer of its
# size (see FrameDecoder.body_view): its bytes then cross from the socket once, not three times.
DIRECT_MIN = 65536
DIRECT_SHARE = 4  # so a peer that stops sending makes us hold at most 4x what it sent


def frame(payload: bytes) -> bytes:
    return _SIZE.pack(len(payload)) + payload


class FrameDecoder:
    """Feed bytes with :meth:`feed`; iterate :meth:`frames` for whole payloads.

    A frame whose declared size is negative or above ``max_size`` (a server's
    socket.request.max.bytes; a client's is UNLIMITED_FRAME_SIZE) raises before any of its body is
    buffered, and the decoder is then unusable (the connection must be closed), as in Kafka.
    """

    __slots__ = ("_body", "_buf", "_consumed", "_failed", "_filled", "_start", "max_size")

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size
        self._buf = bytearray()
        self._start = 0  # offset of the first unconsumed byte in _buf
        self._failed: DecodeError | None = None
        self._consumed = 0  # bytes handed out before _buf, for error offsets
        self._body: bytearray | None = None  # a large frame read in place (_buf is empty then)
        self._filled = 0  # bytes of _body read so far

    def feed(self, data: bytes) -> None:
        if self._failed is not None:
            raise self._failed
        body = self._body
        if body is None:
            self._buf += data
            return
        take = min(len(body) - self._filled, len(data))
        body[self._filled:self._filled + take] = data[:take]
        self._filled += take
        if take < len(data):
            self._buf += data[take:]

    def body_view(self) -> memoryview | None:
        """The unread rest of the large frame being read, to read into; None between such frames."""
        body = self._body
        return None if body is None else memoryview(body)[self._filled:]

    def body_received(self, n: int) -> None:
        """``n`` bytes were read into the last :meth:`body_view`."""
        self._filled += n

    @property
    def partial_size(self) -> int:
        """The declared size of the frame being read (its size is in, its body not all): what
        the memory pool counts for it. 0 between frames."""
        if self._body is not None:
            return len(self._body)
        if len(self._buf) - self._start < 4:
            return 0
        return max(_SIZE.unpack_from(self._buf, self._start)[0], 0)

    @property
    def buffered(self) -> int:
        """Bytes held that do not yet make a whole frame."""
        body = self._body
        return len(self._buf) - self._start + (0 if body is None else self._filled)

    def frames(self) -> Iterator[bytearray]:
        """Yield every whole frame buffered so far."""
        body = self._body
        if body is not None:
            if self._filled < len(body):
                return
            self._body = None
            self._consumed += len(body)
            yield body
        buf = self._buf
        while True:
            avail = len(buf) - self._start
            if avail < 4:
                break
            (size,) = _SIZE.unpack_from(buf, self._start)
            if size < 0 or size > self.max_size:
                cls = FrameTooLarge if size > self.max_size else DecodeError
                reason = f"frame size {size} " + (
                    f"exceeds the limit {self.max_size}" if size > 0 else "is negative"
                )
                self._failed = cls(reason, offset=self._consumed + self._start, what="frame")
                del buf[:]
                raise self._failed
            if avail - 4 < size:
                got = avail - 4
                if size >= DIRECT_MIN and got * DIRECT_SHARE >= size:
                    body = self._body = bytearray(size)
                    with memoryview(buf) as view:
                        body[:got] = view[self._start + 4:]
                    self._filled = got
                    self._consumed += self._start + 4
                    del buf[:]
                    self._start = 0
                    return
                break
            begin = self._start + 4
            self._start = begin + size
            # The slice is already a copy: handing it over as a bytearray saves a second one (a
            # produced batch is then stamped in place in it, not copied again).
            yield buf[begin:self._start]
        if self._start:
            # Compact once per call, not per frame: keeps many small frames linear.
            self._consumed += self._start
            del buf[: self._start]
            self._start = 0

    def __iter__(self) -> Iterator[bytearray]:
        return self.frames()
