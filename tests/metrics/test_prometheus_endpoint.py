"""The broker's Prometheus endpoint, scraped over HTTP from a running broker after real
requests: Kafka's request, network and controller metrics with the counts the requests made."""

from __future__ import annotations

import urllib.request
from decimal import Decimal

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kafkalite.metrics.request_metrics import SIZE_BUCKETS, SIZES, TIME_BUCKETS, TIMINGS
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import api_versions, create_topics, metadata
from tests.support.brokers import running_broker
from tests.support.prometheus import found, scrape, scrape_text, value
from tests.support.wait import wait_for
from tests.support.wire_client import Client

from .test_request_log import request_log_lines

pytestmark = pytest.mark.integration


def test_metrics_count_the_requests_served(tmp_path):
    with running_broker(tmp_path, metrics_port="0") as broker:
        port = broker.metrics_server.port
        with Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as c:
            for _ in range(5):
                c.call(18, 3, api_versions.REQUEST(client_software_name="t", client_software_version="1"))
            c.call(3, 12, metadata.REQUEST(topics=None))
            open_connections = {"listener": "PLAINTEXT"}
            # A response is counted once written: the last one may still be on its way.
            assert wait_for(lambda: found(scrape(port)["kafka_network_requestmetrics_requests"],
                                          "kafka_network_requestmetrics_requests_total",
                                          request="Metadata", version="12") == [1])
            m = scrape(port)
        requests = m["kafka_network_requestmetrics_requests"]
        assert value(requests, "kafka_network_requestmetrics_requests_total",
                     request="ApiVersions", version="3") == 5
        total = m["kafka_network_requestmetrics_totaltimems"]
        assert value(total, "kafka_network_requestmetrics_totaltimems_count",
                     request="ApiVersions", version="3") == 5
        inf = value(total, "kafka_network_requestmetrics_totaltimems_bucket", request="ApiVersions",
                    version="3", le="+Inf")
        assert inf == 5
        sizes = m["kafka_network_requestmetrics_responsebytes"]
        assert value(sizes, "kafka_network_requestmetrics_responsebytes_sum",
                     request="Metadata", version="12") > 0
        counts = [s for s in m["kafka_server_socket_server_metrics_connection_count"]
                  if all(s.labels.get(k) == v for k, v in open_connections.items())]
        assert sum(s.value for s in counts) >= 1
        for name in ("kafka_network_socketserver_networkprocessoravgidlepercent",
                     "kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent"):
            (sample,) = m[name]
            assert 0.0 <= sample.value <= 1.0
        assert value(m["kafka_network_requestchannel_requestqueuesize"],
                     "kafka_network_requestchannel_requestqueuesize", plane="data-plane") >= 0
        # This broker is the controller: its channel to itself has sent UpdateMetadata.
        rate = m["kafka_controller_controllerchannelmanager_requestrateandqueuetimems"]
        assert value(rate, "kafka_controller_controllerchannelmanager_requestrateandqueuetimems_count",
                     broker_id="1") >= 1
    # Shut down with the broker.
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2)
        raise AssertionError("the metrics endpoint outlived its broker")
    except OSError:
        pass


def test_no_endpoint_by_default(tmp_path):
    with running_broker(tmp_path) as broker:
        assert broker.metrics_server is None


def _create(c: Client, *names: str) -> list:
    R = create_topics.REQUEST
    body = R(timeout_ms=10000, topics=[R["topics"](name=n, num_partitions=1, replication_factor=1)
                                       for n in names])
    return [t.error_code for t in c.call(19, 7, body).topics]


def test_errors_count_every_code_a_response_carries_and_the_request_log_has_them(tmp_path):
    """Kafka's ErrorsPerSec counts the codes of each response's errorCounts(), NONE included and
    named as Kafka names them: a CreateTopics of three topics, one of which exists, counts NONE
    twice and TOPIC_ALREADY_EXISTS once; its request log line has errorCounts {"36": 1}."""
    logs = tmp_path / "requests"
    with running_broker(tmp_path / "data", metrics_port="0", request_log_dir=str(logs)) as broker:
        port = broker.metrics_server.port
        with Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as c:
            assert _create(c, "a") == [E.NONE]
            assert _create(c, "b", "a", "c") == [E.NONE, E.TOPIC_ALREADY_EXISTS, E.NONE]

        def errors() -> dict[str, float]:
            samples = scrape(port)["kafka_network_requestmetrics_errors"]
            return {s.labels["error"]: s.value for s in samples
                    if s.name == "kafka_network_requestmetrics_errors_total"
                    and s.labels["request"] == "CreateTopics"}

        # A response is counted once written: the last one may still be on its way.
        assert wait_for(lambda: errors() == {"NONE": 3, "TOPIC_ALREADY_EXISTS": 1})
        requests = scrape(port)["kafka_network_requestmetrics_requests"]
        assert value(requests, "kafka_network_requestmetrics_requests_total",
                     request="CreateTopics", version="7") == 2

        def created() -> list[dict]:
            return [x for x in request_log_lines(logs)
                    if x.get("requestHeader", {}).get("requestApiKeyName") == "CreateTopics"]

        assert wait_for(lambda: len(created()) == 2)
        first, second = sorted(created(), key=lambda x: x["requestHeader"]["correlationId"])
        assert (first["errorCode"], first["errorCounts"]) == (0, {})
        assert (second["errorCode"], second["errorCounts"]) == (0, {"36": 1})


def test_bucket_bounds_are_exact_and_the_process_metrics_are_served(tmp_path):
    """Every le label is its bucket's exact bound (2**i - 1 us in ms, 2**i - 1 bytes), with no
    float noise; and the process, platform and GC metrics of every Python exporter are there."""
    with running_broker(tmp_path, metrics_port="0") as broker:
        port = broker.metrics_server.port
        with Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as c:
            c.call(18, 3, api_versions.REQUEST(client_software_name="t", client_software_version="1"))
        assert wait_for(lambda: "request=\"ApiVersions\"" in scrape_text(port))
        text = scrape_text(port)
    m = {f.name: f.samples for f in text_string_to_metric_families(text)}
    for names, buckets, per_unit in ((TIMINGS, TIME_BUCKETS, 1000), (SIZES, SIZE_BUCKETS, 1)):
        for name in names:
            family = f"kafka_network_requestmetrics_{name.lower()}"
            les = [s.labels["le"] for s in m[family] if s.name == f"{family}_bucket"
                   and s.labels["request"] == "ApiVersions"]
            assert les[-1] == "+Inf" and len(les) == buckets + 1
            for i, le in enumerate(les[:-1]):
                assert Decimal(le) == Decimal(2**i - 1) / per_unit, (family, le)
                # No more significant digits than the bound has: "1.023", never "1.0230000000000001".
                assert len(Decimal(le).normalize().as_tuple().digits) <= len(str(2**i - 1)), (family, le)
    assert "1.0230000000000001" not in text and 'le="1.023"' in text
    for name in ("process_resident_memory_bytes", "process_virtual_memory_bytes", "process_open_fds",
                 "process_max_fds", "process_start_time_seconds"):
        (sample,) = m[name]
        assert sample.value > 0, name
    (cpu,) = m["process_cpu_seconds"]
    assert cpu.name == "process_cpu_seconds_total" and cpu.value > 0
    assert m["python_info"][0].labels["implementation"] == "CPython"
    assert any(s.name == "python_gc_collections_total" for s in m["python_gc_collections"])
