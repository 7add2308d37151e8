"""The prometheus_client names kafkalite uses, the library loaded at their first use: it imports
urllib.request, wsgiref and more (about 15 ms), which every process importing a broker would pay
(a test run's, for one), while only a metric family or a scrape needs it. The classes and
functions are stand-ins that load the library when first called; ``Metric`` is for annotations,
``CONTENT_TYPE_LATEST`` loads it when read (PEP 562)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prometheus_client import CONTENT_TYPE_LATEST as CONTENT_TYPE_LATEST
    from prometheus_client import CollectorRegistry as CollectorRegistry
    from prometheus_client import GCCollector as GCCollector
    from prometheus_client import PlatformCollector as PlatformCollector
    from prometheus_client import ProcessCollector as ProcessCollector
    from prometheus_client import generate_latest as generate_latest
    from prometheus_client.core import CounterMetricFamily as CounterMetricFamily
    from prometheus_client.core import GaugeMetricFamily as GaugeMetricFamily
    from prometheus_client.core import HistogramMetricFamily as HistogramMetricFamily
    from prometheus_client.core import Metric as Metric
    from prometheus_client.core import SummaryMetricFamily as SummaryMetricFamily


def _load(name: str) -> Any:
    import prometheus_client.core  # the first use: the point of this module

    found = getattr(prometheus_client.core, name, None)
    return found if found is not None else getattr(prometheus_client, name)


class _OnFirstCall:
    """Stands for one of prometheus_client's classes or functions, called as it would be."""

    __slots__ = ("_name", "_target")

    def __init__(self, name: str) -> None:
        self._name = name
        self._target: Any = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._target is None:
            self._target = _load(self._name)
        return self._target(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<prometheus_client.{self._name}, loaded on first call>"


if not TYPE_CHECKING:
    CollectorRegistry = _OnFirstCall("CollectorRegistry")
    GCCollector = _OnFirstCall("GCCollector")
    PlatformCollector = _OnFirstCall("PlatformCollector")
    ProcessCollector = _OnFirstCall("ProcessCollector")
    generate_latest = _OnFirstCall("generate_latest")
    CounterMetricFamily = _OnFirstCall("CounterMetricFamily")
    GaugeMetricFamily = _OnFirstCall("GaugeMetricFamily")
    HistogramMetricFamily = _OnFirstCall("HistogramMetricFamily")
    SummaryMetricFamily = _OnFirstCall("SummaryMetricFamily")


def __getattr__(name: str) -> Any:
    if name not in ("CONTENT_TYPE_LATEST", "Metric"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = _load(name)
    globals()[name] = value  # later look-ups skip the hook
    return value
