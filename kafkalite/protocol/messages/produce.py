"""Produce (key 0): record batches for partitions, and where they landed.

Declared from Kafka 4.1.1's ProduceRequest.json / ProduceResponse.json, versions 0-13 (flexible
9+; Kafka 4.x's specs say 3-13: versions 0-2 carry the old message formats (magic 0/1), which
Kafka 4.x advertises for old librdkafka but does not serve; they stay declared here for the codec's
and kio's tests, and are not served, server/apis.py). Request: v3+ ``transactional_id``; v13+ each
topic by ``topic_id`` instead of ``name`` (KIP-516); v12 is v11 (KIP-890 part 2: a transactional
batch adds its partition to the transaction). Response: v1+ throttle time; v2+
log append time; v5+ log start offset; v8+ record errors and error message; v10+ the tagged current
leader (tag 0 of a partition) and node endpoints (tag 0 of the response), KIP-951; v13+ topic ids.
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, INT64, RECORDS, STRING, UUID, Array, F, Struct, api

PARTITION_PRODUCE_DATA = Struct(
    "PartitionProduceData",
    F("index", INT32),
    F("records", RECORDS, nullable="0+"),  # Kafka's ``records``: whole batches, as nullable bytes
)

TOPIC_PRODUCE_DATA = Struct(
    "TopicProduceData",
    F("name", STRING, "0-12", default=""),
    F("topic_id", UUID, "13+"),
    F("partition_data", Array(PARTITION_PRODUCE_DATA)),
)

REQUEST = Struct(
    "ProduceRequest",
    F("transactional_id", STRING, "3+", nullable="3+", default=None),
    F("acks", INT16),
    F("timeout_ms", INT32),
    F("topic_data", Array(TOPIC_PRODUCE_DATA)),
)

BATCH_INDEX_AND_ERROR_MESSAGE = Struct(
    "BatchIndexAndErrorMessage",
    F("batch_index", INT32, "8+"),
    F("batch_index_error_message", STRING, "8+", nullable="8+", default=None),
)

LEADER_ID_AND_EPOCH = Struct(
    "LeaderIdAndEpoch",
    F("leader_id", INT32, "10+", default=-1),
    F("leader_epoch", INT32, "10+", default=-1),
)

PARTITION_PRODUCE_RESPONSE = Struct(
    "PartitionProduceResponse",
    F("index", INT32),
    F("error_code", INT16),
    F("base_offset", INT64),
    F("log_append_time_ms", INT64, "2+", default=-1),
    F("log_start_offset", INT64, "5+", default=-1),
    F("record_errors", Array(BATCH_INDEX_AND_ERROR_MESSAGE), "8+"),
    F("error_message", STRING, "8+", nullable="8+", default=None),
    F("current_leader", LEADER_ID_AND_EPOCH, "10+", tag=0),
)

TOPIC_PRODUCE_RESPONSE = Struct(
    "TopicProduceResponse",
    F("name", STRING, "0-12", default=""),
    F("topic_id", UUID, "13+"),
    F("partition_responses", Array(PARTITION_PRODUCE_RESPONSE)),
)

NODE_ENDPOINT = Struct(
    "NodeEndpoint",
    F("node_id", INT32, "10+"),
    F("host", STRING, "10+"),
    F("port", INT32, "10+"),
    F("rack", STRING, "10+", nullable="10+", default=None),
)

RESPONSE = Struct(
    "ProduceResponse",
    F("responses", Array(TOPIC_PRODUCE_RESPONSE)),
    F("throttle_time_ms", INT32, "1+"),
    F("node_endpoints", Array(NODE_ENDPOINT), "10+", tag=0),
)

PRODUCE = api(ApiKey.PRODUCE, "0-13", "9+", REQUEST, RESPONSE)
