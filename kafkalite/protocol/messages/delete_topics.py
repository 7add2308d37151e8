"""DeleteTopics (key 20).

Declared from Kafka's DeleteTopicsRequest.json / DeleteTopicsResponse.json, versions 0-6
(flexible 4+). Request: v0-5 a list of topic names; v6+ a list of (nullable name, topic id).
Response: v1+ throttle time; v5+ per-topic error message; v6+ topic id, with nullable names.
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, STRING, UUID, Array, F, Struct, api

DELETE_TOPIC_STATE = Struct(
    "DeleteTopicState",
    F("name", STRING, "6+", nullable="6+", default=None),
    F("topic_id", UUID, "6+"),
)

REQUEST = Struct(
    "DeleteTopicsRequest",
    F("topics", Array(DELETE_TOPIC_STATE), "6+"),
    F("topic_names", Array(STRING), "0-5"),
    F("timeout_ms", INT32),
)

DELETABLE_TOPIC_RESULT = Struct(
    "DeletableTopicResult",
    F("name", STRING, nullable="6+"),
    F("topic_id", UUID, "6+"),
    F("error_code", INT16),
    F("error_message", STRING, "5+", nullable="5+", default=None),
)

RESPONSE = Struct(
    "DeleteTopicsResponse",
    F("throttle_time_ms", INT32, "1+"),
    F("responses", Array(DELETABLE_TOPIC_RESULT)),
)

DELETE_TOPICS = api(ApiKey.DELETE_TOPICS, "0-6", "4+", REQUEST, RESPONSE)
