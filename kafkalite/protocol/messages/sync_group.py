"""SyncGroup (key 14): after a JoinGroup, the leader sends every member's assignment and each
member (the leader too) gets back its own.

Declared from Kafka 3.9's SyncGroupRequest.json / SyncGroupResponse.json, versions 0-5 (flexible
4+). Request: v3+ group instance id (static membership, KIP-345); v5+ protocol type and name,
which the coordinator checks against the group's (KIP-559). Response: v1+ throttle time; v5+
protocol type and name.
"""

from ..api_keys import ApiKey
from ..schema import BYTES, INT16, INT32, STRING, Array, F, Struct, api

SYNC_GROUP_REQUEST_ASSIGNMENT = Struct(
    "SyncGroupRequestAssignment",
    F("member_id", STRING),
    F("assignment", BYTES),
)

REQUEST = Struct(
    "SyncGroupRequest",
    F("group_id", STRING),
    F("generation_id", INT32),
    F("member_id", STRING),
    F("group_instance_id", STRING, "3+", nullable="3+", default=None),
    F("protocol_type", STRING, "5+", nullable="5+", default=None),
    F("protocol_name", STRING, "5+", nullable="5+", default=None),
    F("assignments", Array(SYNC_GROUP_REQUEST_ASSIGNMENT)),
)

RESPONSE = Struct(
    "SyncGroupResponse",
    F("throttle_time_ms", INT32, "1+"),
    F("error_code", INT16),
    F("protocol_type", STRING, "5+", nullable="5+", default=None),
    F("protocol_name", STRING, "5+", nullable="5+", default=None),
    F("assignment", BYTES),
)

SYNC_GROUP = api(ApiKey.SYNC_GROUP, "0-5", "4+", REQUEST, RESPONSE)
