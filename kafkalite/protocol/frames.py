"""Size-prefixed frames: a decoder fed arbitrary chunks that yields whole frame payloads."""

from __future__ import annotations

import struct
from collections.abc import Iterator

from .errors import DecodeError, FrameTooLarge

_SIZE = struct.Struct(">i")

# Kafka's socket.request.max.bytes default.
DEFAULT_MAX_FRAME = 104857600


def frame(payload: bytes) -> bytes:
    return _SIZE.pack(len(payload)) + payload


class FrameDecoder:
    """Feed bytes with :meth:`feed`; iterate :meth:`frames` for whole payloads.

    A frame whose declared size is negative or above ``max_size`` raises before any of its body is
    buffered, and the decoder is then unusable (the connection must be closed), as in Kafka.
    """

    __slots__ = ("_buf", "_consumed", "_failed", "_start", "max_size")

    def __init__(self, max_size: int = DEFAULT_MAX_FRAME) -> None:
        self.max_size = max_size
        self._buf = bytearray()
        self._start = 0  # offset of the first unconsumed byte in _buf
        self._failed: DecodeError | None = None
        self._consumed = 0  # bytes handed out before _buf, for error offsets

    def feed(self, data: bytes) -> None:
        if self._failed is not None:
            raise self._failed
        self._buf += data

    @property
    def partial_size(self) -> int:
        """The declared size of the frame being read (its size is in, its body not all): what
        the memory pool counts for it. 0 between frames."""
        if len(self._buf) - self._start < 4:
            return 0
        return max(_SIZE.unpack_from(self._buf, self._start)[0], 0)

    @property
    def buffered(self) -> int:
        """Bytes held that do not yet make a whole frame."""
        return len(self._buf) - self._start

    def frames(self) -> Iterator[bytearray]:
        """Yield every whole frame buffered so far."""
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
