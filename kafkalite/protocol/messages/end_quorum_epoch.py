"""EndQuorumEpoch (key 54): a resigning KRaft leader tells the voters its epoch is over.

Declared from Kafka 4.1.1's EndQuorumEpochRequest.json / EndQuorumEpochResponse.json, versions
0-1, flexible 1+. Served on controller listeners only. Request: v0 ``preferred_successors``
(voter ids, best first); v1 ``preferred_candidates`` with directory ids instead, and the leader's
endpoints (KIP-853). Response: v1+ the tagged leader endpoints (tag 0).
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, STRING, UINT16, UUID, Array, F, Struct, api

REPLICA_INFO = Struct(
    "EndQuorumEpochReplicaInfo",
    F("candidate_id", INT32, "1+"),
    F("candidate_directory_id", UUID, "1+"),
)

REQUEST_PARTITION = Struct(
    "EndQuorumEpochPartitionData",
    F("partition_index", INT32),
    F("leader_id", INT32),
    F("leader_epoch", INT32),
    F("preferred_successors", Array(INT32), "0"),
    F("preferred_candidates", Array(REPLICA_INFO), "1+"),
)

REQUEST_TOPIC = Struct(
    "EndQuorumEpochTopicData",
    F("topic_name", STRING),
    F("partitions", Array(REQUEST_PARTITION)),
)

LEADER_ENDPOINT = Struct(
    "EndQuorumEpochLeaderEndpoint",
    F("name", STRING, "1+"),
    F("host", STRING, "1+"),
    F("port", UINT16, "1+"),
)

REQUEST = Struct(
    "EndQuorumEpochRequest",
    F("cluster_id", STRING, nullable="0+", default=None),
    F("topics", Array(REQUEST_TOPIC)),
    F("leader_endpoints", Array(LEADER_ENDPOINT), "1+"),
)

RESPONSE_PARTITION = Struct(
    "EndQuorumEpochResponsePartitionData",
    F("partition_index", INT32),
    F("error_code", INT16),
    F("leader_id", INT32),
    F("leader_epoch", INT32),
)

RESPONSE_TOPIC = Struct(
    "EndQuorumEpochResponseTopicData",
    F("topic_name", STRING),
    F("partitions", Array(RESPONSE_PARTITION)),
)

NODE_ENDPOINT = Struct(
    "EndQuorumEpochNodeEndpoint",
    F("node_id", INT32, "1+"),
    F("host", STRING, "1+"),
    F("port", UINT16, "1+"),
)

RESPONSE = Struct(
    "EndQuorumEpochResponse",
    F("error_code", INT16),
    F("topics", Array(RESPONSE_TOPIC)),
    F("node_endpoints", Array(NODE_ENDPOINT), "1+", tag=0),
)

END_QUORUM_EPOCH = api(ApiKey.END_QUORUM_EPOCH, "0-1", "1+", REQUEST, RESPONSE)
