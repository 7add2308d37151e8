"""A real 3-broker cluster (processes) driven by real clients: kcat, confluent-kafka and
kafka-python. One cluster per module; each test leaves it as it found it."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess

import pytest

from kafkalite.local import processes as C
from kafkalite.local.settings import free_base_port
from kafkalite.protocol.messages import update_metadata as um
from tests.support.wait import wait_for
from tests.support.wire_client import Client

pytestmark = pytest.mark.integration


FAST = ("broker.heartbeat.interval.ms=200", "broker.session.timeout.ms=1500")




@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("cluster"))
    base = free_base_port()
    nodes = C.start(3, directory, base, FAST)
    try:
        assert C.wait_registered(nodes, 60), "cluster did not come up"
        yield {"nodes": nodes, "dir": directory, "base": base}
    finally:
        C.stop(nodes)


def bootstrap(cluster, node_id=None) -> str:
    nodes = cluster["nodes"]
    chosen = [n for n in nodes if node_id in (None, n.node_id)]
    return ",".join(f"127.0.0.1:{n.client_port}" for n in chosen)


def kcat_partitions(port: int) -> dict[tuple[str, int], tuple[int, str, str]]:
    out = subprocess.run([shutil.which("kcat") or "kcat", "-L", "-b", f"127.0.0.1:{port}", "-m", "10"],
                         capture_output=True, text=True, timeout=60).stdout
    parts, topic = {}, None
    for line in out.splitlines():
        if m := re.match(r'\s*topic "([^"]+)"', line):
            topic = m.group(1)
        elif m := re.match(r"\s*partition (\d+), leader (-?\d+), replicas: ([\d,]*), isrs: ([\d,]*)", line):
            parts[(topic, int(m.group(1)))] = (int(m.group(2)), m.group(3), m.group(4))
    return parts


def same_everywhere(cluster, check) -> bool:
    views = [kcat_partitions(n.client_port) for n in cluster["nodes"] if n.process.poll() is None]
    return all(v == views[0] for v in views) and check(views[0])


def test_confluent_kafka_creates_and_deletes(cluster):
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap(cluster, 2)})  # not the controller
    specs = [NewTopic("ck-a", 1, 1), NewTopic("ck-b", 50, 3), NewTopic("ck-c", 7, 2)]
    for f in admin.create_topics(specs, operation_timeout=20).values():
        f.result(30)
    expected = {"ck-a": (1, 1), "ck-b": (50, 3), "ck-c": (7, 2)}

    def created(view):
        for name, (count, rf) in expected.items():
            parts = [v for (t, _), v in view.items() if t == name]
            if len(parts) != count or any(len(r.split(",")) != rf or i != r or ld < 1
                                          for ld, r, i in parts):
                return False
        return True

    assert wait_for(lambda: same_everywhere(cluster, created), timeout=20)
    for f in admin.delete_topics(list(expected), operation_timeout=20).values():
        f.result(30)
    assert wait_for(lambda: same_everywhere(
        cluster, lambda v: not any(t in expected for t, _ in v)), timeout=20)


def test_kafka_python_creates_and_deletes_and_sees_errors(cluster):
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap(cluster, 3), request_timeout_ms=30000)
    try:
        admin.create_topics([NewTopic("kp-a", 3, 2)])
        # Created by the controller; the broker asked next may not have its UpdateMetadata yet.
        assert wait_for(lambda: "kp-a" in admin.list_topics(), timeout=20)

        def created(view):
            parts = [v for (t, _), v in view.items() if t == "kp-a"]
            return len(parts) == 3 and all(len(r.split(",")) == 2 and r == i for _, r, i in parts)

        assert wait_for(lambda: same_everywhere(cluster, created), timeout=20)
        from kafka.errors import InvalidReplicationFactorError, TopicAlreadyExistsError

        with pytest.raises(TopicAlreadyExistsError):
            admin.create_topics([NewTopic("kp-a", 3, 2)])
        with pytest.raises(InvalidReplicationFactorError):
            admin.create_topics([NewTopic("kp-b", 1, 4)])
        admin.delete_topics(["kp-a"])
        assert wait_for(lambda: "kp-a" not in admin.list_topics(), timeout=20)
        assert wait_for(lambda: same_everywhere(cluster, lambda v: not any(t == "kp-a" for t, _ in v)),
                        timeout=20)
    finally:
        admin.close()


def test_killed_broker_loses_leadership_and_comes_back_bounced(cluster):
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap(cluster, 1)})
    for f in admin.create_topics([NewTopic("failover", 6, 3)], operation_timeout=20).values():
        f.result(30)
    assert wait_for(lambda: same_everywhere(
        cluster, lambda v: sum(1 for t, _ in v if t == "failover") == 6), timeout=20)
    nodes = cluster["nodes"]
    victim = nodes[2]  # broker 3
    victim.process.send_signal(signal.SIGKILL)
    victim.process.wait(10)

    def moved(view):
        parts = [v for (t, _), v in view.items() if t == "failover"]
        return len(parts) == 6 and all(ld in (1, 2) and "3" not in isr.split(",") for ld, _, isr in parts)

    assert wait_for(lambda: same_everywhere(cluster, moved), timeout=30)
    # Restart it: it registers again (a bounced broker, higher epoch) and gets full metadata.
    epochs_before = [int(e) for e in re.findall(r"Broker 3 registered.*?epoch (\d+)",
                                                 open(f"{cluster['dir']}/broker-3.log").read())]
    cluster_id = open(f"{cluster['dir']}/cluster.id").read().strip()
    args = C.broker_args(3, cluster["dir"], cluster["base"], cluster_id, FAST)
    with open(f"{cluster['dir']}/broker-3.log", "ab") as out:
        victim.process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
    assert wait_for(lambda: kcat_partitions(victim.client_port).keys() >= {("failover", p) for p in range(6)},
                    timeout=30)
    epochs_after = [int(e) for e in re.findall(r"Broker 3 registered.*?epoch (\d+)",
                                                open(f"{cluster['dir']}/broker-3.log").read())]
    assert epochs_after[-1] > max(epochs_before)
    for f in admin.delete_topics(["failover"], operation_timeout=20).values():
        f.result(30)


def test_controller_restart_keeps_topics_and_fences_the_old_epoch(cluster):
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap(cluster)})
    for f in admin.create_topics([NewTopic("durable", 2, 2)], operation_timeout=20).values():
        f.result(30)
    nodes = cluster["nodes"]
    controller = nodes[0]
    controller.process.send_signal(signal.SIGTERM)
    controller.process.wait(20)
    cluster_id = open(f"{cluster['dir']}/cluster.id").read().strip()
    with open(f"{cluster['dir']}/broker-1.log", "ab") as out:
        args = C.broker_args(1, cluster["dir"], cluster["base"], cluster_id, FAST)
        controller.process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
    assert C.wait_registered(nodes, 60)
    assert wait_for(lambda: same_everywhere(
        cluster, lambda v: sum(1 for t, _ in v if t == "durable") == 2), timeout=30)
    epochs = [int(e) for e in re.findall(r"started with epoch (\d+)",
                                          open(f"{cluster['dir']}/broker-1.log").read())]
    assert len(epochs) >= 2 and epochs[-1] > epochs[-2]
    # A request carrying the previous controller epoch is refused by every broker.
    old = um.REQUEST(controller_id=1, controller_epoch=epochs[-2], broker_epoch=-1, live_brokers=[])
    assert wait_for(lambda: all(_update_metadata_error(n, old) == 11 for n in nodes), timeout=20)
    for f in admin.delete_topics(["durable"], operation_timeout=20).values():
        f.result(30)


def _update_metadata_error(node, request) -> int:
    with Client("127.0.0.1", node.internal_port) as c:
        return int(c.call(6, 8, request).error_code)


def _create(node, topics, validate_only=False, version=7):
    from kafkalite.protocol.messages import create_topics as ct

    R = ct.REQUEST
    with Client("127.0.0.1", node.client_port) as c:
        return c.call(19, version, R(timeout_ms=20000, validate_only=validate_only, topics=[
            R["topics"](name=name, num_partitions=p, replication_factor=rf) for name, p, rf in topics]))


def test_create_topics_is_forwarded_by_other_brokers(cluster):
    from kafkalite.protocol import error_codes as E

    # Broker 2 passes it to the controller (Kafka 4's brokers forward CreateTopics).
    response = _create(cluster["nodes"][1], [("elsewhere", 1, 1)])
    assert [(t.name, t.error_code, t.num_partitions) for t in response.topics] == [("elsewhere", E.NONE, 1)]
    again = _create(cluster["nodes"][2], [("elsewhere", 1, 1)])
    assert [(t.name, t.error_code) for t in again.topics] == [("elsewhere", E.TOPIC_ALREADY_EXISTS)]


def test_create_topics_validation_and_validate_only(cluster):
    from kafkalite.protocol import error_codes as E

    controller = cluster["nodes"][0]
    response = _create(controller, [
        ("", 1, 1), ("bad/name", 1, 1), ("zero", 0, 1), ("rf-zero", 1, 0), ("rf-four", 1, 4),
        ("dry-run", 4, 3)], validate_only=True)
    codes = {t.name: t.error_code for t in response.topics}
    assert codes == {"": E.INVALID_TOPIC_EXCEPTION, "bad/name": E.INVALID_TOPIC_EXCEPTION,
                     "zero": E.INVALID_PARTITIONS, "rf-zero": E.INVALID_REPLICATION_FACTOR,
                     "rf-four": E.INVALID_REPLICATION_FACTOR, "dry-run": E.NONE}
    dry = next(t for t in response.topics if t.name == "dry-run")
    assert (dry.num_partitions, dry.replication_factor) == (4, 3)
    with Client("127.0.0.1", controller.client_port) as c:
        from kafkalite.protocol.messages import metadata

        names = [t.name for t in c.call(3, 12, metadata.REQUEST(topics=None)).topics]
    assert "dry-run" not in names  # validate_only created nothing


def test_cluster_command_starts_reports_and_stops(tmp_path):
    import os
    import sys
    import urllib.request

    base = free_base_port()
    proc = subprocess.Popen([sys.executable, "-m", "kafkalite", "cluster", "--brokers", "2", "--dir",
                             str(tmp_path), "--base-port", str(base)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        lines = []
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if "Ctrl-C stops" in line:
                break
        text = "".join(lines)
        assert f"bootstrap.servers=127.0.0.1:{base},127.0.0.1:{base + 2}" in text
        pids = [int(p) for p in re.findall(r"pid (\d+)", text)]
        assert len(pids) == 2 and all(os.path.exists(f"/proc/{p}") for p in pids)
        # Each broker's Prometheus metrics, on the ports after the brokers' ports.
        for port in (base + 4, base + 5):
            assert f"metrics http://127.0.0.1:{port}/metrics" in text
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
                assert b"kafka_network_requestmetrics_requests_total" in r.read()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        assert "all brokers stopped" in proc.stdout.read()
        assert wait_for(lambda: not any(os.path.exists(f"/proc/{p}") and
                                         "Z" not in open(f"/proc/{p}/stat").read().split()[2]
                                         for p in pids), timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        if proc.stdout:
            proc.stdout.close()
