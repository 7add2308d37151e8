"""DescribeTransactions (key 65): the state of transactional ids, from their transaction
coordinator (KIP-664, kafka-transactions.sh describe).

Declared from Kafka's DescribeTransactionsRequest.json / DescribeTransactionsResponse.json,
version 0, flexible. ``transaction_state`` is the coordinator state's name ("Ongoing",
"PrepareCommit", ...); ``topics`` are the partitions in the transaction (while it is being
completed, those still without their marker).
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, INT64, STRING, Array, F, Struct, api

REQUEST = Struct(
    "DescribeTransactionsRequest",
    F("transactional_ids", Array(STRING)),
)

TOPIC_DATA = Struct(
    "TopicData",
    F("topic", STRING),
    F("partitions", Array(INT32)),
)

TRANSACTION_STATE = Struct(
    "TransactionState",
    F("error_code", INT16),
    F("transactional_id", STRING),
    F("transaction_state", STRING),
    F("transaction_timeout_ms", INT32),
    F("transaction_start_time_ms", INT64),
    F("producer_id", INT64),
    F("producer_epoch", INT16),
    F("topics", Array(TOPIC_DATA)),
)

RESPONSE = Struct(
    "DescribeTransactionsResponse",
    F("throttle_time_ms", INT32),
    F("transaction_states", Array(TRANSACTION_STATE)),
)

DESCRIBE_TRANSACTIONS = api(ApiKey.DESCRIBE_TRANSACTIONS, "0", "0+", REQUEST, RESPONSE)
