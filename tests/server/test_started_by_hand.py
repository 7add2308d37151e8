"""Brokers started by hand, as a user starts them (real ``kafkalite broker`` processes): the worked
example of docs/configuration.md, with Kafka's controller settings and no cluster.id anywhere."""

from __future__ import annotations

import re

import pytest

from kafkalite.protocol.messages import api_versions, metadata
from kafkalite.server import meta_properties
from tests.support.broker_process import BrokerProcess, free_port, wait_exit
from tests.support.wait import wait_for
from tests.support.wire_client import Client

pytestmark = pytest.mark.integration


def wait_line(broker: BrokerProcess, pattern: str, timeout: float = 30.0) -> str:
    """The first output line of ``broker`` matching ``pattern`` (a bounded poll of its output,
    ended early when the process has exited and its output is all read)."""

    def matching() -> list[str]:
        return [line for line in list(broker.lines) if re.search(pattern, line)]

    def settled() -> bool:
        return bool(matching()) or (broker.proc.poll() is not None and not broker._reader.is_alive())

    wait_for(settled, timeout=timeout)
    found = matching()
    if not found:
        raise AssertionError(f"no line matching {pattern!r}:\n" + "\n".join(broker.lines))
    return found[0]


def start(tmp_path, node_id: int, controller_port: int, *extra: str) -> BrokerProcess:
    return BrokerProcess(tmp_path / f"broker-{node_id}",
                         f"controller.quorum.bootstrap.servers=127.0.0.1:{controller_port}",
                         "broker.heartbeat.interval.ms=200", *extra, node_id=node_id)


@pytest.fixture(scope="module")
def by_hand(tmp_path_factory):
    """Broker 2 first (it waits for the controller), then broker 1 (the controller, with Kafka's
    CONTROLLER listener) and broker 3: the three form one cluster."""
    tmp = tmp_path_factory.mktemp("by-hand")
    cport = free_port()
    brokers: dict[int, BrokerProcess] = {}
    try:
        brokers[2] = start(tmp, 2, cport)
        wait_line(brokers[2], rf"broker 2 is waiting for the controller at 127\.0\.0\.1:{cport}")
        p1 = free_port()
        brokers[1] = BrokerProcess(
            tmp / "broker-1", f"listeners=PLAINTEXT://127.0.0.1:{p1},CONTROLLER://127.0.0.1:{cport}",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "controller.listener.names=CONTROLLER", f"controller.quorum.bootstrap.servers=127.0.0.1:{cport}",
            "broker.heartbeat.interval.ms=200", node_id=1)
        brokers[1].port = p1
        brokers[3] = start(tmp, 3, cport)
        for b in brokers.values():
            wait_line(b, r"is up: bootstrap.servers=")
        yield {"brokers": brokers, "tmp": tmp, "cport": cport}
    finally:
        for b in brokers.values():
            b.stop()


def test_brokers_started_by_hand_form_one_cluster(by_hand):
    brokers = by_hand["brokers"]
    ids = {meta_properties.stored_cluster_id([str(by_hand["tmp"] / f"broker-{n}")]) for n in (1, 2, 3)}
    assert len(ids) == 1 and None not in ids  # 2 and 3 adopted the controller's id and kept it
    for b in brokers.values():
        def metadata_of(port: int = b.port):
            with Client("127.0.0.1", port) as c:
                return c.call(3, 12, metadata.REQUEST(topics=[]))

        # Registered ("is up"); the controller's UpdateMetadata follows the registration.
        assert wait_for(lambda: {x.node_id for x in metadata_of().brokers} == {1, 2, 3}, timeout=20)
        snap = metadata_of()
        assert snap.controller_id == 1 and snap.cluster_id in ids
        # Clients never see the controller's own listener.
        assert by_hand["cport"] not in {x.port for x in snap.brokers}
    assert "waiting for the controller" not in "\n".join(brokers[1].lines)


def test_only_the_named_node_runs_a_controller(by_hand):
    brokers = by_hand["brokers"]
    assert any("Controller 1 started" in line for line in brokers[1].lines)
    for n in (2, 3):
        assert not any(re.search(r"Controller \d+ started", line) for line in brokers[n].lines)
    # Registration is served on the controller's listener, and nowhere on brokers 2 and 3.
    with Client("127.0.0.1", by_hand["cport"]) as c:
        keys = {k.api_key for k in c.call(18, 3, api_versions.REQUEST()).api_keys}
    assert {62, 63} <= keys
    with Client("127.0.0.1", brokers[2].port) as c:
        keys = {k.api_key for k in c.call(18, 3, api_versions.REQUEST()).api_keys}
    assert not {62, 63} & keys


def test_a_broker_of_another_cluster_stops_with_one_line(by_hand):
    tmp, cport = by_hand["tmp"], by_hand["cport"]
    other = meta_properties.new_cluster_id()
    meta_properties.write([str(tmp / "broker-4")], other, 4)
    stranger = start(tmp, 4, cport)
    try:
        assert wait_exit(stranger.proc, 30) == 1
        stranger._reader.join(5)
        text = "\n".join(stranger.lines)
        ours = meta_properties.stored_cluster_id([str(tmp / "broker-1")])
        error = [line for line in stranger.lines if line.startswith("Error:")]
        assert len(error) == 1, text
        assert other in error[0] and str(ours) in error[0]
        assert str(tmp / "broker-4" / "meta.properties") in error[0]
        assert "Traceback" not in text and "is up" not in text
    finally:
        stranger.stop()


def test_a_cluster_id_override_that_differs_from_meta_properties_is_one_line(by_hand):
    tmp = by_hand["tmp"]
    meta_properties.write([str(tmp / "broker-5")], meta_properties.new_cluster_id(), 5)
    wrong = meta_properties.new_cluster_id()
    proc = start(tmp, 5, by_hand["cport"], f"cluster.id={wrong}")
    try:
        assert wait_exit(proc.proc, 30) not in (None, 0)
        proc._reader.join(5)
        text = "\n".join(proc.lines)
        assert "Traceback" not in text
        errors = [line for line in proc.lines if line.startswith("Error:")]
        assert len(errors) == 1 and wrong in errors[0] and "meta.properties" in errors[0], text
    finally:
        proc.stop()
