"""ListOffsets (key 2): the offset for a timestamp, or for -1 (latest), -2 (earliest), -3 (max
timestamp, v7+), -4 (local log start, v8+), -5 (last tiered, v9+).

Declared from Kafka 4.1.1's ListOffsetsRequest.json / ListOffsetsResponse.json, versions 0-10
(flexible 6+; Kafka 4.x removed v0, kept here for the codec's tests and not served). v0 answers
with an array of offsets (``old_style_offsets``, at most ``max_num_offsets``); v1+ with one
offset and its timestamp. Request: v2+ isolation level; v4+ current leader epoch; v10+ timeout_ms
(KIP-1075: for reads from remote storage). Response: v2+ throttle time; v4+ leader epoch.
"""

from ..api_keys import ApiKey
from ..schema import INT8, INT16, INT32, INT64, STRING, Array, F, Struct, api

LIST_OFFSETS_PARTITION = Struct(
    "ListOffsetsPartition",
    F("partition_index", INT32),
    F("current_leader_epoch", INT32, "4+", default=-1),
    F("timestamp", INT64),
    F("max_num_offsets", INT32, "0", default=1),
)

LIST_OFFSETS_TOPIC = Struct(
    "ListOffsetsTopic",
    F("name", STRING),
    F("partitions", Array(LIST_OFFSETS_PARTITION)),
)

REQUEST = Struct(
    "ListOffsetsRequest",
    F("replica_id", INT32),
    F("isolation_level", INT8, "2+"),
    F("topics", Array(LIST_OFFSETS_TOPIC)),
    F("timeout_ms", INT32, "10+", default=0),
)

LIST_OFFSETS_PARTITION_RESPONSE = Struct(
    "ListOffsetsPartitionResponse",
    F("partition_index", INT32),
    F("error_code", INT16),
    F("old_style_offsets", Array(INT64), "0"),
    F("timestamp", INT64, "1+", default=-1),
    F("offset", INT64, "1+", default=-1),
    F("leader_epoch", INT32, "4+", default=-1),
)

LIST_OFFSETS_TOPIC_RESPONSE = Struct(
    "ListOffsetsTopicResponse",
    F("name", STRING),
    F("partitions", Array(LIST_OFFSETS_PARTITION_RESPONSE)),
)

RESPONSE = Struct(
    "ListOffsetsResponse",
    F("throttle_time_ms", INT32, "2+"),
    F("topics", Array(LIST_OFFSETS_TOPIC_RESPONSE)),
)

LIST_OFFSETS = api(ApiKey.LIST_OFFSETS, "0-10", "6+", REQUEST, RESPONSE)
