"""A 5-voter quorum of controller-only nodes in front of two brokers (kafkalite.testing): it survives
the loss of two voters, the active one among them; with three gone no majority is left, so
nothing acts on metadata (no topic is created) while the brokers keep serving their data; one
voter back and the quorum acts again. Short quorum timeouts keep the elections quick."""

from __future__ import annotations

import time

import pytest

from kafkalite.testing import Cluster
from tests.support.raw_requests import batch as records
from tests.support.raw_requests import produce
from tests.support.wait import wait_for
from tests.support.wire_client import Client

QUICK_QUORUM = {"controller.quorum.election.timeout.ms": 300, "controller.quorum.fetch.timeout.ms": 600,
                "controller.quorum.election.backoff.max.ms": 300, "controller.quorum.request.timeout.ms": 600}


@pytest.fixture
def cluster():
    with Cluster(2, controllers=5, controller_only=True, offsets_topic=False, settings=QUICK_QUORUM) as c:
        yield c


def acting(cluster: Cluster) -> list[int]:
    """The voters whose controller is active now."""
    return [v for v in cluster.voter_ids if (b := cluster.nodes[v].broker) is not None
            and b.controller is not None and b.controller.is_active]


def active_id(cluster: Cluster, timeout: float) -> int:
    return cluster.active_controller(timeout).node_id


def test_five_voters_survive_two_losses_and_stop_acting_without_a_majority(cluster):
    first = active_id(cluster, 10)
    cluster.create_topic("before", partitions=2, replication_factor=2)
    down = [first, next(v for v in cluster.voter_ids if v != first)]
    for voter in down:
        cluster.kill(voter)
    second = active_id(cluster, 15)
    assert second not in down
    cluster.create_topic("after-two", partitions=2, replication_factor=2, timeout=15)

    third = second
    cluster.kill(third)  # three of five gone: two voters cannot elect
    assert wait_for(lambda: not acting(cluster), timeout=10), "a controller acts without a majority"
    # Nothing acts on metadata for as long as that lasts (a second here), and data keeps flowing.
    start = time.monotonic()
    while time.monotonic() - start < 1.0:
        assert not acting(cluster)
        time.sleep(0.05)
    leader = cluster.leader("after-two", 0)
    client = Client("127.0.0.1", cluster.nodes[leader].client_port, "majority-test")
    try:
        assert produce(client, "after-two", records([b"still-here"]), partition=0, acks=1).error_code == 0
    finally:
        client.close()

    cluster.restart(third)  # three of five again: a majority
    back = active_id(cluster, 15)
    assert back not in down
    cluster.create_topic("after-return", partitions=1, replication_factor=2, timeout=15)
