"""InitProducerId (key 22): a producer id and epoch for an idempotent or transactional producer.

Declared from Kafka 3.9's InitProducerIdRequest.json / InitProducerIdResponse.json, versions 0-5
(flexible 2+). Request: v3+ the producer's current id and epoch, to resume after
INVALID_PRODUCER_EPOCH (KIP-360). v4 and v5 only add error codes (PRODUCER_FENCED,
TRANSACTION_ABORTABLE).
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, INT64, STRING, F, Struct, api

REQUEST = Struct(
    "InitProducerIdRequest",
    F("transactional_id", STRING, nullable="0+", default=None),
    F("transaction_timeout_ms", INT32),
    F("producer_id", INT64, "3+", default=-1),
    F("producer_epoch", INT16, "3+", default=-1),
)

RESPONSE = Struct(
    "InitProducerIdResponse",
    F("throttle_time_ms", INT32),
    F("error_code", INT16),
    F("producer_id", INT64, default=-1),
    F("producer_epoch", INT16),
)

INIT_PRODUCER_ID = api(ApiKey.INIT_PRODUCER_ID, "0-5", "2+", REQUEST, RESPONSE)
