"""Consumer groups of the consumer rebalance protocol (KIP-848) with real processes: three broker
processes (__consumer_offsets replicated on all three, led by broker 2) and three confluent-kafka
members (group.protocol=consumer) in their own processes on six partitions, each committing
every record it read.

- One member SIGKILLed: after its session (group.consumer.session.timeout.ms, lowered with its
  minimum) the two others own its partitions and go on from its commits: a record is read twice
  only when the killed member read it and had not committed it yet.
- The coordinator's broker SIGKILLed: another replica of __consumer_offsets-0 leads it, loads
  the group from its records, and the members go on at the epochs they had (not fenced, not
  rejoined), reading every record produced after."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from kafkalite.clients import BlockingClient
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import consumer_group_describe as cgd
from kafkalite.protocol.messages import find_coordinator as fc
from tests.support.wait import wait_for

from .test_cluster_faults import proxied_cluster
from .test_group_coordinator_cluster import bootstrap, create_offsets_topic, offsets_leader

pytestmark = pytest.mark.integration

SETTINGS = ("broker.heartbeat.interval.ms=200", "broker.session.timeout.ms=1500",
            "replica.lag.time.max.ms=2000", "replica.fetch.wait.max.ms=100", "replica.fetch.backoff.ms=100",
            "offsets.topic.num.partitions=1", "auto.leader.rebalance.enable=false",
            "group.consumer.min.session.timeout.ms=2000", "group.consumer.session.timeout.ms=2000",
            "group.consumer.min.heartbeat.interval.ms=200", "group.consumer.heartbeat.interval.ms=200")
TOPIC, PARTITIONS, GROUP = "work", 6, "workers"

# A member: reads, prints "read <partition> <offset>", commits the record synchronously, prints
# "committed <partition> <offset>".
MEMBER = r"""
import sys
from confluent_kafka import Consumer
servers, group, topic = sys.argv[1:4]
c = Consumer({"bootstrap.servers": servers, "group.id": group, "group.protocol": "consumer",
              "auto.offset.reset": "earliest", "enable.auto.commit": False})
c.subscribe([topic])
print("started", flush=True)
while True:
    m = c.poll(0.1)
    if m is None or m.error():
        continue
    print("read", m.partition(), m.offset(), flush=True)
    try:
        c.commit(message=m, asynchronous=False)
    except Exception as e:
        print("commit-failed", m.partition(), m.offset(), e, flush=True)
        continue
    print("committed", m.partition(), m.offset(), flush=True)
"""


class Member:
    def __init__(self, servers: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", MEMBER, servers, GROUP, TOPIC],
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.read: list[tuple[int, int]] = []
        self.committed: set[tuple[int, int]] = set()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._follow, daemon=True)
        self._thread.start()

    def _follow(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            words = line.split()
            if len(words) >= 3 and words[0] in ("read", "committed"):
                with self._lock:
                    tp = (int(words[1]), int(words[2]))
                    (self.read.append if words[0] == "read" else self.committed.add)(tp)  # type: ignore[operator]

    def reads(self) -> list[tuple[int, int]]:
        with self._lock:
            return list(self.read)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        self.process.wait(10)
        self._thread.join(10)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[dict]:
    with proxied_cluster(str(tmp_path_factory.mktemp("consumer-groups")), SETTINGS) as state:
        create_offsets_topic(state["nodes"][0].client_port, [2, 3, 1])
        yield state


def produce(servers: str, start: int, count: int) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": servers, "acks": "all"})
    for i in range(start, start + count):
        p.produce(TOPIC, value=str(i).encode(), partition=i % PARTITIONS)
    assert p.flush(30) == 0


def member_epochs(servers: str) -> dict[str, int]:
    """{member id: epoch} of the group, from ConsumerGroupDescribe asked of its coordinator."""
    host, port = servers.split(",")[0].rsplit(":", 1)
    client = BlockingClient(host, int(port), "test", 10)
    try:
        found = client.send_and_receive(ApiKey.FIND_COORDINATOR, 4,
                                        fc.REQUEST(key_type=0, coordinator_keys=[GROUP]))
        coordinator = found.coordinators[0]
        if coordinator.error_code:
            return {}
    finally:
        client.close()
    client = BlockingClient(coordinator.host, coordinator.port, "test", 10)
    try:
        answer = client.send_and_receive(ApiKey.CONSUMER_GROUP_DESCRIBE, 0,
                                         cgd.REQUEST(group_ids=[GROUP], include_authorized_operations=False))
        group = answer.groups[0]
        return {} if group.error_code or group.group_state != "Stable" else {
            m.member_id: m.member_epoch for m in group.members}
    finally:
        client.close()


def test_members_take_over_a_killed_members_partitions_and_survive_the_coordinators_death(cluster):
    from confluent_kafka.admin import AdminClient, NewTopic

    servers = bootstrap(cluster)
    admin = AdminClient({"bootstrap.servers": servers})
    admin.create_topics([NewTopic(TOPIC, PARTITIONS, 3)])[TOPIC].result(30)
    assert wait_for(lambda: offsets_leader(cluster) == 2, timeout=30)
    members = [Member(servers) for _ in range(3)]
    try:
        produce(servers, 0, 300)

        def everything_read(total: int) -> bool:
            return len({tp for m in members for tp in m.reads()}) >= total

        assert wait_for(lambda: everything_read(300), timeout=30)
        assert wait_for(lambda: len(member_epochs(servers)) == 3, timeout=30)
        # One member SIGKILLed: the others take its partitions after its session.
        victim = members[0]
        victim.stop(signal.SIGKILL)
        produce(servers, 300, 300)
        assert wait_for(lambda: everything_read(600), timeout=30)
        assert wait_for(lambda: len(member_epochs(servers)) == 2, timeout=30)
        victims = {p for p, _ in victim.read}
        after = {p for m in members[1:] for p, o in m.reads() if o >= 50}  # records 300.. are at offsets 50..
        assert victims and victims <= after
        # Reread only what the victim read and had not committed (the tail after its last commit).
        seen: dict[tuple[int, int], int] = {}
        for m in members:
            for tp in m.reads():
                seen[tp] = seen.get(tp, 0) + 1
        twice = {tp for tp, n in seen.items() if n > 1}
        assert twice <= set(victim.read) - victim.committed, twice
        # The coordinator's broker SIGKILLed: the group reloads elsewhere, epochs kept.
        epochs = member_epochs(servers)
        assert len(epochs) == 2 and min(epochs.values()) > 0
        node = cluster["nodes"][1]
        node.process.send_signal(signal.SIGKILL)
        node.process.wait(10)
        alive = bootstrap(cluster)
        assert wait_for(lambda: offsets_leader(cluster) not in (2, -1), timeout=30)
        produce(alive, 600, 120)
        assert wait_for(lambda: everything_read(720), timeout=30)
        assert wait_for(lambda: member_epochs(alive) == epochs, timeout=20), (member_epochs(alive), epochs)
    finally:
        for m in members:
            m.stop()
