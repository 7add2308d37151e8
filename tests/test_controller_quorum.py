"""The controller quorum (KRaft) with real processes: three nodes, each a broker and a voter of the
metadata quorum, every node's connections to each voter's CONTROLLER listener through a TCP proxy
(kafkalite.local.processes.Quorum) so a test can cut one voter off.

- The active controller SIGKILLed twice in a row (the first one restarted in between) under an
  idempotent acks=all producer: each time another voter becomes active and creates a topic, the
  partitions the dead node led get new leaders, and every acknowledged record is read back once.
- The active controller partitioned away: it resigns (check-quorum) and stops acting, the other two
  elect a leader that acts; healed, the old one follows the new leader and truncates what it had
  appended alone.

Kafka's quorum timeouts (election 1000 ms, fetch 2000 ms) are kept; brokers' sessions are short so
that a dead broker is fenced soon. One cluster for the module; each test leaves it whole."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import pytest

from kafkalite.clients import BlockingClient
from kafkalite.local import processes as C
from kafkalite.local.settings import HOST, free_base_port
from kafkalite.protocol import ApiKey
from kafkalite.protocol import error_codes as E
from kafkalite.raft import wire
from tests.support.wait import wait_for

from .test_cluster import kcat_partitions
from .test_replication_faults import PARTITIONS, TOPIC, Producing, high_watermarks, read_all

pytestmark = pytest.mark.integration

NODES = 3
SETTINGS = ("broker.heartbeat.interval.ms=200", "broker.session.timeout.ms=1500",
            "replica.lag.time.max.ms=2000", "replica.fetch.backoff.ms=100", "min.insync.replicas=2",
            "default.replication.factor=3", "offsets.topic.replication.factor=3",
            "auto.leader.rebalance.enable=false")


@contextlib.contextmanager
def quorum_cluster(directory: str) -> Iterator[dict]:
    base = free_base_port()
    quorum = C.Quorum(NODES, NODES, base + 3 * NODES + 1)
    nodes: list[C.Node] = []
    try:
        nodes = C.start(NODES, directory, base, SETTINGS, quorum=quorum)
        cluster_id = open(f"{directory}/cluster.id").read().strip()
        assert C.wait_registered(nodes, 60, cluster_id), "cluster did not come up"
        yield {"nodes": {n.node_id: n for n in nodes}, "quorum": quorum,
               "faults": C.ProcessFaults(nodes, cluster_id, quorum), "dir": directory}
    finally:
        C.stop(nodes, controllers=NODES)  # every node a voter: all together, as before
        quorum.close()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with quorum_cluster(str(tmp_path_factory.mktemp("quorum"))) as state:
        yield state


def servers(cluster, but: int | None = None) -> str:
    return ",".join(f"{HOST}:{n.client_port}" for i, n in cluster["nodes"].items() if i != but)


def active(cluster, exclude: int = -1) -> int:
    node = cluster["faults"].active_controller(exclude=exclude, timeout=30)
    assert node is not None, "no active controller named by the brokers"
    return node.node_id


def describe(cluster, voter: int) -> tuple[int, object]:
    """(error, partition) of DescribeQuorum asked of ``voter`` directly (not through a proxy)."""
    port = cluster["quorum"].controller_port(voter)
    client = BlockingClient(HOST, port, "quorum-test", 5.0)
    try:
        answer = client.send_and_receive(ApiKey.DESCRIBE_QUORUM, 2, wire.describe_quorum_request())
    finally:
        client.close()
    if answer.error_code != E.NONE:
        return answer.error_code, None
    part = answer.topics[0].partitions[0]
    return part.error_code, part


def create_topic(bootstrap: str, name: str, timeout: float = 30.0) -> float:
    """Create ``name`` (3 partitions, RF 2) through any of ``bootstrap``; retried until it succeeds.
    Returns the seconds it took."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    start = time.monotonic()
    last: object = None
    while time.monotonic() - start < timeout:
        try:
            for f in admin.create_topics([NewTopic(name, 3, 2)], operation_timeout=5,
                                         request_timeout=5).values():
                f.result(10)
            return time.monotonic() - start
        except Exception as e:  # NOT_CONTROLLER, REQUEST_TIMED_OUT while the quorum elects
            if "TOPIC_ALREADY_EXISTS" in str(e):
                return time.monotonic() - start
            last = e
            time.sleep(0.1)
    raise AssertionError(f"topic {name} not created within {timeout} s: {last}")


def leaders(cluster, via: int) -> dict[tuple[str, int], int]:
    return {tp: v[0] for tp, v in kcat_partitions(cluster["nodes"][via].client_port).items()}


def test_the_active_controller_killed_twice_a_new_one_acts_and_no_acknowledged_record_is_lost(cluster):
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": servers(cluster)})
    for f in admin.create_topics([NewTopic(TOPIC, PARTITIONS, 3)], operation_timeout=30).values():
        f.result(60)
    assert wait_for(lambda: sum(1 for (t, _), v in kcat_partitions(cluster["nodes"][1].client_port).items()
                                if t == TOPIC and len(v[2].split(",")) == 3) == PARTITIONS, timeout=60)
    producing = Producing(servers(cluster))
    try:
        for round_ in (1, 2):
            before = producing.count()
            assert wait_for(lambda b=before: producing.count() > b + 100, timeout=30)
            victim = active(cluster)
            survivor = next(i for i in cluster["nodes"] if i != victim)
            led = {tp for tp, leader in leaders(cluster, survivor).items() if leader == victim}
            cluster["faults"].kill(victim)  # SIGKILL; nobody tells the quorum
            took = create_topic(servers(cluster, but=victim), f"after-kill-{round_}")
            new = active(cluster, exclude=victim)
            assert new != victim
            print(f"round {round_}: controller {victim} killed, {new} active, topic created in {took:.2f} s")
            # Its partitions (the topic's and __consumer_offsets') are led by live nodes once the new
            # controller fences it (its session, 1.5 s).
            assert wait_for(lambda v=victim, s=survivor, led=led: all(
                leaders(cluster, s).get(tp, v) not in (v, -1) for tp in led), timeout=30), \
                (victim, led, kcat_partitions(cluster["nodes"][survivor].client_port))
            after = producing.count()
            assert wait_for(lambda a=after: producing.count() > a + 100, timeout=30)
            cluster["faults"].restart(victim)
            assert C.wait_registered(list(cluster["nodes"].values()), 60)
            # Back in every ISR before the next kill: a partition whose only ISR member is the next
            # victim (a topic created while this node was down) would rightly stay offline.
            assert wait_for(lambda s=survivor: all(sorted(isr.split(",")) == sorted(replicas.split(","))
                                        for _, replicas, isr in kcat_partitions(
                                            cluster["nodes"][s].client_port).values()), timeout=60)
    finally:
        producing.stop()
    assert not producing.failed, producing.failed[:5]
    ends = high_watermarks(servers(cluster))
    got = read_all(servers(cluster), ends)
    for p in range(PARTITIONS):
        values = [v for _, v in got[p]]
        assert len(values) == len(set(values)), f"partition {p}: a record read twice"
        acked = [v for _, v in producing.acked[p]]
        assert set(acked) <= set(values), f"partition {p}: an acknowledged record is missing"
        assert [v for v in values if v in set(acked)] == acked, f"partition {p}: out of order"


def test_a_partitioned_controller_stops_acting_the_majority_elects_and_it_truncates_on_heal(cluster):
    old = active(cluster)
    error, part = describe(cluster, old)
    assert error == E.NONE and part.leader_id == old
    old_epoch = part.leader_epoch
    cluster["quorum"].partition(old)
    try:
        # Cut off from the others it cannot commit; check-quorum makes it resign (fetch timeout x 1.5).
        assert wait_for(lambda: describe(cluster, old)[0] == E.NOT_LEADER_OR_FOLLOWER, timeout=15), \
            "the partitioned controller still leads"
        others = [i for i in cluster["nodes"] if i != old]

        def majority_leader() -> int | None:
            for i in others:
                err, p = describe(cluster, i)
                if err == E.NONE:
                    return p.leader_id
            return None
        assert wait_for(lambda: majority_leader() in others, timeout=15)
        new_epoch = describe(cluster, majority_leader())[1].leader_epoch
        assert new_epoch > old_epoch
        # The majority acts: a topic is created through a broker other than the cut-off node.
        create_topic(",".join(f"{HOST}:{cluster['nodes'][i].client_port}" for i in others),
                     "while-partitioned")
    finally:
        cluster["quorum"].heal(old)
    # Healed, it follows the new leader: every voter's log end reaches the same high watermark.
    def caught_up() -> bool:
        leader = majority_leader()
        if leader is None:
            return False
        err, p = describe(cluster, leader)
        return err == E.NONE and {v.replica_id for v in p.current_voters} == set(cluster["nodes"]) and all(
            v.log_end_offset >= p.high_watermark for v in p.current_voters)
    assert wait_for(caught_up, timeout=30)
    log_text = open(cluster["nodes"][old].log_path or "", errors="replace").read()
    # What it appended alone (brokers it could no longer hear from, fenced) was never committed: it
    # truncated it when the new leader's log diverged (KafkaRaftClient's divergence handling).
    assert f"node {old}: truncating to offset" in log_text
    assert C.wait_registered(list(cluster["nodes"].values()), 60)
