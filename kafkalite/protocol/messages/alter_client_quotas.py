"""AlterClientQuotas (key 49): set or remove client quota values per entity.

Declared from Kafka 4.1.1's AlterClientQuotasRequest.json / AlterClientQuotasResponse.json,
versions 0-1 (flexible 1+). An entity is a list of (type, name) with a null name for the default
entity; each op sets ``key`` to ``value``, or removes it (``remove``). The response has one entry
per request entry, in order, with its error.
"""

from ..api_keys import ApiKey
from ..schema import BOOL, FLOAT64, INT16, INT32, STRING, Array, F, Struct, api

ENTITY = Struct(
    "EntityData",
    F("entity_type", STRING),
    F("entity_name", STRING, nullable="0+"),
)

OP = Struct(
    "OpData",
    F("key", STRING),
    F("value", FLOAT64),
    F("remove", BOOL),
)

ENTRY = Struct(
    "EntryData",
    F("entity", Array(ENTITY)),
    F("ops", Array(OP)),
)

REQUEST = Struct(
    "AlterClientQuotasRequest",
    F("entries", Array(ENTRY)),
    F("validate_only", BOOL),
)

RESPONSE_ENTRY = Struct(
    "EntryData",
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+"),
    F("entity", Array(ENTITY)),
)

RESPONSE = Struct(
    "AlterClientQuotasResponse",
    F("throttle_time_ms", INT32),
    F("entries", Array(RESPONSE_ENTRY)),
)

ALTER_CLIENT_QUOTAS = api(ApiKey.ALTER_CLIENT_QUOTAS, "0-1", "1+", REQUEST, RESPONSE)
