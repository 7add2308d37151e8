"""DescribeGroups (key 15): groups' state, protocol and members (with their metadata and
assignments), for admin clients.

Declared from Kafka 4.1.1's DescribeGroupsRequest.json / DescribeGroupsResponse.json, versions 0-6
(flexible 5+; v6, KIP-1043: an error message per group, GROUP_ID_NOT_FOUND for a group not
known). Request: v3+
include authorized operations. Response: v1+ throttle time; v3+ each group's authorized
operations (a bitfield, -2147483648 when not asked for); v4+ each member's group instance id.
"""

from ..acl import AUTHORIZED_OPERATIONS_OMITTED
from ..api_keys import ApiKey
from ..schema import BOOL, BYTES, INT16, INT32, STRING, Array, F, Struct, api

REQUEST = Struct(
    "DescribeGroupsRequest",
    F("groups", Array(STRING)),
    F("include_authorized_operations", BOOL, "3+"),
)

DESCRIBED_GROUP_MEMBER = Struct(
    "DescribedGroupMember",
    F("member_id", STRING),
    F("group_instance_id", STRING, "4+", nullable="4+", default=None),
    F("client_id", STRING),
    F("client_host", STRING),
    F("member_metadata", BYTES),
    F("member_assignment", BYTES),
)

DESCRIBED_GROUP = Struct(
    "DescribedGroup",
    F("error_code", INT16),
    F("error_message", STRING, "6+", nullable="6+", default=None),
    F("group_id", STRING),
    F("group_state", STRING),
    F("protocol_type", STRING),
    F("protocol_data", STRING),
    F("members", Array(DESCRIBED_GROUP_MEMBER)),
    F("authorized_operations", INT32, "3+", default=AUTHORIZED_OPERATIONS_OMITTED),
)

RESPONSE = Struct(
    "DescribeGroupsResponse",
    F("throttle_time_ms", INT32, "1+"),
    F("groups", Array(DESCRIBED_GROUP)),
)

DESCRIBE_GROUPS = api(ApiKey.DESCRIBE_GROUPS, "0-6", "5+", REQUEST, RESPONSE)
