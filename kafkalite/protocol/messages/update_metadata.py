"""UpdateMetadata (key 6): the controller pushes cluster metadata to a broker.

Removed from Kafka in 4.0; declared from the 3.x spec. v0 gives each live broker a single
plaintext host/port; v1+ an array of endpoints (v3+ with a listener name); v2+ a nullable rack;
v4+ offline replicas; v5+ the broker epoch and partition states grouped by topic; v7+ topic ids;
v8+ ``is_kraft_controller`` (regular field) and ``type`` (tagged field 0).
"""

from ..api_keys import ApiKey
from ..schema import BOOL, INT8, INT16, INT32, INT64, STRING, UUID, Array, F, Struct, api

# commonStructs: shared by the top-level v0-4 array and the per-topic v5+ array.
UPDATE_METADATA_PARTITION_STATE = Struct(
    "UpdateMetadataPartitionState",
    F("topic_name", STRING, "0-4"),
    F("partition_index", INT32),
    F("controller_epoch", INT32),
    F("leader", INT32),
    F("leader_epoch", INT32),
    F("isr", Array(INT32)),
    F("zk_version", INT32),
    F("replicas", Array(INT32)),
    F("offline_replicas", Array(INT32), "4+"),
)

UPDATE_METADATA_TOPIC_STATE = Struct(
    "UpdateMetadataTopicState",
    F("topic_name", STRING, "5+"),
    F("topic_id", UUID, "7+"),
    F("partition_states", Array(UPDATE_METADATA_PARTITION_STATE), "5+"),
)

UPDATE_METADATA_ENDPOINT = Struct(
    "UpdateMetadataEndpoint",
    F("port", INT32, "1+"),
    F("host", STRING, "1+"),
    F("listener", STRING, "3+"),
    F("security_protocol", INT16, "1+"),
)

UPDATE_METADATA_BROKER = Struct(
    "UpdateMetadataBroker",
    F("id", INT32),
    F("v0_host", STRING, "0"),
    F("v0_port", INT32, "0"),
    F("endpoints", Array(UPDATE_METADATA_ENDPOINT), "1+"),
    F("rack", STRING, "2+", nullable="0+"),
)

REQUEST = Struct(
    "UpdateMetadataRequest",
    F("controller_id", INT32),
    F("is_kraft_controller", BOOL, "8+", default=False),
    F("type", INT8, "8+", tag=0, tagged="8+", default=0),
    F("controller_epoch", INT32),
    F("broker_epoch", INT64, "5+", default=-1),
    F("ungrouped_partition_states", Array(UPDATE_METADATA_PARTITION_STATE), "0-4"),
    F("topic_states", Array(UPDATE_METADATA_TOPIC_STATE), "5+"),
    F("live_brokers", Array(UPDATE_METADATA_BROKER)),
)

RESPONSE = Struct(
    "UpdateMetadataResponse",
    F("error_code", INT16),
)

UPDATE_METADATA = api(ApiKey.UPDATE_METADATA, "0-8", "6+", REQUEST, RESPONSE)
