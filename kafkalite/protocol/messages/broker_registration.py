"""BrokerRegistration (key 62): a KRaft broker registers with the controller quorum.

Declared from Kafka's BrokerRegistrationRequest.json / BrokerRegistrationResponse.json as of
Kafka 3.9, versions 0-4, all flexible. Request: v1+ ``is_migrating_zk_broker``; v2+ ``log_dirs``
(KIP-858); v3+ ``previous_broker_epoch`` (KIP-966); v4 is v3 on the wire (KAFKA-17011: features
with a minimum supported version of 0 are no longer left out). The response is the same in every
version.
"""

from ..api_keys import ApiKey
from ..schema import BOOL, INT16, INT32, INT64, STRING, UINT16, UUID, Array, F, Struct, api

LISTENER = Struct(
    "Listener",
    F("name", STRING),
    F("host", STRING),
    F("port", UINT16),
    F("security_protocol", INT16),
)

FEATURE = Struct(
    "Feature",
    F("name", STRING),
    F("min_supported_version", INT16),
    F("max_supported_version", INT16),
)

REQUEST = Struct(
    "BrokerRegistrationRequest",
    F("broker_id", INT32),
    F("cluster_id", STRING),
    F("incarnation_id", UUID),
    F("listeners", Array(LISTENER)),
    F("features", Array(FEATURE)),
    F("rack", STRING, nullable="0+"),
    F("is_migrating_zk_broker", BOOL, "1+", default=False),
    F("log_dirs", Array(UUID), "2+"),
    F("previous_broker_epoch", INT64, "3+", default=-1),
)

RESPONSE = Struct(
    "BrokerRegistrationResponse",
    F("throttle_time_ms", INT32),
    F("error_code", INT16),
    F("broker_epoch", INT64, default=-1),
)

BROKER_REGISTRATION = api(ApiKey.BROKER_REGISTRATION, "0-4", "0+", REQUEST, RESPONSE)
