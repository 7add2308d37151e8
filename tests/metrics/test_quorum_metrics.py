"""The metadata quorum's metrics on /metrics (a 3-voter kafkalite.testing.Cluster): every voter
reports Kafka's raft-metrics gauges with the same leader and epoch, and only the leader's node
reports ActiveControllerCount 1; after the leader is killed the survivors report the new one."""

from __future__ import annotations

import pytest

from kafkalite.server.broker import Broker
from kafkalite.testing import Cluster
from tests.support.prometheus import scrape, value
from tests.support.wait import wait_for


@pytest.fixture
def cluster():
    with Cluster(3, controllers=3, offsets_topic=False, settings={"metrics.port": 0}) as c:
        yield c


def gauge(broker: Broker, name: str) -> float:
    assert broker.metrics_server is not None
    return value(scrape(broker.metrics_server.port)[name], name)


def quorum_view(cluster: Cluster, nodes: list[int]) -> dict[int, tuple[float, float, float]]:
    """node -> (current leader, current epoch, ActiveControllerCount) as its /metrics says."""
    view = {}
    for n in nodes:
        port = cluster.broker(n).metrics_server.port
        samples = scrape(port)  # one scrape per node: the three gauges of one moment
        view[n] = tuple(value(samples[name], name) for name in (
            "kafka_server_raft_metrics_current_leader", "kafka_server_raft_metrics_current_epoch",
            "kafka_controller_kafkacontroller_activecontrollercount"))
    return view


def agreed(view: dict[int, tuple[float, float, float]]) -> bool:
    leaders = {(leader, epoch) for leader, epoch, _ in view.values()}
    if len(leaders) != 1:
        return False
    ((leader, _),) = leaders
    return {n: active for n, (_, _, active) in view.items()} == {n: float(n == leader) for n in view}


def test_every_voter_reports_the_same_leader_and_only_it_is_the_active_controller(cluster):
    leader = cluster.active_controller(10).node_id
    every = [1, 2, 3]
    assert wait_for(lambda: agreed(quorum_view(cluster, every)), timeout=10), quorum_view(cluster, every)
    assert quorum_view(cluster, every)[1][0] == leader
    epoch = quorum_view(cluster, every)[1][1]
    cluster.kill(leader)
    rest = [n for n in (1, 2, 3) if n != leader]
    assert wait_for(lambda: agreed(quorum_view(cluster, rest)), timeout=10), quorum_view(cluster, rest)
    new_leader, new_epoch, _ = quorum_view(cluster, rest)[rest[0]]
    assert new_leader in rest and new_epoch > epoch
    assert gauge(cluster.broker(rest[0]), "kafka_server_raft_metrics_high_watermark") > 0
