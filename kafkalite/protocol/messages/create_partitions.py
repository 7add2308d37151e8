"""CreatePartitions (key 37): raise topics' partition counts.

Declared from Kafka's CreatePartitionsRequest.json / CreatePartitionsResponse.json, versions 0-3
(flexible 2+; v3 may answer THROTTLING_QUOTA_EXCEEDED). ``assignments``, when not null, gives the
replicas of each new partition, in order.
"""

from ..api_keys import ApiKey
from ..schema import BOOL, INT16, INT32, STRING, Array, F, Struct, api

CREATE_PARTITIONS_ASSIGNMENT = Struct(
    "CreatePartitionsAssignment",
    F("broker_ids", Array(INT32)),
)

CREATE_PARTITIONS_TOPIC = Struct(
    "CreatePartitionsTopic",
    F("name", STRING),
    F("count", INT32),
    F("assignments", Array(CREATE_PARTITIONS_ASSIGNMENT), nullable="0+"),
)

REQUEST = Struct(
    "CreatePartitionsRequest",
    F("topics", Array(CREATE_PARTITIONS_TOPIC)),
    F("timeout_ms", INT32),
    F("validate_only", BOOL),
)

CREATE_PARTITIONS_TOPIC_RESULT = Struct(
    "CreatePartitionsTopicResult",
    F("name", STRING),
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+", default=None),
)

RESPONSE = Struct(
    "CreatePartitionsResponse",
    F("throttle_time_ms", INT32),
    F("results", Array(CREATE_PARTITIONS_TOPIC_RESULT)),
)

CREATE_PARTITIONS = api(ApiKey.CREATE_PARTITIONS, "0-3", "2+", REQUEST, RESPONSE)
