"""DeleteShareGroupState (key 86, KIP-932): the group coordinator has the share coordinator forget
share-partitions' state (DeleteShareGroupOffsets, a deleted share group).

Declared from Kafka 4.1's DeleteShareGroupStateRequest.json / Response.json, version 0, flexible.
Inter-broker (CLUSTER_ACTION on the cluster).
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, STRING, UUID, Array, F, Struct, api

REQUEST = Struct(
    "DeleteShareGroupStateRequest",
    F("group_id", STRING),
    F("topics", Array(Struct(
        "DeleteStateData",
        F("topic_id", UUID),
        F("partitions", Array(Struct(
            "DeleteShareGroupStatePartitionData",
            F("partition", INT32),
        ))),
    ))),
)

RESPONSE = Struct(
    "DeleteShareGroupStateResponse",
    F("results", Array(Struct(
        "DeleteStateResult",
        F("topic_id", UUID),
        F("partitions", Array(Struct(
            "DeleteShareGroupStatePartitionResult",
            F("partition", INT32),
            F("error_code", INT16),
            F("error_message", STRING, nullable="0+", default=None),
        ))),
    ))),
)

DELETE_SHARE_GROUP_STATE = api(ApiKey.DELETE_SHARE_GROUP_STATE, "0", "0+", REQUEST, RESPONSE)
