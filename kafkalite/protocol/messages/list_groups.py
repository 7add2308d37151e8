"""ListGroups (key 16): the groups a broker coordinates, with their protocol type, for admin
clients (``kafka-consumer-groups --list``).

Declared from Kafka 3.9's ListGroupsRequest.json / ListGroupsResponse.json, versions 0-5 (flexible
3+). Request: v4+ a filter on the groups' states (KIP-518); v5+ on their types (KIP-848); an empty
filter lists every group. Response: v1+ throttle time; v4+ each group's state; v5+ its type
("classic", "consumer").
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, STRING, Array, F, Struct, api

REQUEST = Struct(
    "ListGroupsRequest",
    F("states_filter", Array(STRING), "4+"),
    F("types_filter", Array(STRING), "5+"),
)

LISTED_GROUP = Struct(
    "ListedGroup",
    F("group_id", STRING),
    F("protocol_type", STRING),
    F("group_state", STRING, "4+"),
    F("group_type", STRING, "5+"),
)

RESPONSE = Struct(
    "ListGroupsResponse",
    F("throttle_time_ms", INT32, "1+"),
    F("error_code", INT16),
    F("groups", Array(LISTED_GROUP)),
)

LIST_GROUPS = api(ApiKey.LIST_GROUPS, "0-5", "3+", REQUEST, RESPONSE)
