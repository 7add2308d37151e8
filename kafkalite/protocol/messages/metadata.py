"""Metadata (key 3): brokers, controller and topic/partition layout of the cluster.

Declared from Kafka 4.1.1's MetadataRequest.json / MetadataResponse.json, versions 0-13 (flexible 9+).
Request: v0 an empty topic list means "all topics"; v1+ a null list means "all topics", an empty
list "none"; v4+ ``allow_auto_topic_creation``; v8+ authorized-operations flags (the cluster one
only in v8-10); v10+ topic ids, with the topic name nullable. Response: v1+ rack, controller id and
``is_internal``; v2+ cluster id; v3+ throttle time; v5+ offline replicas; v7+ leader epoch; v8+
authorized operations (the cluster one only in v8-10); v10+ topic ids; v12+ nullable topic names;
v13+ a top-level error code (KIP-1102).
"""

from ..acl import AUTHORIZED_OPERATIONS_OMITTED
from ..api_keys import ApiKey
from ..schema import BOOL, INT16, INT32, STRING, UUID, Array, F, Struct, api

METADATA_REQUEST_TOPIC = Struct(
    "MetadataRequestTopic",
    F("topic_id", UUID, "10+"),
    F("name", STRING, nullable="10+"),
)

REQUEST = Struct(
    "MetadataRequest",
    F("topics", Array(METADATA_REQUEST_TOPIC), nullable="1+"),
    F("allow_auto_topic_creation", BOOL, "4+", default=True),
    F("include_cluster_authorized_operations", BOOL, "8-10"),
    F("include_topic_authorized_operations", BOOL, "8+"),
)

METADATA_RESPONSE_BROKER = Struct(
    "MetadataResponseBroker",
    F("node_id", INT32),
    F("host", STRING),
    F("port", INT32),
    F("rack", STRING, "1+", nullable="1+", default=None),
)

METADATA_RESPONSE_PARTITION = Struct(
    "MetadataResponsePartition",
    F("error_code", INT16),
    F("partition_index", INT32),
    F("leader_id", INT32),
    F("leader_epoch", INT32, "7+", default=-1),
    F("replica_nodes", Array(INT32)),
    F("isr_nodes", Array(INT32)),
    F("offline_replicas", Array(INT32), "5+"),
)

METADATA_RESPONSE_TOPIC = Struct(
    "MetadataResponseTopic",
    F("error_code", INT16),
    F("name", STRING, nullable="12+"),
    F("topic_id", UUID, "10+"),
    F("is_internal", BOOL, "1+", default=False),
    F("partitions", Array(METADATA_RESPONSE_PARTITION)),
    F("topic_authorized_operations", INT32, "8+", default=AUTHORIZED_OPERATIONS_OMITTED),
)

RESPONSE = Struct(
    "MetadataResponse",
    F("throttle_time_ms", INT32, "3+"),
    F("brokers", Array(METADATA_RESPONSE_BROKER)),
    F("cluster_id", STRING, "2+", nullable="2+", default=None),
    F("controller_id", INT32, "1+", default=-1),
    F("topics", Array(METADATA_RESPONSE_TOPIC)),
    F("cluster_authorized_operations", INT32, "8-10", default=AUTHORIZED_OPERATIONS_OMITTED),
    F("error_code", INT16, "13+", default=0),
)

METADATA = api(ApiKey.METADATA, "0-13", "9+", REQUEST, RESPONSE)
