"""The metrics the components register, scraped over HTTP from the brokers of a running
kafkalite.testing.Cluster: every purgatory, the replication metrics through an ISR shrink and
expansion (a stalled follower, then a killed and restarted one), the controller's (a partition
offline while its only replica is dead), and the group
coordinator's through an OffsetCommit; docs/metrics.md names exactly what the collector reports."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kafkalite.metrics.collector import BrokerCollector
from kafkalite.protocol.messages import find_coordinator, offset_commit
from kafkalite.server.broker import Broker
from kafkalite.testing import Cluster
from tests.support.prometheus import scrape, value
from tests.support.wait import wait_for
from tests.support.wire_client import Client

pytestmark = pytest.mark.integration


DOCS = Path(__file__).resolve().parent.parent.parent / "docs" / "metrics.md"
RM = "kafka_server_replicamanager_"
GROUPS = "kafka_coordinator_group_groupmetadatamanager_"
COMMITS = "kafka_server_group_coordinator_metrics_offset_commit"
TIMEOUT = 30


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    settings = {"metrics.port": 0,
                # A follower behind for 1 s leaves the ISR; caught-up followers fetch far more often.
                "replica.lag.time.max.ms": 1000, "replica.fetch.wait.max.ms": 50}
    # Broker 1 also has what only some brokers report: the memory pool and the request log.
    # ... and an authorizer (everything allowed: no ACL, allow.everyone.if.no.acl.found).
    first = {"queued.max.request.bytes": 10_000_000,
             "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
             "allow.everyone.if.no.acl.found": "true",
             "request.log.dir": str(tmp_path_factory.mktemp("request-log"))}
    with Cluster(3, settings=settings, broker_settings={1: first}) as c:
        yield c


def brokers(cluster: Cluster) -> list[Broker]:
    return [cluster.broker(n) for n in (1, 2, 3)]


def metrics_of(broker: Broker) -> dict[str, list]:
    assert broker.metrics_server is not None
    return scrape(broker.metrics_server.port)


def gauge(broker: Broker, name: str, **labels: str) -> float:
    return value(metrics_of(broker)[name], name, **labels)


def counter(broker: Broker, name: str) -> float:
    return value(metrics_of(broker)[name], f"{name}_total")


def test_every_purgatory_is_exported(cluster):
    for broker in brokers(cluster):
        m = metrics_of(broker)
        for family in ("purgatorysize", "numdelayedoperations"):
            name = f"kafka_server_delayedoperationpurgatory_{family}"
            names = {s.labels["delayedOperation"] for s in m[name]}
            assert names == {"Produce", "Fetch", "topic", "Rebalance", "Heartbeat"}, (broker.node_id, names)


def test_one_broker_runs_the_active_controller(cluster):
    counts = {b.node_id: gauge(b, "kafka_controller_kafkacontroller_activecontrollercount")
              for b in brokers(cluster)}
    assert counts == {1: 1, 2: 0, 3: 0}
    for b in brokers(cluster):
        assert gauge(b, "kafka_controller_kafkacontroller_offlinepartitionscount") == 0


def _isr_topic(cluster: Cluster, name: str) -> tuple[Broker, Broker]:
    """A topic led by broker 2 and followed by 3 and 1, min.insync.replicas 3: (leader, broker 3)."""
    cluster.create_topic(name, configs={"min.insync.replicas": "3"}, assignment={0: [2, 3, 1]})
    leader, follower = cluster.broker(2), cluster.broker(3)
    assert wait_for(lambda: leader.replica_manager.partitions[(name, 0)].isr == (2, 3, 1), timeout=TIMEOUT)
    return leader, follower


def test_a_stalled_follower_shrinks_the_isr_and_its_return_expands_it(cluster):
    leader, follower = _isr_topic(cluster, "isr-stall")
    partition = leader.replica_manager.partitions[("isr-stall", 0)]
    shrinks, expands = counter(leader, f"{RM}isrshrinks"), counter(leader, f"{RM}isrexpands")
    # Broker 3 stops fetching: after replica.lag.time.max.ms its leader takes it out of the ISR.
    follower.replica_manager.fetcher_manager.remove_fetcher_for_partitions([("isr-stall", 0)])
    assert wait_for(lambda: partition.isr == (2, 1), timeout=TIMEOUT)
    assert counter(leader, f"{RM}isrshrinks") >= shrinks + 1
    assert gauge(leader, f"{RM}underreplicatedpartitions") >= 1
    assert gauge(leader, f"{RM}underminisrpartitioncount") >= 1
    # It fetches again: it catches up and its leader takes it back.
    listener = leader.config.inter_broker_listener_name
    follower.replica_manager._update_fetchers([("isr-stall", 0)],
                                              {2: ("127.0.0.1", leader.bound_port(listener))})
    assert wait_for(lambda: set(partition.isr) == {1, 2, 3}, timeout=TIMEOUT)
    assert counter(leader, f"{RM}isrexpands") >= expands + 1
    assert wait_for(lambda: gauge(leader, f"{RM}underreplicatedpartitions") == 0, timeout=TIMEOUT)
    assert gauge(leader, f"{RM}underminisrpartitioncount") == 0


def test_a_killed_follower_leaves_the_isr_and_its_restart_expands_it(cluster):
    leader, follower = _isr_topic(cluster, "isr-kill")
    partition = leader.replica_manager.partitions[("isr-kill", 0)]
    expands = counter(leader, f"{RM}isrexpands")
    cluster.kill(3)  # the controller takes it out of every ISR at once
    # A broker shut down leaves nothing in its registry: each component removed its metrics.
    assert follower.metrics.keys() == []
    assert wait_for(lambda: partition.isr == (2, 1), timeout=TIMEOUT)
    assert wait_for(lambda: gauge(leader, f"{RM}underreplicatedpartitions") >= 1, timeout=TIMEOUT)
    cluster.restart(3)
    assert wait_for(lambda: set(partition.isr) == {1, 2, 3}, timeout=TIMEOUT)
    assert counter(leader, f"{RM}isrexpands") >= expands + 1
    assert wait_for(lambda: gauge(leader, f"{RM}underreplicatedpartitions") == 0, timeout=TIMEOUT)


def test_a_partition_whose_only_replica_dies_is_offline_until_it_returns(cluster):
    cluster.create_topic("offline", assignment={0: [3]})
    controller = cluster.broker(1)
    offline = "kafka_controller_kafkacontroller_offlinepartitionscount"
    assert gauge(controller, offline) == 0
    cluster.kill(3)  # no other replica to lead it
    assert wait_for(lambda: gauge(controller, offline) == 1, timeout=TIMEOUT)
    cluster.restart(3)
    assert wait_for(lambda: gauge(controller, offline) == 0, timeout=TIMEOUT)


def test_a_groups_commit_moves_num_groups_and_offset_commits(cluster):
    cluster.create_topic("committed", 2)
    group = "metrics-group"
    with Client("127.0.0.1", cluster.broker(1).bound_port("PLAINTEXT")) as c:
        found_ = c.call(10, 2, find_coordinator.REQUEST(key=group, key_type=0))
        assert found_.error_code == 0
    coordinator = cluster.broker(found_.node_id)
    before = metrics_of(coordinator)
    groups, empty = (value(before[f"{GROUPS}{n}"], f"{GROUPS}{n}") for n in ("numgroups", "numgroupsempty"))
    commits = value(before[COMMITS], f"{COMMITS}_total")
    C = offset_commit.REQUEST
    body = C(group_id=group, generation_id_or_member_epoch=-1, member_id="", topics=[C["topics"](
        name="committed", partitions=[C["topics"]["partitions"](partition_index=i, committed_offset=0,
                                                                committed_metadata="") for i in (0, 1)])])
    with Client("127.0.0.1", found_.port) as c:
        answer = c.call(8, 7, body)
    assert [p.error_code for p in answer.topics[0].partitions] == [0, 0]
    after = metrics_of(coordinator)
    assert value(after[f"{GROUPS}numgroups"], f"{GROUPS}numgroups") == groups + 1
    assert value(after[f"{GROUPS}numgroupsempty"], f"{GROUPS}numgroupsempty") == empty + 1
    assert value(after[COMMITS], f"{COMMITS}_total") == commits + 2  # one per partition, as Kafka counts
    assert value(after[f"{GROUPS}numoffsets"], f"{GROUPS}numoffsets") >= 2


def documented_names() -> set[str]:
    """The Prometheus names in docs/metrics.md's tables (first column)."""
    names = set()
    for line in DOCS.read_text().splitlines():
        if line.startswith("| `"):
            names.update(re.findall(r"`((?:kafka|kafkalite)_[a-z0-9_]+)`", line.split("|")[1]))
    return names


def test_the_docs_name_exactly_what_the_collector_reports(cluster):
    """Broker 1 runs the controller and has a memory pool and a request log: it reports every
    family there is. Counters are documented with their ``_total``."""
    reported = set()
    for family in BrokerCollector(cluster.broker(1)).collect():
        reported.add(f"{family.name}_total" if family.type == "counter" else family.name)
    documented = documented_names()
    assert reported - documented == set(), "add these to docs/metrics.md"
    assert documented - reported == set(), "docs/metrics.md names metrics nobody reports"
    assert "today" not in DOCS.read_text()
