"""OffsetCommit (key 8): a consumer commits its position (an offset, with optional metadata) for
partitions, on behalf of its group.

Declared from Kafka 3.9's OffsetCommitRequest.json / OffsetCommitResponse.json, versions 0-9
(flexible 8+; Kafka 4.0 dropped v0-1, which old librdkafka and kafka-python still send, and with
them the commit timestamp). Request: v1+ generation id (or member epoch, KIP-848) and member id,
and in v1 only a commit timestamp per partition; v2-4 retention time (-1: the broker's
``offsets.retention.minutes``); v6+ each partition's committed leader epoch (KIP-320); v7+ group
instance id (static membership, KIP-345); v9 is v8 for the new consumer group protocol.
Response: v3+ throttle time.
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, INT64, STRING, Array, F, Struct, api

OFFSET_COMMIT_REQUEST_PARTITION = Struct(
    "OffsetCommitRequestPartition",
    F("partition_index", INT32),
    F("committed_offset", INT64),
    F("committed_leader_epoch", INT32, "6+", default=-1),
    F("commit_timestamp", INT64, "1", default=-1),
    F("committed_metadata", STRING, nullable="0+"),
)

OFFSET_COMMIT_REQUEST_TOPIC = Struct(
    "OffsetCommitRequestTopic",
    F("name", STRING),
    F("partitions", Array(OFFSET_COMMIT_REQUEST_PARTITION)),
)

REQUEST = Struct(
    "OffsetCommitRequest",
    F("group_id", STRING),
    F("generation_id_or_member_epoch", INT32, "1+", default=-1),
    F("member_id", STRING, "1+"),
    F("group_instance_id", STRING, "7+", nullable="7+", default=None),
    F("retention_time_ms", INT64, "2-4", default=-1),
    F("topics", Array(OFFSET_COMMIT_REQUEST_TOPIC)),
)

OFFSET_COMMIT_RESPONSE_PARTITION = Struct(
    "OffsetCommitResponsePartition",
    F("partition_index", INT32),
    F("error_code", INT16),
)

OFFSET_COMMIT_RESPONSE_TOPIC = Struct(
    "OffsetCommitResponseTopic",
    F("name", STRING),
    F("partitions", Array(OFFSET_COMMIT_RESPONSE_PARTITION)),
)

RESPONSE = Struct(
    "OffsetCommitResponse",
    F("throttle_time_ms", INT32, "3+"),
    F("topics", Array(OFFSET_COMMIT_RESPONSE_TOPIC)),
)

OFFSET_COMMIT = api(ApiKey.OFFSET_COMMIT, "0-9", "8+", REQUEST, RESPONSE)
