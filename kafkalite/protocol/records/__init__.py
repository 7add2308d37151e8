"""Kafka's record batches (magic 2): the header (batch.py), the errors (errors.py). No I/O."""

from __future__ import annotations

from .batch import (
    BATCH_HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC,
    BatchHeader,
    Compression,
    TimestampType,
    check_crc,
    iter_batches,
    read_header,
    set_max_timestamp,
    stamp,
    validate_batch,
)
from .errors import CompressionError, CorruptRecordError, UnsupportedCompressionError

__all__ = [
    "BATCH_HEADER_SIZE",
    "LOG_OVERHEAD",
    "MAGIC",
    "BatchHeader",
    "Compression",
    "CompressionError",
    "CorruptRecordError",
    "TimestampType",
    "UnsupportedCompressionError",
    "check_crc",
    "iter_batches",
    "read_header",
    "set_max_timestamp",
    "stamp",
    "validate_batch",
]
