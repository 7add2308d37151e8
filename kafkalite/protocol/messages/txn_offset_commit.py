"""TxnOffsetCommit (key 28): a transactional producer commits a group's offsets as part of its
transaction; they become visible when the transaction commits (KIP-98, exactly-once consume-process-
produce).

Declared from Kafka's TxnOffsetCommitRequest.json / TxnOffsetCommitResponse.json, versions 0-5
(flexible 3+). Request: v2+ each partition's committed leader epoch; v3+ the group's generation id,
member id and group instance id, so that a zombie member is fenced (KIP-447). v1 is v0; v4 may
answer TRANSACTION_ABORTABLE (KIP-890); v5 (Kafka 4.0) may name partitions not yet added to the
transaction, when transaction version 2 is on; neither changes the bytes.
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, INT64, STRING, Array, F, Struct, api

TXN_OFFSET_COMMIT_REQUEST_PARTITION = Struct(
    "TxnOffsetCommitRequestPartition",
    F("partition_index", INT32),
    F("committed_offset", INT64),
    F("committed_leader_epoch", INT32, "2+", default=-1),
    F("committed_metadata", STRING, nullable="0+"),
)

TXN_OFFSET_COMMIT_REQUEST_TOPIC = Struct(
    "TxnOffsetCommitRequestTopic",
    F("name", STRING),
    F("partitions", Array(TXN_OFFSET_COMMIT_REQUEST_PARTITION)),
)

REQUEST = Struct(
    "TxnOffsetCommitRequest",
    F("transactional_id", STRING),
    F("group_id", STRING),
    F("producer_id", INT64),
    F("producer_epoch", INT16),
    F("generation_id", INT32, "3+", default=-1),
    F("member_id", STRING, "3+"),
    F("group_instance_id", STRING, "3+", nullable="3+", default=None),
    F("topics", Array(TXN_OFFSET_COMMIT_REQUEST_TOPIC)),
)

TXN_OFFSET_COMMIT_RESPONSE_PARTITION = Struct(
    "TxnOffsetCommitResponsePartition",
    F("partition_index", INT32),
    F("error_code", INT16),
)

TXN_OFFSET_COMMIT_RESPONSE_TOPIC = Struct(
    "TxnOffsetCommitResponseTopic",
    F("name", STRING),
    F("partitions", Array(TXN_OFFSET_COMMIT_RESPONSE_PARTITION)),
)

RESPONSE = Struct(
    "TxnOffsetCommitResponse",
    F("throttle_time_ms", INT32),
    F("topics", Array(TXN_OFFSET_COMMIT_RESPONSE_TOPIC)),
)

TXN_OFFSET_COMMIT = api(ApiKey.TXN_OFFSET_COMMIT, "0-5", "3+", REQUEST, RESPONSE)
