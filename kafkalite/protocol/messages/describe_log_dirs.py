"""DescribeLogDirs (key 35): a broker's log dirs, the partitions each holds with their size and
offset lag, and the dir's volume's total and usable bytes (KIP-113, kafka-log-dirs.sh and
AdminClient's describeLogDirs / describeReplicaLogDirs).

Declared from Kafka's DescribeLogDirsRequest.json / DescribeLogDirsResponse.json, versions 0-4,
flexible from 2. v1 is v0 (throttling before the answer); v3 adds the top-level ErrorCode
(KIP-784); v4 adds each dir's TotalBytes and UsableBytes (KIP-827, -1 when unknown). The request's
Topics is nullable: null asks for every partition the broker has.
"""

from ..api_keys import ApiKey
from ..schema import BOOL, INT16, INT32, INT64, STRING, Array, F, Struct, api

UNKNOWN_VOLUME_BYTES = -1  # DescribeLogDirsResponse.UNKNOWN_VOLUME_BYTES
INVALID_OFFSET_LAG = -1  # DescribeLogDirsResponse.INVALID_OFFSET_LAG

DESCRIBABLE_LOG_DIR_TOPIC = Struct(
    "DescribableLogDirTopic",
    F("topic", STRING),
    F("partitions", Array(INT32)),
)

REQUEST = Struct(
    "DescribeLogDirsRequest",
    F("topics", Array(DESCRIBABLE_LOG_DIR_TOPIC), nullable="0+", default=None),
)

DESCRIBE_LOG_DIRS_PARTITION = Struct(
    "DescribeLogDirsPartition",
    F("partition_index", INT32),
    F("partition_size", INT64),
    F("offset_lag", INT64),
    F("is_future_key", BOOL),
)

DESCRIBE_LOG_DIRS_TOPIC = Struct(
    "DescribeLogDirsTopic",
    F("name", STRING),
    F("partitions", Array(DESCRIBE_LOG_DIRS_PARTITION)),
)

DESCRIBE_LOG_DIRS_RESULT = Struct(
    "DescribeLogDirsResult",
    F("error_code", INT16),
    F("log_dir", STRING),
    F("topics", Array(DESCRIBE_LOG_DIRS_TOPIC)),
    F("total_bytes", INT64, "4+", default=UNKNOWN_VOLUME_BYTES),
    F("usable_bytes", INT64, "4+", default=UNKNOWN_VOLUME_BYTES),
)

RESPONSE = Struct(
    "DescribeLogDirsResponse",
    F("throttle_time_ms", INT32),
    F("error_code", INT16, "3+", default=0),
    F("results", Array(DESCRIBE_LOG_DIRS_RESULT)),
)

DESCRIBE_LOG_DIRS = api(ApiKey.DESCRIBE_LOG_DIRS, "0-4", "2+", REQUEST, RESPONSE)
