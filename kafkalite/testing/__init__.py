"""kafkalite as the Kafka a test suite runs against: an in-process cluster of real brokers
(``Cluster``), with faults to inject, for any test runner; the pytest plugin
(``kafkalite.testing.pytest_plugin``, registered on install) builds its fixtures on it.
See docs/testing.md.

    from kafkalite.testing import Cluster

    with Cluster(3, topics=["orders"]) as cluster:
        run_my_app(cluster.bootstrap_servers)
"""

from __future__ import annotations

from kafkalite.server.faults.injector import CapturedRequest, FaultError

from .cluster import Cluster, Topic

__all__ = ["CapturedRequest", "Cluster", "FaultError", "Topic"]
