"""ListPartitionReassignments (key 46): the reassignments in progress, with each partition's
replicas (target then removing), the replicas being added and those being removed (KIP-455;
kafka-reassign-partitions.sh --verify/--list and AdminClient's listPartitionReassignments).

Declared from Kafka's ListPartitionReassignmentsRequest.json / ListPartitionReassignmentsResponse.json
of Kafka 4.1, version 0, flexible. The request's Topics is nullable: null lists every partition
being reassigned.
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, STRING, Array, F, Struct, api

REQUEST_TOPIC = Struct(
    "ListPartitionReassignmentsTopics",
    F("name", STRING),
    F("partition_indexes", Array(INT32)),
)

REQUEST = Struct(
    "ListPartitionReassignmentsRequest",
    F("timeout_ms", INT32, default=60000),
    F("topics", Array(REQUEST_TOPIC), nullable="0+", default=None),
)

ONGOING_PARTITION = Struct(
    "OngoingPartitionReassignment",
    F("partition_index", INT32),
    F("replicas", Array(INT32)),
    F("adding_replicas", Array(INT32)),
    F("removing_replicas", Array(INT32)),
)

ONGOING_TOPIC = Struct(
    "OngoingTopicReassignment",
    F("name", STRING),
    F("partitions", Array(ONGOING_PARTITION)),
)

RESPONSE = Struct(
    "ListPartitionReassignmentsResponse",
    F("throttle_time_ms", INT32),
    F("error_code", INT16, default=0),
    F("error_message", STRING, nullable="0+", default=None),
    F("topics", Array(ONGOING_TOPIC)),
)

LIST_PARTITION_REASSIGNMENTS = api(ApiKey.LIST_PARTITION_REASSIGNMENTS, "0", "0+", REQUEST, RESPONSE)
