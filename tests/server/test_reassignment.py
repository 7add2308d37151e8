"""Partition reassignment (KIP-455) against a 3-broker Cluster with files: AlterPartitionReassignments
and ListPartitionReassignments over the wire (kafka-python's KafkaAdminClient and kafkalite's codec
client; confluent-kafka 2.16.1's Python AdminClient has no reassignment call), the data moved under
an acks=all idempotent producer, cancel, Kafka's errors, and the replication throttles.

Broker 3 throttles what it fetches as a follower (follower.replication.throttled.rate) for the
topics whose follower.replication.throttled.replicas name it: those reassignments stay in progress
long enough to be listed and cancelled; broker 1 throttles what it sends as a leader for those whose
leader.replication.throttled.replicas name it. One cluster for the module; a controller restart
in the middle of a move on two brokers of their own."""

from __future__ import annotations

import os
import threading

import pytest

from kafkalite.controller.context import TopicPartition
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import alter_partition_reassignments as A
from kafkalite.protocol.messages import list_partition_reassignments as L
from tests.support.brokers import connect
from tests.support.wait import wait_for

pytestmark = pytest.mark.integration

ALTER, LIST = 45, 46
FOLLOWER_RATE = 200_000  # bytes/s, broker 3's follower throttle
LEADER_RATE = 300_000  # bytes/s, broker 1's leader throttle
SETTINGS = {"auto.leader.rebalance.enable": "false", "replica.fetch.max.bytes": "65536",
            "replication.quota.window.size.seconds": "1"}


@pytest.fixture(scope="module")
def cluster():
    from kafkalite.testing import Cluster

    with Cluster(3, storage="files", offsets_topic=False, settings=SETTINGS,
                 broker_settings={1: {"leader.replication.throttled.rate": str(LEADER_RATE)},
                                  3: {"follower.replication.throttled.rate": str(FOLLOWER_RATE)}}) as c:
        yield c


def alter(broker, moves: dict[tuple[str, int], list[int] | None], version: int = 1, timeout_ms: int = 30000,
          allow_rf_change: bool = True):
    topics: dict[str, list] = {}
    for (topic, p), replicas in moves.items():
        topics.setdefault(topic, []).append(A.REASSIGNABLE_PARTITION(partition_index=p, replicas=replicas))
    body = A.REQUEST(timeout_ms=timeout_ms, allow_replication_factor_change=allow_rf_change,
                     topics=[A.REASSIGNABLE_TOPIC(name=t, partitions=ps) for t, ps in topics.items()])
    with connect(broker) as c:
        return c.call(ALTER, version, body)


def results(response) -> dict[tuple[str, int], tuple[int, str | None]]:
    return {(t.name, p.partition_index): (p.error_code, p.error_message)
            for t in response.responses for p in t.partitions}


def listed(broker, topics: dict[str, list[int]] | None = None):
    asked = None if topics is None else [L.REQUEST_TOPIC(name=t, partition_indexes=ps)
                                         for t, ps in topics.items()]
    with connect(broker) as c:
        response = c.call(LIST, 0, L.REQUEST(timeout_ms=10000, topics=asked))
    assert response.error_code == E.NONE
    return {(t.name, p.partition_index):
            (list(p.replicas), list(p.adding_replicas), list(p.removing_replicas))
            for t in response.topics for p in t.partitions}


def state(cluster, topic: str, partition: int = 0):
    """(replicas, leader, isr) as the controller has them."""
    ctx = cluster.controller.controller.context
    tp = TopicPartition(topic, partition)
    lead = ctx.partition_leadership[tp]
    return ctx.partition_replica_assignment(tp), lead.leader, tuple(lead.isr)


def log_dir(cluster, broker: int, topic: str, partition: int = 0) -> str:
    return os.path.join(cluster.nodes[broker].settings["log.dirs"], f"{topic}-{partition}")


def everyone_sees(cluster, topic: str, replicas: list[int], leader: int) -> bool:
    for node in cluster.nodes.values():
        info = node.broker.metadata_cache.snapshot.topics.get(topic)
        p = info.partitions.get(0) if info is not None else None
        if p is None or list(p.replicas) != replicas or p.leader != leader:
            return False
    return True


def fill(cluster, topic: str, count: int, size: int = 1000) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all",
                         "linger.ms": 5})
    for i in range(count):
        producer.produce(topic, value=b"x" * size, key=str(i).encode())
    assert producer.flush(30) == 0


def consume_all(cluster, topic: str, expected: int) -> list[bytes]:
    """Every record of partition 0 from offset 0, read from its current leader."""
    from confluent_kafka import Consumer
    from confluent_kafka import TopicPartition as CTP

    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "reader",
                         "enable.auto.commit": False})
    try:
        consumer.assign([CTP(topic, 0, 0)])
        values: list[bytes] = []

        def more() -> bool:
            for m in consumer.consume(500, timeout=0.5):
                if m.error() is None:
                    values.append(m.value())
            return len(values) >= expected

        assert wait_for(more, timeout=30, interval=0)
        return values
    finally:
        consumer.close()


def test_move_under_an_idempotent_acks_all_producer(cluster):
    """[1, 2] → [2, 3] while a producer writes: broker 3 joins, broker 1 (the leader) goes, 2
    leads; every acknowledged record is then read from broker 2 as leader and from broker 3 as
    leader; broker 1's partition directory is gone."""
    from confluent_kafka import Producer
    from kafka import KafkaAdminClient
    from kafka import TopicPartition as KTP

    cluster.create_topic("moved", assignment={0: [1, 2]})
    acked: list[bytes] = []
    failed: list[object] = []
    stop = threading.Event()

    def produce() -> None:
        producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all",
                             "enable.idempotence": True, "linger.ms": 2})

        def delivered(err, msg) -> None:
            (failed if err is not None else acked).append(err if err is not None else msg.value())

        i = 0
        while not stop.is_set():
            producer.produce("moved", value=b"%08d" % i, on_delivery=delivered)
            producer.poll(0)
            i += 1
            if i % 50 == 0:
                producer.poll(0.01)
        assert producer.flush(30) == 0

    writer = threading.Thread(target=produce)
    writer.start()
    try:
        assert wait_for(lambda: len(acked) >= 200, timeout=20)
        admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=20000)
        try:
            assert admin.alter_partition_reassignments({KTP("moved", 0): [2, 3]}) == {KTP("moved", 0): None}
            assert wait_for(lambda: state(cluster, "moved")[0] == [2, 3], timeout=30)
            assert admin.list_partition_reassignments() == {}
        finally:
            admin.close()
        assert wait_for(lambda: everyone_sees(cluster, "moved", [2, 3], 2), timeout=10)
        count = len(acked)
        assert wait_for(lambda: len(acked) >= count + 200, timeout=20)  # the producer goes on at broker 2
    finally:
        stop.set()
        writer.join(60)
    assert not failed
    replicas, leader, isr = state(cluster, "moved")
    assert (replicas, leader, set(isr)) == ([2, 3], 2, {2, 3})
    assert wait_for(lambda: not os.path.exists(log_dir(cluster, 1, "moved")), timeout=10)
    assert os.path.isdir(log_dir(cluster, 3, "moved"))
    assert set(consume_all(cluster, "moved", len(acked))) >= set(acked)
    # Broker 3 leads: [3, 2] only reorders (done at once), the preferred election moves it.
    assert results(alter(cluster.controller, {("moved", 0): [3, 2]})) == {("moved", 0): (E.NONE, None)}
    assert state(cluster, "moved")[0] == [3, 2]
    assert cluster.controller.controller.elect_leaders(False, [("moved", 0)]).result(10) == {
        ("moved", 0): (E.NONE, None)}
    assert wait_for(lambda: everyone_sees(cluster, "moved", [3, 2], 3), timeout=10)
    values = consume_all(cluster, "moved", len(acked))
    assert set(values) >= set(acked)
    assert len(values) == len(set(values))  # idempotent: no record twice


def test_throttled_move_is_listed_then_cancelled(cluster):
    """Broker 3's follower throttle holds [1, 2] → [2, 3] in progress: listed (all and by name)
    with replicas target + removing, shown so in Metadata; a cancel reverts to the original
    replicas (Kafka's order: the transitional replicas without the adding ones) and deletes
    broker 3's new replica."""
    cluster.create_topic("held", assignment={0: [1, 2]},
                         configs={"follower.replication.throttled.replicas": "0:3"})
    fill(cluster, "held", 2000)  # ~2 MB: ~10 s at 200 kB/s
    quota = cluster.broker(3).replica_manager.quotas.follower
    assert results(alter(cluster.controller, {("held", 0): [2, 3]})) == {("held", 0): (E.NONE, None)}
    assert state(cluster, "held")[0] == [2, 3, 1]
    assert listed(cluster.controller) == {("held", 0): ([2, 3, 1], [3], [1])}
    assert listed(cluster.controller, {"held": [0, 1], "nope": [0]}) == {("held", 0): ([2, 3, 1], [3], [1])}
    from kafka import KafkaAdminClient
    from kafka import TopicPartition as KTP

    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=20000)
    try:
        assert admin.list_partition_reassignments({"held": [0]}) == {KTP("held", 0): {
            "replicas": [2, 3, 1], "adding_replicas": [3], "removing_replicas": [1]}}
    finally:
        admin.close()
    assert wait_for(lambda: everyone_sees(cluster, "held", [2, 3, 1], 1), timeout=10)
    from confluent_kafka.admin import AdminClient

    shown = AdminClient({"bootstrap.servers": cluster.bootstrap_servers}).list_topics("held", timeout=10)
    assert shown.topics["held"].partitions[0].replicas == [2, 3, 1]  # Metadata: target + removing
    assert wait_for(lambda: quota.throttled > 0, timeout=10)  # the throttle holds broker 3 back
    assert os.path.isdir(log_dir(cluster, 3, "held"))
    assert results(alter(cluster.controller, {("held", 0): None})) == {("held", 0): (E.NONE, None)}
    replicas, leader, isr = state(cluster, "held")
    assert (replicas, leader, set(isr)) == ([2, 1], 1, {1, 2})
    assert listed(cluster.controller) == {}
    assert wait_for(lambda: not os.path.exists(log_dir(cluster, 3, "held")), timeout=10)
    assert wait_for(lambda: everyone_sees(cluster, "held", [2, 1], 1), timeout=10)
    # Nothing left to cancel.
    assert results(alter(cluster.controller, {("held", 0): None})) == {
        ("held", 0): (E.NO_REASSIGNMENT_IN_PROGRESS, E.BY_CODE[E.NO_REASSIGNMENT_IN_PROGRESS].message)}


def test_throttled_move_completes_at_about_the_rate(cluster):
    """~0.5 MB to broker 3 under a 200 kB/s follower throttle: the quota leaves the partition out
    of fetches, records every byte fetched, and the move completes."""
    cluster.create_topic("slow", assignment={0: [1, 2]},
                         configs={"follower.replication.throttled.replicas": "*"})
    fill(cluster, "slow", 500)
    quota = cluster.broker(3).replica_manager.quotas.follower
    before_bytes, before_throttled = quota.recorded_bytes, quota.throttled
    size = cluster.broker(1).replica_manager.get_partition("slow", 0).log.size
    assert results(alter(cluster.controller, {("slow", 0): [1, 3]})) == {("slow", 0): (E.NONE, None)}
    assert wait_for(lambda: state(cluster, "slow")[0] == [1, 3], timeout=60)
    assert quota.throttled > before_throttled
    assert quota.recorded_bytes - before_bytes >= size  # every byte broker 3 copied was counted
    assert wait_for(lambda: not os.path.exists(log_dir(cluster, 2, "slow")), timeout=10)


def test_leader_throttle_holds_back_a_new_replica(cluster):
    """Broker 1 leads [1, 2] → [1, 3] with its replica in leader.replication.throttled.replicas:
    its reads for broker 3 (not in the ISR) are counted and held back, never those for broker 2,
    and the move completes."""
    cluster.create_topic("led", assignment={0: [1, 2]},
                         configs={"leader.replication.throttled.replicas": "0:1"})
    fill(cluster, "led", 400)
    quota = cluster.broker(1).replica_manager.quotas.leader
    size = cluster.broker(1).replica_manager.get_partition("led", 0).log.size
    before_bytes, before_throttled = quota.recorded_bytes, quota.throttled
    assert results(alter(cluster.controller, {("led", 0): [1, 3]})) == {("led", 0): (E.NONE, None)}
    assert wait_for(lambda: state(cluster, "led")[0] == [1, 3], timeout=60)
    assert quota.throttled > before_throttled
    assert quota.recorded_bytes - before_bytes >= size  # what broker 3 read was counted
    assert wait_for(lambda: not os.path.exists(log_dir(cluster, 2, "led")), timeout=10)


def test_a_replica_removed_while_its_broker_is_down_is_deleted_when_it_is_back(cluster):
    cluster.create_topic("away", assignment={0: [1, 2]})
    fill(cluster, "away", 20)
    cluster.kill(2)
    try:
        assert results(alter(cluster.controller, {("away", 0): [1, 3]})) == {("away", 0): (E.NONE, None)}
        assert wait_for(lambda: state(cluster, "away")[0] == [1, 3], timeout=20)
        assert os.path.isdir(log_dir(cluster, 2, "away"))  # broker 2 is down: nobody told it
    finally:
        cluster.restart(2)
    assert wait_for(lambda: not os.path.exists(log_dir(cluster, 2, "away")), timeout=10)


def test_errors(cluster):
    cluster.create_topic("errs", assignment={0: [1, 2]})
    got = results(alter(cluster.controller, {
        ("nope", 0): [1], ("errs", 5): [1], ("errs", 0): [], }))
    assert got == {
        ("nope", 0): (E.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find a topic named nope."),
        ("errs", 5): (E.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition errs:5."),
        ("errs", 0): (E.INVALID_REPLICA_ASSIGNMENT,
                      "The manual partition assignment includes an empty replica list.")}
    assert results(alter(cluster.controller, {("errs", 0): [2, 2]})) == {("errs", 0): (
        E.INVALID_REPLICA_ASSIGNMENT,
        "The manual partition assignment includes the broker 2 more than once.")}
    assert results(alter(cluster.controller, {("errs", 0): [1, 7]})) == {("errs", 0): (
        E.INVALID_REPLICA_ASSIGNMENT,
        "The manual partition assignment includes broker 7, but no such broker is registered.")}
    assert results(alter(cluster.controller, {("errs", 0): [1, 2, 3]}, allow_rf_change=False)) == {
        ("errs", 0): (E.INVALID_REPLICATION_FACTOR, "The replication factor is changed from 2 to 3")}
    timed_out = alter(cluster.controller, {("errs", 0): [2, 3]}, timeout_ms=0)
    assert timed_out.error_code == E.REQUEST_TIMED_OUT
    assert results(timed_out) == {("errs", 0): (E.REQUEST_TIMED_OUT, E.BY_CODE[E.REQUEST_TIMED_OUT].message)}
    # v0 (no AllowReplicationFactorChange) through a broker without the controller: forwarded to it
    # (Kafka 4's brokers forward both apis), the controller's answer.
    forwarded = alter(cluster.broker(2), {("errs", 0): [1, 7]}, version=0)
    assert forwarded.error_code == E.NONE
    assert results(forwarded) == {("errs", 0): (
        E.INVALID_REPLICA_ASSIGNMENT,
        "The manual partition assignment includes broker 7, but no such broker is registered.")}
    with connect(cluster.broker(3)) as c:
        listed = c.call(LIST, 0, L.REQUEST(timeout_ms=1000, topics=None))
        assert (listed.error_code, listed.topics) == (E.NONE, [])
    assert state(cluster, "errs")[0] == [1, 2]  # nothing refused changed anything


def test_a_restarted_controller_resumes_a_move(tmp_path):
    """Broker 1 runs the controller; [1] → [2] is held in progress by broker 2's follower throttle
    (1 byte/s); both stop. Started again (broker 2 without the throttle), the controller still lists
    the move, broker 2 catches up and it completes: broker 2 leads, broker 1's copy is deleted."""
    from tests.support.brokers import running_broker

    dirs = {1: tmp_path / "1", 2: tmp_path / "2"}
    fast = {"replica_fetch_max_bytes": "1024", "auto_leader_rebalance_enable": "false"}

    def both(throttle: str | None):
        one = running_broker(dirs[1], **fast)
        broker_1 = one.__enter__()
        extra = {"follower_replication_throttled_rate": throttle} if throttle else {}
        controller = f"127.0.0.1:{broker_1.bound_port('INTERNAL')}"
        two = running_broker(dirs[2], node_id="2", controller_quorum_bootstrap_servers=controller,
                             **fast, **extra)
        try:
            broker_2 = two.__enter__()
        except BaseException:
            one.__exit__(None, None, None)
            raise
        return (one, broker_1), (two, broker_2)

    (one, broker_1), (two, broker_2) = both("1")
    try:
        assert wait_for(lambda: set(broker_1.metadata_cache.snapshot.brokers) == {1, 2}, timeout=10)
        broker_1.controller.create_topic("r", -1, -1, {0: [1]}, False,
                                         {"follower.replication.throttled.replicas": "0:2"}).result(10)
        assert wait_for(lambda: "r" in broker_1.metadata_cache.snapshot.topics, timeout=10)
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": f"127.0.0.1:{broker_1.bound_port('PLAINTEXT')}",
                             "acks": "all"})
        for i in range(50):  # one batch each: broker 2 fetches one at a time (replica.fetch.max.bytes)
            producer.produce("r", value=b"v" * 1000, key=b"%d" % i)
            assert producer.flush(20) == 0
        assert results(alter(broker_1, {("r", 0): [2]})) == {("r", 0): (E.NONE, None)}
        assert broker_1.controller.reassigning() == {"r": {0: ([2, 1], [2], [1])}}
        assert wait_for(lambda: broker_2.replica_manager.quotas.follower.throttled > 0, timeout=10)
    finally:
        two.__exit__(None, None, None)
        one.__exit__(None, None, None)
    (one, broker_1), (two, broker_2) = both(None)
    try:
        assert wait_for(lambda: broker_1.controller.reassigning() == {}, timeout=20)
        ctx = broker_1.controller.context
        assert ctx.partition_replica_assignment(TopicPartition("r", 0)) == [2]
        assert ctx.partition_leadership[TopicPartition("r", 0)].leader == 2
        assert wait_for(lambda: not os.path.exists(dirs[1] / "r-0"), timeout=10)
        assert broker_2.replica_manager.get_partition("r", 0).log.log_end_offset == 50
    finally:
        two.__exit__(None, None, None)
        one.__exit__(None, None, None)
