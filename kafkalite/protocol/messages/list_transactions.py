"""ListTransactions (key 66): the transactions a coordinator holds, filtered (KIP-664,
kafka-transactions.sh list).

Declared from Kafka's ListTransactionsRequest.json / ListTransactionsResponse.json, versions 0-2,
all flexible. Request: v1+ a duration filter, transactions running longer than it (KIP-994, -1:
all); v2+ a transactional id pattern, a regular expression (KIP-1152, Kafka 4.1; null or empty: all).
The response is the same in every version.
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, INT64, STRING, Array, F, Struct, api

REQUEST = Struct(
    "ListTransactionsRequest",
    F("state_filters", Array(STRING)),
    F("producer_id_filters", Array(INT64)),
    F("duration_filter", INT64, "1+", default=-1),
    F("transactional_id_pattern", STRING, "2+", nullable="2+", default=None),
)

TRANSACTION_STATE = Struct(
    "TransactionState",
    F("transactional_id", STRING),
    F("producer_id", INT64),
    F("transaction_state", STRING),
)

RESPONSE = Struct(
    "ListTransactionsResponse",
    F("throttle_time_ms", INT32),
    F("error_code", INT16),
    F("unknown_state_filters", Array(STRING)),
    F("transaction_states", Array(TRANSACTION_STATE)),
)

LIST_TRANSACTIONS = api(ApiKey.LIST_TRANSACTIONS, "0-2", "0+", REQUEST, RESPONSE)
