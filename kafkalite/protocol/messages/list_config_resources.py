"""ListConfigResources (key 74): the resources that have configs (KIP-1142; before Kafka 4.1 it was
ListClientMetricsResources, KIP-714, which v0 still is).

Declared from Kafka's ListConfigResourcesRequest.json / ListConfigResourcesResponse.json, versions
0-1, flexible from 0. v0 lists client metrics resources only; v1's ``resource_types`` filters the
types listed (empty: every type the broker supports) and each resource carries its type.
"""

from ..api_keys import ApiKey
from ..schema import INT8, INT16, INT32, STRING, Array, F, Struct, api

RESOURCE_CLIENT_METRICS = 16  # ConfigResource.Type.CLIENT_METRICS, v0's only type
RESOURCE_GROUP = 32

REQUEST = Struct(
    "ListConfigResourcesRequest",
    F("resource_types", Array(INT8), "1+", default=[]),
)

CONFIG_RESOURCE = Struct(
    "ConfigResource",
    F("resource_name", STRING),
    F("resource_type", INT8, "1+", default=RESOURCE_CLIENT_METRICS),
)

RESPONSE = Struct(
    "ListConfigResourcesResponse",
    F("throttle_time_ms", INT32),
    F("error_code", INT16),
    F("config_resources", Array(CONFIG_RESOURCE)),
)

LIST_CONFIG_RESOURCES = api(ApiKey.LIST_CONFIG_RESOURCES, "0-1", "0+", REQUEST, RESPONSE)
