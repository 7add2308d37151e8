"""AlterReplicaLogDirs (key 34): move replicas of this broker to other log dirs of it (KIP-113,
kafka-reassign-partitions.sh's log dirs and AdminClient's alterReplicaLogDirs).

Declared from Kafka's AlterReplicaLogDirsRequest.json / AlterReplicaLogDirsResponse.json as of
Kafka 4.x: versions 1-2 (v0 removed in 4.0, KIP-896; v1 is v0 with the throttle answered first),
flexible from 2. Request: per destination dir (its absolute path) the topics and partitions to
move there. Response: per topic and partition an error code.
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, STRING, Array, F, Struct, api

ALTER_REPLICA_LOG_DIR_TOPIC = Struct(
    "AlterReplicaLogDirTopic",
    F("name", STRING),
    F("partitions", Array(INT32)),
)

ALTER_REPLICA_LOG_DIR = Struct(
    "AlterReplicaLogDir",
    F("path", STRING),
    F("topics", Array(ALTER_REPLICA_LOG_DIR_TOPIC)),
)

REQUEST = Struct(
    "AlterReplicaLogDirsRequest",
    F("dirs", Array(ALTER_REPLICA_LOG_DIR)),
)

ALTER_REPLICA_LOG_DIR_PARTITION_RESULT = Struct(
    "AlterReplicaLogDirPartitionResult",
    F("partition_index", INT32),
    F("error_code", INT16),
)

ALTER_REPLICA_LOG_DIR_TOPIC_RESULT = Struct(
    "AlterReplicaLogDirTopicResult",
    F("topic_name", STRING),
    F("partitions", Array(ALTER_REPLICA_LOG_DIR_PARTITION_RESULT)),
)

RESPONSE = Struct(
    "AlterReplicaLogDirsResponse",
    F("throttle_time_ms", INT32),
    F("results", Array(ALTER_REPLICA_LOG_DIR_TOPIC_RESULT)),
)

ALTER_REPLICA_LOG_DIRS = api(ApiKey.ALTER_REPLICA_LOG_DIRS, "1-2", "2+", REQUEST, RESPONSE)
