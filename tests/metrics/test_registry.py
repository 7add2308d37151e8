"""The broker's MetricsRegistry: sources registered by key, families of one name merged, a
failing source left out, and a component's registration removed at its shutdown."""

from __future__ import annotations

import pytest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from kafkalite.metrics.collector import BrokerCollector
from kafkalite.metrics.registry import MetricsRegistry
from kafkalite.server.purgatory import DelayedOperationPurgatory
from tests.support.brokers import running_broker


def gauge(name: str, label: str, v: float) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, "help", labels=["which"])
    family.add_metric([label], v)
    return family


def test_sources_are_read_at_each_collect_and_families_of_one_name_merged():
    registry = MetricsRegistry()
    counts = {"a": 1}
    registry.register("a", lambda: [gauge("g", "a", counts["a"])])
    registry.register("b", lambda: [gauge("g", "b", 2), CounterMetricFamily("c", "help", value=3)])
    families = {f.name: f for f in registry.collect()}
    assert sorted(families) == ["c", "g"]
    assert [(s.labels["which"], s.value) for s in families["g"].samples] == [("a", 1), ("b", 2)]
    counts["a"] = 5  # nothing cached: the next scrape reads the source again
    (g,) = [f for f in registry.collect() if f.name == "g"]
    assert g.samples[0].value == 5
    assert [f.name for f in BrokerCollector(registry).collect()] == ["g", "c"]


def test_a_key_is_registered_once_and_closing_removes_it():
    registry = MetricsRegistry()
    registration = registry.register("x", list)
    with pytest.raises(ValueError):
        registry.register("x", list)
    assert registry.keys() == ["x"]
    registration.close()
    registration.close()  # idempotent
    assert registry.keys() == []
    registry.register("x", list)  # free again


def test_a_failing_source_is_left_out_and_the_others_reported(caplog):
    registry = MetricsRegistry()

    def broken() -> list:
        raise RuntimeError("boom")

    registry.register("broken", broken)
    registry.register("fine", lambda: [gauge("g", "fine", 1)])
    assert [f.name for f in registry.collect()] == ["g"]
    assert "Metrics source broken failed" in caplog.text


def test_a_purgatory_registers_when_built_and_unregisters_at_shutdown():
    registry = MetricsRegistry()
    purgatory = DelayedOperationPurgatory("Produce", 7, registry)
    try:
        assert registry.keys() == ["purgatory:Produce"]
        by_name = {f.name: f.samples for f in registry.collect()}
        (size,) = by_name["kafka_server_delayedoperationpurgatory_purgatorysize"]
        assert (size.labels, size.value) == ({"delayedOperation": "Produce"}, 0)
    finally:
        purgatory.shutdown()
    assert registry.keys() == []
    assert list(registry.collect()) == []


@pytest.mark.integration
def test_a_broker_shut_down_leaves_nothing_in_its_registry(tmp_path):
    with running_broker(tmp_path) as broker:
        keys = broker.metrics.keys()
        for key in ("socket-server", "request-channel:data-plane", "purgatory:topic", "purgatory:Produce",
                    "purgatory:Fetch", "purgatory:Rebalance", "purgatory:Heartbeat", "replica-manager",
                    "group-coordinator", "controller", "topic-metrics", "request-handler-pool"):
            assert key in keys, key
    assert broker.metrics.keys() == []
