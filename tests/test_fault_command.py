"""``kafkalite fault``: against an in-process test cluster's admin endpoint (every operation), and
against a running ``kafkalite cluster`` of broker processes (errors, kill and restart)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys

import pytest
from click.testing import CliRunner
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from kafkalite.cli import main
from kafkalite.local.settings import free_base_port
from kafkalite.testing import Cluster
from tests.support.broker_process import wait_exit

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def cluster():
    with Cluster(3, topics=[("orders", 3)]) as c:
        c.serve_admin()
        yield c


def fault(cluster, *args: str):
    result = CliRunner().invoke(main, ["fault", "--admin", f"127.0.0.1:{cluster.serve_admin()}", *args])
    return result.exit_code, result.output


def _deliver(servers: str, topic: str, partition: int = 0):
    got = []
    producer = Producer({"bootstrap.servers": servers, "retry.backoff.ms": 10})
    producer.produce(topic, b"v", partition=partition, on_delivery=lambda err, msg: got.append(err))
    assert producer.flush(30) == 0
    return got[0]


def test_errors_pending_and_clear(cluster):
    code, out = fault(cluster, "errors", "Produce", "NOT_LEADER_OR_FOLLOWER", "--count", "2", "--broker", "2")
    assert code == 0 and out == "", out  # nothing to say
    code, out = fault(cluster, "pending", "--broker", "2")
    assert json.loads(out) == {"2": [{"api": "Produce", "topic": None, "partition": None,
                                      "errors": [6, 6]}]}
    code, out = fault(cluster, "clear")
    assert code == 0 and json.loads(fault(cluster, "pending")[1]) == {"1": [], "2": [], "3": []}


def test_a_retriable_error_set_from_the_command_is_retried(cluster):
    leader = cluster.leader("orders", 0)
    assert fault(cluster, "errors", "Produce", "6", "--broker", str(leader))[0] == 0
    assert _deliver(cluster.bootstrap_servers, "orders") is None
    assert json.loads(fault(cluster, "pending", "--broker", str(leader))[1]) == {str(leader): []}


def test_partition_errors_rtt_drop_capture_and_versions(cluster):
    code, out = fault(cluster, "errors", "Fetch", "NOT_LEADER_OR_FOLLOWER", "--topic", "orders",
                      "--partition", "1")
    assert code == 0, out
    assert fault(cluster, "rtt", "5")[0] == 0
    assert all(b.faults.rtt_ms == 5 for b in cluster._live())
    assert fault(cluster, "drop", "--broker", "1")[0] == 0
    assert fault(cluster, "capture", "start")[0] == 0
    assert fault(cluster, "max-versions", "Produce=7", "--broker", "3")[0] == 0
    assert cluster.broker(3).faults.max_versions == {0: 7}
    assert _deliver(cluster.bootstrap_servers, "orders") is None
    code, out = fault(cluster, "capture", "stop")
    captured = json.loads(out)
    assert any(r["api_name"] == "Produce" for rs in captured.values() for r in rs)
    assert fault(cluster, "clear")[0] == 0
    assert all(b.faults.rtt_ms == 0 and not b.faults.max_versions for b in cluster._live())


def test_down_up_kill_restart_and_brokers(cluster):
    port = cluster.nodes[3].client_port
    assert fault(cluster, "down", "3")[0] == 0
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), 5):
        pass
    assert fault(cluster, "up", "3")[0] == 0
    socket.create_connection(("127.0.0.1", port), 5).close()
    assert fault(cluster, "kill", "3")[0] == 0
    assert json.loads(fault(cluster, "brokers")[1])["brokers"]["3"]["alive"] is False
    assert fault(cluster, "restart", "3")[0] == 0
    assert json.loads(fault(cluster, "brokers")[1])["brokers"]["3"]["alive"] is True


def test_refusals_say_why(cluster):
    code, out = fault(cluster, "errors", "NoSuchApi", "6")
    assert code == 1 and "unknown api 'NoSuchApi'" in out
    code, out = fault(cluster, "partition", "1")  # one controller: no quorum to partition
    assert code == 1 and "not a voter of a controller quorum" in out
    code, out = fault(cluster, "rtt", "5", "--broker", "7")
    assert code == 1 and "broker 7 is not running" in out
    code, out = CliRunner().invoke(main, ["fault", "--admin", "127.0.0.1:1", "brokers"]).exit_code, ""
    assert code == 1


def test_faults_of_a_running_kafkalite_cluster(tmp_path):
    base = free_base_port()
    proc = subprocess.Popen([sys.executable, "-m", "kafkalite", "cluster", "--brokers", "3", "--dir",
                             str(tmp_path), "--base-port", str(base)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    text = ""
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            text += line
            if "Ctrl-C stops" in line:
                break
        admin = re.search(r"kafkalite fault --admin (\S+)", text)
        assert admin, text

        def run(*args: str) -> str:
            done = subprocess.run([sys.executable, "-m", "kafkalite", "fault", "--admin", admin[1], *args],
                                  capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stderr
            return done.stdout

        servers = f"127.0.0.1:{base},127.0.0.1:{base + 2},127.0.0.1:{base + 4}"
        admin_client = AdminClient({"bootstrap.servers": servers})
        admin_client.create_topics([NewTopic("replicated", 1, 3)])["replicated"].result(30)
        run("errors", "Produce", "NOT_LEADER_OR_FOLLOWER", "--count", "2")
        assert _deliver(servers, "replicated") is None  # retried past the errors
        run("kill", "3")
        assert json.loads(run("brokers"))["brokers"]["3"]["alive"] is False
        assert _deliver(servers, "replicated") is None  # whoever leads now
        run("restart", "3")
        brokers = json.loads(run("brokers"))["brokers"]
        text += "".join(f" pid {b['pid']}" for b in brokers.values())  # the restarted one too
        assert brokers["3"]["alive"] is True
        proc.send_signal(signal.SIGTERM)
        assert wait_exit(proc, 60) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        for pid in re.findall(r"pid (\d+)", text):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
        if proc.stdout:
            proc.stdout.close()
