"""DeleteRecords (key 21): move partitions' log start offsets up, so the records below are gone.

Declared from Kafka 3.9's DeleteRecordsRequest.json / DeleteRecordsResponse.json, versions 0-2
(flexible 2+). An offset of -1 means the high watermark.
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, INT64, STRING, Array, F, Struct, api

DELETE_RECORDS_PARTITION = Struct(
    "DeleteRecordsPartition",
    F("partition_index", INT32),
    F("offset", INT64),
)

DELETE_RECORDS_TOPIC = Struct(
    "DeleteRecordsTopic",
    F("name", STRING),
    F("partitions", Array(DELETE_RECORDS_PARTITION)),
)

REQUEST = Struct(
    "DeleteRecordsRequest",
    F("topics", Array(DELETE_RECORDS_TOPIC)),
    F("timeout_ms", INT32),
)

DELETE_RECORDS_PARTITION_RESULT = Struct(
    "DeleteRecordsPartitionResult",
    F("partition_index", INT32),
    F("low_watermark", INT64),
    F("error_code", INT16),
)

DELETE_RECORDS_TOPIC_RESULT = Struct(
    "DeleteRecordsTopicResult",
    F("name", STRING),
    F("partitions", Array(DELETE_RECORDS_PARTITION_RESULT)),
)

RESPONSE = Struct(
    "DeleteRecordsResponse",
    F("throttle_time_ms", INT32),
    F("topics", Array(DELETE_RECORDS_TOPIC_RESULT)),
)

DELETE_RECORDS = api(ApiKey.DELETE_RECORDS, "0-2", "2+", REQUEST, RESPONSE)
