"""ReadShareGroupState (key 84, KIP-932): a share-partition's leader reads its persisted state
(state epoch, start offset, the delivery state of the in-flight batches) from the share
coordinator when the share-partition is first used; its leader epoch fences older leaders.

Declared from Kafka 4.1's ReadShareGroupStateRequest.json / Response.json, version 0, flexible.
Inter-broker (CLUSTER_ACTION on the cluster).
"""

from ..api_keys import ApiKey
from ..schema import INT8, INT16, INT32, INT64, STRING, UUID, Array, F, Struct, api

STATE_BATCH = Struct(
    "ReadShareGroupStateStateBatch",
    F("first_offset", INT64),
    F("last_offset", INT64),
    F("delivery_state", INT8),
    F("delivery_count", INT16),
)

REQUEST = Struct(
    "ReadShareGroupStateRequest",
    F("group_id", STRING),
    F("topics", Array(Struct(
        "ReadStateData",
        F("topic_id", UUID),
        F("partitions", Array(Struct(
            "ReadShareGroupStatePartitionData",
            F("partition", INT32),
            F("leader_epoch", INT32),
        ))),
    ))),
)

RESPONSE = Struct(
    "ReadShareGroupStateResponse",
    F("results", Array(Struct(
        "ReadStateResult",
        F("topic_id", UUID),
        F("partitions", Array(Struct(
            "ReadShareGroupStatePartitionResult",
            F("partition", INT32),
            F("error_code", INT16),
            F("error_message", STRING, nullable="0+", default=None),
            F("state_epoch", INT32),
            F("start_offset", INT64),
            F("state_batches", Array(STATE_BATCH)),
        ))),
    ))),
)

READ_SHARE_GROUP_STATE = api(ApiKey.READ_SHARE_GROUP_STATE, "0", "0+", REQUEST, RESPONSE)
