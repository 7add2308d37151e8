"""DescribeProducers (key 61): the producers a partition leader knows of, with their epoch, last
sequence and the start offset of their open transaction (KIP-664, kafka-transactions.sh).

Declared from Kafka's DescribeProducersRequest.json / DescribeProducersResponse.json, version 0,
flexible. Note the producer epoch is an int32 here (an int16 everywhere else).
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, INT64, STRING, Array, F, Struct, api

TOPIC_REQUEST = Struct(
    "TopicRequest",
    F("name", STRING),
    F("partition_indexes", Array(INT32)),
)

REQUEST = Struct(
    "DescribeProducersRequest",
    F("topics", Array(TOPIC_REQUEST)),
)

PRODUCER_STATE = Struct(
    "ProducerState",
    F("producer_id", INT64),
    F("producer_epoch", INT32),
    F("last_sequence", INT32, default=-1),
    F("last_timestamp", INT64, default=-1),
    F("coordinator_epoch", INT32),
    F("current_txn_start_offset", INT64, default=-1),
)

PARTITION_RESPONSE = Struct(
    "PartitionResponse",
    F("partition_index", INT32),
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+", default=None),
    F("active_producers", Array(PRODUCER_STATE)),
)

TOPIC_RESPONSE = Struct(
    "TopicResponse",
    F("name", STRING),
    F("partitions", Array(PARTITION_RESPONSE)),
)

RESPONSE = Struct(
    "DescribeProducersResponse",
    F("throttle_time_ms", INT32),
    F("topics", Array(TOPIC_RESPONSE)),
)

DESCRIBE_PRODUCERS = api(ApiKey.DESCRIBE_PRODUCERS, "0", "0+", REQUEST, RESPONSE)
