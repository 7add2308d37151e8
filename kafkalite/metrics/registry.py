"""One broker's metrics registry: each component registers what it reports when it is built and
removes it when it shuts down; the Prometheus collector (collector.py) reads the registry at each
scrape, never the broker's attributes.

A source is a callable returning metric families, read at scrape time (nothing is pushed on the
hot path: components keep plain counters and the source reads them). Several sources may return
a family of the same name (every purgatory returns PurgatorySize with its own ``delayedOperation``
label): the registry merges their samples into one family, as Prometheus needs each name once.

There is one registry per broker, handed down to the components as they are built (several
brokers share a process in tests); a component built without one registers in a registry of its
own that nobody reads.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # prometheus_client loads on first use (kafkalite/metrics/prometheus.py)
    from prometheus_client.core import Metric


log = logging.getLogger("kafkalite.metrics.registry")

MetricSource = Callable[[], Iterable["Metric"]]


class Registration:
    """What ``MetricsRegistry.register`` gives back: ``close()`` removes the source (idempotent)."""

    def __init__(self, registry: MetricsRegistry, key: str) -> None:
        self.registry = registry
        self.key = key

    def close(self) -> None:
        self.registry.unregister(self.key)


class MetricsRegistry:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sources: dict[str, MetricSource] = {}  # in registration order

    def register(self, key: str, source: MetricSource) -> Registration:
        """Add ``source`` under ``key`` (unique in this registry: "purgatory:Fetch")."""
        with self._lock:
            if key in self._sources:
                raise ValueError(f"metrics source {key!r} is registered already")
            self._sources[key] = source
        return Registration(self, key)

    def unregister(self, key: str) -> None:
        """Remove the source ``key``, if registered."""
        with self._lock:
            self._sources.pop(key, None)

    def keys(self) -> list[str]:
        """The registered sources' keys, in registration order."""
        with self._lock:
            return list(self._sources)

    def collect(self) -> Iterator[Metric]:
        """Every source's families, those of one name merged into the first of them. A source that
        fails is logged and left out of this scrape: the others are still reported."""
        with self._lock:
            sources = list(self._sources.items())
        families: dict[str, Metric] = {}
        for key, source in sources:
            try:
                got = list(source())
            except Exception:
                log.exception("Metrics source %s failed", key)
                continue
            for family in got:
                first = families.get(family.name)
                if first is None:
                    families[family.name] = family
                elif first.type != family.type:
                    log.error("Metrics source %s reports %s as a %s, already a %s: left out", key,
                              family.name, family.type, first.type)
                else:
                    first.samples.extend(family.samples)
        yield from families.values()
