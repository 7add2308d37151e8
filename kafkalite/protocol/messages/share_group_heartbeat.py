"""ShareGroupHeartbeat (key 76): a share consumer joins (member epoch 0), stays in (its epoch) or
leaves (-1) its share group, and is told its assignment (KIP-932). The member id is the client's
own (a uuid it made, from v1), kept for the member's whole life.

Declared from Kafka's ShareGroupHeartbeatRequest.json / ShareGroupHeartbeatResponse.json (v0, Oct
2024: early access) and librdkafka 2.16's mock broker (rdkafka_mock_handlers.c, which serves the
v1 the client sends): v1 has the same fields as v0, all flexible. v0 is Kafka 4.0's early access,
removed in 4.1.
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, STRING, UUID, Array, F, Struct, api

REQUEST = Struct(
    "ShareGroupHeartbeatRequest",
    F("group_id", STRING),
    F("member_id", STRING),
    F("member_epoch", INT32),
    F("rack_id", STRING, nullable="0+", default=None),
    # null: unchanged since the last heartbeat
    F("subscribed_topic_names", Array(STRING), nullable="0+", default=None),
)

TOPIC_PARTITIONS = Struct(
    "TopicPartitions",
    F("topic_id", UUID),
    F("partitions", Array(INT32)),
)

ASSIGNMENT = Struct(
    "Assignment",
    F("topic_partitions", Array(TOPIC_PARTITIONS)),
)

RESPONSE = Struct(
    "ShareGroupHeartbeatResponse",
    F("throttle_time_ms", INT32),
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+", default=None),
    F("member_id", STRING, nullable="0+", default=None),
    F("member_epoch", INT32),
    F("heartbeat_interval_ms", INT32),
    # null: unchanged since the last answer
    F("assignment", ASSIGNMENT, nullable="0+", default=None),
)

SHARE_GROUP_HEARTBEAT = api(ApiKey.SHARE_GROUP_HEARTBEAT, "0-1", "0+", REQUEST, RESPONSE)
