"""BrokerHeartbeat (key 63): a KRaft broker's periodic heartbeat to the controller quorum.

Declared from Kafka's BrokerHeartbeatRequest.json / BrokerHeartbeatResponse.json as of Kafka 3.9,
versions 0-1, all flexible. Request: v1+ the tagged ``offline_log_dirs`` (tag 0). The response is
the same in every version; a broker is fenced unless told otherwise (``is_fenced`` defaults to
true).
"""

from ..api_keys import ApiKey
from ..schema import BOOL, INT16, INT32, INT64, UUID, Array, F, Struct, api

REQUEST = Struct(
    "BrokerHeartbeatRequest",
    F("broker_id", INT32),
    F("broker_epoch", INT64, default=-1),
    F("current_metadata_offset", INT64),
    F("want_fence", BOOL),
    F("want_shut_down", BOOL),
    F("offline_log_dirs", Array(UUID), "1+", tag=0),
)

RESPONSE = Struct(
    "BrokerHeartbeatResponse",
    F("throttle_time_ms", INT32),
    F("error_code", INT16),
    F("is_caught_up", BOOL, default=False),
    F("is_fenced", BOOL, default=True),
    F("should_shut_down", BOOL),
)

BROKER_HEARTBEAT = api(ApiKey.BROKER_HEARTBEAT, "0-1", "0+", REQUEST, RESPONSE)
