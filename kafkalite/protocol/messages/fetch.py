"""Fetch (key 1): record batches from partitions, by consumers and follower replicas.

Declared from Kafka 4.1.1's FetchRequest.json / FetchResponse.json, versions 0-18 (flexible 12+;
Kafka 4.x removed 0-3, kept here for the codec's tests and not served).
Request: v3+ max bytes (KIP-74); v4+ isolation level (and RecordBatch v2); v5+ log start offset;
v7+ fetch sessions (session id and epoch, forgotten topics); v9+ current leader epoch (KIP-320);
v11+ rack id; v12+ last fetched epoch and the tagged cluster id; v13+ topic ids instead of names
(KIP-516); v15+ the tagged replica state replaces replica id (KIP-903); v17+ the tagged replica
directory id (KIP-853); v18+ the follower's tagged high watermark (KIP-1166; tag 1 of a
partition, default the largest int64: not known). Response (v18 is v17): v1+ throttle time; v4+
last stable offset and aborted transactions; v5+ log start offset; v7+ top-level error code and
session id; v11+ preferred read replica; v12+ tagged diverging epoch, current leader and snapshot
id; v13+ topic ids; v16+ tagged node endpoints (KIP-951).
"""

from ..api_keys import ApiKey
from ..schema import INT8, INT16, INT32, INT64, RECORDS, STRING, UUID, Array, F, Struct, api

REPLICA_STATE = Struct(
    "ReplicaState",
    F("replica_id", INT32, "15+", default=-1),
    F("replica_epoch", INT64, "15+", default=-1),
)

FETCH_PARTITION = Struct(
    "FetchPartition",
    F("partition", INT32),
    F("current_leader_epoch", INT32, "9+", default=-1),
    F("fetch_offset", INT64),
    F("last_fetched_epoch", INT32, "12+", default=-1),
    F("log_start_offset", INT64, "5+", default=-1),
    F("partition_max_bytes", INT32),
    F("replica_directory_id", UUID, "17+", tag=0),
    F("high_watermark", INT64, "18+", tag=1, default=0x7FFFFFFFFFFFFFFF),
)

FETCH_TOPIC = Struct(
    "FetchTopic",
    F("topic", STRING, "0-12"),
    F("topic_id", UUID, "13+"),
    F("partitions", Array(FETCH_PARTITION)),
)

FORGOTTEN_TOPIC = Struct(
    "ForgottenTopic",
    F("topic", STRING, "7-12"),
    F("topic_id", UUID, "13+"),
    F("partitions", Array(INT32), "7+"),
)

REQUEST = Struct(
    "FetchRequest",
    F("cluster_id", STRING, "12+", nullable="12+", default=None, tag=0),
    F("replica_id", INT32, "0-14", default=-1),
    F("replica_state", REPLICA_STATE, "15+", tag=1),
    F("max_wait_ms", INT32),
    F("min_bytes", INT32),
    F("max_bytes", INT32, "3+", default=0x7FFFFFFF),
    F("isolation_level", INT8, "4+", default=0),
    F("session_id", INT32, "7+", default=0),
    F("session_epoch", INT32, "7+", default=-1),
    F("topics", Array(FETCH_TOPIC)),
    F("forgotten_topics_data", Array(FORGOTTEN_TOPIC), "7+"),
    F("rack_id", STRING, "11+", default=""),
)

EPOCH_END_OFFSET = Struct(
    "EpochEndOffset",
    F("epoch", INT32, "12+", default=-1),
    F("end_offset", INT64, "12+", default=-1),
)

LEADER_ID_AND_EPOCH = Struct(
    "LeaderIdAndEpoch",
    F("leader_id", INT32, "12+", default=-1),
    F("leader_epoch", INT32, "12+", default=-1),
)

SNAPSHOT_ID = Struct(
    "SnapshotId",
    F("end_offset", INT64, default=-1),
    F("epoch", INT32, default=-1),
)

ABORTED_TRANSACTION = Struct(
    "AbortedTransaction",
    F("producer_id", INT64, "4+"),
    F("first_offset", INT64, "4+"),
)

PARTITION_DATA = Struct(
    "PartitionData",
    F("partition_index", INT32),
    F("error_code", INT16),
    F("high_watermark", INT64),
    F("last_stable_offset", INT64, "4+", default=-1),
    F("log_start_offset", INT64, "5+", default=-1),
    F("diverging_epoch", EPOCH_END_OFFSET, "12+", tag=0),
    F("current_leader", LEADER_ID_AND_EPOCH, "12+", tag=1),
    F("snapshot_id", SNAPSHOT_ID, "12+", tag=2),
    F("aborted_transactions", Array(ABORTED_TRANSACTION), "4+", nullable="4+"),
    F("preferred_read_replica", INT32, "11+", default=-1),
    # ``records`` in Kafka's specs: nullable bytes of whole batches. librdkafka rejects null
    # ("invalid MessageSetSize -1"), so the default is empty, not null.
    F("records", RECORDS, nullable="0+"),
)

FETCHABLE_TOPIC_RESPONSE = Struct(
    "FetchableTopicResponse",
    F("topic", STRING, "0-12"),
    F("topic_id", UUID, "13+"),
    F("partitions", Array(PARTITION_DATA)),
)

NODE_ENDPOINT = Struct(
    "NodeEndpoint",
    F("node_id", INT32, "16+"),
    F("host", STRING, "16+"),
    F("port", INT32, "16+"),
    F("rack", STRING, "16+", nullable="16+", default=None),
)

RESPONSE = Struct(
    "FetchResponse",
    F("throttle_time_ms", INT32, "1+"),
    F("error_code", INT16, "7+"),
    F("session_id", INT32, "7+", default=0),
    F("responses", Array(FETCHABLE_TOPIC_RESPONSE)),
    F("node_endpoints", Array(NODE_ENDPOINT), "16+", tag=0),
)

FETCH = api(ApiKey.FETCH, "0-18", "12+", REQUEST, RESPONSE)
