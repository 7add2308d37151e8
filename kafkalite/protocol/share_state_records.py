"""The records of ``__share_group_state``: Kafka's share coordinator's keys and values
(share-coordinator/src/main/resources/common/message/Share{Snapshot,Update}{Key,Value}.json), each
prefixed by its int16 version.

The key's version is the record type: 0 a ShareSnapshot (the whole state of a share-partition),
1 a ShareUpdate (the batches one WriteShareGroupState changed, combined with the last snapshot
when read). Both keys are {GroupId, TopicId, Partition}, not flexible; both values are version 0,
flexible. A null value is a tombstone: the share-partition's state was deleted.

This module only knows bytes; which partition holds a key and how updates combine belong to the
share coordinator (kafkalite/server/share_coordinator/).
"""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass
from typing import Any

from .compiler import compile_struct
from .errors import DecodeError
from .schema import INT8, INT16, INT32, INT64, STRING, UINT16, UUID, Array, F, Struct

SHARE_SNAPSHOT_KEY_VERSION = 0
SHARE_UPDATE_KEY_VERSION = 1
VALUE_VERSION = 0

SHARE_STATE_KEY = Struct(
    "ShareStateKey",
    F("group_id", STRING),
    F("topic_id", UUID),
    F("partition", INT32),
)

STATE_BATCH = Struct(
    "ShareStateBatch",
    F("first_offset", INT64),
    F("last_offset", INT64),
    F("delivery_state", INT8),
    F("delivery_count", INT16),
)

SHARE_SNAPSHOT_VALUE = Struct(
    "ShareSnapshotValue",
    F("snapshot_epoch", UINT16),
    F("state_epoch", INT32),
    F("leader_epoch", INT32),
    F("start_offset", INT64),
    F("state_batches", Array(STATE_BATCH)),
)

SHARE_UPDATE_VALUE = Struct(
    "ShareUpdateValue",
    F("snapshot_epoch", INT32),
    F("leader_epoch", INT32),
    F("start_offset", INT64),
    # Kafka 4.2's (KIP-1226), tagged: absent from older writers, -1 then.
    F("delivery_complete_count", INT32, tag=0, default=-1),
    F("state_batches", Array(STATE_BATCH)),
)

_INT16 = struct.Struct(">h")
_cache: dict = {}


@dataclass(frozen=True)
class RecordKey:
    """A decoded key: which share-partition, and whether its record is a snapshot or an update."""

    snapshot: bool
    group_id: str
    topic_id: uuid.UUID
    partition: int


def encode_key(snapshot: bool, group_id: str, topic_id: uuid.UUID, partition: int) -> bytes:
    version = SHARE_SNAPSHOT_KEY_VERSION if snapshot else SHARE_UPDATE_KEY_VERSION
    out = bytearray(_INT16.pack(version))
    compile_struct(SHARE_STATE_KEY, 0, False, _cache)[0](
        SHARE_STATE_KEY.cls(group_id=group_id, topic_id=topic_id, partition=partition), out)
    return bytes(out)


def decode_key(data: bytes) -> RecordKey:
    """DecodeError for a version other than 0 and 1 or bytes that are not a key."""
    if len(data) < 2:
        raise DecodeError("a share state key shorter than its version", offset=0)
    (version,) = _INT16.unpack_from(data)
    if version not in (SHARE_SNAPSHOT_KEY_VERSION, SHARE_UPDATE_KEY_VERSION):
        raise DecodeError(f"unknown __share_group_state key version {version}", offset=0)
    value, end = compile_struct(SHARE_STATE_KEY, 0, False, _cache)[1](data, 2)
    if end != len(data):
        raise DecodeError(f"{len(data) - end} bytes after the share state key", offset=end)
    return RecordKey(version == SHARE_SNAPSHOT_KEY_VERSION, value.group_id, value.topic_id, value.partition)


def _schema(snapshot: bool) -> Struct:
    return SHARE_SNAPSHOT_VALUE if snapshot else SHARE_UPDATE_VALUE


def encode_value(snapshot: bool, value: Any) -> bytes:
    out = bytearray(_INT16.pack(VALUE_VERSION))
    compile_struct(_schema(snapshot), VALUE_VERSION, True, _cache)[0](value, out)
    return bytes(out)


def decode_value(snapshot: bool, data: bytes) -> Any:
    """A ShareSnapshotValue or ShareUpdateValue (as the key said); DecodeError otherwise."""
    if len(data) < 2:
        raise DecodeError("a share state value shorter than its version", offset=0)
    (version,) = _INT16.unpack_from(data)
    if version != VALUE_VERSION:
        raise DecodeError(f"share state value v{version} is not a version Kafka wrote", offset=0)
    value, end = compile_struct(_schema(snapshot), VALUE_VERSION, True, _cache)[1](data, 2)
    if end != len(data):
        raise DecodeError(f"{len(data) - end} bytes after the share state value", offset=end)
    return value
