"""The pytest plugin: installed with kafkalite (entry point ``pytest11``), nothing to configure.

Fixtures (each an in-process ``kafkalite.testing.Cluster``, stopped after its scope):

- ``kafkalite_cluster``: one cluster per test; ``kafkalite_bootstrap_servers`` its address.
- ``kafkalite_module_cluster``: one cluster for a whole module.
- ``kafkalite_cluster_factory``: ``factory(brokers=3, topics=[...], settings={...})`` makes
  clusters, stopped after the test; ``kafkalite_session_cluster_factory`` the same, stopped at the
  end of the session, for fixtures of your own of any scope.

The marker ``@pytest.mark.kafkalite(brokers=3, topics=["orders"], settings={...},
broker_settings={2: {...}}, storage="memory")`` sets the arguments of ``kafkalite_cluster`` (on a
test or class) and of ``kafkalite_module_cluster`` (``pytestmark`` of the module).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

# The package loads Cluster on first use (PEP 562): every pytest run imports this plugin, and only
# a test that asks for a cluster pays for the broker's import.
from kafkalite import testing

if TYPE_CHECKING:
    from .cluster import Cluster

MARKER = "kafkalite"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}(brokers=3, topics=(), settings=None, broker_settings=None, "
                   "storage='memory'): the cluster of the kafkalite_cluster fixtures "
                   "(kafkalite.testing.Cluster's arguments)")


def _arguments(node: Any) -> dict[str, Any]:
    marker = node.get_closest_marker(MARKER)
    if marker is None:
        return {}
    if marker.args:
        return {"brokers": marker.args[0], **marker.kwargs}
    return dict(marker.kwargs)


class ClusterFactory:
    """Makes started clusters; ``stop_all`` stops each."""

    def __init__(self) -> None:
        self.clusters: list[Cluster] = []

    def __call__(self, brokers: int = 3, **kwargs: Any) -> Cluster:
        cluster = testing.Cluster(brokers, **kwargs)
        self.clusters.append(cluster)
        return cluster.start()

    def stop_all(self) -> None:
        while self.clusters:
            self.clusters.pop().stop()


@pytest.fixture
def kafkalite_cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    with testing.Cluster(**_arguments(request.node)) as cluster:
        yield cluster


@pytest.fixture
def kafkalite_bootstrap_servers(kafkalite_cluster: Cluster) -> str:
    return kafkalite_cluster.bootstrap_servers


@pytest.fixture(scope="module")
def kafkalite_module_cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    with testing.Cluster(**_arguments(request.node)) as cluster:
        yield cluster


def _factory() -> Iterator[ClusterFactory]:
    factory = ClusterFactory()
    try:
        yield factory
    finally:
        factory.stop_all()


@pytest.fixture
def kafkalite_cluster_factory() -> Iterator[Callable[..., Cluster]]:
    yield from _factory()


@pytest.fixture(scope="session")
def kafkalite_session_cluster_factory() -> Iterator[Callable[..., Cluster]]:
    yield from _factory()
