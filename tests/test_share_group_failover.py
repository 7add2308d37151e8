"""Share groups (KIP-932) with real processes: the share state survives the SIGKILL of the
partition's leader.

Three broker processes (broker 1 the controller). The topic's one partition is led by broker 2,
with replicas on all three, and so is ``__share_group_state``'s one partition in the first case:
killing broker 2 kills the partition's leader and the share coordinator of the group's key at
once (the new leader reads the state from a new coordinator, which loaded it from its replica).
In the second case broker 3 is the share coordinator and survives. ``__consumer_offsets`` (the
group's membership) is led by broker 3 and survives. share.auto.offset.reset is earliest
through a GROUP config (IncrementalAlterConfigs).

A ShareConsumer in a process of its own (explicit acknowledgement) ACCEPTs a third of what it
got, REJECTs a third and holds a third; a second one, in the test, ACCEPTs the rest. Broker 2 and
the holder are SIGKILLed, more records are produced to the new leader, and a third consumer
joins. Then: no ACCEPTed or REJECTed record is delivered again; the held ones come back (well
before their lock of 60 s would have expired; their delivery count is 1 again, as in Kafka,
which does not persist an acquisition); every record is acknowledged exactly once over the
whole run, and the consumer whose share session was with broker 2 finds the new leader."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator

import pytest

from kafkalite.clients import BlockingClient
from kafkalite.local import processes as C
from kafkalite.local.settings import HOST, free_base_port
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import create_topics as ct
from tests.support.wait import wait_for

pytestmark = pytest.mark.integration

LOCK_MS = 60000  # held records must come back because the leader died, not because a lock expired
SETTINGS = ("broker.heartbeat.interval.ms=200", "broker.session.timeout.ms=1500",
            "replica.lag.time.max.ms=2000", "replica.fetch.wait.max.ms=100", "replica.fetch.backoff.ms=100",
            "min.insync.replicas=2", "auto.leader.rebalance.enable=false",
            "group.initial.rebalance.delay.ms=0", "offsets.topic.num.partitions=1",
            "offsets.topic.replication.factor=3", "share.coordinator.state.topic.num.partitions=1",
            "share.coordinator.state.topic.replication.factor=3", "share.coordinator.write.timeout.ms=20000",
            f"group.share.record.lock.duration.ms={LOCK_MS}", "group.share.min.record.lock.duration.ms=1000")
TOPIC, GROUP, COUNT = "jobs", "workers", 150  # within the 200 in-flight records of a window
VICTIM = 2


@contextlib.contextmanager
def processes(directory: str) -> Iterator[list[C.Node]]:
    nodes: list[C.Node] = []
    try:
        nodes = C.start(3, directory, free_base_port(), SETTINGS)
        assert C.wait_registered(nodes, 60), "cluster did not come up"
        yield nodes
    finally:
        C.stop(nodes)


def create_topic(port: int, name: str, replicas: list[int], compact: bool) -> None:
    R = ct.REQUEST
    configs = [R["topics"]["configs"](name="cleanup.policy", value="compact")] if compact else []
    client = BlockingClient(HOST, port, "test", 30)
    try:
        topic = R["topics"](name=name, num_partitions=-1, replication_factor=-1, configs=configs,
                            assignments=[R["topics"]["assignments"](partition_index=0, broker_ids=replicas)])
        answer = client.send_and_receive(ApiKey.CREATE_TOPICS, 7, R(topics=[topic], timeout_ms=30000))
        assert answer.topics[0].error_code == 0, answer.topics[0]
    finally:
        client.close()


def servers(nodes: list[C.Node]) -> str:
    return ",".join(f"{HOST}:{n.client_port}" for n in nodes if n.process.poll() is None)


def leaders(nodes: list[C.Node]) -> dict[str, tuple[int, int]]:
    """{topic: (leader, replicas in sync)} of the three topics' partition 0."""
    from confluent_kafka.admin import AdminClient

    md = AdminClient({"bootstrap.servers": servers(nodes)}).list_topics(timeout=10)
    return {name: (t.partitions[0].leader, len(t.partitions[0].isrs))
            for name, t in md.topics.items() if 0 in t.partitions}


def set_group_config(nodes: list[C.Node]) -> None:
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        ResourceType,
    )

    admin = AdminClient({"bootstrap.servers": servers(nodes)})
    resource = ConfigResource(ResourceType.GROUP, GROUP, incremental_configs=[
        ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)])
    for f in admin.incremental_alter_configs([resource]).values():
        f.result(30)


def produce(nodes: list[C.Node], numbers: range) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": servers(nodes), "acks": "all", "linger.ms": 5})
    for i in numbers:
        p.produce(TOPIC, value=b"%d" % i, partition=0)
    assert p.flush(30) == 0


# The holder: a share consumer in a process of its own. Of what its first polls acquire it
# ACCEPTs a third and REJECTs a third (commit_sync: written to the share coordinator before it
# returns), prints them and the third it holds unacknowledged, then waits to be killed.
HOLDER = r"""
import json, sys
from confluent_kafka import AcknowledgeType, ShareConsumer
c = ShareConsumer({"bootstrap.servers": sys.argv[1], "group.id": sys.argv[2],
                   "share.acknowledgement.mode": "explicit"})
c.subscribe([sys.argv[3]])
got = []
while len(got) < 30:
    got += [m for m in c.poll(0.5) if m.error() is None]
out = {"accept": [], "reject": [], "held": [], "counts": [m.delivery_count() for m in got]}
for i, m in enumerate(got):
    kind = ("accept", "reject", "held")[i % 3]
    out[kind].append(m.offset())
    if kind != "held":
        c.acknowledge(m, AcknowledgeType.ACCEPT if kind == "accept" else AcknowledgeType.REJECT)
out["errors"] = [str(e) for e in c.commit_sync(30).values() if e is not None]
print(json.dumps(out), flush=True)
sys.stdin.read()  # until killed
"""


class Reader:
    """A ShareConsumer in explicit mode that ACCEPTs everything it gets: each delivery is noted
    (offset -> delivery counts), and each acknowledgement the broker confirmed."""

    def __init__(self, nodes: list[C.Node]) -> None:
        from confluent_kafka import ShareConsumer

        self.consumer = ShareConsumer({"bootstrap.servers": servers(nodes), "group.id": GROUP,
                                       "share.acknowledgement.mode": "explicit"})
        self.consumer.subscribe([TOPIC])

    def drain(self, deliveries: dict[int, list[int]], confirmed: Counter[int]) -> None:
        from confluent_kafka import AcknowledgeType

        got = self.consumer.poll(0.3)
        assert all(m.error() is None for m in got), [m.error() for m in got]
        for m in got:
            # never delivered again once an acknowledgement of it was confirmed
            assert not confirmed[m.offset()], f"{m.offset()} delivered after its acknowledgement"
            deliveries.setdefault(m.offset(), []).append(m.delivery_count())
            self.consumer.acknowledge(m, AcknowledgeType.ACCEPT)
        if got:
            results = self.consumer.commit_sync(30)
            if all(e is None for e in results.values()):
                confirmed.update(m.offset() for m in got)

    def close(self) -> None:
        self.consumer.close()


@pytest.mark.parametrize("state_replicas", [[VICTIM, 3, 1], [3, VICTIM, 1]],
                         ids=["coordinator-killed-too", "coordinator-survives"])
def test_the_share_state_survives_the_sigkill_of_the_partitions_leader(tmp_path, state_replicas):
    with processes(str(tmp_path)) as nodes:
        port = nodes[0].client_port
        create_topic(port, "__consumer_offsets", [3, 1, 2], compact=True)
        create_topic(port, "__share_group_state", state_replicas, compact=True)
        create_topic(port, TOPIC, [VICTIM, 3, 1], compact=False)
        internal = ("__share_group_state", "__consumer_offsets")
        assert wait_for(lambda: all(leaders(nodes).get(t, (0, 0))[1] == 3 for t in (TOPIC, *internal)),
                        timeout=30)
        set_group_config(nodes)
        produce(nodes, range(COUNT))
        assert leaders(nodes)[TOPIC][0] == VICTIM
        assert leaders(nodes)["__share_group_state"][0] == state_replicas[0]

        holder = subprocess.Popen([sys.executable, "-c", HOLDER, servers(nodes), GROUP, TOPIC], text=True,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        readers: list[Reader] = []
        try:
            assert holder.stdout is not None
            held_out = json.loads(holder.stdout.readline())
            assert not held_out["errors"] and set(held_out["counts"]) == {1}, held_out
            done = Counter(held_out["accept"] + held_out["reject"])  # the holder's, confirmed
            held = set(held_out["held"])
            assert held
            deliveries: dict[int, list[int]] = {o: [1] for o in [*done, *held]}
            # A reader takes the rest of the records before the kill (its share session is with
            # broker 2: it must find the new leader by itself).
            readers.append(Reader(nodes))
            assert wait_for(lambda: readers[0].drain(deliveries, done) or
                            set(done) | held == set(range(COUNT)), timeout=30)

            victim = nodes[VICTIM - 1]
            victim.process.kill()
            victim.process.wait(10)
            holder.kill()  # its records stay ACQUIRED on the dead leader only
            holder.wait(10)
            assert wait_for(lambda: leaders(nodes).get(TOPIC, (-1, 0))[0] not in (VICTIM, -1)
                            and leaders(nodes).get("__share_group_state", (-1, 0))[0] not in (VICTIM, -1),
                            timeout=30)
            produce(nodes, range(COUNT, 2 * COUNT))  # to the new leader

            readers.append(Reader(nodes))

            def drained() -> bool:
                for reader in readers:
                    reader.drain(deliveries, done)
                return set(done) == set(range(2 * COUNT))

            assert wait_for(drained, timeout=40), f"{len(done)} of {2 * COUNT} acknowledged"
        finally:
            for reader in readers:
                reader.close()
            if holder.poll() is None:
                holder.kill()
                holder.wait(10)
            for stream in (holder.stdin, holder.stdout):
                if stream is not None:
                    stream.close()

        assert max(done.values()) == 1  # each acknowledged once, by one consumer, over the run
        # Delivered again: exactly the held ones, once. Their count says 1 again: an acquisition is
        # not written to the share coordinator (as Kafka's SharePartition, which writes on
        # acknowledgement, release and lock timeout only), so the new leader never knew of it.
        assert {o: c for o, c in deliveries.items() if len(c) > 1} == {o: [1, 1] for o in held}
