"""kafkalite as the Kafka a test suite runs against: an in-process cluster of real brokers
(``Cluster``), with faults to inject, for any test runner; the pytest plugin
(``kafkalite.testing.pytest_plugin``, registered on install) builds its fixtures on it.
See docs/testing.md.

    from kafkalite.testing import Cluster

    with Cluster(3, topics=["orders"]) as cluster:
        run_my_app(cluster.bootstrap_servers)

The names below load on first use (PEP 562): every pytest run imports the plugin, and so this
package, while the broker behind ``Cluster`` costs a few hundred milliseconds to import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kafkalite.server.faults.injector import CapturedRequest, FaultError

    from .cluster import Cluster, Topic

__all__ = ["CapturedRequest", "Cluster", "FaultError", "Topic"]


def __getattr__(name: str) -> Any:
    # The PEP 562 hook: tests/test_layers.py allows the imports in it (and only in it).
    if name in ("Cluster", "Topic"):
        from . import cluster
        value = getattr(cluster, name)
    elif name in ("CapturedRequest", "FaultError"):
        from kafkalite.server.faults import injector
        value = getattr(injector, name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later look-ups skip the hook
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
