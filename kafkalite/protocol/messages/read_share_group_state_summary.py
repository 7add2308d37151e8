"""ReadShareGroupStateSummary (key 87, KIP-932): a share-partition's state epoch and start offset
without its batches (DescribeShareGroupOffsets reads these).

Declared from Kafka 4.1's ReadShareGroupStateSummaryRequest.json / Response.json, version 0,
flexible. Inter-broker (CLUSTER_ACTION on the cluster).
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, INT64, STRING, UUID, Array, F, Struct, api

REQUEST = Struct(
    "ReadShareGroupStateSummaryRequest",
    F("group_id", STRING),
    F("topics", Array(Struct(
        "ReadStateSummaryData",
        F("topic_id", UUID),
        F("partitions", Array(Struct(
            "ReadShareGroupStateSummaryPartitionData",
            F("partition", INT32),
            F("leader_epoch", INT32),
        ))),
    ))),
)

RESPONSE = Struct(
    "ReadShareGroupStateSummaryResponse",
    F("results", Array(Struct(
        "ReadStateSummaryResult",
        F("topic_id", UUID),
        F("partitions", Array(Struct(
            "ReadShareGroupStateSummaryPartitionResult",
            F("partition", INT32),
            F("error_code", INT16),
            F("error_message", STRING, nullable="0+", default=None),
            F("state_epoch", INT32),
            F("start_offset", INT64),
        ))),
    ))),
)

READ_SHARE_GROUP_STATE_SUMMARY = api(ApiKey.READ_SHARE_GROUP_STATE_SUMMARY, "0", "0+", REQUEST, RESPONSE)
