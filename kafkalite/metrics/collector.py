"""The broker's metrics in Prometheus form, read from the broker's own counters at scrape time
(nothing is pushed on the hot path). Names follow Kafka's JMX names the way the Prometheus JMX
exporter spells them (``kafka.network:type=RequestMetrics,name=TotalTimeMs`` becomes
``kafka_network_requestmetrics_totaltimems``); docs/metrics.md lists each with its JMX name.

The collector reads the broker's MetricsRegistry (registry.py), where each component registered
what it reports when it was built (components.py): it knows no component itself.

Idle and blocked percentages are over the time since the previous scrape, as Kafka's meters are
rates: the first scrape reports them since the component started.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # prometheus_client loads on first use (kafkalite/metrics/prometheus.py)
    from prometheus_client.core import Metric


from .registry import MetricsRegistry


class HasMetrics(Protocol):
    """Whatever holds a registry (a Broker: ``broker.metrics``)."""

    @property
    def metrics(self) -> MetricsRegistry: ...


class BrokerCollector:
    """A prometheus_client collector over one broker's MetricsRegistry (or what holds it)."""

    def __init__(self, source: MetricsRegistry | HasMetrics) -> None:
        self.registry = source if isinstance(source, MetricsRegistry) else source.metrics

    def collect(self) -> Iterator[Metric]:
        return self.registry.collect()
