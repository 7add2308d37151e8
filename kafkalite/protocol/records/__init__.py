"""Kafka's record batches (magic 2): the header (batch.py), the records (records.py), their
compression (compression.py) and errors (errors.py). No I/O."""

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
from .compression import compress, decompress
from .errors import CompressionError, CorruptRecordError, DecompressedTooLarge, UnsupportedCompressionError
from .records import Header, Record, build_batch, check_records, decode_records, encode_record

__all__ = [
    "BATCH_HEADER_SIZE",
    "LOG_OVERHEAD",
    "MAGIC",
    "BatchHeader",
    "Compression",
    "CompressionError",
    "CorruptRecordError",
    "DecompressedTooLarge",
    "Header",
    "Record",
    "TimestampType",
    "UnsupportedCompressionError",
    "build_batch",
    "check_crc",
    "check_records",
    "compress",
    "decode_records",
    "decompress",
    "encode_record",
    "iter_batches",
    "read_header",
    "set_max_timestamp",
    "stamp",
    "validate_batch",
]
