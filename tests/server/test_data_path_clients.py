"""Real clients on the data path of a broker process: kcat, confluent-kafka, kafka-python and aiokafka
produce (every codec, idempotent or not, acks 0/1/all) and consume with assign(); every message is
read back byte for byte (keys, values, headers, timestamps, order and offsets in each partition) by
the client and by a raw read of the log, which also shows each batch's codec. ListOffsets through the
clients' own calls: watermarks, beginning/end offsets, offsets for times."""

from __future__ import annotations

import random
import time

import pytest

from kafkalite.protocol.messages import api_versions
from kafkalite.protocol.records import Compression
from tests.support.broker_process import BrokerProcess
from tests.support.raw_requests import create_topic, log_end, read_log
from tests.support.real_clients import (
    Msg,
    aiokafka_consume,
    aiokafka_produce,
    assert_read_back,
    by_partition,
    confluent_consume,
    confluent_produce,
    kafka_python_consume,
    kafka_python_produce,
    kcat_consume,
    kcat_produce,
    messages,
)
from tests.support.wait import wait_for
from tests.support.wire_client import Client

pytestmark = pytest.mark.integration


CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
FIND_COORDINATOR = 10
T0 = int(time.time() * 1000) - 3_600_000  # recent: within any retention


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with BrokerProcess(tmp_path_factory.mktemp("data-path-clients")) as b:
        yield b


@pytest.fixture(scope="module")
def raw(broker):
    with Client("127.0.0.1", broker.port, timeout=30) as c:
        yield c


def log_of(raw: Client, topic: str, partitions: int):
    records, codecs = [], []
    for p in range(partitions):
        got, batch_codecs = read_log(raw, topic, p)
        records += got
        codecs += batch_codecs
    return records, codecs


def expected_codec(raw: Client, codec: str, librdkafka: bool) -> Compression:
    """librdkafka enables LZ4 only if the broker advertises FindCoordinator (its LZ4 feature is keyed
    on it, src/rdkafka_feature.c) and otherwise sends LZ4 batches uncompressed; groups, and with
    them FindCoordinator, are not served yet."""
    if codec == "lz4" and librdkafka:
        keys = {k.api_key for k in raw.call(18, 3, api_versions.REQUEST(
            client_software_name="t", client_software_version="1")).api_keys}
        return Compression.LZ4 if FIND_COORDINATOR in keys else Compression.NONE
    return Compression[codec.upper()]


def assert_codec(codecs: list[Compression], codec: Compression) -> None:
    """The batches are compressed with ``codec``; some may be plain, as producers send a batch
    uncompressed when compressing it does not make it smaller (kafka-python, librdkafka)."""
    assert codec in codecs, codecs
    assert set(codecs) <= {codec, Compression.NONE}, codecs


# --- kcat --------------------------------------------------------------------------------------

def kcat_pairs(n: int, seed: int) -> list[tuple[bytes, bytes]]:
    rnd = random.Random(seed)
    allowed = [b for b in range(256) if b not in (0x1E, 0x1F)]  # not the delimiters
    return [(b"kcat-key-%03d" % i, bytes(rnd.choice(allowed) for _ in range(rnd.randrange(1, 60)))
             + b" compressible" * 8) for i in range(n)]


@pytest.mark.parametrize("codec", CODECS)
def test_kcat_produces_and_consumes_every_codec(broker, raw, codec):
    topic = f"kcat-{codec}"
    create_topic(raw, topic, partitions=2)
    pairs = kcat_pairs(40, seed=CODECS.index(codec))
    before = int(time.time() * 1000)
    kcat_produce(broker.bootstrap, topic, pairs, "-H", "origin=kcat", "-H", "codec=" + codec,
                 *(["-z", codec] if codec != "none" else []))
    after = int(time.time() * 1000)
    log, codecs = log_of(raw, topic, 2)
    # The partitioner spreads the keys; each partition keeps the order they were sent in.
    order = {key: i for i, (key, _) in enumerate(pairs)}
    assert sorted((r.key, r.value) for r in log) == sorted(pairs)
    for records in by_partition(log).values():
        assert [order[r.key] for r in records] == sorted(order[r.key] for r in records)
        assert [r.offset for r in records] == list(range(len(records)))
    assert {r.headers for r in log} == {(("origin", b"kcat"), ("codec", codec.encode()))}
    assert all(before <= r.timestamp <= after for r in log)
    assert_codec(codecs, expected_codec(raw, codec, librdkafka=True))
    # kcat -C reads exactly what the log holds.
    assert sorted(kcat_consume(broker.bootstrap, topic)) == sorted(log)


# --- confluent-kafka ---------------------------------------------------------------------------

@pytest.mark.parametrize("idempotence", [False, True], ids=["plain", "idempotent"])
@pytest.mark.parametrize("codec", CODECS)
def test_confluent_kafka_acks_all_every_codec(broker, raw, codec, idempotence):
    topic = f"confluent-{codec}-{'idempotent' if idempotence else 'plain'}"
    create_topic(raw, topic, partitions=2)
    sent = messages(60, 2, T0, seed=1)
    offsets = confluent_produce(broker.bootstrap, topic, sent, acks="all", **{
        "compression.type": codec, "enable.idempotence": idempotence})
    assert offsets == [(m.partition, i // 2) for i, m in enumerate(sent)]
    log, codecs = log_of(raw, topic, 2)
    assert_read_back(sent, log)
    assert_codec(codecs, expected_codec(raw, codec, librdkafka=True))
    assert_read_back(sent, confluent_consume(broker.bootstrap, topic, [0, 1], len(sent)))


def test_confluent_kafka_acks_1_and_0(broker, raw):
    topic = "confluent-acks"
    create_topic(raw, topic)
    first = messages(10, 1, T0, seed=2)
    assert [o for _, o in confluent_produce(broker.bootstrap, topic, first, acks=1)] == list(range(10))
    second = messages(15, 1, T0 + 5000, seed=3)
    # acks=0: delivery reports come without offsets; the messages land all the same.
    confluent_produce(broker.bootstrap, topic, second, acks=0)
    assert wait_for(lambda: log_end(raw, topic) == 25, timeout=20)
    assert_read_back(first + second, read_log(raw, topic)[0])


# --- kafka-python ------------------------------------------------------------------------------

def python_client_round_trip(broker, raw, topic, codec, sent, produce, consume) -> None:
    """``sent`` produced with a Python client (``compression_type`` = ``codec``) to a new 2-partition
    topic, then checked in the log (records and codec) and read back with the same client."""
    create_topic(raw, topic, partitions=2)
    compression = {"compression_type": codec} if codec != "none" else {}
    offsets = produce(broker.bootstrap, topic, sent, **compression)
    assert offsets == [(m.partition, i // 2) for i, m in enumerate(sent)]
    log, codecs = log_of(raw, topic, 2)
    assert_read_back(sent, log)
    assert_codec(codecs, expected_codec(raw, codec, librdkafka=False))
    assert_read_back(sent, consume(broker.bootstrap, topic, [0, 1], len(sent)))


@pytest.mark.parametrize("codec", CODECS)
def test_kafka_python_default_producer_every_codec(broker, raw, codec):
    """KafkaProducer's defaults make it idempotent (InitProducerId first, acks=all)."""
    sent = messages(60, 2, T0, seed=4, null_header_values=False)  # kafka-python refuses them
    python_client_round_trip(broker, raw, f"kafka-python-{codec}", codec, sent, kafka_python_produce,
                             kafka_python_consume)


def test_kafka_python_acks_0(broker, raw):
    topic = "kafka-python-acks-0"
    create_topic(raw, topic)
    sent = messages(30, 1, T0, seed=5, null_header_values=False)
    kafka_python_produce(broker.bootstrap, topic, sent, acks=0, enable_idempotence=False)
    assert wait_for(lambda: log_end(raw, topic) == len(sent), timeout=20)
    assert_read_back(sent, read_log(raw, topic)[0])
    assert_read_back(sent, kafka_python_consume(broker.bootstrap, topic, [0], len(sent)))


# --- aiokafka ----------------------------------------------------------------------------------

@pytest.mark.parametrize("codec", CODECS)
def test_aiokafka_every_codec(broker, raw, codec):
    python_client_round_trip(broker, raw, f"aiokafka-{codec}", codec, messages(60, 2, T0, seed=6),
                             aiokafka_produce, aiokafka_consume)


# --- every consumer reads what every producer wrote ----------------------------------------------

def test_every_consumer_reads_every_producers_batches(broker, raw):
    """One topic written by four producers with four codecs; four consumers read the same records."""
    topic = "mixed-producers"
    create_topic(raw, topic, partitions=3)
    kcat_produce(broker.bootstrap, topic, kcat_pairs(12, seed=7), "-p", "0", "-z", "gzip")
    confluent_produce(broker.bootstrap, topic, messages(20, 3, T0, seed=8), **{"compression.type": "zstd"})
    kafka_python_produce(broker.bootstrap, topic, messages(20, 3, T0 + 1, seed=9, null_header_values=False),
                         compression_type="lz4")
    aiokafka_produce(broker.bootstrap, topic, messages(20, 3, T0 + 2, seed=10), compression_type="snappy")
    log, codecs = log_of(raw, topic, 3)
    assert len(log) == 72
    assert {Compression.GZIP, Compression.ZSTD, Compression.LZ4, Compression.SNAPPY} <= set(codecs)
    for read in (lambda: confluent_consume(broker.bootstrap, topic, [0, 1, 2], len(log)),
                 lambda: kafka_python_consume(broker.bootstrap, topic, [0, 1, 2], len(log)),
                 lambda: aiokafka_consume(broker.bootstrap, topic, [0, 1, 2], len(log))):
        assert by_partition(read()) == by_partition(log)
    # kcat's %h prints header values as text (binary and null ones are lost): all but headers.
    assert ({p: [r[:5] for r in rs] for p, rs in by_partition(kcat_consume(broker.bootstrap, topic)).items()}
            == {p: [r[:5] for r in rs] for p, rs in by_partition(log).items()})


# --- ListOffsets through the clients -----------------------------------------------------------

def test_list_offsets_through_the_clients(broker, raw):
    topic = "list-offsets"
    create_topic(raw, topic)
    # 100 records, 10 ms apart, in several batches.
    sent = [Msg(0, b"%d" % i, b"v", (), T0 + 10 * i) for i in range(100)]
    for start in range(0, 100, 25):
        confluent_produce(broker.bootstrap, topic, sent[start:start + 25])
    from confluent_kafka import Consumer
    from confluent_kafka import TopicPartition as CTP

    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "unused"})
    try:
        assert consumer.get_watermark_offsets(CTP(topic, 0), timeout=20) == (0, 100)
        # The first offset whose timestamp is at or after the one asked; -1 (the end) past the last.
        # One partition per call: librdkafka keeps one entry per partition.
        for ts, offset in [(T0, 0), (T0 + 370, 37), (T0 + 375, 38), (T0 + 990, 99), (T0 + 991, -1)]:
            (found,) = consumer.offsets_for_times([CTP(topic, 0, ts)], timeout=20)
            assert (found.error, found.offset) == (None, offset), ts
    finally:
        consumer.close()

    from kafka import KafkaConsumer
    from kafka import TopicPartition as KTP

    tp = KTP(topic, 0)
    kc = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=None, request_timeout_ms=30000)
    try:
        assert kc.beginning_offsets([tp]) == {tp: 0}
        assert kc.end_offsets([tp]) == {tp: 100}
        middle = kc.offsets_for_times({tp: T0 + 375})[tp]
        assert (middle.offset, middle.timestamp) == (38, T0 + 380)
        assert kc.offsets_for_times({tp: T0 + 5000}) == {tp: None}
    finally:
        kc.close()


# --- topics created by producing to them -------------------------------------------------------

def test_producers_create_a_topic_by_naming_it(broker, raw):
    """auto.create.topics.enable (true by default): the producers' Metadata request for a topic
    that does not exist creates it with num.partitions (1); the messages then land in it."""
    pairs = kcat_pairs(5, seed=11)
    kcat_produce(broker.bootstrap, "auto-kcat", pairs)
    log, _ = read_log(raw, "auto-kcat")
    assert [(r.key, r.value) for r in log] == pairs
    sent = messages(8, 1, T0, seed=12, null_header_values=False)
    assert kafka_python_produce(broker.bootstrap, "auto-kafka-python", sent) == [(0, i) for i in range(8)]
    assert_read_back(sent, read_log(raw, "auto-kafka-python")[0])
