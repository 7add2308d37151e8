"""Records and compression (kafkalite/protocol/records/records.py, compression.py): hypothesis round
trips through build_batch and decode_records for every codec; kafka-python's record builder and
reader (an independent implementation: its own varints, xerial framing, lz4, zstandard) as the
oracle both ways; bad compressed data and mutated records raise only CorruptRecordError."""

from __future__ import annotations

import struct

import cramjam
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from kafkalite.protocol.errors import EncodeError
from kafkalite.protocol.records import (
    Compression,
    CompressionError,
    CorruptRecordError,
    Record,
    TimestampType,
    UnsupportedCompressionError,
    build_batch,
    check_crc,
    check_records,
    compress,
    decode_records,
    decompress,
    read_header,
    stamp,
    validate_batch,
)
from kafkalite.protocol.records import batch as B
from kafkalite.protocol.records.compression import XERIAL_MAGIC

CODECS = list(Compression)
SOME = settings(max_examples=25)

_bytes = st.none() | st.binary(max_size=40)
_headers = st.lists(st.tuples(st.text(max_size=8), _bytes), max_size=3).map(tuple)
_record_fields = st.tuples(_bytes, _bytes, _headers, st.integers(0, 10**6))


@st.composite
def records(draw: st.DrawFn, max_size: int = 5) -> list[Record]:
    fields = draw(st.lists(_record_fields, min_size=1, max_size=max_size))
    return [Record(i, ts, k, v, h) for i, (k, v, h, ts) in enumerate(fields)]


@pytest.mark.parametrize("codec", CODECS, ids=[c.name for c in CODECS])
@SOME
@given(recs=records(), base_offset=st.integers(0, 2**62), base_ts=st.integers(0, 2**41))
def test_build_and_decode_round_trip(codec, recs, base_offset, base_ts):
    buf = build_batch(recs, base_offset, codec, base_timestamp=base_ts, producer_id=3,
                      producer_epoch=1, base_sequence=10)
    h = validate_batch(buf)
    assert check_crc(buf, 0, h) and h.size == len(buf) and h.compression is codec
    assert (h.base_offset, h.records_count, h.last_offset) == (base_offset, len(recs),
                                                               base_offset + len(recs) - 1)
    assert h.max_timestamp == base_ts + max(r.timestamp_delta for r in recs)
    assert (h.producer_id, h.producer_epoch, h.base_sequence) == (3, 1, 10)
    assert decode_records(buf) == recs
    assert decode_records(b"xyz" + buf, 3) == recs
    check_records(buf)  # every batch a producer builds frames


@pytest.mark.parametrize("codec", CODECS, ids=[c.name for c in CODECS])
@SOME
@given(recs=records(), base_ts=st.integers(0, 2**41))
def test_kafka_python_reads_our_batches(codec, recs, base_ts):
    buf = bytearray(build_batch(recs, 0, codec, base_timestamp=base_ts))
    stamp(buf, 0, 100, 7)
    theirs = DefaultRecordBatch(bytes(buf))
    assert theirs.validate_crc() and theirs.base_offset == 100 and theirs.compression_type == codec
    got = [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in theirs]
    assert got == [(100 + r.offset_delta, base_ts + r.timestamp_delta, r.key, r.value,
                    list(r.headers)) for r in recs]


@pytest.mark.parametrize("codec", CODECS, ids=[c.name for c in CODECS])
@SOME
@given(recs=records(), first_ts=st.integers(0, 2**41), transactional=st.booleans())
def test_we_read_kafka_python_batches(codec, recs, first_ts, transactional):
    # kafka-python leaves a batch uncompressed when compressing does not make it smaller.
    recs = [*recs, Record(len(recs), 0, None, b"z" * 2000)]
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=int(codec), is_transactional=transactional,
        producer_id=9 if transactional else -1, producer_epoch=0 if transactional else -1,
        base_sequence=0 if transactional else -1, batch_size=1 << 20,
    )
    for r in recs:
        # kafka-python refuses null header values; Kafka allows them.
        headers = [(k, v if v is not None else b"") for k, v in r.headers]
        builder.append(r.offset_delta, timestamp=first_ts + r.timestamp_delta, key=r.key,
                       value=r.value, headers=headers)
    buf = bytes(builder.build())
    h = validate_batch(buf)
    assert h.compression is codec and h.is_transactional is transactional
    expected = [
        r._replace(
            timestamp_delta=r.timestamp_delta - recs[0].timestamp_delta,
            headers=tuple((k, v if v is not None else b"") for k, v in r.headers),
        )
        for r in recs
    ]
    assert decode_records(buf, 0, h) == expected
    assert h.base_timestamp == first_ts + recs[0].timestamp_delta


def test_batch_fields_and_flags():
    recs = [Record(0, 5, b"k", None), Record(1, 2, None, b"v", (("a", None), ("é", b"")), -3)]
    buf = build_batch(recs, 42, base_timestamp=1000, timestamp_type=TimestampType.LOG_APPEND_TIME,
                      max_timestamp=7777, partition_leader_epoch=4, is_transactional=True,
                      is_control=True)
    h = validate_batch(buf)
    assert (h.base_timestamp, h.max_timestamp, h.partition_leader_epoch) == (1000, 7777, 4)
    assert h.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert h.is_transactional and h.is_control
    assert decode_records(buf) == recs


def test_snappy_xerial_on_write_raw_on_read():
    data = b"abc" * 50_000  # several 32 KiB xerial blocks
    framed = compress(Compression.SNAPPY, data)
    assert framed.startswith(XERIAL_MAGIC)
    assert decompress(Compression.SNAPPY, framed) == data
    # librdkafka writes raw snappy, no framing
    assert decompress(Compression.SNAPPY, bytes(cramjam.snappy.compress_raw(data))) == data


def test_lz4_blocks_are_independent():
    frame = compress(Compression.LZ4, b"x" * 100_000)
    flg = frame[4]
    assert frame[:4] == b"\x04\x22\x4d\x18" and flg & 0x20  # KIP-57: block independence


def test_gzip_members_in_a_row():
    two = compress(Compression.GZIP, b"ab") + compress(Compression.GZIP, b"cd")
    assert decompress(Compression.GZIP, two) == b"abcd"


@pytest.mark.parametrize("codec", CODECS[1:], ids=[c.name for c in CODECS[1:]])
def test_truncated_compressed_data(codec):
    good = compress(codec, bytes(range(256)) * 200)
    for cut in (0, 1, 10, len(good) // 2, len(good) - 1):
        if codec is Compression.SNAPPY and cut == 0:
            continue  # empty raw snappy is not an error
        with pytest.raises(CompressionError):
            decompress(codec, good[:cut])


@pytest.mark.parametrize("codec", CODECS[1:], ids=[c.name for c in CODECS[1:]])
@SOME
@given(data=st.binary(max_size=64))
def test_random_compressed_data_raises_only_compression_error(codec, data):
    for candidate in (data, XERIAL_MAGIC + data):
        try:
            decompress(codec, candidate)
        except CompressionError as e:
            assert 0 <= e.offset <= len(candidate)


def _recrc(buf: bytearray) -> bytearray:
    h = read_header(buf)
    struct.pack_into(">I", buf, B.CRC_OFFSET, B.compute_crc(buf, 0, h.batch_length))
    return buf


@pytest.mark.parametrize("codec", CODECS, ids=[c.name for c in CODECS])
@SOME
@given(recs=records(), data=st.data())
def test_mutated_records_raise_only_corrupt_record(codec, recs, data):
    """Bytes after the header changed, the CRC made right again: the records' own checks."""
    good = build_batch(recs, 0, codec)
    mutated = bytearray(good)
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(B.RECORDS_OFFSET, len(mutated) - 1))
        mutated[at] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        del mutated[data.draw(st.integers(B.RECORDS_OFFSET, len(mutated) - 1)):]
        struct.pack_into(">i", mutated, B.BATCH_LENGTH_OFFSET, len(mutated) - B.LOG_OVERHEAD)
    _recrc(mutated)
    try:
        h = validate_batch(mutated)
    except CorruptRecordError:
        return
    try:
        decode_records(mutated, 0, h)
        readable = True
    except CorruptRecordError as e:
        assert 0 <= e.offset <= len(mutated)
        readable = False
    try:
        check_records(mutated, 0, h)
    except CorruptRecordError as e:
        assert 0 <= e.offset <= len(mutated)
        # What the framing check refuses, no consumer could read either.
        assert not readable


@pytest.mark.parametrize("codec", CODECS, ids=[c.name for c in CODECS])
def test_check_records_refuses_what_does_not_frame(codec):
    recs = [Record(i, i, b"k", b"v" * 30) for i in range(4)]
    good = bytearray(build_batch(recs, 0, codec))
    check_records(good)
    if codec is Compression.NONE:
        cut = good[:-5]
        struct.pack_into(">i", cut, B.BATCH_LENGTH_OFFSET, len(cut) - B.LOG_OVERHEAD)
        _recrc(cut)
        with pytest.raises(CorruptRecordError, match=r"past the records|cut short"):
            check_records(cut)
        longer = good + b"\x00\x00"
        struct.pack_into(">i", longer, B.BATCH_LENGTH_OFFSET, len(longer) - B.LOG_OVERHEAD)
        _recrc(longer)
        with pytest.raises(CorruptRecordError, match="after the last"):
            check_records(longer)
    garbage = bytearray(good)
    garbage[B.RECORDS_OFFSET:] = bytes(range(256))[: len(good) - B.RECORDS_OFFSET]
    _recrc(garbage)
    with pytest.raises(CorruptRecordError):
        check_records(garbage)


def test_record_errors_name_the_fault():
    buf = bytearray(build_batch([Record(0, 0, b"key", b"value")]))
    buf[B.RECORDS_OFFSET] = 0x7E  # record length 63: past the records
    with pytest.raises(CorruptRecordError, match="past the records") as e:
        decode_records(_recrc(buf))
    assert e.value.offset == B.RECORDS_OFFSET + 1
    two = bytearray(build_batch([Record(0, 0, b"k", b"v"), Record(1, 0, b"k", b"v")]))
    struct.pack_into(">ii", two, B.RECORDS_COUNT_OFFSET - 4, 0, 1)  # claims one record
    with pytest.raises(CorruptRecordError, match="bytes left after the 1 records"):
        decode_records(_recrc(two))
    bad_codec = bytearray(build_batch([Record(0, 0, b"k", b"v")]))
    struct.pack_into(">h", bad_codec, B.ATTRIBUTES_OFFSET, 6)
    with pytest.raises(UnsupportedCompressionError) as e:
        decode_records(bad_codec)
    assert e.value.offset == B.ATTRIBUTES_OFFSET


def test_bad_compressed_records_in_a_batch():
    buf = bytearray(build_batch([Record(0, 0, b"k", b"v" * 100)], compression=Compression.ZSTD))
    buf[B.RECORDS_OFFSET] ^= 0xFF  # the zstd magic
    with pytest.raises(CompressionError) as e:
        decode_records(_recrc(buf))
    assert e.value.offset == B.RECORDS_OFFSET


@pytest.mark.parametrize(
    ("recs", "kwargs"),
    [
        ([], {}),
        ([Record(0, 2**63, None, None)], {}),
        ([Record(2**31, 0, None, None)], {}),
        ([Record(0, 0, None, None, (), 128)], {}),
        ([Record(0, 0, None, None)], {"producer_epoch": 2**15}),
    ],
    ids=["empty", "timestamp-delta", "offset-delta", "attributes", "producer-epoch"],
)
def test_build_batch_refuses_with_encode_error(recs, kwargs):
    with pytest.raises(EncodeError):
        build_batch(recs, **kwargs)
