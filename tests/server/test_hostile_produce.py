"""Hostile Produce payloads: batches built right and then broken, sent raw. Each gets Kafka's error
code for its partition (CORRUPT_MESSAGE for a CRC or a header too short to be a batch, INVALID_RECORD
for what Kafka's ProduceRequest.validateRecords and LogValidator refuse, MESSAGE_TOO_LARGE,
INVALID_REQUIRED_ACKS, UNKNOWN_TOPIC_OR_PARTITION; a removed version closes the connection),
nothing of it reaches the log (log end offset, segment file size and a read of the log
unchanged) and the broker keeps serving: the same connection where Kafka keeps it, another
connection's produce and fetch, every handler and network thread alive."""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path

import pytest
from crc32c import crc32c

from kafkalite.protocol import error_codes as E
from kafkalite.protocol.records import Compression, Record, build_batch
from tests.support.brokers import running_broker
from tests.support.raw_requests import (
    LATEST,
    PRODUCE,
    batch,
    create_topic,
    list_offset,
    log_end,
    produce,
    produce_request,
    read_log,
)
from tests.support.wire_client import Client

pytestmark = pytest.mark.integration


GOOD = [b"first good", b"second good"]
T0 = 1_700_000_000_000
# Byte positions in a RecordBatch v2 header.
LENGTH_AT, MAGIC_AT, CRC_AT, ATTRIBUTES_AT, LAST_DELTA_AT, COUNT_AT = 8, 16, 17, 21, 23, 57


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    log_dir = tmp_path_factory.mktemp("hostile")
    with running_broker(log_dir) as b:
        b.test_log_dir = log_dir
        yield b


def connect(broker) -> Client:
    return Client("127.0.0.1", broker.bound_port("PLAINTEXT"))


def segment_size(broker, topic: str) -> int:
    return (Path(broker.test_log_dir) / f"{topic}-0" / ("0" * 20 + ".log")).stat().st_size


def good_topic(broker, c: Client, topic: str) -> int:
    """A new topic holding the two GOOD records; the size of its segment."""
    create_topic(c, topic)
    assert produce(c, topic, batch(GOOD, timestamp=T0)).error_code == 0
    return segment_size(broker, topic)


def assert_untouched_and_serving(broker, topic: str, size: int) -> None:
    """Nothing was appended since the GOOD records (segment size, log end, what a read returns);
    a new connection still produces and fetches; every broker thread is alive."""
    threads = [*broker.socket_server.acceptors.values(), *broker.socket_server.processors,
               *(t for pool in broker.pools for t in pool.threads)]
    assert [t.name for t in threads if not t.is_alive()] == []
    assert segment_size(broker, topic) == size
    with connect(broker) as other:
        assert log_end(other, topic) == len(GOOD)
        after = produce(other, topic, batch([b"after"], timestamp=T0 + 10))
        assert (after.error_code, after.base_offset) == (0, len(GOOD))
        records, _ = read_log(other, topic)
    assert [(r.offset, r.value, r.timestamp) for r in records] == [
        (0, GOOD[0], T0), (1, GOOD[1], T0 + 1), (2, b"after", T0 + 10)]


# --- the corruptions ------------------------------------------------------------------------------

def sample() -> bytearray:
    return bytearray(batch([b"hostile-%d" % i for i in range(3)], keys=[b"k"] * 3, timestamp=T0 + 5))


def with_crc(b: bytearray) -> bytes:
    """The batch with its CRC recomputed: the fault is then only what the test put there."""
    struct.pack_into(">I", b, CRC_AT, crc32c(bytes(b[ATTRIBUTES_AT:])))
    return bytes(b)


def put(fmt: str, at: int, value: int, crc: bool = True):
    def corrupt() -> bytes:
        b = sample()
        struct.pack_into(fmt, b, at, value)
        return with_crc(b) if crc else bytes(b)
    return corrupt


def flipped_value_byte() -> bytes:
    b = sample()
    b[-3] ^= 0x55  # inside the last record's value: under the CRC
    return bytes(b)


def flipped_crc() -> bytes:
    b = sample()
    b[CRC_AT] ^= 0x01
    return bytes(b)


def huge_count() -> bytes:
    b = sample()
    struct.pack_into(">i", b, LAST_DELTA_AT, 0x7FFFFFFE)
    struct.pack_into(">i", b, COUNT_AT, 0x7FFFFFFF)  # consistent with the delta, not with the bytes
    return with_crc(b)


def length_past_end() -> bytes:
    b = sample()
    struct.pack_into(">i", b, LENGTH_AT, len(b) - 12 + 100)
    return bytes(b)


def short_batch() -> bytes:
    b = sample()[:42]
    struct.pack_into(">i", b, LENGTH_AT, 30)  # 42 bytes sent, all of them the "batch"
    return bytes(b)


def rebuilt(**kw: object):
    def build() -> bytes:
        return build_batch([Record(offset_delta=0, timestamp_delta=0, key=None, value=b"hostile")],
                           base_timestamp=T0, **kw)  # type: ignore[arg-type]
    return build


def garbage_records(compression: Compression) -> Callable[[], bytes]:
    """A batch whose header and CRC are right but whose records section is not records (or, for a
    codec, not its compressed data): no consumer could read it."""
    def build() -> bytes:
        b = bytearray(build_batch([Record(offset_delta=0, timestamp_delta=0, key=None, value=b"x" * 40)],
                                  compression=compression, base_timestamp=T0))
        records_at = 61
        b[records_at:] = bytes((i * 37 + 11) % 251 for i in range(len(b) - records_at))
        return with_crc(b)
    return build


def two_batches() -> bytes:
    return bytes(sample()) + batch([b"second batch"], timestamp=T0)


HOSTILE = {
    # Kafka: DefaultRecordBatch.isValid is false -> CorruptRecordException.
    "crc-over-a-flipped-value-byte": (flipped_value_byte, E.CORRUPT_MESSAGE),
    "flipped-stored-crc": (flipped_crc, E.CORRUPT_MESSAGE),
    # Kafka's ByteBufferLogInputStream: "Record size 10 is less than the minimum record overhead".
    "batch-length-10": (put(">i", LENGTH_AT, 10, crc=False), E.CORRUPT_MESSAGE),
    # A length that holds no batch header: not a valid batch (isValid needs RECORD_BATCH_OVERHEAD).
    "batch-length-30": (short_batch, E.CORRUPT_MESSAGE),
    # A length past the bytes sent, or bytes cut short: Kafka's iterator finds no batch at all,
    # "Produce requests with version N must have at least one record batch per partition".
    "batch-length-past-the-end": (length_past_end, E.INVALID_RECORD),
    "truncated-batch": (lambda: bytes(sample()[:-7]), E.INVALID_RECORD),
    "truncated-header": (lambda: bytes(sample()[:11]), E.INVALID_RECORD),
    "empty-records": (lambda: b"", E.INVALID_RECORD),
    "null-records": (lambda: None, E.INVALID_RECORD),
    # LogValidator.validateBatch: count and lastOffsetDelta must agree, count must be positive;
    # a count the bytes cannot hold fails reading the records (InvalidRecordException).
    "records-count-1000": (put(">i", COUNT_AT, 1000), E.INVALID_RECORD),
    "records-count-negative": (put(">i", COUNT_AT, -1), E.INVALID_RECORD),
    "records-count-huge": (huge_count, E.INVALID_RECORD),
    # validateRecords: "only allowed to contain record batches with magic version 2".
    "magic-1": (put(">b", MAGIC_AT, 1, crc=False), E.INVALID_RECORD),
    "magic-3": (put(">b", MAGIC_AT, 3, crc=False), E.INVALID_RECORD),
    # validateRecords: "only allowed to contain exactly one record batch".
    "two-batches": (two_batches, E.INVALID_RECORD),
    # Kafka's LogValidator reads every record (decompressing): InvalidRecordException.
    "garbage-records": (garbage_records(Compression.NONE), E.INVALID_RECORD),
    "garbage-gzip": (garbage_records(Compression.GZIP), E.INVALID_RECORD),
    "garbage-zstd": (garbage_records(Compression.ZSTD), E.INVALID_RECORD),
    # analyzeAndValidateRecords: "The baseOffset of the record batch ... should be 0".
    "base-offset-1234": (put(">q", 0, 1234, crc=False), E.INVALID_RECORD),
    # validateBatch: "Clients are not allowed to write control records", "Invalid sequence number".
    "control-batch": (rebuilt(is_control=True), E.INVALID_RECORD),
    "producer-id-without-sequence": (rebuilt(producer_id=5, producer_epoch=0), E.INVALID_RECORD),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_batch_gets_kafkas_error_and_never_reaches_the_log(broker, name):
    corrupt, code = HOSTILE[name]
    topic = f"hostile-{name}"
    with connect(broker) as c:
        size = good_topic(broker, c, topic)
        refused = produce(c, topic, corrupt())
        assert (refused.error_code, refused.base_offset) == (code, -1), E.BY_CODE[refused.error_code].name
        assert refused.error_message
        # Kafka keeps the connection of a refused produce (acks != 0): it still answers.
        assert log_end(c, topic) == len(GOOD)
    assert_untouched_and_serving(broker, topic, size)


def test_one_bad_partition_does_not_fail_the_good_one(broker):
    topic = "hostile-mixed"
    with connect(broker) as c:
        create_topic(c, topic, partitions=2)
        response = c.call(PRODUCE, 9, produce_request(
            {(topic, 0): batch([b"kept"], timestamp=T0), (topic, 1): flipped_crc()}))
        (t,) = response.responses
        assert [(p.index, p.error_code) for p in t.partition_responses] == [(0, 0), (1, E.CORRUPT_MESSAGE)]
        assert (log_end(c, topic, 0), log_end(c, topic, 1)) == (1, 0)
        records, _ = read_log(c, topic, 0)
        assert [r.value for r in records] == [b"kept"]


def test_a_batch_above_max_message_bytes_is_message_too_large(broker):
    topic = "hostile-too-large"
    with connect(broker) as c:
        good_topic(broker, c, topic)
        # Kafka's default max.message.bytes is 1048588; this uncompressed batch is above it.
        big = batch([bytes(range(256)) * 4200], timestamp=T0, compression=Compression.NONE)
        assert len(big) > 1048588
        refused = produce(c, topic, big)
        assert refused.error_code == E.MESSAGE_TOO_LARGE
        # Just below the limit is taken: the check is on the batch's size, not on anything else.
        fits = batch([bytes(range(256)) * 4090], timestamp=T0 + 1)
        assert len(fits) <= 1048588
        accepted = produce(c, topic, fits)
        assert (accepted.error_code, accepted.base_offset) == (0, len(GOOD))
        records, _ = read_log(c, topic)
        assert [len(r.value) for r in records[len(GOOD):]] == [256 * 4090]


@pytest.mark.parametrize("codec", [Compression.GZIP, Compression.LZ4, Compression.ZSTD], ids=lambda c: c.name)
def test_a_compression_bomb_is_message_too_large_and_a_real_large_batch_is_taken(broker, codec):
    """A few KiB standing for 96 MiB of records: refused once its records pass the bound on what a
    batch may decompress to (64 MiB, or 16x its size), before the broker holds them all; Kafka's
    producer splits a batch refused with MESSAGE_TOO_LARGE. A batch that decompresses to less is
    taken as usual."""
    topic = f"hostile-bomb-{codec.name.lower()}"
    with connect(broker) as c:
        size = good_topic(broker, c, topic)
        bomb = batch([bytes(48 << 20), bytes(48 << 20)], timestamp=T0, compression=codec)
        assert len(bomb) < 1 << 20
        refused = produce(c, topic, bomb)
        assert (refused.error_code, refused.base_offset) == (E.MESSAGE_TOO_LARGE, -1)
        assert "too large" in refused.error_message
        assert log_end(c, topic) == len(GOOD)
        assert segment_size(broker, topic) == size
        taken = produce(c, topic, batch([bytes(30 << 20), bytes(30 << 20)], timestamp=T0, compression=codec))
        assert (taken.error_code, taken.base_offset) == (0, len(GOOD))


def test_acks_2_is_invalid_required_acks(broker):
    topic = "hostile-acks-2"
    with connect(broker) as c:
        size = good_topic(broker, c, topic)
        refused = produce(c, topic, batch([b"never"], timestamp=T0), acks=2)
        assert refused.error_code == E.INVALID_REQUIRED_ACKS
        refused = produce(c, topic, batch([b"never"], timestamp=T0), acks=-2)
        assert refused.error_code == E.INVALID_REQUIRED_ACKS
    assert_untouched_and_serving(broker, topic, size)


def test_unknown_topic_or_partition(broker):
    topic = "hostile-known"
    with connect(broker) as c:
        size = good_topic(broker, c, topic)
        assert produce(c, "hostile-never-created", batch([b"x"])).error_code == E.UNKNOWN_TOPIC_OR_PARTITION
        assert produce(c, topic, batch([b"x"]), partition=5).error_code == E.UNKNOWN_TOPIC_OR_PARTITION
        assert produce(c, topic, batch([b"x"]), partition=-1).error_code == E.UNKNOWN_TOPIC_OR_PARTITION
        # Produce creates no topic (Kafka auto-creates on Metadata only).
        assert list_offset(c, "hostile-never-created", 0, LATEST).error_code == E.UNKNOWN_TOPIC_OR_PARTITION
    assert_untouched_and_serving(broker, topic, size)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_produce_below_v3_closes_the_connection(broker, version):
    """Kafka 4.x removed Produce v0-2 (KIP-896) yet advertises them (KAFKA-18659): a request of one
    is refused as every version not served, by closing the connection unanswered
    (SocketServer.parseRequestHeader's UnsupportedVersionException)."""
    topic = f"hostile-produce-v{version}"
    with connect(broker) as c:
        size = good_topic(broker, c, topic)
        c.send(PRODUCE, version, produce_request({(topic, 0): batch([b"old"], timestamp=T0)}))
        assert c.closed_by_server(timeout=10)
    assert_untouched_and_serving(broker, topic, size)


def test_acks_0_with_a_bad_batch_closes_the_connection(broker):
    topic = "hostile-acks-0"
    with connect(broker) as c:
        size = good_topic(broker, c, topic)
        # A good acks=0 produce has no response: the connection goes on to the next request.
        c.send(PRODUCE, 9, produce_request({(topic, 0): batch([b"fire and forget"], timestamp=T0)}, acks=0))
        assert log_end(c, topic) == len(GOOD) + 1
        size = segment_size(broker, topic)
        c.send(PRODUCE, 9, produce_request({(topic, 0): flipped_crc()}, acks=0))
        assert c.closed_by_server(timeout=10)
    with connect(broker) as other:
        assert log_end(other, topic) == len(GOOD) + 1
        records, _ = read_log(other, topic)
    assert [r.value for r in records] == [*GOOD, b"fire and forget"]
    assert segment_size(broker, topic) == size


def test_many_hostile_batches_on_one_connection(broker):
    """Every corruption above, again and again on one connection, then a good produce."""
    topic = "hostile-many"
    with connect(broker) as c:
        size = good_topic(broker, c, topic)
        for _ in range(3):
            for name, (corrupt, code) in HOSTILE.items():
                assert produce(c, topic, corrupt()).error_code == code, name
    assert_untouched_and_serving(broker, topic, size)


def test_topic_limits_given_at_create_topics(broker):
    """max.message.bytes and segment.bytes set for the topic at CreateTopics: a larger batch is
    MESSAGE_TOO_LARGE, one larger than a segment RECORD_LIST_TOO_LARGE (Kafka's
    RecordBatchTooLargeException), and neither reaches the log."""
    value = bytes(range(256)) * 10  # an uncompressed batch of about 2.6 KB
    with connect(broker) as c:
        create_topic(c, "hostile-max-message", max_message_bytes="2048")
        refused = produce(c, "hostile-max-message", batch([value], timestamp=T0))
        assert refused.error_code == E.MESSAGE_TOO_LARGE
        assert produce(c, "hostile-max-message", batch([value[:1500]], timestamp=T0)).base_offset == 0
        assert log_end(c, "hostile-max-message") == 1
        create_topic(c, "hostile-small-segment", segment_bytes="1024")
        refused = produce(c, "hostile-small-segment", batch([value], timestamp=T0))
        assert refused.error_code == E.BY_NAME["RECORD_LIST_TOO_LARGE"].code
        assert produce(c, "hostile-small-segment", batch([value[:500]], timestamp=T0)).base_offset == 0
        records, _ = read_log(c, "hostile-small-segment")
        assert [r.value for r in records] == [value[:500]]
