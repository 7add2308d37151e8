"""WriteTxnMarkers (key 27): the transaction coordinator asks a partition leader to write COMMIT
or ABORT markers (control batches, records/control.py) for transactions.

Declared from Kafka's WriteTxnMarkersRequest.json / WriteTxnMarkersResponse.json, versions 0-1
(flexible 1+; Kafka 4.0 dropped v0, and a later v2 adds each marker's transaction version, not
declared here). ``transaction_result``: true COMMIT, false ABORT.
"""

from ..api_keys import ApiKey
from ..schema import BOOL, INT16, INT32, INT64, STRING, Array, F, Struct, api

WRITABLE_TXN_MARKER_TOPIC = Struct(
    "WritableTxnMarkerTopic",
    F("name", STRING),
    F("partition_indexes", Array(INT32)),
)

WRITABLE_TXN_MARKER = Struct(
    "WritableTxnMarker",
    F("producer_id", INT64),
    F("producer_epoch", INT16),
    F("transaction_result", BOOL),
    F("topics", Array(WRITABLE_TXN_MARKER_TOPIC)),
    F("coordinator_epoch", INT32),
)

REQUEST = Struct(
    "WriteTxnMarkersRequest",
    F("markers", Array(WRITABLE_TXN_MARKER)),
)

WRITABLE_TXN_MARKER_PARTITION_RESULT = Struct(
    "WritableTxnMarkerPartitionResult",
    F("partition_index", INT32),
    F("error_code", INT16),
)

WRITABLE_TXN_MARKER_TOPIC_RESULT = Struct(
    "WritableTxnMarkerTopicResult",
    F("name", STRING),
    F("partitions", Array(WRITABLE_TXN_MARKER_PARTITION_RESULT)),
)

WRITABLE_TXN_MARKER_RESULT = Struct(
    "WritableTxnMarkerResult",
    F("producer_id", INT64),
    F("topics", Array(WRITABLE_TXN_MARKER_TOPIC_RESULT)),
)

RESPONSE = Struct(
    "WriteTxnMarkersResponse",
    F("markers", Array(WRITABLE_TXN_MARKER_RESULT)),
)

WRITE_TXN_MARKERS = api(ApiKey.WRITE_TXN_MARKERS, "0-1", "1+", REQUEST, RESPONSE)
