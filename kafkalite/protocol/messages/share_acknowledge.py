"""ShareAcknowledge (key 79): a share consumer acknowledges records it was delivered (Accept,
Release, Reject), without fetching (KIP-932); same acknowledgement batches as ShareFetch's, in the
member's share session (epoch -1 closes it).

Declared from Kafka's ShareAcknowledgeRequest.json / ShareAcknowledgeResponse.json (v0, Oct 2024;
v1-2 from apache/kafka trunk) and librdkafka 2.16's mock broker, which serves the v1 the client
sends: v1 has v0's fields (v2 adds Renew, not declared). All flexible.
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, STRING, UUID, Array, F, Struct, api
from .share_fetch import ACKNOWLEDGEMENT_BATCH, LEADER_ID_AND_EPOCH, NODE_ENDPOINT

ACKNOWLEDGE_PARTITION = Struct(
    "AcknowledgePartition",
    F("partition_index", INT32),
    F("acknowledgement_batches", Array(ACKNOWLEDGEMENT_BATCH)),
)

ACKNOWLEDGE_TOPIC = Struct(
    "AcknowledgeTopic",
    F("topic_id", UUID),
    F("partitions", Array(ACKNOWLEDGE_PARTITION)),
)

REQUEST = Struct(
    "ShareAcknowledgeRequest",
    F("group_id", STRING, nullable="0+", default=None),
    F("member_id", STRING, nullable="0+"),
    F("share_session_epoch", INT32),
    F("topics", Array(ACKNOWLEDGE_TOPIC)),
)

PARTITION_DATA = Struct(
    "PartitionData",
    F("partition_index", INT32),
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+", default=None),
    F("current_leader", LEADER_ID_AND_EPOCH),
)

TOPIC_RESPONSE = Struct(
    "ShareAcknowledgeTopicResponse",
    F("topic_id", UUID),
    F("partitions", Array(PARTITION_DATA)),
)

RESPONSE = Struct(
    "ShareAcknowledgeResponse",
    F("throttle_time_ms", INT32),
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+", default=None),
    F("responses", Array(TOPIC_RESPONSE)),
    F("node_endpoints", Array(NODE_ENDPOINT)),
)

SHARE_ACKNOWLEDGE = api(ApiKey.SHARE_ACKNOWLEDGE, "0-1", "0+", REQUEST, RESPONSE)
