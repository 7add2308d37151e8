"""OffsetDelete (key 47, KIP-496): an admin client deletes a group's committed offsets for
partitions, which the group must not be subscribed to (GROUP_SUBSCRIBED_TO_TOPIC).

Declared from Kafka 3.9's OffsetDeleteRequest.json / OffsetDeleteResponse.json, version 0 only,
not flexible. The response carries a top-level error code (for the group), then the throttle time,
then an error code per partition.
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, STRING, Array, F, Struct, api

OFFSET_DELETE_REQUEST_PARTITION = Struct(
    "OffsetDeleteRequestPartition",
    F("partition_index", INT32),
)

OFFSET_DELETE_REQUEST_TOPIC = Struct(
    "OffsetDeleteRequestTopic",
    F("name", STRING),
    F("partitions", Array(OFFSET_DELETE_REQUEST_PARTITION)),
)

REQUEST = Struct(
    "OffsetDeleteRequest",
    F("group_id", STRING),
    F("topics", Array(OFFSET_DELETE_REQUEST_TOPIC)),
)

OFFSET_DELETE_RESPONSE_PARTITION = Struct(
    "OffsetDeleteResponsePartition",
    F("partition_index", INT32),
    F("error_code", INT16),
)

OFFSET_DELETE_RESPONSE_TOPIC = Struct(
    "OffsetDeleteResponseTopic",
    F("name", STRING),
    F("partitions", Array(OFFSET_DELETE_RESPONSE_PARTITION)),
)

RESPONSE = Struct(
    "OffsetDeleteResponse",
    F("error_code", INT16),
    F("throttle_time_ms", INT32),
    F("topics", Array(OFFSET_DELETE_RESPONSE_TOPIC)),
)

OFFSET_DELETE = api(ApiKey.OFFSET_DELETE, "0", "none", REQUEST, RESPONSE)
