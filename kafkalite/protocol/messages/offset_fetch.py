"""OffsetFetch (key 9): a group's committed offsets (and their metadata) for partitions, by its
consumers at start and after a rebalance, and by admin clients.

Declared from Kafka 3.9's OffsetFetchRequest.json / OffsetFetchResponse.json, versions 0-9
(flexible 6+; Kafka 4.0 dropped v0, which read offsets from ZooKeeper). v0-7 ask about one group;
v8+ about several at once, each with its own topics, answers and error code (KIP-709). Request:
v2+ the topics may be null, for every partition the group has offsets for; v7+ require stable
(KIP-447); v9+ each group's member id and epoch (KIP-848). Response: v2+ top-level error code;
v3+ throttle time; v5+ each partition's committed leader epoch.
"""

from ..api_keys import ApiKey
from ..schema import BOOL, INT16, INT32, INT64, STRING, Array, F, Struct, api

OFFSET_FETCH_REQUEST_TOPIC = Struct(
    "OffsetFetchRequestTopic",
    F("name", STRING, "0-7"),
    F("partition_indexes", Array(INT32), "0-7"),
)

OFFSET_FETCH_REQUEST_TOPICS = Struct(
    "OffsetFetchRequestTopics",
    F("name", STRING, "8+"),
    F("partition_indexes", Array(INT32), "8+"),
)

OFFSET_FETCH_REQUEST_GROUP = Struct(
    "OffsetFetchRequestGroup",
    F("group_id", STRING, "8+"),
    F("member_id", STRING, "9+", nullable="9+", default=None),
    F("member_epoch", INT32, "9+", default=-1),
    F("topics", Array(OFFSET_FETCH_REQUEST_TOPICS), "8+", nullable="8+"),
)

REQUEST = Struct(
    "OffsetFetchRequest",
    F("group_id", STRING, "0-7"),
    F("topics", Array(OFFSET_FETCH_REQUEST_TOPIC), "0-7", nullable="2-7"),
    F("groups", Array(OFFSET_FETCH_REQUEST_GROUP), "8+"),
    F("require_stable", BOOL, "7+", default=False),
)

OFFSET_FETCH_RESPONSE_PARTITION = Struct(
    "OffsetFetchResponsePartition",
    F("partition_index", INT32, "0-7"),
    F("committed_offset", INT64, "0-7"),
    F("committed_leader_epoch", INT32, "5-7", default=-1),
    F("metadata", STRING, "0-7", nullable="0-7"),
    F("error_code", INT16, "0-7"),
)

OFFSET_FETCH_RESPONSE_TOPIC = Struct(
    "OffsetFetchResponseTopic",
    F("name", STRING, "0-7"),
    F("partitions", Array(OFFSET_FETCH_RESPONSE_PARTITION), "0-7"),
)

OFFSET_FETCH_RESPONSE_PARTITIONS = Struct(
    "OffsetFetchResponsePartitions",
    F("partition_index", INT32, "8+"),
    F("committed_offset", INT64, "8+"),
    F("committed_leader_epoch", INT32, "8+", default=-1),
    F("metadata", STRING, "8+", nullable="8+"),
    F("error_code", INT16, "8+"),
)

OFFSET_FETCH_RESPONSE_TOPICS = Struct(
    "OffsetFetchResponseTopics",
    F("name", STRING, "8+"),
    F("partitions", Array(OFFSET_FETCH_RESPONSE_PARTITIONS), "8+"),
)

OFFSET_FETCH_RESPONSE_GROUP = Struct(
    "OffsetFetchResponseGroup",
    F("group_id", STRING, "8+"),
    F("topics", Array(OFFSET_FETCH_RESPONSE_TOPICS), "8+"),
    F("error_code", INT16, "8+"),
)

RESPONSE = Struct(
    "OffsetFetchResponse",
    F("throttle_time_ms", INT32, "3+"),
    F("topics", Array(OFFSET_FETCH_RESPONSE_TOPIC), "0-7"),
    F("error_code", INT16, "2-7"),
    F("groups", Array(OFFSET_FETCH_RESPONSE_GROUP), "8+"),
)

OFFSET_FETCH = api(ApiKey.OFFSET_FETCH, "0-9", "6+", REQUEST, RESPONSE)
