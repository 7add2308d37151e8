"""kafkalite/clients/admin.py against a real in-process cluster (kafkalite.testing, one per module):
version negotiation, routing (controller, coordinator, leaders), retries of retriable errors
bounded by the timeout, and Kafka's errors by name. The faults are kafkalite.testing's (errors
injected by api, versions advertised lower)."""

from __future__ import annotations

import struct
import time

import pytest

from kafkalite.clients.admin import (
    BROKER,
    EARLIEST,
    LATEST,
    TOPIC,
    AdminClient,
    AdminError,
    AdminTimeout,
    NewTopic,
    consumer_assignment,
)
from kafkalite.protocol import APIS_BY_KEY, ApiKey, DecodeError, decode_response, encode_response
from kafkalite.protocol.messages import elect_leaders, metadata
from kafkalite.testing import Cluster
from tests.support.broker_process import free_port
from tests.support.wait import wait_for


@pytest.fixture(scope="module")
def cluster():
    with Cluster(3, settings={"auto.leader.rebalance.enable": "false"}) as c:
        yield c


def address(cluster: Cluster, node_id: int) -> str:
    """One broker's client address: a bootstrap of that broker alone."""
    return cluster.nodes[node_id].address


def addr(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    return host, int(port)


def test_consumer_assignment_reads_every_version_of_the_consumer_protocol():
    topic = b"orders"
    # version 3, one topic "orders" with partitions [0, 2], null user data
    body = struct.pack(">hih", 3, 1, len(topic)) + topic + struct.pack(">iiii", 2, 0, 2, -1)
    assert consumer_assignment(body) == [("orders", 0), ("orders", 2)]
    assert consumer_assignment(b"") == []
    assert consumer_assignment(body[:9]) == []  # cut short: nothing rather than a half


def test_bytes_after_a_response_body_are_refused_only_when_strict():
    """librdkafka's mock cluster sends one byte too many after its flexible Metadata responses;
    Kafka's clients ignore it, and so does the admin client (BlockingClient(strict=False))."""
    frame = encode_response(ApiKey.METADATA, 12, 7, metadata.RESPONSE(brokers=[], topics=[], controller_id=1))
    payload = bytes(frame)[4:] + b"\x00"
    with pytest.raises(DecodeError, match="trailing"):
        decode_response(payload, ApiKey.METADATA, 12)
    correlation, body = decode_response(payload, ApiKey.METADATA, 12, strict=False)
    assert (correlation, body.controller_id) == (7, 1)


@pytest.mark.integration
def test_each_api_goes_at_the_highest_version_both_sides_know(cluster):
    bootstrap = address(cluster, 2)
    cluster.set_max_versions({"Metadata": 9}, broker=2)
    try:
        with AdminClient(bootstrap) as admin, cluster.capture(broker=2) as seen:
            admin.describe_cluster()
            advertised = admin._versions[addr(bootstrap)]
            for key, (_, high) in advertised.items():
                if key in APIS_BY_KEY:
                    ours = APIS_BY_KEY[key].versions.high
                    assert admin.api_version(addr(bootstrap), key) == min(high, ours)
        assert admin.api_version(addr(bootstrap), ApiKey.METADATA) == 9
        assert [r.api_version for r in seen if r.api_key == ApiKey.METADATA] == [9]
        assert [r.api_version for r in seen if r.api_key == ApiKey.API_VERSIONS] == [3]
    finally:
        cluster.clear_faults(broker=2)


@pytest.mark.integration
def test_topic_changes_go_to_the_controller_whichever_broker_bootstraps(cluster):
    assert cluster.controller.node_id == 1
    with AdminClient(address(cluster, 3)) as admin, cluster.capture(broker=1) as at_controller:
        admin.create_topic(NewTopic("routed", 2, 2, {"retention.ms": "60000"}))
        assert admin.create_partitions({"routed": 3}) == {"routed": None}
        topics = admin.describe_topics(["routed"])
        configs = {c.name: c for c in admin.describe_configs(TOPIC, "routed")}
    assert {r.api_name for r in at_controller} >= {"CreateTopics", "CreatePartitions"}
    assert len(topics["routed"].partitions) == 3
    assert all(len(p.replicas) == 2 for p in topics["routed"].partitions.values())
    assert configs["retention.ms"].value == "60000"
    assert configs["retention.ms"].source_name == "DYNAMIC_TOPIC_CONFIG"
    assert not configs["segment.bytes"].source_name.startswith("DYNAMIC")


@pytest.mark.integration
def test_kafkas_errors_by_name(cluster):
    with AdminClient(cluster.bootstrap_servers) as admin:
        admin.create_topic(NewTopic("twice", 1, 1))
        with pytest.raises(AdminError) as e:
            admin.create_topic(NewTopic("twice", 1, 1))
        assert e.value.name == "TOPIC_ALREADY_EXISTS" and e.value.code == 36
        assert "TOPIC_ALREADY_EXISTS" in str(e.value)
        errors = admin.delete_topics(["twice", "never-was"])
        assert errors["twice"] is None
        assert errors["never-was"] is not None and errors["never-was"].name == "UNKNOWN_TOPIC_OR_PARTITION"
        with pytest.raises(AdminError) as e:
            admin.describe_topics(["never-was"])
        assert e.value.name == "UNKNOWN_TOPIC_OR_PARTITION"
        with pytest.raises(AdminError) as e:
            admin.describe_configs(BROKER, "99")
        assert e.value.name == "BROKER_NOT_AVAILABLE"


@pytest.mark.integration
def test_a_coordinator_not_available_or_loading_is_asked_again(cluster):
    bootstrap = address(cluster, 2)
    cluster.push_errors("FindCoordinator", "COORDINATOR_NOT_AVAILABLE", "COORDINATOR_LOAD_IN_PROGRESS",
                        broker=2)
    try:
        with AdminClient(bootstrap, timeout=10) as admin:
            admin.alter_group_offsets("retried", {("__consumer_offsets", 0): 0})
            assert admin.list_group_offsets("retried") == {("__consumer_offsets", 0): 0}
        assert cluster.pending_errors(broker=2) == {2: []}
    finally:
        cluster.clear_faults(broker=2)


@pytest.mark.integration
def test_a_partition_whose_leader_moved_is_asked_again(cluster):
    cluster.create_topic("moving", 2, 2)
    leader = cluster.leader("moving", 0)
    cluster.push_errors("ListOffsets", "NOT_LEADER_OR_FOLLOWER", "LEADER_NOT_AVAILABLE", broker=leader,
                        topic="moving", partition=0)
    try:
        with AdminClient(cluster.bootstrap_servers, timeout=10) as admin:
            assert admin.list_offsets({("moving", 0): LATEST, ("moving", 1): EARLIEST}) == {
                ("moving", 0): 0, ("moving", 1): 0}
        assert cluster.pending_errors(broker=leader) == {leader: []}
    finally:
        cluster.clear_faults(broker=leader)


@pytest.mark.integration
def test_retries_stop_at_the_timeout_naming_the_last_error(cluster):
    cluster.push_errors("FindCoordinator", "COORDINATOR_LOAD_IN_PROGRESS", count=10_000, broker=2)
    try:
        with AdminClient(address(cluster, 2), timeout=0.5) as admin:
            began = time.monotonic()
            with pytest.raises(AdminTimeout) as e:
                admin.list_group_offsets("stuck")
            took = time.monotonic() - began
        assert "COORDINATOR_LOAD_IN_PROGRESS" in str(e.value)
        assert 0.4 < took < 5  # the timeout, plus one last attempt on a loaded machine
    finally:
        cluster.clear_faults(broker=2)


@pytest.mark.integration
def test_an_unreachable_bootstrap_times_out():
    with AdminClient(f"127.0.0.1:{free_port()}", timeout=0.3, request_timeout=0.2) as admin:
        with pytest.raises(AdminTimeout) as e:
            admin.list_topics()
    assert "ConnectionRefused" in str(e.value)


@pytest.mark.integration
def test_groups_offsets_and_elections(cluster):
    cluster.create_topic("grouped", 2, 3)
    with AdminClient(cluster.bootstrap_servers) as admin:
        admin.alter_group_offsets("g-admin", {("grouped", 0): 0, ("grouped", 1): 0})
        assert "g-admin" in {g.group_id for g in admin.list_groups()}
        group = admin.describe_group("g-admin")
        assert group.state == "Empty" and group.members == []
        assert group.coordinator.node_id in (1, 2, 3)
        assert admin.list_group_offsets("g-admin", [("grouped", 1)]) == {("grouped", 1): 0}
        results = admin.elect_leaders(elect_leaders.PREFERRED, [("grouped", 0), ("grouped", 9)])
        names = {tp: e.name if e else None for tp, e in results.items()}
        assert names == {("grouped", 0): "ELECTION_NOT_NEEDED", ("grouped", 9): "UNKNOWN_TOPIC_OR_PARTITION"}
        assert admin.delete_groups(["g-admin"]) == {"g-admin": None}
        assert admin.describe_group("g-admin").state == "Dead"


@pytest.mark.integration
def test_reassignments_go_to_the_controller(cluster):
    cluster.create_topic("reassigned", assignment={0: [1, 2]})
    with AdminClient(address(cluster, 3)) as admin, cluster.capture(broker=1) as at_controller:
        assert admin.alter_partition_reassignments({("reassigned", 0): [2, 3]}) == {("reassigned", 0): None}
        assert wait_for(lambda: not admin.list_partition_reassignments([("reassigned", 0)]), timeout=20)
        # Done at the controller; the broker answering Metadata learns it by its UpdateMetadata.
        assert wait_for(lambda: admin.describe_topics(["reassigned"])["reassigned"].partitions[0].replicas
                        == [2, 3], timeout=20)
        cancelled = admin.alter_partition_reassignments({("reassigned", 0): None})[("reassigned", 0)]
        assert cancelled is not None and cancelled.name == "NO_REASSIGNMENT_IN_PROGRESS"
    seen = {r.api_name for r in at_controller}
    assert {"AlterPartitionReassignments", "ListPartitionReassignments"} <= seen
