"""IncrementalAlterConfigs (key 44): change some dynamic configs of topics, brokers and broker
loggers, each by an operation (KIP-339).

Declared from Kafka's IncrementalAlterConfigsRequest.json / IncrementalAlterConfigsResponse.json,
versions 0-1 (flexible 1+). Operations are Kafka's AlterConfigOp.OpType ids: SET 0, DELETE 1,
APPEND 2 and SUBTRACT 3 (the last two only for LIST settings).
"""

from ..api_keys import ApiKey
from ..schema import BOOL, INT8, INT16, INT32, STRING, Array, F, Struct, api

# Kafka's AlterConfigOp.OpType ids.
OP_SET = 0
OP_DELETE = 1
OP_APPEND = 2
OP_SUBTRACT = 3
OP_NAMES = {OP_SET: "SET", OP_DELETE: "DELETE", OP_APPEND: "APPEND", OP_SUBTRACT: "SUBTRACT"}

ALTERABLE_CONFIG = Struct(
    "AlterableConfig",
    F("name", STRING),
    F("config_operation", INT8),
    F("value", STRING, nullable="0+"),
)

ALTER_CONFIGS_RESOURCE = Struct(
    "AlterConfigsResource",
    F("resource_type", INT8),
    F("resource_name", STRING),
    F("configs", Array(ALTERABLE_CONFIG)),
)

REQUEST = Struct(
    "IncrementalAlterConfigsRequest",
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
    "IncrementalAlterConfigsResponse",
    F("throttle_time_ms", INT32),
    F("responses", Array(ALTER_CONFIGS_RESOURCE_RESPONSE)),
)

INCREMENTAL_ALTER_CONFIGS = api(ApiKey.INCREMENTAL_ALTER_CONFIGS, "0-1", "1+", REQUEST, RESPONSE)
