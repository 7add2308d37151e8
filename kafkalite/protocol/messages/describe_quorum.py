"""DescribeQuorum (key 55): the KRaft leader's view of the quorum (KIP-595, kafka-metadata-quorum).

Declared from Kafka 4.1.1's DescribeQuorumRequest.json / DescribeQuorumResponse.json, versions
0-2, all flexible. Only the leader answers (others: NOT_LEADER_OR_FOLLOWER). Response: v1+ each
replica's last fetch and last caught-up timestamps (-1 unknown, KIP-836); v2+ error messages,
replica directory ids and the voters' listeners (``nodes``, KIP-853).
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, INT64, STRING, UINT16, UUID, Array, F, Struct, api

REQUEST_PARTITION = Struct(
    "DescribeQuorumPartitionData",
    F("partition_index", INT32),
)

REQUEST_TOPIC = Struct(
    "DescribeQuorumTopicData",
    F("topic_name", STRING),
    F("partitions", Array(REQUEST_PARTITION)),
)

REQUEST = Struct(
    "DescribeQuorumRequest",
    F("topics", Array(REQUEST_TOPIC)),
)

REPLICA_STATE = Struct(
    "DescribeQuorumReplicaState",
    F("replica_id", INT32),
    F("replica_directory_id", UUID, "2+"),
    F("log_end_offset", INT64),
    F("last_fetch_timestamp", INT64, "1+", default=-1),
    F("last_caught_up_timestamp", INT64, "1+", default=-1),
)

RESPONSE_PARTITION = Struct(
    "DescribeQuorumResponsePartitionData",
    F("partition_index", INT32),
    F("error_code", INT16),
    F("error_message", STRING, "2+", nullable="2+", default=None),
    F("leader_id", INT32),
    F("leader_epoch", INT32),
    F("high_watermark", INT64),
    F("current_voters", Array(REPLICA_STATE)),
    F("observers", Array(REPLICA_STATE)),
)

RESPONSE_TOPIC = Struct(
    "DescribeQuorumResponseTopicData",
    F("topic_name", STRING),
    F("partitions", Array(RESPONSE_PARTITION)),
)

LISTENER = Struct(
    "DescribeQuorumListener",
    F("name", STRING, "2+"),
    F("host", STRING, "2+"),
    F("port", UINT16, "2+"),
)

NODE = Struct(
    "DescribeQuorumNode",
    F("node_id", INT32, "2+"),
    F("listeners", Array(LISTENER), "2+"),
)

RESPONSE = Struct(
    "DescribeQuorumResponse",
    F("error_code", INT16),
    F("error_message", STRING, "2+", nullable="2+", default=None),
    F("topics", Array(RESPONSE_TOPIC)),
    F("nodes", Array(NODE), "2+"),
)

DESCRIBE_QUORUM = api(ApiKey.DESCRIBE_QUORUM, "0-2", "0+", REQUEST, RESPONSE)
