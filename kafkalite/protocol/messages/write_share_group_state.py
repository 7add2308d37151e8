"""WriteShareGroupState (key 85, KIP-932): a share-partition's leader records a change of its
state (the batches whose delivery state or count changed, the start offset) with the share
coordinator before it answers the acknowledgement; state and leader epochs fence stale writers.

Declared from Kafka 4.1's WriteShareGroupStateRequest.json / Response.json, version 0, flexible.
Inter-broker (CLUSTER_ACTION on the cluster).
"""

from ..api_keys import ApiKey
from ..schema import INT8, INT16, INT32, INT64, STRING, UUID, Array, F, Struct, api

STATE_BATCH = Struct(
    "WriteShareGroupStateStateBatch",
    F("first_offset", INT64),
    F("last_offset", INT64),
    F("delivery_state", INT8),
    F("delivery_count", INT16),
)

REQUEST = Struct(
    "WriteShareGroupStateRequest",
    F("group_id", STRING),
    F("topics", Array(Struct(
        "WriteStateData",
        F("topic_id", UUID),
        F("partitions", Array(Struct(
            "WriteShareGroupStatePartitionData",
            F("partition", INT32),
            F("state_epoch", INT32),
            F("leader_epoch", INT32),
            F("start_offset", INT64),
            F("state_batches", Array(STATE_BATCH)),
        ))),
    ))),
)

RESPONSE = Struct(
    "WriteShareGroupStateResponse",
    F("results", Array(Struct(
        "WriteStateResult",
        F("topic_id", UUID),
        F("partitions", Array(Struct(
            "WriteShareGroupStatePartitionResult",
            F("partition", INT32),
            F("error_code", INT16),
            F("error_message", STRING, nullable="0+", default=None),
        ))),
    ))),
)

WRITE_SHARE_GROUP_STATE = api(ApiKey.WRITE_SHARE_GROUP_STATE, "0", "0+", REQUEST, RESPONSE)
