"""RecordBatch v2 headers (kafkalite/protocol/records/batch.py): batches built by kafka-python's
record builder (an independent implementation) parse and validate; stamping keeps the CRC valid;
framing finds whole batches and stops at a partial tail; truncated or mutated batches raise only
CorruptRecordError."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder

from kafkalite.protocol.errors import DecodeError
from kafkalite.protocol.records import (
    BATCH_HEADER_SIZE,
    LOG_OVERHEAD,
    BatchHeader,
    Compression,
    CorruptRecordError,
    TimestampType,
    check_crc,
    iter_batches,
    read_header,
    set_max_timestamp,
    stamp,
    validate_batch,
)
from kafkalite.protocol.records import batch as B


def _kafka_python_batch(n: int = 3, producer_id: int = -1, transactional: bool = False) -> bytearray:
    b = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=transactional,
        producer_id=producer_id,
        producer_epoch=0 if producer_id >= 0 else -1,
        base_sequence=0 if producer_id >= 0 else -1,
        batch_size=1 << 20,
    )
    for i in range(n):
        b.append(i, timestamp=1_000 + i, key=b"k%d" % i, value=b"v" * i, headers=[("h", b"x")])
    return b.build()


def test_layout_constants():
    assert BATCH_HEADER_SIZE == 61 and LOG_OVERHEAD == 12
    assert B.RECORDS_COUNT_OFFSET + 4 == B.RECORDS_OFFSET == BATCH_HEADER_SIZE
    assert issubclass(CorruptRecordError, DecodeError)


def test_reads_a_kafka_python_batch():
    buf = _kafka_python_batch(3, producer_id=7, transactional=True)
    h = validate_batch(buf)
    assert h == read_header(buf)
    assert (h.base_offset, h.magic, h.records_count, h.last_offset_delta) == (0, 2, 3, 2)
    assert (h.base_timestamp, h.max_timestamp) == (1_000, 1_002)
    assert (h.producer_id, h.producer_epoch, h.base_sequence) == (7, 0, 0)
    assert h.size == len(buf) and h.last_offset == 2 and h.next_offset == 3
    assert h.compression is Compression.NONE and h.timestamp_type is TimestampType.CREATE_TIME
    assert h.is_transactional and not h.is_control
    assert check_crc(buf, 0, h)


def test_stamp_keeps_crc_valid():
    buf = _kafka_python_batch()
    stamp(buf, 0, base_offset=1234567890123, partition_leader_epoch=42)
    h = validate_batch(buf)
    assert (h.base_offset, h.partition_leader_epoch, h.last_offset) == (1234567890123, 42, 1234567890125)
    view = memoryview(buf)
    stamp(view, 0, base_offset=5, partition_leader_epoch=-1)
    assert validate_batch(bytes(buf)).base_offset == 5


def test_set_max_timestamp_recomputes_crc():
    buf = _kafka_python_batch()
    set_max_timestamp(buf, 0, TimestampType.LOG_APPEND_TIME, 99_999)
    h = validate_batch(buf)
    assert h.timestamp_type is TimestampType.LOG_APPEND_TIME and h.max_timestamp == 99_999
    set_max_timestamp(buf, 0, TimestampType.CREATE_TIME, 1_002)
    assert validate_batch(buf).timestamp_type is TimestampType.CREATE_TIME


def test_iter_batches_stops_at_partial_tail():
    a, b = _kafka_python_batch(2), _kafka_python_batch(5)
    stamp(b, 0, 2, 0)
    whole = bytes(a + b)
    found = list(iter_batches(whole))
    assert [(p, h.base_offset) for p, h in found] == [(0, 0), (len(a), 2)]
    for cut in (len(whole) - 1, len(a) + LOG_OVERHEAD, len(a) + 3, len(a)):
        assert [p for p, _ in iter_batches(whole[:cut])] == [0]
    assert list(iter_batches(whole, len(a))) == found[1:]
    assert list(iter_batches(b"")) == []


def test_iter_batches_rejects_a_length_below_the_header():
    buf = bytearray(_kafka_python_batch())
    struct.pack_into(">i", buf, B.BATCH_LENGTH_OFFSET, 48)
    with pytest.raises(CorruptRecordError) as e:
        list(iter_batches(buf))
    assert e.value.offset == B.BATCH_LENGTH_OFFSET


def _with(field_offset: int, fmt: str, value: int, fix_crc: bool = True) -> bytearray:
    buf = _kafka_python_batch(3)
    struct.pack_into(fmt, buf, field_offset, value)
    if fix_crc:
        struct.pack_into(">I", buf, B.CRC_OFFSET, B.compute_crc(buf, 0, read_header(buf).batch_length))
    return buf


@pytest.mark.parametrize(
    ("buf", "where", "words"),
    [
        (_kafka_python_batch()[:11], 0, "no batch length"),
        (_with(B.BATCH_LENGTH_OFFSET, ">i", 48), B.BATCH_LENGTH_OFFSET, "below the minimum"),
        (_with(B.BATCH_LENGTH_OFFSET, ">i", 10_000), B.BATCH_LENGTH_OFFSET, "past the end"),
        (_with(B.MAGIC_OFFSET, ">b", 1), B.MAGIC_OFFSET, "magic 1"),
        (_with(B.CRC_OFFSET, ">I", 1, fix_crc=False), B.CRC_OFFSET, "CRC mismatch"),
        (_with(B.ATTRIBUTES_OFFSET, ">h", 5), B.ATTRIBUTES_OFFSET, "codec id 5"),
        (_with(B.RECORDS_COUNT_OFFSET, ">i", -1), B.RECORDS_COUNT_OFFSET, "negative"),
        (_with(B.RECORDS_COUNT_OFFSET, ">i", 4), B.RECORDS_COUNT_OFFSET, "does not match"),
        (_with(B.LAST_OFFSET_DELTA_OFFSET, ">i", 7), B.RECORDS_COUNT_OFFSET, "does not match"),
    ],
    ids=["short", "small-length", "long-length", "magic", "crc", "codec", "negative-count",
         "count", "last-offset-delta"],
)
def test_validate_batch_rejects(buf, where, words):
    with pytest.raises(CorruptRecordError) as e:
        validate_batch(buf)
    assert e.value.offset == where and words in e.value.reason


def test_validate_batch_rejects_a_count_the_bytes_cannot_hold():
    buf = _kafka_python_batch(3)
    struct.pack_into(">i", buf, B.LAST_OFFSET_DELTA_OFFSET, 99)
    struct.pack_into(">i", buf, B.RECORDS_COUNT_OFFSET, 100)
    struct.pack_into(">I", buf, B.CRC_OFFSET, B.compute_crc(buf, 0, read_header(buf).batch_length))
    with pytest.raises(CorruptRecordError, match="cannot fit"):
        validate_batch(buf)


def test_validate_at_a_position():
    a = _kafka_python_batch(2)
    buf = b"\x00" * 5 + bytes(a)
    assert validate_batch(buf, 5) == read_header(a)
    with pytest.raises(CorruptRecordError) as e:
        validate_batch(buf[:-1], 5)
    assert e.value.offset == 5 + B.BATCH_LENGTH_OFFSET


@given(data=st.data())
def test_truncated_or_mutated_raise_only_corrupt_record(data):
    good = bytes(_kafka_python_batch(data.draw(st.integers(1, 4))))
    cut = data.draw(st.integers(0, len(good) - 1))
    with pytest.raises(CorruptRecordError):
        validate_batch(good[:cut])
    mutated = bytearray(good)
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(LOG_OVERHEAD, len(mutated) - 1))
        mutated[at] = data.draw(st.integers(0, 255))
    try:
        h = validate_batch(mutated)
    except CorruptRecordError as e:
        assert 0 <= e.offset <= len(mutated)
    else:
        # Only a mutation the CRC cannot see passes: the partition leader epoch.
        assert isinstance(h, BatchHeader)
        assert mutated[B.ATTRIBUTES_OFFSET:] == good[B.ATTRIBUTES_OFFSET:] or check_crc(mutated, 0, h)


@given(buf=st.binary(max_size=128))
def test_random_bytes_raise_only_corrupt_record(buf):
    try:
        validate_batch(buf)
    except CorruptRecordError:
        pass
    try:
        for _ in iter_batches(buf):
            pass
    except CorruptRecordError:
        pass
