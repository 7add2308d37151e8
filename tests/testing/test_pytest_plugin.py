"""The pytest plugin as a user gets it: installed with kafkalite (the ``pytest11`` entry point, no
conftest), its fixtures in a pytest run of their own, and nothing left behind when a test fails or
the run is interrupted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import entry_points

import pytest

from . import port_free

pytest_plugins = ["pytester"]

USES_EVERY_FIXTURE = '''
import pytest
from confluent_kafka import Producer


def deliver(servers, topic):
    got = []
    p = Producer({"bootstrap.servers": servers})
    p.produce(topic, b"x", on_delivery=lambda err, msg: got.append(err))
    assert p.flush(30) == 0
    return got[0]


@pytest.mark.kafkalite(2, topics=["orders"], settings={"num.partitions": "2"})
def test_marked_cluster(kafkalite_cluster, kafkalite_bootstrap_servers):
    assert len(kafkalite_cluster.nodes) == 2
    assert kafkalite_bootstrap_servers == kafkalite_cluster.bootstrap_servers
    assert deliver(kafkalite_bootstrap_servers, "orders") is None


def test_default_cluster(kafkalite_cluster):
    assert len(kafkalite_cluster.nodes) == 3 and kafkalite_cluster.storage == "memory"


def test_module_cluster_once(kafkalite_module_cluster, request):
    request.config.cache.set("kl/module", kafkalite_module_cluster.cluster_id)


def test_module_cluster_again(kafkalite_module_cluster, request):
    assert request.config.cache.get("kl/module", None) == kafkalite_module_cluster.cluster_id


@pytest.fixture(scope="session")
def shared(kafkalite_session_cluster_factory):
    return kafkalite_session_cluster_factory(1, topics=["shared"])


def test_session_factory(shared):
    assert deliver(shared.bootstrap_servers, "shared") is None


def test_factory(kafkalite_cluster_factory):
    one = kafkalite_cluster_factory(1)
    two = kafkalite_cluster_factory(2, storage="files")
    assert one.bootstrap_servers != two.bootstrap_servers and two.directory is not None
'''

LEAVES_NOTHING = '''
import json, os, signal
import pytest


@pytest.fixture
def record(kafkalite_cluster_factory):
    cluster = kafkalite_cluster_factory(2, storage="files")
    with open(os.environ["KL_RECORD"], "w") as f:
        json.dump({"directory": cluster.directory, "ports": cluster.ports}, f)
    return cluster


def test_fails(record):
    assert False, "a failing test"


def test_interrupted(record):
    os.kill(os.getpid(), signal.SIGINT)
'''


def test_the_plugin_is_registered_by_installing_kafkalite():
    names = {e.value for e in entry_points(group="pytest11")}
    assert "kafkalite.testing.pytest_plugin" in names


@pytest.mark.integration
def test_every_fixture_in_a_run_of_its_own(pytester):
    pytester.makepyfile(test_app=USES_EVERY_FIXTURE)
    result = pytester.runpytest_subprocess("-p", "no:randomly", timeout=240)
    result.assert_outcomes(passed=6)


@pytest.mark.integration
@pytest.mark.parametrize("test", ["test_fails", "test_interrupted"])
def test_nothing_is_left_after_a_failure_or_an_interrupt(pytester, tmp_path, test):
    pytester.makepyfile(test_leaves=LEAVES_NOTHING)
    record = tmp_path / "record.json"
    env = {**os.environ, "KL_RECORD": str(record)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           f"test_leaves.py::{test}"], cwd=pytester.path, env=env, capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == (1 if test == "test_fails" else 2), done.stdout + done.stderr
    seen = json.loads(record.read_text())
    assert not os.path.exists(seen["directory"])  # the cluster's files went with it
    assert all(port_free(p) for p in seen["ports"])  # and so did its listeners (and the process)
