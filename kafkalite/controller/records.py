"""The metadata records of ``__cluster_metadata`` the controller writes and replays: Kafka's names,
api keys and fields (metadata/src/main/resources/common/metadata/*.json), framed as Kafka's
MetadataRecordSerde frames them: unsigned varint frame version (1), unsigned varint api key,
unsigned varint record version, then the record (every metadata record is flexible).

Kafka keeps a reassignment's adding and removing replicas in PartitionRecord and
PartitionChangeRecord, and so does kafkalite. One thing kafkalite keeps that Kafka does not
record: a topic whose deletion has begun but whose replicas have not all stopped yet (kafkalite's
brokers are told by StopReplica, as under Kafka's ZooKeeper controller, which kept the topic under
/admin/delete_topics until then). That is ``BeginTopicDeletionRecord``, with an api key far above
Kafka's (``KAFKALITE_API_KEYS``) so that it can never be mistaken for one of Kafka's.

Records are written at version 0 except where a later version carries what kafkalite records
(RegisterBrokerRecord v1: InControlledShutdown); every version Kafka declares is read.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kafkalite.protocol.compiler import compile_struct
from kafkalite.protocol.errors import DecodeError
from kafkalite.protocol.primitives import read_uvarint, write_uvarint
from kafkalite.protocol.schema import (
    BOOL,
    BYTES,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    STRING,
    UINT16,
    UUID,
    Array,
    F,
    Struct,
)

FRAME_VERSION = 1  # AbstractApiMessageSerde.DEFAULT_FRAME_VERSION

REGISTER_BROKER = 0
UNREGISTER_BROKER = 1
TOPIC = 2
PARTITION = 3
CONFIG = 4
PARTITION_CHANGE = 5
FENCE_BROKER = 7
UNFENCE_BROKER = 8
REMOVE_TOPIC = 9
USER_SCRAM_CREDENTIAL = 11
CLIENT_QUOTA = 14
PRODUCER_IDS = 15
BROKER_REGISTRATION_CHANGE = 17
ACCESS_CONTROL_ENTRY = 18
REMOVE_ACCESS_CONTROL_ENTRY = 19
NO_OP = 20
REMOVE_USER_SCRAM_CREDENTIAL = 22
BEGIN_TOPIC_DELETION = 10000  # kafkalite's own
KAFKALITE_API_KEYS = frozenset({BEGIN_TOPIC_DELETION})

# PartitionChangeRecord's "no change" values.
NO_LEADER_CHANGE = -2
NO_RECOVERY_STATE_CHANGE = -1
# ConfigRecord's resource types (Kafka's ConfigResource.Type codes).
CONFIG_TOPIC = 2
CONFIG_BROKER = 4
CONFIG_GROUP = 32

REGISTER_BROKER_RECORD = Struct(
    "RegisterBrokerRecord",
    F("broker_id", INT32),
    F("is_migrating_zk_broker", BOOL, "2+", default=False),
    F("incarnation_id", UUID),
    F("broker_epoch", INT64),
    F("end_points", Array(Struct(
        "BrokerEndpoint",
        F("name", STRING),
        F("host", STRING),
        F("port", UINT16),
        F("security_protocol", INT16),
    ))),
    F("features", Array(Struct(
        "BrokerFeature",
        F("name", STRING),
        F("min_supported_version", INT16),
        F("max_supported_version", INT16),
    ))),
    F("rack", STRING, nullable="0+", default=None),
    F("fenced", BOOL, default=True),
    F("in_controlled_shutdown", BOOL, "1+", default=False),
    F("log_dirs", Array(UUID), "3+", tag=0),
)

UNREGISTER_BROKER_RECORD = Struct(
    "UnregisterBrokerRecord",
    F("broker_id", INT32),
    F("broker_epoch", INT64),
)

TOPIC_RECORD = Struct(
    "TopicRecord",
    F("name", STRING),
    F("topic_id", UUID),
)

PARTITION_RECORD = Struct(
    "PartitionRecord",
    F("partition_id", INT32, default=-1),
    F("topic_id", UUID),
    F("replicas", Array(INT32)),
    F("isr", Array(INT32)),
    F("removing_replicas", Array(INT32)),
    F("adding_replicas", Array(INT32)),
    F("leader", INT32, default=-1),
    F("leader_recovery_state", INT8, tag=0, default=0),
    F("leader_epoch", INT32, default=-1),
    F("partition_epoch", INT32, default=-1),
    F("directories", Array(UUID), "1+"),
    F("eligible_leader_replicas", Array(INT32), "2+", nullable="2+", tag=1, default=None),
    F("last_known_elr", Array(INT32), "2+", nullable="2+", tag=2, default=None),
)

CONFIG_RECORD = Struct(
    "ConfigRecord",
    F("resource_type", INT8),
    F("resource_name", STRING),
    F("name", STRING),
    F("value", STRING, nullable="0+", default=None),
)

PARTITION_CHANGE_RECORD = Struct(
    "PartitionChangeRecord",
    F("partition_id", INT32, default=-1),
    F("topic_id", UUID),
    F("isr", Array(INT32), nullable="0+", tag=0, default=None),
    F("leader", INT32, tag=1, default=NO_LEADER_CHANGE),
    F("replicas", Array(INT32), nullable="0+", tag=2, default=None),
    F("removing_replicas", Array(INT32), nullable="0+", tag=3, default=None),
    F("adding_replicas", Array(INT32), nullable="0+", tag=4, default=None),
    F("leader_recovery_state", INT8, tag=5, default=NO_RECOVERY_STATE_CHANGE),
    F("directories", Array(UUID), "1+", nullable="1+", tag=8, default=None),
    F("eligible_leader_replicas", Array(INT32), "2+", nullable="2+", tag=6, default=None),
    F("last_known_elr", Array(INT32), "2+", nullable="2+", tag=7, default=None),
)

FENCE_BROKER_RECORD = Struct("FenceBrokerRecord", F("id", INT32), F("epoch", INT64))
UNFENCE_BROKER_RECORD = Struct("UnfenceBrokerRecord", F("id", INT32), F("epoch", INT64))
REMOVE_TOPIC_RECORD = Struct("RemoveTopicRecord", F("topic_id", UUID))

USER_SCRAM_CREDENTIAL_RECORD = Struct(
    "UserScramCredentialRecord",
    F("name", STRING),
    F("mechanism", INT8),
    F("salt", BYTES),
    F("stored_key", BYTES),
    F("server_key", BYTES),
    F("iterations", INT32),
)

CLIENT_QUOTA_RECORD = Struct(
    "ClientQuotaRecord",
    F("entity", Array(Struct(
        "EntityData",
        F("entity_type", STRING),
        F("entity_name", STRING, nullable="0+", default=None),
    ))),
    F("key", STRING),
    F("value", FLOAT64),
    F("remove", BOOL),
)

PRODUCER_IDS_RECORD = Struct(
    "ProducerIdsRecord",
    F("broker_id", INT32),
    F("broker_epoch", INT64, default=-1),
    F("next_producer_id", INT64),
)

BROKER_REGISTRATION_CHANGE_RECORD = Struct(
    "BrokerRegistrationChangeRecord",
    F("broker_id", INT32),
    F("broker_epoch", INT64),
    F("fenced", INT8, tag=0, default=0),
    F("in_controlled_shutdown", INT8, "1+", tag=1, default=0),
    F("log_dirs", Array(UUID), "2+", tag=2),
)

ACCESS_CONTROL_ENTRY_RECORD = Struct(
    "AccessControlEntryRecord",
    F("id", UUID),
    F("resource_type", INT8),
    F("resource_name", STRING),
    F("pattern_type", INT8),
    F("principal", STRING),
    F("host", STRING),
    F("operation", INT8),
    F("permission_type", INT8),
)

REMOVE_ACCESS_CONTROL_ENTRY_RECORD = Struct("RemoveAccessControlEntryRecord", F("id", UUID))
NO_OP_RECORD = Struct("NoOpRecord")
REMOVE_USER_SCRAM_CREDENTIAL_RECORD = Struct(
    "RemoveUserScramCredentialRecord", F("name", STRING), F("mechanism", INT8))
BEGIN_TOPIC_DELETION_RECORD = Struct("BeginTopicDeletionRecord", F("topic_id", UUID))

# api key -> (struct, the versions Kafka declares (low, high), the version kafkalite writes)
RECORDS: dict[int, tuple[Struct, int, int, int]] = {
    REGISTER_BROKER: (REGISTER_BROKER_RECORD, 0, 3, 1),
    UNREGISTER_BROKER: (UNREGISTER_BROKER_RECORD, 0, 0, 0),
    TOPIC: (TOPIC_RECORD, 0, 0, 0),
    PARTITION: (PARTITION_RECORD, 0, 2, 0),
    CONFIG: (CONFIG_RECORD, 0, 0, 0),
    PARTITION_CHANGE: (PARTITION_CHANGE_RECORD, 0, 2, 0),
    FENCE_BROKER: (FENCE_BROKER_RECORD, 0, 0, 0),
    UNFENCE_BROKER: (UNFENCE_BROKER_RECORD, 0, 0, 0),
    REMOVE_TOPIC: (REMOVE_TOPIC_RECORD, 0, 0, 0),
    USER_SCRAM_CREDENTIAL: (USER_SCRAM_CREDENTIAL_RECORD, 0, 0, 0),
    CLIENT_QUOTA: (CLIENT_QUOTA_RECORD, 0, 0, 0),
    PRODUCER_IDS: (PRODUCER_IDS_RECORD, 0, 0, 0),
    BROKER_REGISTRATION_CHANGE: (BROKER_REGISTRATION_CHANGE_RECORD, 0, 2, 1),
    ACCESS_CONTROL_ENTRY: (ACCESS_CONTROL_ENTRY_RECORD, 0, 0, 0),
    REMOVE_ACCESS_CONTROL_ENTRY: (REMOVE_ACCESS_CONTROL_ENTRY_RECORD, 0, 0, 0),
    NO_OP: (NO_OP_RECORD, 0, 0, 0),
    REMOVE_USER_SCRAM_CREDENTIAL: (REMOVE_USER_SCRAM_CREDENTIAL_RECORD, 0, 0, 0),
    BEGIN_TOPIC_DELETION: (BEGIN_TOPIC_DELETION_RECORD, 0, 0, 0),
}
_API_KEY_OF = {id(s): key for key, (s, *_) in RECORDS.items()}
_cache: dict = {}


def api_key_of(record: Any) -> int:
    """The api key of a record value (``TOPIC_RECORD(name=..., topic_id=...)``)."""
    return _API_KEY_OF[id(record.struct)]


def encode(record: Any, version: int | None = None) -> bytes:
    """One framed record: frame version, api key, version, then the record."""
    key = api_key_of(record)
    struct, _, _, written = RECORDS[key]
    version = written if version is None else version
    out = bytearray()
    write_uvarint(out, FRAME_VERSION)
    write_uvarint(out, key)
    write_uvarint(out, version)
    compile_struct(struct, version, True, _cache)[0](record, out)
    return bytes(out)


def decode(data: bytes) -> Any:
    """The record of one frame; DecodeError for an unknown frame version, api key or version,
    or bytes left over after it."""
    frame, pos = read_uvarint(data, 0)
    if frame != FRAME_VERSION:
        raise DecodeError(f"unknown metadata record frame version {frame}", offset=0)
    key, pos = read_uvarint(data, pos)
    version, pos = read_uvarint(data, pos)
    known = RECORDS.get(key)
    if known is None:
        raise DecodeError(f"unknown metadata record api key {key}", offset=0)
    struct, low, high, _ = known
    if not low <= version <= high:
        raise DecodeError(f"{struct.name} v{version} is not a version Kafka declares", offset=0)
    record, end = compile_struct(struct, version, True, _cache)[1](data, pos)
    if end != len(data):
        raise DecodeError(f"{len(data) - end} bytes after a {struct.name}", offset=end)
    return record


def encode_all(records: Iterable[Any]) -> bytes:
    """Records one after the other, each prefixed by its length (an unsigned varint): a snapshot's
    payload."""
    out = bytearray()
    for r in records:
        data = encode(r)
        write_uvarint(out, len(data))
        out += data
    return bytes(out)


def decode_all(payload: bytes) -> list[Any]:
    """The records of ``encode_all``."""
    records = []
    pos = 0
    while pos < len(payload):
        size, pos = read_uvarint(payload, pos)
        if pos + size > len(payload):
            raise DecodeError("a metadata record cut short", offset=pos)
        records.append(decode(payload[pos:pos + size]))
        pos += size
    return records
