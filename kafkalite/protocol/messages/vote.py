"""Vote (key 52): a KRaft candidate (or prospective candidate, KIP-996) asks a voter for its vote.

Declared from Kafka 4.1.1's VoteRequest.json / VoteResponse.json, versions 0-2, all flexible.
Served on controller listeners only. Request: v1+ the receiving voter's id and directory id and
the candidate's directory id (KIP-853); v2+ ``pre_vote`` (KIP-996). Kafka 4 renamed the
candidate's fields Replica* (ReplicaEpoch, ReplicaId, ReplicaDirectoryId): the wire is unchanged.
Response: v1+ the tagged leader endpoints (tag 0).
"""

from ..api_keys import ApiKey
from ..schema import BOOL, INT16, INT32, INT64, STRING, UINT16, UUID, Array, F, Struct, api

REQUEST_PARTITION = Struct(
    "VotePartitionData",
    F("partition_index", INT32),
    F("replica_epoch", INT32),
    F("replica_id", INT32),
    F("replica_directory_id", UUID, "1+"),
    F("voter_directory_id", UUID, "1+"),
    F("last_offset_epoch", INT32),
    F("last_offset", INT64),
    F("pre_vote", BOOL, "2+"),
)

REQUEST_TOPIC = Struct(
    "VoteTopicData",
    F("topic_name", STRING),
    F("partitions", Array(REQUEST_PARTITION)),
)

REQUEST = Struct(
    "VoteRequest",
    F("cluster_id", STRING, nullable="0+", default=None),
    F("voter_id", INT32, "1+", default=-1),
    F("topics", Array(REQUEST_TOPIC)),
)

RESPONSE_PARTITION = Struct(
    "VoteResponsePartitionData",
    F("partition_index", INT32),
    F("error_code", INT16),
    F("leader_id", INT32),
    F("leader_epoch", INT32),
    F("vote_granted", BOOL),
)

RESPONSE_TOPIC = Struct(
    "VoteResponseTopicData",
    F("topic_name", STRING),
    F("partitions", Array(RESPONSE_PARTITION)),
)

NODE_ENDPOINT = Struct(
    "VoteNodeEndpoint",
    F("node_id", INT32, "1+"),
    F("host", STRING, "1+"),
    F("port", UINT16, "1+"),
)

RESPONSE = Struct(
    "VoteResponse",
    F("error_code", INT16),
    F("topics", Array(RESPONSE_TOPIC)),
    F("node_endpoints", Array(NODE_ENDPOINT), "1+", tag=0),
)

VOTE = api(ApiKey.VOTE, "0-2", "0+", REQUEST, RESPONSE)
