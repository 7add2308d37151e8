"""AlterConfigs (key 33): replace the whole set of dynamic configs of topics and brokers.

Declared from Kafka's AlterConfigsRequest.json / AlterConfigsResponse.json, versions 0-2 (v1 is
v0; v2 is flexible). Each resource's ``configs`` is the complete new set: a setting left out loses
its dynamic value. A null ``value`` is refused for a topic and removes a broker setting, as
Kafka's controller does. The controller also pushes each resource's new set to every broker with
this api (docs/configs.md).
"""

from ..api_keys import ApiKey
from ..schema import BOOL, INT8, INT16, INT32, STRING, Array, F, Struct, api

ALTERABLE_CONFIG = Struct(
    "AlterableConfig",
    F("name", STRING),
    F("value", STRING, nullable="0+"),
)

ALTER_CONFIGS_RESOURCE = Struct(
    "AlterConfigsResource",
    F("resource_type", INT8),
    F("resource_name", STRING),
    F("configs", Array(ALTERABLE_CONFIG)),
)

REQUEST = Struct(
    "AlterConfigsRequest",
    F("resources", Array(ALTER_CONFIGS_RESOURCE)),
    F("validate_only", BOOL, default=False),
)

ALTER_CONFIGS_RESOURCE_RESPONSE = Struct(
    "AlterConfigsResourceResponse",
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+", default=None),
    F("resource_type", INT8),
    F("resource_name", STRING),
)

RESPONSE = Struct(
    "AlterConfigsResponse",
    F("throttle_time_ms", INT32),
    F("responses", Array(ALTER_CONFIGS_RESOURCE_RESPONSE)),
)

ALTER_CONFIGS = api(ApiKey.ALTER_CONFIGS, "0-2", "2+", REQUEST, RESPONSE)
