"""DescribeShareGroupOffsets (key 90, KIP-932): an admin client reads share groups' start offsets
per partition (Admin.listShareGroupOffsets); the group coordinator asks the share coordinator with
ReadShareGroupStateSummary. Topics null: every partition the group has state for.

Declared from Kafka 4.1's DescribeShareGroupOffsetsRequest.json / Response.json, version 0,
flexible (4.2's v1 adds the lag, not served).
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, INT64, STRING, UUID, Array, F, Struct, api

REQUEST = Struct(
    "DescribeShareGroupOffsetsRequest",
    F("groups", Array(Struct(
        "DescribeShareGroupOffsetsRequestGroup",
        F("group_id", STRING),
        F("topics", Array(Struct(
            "DescribeShareGroupOffsetsRequestTopic",
            F("topic_name", STRING),
            F("partitions", Array(INT32)),
        )), nullable="0+"),
    ))),
)

RESPONSE = Struct(
    "DescribeShareGroupOffsetsResponse",
    F("throttle_time_ms", INT32),
    F("groups", Array(Struct(
        "DescribeShareGroupOffsetsResponseGroup",
        F("group_id", STRING),
        F("topics", Array(Struct(
            "DescribeShareGroupOffsetsResponseTopic",
            F("topic_name", STRING),
            F("topic_id", UUID),
            F("partitions", Array(Struct(
                "DescribeShareGroupOffsetsResponsePartition",
                F("partition_index", INT32),
                F("start_offset", INT64),
                F("leader_epoch", INT32),
                F("error_code", INT16),
                F("error_message", STRING, nullable="0+", default=None),
            ))),
        ))),
        F("error_code", INT16),
        F("error_message", STRING, nullable="0+", default=None),
    ))),
)

DESCRIBE_SHARE_GROUP_OFFSETS = api(ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, "0", "0+", REQUEST, RESPONSE)
