"""ElectLeaders (key 43): elect the preferred replica, or any live replica of a partition without
a leader (KIP-183, KIP-460; kafka-leader-election.sh and AdminClient's electLeaders).

Declared from Kafka's ElectLeadersRequest.json / ElectLeadersResponse.json, versions 0-2, flexible
from 2. v1 adds the request's ElectionType (0 PREFERRED, 1 UNCLEAN; v0 is PREFERRED) and the
response's top-level ErrorCode. The request's TopicPartitions is nullable: null asks for every
partition.
"""

from ..api_keys import ApiKey
from ..schema import INT8, INT16, INT32, STRING, Array, F, Struct, api

PREFERRED = 0  # ElectionType.PREFERRED
UNCLEAN = 1  # ElectionType.UNCLEAN

TOPIC_PARTITIONS = Struct(
    "TopicPartitions",
    F("topic", STRING),
    F("partitions", Array(INT32)),
)

REQUEST = Struct(
    "ElectLeadersRequest",
    F("election_type", INT8, "1+", default=PREFERRED),
    F("topic_partitions", Array(TOPIC_PARTITIONS), nullable="0+", default=None),
    F("timeout_ms", INT32, default=60000),
)

PARTITION_RESULT = Struct(
    "PartitionResult",
    F("partition_id", INT32),
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+", default=None),
)

REPLICA_ELECTION_RESULT = Struct(
    "ReplicaElectionResult",
    F("topic", STRING),
    F("partition_result", Array(PARTITION_RESULT)),
)

RESPONSE = Struct(
    "ElectLeadersResponse",
    F("throttle_time_ms", INT32),
    F("error_code", INT16, "1+", default=0),
    F("replica_election_results", Array(REPLICA_ELECTION_RESULT)),
)

ELECT_LEADERS = api(ApiKey.ELECT_LEADERS, "0-2", "2+", REQUEST, RESPONSE)
