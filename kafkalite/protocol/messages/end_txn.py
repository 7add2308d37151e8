"""EndTxn (key 26): a transactional producer commits or aborts its transaction.

Declared from Kafka's EndTxnRequest.json / EndTxnResponse.json, versions 0-5 (flexible 3+).
v1 is v0; v2 may answer PRODUCER_FENCED, v4 TRANSACTION_ABORTABLE. v5 is a client of transaction
version 2 (KIP-890 part 2: the epoch is bumped at every transaction's end), so its response carries
the producer id and epoch to use next (-1 when not given).
"""

from ..api_keys import ApiKey
from ..schema import BOOL, INT16, INT32, INT64, STRING, F, Struct, api

REQUEST = Struct(
    "EndTxnRequest",
    F("transactional_id", STRING),
    F("producer_id", INT64),
    F("producer_epoch", INT16),
    F("committed", BOOL),
)

RESPONSE = Struct(
    "EndTxnResponse",
    F("throttle_time_ms", INT32),
    F("error_code", INT16),
    F("producer_id", INT64, "5+", default=-1),
    F("producer_epoch", INT16, "5+", default=-1),
)

END_TXN = api(ApiKey.END_TXN, "0-5", "3+", REQUEST, RESPONSE)
