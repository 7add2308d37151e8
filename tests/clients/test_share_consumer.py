"""Share groups (KIP-932) with confluent-kafka's ShareConsumer against an in-process kafkalite:
four consumers share one partition and every record is acknowledged exactly once; records held
by a consumer that stopped polling come back after the record lock; a rejected record is never
delivered again; a record released at every delivery is archived at the delivery count limit;
consumers read a topic whose partitions three brokers lead (a ShareFetch to each leader).

One single-broker cluster for the module; each test has its own topic and group. The record lock
is short (group.share.record.lock.duration.ms 3000, its minimum lowered) so that redelivery is
quick."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import uuid
from collections import Counter

import pytest

from kafkalite.testing import Cluster
from tests.support.wait import wait_for

pytestmark = pytest.mark.integration

LOCK_MS = 3000
SETTINGS = {
    "group.initial.rebalance.delay.ms": "0",
    "offsets.topic.num.partitions": "3",
    "share.auto.offset.reset": "earliest",
    "group.share.min.record.lock.duration.ms": "1000",
    "group.share.record.lock.duration.ms": str(LOCK_MS),
    "group.share.delivery.count.limit": "5",
}


@pytest.fixture(scope="module")
def cluster():
    with Cluster(1, settings=SETTINGS) as c:
        yield c


def new_topic(cluster: Cluster, records: int) -> str:
    topic = f"share-{uuid.uuid4().hex[:8]}"
    cluster.create_topic(topic, 1)
    produce(cluster, topic, range(records))
    return topic


def produce(cluster: Cluster, topic: str, numbers: range) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 5})
    for i in numbers:
        producer.produce(topic, b"%d" % i)
    assert producer.flush(30) == 0


def share_consumer(cluster: Cluster, group: str, topic: str, explicit: bool = False):
    from confluent_kafka import ShareConsumer

    consumer = ShareConsumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": group,
                              "share.acknowledgement.mode": "explicit" if explicit else "implicit"})
    consumer.subscribe([topic])
    return consumer


def records(consumer, timeout: float = 0.2) -> list:
    got = [m for m in consumer.poll(timeout)]
    assert all(m.error() is None for m in got), [m.error() for m in got]
    return got


def share_partition(cluster: Cluster, group: str, topic: str):
    topic_id = cluster.broker(1).metadata_cache.snapshot.topics[topic].topic_id
    return cluster.broker(1).share_partitions.partitions[(group, topic_id, 0)].partition


def test_four_consumers_share_one_partition_and_each_record_is_acknowledged_once(cluster):
    count = 10_000
    topic, group = new_topic(cluster, count), f"g-{uuid.uuid4().hex[:6]}"
    delivered: Counter[int] = Counter()
    per_consumer: Counter[int] = Counter()
    lock = threading.Lock()
    done = threading.Event()
    failures: list[BaseException] = []

    def consume(index: int) -> None:
        consumer = share_consumer(cluster, group, topic)
        try:
            while not done.is_set():
                got = records(consumer)  # implicit mode: the previous poll's records are accepted
                with lock:
                    for m in got:
                        delivered[m.offset()] += 1
                    per_consumer[index] += len(got)
                    if len(delivered) >= count:
                        done.set()
            consumer.commit_sync(30)
        except BaseException as e:  # reported by the test thread
            failures.append(e)
            done.set()
        finally:
            consumer.close()

    threads = [threading.Thread(target=consume, args=(i,), name=f"share-consumer-{i}") for i in range(4)]
    for t in threads:
        t.start()
    assert done.wait(60), f"{len(delivered)} of {count} delivered"
    for t in threads:
        t.join(30)
    assert not failures, failures
    assert set(delivered) == set(range(count))
    assert max(delivered.values()) == 1  # no record delivered twice: its lock never expired
    assert sum(1 for n in per_consumer.values() if n) >= 2, per_consumer  # the partition was shared
    sp = share_partition(cluster, group, topic)
    assert wait_for(lambda: sp.start_offset == count and not sp.records, timeout=10), sp.start_offset


def test_records_a_stopped_consumer_holds_are_redelivered_after_the_lock(cluster):
    topic, group = new_topic(cluster, 20), f"g-{uuid.uuid4().hex[:6]}"
    stuck = share_consumer(cluster, group, topic, explicit=True)
    other = share_consumer(cluster, group, topic)
    try:
        held: list = []
        assert wait_for(lambda: held.extend(records(stuck)) or held, timeout=30)
        offsets = {m.offset() for m in held}
        # ``stuck`` polls no more and acknowledges nothing; ``other`` gets its records once their
        # lock expires, as a second delivery.
        redelivered: dict[int, int] = {}

        def poll_other() -> bool:
            for m in records(other):
                if m.offset() in offsets:
                    redelivered[m.offset()] = m.delivery_count()
            return set(redelivered) == offsets

        assert wait_for(poll_other, timeout=LOCK_MS / 1000 + 20)
        assert set(redelivered.values()) == {2}
        other.commit_sync(30)
    finally:
        other.close()
        stuck.close()


# A share consumer in a process of its own: prints the offsets of its first records, then waits
# to be killed without acknowledging them.
HOLDER = """
import json, sys
from confluent_kafka import ShareConsumer
c = ShareConsumer({"bootstrap.servers": sys.argv[1], "group.id": sys.argv[2],
                   "share.acknowledgement.mode": "explicit"})
c.subscribe([sys.argv[3]])
while True:
    got = [m.offset() for m in c.poll(0.5) if m.error() is None]
    if got:
        print(json.dumps(got), flush=True)
        sys.stdin.read()  # until killed
"""


def test_records_a_killed_consumer_held_are_redelivered_after_the_lock(cluster):
    topic, group = new_topic(cluster, 20), f"g-{uuid.uuid4().hex[:6]}"
    argv = [sys.executable, "-c", HOLDER, cluster.bootstrap_servers, group, topic]
    holder = subprocess.Popen(argv, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    other = None
    try:
        assert holder.stdout is not None
        offsets = set(json.loads(holder.stdout.readline()))
        assert offsets
        holder.kill()
        holder.wait(10)
        other = share_consumer(cluster, group, topic)
        redelivered: dict[int, int] = {}

        def poll_other() -> bool:
            for m in records(other):
                if m.offset() in offsets:
                    redelivered[m.offset()] = m.delivery_count()
            return set(redelivered) == offsets

        assert wait_for(poll_other, timeout=LOCK_MS / 1000 + 20)
        assert set(redelivered.values()) == {2}
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(10)
        for stream in (holder.stdin, holder.stdout):
            if stream is not None:
                stream.close()
        if other is not None:
            other.close()


def test_a_rejected_record_is_not_redelivered(cluster):
    from confluent_kafka import AcknowledgeType

    topic, group = new_topic(cluster, 10), f"g-{uuid.uuid4().hex[:6]}"
    consumer = share_consumer(cluster, group, topic, explicit=True)
    try:
        seen: list[int] = []

        def poll_and_ack() -> bool:
            for m in records(consumer):
                seen.append(m.offset())
                consumer.acknowledge(m, AcknowledgeType.REJECT if m.offset() == 3 else AcknowledgeType.ACCEPT)
            consumer.commit_sync(30)
            return len(set(seen)) >= 10

        assert wait_for(poll_and_ack, timeout=30)
        produce(cluster, topic, range(10, 15))  # more records: the consumer reads on past offset 3
        assert wait_for(lambda: poll_and_ack() and len(set(seen)) >= 15, timeout=30)
        assert Counter(seen)[3] == 1 and sorted(set(seen)) == list(range(15))
        sp = share_partition(cluster, group, topic)
        assert wait_for(lambda: sp.start_offset == 15, timeout=10)  # 3 archived, the rest acknowledged
    finally:
        consumer.close()


def test_a_record_released_five_times_is_archived(cluster):
    from confluent_kafka import AcknowledgeType

    topic, group = new_topic(cluster, 1), f"g-{uuid.uuid4().hex[:6]}"
    consumer = share_consumer(cluster, group, topic, explicit=True)
    try:
        deliveries: list[int] = []
        after: list[int] = []

        def poll_and_release() -> bool:
            for m in records(consumer):
                if m.offset() == 0:
                    deliveries.append(m.delivery_count())
                    consumer.acknowledge(m, AcknowledgeType.RELEASE)
                else:
                    after.append(m.offset())
                    consumer.acknowledge(m, AcknowledgeType.ACCEPT)
            consumer.commit_sync(30)
            return len(deliveries) >= 5

        assert wait_for(poll_and_release, timeout=30)
        produce(cluster, topic, range(1, 3))
        assert wait_for(lambda: poll_and_release() and len(after) >= 2, timeout=30)
        assert deliveries == [1, 2, 3, 4, 5]  # no sixth delivery: archived at the limit
        sp = share_partition(cluster, group, topic)
        assert wait_for(lambda: sp.start_offset == 3, timeout=10)
    finally:
        consumer.close()


def test_share_consumers_read_partitions_led_by_three_brokers():
    from confluent_kafka import Producer

    with Cluster(3, settings=SETTINGS, topics=[("spread", 6)]) as spread:
        producer = Producer({"bootstrap.servers": spread.bootstrap_servers, "linger.ms": 5})
        for i in range(600):
            producer.produce("spread", b"%d" % i, partition=i % 6)
        assert producer.flush(30) == 0
        assert len({spread.leader("spread", p) for p in range(6)}) == 3  # every broker leads some
        consumers = [share_consumer(spread, "spread-group", "spread") for _ in range(2)]
        try:
            seen: Counter[tuple[int, int]] = Counter()

            def poll_all() -> bool:
                for consumer in consumers:
                    seen.update((m.partition(), m.offset()) for m in records(consumer))
                return len(seen) >= 600

            assert wait_for(poll_all, timeout=30)
            assert set(seen) == {(p, o) for p in range(6) for o in range(100)} and max(seen.values()) == 1
        finally:
            for consumer in consumers:
                consumer.close()
