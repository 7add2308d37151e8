"""AlterShareGroupOffsets (key 91, KIP-932): an admin client sets a share group's start offsets
(Admin.alterShareGroupOffsets); only while the group has no members (NON_EMPTY_GROUP otherwise).

Declared from Kafka 4.1's AlterShareGroupOffsetsRequest.json / Response.json, version 0, flexible;
the response's top-level error code and message carry the group's errors (GROUP_ID_NOT_FOUND,
NON_EMPTY_GROUP), the partitions their own.
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, INT64, STRING, UUID, Array, F, Struct, api

REQUEST = Struct(
    "AlterShareGroupOffsetsRequest",
    F("group_id", STRING),
    F("topics", Array(Struct(
        "AlterShareGroupOffsetsRequestTopic",
        F("topic_name", STRING),
        F("partitions", Array(Struct(
            "AlterShareGroupOffsetsRequestPartition",
            F("partition_index", INT32),
            F("start_offset", INT64),
        ))),
    ))),
)

RESPONSE = Struct(
    "AlterShareGroupOffsetsResponse",
    F("throttle_time_ms", INT32),
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+", default=None),
    F("responses", Array(Struct(
        "AlterShareGroupOffsetsResponseTopic",
        F("topic_name", STRING),
        F("topic_id", UUID),
        F("partitions", Array(Struct(
            "AlterShareGroupOffsetsResponsePartition",
            F("partition_index", INT32),
            F("error_code", INT16),
            F("error_message", STRING, nullable="0+", default=None),
        ))),
    ))),
)

ALTER_SHARE_GROUP_OFFSETS = api(ApiKey.ALTER_SHARE_GROUP_OFFSETS, "0", "0+", REQUEST, RESPONSE)
