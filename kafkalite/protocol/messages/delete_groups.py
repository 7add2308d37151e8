"""DeleteGroups (key 42): delete empty groups (and their committed offsets), for admin clients.

Declared from Kafka 3.9's DeleteGroupsRequest.json / DeleteGroupsResponse.json, versions 0-2
(flexible 2+). v1 is the same as v0. Unlike most responses, the throttle time is there from v0.
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, STRING, Array, F, Struct, api

REQUEST = Struct(
    "DeleteGroupsRequest",
    F("groups_names", Array(STRING)),
)

DELETABLE_GROUP_RESULT = Struct(
    "DeletableGroupResult",
    F("group_id", STRING),
    F("error_code", INT16),
)

RESPONSE = Struct(
    "DeleteGroupsResponse",
    F("throttle_time_ms", INT32),
    F("results", Array(DELETABLE_GROUP_RESULT)),
)

DELETE_GROUPS = api(ApiKey.DELETE_GROUPS, "0-2", "2+", REQUEST, RESPONSE)
