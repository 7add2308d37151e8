"""DescribeClientQuotas (key 48): the client quotas stored for the entities a filter matches.

Declared from Kafka 4.1.1's DescribeClientQuotasRequest.json / DescribeClientQuotasResponse.json,
versions 0-1 (flexible 1+). Each filter component names an entity type ("user", "client-id",
"ip") and a match type: 0 EXACT (``match`` is the name, null for the default entity), 1 DEFAULT
(the default entity), 2 SPECIFIED (any named entity, not the default). ``strict`` leaves out the
entities with types the filter does not name. An entity's null name is its default entity.
"""

from ..api_keys import ApiKey
from ..schema import BOOL, FLOAT64, INT8, INT16, INT32, STRING, Array, F, Struct, api

# Kafka's ClientQuotaFilterComponent match types.
MATCH_EXACT = 0
MATCH_DEFAULT = 1
MATCH_SPECIFIED = 2

COMPONENT = Struct(
    "ComponentData",
    F("entity_type", STRING),
    F("match_type", INT8),
    F("match", STRING, nullable="0+"),
)

REQUEST = Struct(
    "DescribeClientQuotasRequest",
    F("components", Array(COMPONENT)),
    F("strict", BOOL),
)

ENTITY = Struct(
    "EntityData",
    F("entity_type", STRING),
    F("entity_name", STRING, nullable="0+"),
)

VALUE = Struct(
    "ValueData",
    F("key", STRING),
    F("value", FLOAT64),
)

ENTRY = Struct(
    "EntryData",
    F("entity", Array(ENTITY)),
    F("values", Array(VALUE)),
)

RESPONSE = Struct(
    "DescribeClientQuotasResponse",
    F("throttle_time_ms", INT32),
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+"),
    F("entries", Array(ENTRY), nullable="0+"),
)

DESCRIBE_CLIENT_QUOTAS = api(ApiKey.DESCRIBE_CLIENT_QUOTAS, "0-1", "1+", REQUEST, RESPONSE)
