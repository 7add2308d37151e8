"""DescribeConfigs (key 32): the settings of brokers and topics, with where each value comes from.

Declared from Kafka's DescribeConfigsRequest.json / DescribeConfigsResponse.json, versions 0-4
(flexible 4+). Request: v1+ ``include_synonyms``; v3+ ``include_documentation``. Response: v0 only
``is_default``; v1+ each entry's ``config_source`` and its synonyms; v3+ ``config_type`` and
``documentation``. A null ``configuration_keys`` asks for every setting of the resource.
"""

from ..api_keys import ApiKey
from ..schema import BOOL, INT8, INT16, INT32, STRING, Array, F, Struct, api

# Kafka's ConfigResource.Type ids.
RESOURCE_TOPIC = 2
RESOURCE_BROKER = 4
RESOURCE_BROKER_LOGGER = 8

# Kafka's DescribeConfigsResponse.ConfigSource ids.
SOURCE_UNKNOWN = 0
SOURCE_DYNAMIC_TOPIC_CONFIG = 1
SOURCE_DYNAMIC_BROKER_CONFIG = 2
SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG = 3
SOURCE_STATIC_BROKER_CONFIG = 4
SOURCE_DEFAULT_CONFIG = 5

# Kafka's DescribeConfigsResponse.ConfigType ids.
TYPE_UNKNOWN = 0
TYPE_BOOLEAN = 1
TYPE_STRING = 2
TYPE_INT = 3
TYPE_SHORT = 4
TYPE_LONG = 5
TYPE_DOUBLE = 6
TYPE_LIST = 7
TYPE_CLASS = 8
TYPE_PASSWORD = 9

DESCRIBE_CONFIGS_RESOURCE = Struct(
    "DescribeConfigsResource",
    F("resource_type", INT8),
    F("resource_name", STRING),
    F("configuration_keys", Array(STRING), nullable="0+"),
)

REQUEST = Struct(
    "DescribeConfigsRequest",
    F("resources", Array(DESCRIBE_CONFIGS_RESOURCE)),
    F("include_synonyms", BOOL, "1+", default=False),
    F("include_documentation", BOOL, "3+", default=False),
)

DESCRIBE_CONFIGS_SYNONYM = Struct(
    "DescribeConfigsSynonym",
    F("name", STRING, "1+"),
    F("value", STRING, "1+", nullable="0+"),
    F("source", INT8, "1+"),
)

DESCRIBE_CONFIGS_RESOURCE_RESULT = Struct(
    "DescribeConfigsResourceResult",
    F("name", STRING),
    F("value", STRING, nullable="0+"),
    F("read_only", BOOL),
    F("is_default", BOOL, "0"),
    F("config_source", INT8, "1+", default=-1),
    F("is_sensitive", BOOL),
    F("synonyms", Array(DESCRIBE_CONFIGS_SYNONYM), "1+"),
    F("config_type", INT8, "3+", default=0),
    F("documentation", STRING, "3+", nullable="0+"),
)

DESCRIBE_CONFIGS_RESULT = Struct(
    "DescribeConfigsResult",
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+"),
    F("resource_type", INT8),
    F("resource_name", STRING),
    F("configs", Array(DESCRIBE_CONFIGS_RESOURCE_RESULT)),
)

RESPONSE = Struct(
    "DescribeConfigsResponse",
    F("throttle_time_ms", INT32),
    F("results", Array(DESCRIBE_CONFIGS_RESULT)),
)

DESCRIBE_CONFIGS = api(ApiKey.DESCRIBE_CONFIGS, "0-4", "4+", REQUEST, RESPONSE)
