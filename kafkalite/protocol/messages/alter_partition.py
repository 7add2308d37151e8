"""AlterPartition (key 56, was AlterIsr, KIP-497): a partition's leader asks the controller to
change its ISR.

Declared from Kafka's AlterPartitionRequest.json / AlterPartitionResponse.json, versions 0-3, all
flexible (Kafka 4.0 dropped 0-1; 3.x brokers send them). v1+ the leader recovery state; v2+ topic
ids instead of names; v3+ the new ISR with each member's broker epoch (KIP-903) instead of the
bare ids. The controller answers each partition's state as it now is, or an error.
"""

from ..api_keys import ApiKey
from ..schema import INT8, INT16, INT32, INT64, STRING, UUID, Array, F, Struct, api

BROKER_STATE = Struct(
    "BrokerState",
    F("broker_id", INT32, "3+"),
    F("broker_epoch", INT64, "3+", default=-1),
)

PARTITION_DATA = Struct(
    "PartitionData",
    F("partition_index", INT32),
    F("leader_epoch", INT32),
    F("new_isr", Array(INT32), "0-2"),
    F("new_isr_with_epochs", Array(BROKER_STATE), "3+"),
    F("leader_recovery_state", INT8, "1+", default=0),
    F("partition_epoch", INT32),
)

TOPIC_DATA = Struct(
    "TopicData",
    F("topic_name", STRING, "0-1"),
    F("topic_id", UUID, "2+"),
    F("partitions", Array(PARTITION_DATA)),
)

REQUEST = Struct(
    "AlterPartitionRequest",
    F("broker_id", INT32),
    F("broker_epoch", INT64, default=-1),
    F("topics", Array(TOPIC_DATA)),
)

RESPONSE_PARTITION = Struct(
    "PartitionData",
    F("partition_index", INT32),
    F("error_code", INT16),
    F("leader_id", INT32),
    F("leader_epoch", INT32),
    F("isr", Array(INT32)),
    F("leader_recovery_state", INT8, "1+", default=0),
    F("partition_epoch", INT32),
)

RESPONSE_TOPIC = Struct(
    "TopicData",
    F("topic_name", STRING, "0-1"),
    F("topic_id", UUID, "2+"),
    F("partitions", Array(RESPONSE_PARTITION)),
)

RESPONSE = Struct(
    "AlterPartitionResponse",
    F("throttle_time_ms", INT32),
    F("error_code", INT16),
    F("topics", Array(RESPONSE_TOPIC)),
)

ALTER_PARTITION = api(ApiKey.ALTER_PARTITION, "0-3", "0+", REQUEST, RESPONSE)
