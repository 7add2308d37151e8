"""The controller channel through a faulty network: a TCP proxy between the controller's
RequestSendThread and a real broker stalls, closes and resets the connection while a stream of
UpdateMetadata requests goes through. None is lost, none is reordered (a resend may repeat the
last one), every callback runs once in order, and the broker ends with the controller's state."""

from __future__ import annotations

import random
import threading

import pytest

from kafkalite.controller.channel_manager import ControllerChannelManager
from kafkalite.protocol.messages import metadata
from kafkalite_bench.tcp_proxy import TcpProxy
from tests.support.brokers import running_broker
from tests.support.wait import wait_for
from tests.support.wire_client import Client

from .test_channel_manager import update

pytestmark = pytest.mark.integration


TIMEOUT_MS = 400  # controller.socket.timeout.ms for the test: a long stall outlasts it


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with running_broker(tmp_path_factory.mktemp("channel-faults")) as b:
        yield b


def record_arrivals(broker, monkeypatch) -> list[str]:
    """The topic of each UpdateMetadata the broker applies, in the order it applies them (a spy
    around the real method, which still does the work)."""
    arrivals: list[str] = []
    rm = broker.replica_manager
    real = rm.update_metadata

    def spy(request, version):
        arrivals.extend(t.topic_name for t in request.topic_states)
        return real(request, version)

    monkeypatch.setattr(rm, "update_metadata", spy)
    return arrivals


FAULTS = ("short stall", "long stall", "close", "reset")


def inject(proxy: TcpProxy, fault: str, stall_over: threading.Event) -> None:
    if fault == "short stall":  # bytes delayed, under the socket timeout: no resend needed
        proxy.stall()
        stall_over.wait(TIMEOUT_MS / 4000)
        proxy.resume()
    elif fault == "long stall":  # past the timeout: the flow is cut and its bytes lost
        proxy.stall()
        stall_over.wait(2 * TIMEOUT_MS / 1000)
        proxy.resume(deliver=False)
    elif fault == "close":
        proxy.close_all()
    else:
        proxy.reset_all()


@pytest.mark.parametrize("seed", [1, 2])
def test_no_control_request_lost_or_reordered_through_stalls_closes_and_resets(broker, monkeypatch, seed):
    rng = random.Random(seed)
    arrivals = record_arrivals(broker, monkeypatch)
    base = broker.replica_manager.controller_epoch + 1
    count = 300
    answered: list[tuple[int, int]] = []
    all_answered = threading.Event()
    never = threading.Event()  # stall lengths are waits on an event nobody sets: bounded waits
    with TcpProxy(("127.0.0.1", broker.bound_port("INTERNAL"))) as proxy:
        manager = ControllerChannelManager(controller_id=0, socket_timeout_ms=TIMEOUT_MS)
        manager.startup({1: proxy.address})
        injected: list[str] = []
        try:
            for i in range(count):
                manager.send_request(1, 6, 8, update(base + i, f"t{seed}-{i:04d}"),
                                     lambda r, i=i: (answered.append((i, r.error_code)),
                                                     len(answered) == count and all_answered.set()))
            # A fault after every few answers, until all are in: faults tied to progress, so each
            # run injects about the same number whatever the machine's speed.
            mark = 0
            while not all_answered.is_set():
                mark += rng.randint(5, 25)
                if not wait_for(lambda m=mark: len(answered) >= m or all_answered.is_set(), timeout=30):
                    break
                if all_answered.is_set():
                    break
                fault = rng.choice(FAULTS)
                injected.append(fault)
                inject(proxy, fault, never)
            assert all_answered.wait(30), f"{len(answered)} of {count} answered after {injected}"
        finally:
            manager.shutdown()
    assert len(injected) >= 10 and set(injected) == set(FAULTS), injected
    assert proxy.cut >= 3
    # Every callback once, in order, each accepted (a reordered request would carry an older
    # controller epoch and be refused with STALE_CONTROLLER_EPOCH).
    assert answered == [(i, 0) for i in range(count)]
    # Arrivals: first arrivals in order with none missing. A copy may arrive again later: the
    # resend after a timeout, or the first copy still buffered in a connection the controller gave
    # up on, delivered after newer requests (the broker refuses it by its older controller epoch).
    names = [f"t{seed}-{i:04d}" for i in range(count)]
    mine = [a for a in arrivals if a.startswith(f"t{seed}-")]
    assert list(dict.fromkeys(mine)) == names
    # The broker's state is the controller's: every topic, served to a client.
    with Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as c:
        md = c.call(3, 12, metadata.REQUEST(topics=None))
    assert set(names) <= {t.name for t in md.topics}
