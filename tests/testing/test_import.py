"""What ``import kafkalite.testing`` costs: every pytest run imports its plugin (the ``pytest11``
entry point), so neither may load the broker, its metrics or its codec until a test asks for a
cluster. Checked in a fresh interpreter by the modules it loaded, not by a timing."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import kafkalite.testing
from kafkalite.metrics import prometheus

LIGHT = {"kafkalite", "kafkalite.testing", "kafkalite.testing.pytest_plugin"}
# Heavy, and none of them needed before a test asks for a cluster.
HEAVY = ("prometheus_client", "kafkalite.server", "kafkalite.protocol", "kafkalite.network",
         "kafkalite.storage", "kafkalite.controller", "kafkalite.raft", "kafkalite.metrics")


def _loaded(code: str) -> set[str]:
    code += "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          check=True)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_importing_the_package_and_its_plugin_loads_nothing_heavy():
    loaded = _loaded("import kafkalite.testing, kafkalite.testing.pytest_plugin")
    assert {m for m in loaded if m.split(".")[0] == "kafkalite"} == LIGHT
    assert not [m for m in loaded if m.startswith(HEAVY)]


def test_the_names_load_on_first_use():
    loaded = _loaded("import kafkalite.testing as t\nassert t.Cluster.__name__ == 'Cluster' and "
                     "t.Topic and t.FaultError and t.CapturedRequest\n"
                     "from kafkalite.testing import Cluster\nassert Cluster is t.Cluster")
    assert {"kafkalite.testing.cluster", "kafkalite.server.broker"} <= loaded


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="Clusterr"):
        kafkalite.testing.Clusterr  # noqa: B018
    assert {"Cluster", "Topic", "FaultError", "CapturedRequest"} <= set(dir(kafkalite.testing))


def test_the_cluster_imports_no_metrics_library_or_http_client():
    """prometheus_client loads at the first metric family or scrape (kafkalite/metrics/prometheus.py),
    the fault endpoint's HTTP client lives apart (kafkalite/local/fault_client.py)."""
    loaded = _loaded("import kafkalite.testing.cluster")
    assert "kafkalite.server.broker" in loaded
    assert not [m for m in loaded if m.startswith(("prometheus_client", "urllib.request", "wsgiref"))]


def test_the_stand_ins_call_prometheus_client():
    family = prometheus.GaugeMetricFamily("kafkalite_test", "A gauge.", value=1.5)
    assert type(family).__module__.startswith("prometheus_client") and family.samples[0].value == 1.5
    assert prometheus.CONTENT_TYPE_LATEST.startswith("text/plain")
    with pytest.raises(AttributeError):
        prometheus.Counter  # noqa: B018
