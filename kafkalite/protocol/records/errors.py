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


class DecompressedTooLarge(CompressionError):
    """A compressed records section that would decompress to more than the caller allows (a
    compression bomb, or a batch too big to check whole). The broker answers MESSAGE_TOO_LARGE,
    on which Kafka's producer splits the batch and sends it again."""
