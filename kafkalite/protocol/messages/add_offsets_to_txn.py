"""AddOffsetsToTxn (key 25): a transactional producer is about to commit a group's offsets in its
transaction (TxnOffsetCommit); the coordinator adds the group's __consumer_offsets partition.

Declared from Kafka's AddOffsetsToTxnRequest.json / AddOffsetsToTxnResponse.json, versions 0-4
(flexible 3+). No version changes the fields: v1 is v0, v2 may answer PRODUCER_FENCED, v4
TRANSACTION_ABORTABLE (KIP-890).
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, INT64, STRING, F, Struct, api

REQUEST = Struct(
    "AddOffsetsToTxnRequest",
    F("transactional_id", STRING),
    F("producer_id", INT64),
    F("producer_epoch", INT16),
    F("group_id", STRING),
)

RESPONSE = Struct(
    "AddOffsetsToTxnResponse",
    F("throttle_time_ms", INT32),
    F("error_code", INT16),
)

ADD_OFFSETS_TO_TXN = api(ApiKey.ADD_OFFSETS_TO_TXN, "0-4", "3+", REQUEST, RESPONSE)
