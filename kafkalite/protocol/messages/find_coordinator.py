"""FindCoordinator (key 10): which broker coordinates a group (key type 0), a transactional id (1)
or, v6+, a share group (2): the leader of the key's partition of __consumer_offsets (or
__transaction_state).

Declared from Kafka 3.9's FindCoordinatorRequest.json / FindCoordinatorResponse.json, versions
0-6 (flexible 3+). v0-3 ask for one key and answer one coordinator; v4+ ask for several keys at
once and answer a coordinator (or an error) per key (KIP-699). Request: v1+ key type. Response:
v1+ throttle time and error message. v5 may answer TRANSACTION_ABORTABLE (KIP-890); v6 knows share
groups (KIP-932); neither changes the bytes.
"""

from ..api_keys import ApiKey
from ..schema import INT8, INT16, INT32, STRING, Array, F, Struct, api

REQUEST = Struct(
    "FindCoordinatorRequest",
    F("key", STRING, "0-3"),
    F("key_type", INT8, "1+", default=0),
    F("coordinator_keys", Array(STRING), "4+"),
)

COORDINATOR = Struct(
    "Coordinator",
    F("key", STRING, "4+"),
    F("node_id", INT32, "4+"),
    F("host", STRING, "4+"),
    F("port", INT32, "4+"),
    F("error_code", INT16, "4+"),
    F("error_message", STRING, "4+", nullable="4+"),
)

RESPONSE = Struct(
    "FindCoordinatorResponse",
    F("throttle_time_ms", INT32, "1+"),
    F("error_code", INT16, "0-3"),
    F("error_message", STRING, "1-3", nullable="1-3"),
    F("node_id", INT32, "0-3"),
    F("host", STRING, "0-3"),
    F("port", INT32, "0-3"),
    F("coordinators", Array(COORDINATOR), "4+"),
)

FIND_COORDINATOR = api(ApiKey.FIND_COORDINATOR, "0-6", "3+", REQUEST, RESPONSE)
