"""DescribeTopicPartitions (key 75): topics and their partitions, a page at a time (KIP-966).

Declared from Kafka's DescribeTopicPartitionsRequest.json / DescribeTopicPartitionsResponse.json,
version 0, flexible. The request names topics (none: every topic), the most partitions wanted and
an optional cursor (the topic and partition to start at); the response's ``next_cursor`` says
where the next page starts, null when everything asked was answered. Each partition carries its
eligible leader replicas and last known ELR (KIP-966), nullable. The two cursors are nullable
structs: one byte, -1 for null, before the struct.
"""

from ..acl import AUTHORIZED_OPERATIONS_OMITTED
from ..api_keys import ApiKey
from ..schema import BOOL, INT16, INT32, STRING, UUID, Array, F, Struct, api

TOPIC_REQUEST = Struct(
    "TopicRequest",
    F("name", STRING),
)

CURSOR = Struct(
    "Cursor",
    F("topic_name", STRING),
    F("partition_index", INT32),
)

REQUEST = Struct(
    "DescribeTopicPartitionsRequest",
    F("topics", Array(TOPIC_REQUEST)),
    F("response_partition_limit", INT32, default=2000),
    F("cursor", CURSOR, nullable="0+", default=None),
)

RESPONSE_PARTITION = Struct(
    "DescribeTopicPartitionsResponsePartition",
    F("error_code", INT16),
    F("partition_index", INT32),
    F("leader_id", INT32),
    F("leader_epoch", INT32, default=-1),
    F("replica_nodes", Array(INT32)),
    F("isr_nodes", Array(INT32)),
    F("eligible_leader_replicas", Array(INT32), nullable="0+", default=None),
    F("last_known_elr", Array(INT32), nullable="0+", default=None),
    F("offline_replicas", Array(INT32)),
)

RESPONSE_TOPIC = Struct(
    "DescribeTopicPartitionsResponseTopic",
    F("error_code", INT16),
    F("name", STRING, nullable="0+"),
    F("topic_id", UUID),
    F("is_internal", BOOL, default=False),
    F("partitions", Array(RESPONSE_PARTITION)),
    F("topic_authorized_operations", INT32, default=AUTHORIZED_OPERATIONS_OMITTED),
)

RESPONSE = Struct(
    "DescribeTopicPartitionsResponse",
    F("throttle_time_ms", INT32),
    F("topics", Array(RESPONSE_TOPIC)),
    F("next_cursor", CURSOR, nullable="0+", default=None),
)

DESCRIBE_TOPIC_PARTITIONS = api(ApiKey.DESCRIBE_TOPIC_PARTITIONS, "0", "0+", REQUEST, RESPONSE)
