"""Kafka's record batches (magic 2): the header (batch.py), the records (records.py), their
compression (compression.py), errors (errors.py) and the control records of transaction markers
(control.py). No I/O."""

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
from .control import (
    ControlKey,
    ControlRecordError,
    ControlRecordType,
    EndTransactionMarker,
    build_marker_batch,
    decode_control_key,
    decode_end_txn_marker,
    decode_end_txn_value,
    encode_control_key,
    encode_end_txn_value,
    read_end_txn_marker,
)
from .errors import CompressionError, CorruptRecordError, DecompressedTooLarge, UnsupportedCompressionError
from .records import Header, Record, build_batch, check_records, decode_records, encode_record

__all__ = [
    "BATCH_HEADER_SIZE",
    "LOG_OVERHEAD",
    "MAGIC",
    "BatchHeader",
    "Compression",
    "CompressionError",
    "ControlKey",
    "ControlRecordError",
    "ControlRecordType",
    "CorruptRecordError",
    "DecompressedTooLarge",
    "EndTransactionMarker",
    "Header",
    "Record",
    "TimestampType",
    "UnsupportedCompressionError",
    "build_batch",
    "build_marker_batch",
    "check_crc",
    "check_records",
    "compress",
    "decode_control_key",
    "decode_end_txn_marker",
    "decode_end_txn_value",
    "decode_records",
    "decompress",
    "encode_control_key",
    "encode_end_txn_value",
    "encode_record",
    "iter_batches",
    "read_end_txn_marker",
    "read_header",
    "set_max_timestamp",
    "stamp",
    "validate_batch",
]
