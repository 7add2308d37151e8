"""CreateTopics (key 19).

Declared from Kafka's CreateTopicsRequest.json / CreateTopicsResponse.json, versions 0-7
(flexible 5+). Request: v1+ ``validate_only``. Response: v1+ per-topic error message; v2+ throttle
time; v5+ the created topic's partitions, replication factor and configs, plus the tagged
``topic_config_error_code`` (tag 0); v7+ the topic id.
"""

from ..api_keys import ApiKey
from ..schema import BOOL, INT8, INT16, INT32, STRING, UUID, Array, F, Struct, api

CREATABLE_REPLICA_ASSIGNMENT = Struct(
    "CreatableReplicaAssignment",
    F("partition_index", INT32),
    F("broker_ids", Array(INT32)),
)

CREATABLE_TOPIC_CONFIG = Struct(
    "CreatableTopicConfig",
    F("name", STRING),
    F("value", STRING, nullable="0+"),
)

CREATABLE_TOPIC = Struct(
    "CreatableTopic",
    F("name", STRING),
    F("num_partitions", INT32),
    F("replication_factor", INT16),
    F("assignments", Array(CREATABLE_REPLICA_ASSIGNMENT)),
    F("configs", Array(CREATABLE_TOPIC_CONFIG)),
)

REQUEST = Struct(
    "CreateTopicsRequest",
    F("topics", Array(CREATABLE_TOPIC)),
    F("timeout_ms", INT32, default=60000),
    F("validate_only", BOOL, "1+", default=False),
)

CREATABLE_TOPIC_CONFIGS = Struct(
    "CreatableTopicConfigs",
    F("name", STRING, "5+"),
    F("value", STRING, "5+", nullable="5+"),
    F("read_only", BOOL, "5+"),
    F("config_source", INT8, "5+", default=-1),
    F("is_sensitive", BOOL, "5+"),
)

CREATABLE_TOPIC_RESULT = Struct(
    "CreatableTopicResult",
    F("name", STRING),
    F("topic_id", UUID, "7+"),
    F("error_code", INT16),
    F("error_message", STRING, "1+", nullable="0+"),
    F("topic_config_error_code", INT16, "5+", tag=0, tagged="5+"),
    F("num_partitions", INT32, "5+", default=-1),
    F("replication_factor", INT16, "5+", default=-1),
    F("configs", Array(CREATABLE_TOPIC_CONFIGS), "5+", nullable="5+"),
)

RESPONSE = Struct(
    "CreateTopicsResponse",
    F("throttle_time_ms", INT32, "2+"),
    F("topics", Array(CREATABLE_TOPIC_RESULT)),
)

CREATE_TOPICS = api(ApiKey.CREATE_TOPICS, "0-7", "5+", REQUEST, RESPONSE)
