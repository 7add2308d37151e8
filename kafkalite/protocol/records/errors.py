"""The record batch errors: part of the codec's DecodeError family, so callers that already catch
DecodeError catch these too. The broker answers them with Kafka's CORRUPT_MESSAGE (or, for a codec
it cannot read, UNSUPPORTED_COMPRESSION_TYPE)."""

from __future__ import annotations

from ..errors import DecodeError


class CorruptRecordError(DecodeError):
    """A record batch or record that is not valid (Kafka's CorruptRecordException).

    ``offset`` is the byte position in the buffer that was being read where the fault is.
    """

    def __init__(self, reason: str, offset: int) -> None:
        super().__init__(reason, offset=offset, what="record batch")


class UnsupportedCompressionError(CorruptRecordError):
    """A batch names a compression codec id that Kafka does not define (5-7)."""


class CompressionError(CorruptRecordError):
    """A compressed records section that does not decompress (bad or truncated data)."""
