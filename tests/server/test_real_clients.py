"""Real, unmodified Kafka clients against a broker started as a subprocess: kcat (librdkafka),
confluent-kafka (librdkafka) and kafka-python. Each must see the broker's id, host, port and the
controller id."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.support.broker_process import BrokerProcess

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with BrokerProcess(tmp_path_factory.mktemp("real-clients"), node_id=7) as b:
        yield b


def test_kcat_lists_the_broker(broker):
    kcat = shutil.which("kcat")
    assert kcat, "kcat is installed by .ci/system-deps.sh"
    out = subprocess.run([kcat, "-L", "-b", broker.bootstrap, "-m", "10"], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert f"broker 7 at 127.0.0.1:{broker.port} (controller)" in out.stdout
    assert "0 topics:" in out.stdout


def test_confluent_kafka_admin_list_topics(broker):
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    md = admin.list_topics(timeout=20)
    assert list(md.brokers) == [7]
    b = md.brokers[7]
    assert (b.id, b.host, b.port) == (7, "127.0.0.1", broker.port)
    assert md.controller_id == 7
    assert md.topics == {}
    assert md.cluster_id


def test_kafka_python_admin_describe_cluster(broker):
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=20000)
    try:
        cluster = admin.describe_cluster()
    finally:
        admin.close()
    assert cluster["controller_id"] == 7
    assert [(b["broker_id"], b["host"], b["port"]) for b in cluster["brokers"]] == [
        (7, "127.0.0.1", broker.port)]


def test_kafka_python_consumer_topics(broker):
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, request_timeout_ms=20000)
    try:
        assert consumer.topics() == set()
        # kafka-python keeps what Metadata said in its ClusterMetadata.
        cluster = consumer._client.cluster
        brokers = cluster.brokers()
        assert [(b.node_id, b.host, b.port) for b in brokers] == [(7, "127.0.0.1", broker.port)]
        assert cluster.controller.node_id == 7
    finally:
        consumer.close()


def test_clients_report_their_software_in_api_versions(broker):
    """librdkafka sends ApiVersions v3 with its name and version; the broker records it."""
    from confluent_kafka.admin import AdminClient

    AdminClient({"bootstrap.servers": broker.bootstrap}).list_topics(timeout=20)
    # The broker does not expose this over the wire yet; its debug log would. Here it is enough
    # that the v3 request was accepted (no connection closed for a bad ApiVersions).
    assert not [line for line in broker.lines if "Closing connection" in line and "error" in line]
