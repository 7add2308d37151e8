"""The records of ``__transaction_state``: Kafka's transaction coordinator's key and value
(transaction-coordinator/src/main/resources/common/message/TransactionLogKey.json and
TransactionLogValue.json), each prefixed by its int16 version.

The key is version 0 and a transactional id. The value is v0 (non-flexible) or, once the
``transaction.version`` feature is 1 or more, v1 (flexible, with the previous and next producer
ids and the client's transaction version as tagged fields 0, 1 and 2). ``transaction_status`` is
the state's number as Kafka writes it (the server's TransactionState maps it); the partitions are
null in the Empty state. A null value is a tombstone: the transactional id expired.

This module only knows bytes; which partition holds a transactional id and what the status means
belong to the coordinator (kafkalite/server/coordinator/transaction/log_records.py).
"""

from __future__ import annotations

import struct
from typing import Any

from .compiler import compile_struct
from .errors import DecodeError
from .schema import INT8, INT16, INT32, INT64, STRING, Array, F, Struct

TRANSACTION_LOG_KEY_VERSION = 0
# (lowest, highest, first flexible) value versions, as TransactionLogValue.json declares them.
VALUE_VERSIONS = (0, 1, 1)

TRANSACTION_LOG_KEY = Struct("TransactionLogKey", F("transactional_id", STRING))

PARTITIONS_SCHEMA = Struct(
    "PartitionsSchema",
    F("topic", STRING),
    F("partition_ids", Array(INT32)),
)

TRANSACTION_LOG_VALUE = Struct(
    "TransactionLogValue",
    F("producer_id", INT64),
    F("previous_producer_id", INT64, "1+", tag=0, default=-1),
    F("next_producer_id", INT64, "1+", tag=1, default=-1),
    F("producer_epoch", INT16),
    F("transaction_timeout_ms", INT32),
    F("transaction_status", INT8),
    F("transaction_partitions", Array(PARTITIONS_SCHEMA), nullable="0+", default=None),
    F("transaction_last_update_timestamp_ms", INT64),
    F("transaction_start_timestamp_ms", INT64),
    F("client_transaction_version", INT16, "1+", tag=2, default=0),
)

_INT16 = struct.Struct(">h")
_cache: dict = {}


def encode_key(transactional_id: str) -> bytes:
    out = bytearray(_INT16.pack(TRANSACTION_LOG_KEY_VERSION))
    compile_struct(TRANSACTION_LOG_KEY, 0, False, _cache)[0](
        TRANSACTION_LOG_KEY.cls(transactional_id=transactional_id), out)
    return bytes(out)


def decode_key(data: bytes) -> str:
    """The transactional id of a key; DecodeError for a version other than 0 (Kafka's
    readTxnRecordKey refuses those too) or bytes that are not a key."""
    if len(data) < 2:
        raise DecodeError("a TransactionLogKey shorter than its version", offset=0)
    (version,) = _INT16.unpack_from(data)
    if version != TRANSACTION_LOG_KEY_VERSION:
        raise DecodeError(f"unknown __transaction_state key version {version}", offset=0)
    value, end = compile_struct(TRANSACTION_LOG_KEY, 0, False, _cache)[1](data, 2)
    if end != len(data):
        raise DecodeError(f"{len(data) - end} bytes after the TransactionLogKey", offset=end)
    return str(value.transactional_id)


def _codec(version: int) -> Any:
    low, high, flexible_from = VALUE_VERSIONS
    if not low <= version <= high:
        raise DecodeError(f"TransactionLogValue v{version} is not a version Kafka wrote", offset=0)
    return compile_struct(TRANSACTION_LOG_VALUE, version, version >= flexible_from, _cache)


def encode_value(value: Any, version: int) -> bytes:
    out = bytearray(_INT16.pack(version))
    _codec(version)[0](value, out)
    return bytes(out)


def decode_value(data: bytes) -> Any:
    """A TransactionLogValue of either version (fields absent from v0 read as their defaults)."""
    if len(data) < 2:
        raise DecodeError("a TransactionLogValue shorter than its version", offset=0)
    (version,) = _INT16.unpack_from(data)
    value, end = _codec(version)[1](data, 2)
    if end != len(data):
        raise DecodeError(f"{len(data) - end} bytes after the TransactionLogValue", offset=end)
    return value
