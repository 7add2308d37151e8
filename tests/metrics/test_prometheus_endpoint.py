"""The broker's Prometheus endpoint, scraped over HTTP from a running broker after real
requests: Kafka's request, network and controller metrics with the counts the requests made."""

from __future__ import annotations

import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from kafkalite.protocol.messages import api_versions, metadata

from ..kafka_client import Client, wait_for
from ..server.conftest import running_broker


def scrape(port: int) -> dict[str, list]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        text = r.read().decode()
    return {f.name: f.samples for f in text_string_to_metric_families(text)}


def found(samples: list, name: str, **labels: str) -> list[float]:
    return [s.value for s in samples
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())]


def value(samples: list, name: str, **labels: str) -> float:
    hits = found(samples, name, **labels)
    assert len(hits) == 1, (name, labels, samples)
    return hits[0]


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
