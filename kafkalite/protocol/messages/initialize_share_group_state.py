"""InitializeShareGroupState (key 83, KIP-932): a broker asks the share coordinator to start (or
restart, with a higher state epoch) a share-partition's state at a start offset.

Declared from Kafka 4.1's InitializeShareGroupStateRequest.json / Response.json, version 0,
flexible. Inter-broker (CLUSTER_ACTION on the cluster).
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, INT64, STRING, UUID, Array, F, Struct, api

REQUEST = Struct(
    "InitializeShareGroupStateRequest",
    F("group_id", STRING),
    F("topics", Array(Struct(
        "InitializeStateData",
        F("topic_id", UUID),
        F("partitions", Array(Struct(
            "InitializeShareGroupStatePartitionData",
            F("partition", INT32),
            F("state_epoch", INT32),
            F("start_offset", INT64),
        ))),
    ))),
)

RESPONSE = Struct(
    "InitializeShareGroupStateResponse",
    F("results", Array(Struct(
        "InitializeStateResult",
        F("topic_id", UUID),
        F("partitions", Array(Struct(
            "InitializeShareGroupStatePartitionResult",
            F("partition", INT32),
            F("error_code", INT16),
            F("error_message", STRING, nullable="0+", default=None),
        ))),
    ))),
)

INITIALIZE_SHARE_GROUP_STATE = api(ApiKey.INITIALIZE_SHARE_GROUP_STATE, "0", "0+", REQUEST, RESPONSE)
