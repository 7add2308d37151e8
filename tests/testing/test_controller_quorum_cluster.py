"""kafkalite.testing.Cluster with the controller on its own: a controller-only node (process.roles=
controller) behind TCP proxies, the brokers finding it through controller.quorum.voters. The
single controller is a quorum of one voter until the RaftManager lands; what the brokers do
(register, forward, name a live broker as the controller, learn the active one) is the same."""

from __future__ import annotations

import pytest

from kafkalite.clients import BlockingClient
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import create_topics, metadata
from kafkalite.server.faults.injector import FaultError
from kafkalite.testing import Cluster
from tests.support.wait import wait_for


def call(port: int, api: int, version: int, body):
    client = BlockingClient("127.0.0.1", port, "quorum-test", 10.0)
    try:
        return client.send_and_receive(api, version, body)
    finally:
        client.close()


@pytest.fixture(scope="module")
def cluster():
    with Cluster(2, controllers=1, controller_only=True, offsets_topic=False) as c:
        yield c


def test_the_controller_only_node_runs_the_controller_and_no_broker(cluster):
    node = cluster.nodes[3]
    assert not node.is_broker and node.is_voter
    controller_node = node.broker
    assert controller_node.controller is not None and controller_node.lifecycle is None
    assert controller_node.replica_manager is None and controller_node.log_manager is None
    assert cluster.controller is controller_node
    assert cluster.bootstrap_servers.count(",") == 1  # brokers 1 and 2 only
    for n in (1, 2):  # registered through the proxy in front of node 3's controller listener
        assert cluster.broker(n).lifecycle.registered.is_set()
        assert cluster.proxy(n, 3).accepted >= 1
        # The voter its control requests come from is the active one.
        assert cluster.broker(n).controller_nodes.active_id == 3


def test_metadata_names_a_live_broker_as_the_controller_and_not_the_controller_node(cluster):
    for n in (1, 2):
        response = call(cluster.nodes[n].client_port, ApiKey.METADATA, 12, metadata.REQUEST(topics=[]))
        assert sorted(b.node_id for b in response.brokers) == [1, 2]
        assert response.controller_id == n


def test_brokers_forward_topic_creation_to_the_controller_node(cluster):
    R = create_topics.REQUEST
    body = R(timeout_ms=10000, validate_only=False, topics=[
        R["topics"](name="forwarded", num_partitions=2, replication_factor=2, assignments=[], configs=[])])
    response = call(cluster.nodes[2].client_port, ApiKey.CREATE_TOPICS, 7, body)
    assert [(t.name, t.error_code, t.num_partitions) for t in response.topics] == [("forwarded", E.NONE, 2)]
    # Answered once broker 2's own metadata has it.
    assert len(cluster.broker(2).metadata_cache.snapshot.topics["forwarded"].partitions) == 2
    cluster.wait_led("forwarded")


def test_the_controller_node_serves_only_the_controllers_apis(cluster):
    from kafkalite.protocol.messages import api_versions

    port = cluster.broker(3).bound_port("CONTROLLER")
    response = call(port, ApiKey.API_VERSIONS, 3, api_versions.REQUEST(client_software_name="t",
                                                                        client_software_version="1"))
    keys = {k.api_key for k in response.api_keys}
    assert ApiKey.BROKER_REGISTRATION in keys and ApiKey.CREATE_TOPICS in keys
    # The quorum's apis too, Fetch of __cluster_metadata among them (Kafka's ControllerApis).
    assert ApiKey.VOTE in keys and ApiKey.FETCH in keys
    assert ApiKey.PRODUCE not in keys and ApiKey.JOIN_GROUP not in keys


def test_partitioning_the_controller_cuts_the_brokers_off_and_healing_brings_them_back(cluster):
    with pytest.raises(FaultError):
        cluster.partition_controller(1)  # not a voter
    cluster.partition_controller(3)
    try:
        before = cluster.broker(1).lifecycle.client
        assert wait_for(lambda: cluster.proxy(1, 3).refused >= 1, 10)  # heartbeats refused
        assert before is cluster.broker(1).lifecycle.client
    finally:
        cluster.heal_controller(3)
    accepted = cluster.proxy(1, 3).accepted
    assert wait_for(lambda: cluster.proxy(1, 3).accepted > accepted, 10)
    cluster.create_topic("after-heal", 1, 2)


def test_elections_and_reassignments_are_forwarded_to_the_controller_only_node(cluster):
    from kafkalite.protocol.messages import elect_leaders, list_partition_reassignments

    cluster.create_topic("elect-me", partitions=1, replication_factor=2)
    port = cluster.nodes[1].client_port
    asked = [elect_leaders.REQUEST["topic_partitions"](topic="elect-me", partitions=[0])]
    request = elect_leaders.REQUEST(election_type=elect_leaders.PREFERRED, timeout_ms=10000,
                                    topic_partitions=asked)
    response = call(port, ApiKey.ELECT_LEADERS, 2, request)
    assert response.error_code == E.NONE
    (result,) = [p for t in response.replica_election_results for p in t.partition_result]
    # The preferred replica already leads: the controller's answer, not NOT_CONTROLLER.
    assert result.error_code == E.ELECTION_NOT_NEEDED
    listed = call(port, ApiKey.LIST_PARTITION_REASSIGNMENTS, 0,
                  list_partition_reassignments.REQUEST(timeout_ms=10000, topics=None))
    assert (listed.error_code, listed.topics) == (E.NONE, [])
