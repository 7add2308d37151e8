"""AllocateProducerIds (key 67): a broker asks the controller for a block of producer ids (KIP-730).

Declared from Kafka's AllocateProducerIdsRequest.json / AllocateProducerIdsResponse.json, version 0
only, flexible. The controller answers the first id of the block and its length; a broker it does
not know, or one with another broker epoch, gets STALE_BROKER_EPOCH.
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, INT64, F, Struct, api

REQUEST = Struct(
    "AllocateProducerIdsRequest",
    F("broker_id", INT32),
    F("broker_epoch", INT64, default=-1),
)

RESPONSE = Struct(
    "AllocateProducerIdsResponse",
    F("throttle_time_ms", INT32),
    F("error_code", INT16),
    F("producer_id_start", INT64),
    F("producer_id_len", INT32),
)

ALLOCATE_PRODUCER_IDS = api(ApiKey.ALLOCATE_PRODUCER_IDS, "0", "0+", REQUEST, RESPONSE)
