"""StopReplica (key 5): the controller tells a broker to stop (and maybe delete) replicas.

Removed from Kafka in 4.0; declared from the 3.x spec. v0 lists (topic, partition) pairs; v1-2
group partition indexes by topic, with one ``delete_partitions`` flag for the whole request; v3+
carry a per-partition leader epoch and delete flag; v4+ add ``is_kraft_controller``.
"""

from ..api_keys import ApiKey
from ..schema import BOOL, INT16, INT32, INT64, STRING, Array, F, Struct, api

STOP_REPLICA_PARTITION_V0 = Struct(
    "StopReplicaPartitionV0",
    F("topic_name", STRING, "0"),
    F("partition_index", INT32, "0"),
)

STOP_REPLICA_TOPIC_V1 = Struct(
    "StopReplicaTopicV1",
    F("name", STRING, "1-2"),
    F("partition_indexes", Array(INT32), "1-2"),
)

STOP_REPLICA_PARTITION_STATE = Struct(
    "StopReplicaPartitionState",
    F("partition_index", INT32, "3+"),
    F("leader_epoch", INT32, "3+", default=-1),
    F("delete_partition", BOOL, "3+"),
)

STOP_REPLICA_TOPIC_STATE = Struct(
    "StopReplicaTopicState",
    F("topic_name", STRING, "3+"),
    F("partition_states", Array(STOP_REPLICA_PARTITION_STATE), "3+"),
)

REQUEST = Struct(
    "StopReplicaRequest",
    F("controller_id", INT32),
    F("is_kraft_controller", BOOL, "4+", default=False),
    F("controller_epoch", INT32),
    F("broker_epoch", INT64, "1+", default=-1),
    F("delete_partitions", BOOL, "0-2"),
    F("ungrouped_partitions", Array(STOP_REPLICA_PARTITION_V0), "0"),
    F("topics", Array(STOP_REPLICA_TOPIC_V1), "1-2"),
    F("topic_states", Array(STOP_REPLICA_TOPIC_STATE), "3+"),
)

STOP_REPLICA_PARTITION_ERROR = Struct(
    "StopReplicaPartitionError",
    F("topic_name", STRING),
    F("partition_index", INT32),
    F("error_code", INT16),
)

RESPONSE = Struct(
    "StopReplicaResponse",
    F("error_code", INT16),
    F("partition_errors", Array(STOP_REPLICA_PARTITION_ERROR)),
)

STOP_REPLICA = api(ApiKey.STOP_REPLICA, "0-4", "2+", REQUEST, RESPONSE)
