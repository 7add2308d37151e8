"""BeginQuorumEpoch (key 53): a newly elected KRaft leader tells each voter of its epoch.

Declared from Kafka 4.1.1's BeginQuorumEpochRequest.json / BeginQuorumEpochResponse.json,
versions 0-1, flexible 1+. Served on controller listeners only. Request: v1+ the receiving
voter's id and directory id and the leader's endpoints (KIP-853). Response: v1+ the tagged
leader endpoints (tag 0).
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, STRING, UINT16, UUID, Array, F, Struct, api

REQUEST_PARTITION = Struct(
    "BeginQuorumEpochPartitionData",
    F("partition_index", INT32),
    F("voter_directory_id", UUID, "1+"),
    F("leader_id", INT32),
    F("leader_epoch", INT32),
)

REQUEST_TOPIC = Struct(
    "BeginQuorumEpochTopicData",
    F("topic_name", STRING),
    F("partitions", Array(REQUEST_PARTITION)),
)

LEADER_ENDPOINT = Struct(
    "BeginQuorumEpochLeaderEndpoint",
    F("name", STRING, "1+"),
    F("host", STRING, "1+"),
    F("port", UINT16, "1+"),
)

REQUEST = Struct(
    "BeginQuorumEpochRequest",
    F("cluster_id", STRING, nullable="0+", default=None),
    F("voter_id", INT32, "1+", default=-1),
    F("topics", Array(REQUEST_TOPIC)),
    F("leader_endpoints", Array(LEADER_ENDPOINT), "1+"),
)

RESPONSE_PARTITION = Struct(
    "BeginQuorumEpochResponsePartitionData",
    F("partition_index", INT32),
    F("error_code", INT16),
    F("leader_id", INT32),
    F("leader_epoch", INT32),
)

RESPONSE_TOPIC = Struct(
    "BeginQuorumEpochResponseTopicData",
    F("topic_name", STRING),
    F("partitions", Array(RESPONSE_PARTITION)),
)

NODE_ENDPOINT = Struct(
    "BeginQuorumEpochNodeEndpoint",
    F("node_id", INT32, "1+"),
    F("host", STRING, "1+"),
    F("port", UINT16, "1+"),
)

RESPONSE = Struct(
    "BeginQuorumEpochResponse",
    F("error_code", INT16),
    F("topics", Array(RESPONSE_TOPIC)),
    F("node_endpoints", Array(NODE_ENDPOINT), "1+", tag=0),
)

BEGIN_QUORUM_EPOCH = api(ApiKey.BEGIN_QUORUM_EPOCH, "0-1", "1+", REQUEST, RESPONSE)
