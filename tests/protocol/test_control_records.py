"""Control records of transaction markers (kafkalite/protocol/records/control.py): Kafka's byte
layout of a COMMIT marker's batch checked against one built by hand, kafka-python's consumer
(an independent reader) reading it, round trips of markers, keys and values, and corrupt keys and
values (short, a negative version, another control type) raising ControlRecordError only."""

from __future__ import annotations

import struct

import pytest
from crc32c import crc32c
from hypothesis import given
from hypothesis import strategies as st
from kafka.record.default_records import ControlRecord, DefaultRecordBatch

from kafkalite.protocol.errors import DecodeError, EncodeError
from kafkalite.protocol.records import (
    ControlKey,
    ControlRecordError,
    ControlRecordType,
    CorruptRecordError,
    EndTransactionMarker,
    Record,
    TimestampType,
    build_batch,
    build_marker_batch,
    decode_control_key,
    decode_end_txn_marker,
    decode_end_txn_value,
    decode_records,
    encode_control_key,
    encode_end_txn_value,
    read_end_txn_marker,
    validate_batch,
)

from .golden_bytes import i8, i16, i32, i64

TS = 1_700_000_000_123
INT16 = st.integers(-(2**15), 2**15 - 1)
INT32 = st.integers(-(2**31), 2**31 - 1)
MARKER_TYPES = st.sampled_from([ControlRecordType.ABORT, ControlRecordType.COMMIT])
MARKERS = st.builds(EndTransactionMarker, MARKER_TYPES, INT32)


def _kafka_commit_marker_batch() -> bytes:
    """A COMMIT marker of producer 42 epoch 3, coordinator epoch 5, at offset 100, as Kafka's
    MemoryRecords.withEndTransactionMarker writes it (leader epoch 7)."""
    key = i16(0) + i16(1)  # ControlRecordType key v0: version, type COMMIT
    value = i16(0) + i32(5)  # EndTransactionMarker v0: version, coordinator epoch
    # length 16 (zigzag 0x20) | attributes | timestampDelta 0 | offsetDelta 0 | keyLength 4 (0x08) | key |
    # valueLength 6 (0x0c) | value | no headers
    record = b"\x20" + b"\x00" + b"\x00" + b"\x00" + b"\x08" + key + b"\x0c" + value + b"\x00"
    after_crc = (
        i16(0x30)  # attributes: transactional (0x10) + control (0x20), no compression, CreateTime
        + i32(0)  # lastOffsetDelta
        + i64(TS) + i64(TS)  # base and max timestamp
        + i64(42) + i16(3)  # producer id and epoch
        + i32(-1)  # base sequence: none
        + i32(1)  # one record
        + record
    )
    before_crc = i64(100) + i32(61 - 12 + len(record)) + i32(7) + i8(2)
    return before_crc + struct.pack(">I", crc32c(after_crc)) + after_crc


def test_a_commit_marker_batch_has_kafkas_bytes():
    expected = _kafka_commit_marker_batch()
    assert len(expected) == 78  # Kafka's RECORD_BATCH_OVERHEAD 61 + CURRENT_END_TXN_SCHEMA_RECORD_SIZE 17
    built = build_marker_batch(EndTransactionMarker.commit(5), 42, 3, 100, timestamp=TS,
                               partition_leader_epoch=7)
    assert built == expected


def test_kafka_python_reads_the_marker_batch():
    batch = DefaultRecordBatch(bytearray(build_marker_batch(EndTransactionMarker.abort(9), 42, 3, 100,
                                                            timestamp=TS)))
    assert batch.validate_crc()
    assert batch.is_control_batch and batch.is_transactional
    assert (batch.base_offset, batch.producer_id, batch.producer_epoch) == (100, 42, 3)
    assert batch.base_sequence == -1
    (record,) = list(batch)
    assert isinstance(record, ControlRecord)
    assert (record.offset, record.timestamp, record.version, record.abort) == (100, TS, 0, True)
    assert decode_end_txn_value(record.value) == (0, 9)


@given(marker=MARKERS, producer_id=st.integers(0, 2**63 - 1), producer_epoch=INT16,
       base_offset=st.integers(0, 2**62), timestamp=st.integers(-1, 2**50), leader_epoch=INT32)
def test_marker_batch_roundtrip(marker, producer_id, producer_epoch, base_offset, timestamp, leader_epoch):
    batch = build_marker_batch(marker, producer_id, producer_epoch, base_offset, timestamp=timestamp,
                               partition_leader_epoch=leader_epoch)
    header = validate_batch(batch)
    assert header.is_control and header.is_transactional
    assert header.timestamp_type is TimestampType.CREATE_TIME
    assert (header.base_offset, header.last_offset, header.records_count) == (base_offset, base_offset, 1)
    assert (header.producer_id, header.producer_epoch) == (producer_id, producer_epoch)
    assert header.base_sequence == -1
    assert (header.base_timestamp, header.max_timestamp) == (timestamp, timestamp)
    assert header.partition_leader_epoch == leader_epoch
    (record,) = decode_records(batch)
    assert (record.offset_delta, record.timestamp_delta, record.headers) == (0, 0, ())
    assert read_end_txn_marker(record) == marker
    assert record.key == marker.key() and record.value == marker.value()


@given(marker=MARKERS)
def test_marker_key_and_value_roundtrip(marker):
    assert len(marker.key()) == 4 and len(marker.value()) == 6
    assert decode_end_txn_marker(marker.key(), marker.value()) == marker
    assert decode_end_txn_marker(memoryview(marker.key()), bytearray(marker.value())) == marker
    assert marker.is_commit is (marker.type is ControlRecordType.COMMIT)


@given(type_id=st.integers(0, 2**15 - 1))
def test_control_key_roundtrip(type_id):
    key = encode_control_key(type_id)
    assert key == i16(0) + i16(type_id)
    decoded = decode_control_key(key)
    assert decoded == ControlKey(0, type_id)
    assert decoded.type is (ControlRecordType(type_id) if type_id <= 6 else ControlRecordType.UNKNOWN)


@given(version=st.integers(1, 2**15 - 1), type_id=INT16, epoch=INT32, extra=st.binary(max_size=8))
def test_a_newer_version_is_read_as_version_0(version, type_id, epoch, extra):
    """As Kafka: a higher key or value version is parsed as version 0, bytes after it ignored."""
    assert decode_control_key(i16(version) + i16(type_id) + extra) == ControlKey(version, type_id)
    assert decode_end_txn_value(i16(version) + i32(epoch) + extra) == (version, epoch)


@pytest.mark.parametrize("size", range(4))
def test_a_short_key_is_corrupt(size):
    with pytest.raises(ControlRecordError, match="at least 4"):
        decode_control_key((i16(0) + i16(1))[:size])


@pytest.mark.parametrize("size", range(6))
def test_a_short_value_is_corrupt(size):
    with pytest.raises(ControlRecordError, match="at least 6"):
        decode_end_txn_value((i16(0) + i32(5))[:size])
    with pytest.raises(ControlRecordError):
        decode_end_txn_marker(i16(0) + i16(1), (i16(0) + i32(5))[:size])


@given(version=st.integers(-(2**15), -1))
def test_a_negative_version_is_corrupt(version):
    with pytest.raises(ControlRecordError, match="version"):
        decode_control_key(i16(version) + i16(1))
    with pytest.raises(ControlRecordError, match="version"):
        decode_end_txn_value(i16(version) + i32(5))


def test_null_key_or_value_is_corrupt():
    with pytest.raises(ControlRecordError):
        decode_control_key(None)
    with pytest.raises(ControlRecordError):
        decode_end_txn_value(None)


@pytest.mark.parametrize("type_id", [2, 3, 4, 5, 6, 7, 1000, -1, -2])
def test_another_control_type_is_not_a_marker(type_id):
    with pytest.raises(ControlRecordError, match="not an end transaction marker"):
        decode_end_txn_marker(i16(0) + i16(type_id), i16(0) + i32(5))


def test_a_data_record_of_a_control_batch_is_not_a_marker():
    with pytest.raises(ControlRecordError):
        read_end_txn_marker(Record(0, 0, b"k", b"v"))


def test_control_record_errors_are_decode_errors():
    """Callers that catch the codec's DecodeError (or the records' CorruptRecordError) catch them."""
    with pytest.raises(CorruptRecordError) as info:
        decode_control_key(b"\x00")
    assert isinstance(info.value, DecodeError)
    assert info.value.what == "control record" and info.value.offset == 1
    assert "control record" in str(info.value)


@given(key=st.none() | st.binary(max_size=8), value=st.none() | st.binary(max_size=10))
def test_any_bytes_give_a_marker_or_the_typed_error(key, value):
    try:
        marker = decode_end_txn_marker(key, value)
    except ControlRecordError:
        return
    assert decode_end_txn_marker(marker.key(), marker.value()) == marker


@pytest.mark.parametrize("bad", [
    lambda: encode_control_key(ControlRecordType.UNKNOWN),
    lambda: encode_control_key(2**15),
    lambda: encode_end_txn_value(2**31),
    lambda: EndTransactionMarker(ControlRecordType.LEADER_CHANGE, 0).key(),
    lambda: build_marker_batch(EndTransactionMarker.commit(0), -1, 0, timestamp=TS),
    lambda: build_marker_batch(EndTransactionMarker.commit(0), 1, 2**15, timestamp=TS),
], ids=["unknown-type", "type-out-of-range", "epoch-out-of-range", "leader-change-marker", "no-producer-id",
        "epoch-out-of-int16"])
def test_what_cannot_be_written_is_an_encode_error(bad):
    with pytest.raises(EncodeError):
        bad()


def test_a_control_batch_built_by_hand_reads_as_the_marker():
    """A marker batch from build_batch's general path (as the log cleaner or a follower would hold
    it) reads back with read_end_txn_marker."""
    marker = EndTransactionMarker.abort(-3)
    batch = build_batch([Record(0, 0, marker.key(), marker.value())], 7, producer_id=1, producer_epoch=0,
                        is_transactional=True, is_control=True)
    assert read_end_txn_marker(decode_records(batch)[0]) == marker
