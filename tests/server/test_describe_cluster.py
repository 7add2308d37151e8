"""DescribeCluster on the wire: against a real broker (its own controller) at each version, the
refusals of another endpoint type, the listener's endpoints and the controller across two
brokers; then confluent-kafka's and kafka-python's AdminClient.describe_cluster() against a
3-broker kafkalite.testing.Cluster (librdkafka asks Metadata for it, kafka-python DescribeCluster)."""

from __future__ import annotations

import pytest

from kafkalite.protocol import error_codes as E
from kafkalite.protocol.acl import ResourceType
from kafkalite.protocol.messages import describe_cluster
from kafkalite.server.authorizer import OPERATIONS_OF, operations_bits
from tests.support.brokers import connect, running_broker, two_brokers
from tests.support.wire_client import Client

DESCRIBE_CLUSTER, METADATA = 60, 3
OMITTED = -2147483648
R = describe_cluster.REQUEST


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with running_broker(tmp_path_factory.mktemp("describe-cluster"), broker_rack="r1") as b:
        yield b


@pytest.mark.parametrize("version", [0, 1, 2])
def test_each_version_describes_the_broker(broker, version):
    port = broker.bound_port("PLAINTEXT")
    with connect(broker) as c:
        r = c.call(DESCRIBE_CLUSTER, version, R(include_cluster_authorized_operations=False))
    assert (r.error_code, r.error_message) == (E.NONE, None)
    assert r.cluster_id == broker.metadata_cache.snapshot.cluster_id and r.cluster_id
    assert r.controller_id == 1
    assert [(b.broker_id, b.host, b.port, b.rack) for b in r.brokers] == [(1, "127.0.0.1", port, "r1")]
    assert r.cluster_authorized_operations == OMITTED
    if version >= 1:
        assert r.endpoint_type == 1
    if version >= 2:
        assert [b.is_fenced for b in r.brokers] == [False]


def test_authorized_operations_without_an_authorizer_are_all_of_the_clusters(broker):
    """Kafka's AuthHelper without an authorizer: every operation a CLUSTER supports."""
    assert operations_bits(OPERATIONS_OF[ResourceType.CLUSTER]) == 8096
    with connect(broker) as c:
        r = c.call(DESCRIBE_CLUSTER, 2, R(include_cluster_authorized_operations=True,
                                          include_fenced_brokers=True))
    assert r.error_code == E.NONE
    assert r.cluster_authorized_operations == 8096
    assert [b.broker_id for b in r.brokers] == [1]


@pytest.mark.parametrize("version", [1, 2])
def test_controllers_asked_of_a_broker(broker, version):
    """A broker describes brokers: CONTROLLERS is MISMATCHED_ENDPOINT_TYPE, as Kafka's broker answers."""
    with connect(broker) as c:
        r = c.call(DESCRIBE_CLUSTER, version, R(include_cluster_authorized_operations=True, endpoint_type=2))
    assert r.error_code == E.MISMATCHED_ENDPOINT_TYPE == 114
    assert r.error_message == ("The request was sent to an endpoint of type BROKER, but we wanted an "
                               "endpoint of type CONTROLLER")
    assert (r.brokers, r.controller_id, r.cluster_authorized_operations) == ([], -1, OMITTED)


@pytest.mark.parametrize("endpoint_type", [0, 3, -1])
def test_unknown_endpoint_type(broker, endpoint_type):
    with connect(broker) as c:
        r = c.call(DESCRIBE_CLUSTER, 1, R(include_cluster_authorized_operations=False,
                                          endpoint_type=endpoint_type))
    assert r.error_code == E.UNSUPPORTED_ENDPOINT_TYPE == 115
    assert r.error_message == f"Unsupported endpoint type {endpoint_type}"
    assert r.brokers == []


def test_endpoints_of_the_listener_asked_and_the_controller_across_brokers(tmp_path):
    with two_brokers(tmp_path) as (one, two):
        for listener in ("PLAINTEXT", "INTERNAL"):
            want = [(1, one.bound_port(listener)), (2, two.bound_port(listener))]
            for b in (one, two):
                with Client("127.0.0.1", b.bound_port(listener)) as c:
                    r = c.call(DESCRIBE_CLUSTER, 2, R(include_cluster_authorized_operations=False))
                assert r.error_code == E.NONE
                assert [(x.broker_id, x.port) for x in r.brokers] == want
                assert r.controller_id == 1
                assert r.cluster_id == one.metadata_cache.snapshot.cluster_id


# --- real clients ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def cluster():
    from kafkalite.testing import Cluster

    with Cluster(3, offsets_topic=False) as c:
        yield c


def _expected(cluster):
    return sorted((n.node_id, "127.0.0.1", n.client_port) for n in cluster.nodes.values())


@pytest.mark.integration
def test_confluent_kafka_describe_cluster(cluster):
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    with cluster.capture() as seen:
        result = admin.describe_cluster(request_timeout=20).result(timeout=30)
    assert result.cluster_id == cluster.cluster_id
    assert result.controller.id == 1
    assert sorted((n.id, n.host, n.port) for n in result.nodes) == _expected(cluster)
    # librdkafka (2.x) answers describe_cluster from a Metadata request, not DescribeCluster:
    # this checks that the two agree; kafka-python's (below) sends DescribeCluster itself.
    assert METADATA in {r.api_key for r in seen}


@pytest.mark.integration
def test_kafka_python_describe_cluster(cluster):
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=20000)
    try:
        with cluster.capture() as seen:
            result = admin.describe_cluster()
    finally:
        admin.close()
    assert result["cluster_id"] == cluster.cluster_id
    assert result["controller_id"] == 1
    assert sorted((b["broker_id"], b["host"], b["port"]) for b in result["brokers"]) == _expected(cluster)
    assert (DESCRIBE_CLUSTER, 2) in {(r.api_key, r.api_version) for r in seen}
