"""A whole broker in-process over loopback: ApiVersions, Metadata, ordering under pipelining,
many connections, graceful shutdown."""

from __future__ import annotations

import struct
import threading

import pytest

from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import api_versions, metadata
from kafkalite.server.apis import apis_for
from kafkalite.server.metadata_cache import PartitionInfo, TopicInfo
from tests.support.brokers import running_broker
from tests.support.wait import wait_for
from tests.support.wire_client import Client

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with running_broker(tmp_path_factory.mktemp("broker")) as b:
        yield b


def connect(broker, listener="PLAINTEXT") -> Client:
    return Client("127.0.0.1", broker.bound_port(listener))


def advertised(resp) -> dict[int, tuple[int, int]]:
    return {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}


@pytest.mark.parametrize("version", range(5))
def test_api_versions_every_version(broker, version):
    with connect(broker) as c:
        resp = c.call(18, version, api_versions.REQUEST(client_software_name="t",
                                                        client_software_version="1"))
    assert resp.error_code == 0
    assert advertised(resp) == {k: (v.low, v.high)
                                for k, v in apis_for("PLAINTEXT", False, advertised=True).items()}


def test_control_apis_advertised_only_on_the_privileged_listener(broker):
    with connect(broker, "INTERNAL") as c:
        internal = advertised(c.call(18, 3, api_versions.REQUEST()))
    with connect(broker, "PLAINTEXT") as c:
        external = advertised(c.call(18, 3, api_versions.REQUEST()))
    assert {4, 5, 6} <= internal.keys()
    assert not {4, 5, 6} & external.keys()


def test_unsupported_api_versions_version_gets_v0_error_body(broker):
    with connect(broker) as c:
        # A v7 request from a newer client: header v2, a body we cannot know.
        c.send_raw(struct.pack(">ihhih", 13, 18, 7, 42, 1) + b"x\x00" + b"\x00")
        frame = c.receive_frame()
        # Response header v0 (no tagged fields), then the v0 body: error 35, only key 18.
        corr, error, count, key, lo, hi = struct.unpack(">ihihhh", frame)
        assert (corr, error, count, key, lo, hi) == (42, E.UNSUPPORTED_VERSION, 1, 18, 0, 4)
        # The connection stays open: the client retries with a version we know.
        assert c.call(18, 3, api_versions.REQUEST()).error_code == 0


def _all_topics_request(version):
    return metadata.REQUEST(topics=[] if version == 0 else None)


@pytest.mark.parametrize("version", range(14))
def test_metadata_every_version_names_this_broker_and_the_controller(broker, version):
    with connect(broker) as c:
        resp = c.call(3, version, _all_topics_request(version))
    assert [(b.node_id, b.host, b.port) for b in resp.brokers] == [
        (1, "127.0.0.1", broker.bound_port("PLAINTEXT"))]
    if version >= 1:
        assert resp.controller_id == 1  # broker,controller reports itself
    if version >= 2:
        assert resp.cluster_id and len(resp.cluster_id) == 22


def test_metadata_brokers_use_the_listener_asked_on(broker):
    with connect(broker, "INTERNAL") as c:
        resp = c.call(3, 12, metadata.REQUEST(topics=None))
    assert [b.port for b in resp.brokers] == [broker.bound_port("INTERNAL")]


@pytest.fixture
def topics(broker):
    def install(snap):
        ps = {i: PartitionInfo(i, leader=1, leader_epoch=3, replicas=(1,), isr=(1,)) for i in range(3)}
        t = TopicInfo("orders", __import__("uuid").UUID(int=7), ps)
        return type(snap)(snap.cluster_id, snap.controller_id, snap.brokers, {"orders": t})

    before = broker.metadata_cache.snapshot
    broker.metadata_cache.update(install)
    yield
    broker.metadata_cache.update(lambda _: before)


def test_metadata_null_empty_named_and_unknown_topics(broker, topics):
    with connect(broker) as c:
        everything = c.call(3, 12, metadata.REQUEST(topics=None))
        nothing = c.call(3, 12, metadata.REQUEST(topics=[]))
        v0_all = c.call(3, 0, metadata.REQUEST(topics=[]))
        T = metadata.REQUEST["topics"]
        named = c.call(3, 9, metadata.REQUEST(topics=[T(name="orders"), T(name="nope")],
                                              allow_auto_topic_creation=False))
    assert [t.name for t in everything.topics] == ["orders"]
    assert nothing.topics == []
    assert [t.name for t in v0_all.topics] == ["orders"]
    orders, nope = named.topics
    assert (orders.error_code, len(orders.partitions)) == (0, 3)
    assert [p.leader_id for p in orders.partitions] == [1, 1, 1]
    assert [p.leader_epoch for p in orders.partitions] == [3, 3, 3]  # as the cache holds it
    assert (nope.name, nope.error_code) == ("nope", E.UNKNOWN_TOPIC_OR_PARTITION)
    assert everything.topics[0].topic_id.int == 7


def test_thousand_pipelined_requests_answered_in_order(broker):
    with connect(broker) as c:
        corrs = list(range(1, 1001))
        c.send_raw(b"".join(c.request_bytes(18, 3, api_versions.REQUEST(), corr) for corr in corrs))
        got = [c.receive(18, 3)[0] for _ in corrs]
    assert got == corrs


def test_two_hundred_connections_at_once(broker):
    # The broker's own connections (to its controller and back) stay open throughout; a previous
    # test's connection may still be closing, so the count may end below this, never above.
    baseline = broker.socket_server.quotas.total
    clients = [connect(broker) for _ in range(200)]
    try:
        for i, c in enumerate(clients):
            c.send(3, 12, metadata.REQUEST(topics=None), correlation_id=i)
        for i, c in enumerate(clients):
            corr, resp = c.receive(3, 12)
            assert corr == i and resp.brokers[0].node_id == 1
    finally:
        for c in clients:
            c.close()
    assert wait_for(lambda: broker.socket_server.quotas.total <= baseline)


def test_concurrent_clients_pipelining(broker):
    errors = []

    def worker(n):
        try:
            with connect(broker) as c:
                c.send_raw(b"".join(c.request_bytes(3, 12, metadata.REQUEST(topics=None), i)
                                    for i in range(50)))
                assert [c.receive(3, 12)[0] for _ in range(50)] == list(range(50))
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors and not any(t.is_alive() for t in threads)


def test_graceful_shutdown_answers_requests_already_taken(tmp_path):
    with running_broker(tmp_path, num_io_threads="1") as b:
        gate = threading.Event()
        # Metadata: ApiVersions would be answered on the Processor (network.processor.ANSWERED_HERE).
        original = b.apis.handlers[3]

        def slow(request):
            gate.wait(5)
            return original(request)

        b.apis.handlers[3] = slow
        with connect(b) as c:
            corr = c.send(3, 12, metadata.REQUEST(topics=[]))
            assert wait_for(lambda: b.socket_server.processors[0].has_requests_with_handlers
                            or any(p.has_requests_with_handlers for p in b.socket_server.processors))
            stopper = threading.Thread(target=b.shutdown)
            stopper.start()
            # Stopped accepting: a new connection is refused or closed at once.
            assert wait_for(lambda: not any(a.is_alive() for a in b.socket_server.acceptors.values()))
            gate.set()
            got, resp = c.receive(3, 12)
            assert got == corr and resp.topics == []
            stopper.join(15)
            assert not stopper.is_alive()
            assert c.closed_by_server()


def test_a_heartbeat_interval_not_below_the_session_timeout_is_warned_about(tmp_path, caplog):
    # Such a broker is fenced each time the controller checks: said once, at startup.
    with running_broker(tmp_path, **{"broker.heartbeat.interval.ms": "2000",
                                     "broker.session.timeout.ms": "1500"}):
        pass
    warned = [r for r in caplog.records if "is not below broker.session.timeout.ms" in r.getMessage()]
    assert len(warned) == 1 and warned[0].levelname == "WARNING"


def test_kafkas_default_heartbeat_and_session_are_not_warned_about(tmp_path, caplog):
    with running_broker(tmp_path):
        pass
    assert not [r for r in caplog.records if "broker.session.timeout.ms" in r.getMessage()]
