"""DeleteShareGroupOffsets (key 92, KIP-932): an admin client removes a share group's state for
whole topics (Admin.deleteShareGroupOffsets); only while the group has no members.

Declared from Kafka 4.1's DeleteShareGroupOffsetsRequest.json / Response.json, version 0,
flexible: a topic answers as a whole (its name, id and error).
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, STRING, UUID, Array, F, Struct, api

REQUEST = Struct(
    "DeleteShareGroupOffsetsRequest",
    F("group_id", STRING),
    F("topics", Array(Struct(
        "DeleteShareGroupOffsetsRequestTopic",
        F("topic_name", STRING),
    ))),
)

RESPONSE = Struct(
    "DeleteShareGroupOffsetsResponse",
    F("throttle_time_ms", INT32),
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+", default=None),
    F("responses", Array(Struct(
        "DeleteShareGroupOffsetsResponseTopic",
        F("topic_name", STRING),
        F("topic_id", UUID),
        F("error_code", INT16),
        F("error_message", STRING, nullable="0+", default=None),
    ))),
)

DELETE_SHARE_GROUP_OFFSETS = api(ApiKey.DELETE_SHARE_GROUP_OFFSETS, "0", "0+", REQUEST, RESPONSE)
