"""Each fault of kafkalite.testing seen by a real client (confluent-kafka, kafka-python, aiokafka)
against one in-process cluster of 3 brokers for the module; every test clears its faults."""

from __future__ import annotations

import asyncio
import socket
import time
import uuid

import pytest
from confluent_kafka import KafkaError, Producer
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from kafkalite.protocol import ApiKey
from kafkalite.testing import Cluster, FaultError
from tests.support.wait import wait_for

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def cluster():
    with Cluster(3) as c:
        yield c


@pytest.fixture(autouse=True)
def no_faults_after(cluster):
    yield
    cluster.clear_faults()


def _topic(cluster: Cluster, partitions: int = 1) -> str:
    name = f"t-{uuid.uuid4().hex[:8]}"
    cluster.create_topic(name, partitions)
    return name


def _deliver(producer: Producer, topic: str, value: bytes, partition: int = 0, timeout: float = 30):
    """The delivery report of one message: (error or None, message)."""
    got = []
    producer.produce(topic, value, partition=partition, on_delivery=lambda err, msg: got.append((err, msg)))
    assert producer.flush(timeout) == 0
    return got[0]


def _read_all(cluster: Cluster, topic: str, partition: int = 0, expect: int = 1) -> list[bytes]:
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, enable_auto_commit=False,
                             consumer_timeout_ms=10_000, auto_offset_reset="earliest")
    try:
        consumer.assign([TopicPartition(topic, partition)])
        values = []
        for message in consumer:
            values.append(message.value)
            if len(values) >= expect:
                break
        return values
    finally:
        consumer.close()


def test_retriable_produce_errors_are_retried_and_the_record_lands_once(cluster):
    topic = _topic(cluster)
    cluster.push_errors("Produce", "NOT_LEADER_OR_FOLLOWER", "REQUEST_TIMED_OUT", count=2)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "enable.idempotence": True,
                         "retry.backoff.ms": 10})
    err, msg = _deliver(producer, topic, b"once")
    assert err is None and msg.offset() == 0
    # The leader answered its four errors (the others kept theirs: each broker has its own stack).
    leader = cluster.leader(topic)
    assert cluster.pending_errors(leader)[leader] == []
    assert _read_all(cluster, topic) == [b"once"]  # refused requests appended nothing


def test_a_non_retriable_error_reaches_the_application(cluster):
    topic = _topic(cluster)
    cluster.push_errors(ApiKey.PRODUCE, 87)  # INVALID_RECORD
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers})
    err, _ = _deliver(producer, topic, b"refused")
    assert err is not None and err.code() == KafkaError.INVALID_RECORD
    err, msg = _deliver(producer, topic, b"accepted")  # the stack is used up
    assert err is None and msg.offset() == 0


def test_a_partition_fault_answers_that_partition_only(cluster):
    topic = _topic(cluster, partitions=2)
    for broker in (1, 2, 3):
        cluster.push_errors("Produce", "RECORD_LIST_TOO_LARGE", broker=broker, topic=topic, partition=1)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 50})
    got: dict[int, object] = {}
    for p in (0, 1):
        producer.produce(topic, b"x", partition=p,
                         on_delivery=lambda err, msg: got.__setitem__(msg.partition(), err))
    assert producer.flush(30) == 0
    assert got[0] is None
    assert got[1] is not None and got[1].code() == KafkaError.RECORD_LIST_TOO_LARGE


def test_fetch_errors_are_retried_by_kafka_python(cluster):
    topic = _topic(cluster)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers})
    assert _deliver(producer, topic, b"read me")[0] is None
    cluster.push_errors("Fetch", "NOT_LEADER_OR_FOLLOWER", "UNKNOWN_TOPIC_OR_PARTITION")
    assert _read_all(cluster, topic) == [b"read me"]
    leader = cluster.leader(topic)
    assert cluster.pending_errors(leader)[leader] == []


def test_aiokafka_retries_a_retriable_error(cluster):
    aiokafka = pytest.importorskip("aiokafka")
    topic = _topic(cluster)
    cluster.push_errors("Produce", "NOT_ENOUGH_REPLICAS", count=2)

    async def send() -> int:
        producer = aiokafka.AIOKafkaProducer(bootstrap_servers=cluster.bootstrap_servers,
                                             retry_backoff_ms=10, request_timeout_ms=10_000)
        await producer.start()
        try:
            meta = await producer.send_and_wait(topic, b"async", partition=0)
            return meta.offset
        finally:
            await producer.stop()

    assert asyncio.run(asyncio.wait_for(send(), 60)) == 0


def test_added_round_trip_time_shows_in_the_clients_timings(cluster):
    topic = _topic(cluster)
    leader = cluster.leader(topic)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks=1)
    try:
        producer.send(topic, b"warm", partition=0).get(30)  # connected, metadata known
        cluster.set_rtt(300, broker=leader)
        started = time.monotonic()
        producer.send(topic, b"slow", partition=0).get(30)
        slow = time.monotonic() - started
        cluster.set_rtt(0, broker=leader)
    finally:
        producer.close()
    assert slow >= 0.3  # a lower bound: the response cannot have come sooner


def test_a_broker_down_refuses_clients_and_keeps_its_leaderships(cluster):
    topic = _topic(cluster, partitions=3)
    leaders = {p: cluster.leader(topic, p) for p in range(3)}
    victim = next(b for b in leaders.values() if b != 1)
    port = cluster.nodes[victim].client_port
    cluster.take_down(victim)
    try:
        with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), 5):
            pass
        assert {p: cluster.leader(topic, p) for p in range(3)} == leaders
    finally:
        cluster.bring_up(victim)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers})
    partition = next(p for p, b in leaders.items() if b == victim)
    err, _ = _deliver(producer, topic, b"back", partition=partition)
    assert err is None


def test_a_killed_broker_fails_over_and_comes_back(cluster):
    topic = _topic(cluster, partitions=3)
    partition, victim = next((p, cluster.leader(topic, p)) for p in range(3) if cluster.leader(topic, p) != 1)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all",
                         "enable.idempotence": True})
    assert _deliver(producer, topic, b"before", partition)[0] is None
    cluster.kill(victim)
    try:
        assert wait_for(lambda: cluster.leader(topic, partition) not in (victim, -1), timeout=10)
        err, msg = _deliver(producer, topic, b"after", partition)
        assert err is None and msg.offset() == 1
    finally:
        cluster.restart(victim)
    # Back as a follower that catches up: in the ISR again.
    def in_isr() -> bool:
        info = cluster.controller.metadata_cache.snapshot.topics[topic].partitions[partition]
        return victim in info.isr
    assert wait_for(in_isr, timeout=30)
    assert _read_all(cluster, topic, partition, expect=2) == [b"before", b"after"]


def test_dropped_connections_are_closed_and_clients_reconnect(cluster):
    topic = _topic(cluster)
    leader = cluster.leader(topic)
    raw = socket.create_connection(("127.0.0.1", cluster.nodes[leader].client_port), 5)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers})
    try:
        assert _deliver(producer, topic, b"1")[0] is None
        raw.settimeout(10)
        cluster.drop_connections(broker=leader)
        assert raw.recv(1) == b""  # closed by the broker
        assert _deliver(producer, topic, b"2")[0] is None
    finally:
        raw.close()


def test_capture_records_what_the_client_sent(cluster):
    topic = _topic(cluster)
    with cluster.capture() as requests:
        producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, client_id="captured-app",
                                 acks=1)
        try:
            producer.send(topic, b"seen", key=b"k", partition=0).get(30)
        finally:
            producer.close()
    produces = [r for r in requests if r.api_name == "Produce"]
    assert len(produces) == 1
    produce = produces[0]
    assert produce.client_id == "captured-app"
    assert produce.body["acks"] == 1
    assert [t["name"] for t in produce.body["topic_data"]] == [topic]
    assert {r.api_name for r in requests} >= {"ApiVersions", "Metadata", "Produce"}
    assert not cluster.nodes[1].broker.faults.captured()  # the capture ended with the block


def test_older_max_versions_are_what_the_client_uses(cluster):
    topic = _topic(cluster)
    cluster.set_max_versions({"Produce": 3, "Metadata": 4})
    with cluster.capture() as requests:
        producer = Producer({"bootstrap.servers": cluster.bootstrap_servers})
        assert _deliver(producer, topic, b"old")[0] is None
    versions = {(r.api_name, r.api_version) for r in requests}
    assert ("Produce", 3) in versions
    assert all(v <= 3 for name, v in versions if name == "Produce")
    assert all(v <= 4 for name, v in versions if name == "Metadata")


def test_bad_faults_are_refused_with_a_reason(cluster):
    with pytest.raises(FaultError, match="unknown api"):
        cluster.push_errors("NoSuchApi", 6)
    with pytest.raises(FaultError, match="unknown error"):
        cluster.push_errors("Produce", "NO_SUCH_ERROR")
    with pytest.raises(FaultError, match="per-partition"):
        cluster.push_errors("Metadata", 3, topic="t", partition=0)
    with pytest.raises(FaultError, match="no broker 9"):
        cluster.set_rtt(10, broker=9)
