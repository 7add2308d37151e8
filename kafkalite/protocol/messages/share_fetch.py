"""ShareFetch (key 78): a share consumer's fetch from a partition leader (KIP-932). The leader
acquires records for the member (locked for it for group.share.record.lock.duration.ms) and
answers whole batches with the offset ranges acquired; acknowledgements of earlier deliveries
ride along. A share session (ShareSessionEpoch 0 opens, -1 closes, else +1 each request) holds the
partitions asked.

Declared from Kafka's ShareFetchRequest.json / ShareFetchResponse.json (v0, Oct 2024; the
request's v1-2 from apache/kafka trunk) and librdkafka 2.16's mock broker
(rdkafka_mock_handlers.c), which reads the v1 the client sends and writes its answer: v1 drops
PartitionMaxBytes, adds MaxRecords and BatchSize (KIP-932's stable version) and the response's
AcquisitionLockTimeoutMs. All flexible.
"""

from ..api_keys import ApiKey
from ..schema import INT8, INT16, INT32, INT64, RECORDS, STRING, UUID, Array, F, Struct, api

ACKNOWLEDGEMENT_BATCH = Struct(
    "AcknowledgementBatch",
    F("first_offset", INT64),
    F("last_offset", INT64),
    # one type for the whole range, or one per offset: 0 Gap, 1 Accept, 2 Release, 3 Reject
    F("acknowledge_types", Array(INT8)),
)

FETCH_PARTITION = Struct(
    "FetchPartition",
    F("partition_index", INT32),
    F("partition_max_bytes", INT32, "0"),
    F("acknowledgement_batches", Array(ACKNOWLEDGEMENT_BATCH)),
)

FETCH_TOPIC = Struct(
    "FetchTopic",
    F("topic_id", UUID),
    F("partitions", Array(FETCH_PARTITION)),
)

FORGOTTEN_TOPIC = Struct(
    "ForgottenTopic",
    F("topic_id", UUID),
    F("partitions", Array(INT32)),
)

REQUEST = Struct(
    "ShareFetchRequest",
    F("group_id", STRING, nullable="0+", default=None),
    F("member_id", STRING, nullable="0+"),
    F("share_session_epoch", INT32),
    F("max_wait_ms", INT32),
    F("min_bytes", INT32),
    F("max_bytes", INT32, default=0x7FFFFFFF),
    F("max_records", INT32, "1+"),
    F("batch_size", INT32, "1+"),
    F("topics", Array(FETCH_TOPIC)),
    F("forgotten_topics_data", Array(FORGOTTEN_TOPIC)),
)

LEADER_ID_AND_EPOCH = Struct(
    "LeaderIdAndEpoch",
    F("leader_id", INT32, default=-1),
    F("leader_epoch", INT32, default=-1),
)

ACQUIRED_RECORDS = Struct(
    "AcquiredRecords",
    F("first_offset", INT64),
    F("last_offset", INT64),
    F("delivery_count", INT16),
)

PARTITION_DATA = Struct(
    "PartitionData",
    F("partition_index", INT32),
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+", default=None),
    F("acknowledge_error_code", INT16),
    F("acknowledge_error_message", STRING, nullable="0+", default=None),
    F("current_leader", LEADER_ID_AND_EPOCH),
    F("records", RECORDS, nullable="0+", default=None),
    F("acquired_records", Array(ACQUIRED_RECORDS)),
)

TOPIC_RESPONSE = Struct(
    "ShareFetchableTopicResponse",
    F("topic_id", UUID),
    F("partitions", Array(PARTITION_DATA)),
)

NODE_ENDPOINT = Struct(
    "NodeEndpoint",
    F("node_id", INT32),
    F("host", STRING),
    F("port", INT32),
    F("rack", STRING, nullable="0+", default=None),
)

RESPONSE = Struct(
    "ShareFetchResponse",
    F("throttle_time_ms", INT32),
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+", default=None),
    F("acquisition_lock_timeout_ms", INT32, "1+"),
    F("responses", Array(TOPIC_RESPONSE)),
    F("node_endpoints", Array(NODE_ENDPOINT)),
)

SHARE_FETCH = api(ApiKey.SHARE_FETCH, "0-1", "0+", REQUEST, RESPONSE)
