"""A 5-voter quorum of controller-only nodes in front of two brokers (kafkalite.testing): it survives
the loss of two voters, the active one among them; with three gone no majority is left, so
nothing acts on metadata (no topic is created) while the brokers keep serving their data; one
voter back and the quorum acts again. And a standby never forwards again what a broker forwarded to
it. Short quorum timeouts keep the elections quick."""

from __future__ import annotations

import time

import pytest

from kafkalite.clients import BlockingClient
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import create_topics
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


def test_a_standby_answers_a_forwarded_topic_request_not_controller_and_a_clients_it_forwards():
    """A request another broker forwarded (client id broker-N-topics, on the controller listener)
    is not forwarded again by a standby: NOT_CONTROLLER, and the forwarding broker tries the next
    voter; a client's own request to that node is forwarded to the active controller."""
    with Cluster(3, controllers=3, offsets_topic=False, settings=QUICK_QUORUM) as c:
        standby = next(v for v in c.voter_ids if v != active_id(c, 10))
        node = c.broker(standby)
        from_broker = BlockingClient("127.0.0.1", node.bound_port("CONTROLLER"), "broker-9-topics", 10.0)
        from_client = BlockingClient("127.0.0.1", node.bound_port(), "a-client", 10.0)
        try:
            asked = lambda name: create_topics.REQUEST(  # noqa: E731
                topics=[create_topics.REQUEST["topics"](name=name, num_partitions=1, replication_factor=1,
                                                         assignments=[], configs=[])],
                timeout_ms=10000, validate_only=False)
            answer = from_broker.send_and_receive(ApiKey.CREATE_TOPICS, 7, asked("re-forwarded"))
            assert [(t.name, t.error_code) for t in answer.topics] == [("re-forwarded", E.NOT_CONTROLLER)]
            answer = from_client.send_and_receive(ApiKey.CREATE_TOPICS, 7, asked("forwarded"))
            assert [(t.name, t.error_code) for t in answer.topics] == [("forwarded", E.NONE)]
        finally:
            from_broker.close()
            from_client.close()
