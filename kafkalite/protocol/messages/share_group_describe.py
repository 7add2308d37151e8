"""ShareGroupDescribe (key 77): the members, epochs and assignments of share groups (KIP-932),
as AdminClient's describeShareGroups asks them.

Declared from Kafka's ShareGroupDescribeRequest.json / ShareGroupDescribeResponse.json: v0 (Kafka
4.0 early access) and v1 (4.1+, the stable version) have the same fields, all flexible.
"""

from ..acl import AUTHORIZED_OPERATIONS_OMITTED
from ..api_keys import ApiKey
from ..schema import BOOL, INT16, INT32, STRING, UUID, Array, F, Struct, api

REQUEST = Struct(
    "ShareGroupDescribeRequest",
    F("group_ids", Array(STRING)),
    F("include_authorized_operations", BOOL),
)

TOPIC_PARTITIONS = Struct(
    "TopicPartitions",
    F("topic_id", UUID),
    F("topic_name", STRING),
    F("partitions", Array(INT32)),
)

ASSIGNMENT = Struct(
    "Assignment",
    F("topic_partitions", Array(TOPIC_PARTITIONS)),
)

MEMBER = Struct(
    "Member",
    F("member_id", STRING),
    F("rack_id", STRING, nullable="0+", default=None),
    F("member_epoch", INT32),
    F("client_id", STRING),
    F("client_host", STRING),
    F("subscribed_topic_names", Array(STRING)),
    F("assignment", ASSIGNMENT),
)

DESCRIBED_GROUP = Struct(
    "DescribedGroup",
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+", default=None),
    F("group_id", STRING),
    F("group_state", STRING),
    F("group_epoch", INT32),
    F("assignment_epoch", INT32),
    F("assignor_name", STRING),
    F("members", Array(MEMBER)),
    F("authorized_operations", INT32, default=AUTHORIZED_OPERATIONS_OMITTED),
)

RESPONSE = Struct(
    "ShareGroupDescribeResponse",
    F("throttle_time_ms", INT32),
    F("groups", Array(DESCRIBED_GROUP)),
)

SHARE_GROUP_DESCRIBE = api(ApiKey.SHARE_GROUP_DESCRIBE, "0-1", "0+", REQUEST, RESPONSE)
