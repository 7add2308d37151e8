"""ConsumerGroupDescribe (key 69): the consumer groups (KIP-848) a coordinator holds, with their
epochs, assignor and each member's subscription, current and target assignment (admin clients'
describe of a ``group.protocol=consumer`` group).

Declared from Kafka's ConsumerGroupDescribeRequest.json / ConsumerGroupDescribeResponse.json,
versions 0-1 (flexible 0+). v1 adds each member's MemberType (KIP-1099: 0 a classic member inside
a consumer group, 1 a consumer-protocol member, -1 unknown); librdkafka 2.16 asks v0.
"""

from ..api_keys import ApiKey
from ..schema import BOOL, INT8, INT16, INT32, STRING, UUID, Array, F, Struct, api

REQUEST = Struct(
    "ConsumerGroupDescribeRequest",
    F("group_ids", Array(STRING)),
    F("include_authorized_operations", BOOL),
)

TOPIC_PARTITIONS = Struct(
    "ConsumerGroupDescribeTopicPartitions",
    F("topic_id", UUID),
    F("topic_name", STRING),
    F("partitions", Array(INT32)),
)

ASSIGNMENT = Struct(
    "ConsumerGroupDescribeAssignment",
    F("topic_partitions", Array(TOPIC_PARTITIONS)),
)

MEMBER = Struct(
    "ConsumerGroupDescribeMember",
    F("member_id", STRING),
    F("instance_id", STRING, nullable="0+", default=None),
    F("rack_id", STRING, nullable="0+", default=None),
    F("member_epoch", INT32),
    F("client_id", STRING),
    F("client_host", STRING),
    F("subscribed_topic_names", Array(STRING)),
    F("subscribed_topic_regex", STRING, nullable="0+", default=None),
    F("assignment", ASSIGNMENT),
    F("target_assignment", ASSIGNMENT),
    F("member_type", INT8, "1+", default=-1),
)

DESCRIBED_GROUP = Struct(
    "ConsumerGroupDescribeDescribedGroup",
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+", default=None),
    F("group_id", STRING),
    F("group_state", STRING),
    F("group_epoch", INT32),
    F("assignment_epoch", INT32),
    F("assignor_name", STRING),
    F("members", Array(MEMBER)),
    F("authorized_operations", INT32, default=-2147483648),
)

RESPONSE = Struct(
    "ConsumerGroupDescribeResponse",
    F("throttle_time_ms", INT32),
    F("groups", Array(DESCRIBED_GROUP)),
)

CONSUMER_GROUP_DESCRIBE = api(ApiKey.CONSUMER_GROUP_DESCRIBE, "0-1", "0+", REQUEST, RESPONSE)
