"""LeaveGroup (key 13): members leave a group, so that it rebalances without waiting for their
session timeouts.

Declared from Kafka 3.9's LeaveGroupRequest.json / LeaveGroupResponse.json, versions 0-5 (flexible
4+). Request: v0-2 one member id; v3+ a batch of members, each a member id and a group instance id
(KIP-345); v5+ each member's reason (KIP-800). Response: v1+ throttle time; v3+ an error per
member besides the top-level one.
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, STRING, Array, F, Struct, api

MEMBER_IDENTITY = Struct(
    "MemberIdentity",
    F("member_id", STRING, "3+"),
    F("group_instance_id", STRING, "3+", nullable="3+", default=None),
    F("reason", STRING, "5+", nullable="5+", default=None),
)

REQUEST = Struct(
    "LeaveGroupRequest",
    F("group_id", STRING),
    F("member_id", STRING, "0-2"),
    F("members", Array(MEMBER_IDENTITY), "3+"),
)

MEMBER_RESPONSE = Struct(
    "MemberResponse",
    F("member_id", STRING, "3+"),
    F("group_instance_id", STRING, "3+", nullable="3+"),
    F("error_code", INT16, "3+"),
)

RESPONSE = Struct(
    "LeaveGroupResponse",
    F("throttle_time_ms", INT32, "1+"),
    F("error_code", INT16),
    F("members", Array(MEMBER_RESPONSE), "3+"),
)

LEAVE_GROUP = api(ApiKey.LEAVE_GROUP, "0-5", "4+", REQUEST, RESPONSE)
