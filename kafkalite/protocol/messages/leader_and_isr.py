"""LeaderAndIsr (key 4): the controller tells a broker which replicas it leads or follows.

Removed from Kafka in 4.0; declared from the 3.x spec (3.3+ names: ``partition_epoch`` was
``ZkVersion`` before). v0-1 list partition states at the top level, each with its topic name; v2+
group them by topic; v5+ add topic ids and the request type; v6+ the leader recovery state; v7+
``is_kraft_controller`` (a regular field, not tagged). The response lists partition errors with
topic names in v0-4 and groups them by topic id in v5+.
"""

from ..api_keys import ApiKey
from ..schema import BOOL, INT8, INT16, INT32, INT64, STRING, UUID, Array, F, Struct, api

# commonStructs: shared by the top-level v0-1 array and the per-topic v2+ array.
LEADER_AND_ISR_PARTITION_STATE = Struct(
    "LeaderAndIsrPartitionState",
    F("topic_name", STRING, "0-1"),
    F("partition_index", INT32),
    F("controller_epoch", INT32),
    F("leader", INT32),
    F("leader_epoch", INT32),
    F("isr", Array(INT32)),
    F("partition_epoch", INT32),
    F("replicas", Array(INT32)),
    F("adding_replicas", Array(INT32), "3+"),
    F("removing_replicas", Array(INT32), "3+"),
    F("is_new", BOOL, "1+", default=False),
    F("leader_recovery_state", INT8, "6+", default=0),
)

LEADER_AND_ISR_TOPIC_STATE = Struct(
    "LeaderAndIsrTopicState",
    F("topic_name", STRING, "2+"),
    F("topic_id", UUID, "5+"),
    F("partition_states", Array(LEADER_AND_ISR_PARTITION_STATE), "2+"),
)

LEADER_AND_ISR_LIVE_LEADER = Struct(
    "LeaderAndIsrLiveLeader",
    F("broker_id", INT32),
    F("host_name", STRING),
    F("port", INT32),
)

REQUEST = Struct(
    "LeaderAndIsrRequest",
    F("controller_id", INT32),
    F("is_kraft_controller", BOOL, "7+", default=False),
    F("controller_epoch", INT32),
    F("broker_epoch", INT64, "2+", default=-1),
    F("type", INT8, "5+"),
    F("ungrouped_partition_states", Array(LEADER_AND_ISR_PARTITION_STATE), "0-1"),
    F("topic_states", Array(LEADER_AND_ISR_TOPIC_STATE), "2+"),
    F("live_leaders", Array(LEADER_AND_ISR_LIVE_LEADER)),
)

# commonStructs: shared by the top-level v0-4 array and the per-topic v5+ array.
LEADER_AND_ISR_PARTITION_ERROR = Struct(
    "LeaderAndIsrPartitionError",
    F("topic_name", STRING, "0-4"),
    F("partition_index", INT32),
    F("error_code", INT16),
)

LEADER_AND_ISR_TOPIC_ERROR = Struct(
    "LeaderAndIsrTopicError",
    F("topic_id", UUID, "5+"),
    F("partition_errors", Array(LEADER_AND_ISR_PARTITION_ERROR), "5+"),
)

RESPONSE = Struct(
    "LeaderAndIsrResponse",
    F("error_code", INT16),
    F("partition_errors", Array(LEADER_AND_ISR_PARTITION_ERROR), "0-4"),
    F("topics", Array(LEADER_AND_ISR_TOPIC_ERROR), "5+"),
)

LEADER_AND_ISR = api(ApiKey.LEADER_AND_ISR, "0-7", "4+", REQUEST, RESPONSE)
