"""Heartbeat (key 12): a group member tells its coordinator it is alive; the answer's error
(REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, ...) tells it to rejoin.

Declared from Kafka 3.9's HeartbeatRequest.json / HeartbeatResponse.json, versions 0-4 (flexible
4+). Request: v3+ group instance id (static membership, KIP-345). Response: v1+ throttle time.
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, STRING, F, Struct, api

REQUEST = Struct(
    "HeartbeatRequest",
    F("group_id", STRING),
    F("generation_id", INT32),
    F("member_id", STRING),
    F("group_instance_id", STRING, "3+", nullable="3+", default=None),
)

RESPONSE = Struct(
    "HeartbeatResponse",
    F("throttle_time_ms", INT32, "1+"),
    F("error_code", INT16),
)

HEARTBEAT = api(ApiKey.HEARTBEAT, "0-4", "4+", REQUEST, RESPONSE)
