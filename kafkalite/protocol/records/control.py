"""Control records: the COMMIT and ABORT markers that end a transaction in each partition it wrote.

A transaction marker is a control batch (attributes: transactional and control bits set, no
compression, CreateTime) of the transaction's producer id and epoch, base sequence -1, holding
exactly one record (Kafka's MemoryRecords.withEndTransactionMarker), whose key and value are::

    key   (ControlRecordType):    version i16 (0) | type i16 (0 ABORT, 1 COMMIT, ...)
    value (EndTransactionMarker): version i16 (0) | coordinator_epoch i32

Reading follows Kafka: a key shorter than 4 bytes or a value shorter than 6, or a negative
version, is corrupt (ControlRecordError); a higher version is read as version 0 (its first fields
are version 0's), and bytes after them are ignored. A control type Kafka does not define reads
as UNKNOWN. Writing writes version 0 only.
"""

from __future__ import annotations

import enum
import struct
from typing import NamedTuple

from ..errors import EncodeError
from .batch import NO_PARTITION_LEADER_EPOCH, NO_PRODUCER_ID, Buffer
from .errors import CorruptRecordError
from .records import Record, build_batch

CONTROL_KEY_VERSION = 0
CONTROL_KEY_SIZE = 4
END_TXN_MARKER_VERSION = 0
END_TXN_MARKER_VALUE_SIZE = 6

_KEY = struct.Struct(">hh")
_END_TXN_VALUE = struct.Struct(">hi")


class ControlRecordType(enum.IntEnum):
    """The type in a control record's key (Kafka's ControlRecordType)."""

    UNKNOWN = -1  # a type id Kafka does not define (read only, never written)
    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2  # KRaft's metadata log, as are the ones below
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6

    @classmethod
    def of(cls, type_id: int) -> ControlRecordType:
        """The type of an id, UNKNOWN for ids Kafka does not define (Kafka's fromTypeId)."""
        try:
            return cls(type_id)
        except ValueError:
            return cls.UNKNOWN


class ControlRecordError(CorruptRecordError):
    """A control record whose key or value is not valid (Kafka's InvalidRecordException):
    too short, a negative version, or not the marker it should be. ``offset`` is the byte
    position in the key or value where the fault is."""

    def __init__(self, reason: str, offset: int) -> None:
        super().__init__(reason, offset)
        self.what = "control record"


class ControlKey(NamedTuple):
    """A control record's key as read: its version and type id (any int16)."""

    version: int
    type_id: int

    @property
    def type(self) -> ControlRecordType:
        return ControlRecordType.of(self.type_id)


def encode_control_key(control_type: ControlRecordType | int) -> bytes:
    """A version-0 control record key of ``control_type`` (4 bytes)."""
    if control_type == ControlRecordType.UNKNOWN:
        raise EncodeError("cannot write the UNKNOWN control record type")
    try:
        return _KEY.pack(CONTROL_KEY_VERSION, control_type)
    except struct.error as e:
        raise EncodeError(f"control record type {control_type}: {e}") from None


def decode_control_key(key: Buffer | None) -> ControlKey:
    """The version and type of a control record key (Kafka's ControlRecordType.parseTypeId)."""
    if key is None:
        raise ControlRecordError("a control record has a null key", 0)
    if len(key) < CONTROL_KEY_SIZE:
        raise ControlRecordError(
            f"control record key of {len(key)} bytes, at least {CONTROL_KEY_SIZE} expected", len(key))
    version, type_id = _KEY.unpack_from(key, 0)
    if version < 0:
        raise ControlRecordError(f"control record key version {version} (negative: corrupt data)", 0)
    return ControlKey(version, type_id)


def encode_end_txn_value(coordinator_epoch: int) -> bytes:
    """A version-0 EndTransactionMarker value (6 bytes)."""
    try:
        return _END_TXN_VALUE.pack(END_TXN_MARKER_VERSION, coordinator_epoch)
    except struct.error as e:
        raise EncodeError(f"coordinator epoch {coordinator_epoch}: {e}") from None


def decode_end_txn_value(value: Buffer | None) -> tuple[int, int]:
    """(version, coordinator epoch) of an EndTransactionMarker value (Kafka's deserializeValue)."""
    if value is None:
        raise ControlRecordError("an end transaction marker has a null value", 0)
    if len(value) < END_TXN_MARKER_VALUE_SIZE:
        raise ControlRecordError(
            f"end transaction marker value of {len(value)} bytes, at least {END_TXN_MARKER_VALUE_SIZE}"
            " expected", len(value))
    version, coordinator_epoch = _END_TXN_VALUE.unpack_from(value, 0)
    if version < 0:
        raise ControlRecordError(f"end transaction marker version {version} (negative: corrupt data)", 0)
    return version, coordinator_epoch


class EndTransactionMarker(NamedTuple):
    """A COMMIT or ABORT marker, and the epoch of the coordinator that wrote it (the leader epoch of
    its __transaction_state partition: a partition leader rejects markers of an older one)."""

    type: ControlRecordType
    coordinator_epoch: int

    @classmethod
    def commit(cls, coordinator_epoch: int) -> EndTransactionMarker:
        return cls(ControlRecordType.COMMIT, coordinator_epoch)

    @classmethod
    def abort(cls, coordinator_epoch: int) -> EndTransactionMarker:
        return cls(ControlRecordType.ABORT, coordinator_epoch)

    @property
    def is_commit(self) -> bool:
        return self.type is ControlRecordType.COMMIT

    def key(self) -> bytes:
        if not _is_marker_type(self.type):
            raise EncodeError(f"an end transaction marker is ABORT or COMMIT, not {self.type!r}")
        return encode_control_key(self.type)

    def value(self) -> bytes:
        return encode_end_txn_value(self.coordinator_epoch)


def _is_marker_type(type_id: int) -> bool:
    return type_id in (ControlRecordType.ABORT, ControlRecordType.COMMIT)


def decode_end_txn_marker(key: Buffer | None, value: Buffer | None) -> EndTransactionMarker:
    """The marker a control record's key and value hold (Kafka's EndTransactionMarker.deserialize);
    ControlRecordError when they are corrupt or another control type."""
    control = decode_control_key(key)
    if not _is_marker_type(control.type_id):
        raise ControlRecordError(
            f"not an end transaction marker: control type {control.type.name} ({control.type_id})", 2)
    _, coordinator_epoch = decode_end_txn_value(value)
    return EndTransactionMarker(ControlRecordType(control.type_id), coordinator_epoch)


def read_end_txn_marker(record: Record) -> EndTransactionMarker:
    """The marker of a record decoded from a control batch (``decode_records``)."""
    return decode_end_txn_marker(record.key, record.value)


def build_marker_batch(
    marker: EndTransactionMarker,
    producer_id: int,
    producer_epoch: int,
    base_offset: int = 0,
    *,
    timestamp: int,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
) -> bytes:
    """The control batch of one transaction marker, as a partition leader appends it (Kafka's
    MemoryRecords.withEndTransactionMarker): transactional and control bits set, CreateTime
    ``timestamp`` as base and max timestamp, base sequence -1, one record at offset delta 0."""
    if producer_id == NO_PRODUCER_ID:
        raise EncodeError("an end transaction marker needs a producer id")
    record = Record(offset_delta=0, timestamp_delta=0, key=marker.key(), value=marker.value())
    return build_batch(
        [record], base_offset,
        base_timestamp=timestamp, max_timestamp=timestamp,
        producer_id=producer_id, producer_epoch=producer_epoch,
        partition_leader_epoch=partition_leader_epoch,
        is_transactional=True, is_control=True,
    )
