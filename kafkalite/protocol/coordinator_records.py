"""The records of ``__consumer_offsets``: Kafka's group coordinator's keys and values
(group-coordinator/src/main/resources/common/message/OffsetCommitKey.json, OffsetCommitValue.json,
GroupMetadataKey.json, GroupMetadataValue.json), each prefixed by its int16 version.

The key's version says what the record is: 0 and 1 an offset commit (group, topic, partition),
2 a classic group's metadata (group), 3-8 a consumer group's of the consumer rebalance
protocol (KIP-848: ConsumerGroup*Key.json / *Value.json, written as ``ConsumerGroupKey``).
A null value is a tombstone: the offset or the group is gone (and compaction removes the older
records of that key). Kafka 3.x writes OffsetCommitValue v3 (v1 when a commit carries an expiry)
and GroupMetadataValue v3; every version reads.
"""

from __future__ import annotations

import struct
from typing import Any, NamedTuple

from .compiler import compile_struct
from .errors import DecodeError
from .schema import BYTES, INT8, INT32, INT64, STRING, UUID, Array, F, Struct

OFFSET_COMMIT_KEY_VERSION = 1
GROUP_METADATA_KEY_VERSION = 2
OFFSET_COMMIT_VALUE_VERSION = 3
GROUP_METADATA_VALUE_VERSION = 3

OFFSET_COMMIT_KEY = Struct(
    "OffsetCommitKey",
    F("group", STRING),
    F("topic", STRING),
    F("partition", INT32),
)

OFFSET_COMMIT_VALUE = Struct(
    "OffsetCommitValue",
    F("offset", INT64),
    F("leader_epoch", INT32, "3+", default=-1),
    F("metadata", STRING),
    F("commit_timestamp", INT64),
    F("expire_timestamp", INT64, "1", default=-1),
)

GROUP_METADATA_KEY = Struct("GroupMetadataKey", F("group", STRING))

MEMBER_METADATA = Struct(
    "MemberMetadata",
    F("member_id", STRING),
    F("group_instance_id", STRING, "3+", nullable="3+", default=None),
    F("client_id", STRING),
    F("client_host", STRING),
    F("rebalance_timeout", INT32, "1+", default=0),
    F("session_timeout", INT32),
    F("subscription", BYTES),
    F("assignment", BYTES),
)

GROUP_METADATA_VALUE = Struct(
    "GroupMetadataValue",
    F("protocol_type", STRING),
    F("generation", INT32),
    F("protocol", STRING, nullable="0+"),
    F("leader", STRING, nullable="0+"),
    F("current_state_timestamp", INT64, "2+", default=-1),
    F("members", Array(MEMBER_METADATA)),
)

# Versions each struct has, and from which one it is flexible (Kafka's JSON).
_VALUE_VERSIONS = {id(OFFSET_COMMIT_VALUE): (0, 4, 4), id(GROUP_METADATA_VALUE): (0, 4, 4)}
_INT16 = struct.Struct(">h")
_cache: dict = {}


class OffsetKey(NamedTuple):
    group: str
    topic: str
    partition: int


class GroupKey(NamedTuple):
    group: str


# --- consumer groups (KIP-848), key versions 3-8; every value v0, flexible -----------------------

CONSUMER_GROUP_METADATA = 3
CONSUMER_GROUP_PARTITION_METADATA = 4
CONSUMER_GROUP_MEMBER_METADATA = 5
CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA = 6
CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER = 7
CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT = 8
# The key versions whose key has a member id besides the group id.
_MEMBER_KEYS = frozenset({CONSUMER_GROUP_MEMBER_METADATA, CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
                          CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT})

CG_GROUP_KEY = Struct("ConsumerGroupGroupKey", F("group_id", STRING))
CG_MEMBER_KEY = Struct("ConsumerGroupMemberKey", F("group_id", STRING), F("member_id", STRING))

CG_TOPIC_PARTITIONS = Struct("ConsumerGroupTopicPartitions", F("topic_id", UUID),
                             F("partitions", Array(INT32)))

CONSUMER_GROUP_METADATA_VALUE = Struct("ConsumerGroupMetadataValue", F("epoch", INT32))

CONSUMER_GROUP_PARTITION_METADATA_VALUE = Struct(
    "ConsumerGroupPartitionMetadataValue",
    F("topics", Array(Struct(
        "ConsumerGroupTopicMetadata",
        F("topic_id", UUID),
        F("topic_name", STRING),
        F("num_partitions", INT32),
        F("partition_metadata", Array(Struct(
            "ConsumerGroupPartitionRacks", F("partition", INT32), F("racks", Array(STRING))))),
    ))),
)

CLASSIC_MEMBER_METADATA = Struct(
    "ClassicMemberMetadata",
    F("session_timeout_ms", INT32),
    F("supported_protocols", Array(Struct("ClassicProtocol", F("name", STRING), F("metadata", BYTES)))),
)

CONSUMER_GROUP_MEMBER_METADATA_VALUE = Struct(
    "ConsumerGroupMemberMetadataValue",
    F("instance_id", STRING, nullable="0+", default=None),
    F("rack_id", STRING, nullable="0+", default=None),
    F("client_id", STRING),
    F("client_host", STRING),
    F("subscribed_topic_names", Array(STRING)),
    F("subscribed_topic_regex", STRING, nullable="0+", default=None),
    F("rebalance_timeout_ms", INT32, default=-1),
    F("server_assignor", STRING, nullable="0+", default=None),
    F("classic_member_metadata", CLASSIC_MEMBER_METADATA, nullable="0+", default=None, tag=0),
)

CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = Struct(
    "ConsumerGroupTargetAssignmentMetadataValue", F("assignment_epoch", INT32))

CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = Struct(
    "ConsumerGroupTargetAssignmentMemberValue", F("topic_partitions", Array(CG_TOPIC_PARTITIONS)))

CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = Struct(
    "ConsumerGroupCurrentMemberAssignmentValue",
    F("member_epoch", INT32),
    F("previous_member_epoch", INT32),
    F("state", INT8),
    F("assigned_partitions", Array(CG_TOPIC_PARTITIONS)),
    F("partitions_pending_revocation", Array(CG_TOPIC_PARTITIONS)),
)

CONSUMER_GROUP_VALUES: dict[int, Struct] = {
    CONSUMER_GROUP_METADATA: CONSUMER_GROUP_METADATA_VALUE,
    CONSUMER_GROUP_PARTITION_METADATA: CONSUMER_GROUP_PARTITION_METADATA_VALUE,
    CONSUMER_GROUP_MEMBER_METADATA: CONSUMER_GROUP_MEMBER_METADATA_VALUE,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA: CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER: CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT: CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
}
for _s in CONSUMER_GROUP_VALUES.values():
    _VALUE_VERSIONS[id(_s)] = (0, 0, 0)


class ConsumerGroupKey(NamedTuple):
    """A consumer group's record key: ``record`` is its key version (3-8); ``member_id`` only for
    the member records (5, 7, 8), else None."""

    record: int
    group: str
    member_id: str | None = None


def encode_consumer_group_value(record: int, value: Any) -> bytes:
    return _encode(CONSUMER_GROUP_VALUES[record], 0, value)


def decode_consumer_group_value(record: int, data: bytes) -> Any:
    return _decode(CONSUMER_GROUP_VALUES[record], data)


def _codec(s: Struct, version: int) -> Any:
    low, high, flexible_from = _VALUE_VERSIONS.get(id(s), (version, version, 1 << 15))
    if not low <= version <= high:
        raise DecodeError(f"{s.name} v{version} is not a version Kafka wrote", offset=0)
    return compile_struct(s, version, version >= flexible_from, _cache)


def _encode(s: Struct, version: int, value: Any) -> bytes:
    out = bytearray(_INT16.pack(version))
    _codec(s, version)[0](value, out)
    return bytes(out)


def encode_key(key: OffsetKey | GroupKey | ConsumerGroupKey) -> bytes:
    if isinstance(key, ConsumerGroupKey):
        if key.record in _MEMBER_KEYS:
            return _encode(CG_MEMBER_KEY, key.record, CG_MEMBER_KEY.cls(group_id=key.group,
                                                                        member_id=key.member_id or ""))
        return _encode(CG_GROUP_KEY, key.record, CG_GROUP_KEY.cls(group_id=key.group))
    if isinstance(key, OffsetKey):
        return _encode(OFFSET_COMMIT_KEY, OFFSET_COMMIT_KEY_VERSION, OFFSET_COMMIT_KEY.cls(*key))
    return _encode(GROUP_METADATA_KEY, GROUP_METADATA_KEY_VERSION, GROUP_METADATA_KEY.cls(group=key.group))


def decode_key(data: bytes) -> OffsetKey | GroupKey | ConsumerGroupKey:
    """The key of a record; DecodeError for one this coordinator does not know (the share groups'
    records, versions 9+, until they are declared)."""
    if len(data) < 2:
        raise DecodeError("a key shorter than its version", offset=0)
    (version,) = _INT16.unpack_from(data)
    if version in (0, 1):
        value, _ = compile_struct(OFFSET_COMMIT_KEY, version, False, _cache)[1](data, 2)
        return OffsetKey(value.group, value.topic, value.partition)
    if version == 2:
        value, _ = compile_struct(GROUP_METADATA_KEY, version, False, _cache)[1](data, 2)
        return GroupKey(value.group)
    if version in CONSUMER_GROUP_VALUES:
        if version in _MEMBER_KEYS:
            value, _ = compile_struct(CG_MEMBER_KEY, version, False, _cache)[1](data, 2)
            return ConsumerGroupKey(version, value.group_id, value.member_id)
        value, _ = compile_struct(CG_GROUP_KEY, version, False, _cache)[1](data, 2)
        return ConsumerGroupKey(version, value.group_id)
    raise DecodeError(f"unknown __consumer_offsets key version {version}", offset=0)


def encode_offset_value(value: Any, version: int = OFFSET_COMMIT_VALUE_VERSION) -> bytes:
    return _encode(OFFSET_COMMIT_VALUE, version, value)


def encode_group_value(value: Any, version: int = GROUP_METADATA_VALUE_VERSION) -> bytes:
    return _encode(GROUP_METADATA_VALUE, version, value)


def _decode(s: Struct, data: bytes) -> Any:
    if len(data) < 2:
        raise DecodeError(f"a {s.name} shorter than its version", offset=0)
    (version,) = _INT16.unpack_from(data)
    return _codec(s, version)[1](data, 2)[0]


def decode_offset_value(data: bytes) -> Any:
    return _decode(OFFSET_COMMIT_VALUE, data)


def decode_group_value(data: bytes) -> Any:
    return _decode(GROUP_METADATA_VALUE, data)


# --- Share groups (KIP-932): key versions 9-15 -------------------------------------------------
# Kafka's ShareGroup*Key.json / ShareGroup*Value.json (group-coordinator/src/main/resources/
# common/message/): the key's version says which record; keys are not flexible, values are v0,
# flexible. A null value is a tombstone (the member's, the assignment's, the group's).

SHARE_GROUP_PARTITION_METADATA = 9
SHARE_GROUP_MEMBER_METADATA = 10
SHARE_GROUP_METADATA = 11
SHARE_GROUP_TARGET_ASSIGNMENT_METADATA = 12
SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER = 13
SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT = 14
SHARE_GROUP_STATE_PARTITION_METADATA = 15
SHARE_GROUP_KEY_VERSIONS = range(SHARE_GROUP_PARTITION_METADATA, SHARE_GROUP_STATE_PARTITION_METADATA + 1)
# Keys of one group, and keys of one member of it.
_SHARE_GROUP_KEY = Struct("ShareGroupKey", F("group_id", STRING))
_SHARE_MEMBER_KEY = Struct("ShareGroupMemberKey", F("group_id", STRING), F("member_id", STRING))
_SHARE_MEMBER_KEYED = (SHARE_GROUP_MEMBER_METADATA, SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER,
                       SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT)

_SHARE_TOPIC_PARTITIONS = Struct("TopicPartitions", F("topic_id", UUID), F("partitions", Array(INT32)))
_SHARE_VALUES: dict[int, Struct] = {
    SHARE_GROUP_PARTITION_METADATA: Struct(
        "ShareGroupPartitionMetadataValue",
        F("topics", Array(Struct(
            "TopicMetadata", F("topic_id", UUID), F("topic_name", STRING), F("num_partitions", INT32),
            F("partition_metadata", Array(Struct("PartitionMetadata", F("partition", INT32),
                                                 F("racks", Array(STRING)))))))),
    ),
    SHARE_GROUP_MEMBER_METADATA: Struct(
        "ShareGroupMemberMetadataValue",
        F("rack_id", STRING, nullable="0+", default=None),
        F("client_id", STRING),
        F("client_host", STRING),
        F("subscribed_topic_names", Array(STRING)),
    ),
    SHARE_GROUP_METADATA: Struct("ShareGroupMetadataValue", F("epoch", INT32)),
    SHARE_GROUP_TARGET_ASSIGNMENT_METADATA: Struct("ShareGroupTargetAssignmentMetadataValue",
                                                   F("assignment_epoch", INT32)),
    SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER: Struct("ShareGroupTargetAssignmentMemberValue",
                                                 F("topic_partitions", Array(_SHARE_TOPIC_PARTITIONS))),
    SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT: Struct(
        "ShareGroupCurrentMemberAssignmentValue",
        F("member_epoch", INT32),
        F("previous_member_epoch", INT32),
        F("state", INT8),
        F("assigned_partitions", Array(_SHARE_TOPIC_PARTITIONS)),
    ),
    SHARE_GROUP_STATE_PARTITION_METADATA: Struct(
        "ShareGroupStatePartitionMetadataValue",
        F("initialized_topics", Array(Struct("TopicPartitionsInfo", F("topic_id", UUID),
                                             F("topic_name", STRING), F("partitions", Array(INT32))))),
        F("deleting_topics", Array(Struct("TopicInfo", F("topic_id", UUID), F("topic_name", STRING)))),
    ),
}


class ShareRecordKey(NamedTuple):
    """A share group's record key: its version (9-15), the group, and the member (10, 13, 14)."""

    version: int
    group: str
    member: str | None = None


def share_value_struct(key_version: int) -> Struct:
    return _SHARE_VALUES[key_version]


def encode_share_key(key: ShareRecordKey) -> bytes:
    if key.version in _SHARE_MEMBER_KEYED:
        member_key = _SHARE_MEMBER_KEY.cls(group_id=key.group, member_id=key.member)
        return _encode(_SHARE_MEMBER_KEY, key.version, member_key)
    return _encode(_SHARE_GROUP_KEY, key.version, _SHARE_GROUP_KEY.cls(group_id=key.group))


def decode_share_key(data: bytes) -> ShareRecordKey | None:
    """The share group record key of ``data``; None when the key is of another kind."""
    if len(data) < 2:
        raise DecodeError("a key shorter than its version", offset=0)
    (version,) = _INT16.unpack_from(data)
    if version not in SHARE_GROUP_KEY_VERSIONS:
        return None
    if version in _SHARE_MEMBER_KEYED:
        value, _ = compile_struct(_SHARE_MEMBER_KEY, version, False, _cache)[1](data, 2)
        return ShareRecordKey(version, value.group_id, value.member_id)
    value, _ = compile_struct(_SHARE_GROUP_KEY, version, False, _cache)[1](data, 2)
    return ShareRecordKey(version, value.group_id)


def encode_share_value(key_version: int, value: Any) -> bytes:
    out = bytearray(_INT16.pack(0))
    compile_struct(_SHARE_VALUES[key_version], 0, True, _cache)[0](value, out)
    return bytes(out)


def decode_share_value(key_version: int, data: bytes) -> Any:
    if len(data) < 2:
        raise DecodeError("a value shorter than its version", offset=0)
    (version,) = _INT16.unpack_from(data)
    if version != 0:
        name = _SHARE_VALUES[key_version].name
        raise DecodeError(f"{name} v{version} is not a version Kafka wrote", offset=0)
    return compile_struct(_SHARE_VALUES[key_version], 0, True, _cache)[1](data, 2)[0]
