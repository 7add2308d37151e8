"""A new group on one broker at Kafka's group defaults (group.initial.rebalance.delay.ms 3000):
its first member, a confluent-kafka Consumer with session.timeout.ms 6000 as librdkafka's own tests
run it, or a kafka-python KafkaConsumer with its defaults, is the member that forms generation 1
and reads everything. The stall this guards against: the initial delay was doubled for the first
member and the member's session ran while it waited in its JoinGroup, so it was removed as failed
before the group formed, again and again."""

from __future__ import annotations

import uuid

import pytest

from tests.support.brokers import running_broker
from tests.support.wait import wait_for

pytestmark = pytest.mark.integration

COUNT = 2000


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    # Kafka's group settings; only the offsets topic is smaller, so that it is created quickly.
    settings = {"offsets.topic.num.partitions": "3"}
    with running_broker(tmp_path_factory.mktemp("initial-delay"), **settings) as b:
        assert b.group_coordinator.config.initial_rebalance_delay_ms == 3000
        yield b


def produce(bootstrap: str, topic: str) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(COUNT):
        producer.produce(topic, b"%d" % i, partition=i % 2)
    assert producer.flush(30) == 0


def first_generation(broker, group: str) -> tuple[int, list[str]]:
    coordinator = broker.group_coordinator
    with coordinator._lock:
        g = coordinator.groups[group]
        return g.generation_id, list(g.members)


def test_confluent_kafka_consumer_forms_generation_one_at_kafka_defaults(broker):
    from confluent_kafka import Consumer

    bootstrap = f"127.0.0.1:{broker.bound_port('PLAINTEXT')}"
    topic, group = f"delay-ck-{uuid.uuid4().hex[:6]}", f"g-{uuid.uuid4().hex[:6]}"
    produce(bootstrap, topic)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                         "session.timeout.ms": 6000, "enable.auto.commit": False})
    seen: list[bytes] = []

    def poll() -> bool:
        # A batch a call: wait_for pauses between calls, and one message a call made reading
        # the 2000 records take 20 s.
        seen.extend(m.value() for m in consumer.consume(COUNT, 0.2) if m.error() is None)
        return len(seen) >= COUNT

    try:
        consumer.subscribe([topic])
        assert wait_for(poll, timeout=45), f"read {len(seen)} of {COUNT}"
        generation, members = first_generation(broker, group)
        assert (generation, len(members)) == (1, 1), (generation, members)
        assert consumer.memberid() == members[0]
    finally:
        consumer.close()
    assert sorted(int(v) for v in seen) == list(range(COUNT))


def test_kafka_python_consumer_forms_generation_one_at_its_defaults(broker):
    from kafka import KafkaConsumer

    bootstrap = f"127.0.0.1:{broker.bound_port('PLAINTEXT')}"
    topic, group = f"delay-kp-{uuid.uuid4().hex[:6]}", f"g-{uuid.uuid4().hex[:6]}"
    produce(bootstrap, topic)
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                             enable_auto_commit=False)
    seen: list[bytes] = []

    def poll() -> bool:
        for records in consumer.poll(timeout_ms=200).values():
            seen.extend(r.value for r in records)
        return len(seen) >= COUNT

    try:
        assert wait_for(poll, timeout=45), f"read {len(seen)} of {COUNT}"
        generation, members = first_generation(broker, group)
        assert (generation, len(members)) == (1, 1), (generation, members)
    finally:
        consumer.close()
    assert sorted(int(v) for v in seen) == list(range(COUNT))
