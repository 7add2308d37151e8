"""FetchSnapshot (key 59): a KRaft follower reads the leader's snapshot in chunks (KIP-630).

Declared from Kafka 4.1.1's FetchSnapshotRequest.json / FetchSnapshotResponse.json, versions 0-1,
all flexible. Served on controller listeners only. Request: the tagged cluster id (tag 0); v1+
the replica's tagged directory id (tag 0 of a partition, KIP-853). Response: the tagged current
leader of a partition (tag 0); v1+ the tagged leader endpoints (tag 0). ``unaligned_records`` is a
raw chunk of the snapshot file at ``position`` (not whole batches); ``size`` is the whole
snapshot's.
"""

from ..api_keys import ApiKey
from ..schema import INT16, INT32, INT64, RECORDS, STRING, UINT16, UUID, Array, F, Struct, api

SNAPSHOT_ID = Struct(
    "FetchSnapshotSnapshotId",
    F("end_offset", INT64),
    F("epoch", INT32),
)

REQUEST_PARTITION = Struct(
    "FetchSnapshotPartitionSnapshot",
    F("partition", INT32),
    F("current_leader_epoch", INT32),
    F("snapshot_id", SNAPSHOT_ID),
    F("position", INT64),
    F("replica_directory_id", UUID, "1+", tag=0),
)

REQUEST_TOPIC = Struct(
    "FetchSnapshotTopicSnapshot",
    F("name", STRING),
    F("partitions", Array(REQUEST_PARTITION)),
)

REQUEST = Struct(
    "FetchSnapshotRequest",
    F("cluster_id", STRING, nullable="0+", default=None, tag=0),
    F("replica_id", INT32, default=-1),
    F("max_bytes", INT32, default=0x7FFFFFFF),
    F("topics", Array(REQUEST_TOPIC)),
)

LEADER_ID_AND_EPOCH = Struct(
    "FetchSnapshotLeaderIdAndEpoch",
    F("leader_id", INT32),
    F("leader_epoch", INT32),
)

RESPONSE_PARTITION = Struct(
    "FetchSnapshotResponsePartitionSnapshot",
    F("index", INT32),
    F("error_code", INT16),
    F("snapshot_id", SNAPSHOT_ID),
    F("current_leader", LEADER_ID_AND_EPOCH, tag=0),
    F("size", INT64),
    F("position", INT64),
    F("unaligned_records", RECORDS),
)

RESPONSE_TOPIC = Struct(
    "FetchSnapshotResponseTopicSnapshot",
    F("name", STRING),
    F("partitions", Array(RESPONSE_PARTITION)),
)

NODE_ENDPOINT = Struct(
    "FetchSnapshotNodeEndpoint",
    F("node_id", INT32, "1+"),
    F("host", STRING, "1+"),
    F("port", UINT16, "1+"),
)

RESPONSE = Struct(
    "FetchSnapshotResponse",
    F("throttle_time_ms", INT32),
    F("error_code", INT16),
    F("topics", Array(RESPONSE_TOPIC)),
    F("node_endpoints", Array(NODE_ENDPOINT), "1+", tag=0),
)

FETCH_SNAPSHOT = api(ApiKey.FETCH_SNAPSHOT, "0-1", "0+", REQUEST, RESPONSE)
