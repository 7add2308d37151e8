"""A rolling upgrade with confluent-kafka 2.16 on an in-process kafkalite (online migration,
group.consumer.migration.policy=bidirectional): a classic group of two members reads a
6-partition topic; a member with ``group.protocol=consumer`` joins and the group becomes a
consumer group in which the classic members stay, the three sharing the partitions; that member
leaves and the group is classic again, the two owning everything. Offsets are committed after
each record, and every record is read exactly once across the changes."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient

from kafkalite.testing import Cluster
from tests.support.wait import wait_for

SETTINGS = {"group.consumer.min.heartbeat.interval.ms": "200", "group.consumer.heartbeat.interval.ms": "200",
            "group.initial.rebalance.delay.ms": "0"}
TOPIC, GROUP = "migrating", "rolling"


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with Cluster(1, settings=SETTINGS) as c:
        yield c


def produce(cluster: Cluster, start: int, count: int) -> None:
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers})
    for i in range(start, start + count):
        p.produce(TOPIC, value=str(i).encode(), partition=i % 6)
    assert p.flush(10) == 0


def consumer(cluster: Cluster, protocol: str) -> Consumer:
    config: dict[str, object] = {
        "bootstrap.servers": cluster.bootstrap_servers, "group.id": GROUP, "group.protocol": protocol,
        "auto.offset.reset": "earliest", "enable.auto.commit": False,
        "topic.metadata.refresh.interval.ms": 500}
    if protocol == "classic":
        config.update({"session.timeout.ms": 6000, "heartbeat.interval.ms": 200,
                       "max.poll.interval.ms": 15000})
    c = Consumer(config)
    c.subscribe([TOPIC])
    return c


class Reader:
    """Polls its consumers in turn, committing each record as it is read; counts every read."""

    def __init__(self) -> None:
        self.reads: dict[bytes, int] = {}

    def poll(self, consumers: list[Consumer]) -> None:
        for c in consumers:
            m = c.poll(0.02)
            if m is None or m.error():
                continue
            self.reads[m.value()] = self.reads.get(m.value(), 0) + 1
            c.commit(message=m, asynchronous=False)

    def until(self, consumers: list[Consumer], done, timeout: float = 30.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.poll(consumers)
            if done():
                return True
        return False


def group_type(admin: AdminClient) -> str | None:
    listed = admin.list_consumer_groups().result(10)
    for g in listed.valid:
        if g.group_id == GROUP:
            return str(g.type.name).lower()
    return None


def test_a_rolling_upgrade_and_back(cluster):
    cluster.create_topic(TOPIC, partitions=6)
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    reader = Reader()
    classic = [consumer(cluster, "classic") for _ in range(2)]
    modern: Consumer | None = None
    try:
        produce(cluster, 0, 60)
        assert reader.until(classic, lambda: len(reader.reads) >= 20 and all(
            len(c.assignment()) == 3 for c in classic))
        assert group_type(admin) == "classic"

        modern = consumer(cluster, "consumer")
        three = [*classic, modern]
        assert reader.until(three, lambda: all(c.assignment() for c in three) and len(reader.reads) == 60)
        assert group_type(admin) == "consumer"
        owned = sorted(tp.partition for c in three for tp in c.assignment())
        assert owned == list(range(6))
        produce(cluster, 60, 30)
        assert reader.until(three, lambda: len(reader.reads) == 90)

        modern.close()
        modern = None
        assert wait_for(lambda: group_type(admin) == "classic", timeout=10)
        assert reader.until(classic, lambda: sorted(tp.partition for c in classic for tp in c.assignment())
                            == list(range(6)) and all(c.assignment() for c in classic))
        produce(cluster, 90, 30)
        assert reader.until(classic, lambda: len(reader.reads) == 120)
        assert reader.reads == {str(i).encode(): 1 for i in range(120)}  # each once, committed offsets kept
    finally:
        for c in classic:
            c.close()
        if modern is not None:
            modern.close()
