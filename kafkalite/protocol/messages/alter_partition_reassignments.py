"""AlterPartitionReassignments (key 45): move partitions to other replicas, or cancel a move
(KIP-455; kafka-reassign-partitions.sh and AdminClient's alterPartitionReassignments).

Declared from Kafka's AlterPartitionReassignmentsRequest.json / AlterPartitionReassignmentsResponse.json
of Kafka 4.1, versions 0-1, flexible from 0. v1 (KIP-860) adds the request's
AllowReplicationFactorChange (default true: false refuses a target of another size with
INVALID_REPLICATION_FACTOR) and echoes it in the response. A partition's Replicas is nullable:
null cancels the reassignment in progress.
"""

from ..api_keys import ApiKey
from ..schema import BOOL, INT16, INT32, STRING, Array, F, Struct, api

REASSIGNABLE_PARTITION = Struct(
    "ReassignablePartition",
    F("partition_index", INT32),
    F("replicas", Array(INT32), nullable="0+", default=None),
)

REASSIGNABLE_TOPIC = Struct(
    "ReassignableTopic",
    F("name", STRING),
    F("partitions", Array(REASSIGNABLE_PARTITION)),
)

REQUEST = Struct(
    "AlterPartitionReassignmentsRequest",
    F("timeout_ms", INT32, default=60000),
    F("allow_replication_factor_change", BOOL, "1+", default=True),
    F("topics", Array(REASSIGNABLE_TOPIC)),
)

PARTITION_RESPONSE = Struct(
    "ReassignablePartitionResponse",
    F("partition_index", INT32),
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+", default=None),
)

TOPIC_RESPONSE = Struct(
    "ReassignableTopicResponse",
    F("name", STRING),
    F("partitions", Array(PARTITION_RESPONSE)),
)

RESPONSE = Struct(
    "AlterPartitionReassignmentsResponse",
    F("throttle_time_ms", INT32),
    F("allow_replication_factor_change", BOOL, "1+", default=True),
    F("error_code", INT16, default=0),
    F("error_message", STRING, nullable="0+", default=None),
    F("responses", Array(TOPIC_RESPONSE)),
)

ALTER_PARTITION_REASSIGNMENTS = api(ApiKey.ALTER_PARTITION_REASSIGNMENTS, "0-1", "0+", REQUEST, RESPONSE)
