"""JoinGroup (key 11): a member joins a group (or rejoins it in a rebalance); the coordinator
picks one protocol all members support, a generation and a leader, and sends the leader every
member's metadata for that protocol.

Declared from Kafka 3.9's JoinGroupRequest.json / JoinGroupResponse.json, versions 0-9 (flexible
6+). Request: v1+ rebalance timeout (v0: the session timeout serves as both); v4+ a new member is
first answered MEMBER_ID_REQUIRED with its id and joins again with it (KIP-394); v5+ group
instance id (static membership, KIP-345); v8+ reason (KIP-800). Response: v2+ throttle time; v5+
each member's group instance id; v7+ protocol type, and the protocol name may be null (KIP-559);
v9+ skip assignment (KIP-814).
"""

from ..api_keys import ApiKey
from ..schema import BOOL, BYTES, INT16, INT32, STRING, Array, F, Struct, api

JOIN_GROUP_REQUEST_PROTOCOL = Struct(
    "JoinGroupRequestProtocol",
    F("name", STRING),
    F("metadata", BYTES),
)

REQUEST = Struct(
    "JoinGroupRequest",
    F("group_id", STRING),
    F("session_timeout_ms", INT32),
    F("rebalance_timeout_ms", INT32, "1+", default=-1),
    F("member_id", STRING),
    F("group_instance_id", STRING, "5+", nullable="5+", default=None),
    F("protocol_type", STRING),
    F("protocols", Array(JOIN_GROUP_REQUEST_PROTOCOL)),
    F("reason", STRING, "8+", nullable="8+", default=None),
)

JOIN_GROUP_RESPONSE_MEMBER = Struct(
    "JoinGroupResponseMember",
    F("member_id", STRING),
    F("group_instance_id", STRING, "5+", nullable="5+", default=None),
    F("metadata", BYTES),
)

RESPONSE = Struct(
    "JoinGroupResponse",
    F("throttle_time_ms", INT32, "2+"),
    F("error_code", INT16),
    F("generation_id", INT32, default=-1),
    F("protocol_type", STRING, "7+", nullable="7+", default=None),
    F("protocol_name", STRING, nullable="7+"),
    F("leader", STRING),
    F("skip_assignment", BOOL, "9+", default=False),
    F("member_id", STRING),
    F("members", Array(JOIN_GROUP_RESPONSE_MEMBER)),
)

JOIN_GROUP = api(ApiKey.JOIN_GROUP, "0-9", "6+", REQUEST, RESPONSE)
