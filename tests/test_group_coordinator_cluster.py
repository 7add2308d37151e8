"""The group coordinator across 3 broker processes: __consumer_offsets is replicated (factor 3),
so committed offsets survive their coordinator's SIGKILL (the new leader of the group's partition
loads them and answers) and its graceful restart; the compacted offsets topic stays small under
many commits of the same offsets."""

from __future__ import annotations

import os
import signal

import pytest

from kafkalite.clients import BlockingClient
from kafkalite.local import processes as C
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import create_topics as ct
from tests.support.wait import wait_for

from .test_cluster_faults import proxied_cluster, restart

pytestmark = pytest.mark.integration


SETTINGS = ("broker.heartbeat.interval.ms=200", "broker.session.timeout.ms=1500",
            "replica.lag.time.max.ms=2000", "replica.fetch.wait.max.ms=100",
            "replica.fetch.backoff.ms=100",
            "group.initial.rebalance.delay.ms=0", "offsets.topic.num.partitions=1",
            "offsets.topic.segment.bytes=4096", "log.cleaner.backoff.ms=100",
            "leader.imbalance.check.interval.seconds=1")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with proxied_cluster(str(tmp_path_factory.mktemp("groups-cluster")), SETTINGS) as state:
        # __consumer_offsets made by hand, led by broker 2: broker 1 runs the only controller,
        # and a coordinator killed here must leave a controller to elect its successor.
        create_offsets_topic(state["nodes"][0].client_port, [2, 3, 1])
        yield state


def create_offsets_topic(port: int, replicas: list[int]) -> None:
    R = ct.REQUEST
    client = BlockingClient("127.0.0.1", port, "test", 30)
    try:
        topic = R["topics"](name="__consumer_offsets", num_partitions=-1, replication_factor=-1,
                            assignments=[R["topics"]["assignments"](partition_index=0, broker_ids=replicas)],
                            configs=[R["topics"]["configs"](name="cleanup.policy", value="compact"),
                                     R["topics"]["configs"](name="segment.bytes", value="4096")])
        answer = client.send_and_receive(ApiKey.CREATE_TOPICS, 7, R(topics=[topic], timeout_ms=30000))
        assert answer.topics[0].error_code == 0, answer.topics[0]
    finally:
        client.close()


def bootstrap(cluster) -> str:
    return ",".join(f"127.0.0.1:{n.client_port}" for n in cluster["nodes"] if n.process.poll() is None)


def committed(servers: str, group: str, topic: str, partitions: int) -> list[int]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": servers, "group.id": group})
    try:
        wanted = [TopicPartition(topic, p) for p in range(partitions)]
        return [tp.offset for tp in consumer.committed(wanted, timeout=10)]
    except Exception:
        return []
    finally:
        consumer.close()


def commit(servers: str, group: str, topic: str, offsets: list[int]) -> None:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": servers, "group.id": group})
    try:
        consumer.commit(offsets=[TopicPartition(topic, p, o) for p, o in enumerate(offsets)],
                        asynchronous=False)
    finally:
        consumer.close()


def offsets_leader(cluster) -> int:
    from confluent_kafka.admin import AdminClient

    md = AdminClient({"bootstrap.servers": bootstrap(cluster)}).list_topics(timeout=10)
    topic = md.topics.get("__consumer_offsets")
    return topic.partitions[0].leader if topic is not None else -1


def test_committed_offsets_survive_the_coordinators_death_and_restart(cluster):
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap(cluster)})
    admin.create_topics([NewTopic("orders", 2, 3)])["orders"].result(30)
    commit(bootstrap(cluster), "billing", "orders", [11, 22])
    assert committed(bootstrap(cluster), "billing", "orders", 2) == [11, 22]
    assert wait_for(lambda: offsets_leader(cluster) > 0, timeout=30)
    # SIGKILL the coordinator: another replica of __consumer_offsets-0 takes over and loads them.
    leader = offsets_leader(cluster)
    assert leader != 1  # the controller's broker is never the one killed (see the fixture)
    node = cluster["nodes"][leader - 1]
    node.process.send_signal(signal.SIGKILL)
    node.process.wait(10)
    assert wait_for(lambda: offsets_leader(cluster) not in (leader, -1), timeout=30)
    assert wait_for(lambda: committed(bootstrap(cluster), "billing", "orders", 2) == [11, 22], timeout=30)
    commit(bootstrap(cluster), "billing", "orders", [12, 23])  # to the new coordinator
    restart(cluster, leader)
    assert C.wait_registered(cluster["nodes"], 60)
    # Gracefully stopped (controlled shutdown): the coordinator moves again, nothing is lost.
    second = offsets_leader(cluster)
    assert second != 1
    cluster["nodes"][second - 1].process.send_signal(signal.SIGTERM)
    assert cluster["nodes"][second - 1].process.wait(30) == 0
    assert wait_for(lambda: committed(bootstrap(cluster), "billing", "orders", 2) == [12, 23], timeout=30)
    restart(cluster, second)
    assert C.wait_registered(cluster["nodes"], 60)


def test_the_compacted_offsets_topic_stays_small_under_many_commits(cluster):
    from confluent_kafka import Consumer, TopicPartition

    servers = bootstrap(cluster)
    consumer = Consumer({"bootstrap.servers": servers, "group.id": "busy"})
    try:
        for i in range(300):
            consumer.commit(offsets=[TopicPartition("orders", p, i) for p in range(2)], asynchronous=False)
    finally:
        consumer.close()
    assert committed(servers, "busy", "orders", 2) == [299, 299]
    leader = offsets_leader(cluster)
    log_dir = f"{cluster['dir']}/broker-{leader}/__consumer_offsets-0"

    def size() -> int:
        files = [f for f in os.listdir(log_dir) if f.endswith(".log")]
        return sum(os.path.getsize(os.path.join(log_dir, f)) for f in files)

    # 300 commit batches are ~40 KB: the cleaner keeps about the last of each key, and the
    # active segment (4 KB here).
    assert wait_for(lambda: size() < 12000, timeout=60), size()
