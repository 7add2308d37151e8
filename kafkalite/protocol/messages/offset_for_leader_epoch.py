"""OffsetForLeaderEpoch (key 23): the end offset of a leader epoch, from the leader-epoch cache.

Declared from Kafka 3.9's OffsetForLeaderEpochRequest.json / OffsetForLeaderEpochResponse.json,
versions 0-4 (flexible 4+). Request: v2+ the current leader epoch (fencing, KIP-320); v3+ the
replica id (-2, a "debug" consumer, by default). Response: v1+ the leader epoch; v2+ throttle
time. librdkafka validates positions with v2 after a leader change.
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, INT64, STRING, Array, F, Struct, api

OFFSET_FOR_LEADER_PARTITION = Struct(
    "OffsetForLeaderPartition",
    F("partition", INT32),
    F("current_leader_epoch", INT32, "2+", default=-1),
    F("leader_epoch", INT32),
)

OFFSET_FOR_LEADER_TOPIC = Struct(
    "OffsetForLeaderTopic",
    F("topic", STRING),
    F("partitions", Array(OFFSET_FOR_LEADER_PARTITION)),
)

REQUEST = Struct(
    "OffsetForLeaderEpochRequest",
    F("replica_id", INT32, "3+", default=-2),
    F("topics", Array(OFFSET_FOR_LEADER_TOPIC)),
)

EPOCH_END_OFFSET = Struct(
    "EpochEndOffset",
    F("error_code", INT16),
    F("partition", INT32),
    F("leader_epoch", INT32, "1+", default=-1),
    F("end_offset", INT64, default=-1),
)

OFFSET_FOR_LEADER_TOPIC_RESULT = Struct(
    "OffsetForLeaderTopicResult",
    F("topic", STRING),
    F("partitions", Array(EPOCH_END_OFFSET)),
)

RESPONSE = Struct(
    "OffsetForLeaderEpochResponse",
    F("throttle_time_ms", INT32, "2+"),
    F("topics", Array(OFFSET_FOR_LEADER_TOPIC_RESULT)),
)

OFFSET_FOR_LEADER_EPOCH = api(ApiKey.OFFSET_FOR_LEADER_EPOCH, "0-4", "4+", REQUEST, RESPONSE)
