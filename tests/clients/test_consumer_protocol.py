"""confluent-kafka 2.16 consumers with ``group.protocol=consumer`` (KIP-848) against an in-process
kafkalite: three members share six partitions and read everything; a regex subscription picks up
a topic created later; a classic and a consumer group read the same topic side by side; committed
offsets carry over when a member leaves. One cluster for the module, each test its own topics and
groups."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from kafkalite.testing import Cluster
from tests.support.wait import wait_for

SETTINGS = {"group.consumer.min.heartbeat.interval.ms": "200", "group.consumer.heartbeat.interval.ms": "200",
            "group.initial.rebalance.delay.ms": "0"}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with Cluster(1, settings=SETTINGS) as c:
        yield c


def produce(cluster: Cluster, topic: str, count: int, partitions: int) -> None:
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers})
    for i in range(count):
        p.produce(topic, value=f"{topic}-{i}".encode(), partition=i % partitions)
    assert p.flush(10) == 0


def consumer(cluster: Cluster, group: str, protocol: str = "consumer", **extra: object) -> Consumer:
    config = {"bootstrap.servers": cluster.bootstrap_servers, "group.id": group, "group.protocol": protocol,
              "auto.offset.reset": "earliest", "topic.metadata.refresh.interval.ms": 500, **extra}
    if protocol == "classic":
        config["session.timeout.ms"] = 6000
    return Consumer(config)


def read(consumers: list[Consumer], want: int, timeout: float = 20.0, on_message=None,
         key=lambda i, m: m.value()) -> dict:
    """Poll every consumer in turn until ``want`` distinct keys (values) were read: key -> readers."""
    seen: dict = {}
    deadline = time.monotonic() + timeout
    while len(seen) < want and time.monotonic() < deadline:
        for i, c in enumerate(consumers):
            m = c.poll(0.05)
            if m is None or m.error():
                continue
            seen.setdefault(key(i, m), []).append(i)
            if on_message is not None:
                on_message(c, m)
    return seen


def test_three_members_share_six_partitions_and_read_everything(cluster):
    cluster.create_topic("six", partitions=6)
    produce(cluster, "six", 120, 6)
    members = [consumer(cluster, "three") for _ in range(3)]
    try:
        for m in members:
            m.subscribe(["six"])
        seen = read(members, 120)
        assert len(seen) == 120 and all(len(r) == 1 for r in seen.values())
        assert wait_for(lambda: ([m.poll(0.05) for m in members] and
                                 sorted(len(m.assignment()) for m in members) == [2, 2, 2]), timeout=15)
        owned = [tp.partition for m in members for tp in m.assignment()]
        assert sorted(owned) == list(range(6))
    finally:
        for m in members:
            m.close()


def test_a_regex_subscription_picks_up_a_topic_created_later(cluster):
    cluster.create_topic("rx-one", partitions=2)
    cluster.create_topic("other-rx", partitions=1)
    produce(cluster, "rx-one", 10, 2)
    produce(cluster, "other-rx", 5, 1)
    c = consumer(cluster, "regex")
    try:
        c.subscribe(["^rx-.*"])
        seen = read([c], 10)
        assert {v.decode().rsplit("-", 1)[0] for v in seen} == {"rx-one"}
        cluster.create_topic("rx-two", partitions=3)
        produce(cluster, "rx-two", 9, 3)
        seen = read([c], 9, timeout=30)
        assert {v.decode().rsplit("-", 1)[0] for v in seen} == {"rx-two"} and len(seen) == 9
    finally:
        c.close()


def test_a_classic_and_a_consumer_group_read_the_same_topic_side_by_side(cluster):
    cluster.create_topic("shared", partitions=3)
    produce(cluster, "shared", 30, 3)
    classic = consumer(cluster, "side-classic", protocol="classic")
    modern = consumer(cluster, "side-consumer")
    try:
        classic.subscribe(["shared"])
        modern.subscribe(["shared"])
        # Each group reads all 30 on its own: 60 (value, reader) pairs in all.
        seen = read([classic, modern], 60, key=lambda i, m: (m.value(), i))
        assert len(seen) == 60 and all(r == [i] for (_, i), r in seen.items())
    finally:
        classic.close()
        modern.close()


def test_committed_offsets_carry_over_when_a_member_leaves(cluster):
    cluster.create_topic("handover", partitions=4)
    produce(cluster, "handover", 80, 4)
    first = consumer(cluster, "handover", **{"enable.auto.commit": False})
    first.subscribe(["handover"])
    taken: list[bytes] = []

    def commit(c: Consumer, m) -> None:
        taken.append(m.value())
        c.commit(message=m, asynchronous=False)

    try:
        read([first], 30, on_message=commit)
        committed = {tp.partition: tp.offset for tp in first.committed(
            [TopicPartition("handover", p) for p in range(4)], timeout=10)}
    finally:
        first.close()
    assert len(taken) >= 30
    second = consumer(cluster, "handover")
    try:
        second.subscribe(["handover"])
        rest = read([second], 80 - len(taken))
        # Nothing read twice: the second member started at the first one's commits.
        assert not set(rest) & set(taken) and len(rest) + len(taken) == 80
        assert sum(max(o, 0) for o in committed.values()) == len(taken)
    finally:
        second.close()
