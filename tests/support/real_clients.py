"""Producing and consuming with real, unmodified clients — kcat (Debian's, librdkafka 2.0.2),
confluent-kafka, kafka-python and aiokafka — in one shape: messages go in as ``Msg`` (partition,
key, value, headers, timestamp) and every consumer's records come back as the log's ``LogRecord``,
so a test compares them byte for byte. Consumers use assign() (no group: groups are not served),
every call is bounded in time, and every client is closed."""

from __future__ import annotations

import asyncio
import random
import shutil
import subprocess
import time
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import pytest

from .raw_requests import LogRecord

TIMEOUT = 30.0


class Msg(NamedTuple):
    partition: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    timestamp: int


def messages(n: int, partitions: int, t0: int, seed: int, *, null_header_values: bool = True) -> list[Msg]:
    """``n`` varied messages: null and empty keys and values, binary and compressible bytes,
    repeated and non-ASCII header keys, timestamps out of order; spread over the partitions."""
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        key = None if i % 7 == 3 else b"key-%d-" % i + bytes(rnd.randrange(256) for _ in range(i % 5))
        if i % 11 == 5 and key is not None:  # kafka-python refuses a message without key and value
            value: bytes | None = None
        elif i % 13 == 6:
            value = b""
        else:
            value = bytes(rnd.randrange(256) for _ in range(rnd.randrange(40))) + b"compressible " * (i % 20)
        headers: tuple[tuple[str, bytes | None], ...] = ()
        if i % 3 == 0:
            headers = (("trace", b"id-%d" % i), ("trace", b"again"), ("ключ", bytes([0, 255, i % 256])))
            if null_header_values:
                headers += (("null-value", None),)
        out.append(Msg(i % partitions, key, value, headers, t0 + (i * 37) % 1000))
    return out


def by_partition(records: Iterable[LogRecord]) -> dict[int, list[LogRecord]]:
    out: dict[int, list[LogRecord]] = {}
    for r in sorted(records, key=lambda r: (r.partition, r.offset)):
        out.setdefault(r.partition, []).append(r)
    return out


def assert_read_back(sent: Sequence[Msg], got: Iterable[LogRecord], first_offset: int = 0) -> None:
    """Every partition holds exactly the messages sent to it, in the order sent, at consecutive
    offsets from ``first_offset``: keys, values, headers and timestamps byte for byte."""
    parts = by_partition(got)
    assert set(parts) <= {m.partition for m in sent}, sorted(parts)
    for p in sorted({m.partition for m in sent}):
        expected = [(m.key, m.value, m.headers, m.timestamp) for m in sent if m.partition == p]
        records = parts.get(p, [])
        assert [r.offset for r in records] == list(range(first_offset, first_offset + len(records))), p
        assert [(r.key, r.value, r.headers, r.timestamp) for r in records] == expected, p


def _headers(headers: Any) -> tuple[tuple[str, bytes | None], ...]:
    return tuple((k, None if v is None else bytes(v)) for k, v in (headers or ()))


def _deadline_passed(deadline: float, what: str, count: int, want: int) -> None:
    if time.monotonic() > deadline:
        raise AssertionError(f"{what}: {count} of {want} records within {TIMEOUT} s")


# --- confluent-kafka ---------------------------------------------------------------------------

def confluent_produce(bootstrap: str, topic: str, sent: Sequence[Msg], **conf: Any) -> list[tuple[int, int]]:
    """(partition, offset) of each message as its delivery report gave it."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, **conf})
    reports: dict[int, Any] = {}
    try:
        for i, m in enumerate(sent):
            producer.produce(topic, value=m.value, key=m.key, partition=m.partition,
                             headers=list(m.headers) or None, timestamp=m.timestamp,
                             on_delivery=lambda err, msg, i=i: reports.__setitem__(i, (err, msg)))
            producer.poll(0)
        assert producer.flush(TIMEOUT) == 0, "messages left undelivered"
    finally:
        _close(producer)
    errors = [str(err) for err, _ in reports.values() if err is not None]
    assert not errors, errors[:3]
    return [(reports[i][1].partition(), reports[i][1].offset()) for i in range(len(sent))]


def _close(client: Any) -> None:
    close = getattr(client, "close", None)  # Producer.close is recent in confluent-kafka
    if close is not None:
        close()


def confluent_consume(bootstrap: str, topic: str, partitions: Sequence[int], count: int,
                      **conf: Any) -> list[LogRecord]:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused-with-assign",
                         "enable.auto.commit": False, "enable.partition.eof": False, **conf})
    out: list[LogRecord] = []
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        deadline = time.monotonic() + TIMEOUT
        while len(out) < count:
            _deadline_passed(deadline, "confluent-kafka", len(out), count)
            for msg in consumer.consume(count - len(out), timeout=0.5):
                err = msg.error()
                if err is not None:
                    assert err.code() == KafkaError._PARTITION_EOF, err
                    continue
                _, ts = msg.timestamp()
                out.append(LogRecord(msg.partition(), msg.offset(), ts, msg.key(), msg.value(),
                                     _headers(msg.headers())))
    finally:
        consumer.close()
    return out


# --- kafka-python ------------------------------------------------------------------------------

def kafka_python_produce(bootstrap: str, topic: str, sent: Sequence[Msg],
                         **conf: Any) -> list[tuple[int, int]]:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, request_timeout_ms=int(TIMEOUT * 1000), **conf)
    try:
        futures = [producer.send(topic, value=m.value, key=m.key, partition=m.partition,
                                 headers=list(m.headers), timestamp_ms=m.timestamp) for m in sent]
        producer.flush(timeout=TIMEOUT)
        if conf.get("acks") == 0:
            return []
        metadata = [f.get(timeout=TIMEOUT) for f in futures]
    finally:
        producer.close(timeout=10)
    return [(md.partition, md.offset) for md in metadata]


def kafka_python_consume(bootstrap: str, topic: str, partitions: Sequence[int],
                         count: int) -> list[LogRecord]:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                             request_timeout_ms=int(TIMEOUT * 1000))
    out: list[LogRecord] = []
    try:
        tps = [TopicPartition(topic, p) for p in partitions]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        deadline = time.monotonic() + TIMEOUT
        while len(out) < count:
            _deadline_passed(deadline, "kafka-python", len(out), count)
            for tp_records in consumer.poll(timeout_ms=500).values():
                out += [LogRecord(r.partition, r.offset, r.timestamp, r.key, r.value, _headers(r.headers))
                        for r in tp_records]
    finally:
        consumer.close()
    return out


# --- aiokafka ----------------------------------------------------------------------------------

def aiokafka_produce(bootstrap: str, topic: str, sent: Sequence[Msg], **conf: Any) -> list[tuple[int, int]]:
    from aiokafka import AIOKafkaProducer

    async def run() -> list[tuple[int, int]]:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, request_timeout_ms=int(TIMEOUT * 1000),
                                    **conf)
        await producer.start()
        try:
            futures = [await producer.send(topic, value=m.value, key=m.key, partition=m.partition,
                                           headers=list(m.headers), timestamp_ms=m.timestamp) for m in sent]
            metadata = await asyncio.gather(*futures)
        finally:
            await producer.stop()
        return [(md.partition, md.offset) for md in metadata]

    return asyncio.run(asyncio.wait_for(run(), TIMEOUT + 10))


def aiokafka_consume(bootstrap: str, topic: str, partitions: Sequence[int], count: int) -> list[LogRecord]:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    async def run() -> list[LogRecord]:
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                                    request_timeout_ms=int(TIMEOUT * 1000))
        await consumer.start()
        out: list[LogRecord] = []
        try:
            tps = [TopicPartition(topic, p) for p in partitions]
            consumer.assign(tps)
            await consumer.seek_to_beginning(*tps)
            while len(out) < count:
                batches = await consumer.getmany(*tps, timeout_ms=500)
                out += [LogRecord(r.partition, r.offset, r.timestamp, r.key, r.value, _headers(r.headers))
                        for records in batches.values() for r in records]
        finally:
            await consumer.stop()
        return out

    return asyncio.run(asyncio.wait_for(run(), TIMEOUT))


# --- kcat --------------------------------------------------------------------------------------

KEY_DELIMITER, MESSAGE_DELIMITER = b"\x1f", b"\x1e"
KCAT_FORMAT = "%p|%o|%T|%K|%S|%k%s|%h\n"  # lengths first: keys and values are binary


def kcat() -> str:
    path = shutil.which("kcat")
    assert path, "kcat is installed by .ci/system-deps.sh"
    return path


def kcat_produce(bootstrap: str, topic: str, pairs: Sequence[tuple[bytes, bytes]], *args: str) -> None:
    """``kcat -P -K``: one message per (key, value), neither holding the delimiters."""
    data = b"".join(k + KEY_DELIMITER + v + MESSAGE_DELIMITER for k, v in pairs)
    assert data.count(MESSAGE_DELIMITER) == len(pairs) and data.count(KEY_DELIMITER) == len(pairs)
    out = subprocess.run([kcat(), "-P", "-b", bootstrap, "-t", topic, "-K", "\\x1f", "-D", "\\x1e",
                          "-X", "acks=all", *args], input=data, capture_output=True, timeout=TIMEOUT)
    assert out.returncode == 0, out.stderr.decode(errors="replace")
    assert b"ERROR" not in out.stderr, out.stderr.decode(errors="replace")


def kcat_consume(bootstrap: str, topic: str) -> list[LogRecord]:
    """``kcat -C -o beginning -e`` over every partition, parsed from KCAT_FORMAT."""
    out = subprocess.run([kcat(), "-C", "-b", bootstrap, "-t", topic, "-o", "beginning", "-e", "-q",
                          "-f", KCAT_FORMAT], capture_output=True, timeout=TIMEOUT)
    assert out.returncode == 0, out.stderr.decode(errors="replace")
    return parse_kcat(out.stdout)


def parse_kcat(data: bytes) -> list[LogRecord]:
    records, pos = [], 0
    while pos < len(data):
        fields = []
        for _ in range(5):
            end = data.index(b"|", pos)
            fields.append(int(data[pos:end]))
            pos = end + 1
        partition, offset, ts, key_len, value_len = fields
        key = None if key_len < 0 else data[pos:pos + key_len]
        pos += max(key_len, 0)
        value = None if value_len < 0 else data[pos:pos + value_len]
        pos += max(value_len, 0)
        assert data[pos:pos + 1] == b"|", data[pos - 20:pos + 20]
        end = data.index(b"\n", pos)
        text = data[pos + 1:end].decode()
        headers = tuple((h.split("=", 1)[0], h.split("=", 1)[1].encode()) for h in text.split(",") if h)
        records.append(LogRecord(partition, offset, ts, key, value, headers))
        pos = end + 1
    return records


def confluent_sasl_plain(bootstrap: str, user: str, password: str) -> dict[str, str]:
    """confluent-kafka's settings for a SASL/PLAIN login over SASL_PLAINTEXT."""
    return {"bootstrap.servers": bootstrap, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "PLAIN",
            "sasl.username": user, "sasl.password": password}


def kafka_python_sasl_plain(bootstrap: str, user: str, password: str) -> dict[str, object]:
    """kafka-python's settings for a SASL/PLAIN login over SASL_PLAINTEXT."""
    return {"bootstrap_servers": bootstrap, "security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN",
            "sasl_plain_username": user, "sasl_plain_password": password,
            "request_timeout_ms": int(TIMEOUT * 1000)}


def kafka_python_refused_everything(conf: dict[str, object], topic: str, consumed: str, group: str,
                                    new_topic: str) -> None:
    """kafka-python as a principal without rights: a (non-idempotent) produce to ``topic`` fails
    TOPIC_AUTHORIZATION_FAILED, consuming ``consumed`` in ``group`` GROUP_AUTHORIZATION_FAILED,
    creating ``new_topic`` TOPIC_AUTHORIZATION_FAILED; every client closed."""
    from kafka import KafkaConsumer, KafkaProducer
    from kafka.admin import KafkaAdminClient
    from kafka.errors import GroupAuthorizationFailedError, TopicAuthorizationFailedError

    producer = KafkaProducer(**conf, enable_idempotence=False, max_block_ms=10000)
    try:
        with pytest.raises(TopicAuthorizationFailedError):
            producer.send(topic, value=b"x").get(timeout=TIMEOUT)
    finally:
        producer.close(timeout=10)
    consumer = KafkaConsumer(consumed, group_id=group, **conf)
    try:
        with pytest.raises(GroupAuthorizationFailedError):
            deadline = time.monotonic() + TIMEOUT
            while time.monotonic() < deadline:
                consumer.poll(timeout_ms=500)
    finally:
        consumer.close()
    admin = KafkaAdminClient(**conf)
    try:
        with pytest.raises(TopicAuthorizationFailedError):
            admin.create_topics({new_topic: {"num_partitions": 1, "replication_factor": 1}})
    finally:
        admin.close()
