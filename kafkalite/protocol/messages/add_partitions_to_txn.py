"""AddPartitionsToTxn (key 24): partitions a transaction is about to write to, added to it on the
transaction coordinator (or, v4+, only checked to be in it).

Declared from Kafka's AddPartitionsToTxnRequest.json / AddPartitionsToTxnResponse.json, versions
0-5 (flexible 3+). Versions 0-3 are a producer's: one transaction, its fields named ``v3_and_below_*``,
the response's results by topic. Versions 4+ are sent by partition leaders only (KIP-890 part 1):
a batch of transactions, each with ``verify_only`` (check that the partitions are already in the
transaction rather than add them), and a response with a top-level error code and results by
transaction. v1 is v0; v2 may answer PRODUCER_FENCED, v5 TRANSACTION_ABORTABLE (same bytes).
"""

from ..api_keys import ApiKey
from ..schema import BOOL, INT16, INT32, INT64, STRING, Array, F, Struct, api

ADD_PARTITIONS_TO_TXN_TOPIC = Struct(
    "AddPartitionsToTxnTopic",
    F("name", STRING),
    F("partitions", Array(INT32)),
)

ADD_PARTITIONS_TO_TXN_TRANSACTION = Struct(
    "AddPartitionsToTxnTransaction",
    F("transactional_id", STRING, "4+"),
    F("producer_id", INT64, "4+"),
    F("producer_epoch", INT16, "4+"),
    F("verify_only", BOOL, "4+", default=False),
    F("topics", Array(ADD_PARTITIONS_TO_TXN_TOPIC), "4+"),
)

REQUEST = Struct(
    "AddPartitionsToTxnRequest",
    F("transactions", Array(ADD_PARTITIONS_TO_TXN_TRANSACTION), "4+"),
    F("v3_and_below_transactional_id", STRING, "0-3"),
    F("v3_and_below_producer_id", INT64, "0-3"),
    F("v3_and_below_producer_epoch", INT16, "0-3"),
    F("v3_and_below_topics", Array(ADD_PARTITIONS_TO_TXN_TOPIC), "0-3"),
)

ADD_PARTITIONS_TO_TXN_PARTITION_RESULT = Struct(
    "AddPartitionsToTxnPartitionResult",
    F("partition_index", INT32),
    F("partition_error_code", INT16),
)

ADD_PARTITIONS_TO_TXN_TOPIC_RESULT = Struct(
    "AddPartitionsToTxnTopicResult",
    F("name", STRING),
    F("results_by_partition", Array(ADD_PARTITIONS_TO_TXN_PARTITION_RESULT)),
)

ADD_PARTITIONS_TO_TXN_RESULT = Struct(
    "AddPartitionsToTxnResult",
    F("transactional_id", STRING, "4+"),
    F("topic_results", Array(ADD_PARTITIONS_TO_TXN_TOPIC_RESULT), "4+"),
)

RESPONSE = Struct(
    "AddPartitionsToTxnResponse",
    F("throttle_time_ms", INT32),
    F("error_code", INT16, "4+"),
    F("results_by_transaction", Array(ADD_PARTITIONS_TO_TXN_RESULT), "4+"),
    F("results_by_topic_v3_and_below", Array(ADD_PARTITIONS_TO_TXN_TOPIC_RESULT), "0-3"),
)

ADD_PARTITIONS_TO_TXN = api(ApiKey.ADD_PARTITIONS_TO_TXN, "0-5", "3+", REQUEST, RESPONSE)
