"""Kafka's SocketServerTest behaviours against kafkalite's SocketServer, over loopback sockets."""

from __future__ import annotations

import re
import struct

import pytest

from kafkalite.network.mute import MuteState
from kafkalite.network.request_channel import (
    CloseConnectionResponse,
    EndThrottlingResponse,
    NoOpResponse,
    Response,
    SendResponse,
    StartThrottlingResponse,
)
from kafkalite.protocol import encode_response
from kafkalite.protocol.messages import api_versions, update_metadata
from tests.support.wait import wait_for
from tests.support.wire_client import Client

from .conftest import API_VERSIONS_V0, answer, socket_server, take

pytestmark = pytest.mark.integration


def connect(server, listener="PLAINTEXT") -> Client:
    return Client("127.0.0.1", server.bound_port(listener))


def test_simple_request(server):
    with connect(server) as c:
        corr = c.send(18, 0, API_VERSIONS_V0)
        request = take(server.data_plane_request_channel)
        assert (request.api_key, request.api_version, request.correlation_id) == (18, 0, corr)
        assert request.header.client_id == "test"
        answer(server.data_plane_request_channel, request)
        got, body = c.receive(18, 0)
        assert got == corr and body.error_code == 0


def test_connection_id_format(server):
    with connect(server) as c:
        c.send(18, 0, API_VERSIONS_V0)
        request = take(server.data_plane_request_channel)
        local_port = c.sock.getsockname()[1]
        port = server.bound_port("PLAINTEXT")
        assert re.fullmatch(rf"127\.0\.0\.1:{port}-127\.0\.0\.1:{local_port}-0-\d+", request.connection_id)
        answer(server.data_plane_request_channel, request)


def test_too_big_request_is_rejected_before_its_body():
    with socket_server(socket_request_max_bytes="100") as server, connect(server) as c:
        c.send_raw(struct.pack(">i", 101))  # only the size: the body is never sent
        assert c.closed_by_server()
        assert wait_for(lambda: server.quotas.total == 0)


def test_requests_on_one_connection_are_handed_over_one_at_a_time(server):
    channel = server.data_plane_request_channel
    with connect(server) as c:
        corrs = [c.send(18, 0, API_VERSIONS_V0) for _ in range(3)]
        first = take(channel)
        # Muted while the first is with the handlers: the others stay buffered.
        assert channel.receive_request(timeout=0.3) is None
        answer(channel, first)
        second = take(channel)
        answer(channel, second)
        third = take(channel)
        answer(channel, third)
        assert [first.correlation_id, second.correlation_id, third.correlation_id] == corrs
        assert [c.receive(18, 0)[0] for _ in range(3)] == corrs


def test_graceful_close_delivers_requests_already_sent(server):
    channel = server.data_plane_request_channel
    c = connect(server)
    corrs = [c.send(18, 0, API_VERSIONS_V0) for _ in range(10)]
    c.close()
    for corr in corrs:
        request = take(channel)
        assert request.correlation_id == corr
        answer(channel, request)  # the peer is gone: the response is dropped, not an error
    assert wait_for(lambda: server.quotas.total == 0)


def test_no_op_response_unmutes(server):
    channel = server.data_plane_request_channel
    with connect(server) as c:
        c.send(18, 0, API_VERSIONS_V0)
        channel.send_response(NoOpResponse(take(channel)))
        corr = c.send(18, 0, API_VERSIONS_V0)
        request = take(channel)
        assert request.correlation_id == corr
        answer(channel, request)
        assert c.receive(18, 0)[0] == corr


def test_close_connection_response(server):
    channel = server.data_plane_request_channel
    with connect(server) as c:
        c.send(18, 0, API_VERSIONS_V0)
        channel.send_response(CloseConnectionResponse(take(channel)))
        assert c.closed_by_server()


def test_idle_connection_expires():
    with socket_server(connections_max_idle_ms="200") as server, connect(server) as c:
        assert wait_for(lambda: server.quotas.total == 1)
        assert c.closed_by_server(timeout=5)
        assert server.processors[0].expired_connections_killed == 1


def test_max_connections_per_ip():
    with socket_server(max_connections_per_ip="3") as server:
        clients = [connect(server) for _ in range(3)]
        extra = connect(server)
        try:
            assert extra.closed_by_server()
            assert server.quotas.get("127.0.0.1") == 3
            # Closing one frees a slot.
            clients.pop().close()
            assert wait_for(lambda: server.quotas.get("127.0.0.1") == 2)
            again = connect(server)
            clients.append(again)
            again.send(18, 0, API_VERSIONS_V0)
            answer(server.data_plane_request_channel, take(server.data_plane_request_channel))
            assert again.receive(18, 0)[1].error_code == 0
        finally:
            extra.close()
            for c in clients:
                c.close()


def test_max_connections_per_ip_overrides():
    with socket_server(max_connections_per_ip="1",
                       max_connections_per_ip_overrides="127.0.0.1:4") as server:
        clients = [connect(server) for _ in range(4)]
        extra = connect(server)
        try:
            assert extra.closed_by_server()
            assert server.quotas.get("127.0.0.1") == 4
        finally:
            extra.close()
            for c in clients:
                c.close()


def test_max_connections_per_ip_zero_with_override():
    with socket_server(max_connections_per_ip="0",
                       max_connections_per_ip_overrides="127.0.0.2:1") as server:
        c = connect(server)
        try:
            assert c.closed_by_server()
        finally:
            c.close()


def test_sockets_closed_on_shutdown():
    with socket_server() as server:
        c1, c2 = connect(server), connect(server)
        assert wait_for(lambda: server.quotas.total == 2)
    try:
        assert c1.closed_by_server() and c2.closed_by_server()
    finally:
        c1.close()
        c2.close()


@pytest.mark.parametrize("noop", [False, True], ids=["send", "noop"])
@pytest.mark.parametrize("done_before_response", [False, True], ids=["in-progress", "done"])
def test_throttling(server, noop, done_before_response):
    """Kafka's throttledChannelRequest cases: a throttled connection stays muted after its response
    until the throttle ends, whichever comes first."""
    channel = server.data_plane_request_channel
    processor = server.processors[0]
    with connect(server) as c:
        c.send(18, 0, API_VERSIONS_V0)
        request = take(channel)
        conn = processor.connections[request.connection_id]
        response: Response = (NoOpResponse(request) if noop else SendResponse(
            request, encode_response(18, 0, request.correlation_id,
                                     api_versions.RESPONSE(api_keys=[]))))
        channel.send_response(StartThrottlingResponse(request))
        if done_before_response:
            channel.send_response(EndThrottlingResponse(request))
            channel.send_response(response)
            assert wait_for(lambda: conn.mute_state is MuteState.NOT_MUTED)
        else:
            channel.send_response(response)
            assert wait_for(lambda: conn.mute_state is MuteState.MUTED_AND_THROTTLED)
            channel.send_response(EndThrottlingResponse(request))
            assert wait_for(lambda: conn.mute_state is MuteState.NOT_MUTED)
        if not noop:
            assert c.receive(18, 0)[1].error_code == 0


def test_unknown_response_kind_closes_only_that_connection(server):
    channel = server.data_plane_request_channel

    class Bogus(Response):
        pass

    with connect(server) as bad, connect(server) as good:
        bad.send(18, 0, API_VERSIONS_V0)
        channel.send_response(Bogus(take(channel)))
        assert bad.closed_by_server()
        good.send(18, 0, API_VERSIONS_V0)
        answer(channel, take(channel))
        assert good.receive(18, 0)[1].error_code == 0
        assert server.processors[0].is_alive()


@pytest.mark.parametrize("garbage", [
    b"\x00\x00\x00\x02\x00\x12",  # cut in the header
    struct.pack(">ihhi", 10, 18, 0, 1) + b"\x00\x07ab",  # client id longer than the frame
    struct.pack(">ihhi", 8, 9999, 0, 1),  # unknown api key
    struct.pack(">ihhi", 8, 3, 99, 1),  # unsupported Metadata version
    struct.pack(">i", -1),  # negative size
])
def test_bad_request_closes_only_that_connection(server, garbage):
    channel = server.data_plane_request_channel
    with connect(server) as bad, connect(server) as good:
        bad.send_raw(garbage)
        assert bad.closed_by_server()
        good.send(18, 0, API_VERSIONS_V0)
        answer(channel, take(channel))
        assert good.receive(18, 0)[1].error_code == 0
        assert all(p.is_alive() for p in server.processors)


@pytest.mark.parametrize("stage", ["_read", "_parse", "_write", "process_completed_sends"])
def test_exception_in_a_processor_stage_keeps_the_processor(server, stage, monkeypatch):
    """Kafka's exception cases (processCompletedReceive, processNewResponse, processCompletedSend,
    poll): the failure closes the connection concerned at most, and the Processor lives on."""
    channel = server.data_plane_request_channel
    processor = server.processors[0]
    after_request = stage in ("_write", "process_completed_sends")
    with connect(server) as victim:
        if after_request:
            victim.send(18, 0, API_VERSIONS_V0)
            request = take(channel)
        original = getattr(processor, stage)
        calls = []

        def boom(*args, **kwargs):
            if not calls:
                calls.append(1)
                raise RuntimeError(f"injected failure in {stage}")
            return original(*args, **kwargs)

        monkeypatch.setattr(processor, stage, boom)
        # The action that makes the Processor run the patched stage comes after the patch.
        if after_request:
            answer(channel, request)
        else:
            victim.send(18, 0, API_VERSIONS_V0)
        assert wait_for(lambda: calls)
        if stage != "process_completed_sends":
            assert victim.closed_by_server()
    monkeypatch.undo()
    assert processor.is_alive()
    with connect(server) as c:
        corr = c.send(18, 0, API_VERSIONS_V0)
        answer(channel, take(channel))
        assert c.receive(18, 0)[0] == corr


def test_control_plane_listener_has_its_own_channel():
    with socket_server(listeners="PLAINTEXT://127.0.0.1:0,CONTROL://127.0.0.1:0",
                       listener_security_protocol_map="PLAINTEXT:PLAINTEXT,CONTROL:PLAINTEXT",
                       control_plane_listener_name="CONTROL", num_network_threads="2") as server:
        assert server.control_plane_request_channel is not None
        assert server.control_plane_request_channel.queue_size == 20
        assert len(server.acceptors["CONTROL"].processors) == 1
        assert len(server.acceptors["PLAINTEXT"].processors) == 2
        assert next(iter(server.acceptors)) == "CONTROL"  # started first
        with connect(server, "CONTROL") as c:
            c.send(18, 0, API_VERSIONS_V0)
            request = take(server.control_plane_request_channel)
            assert request.listener == "CONTROL" and request.privileged
            assert server.data_plane_request_channel.request_queue_size == 0
            answer(server.control_plane_request_channel, request)
            assert c.receive(18, 0)[1].error_code == 0
        assert server.processors[0].name.startswith("control-plane-kafka-network-thread-0-CONTROL")


def _update_metadata() -> update_metadata.REQUEST:
    return update_metadata.REQUEST(controller_id=1, controller_epoch=1, broker_epoch=1)


def test_control_requests_only_on_the_privileged_listener():
    with socket_server(listeners="PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
                       listener_security_protocol_map="PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
                       inter_broker_listener_name="INTERNAL") as server:
        channel = server.data_plane_request_channel
        with connect(server, "PLAINTEXT") as client:
            client.send(6, 8, _update_metadata())
            assert client.closed_by_server()  # closed as for a disabled api
        with connect(server, "INTERNAL") as broker:
            broker.send(6, 8, _update_metadata())
            request = take(channel)
            assert (request.api_key, request.privileged, request.listener) == (6, True, "INTERNAL")
            channel.send_response(NoOpResponse(request))


def test_unsupported_api_versions_version_reaches_the_handlers(server):
    """Kafka answers it (with a v0 body) rather than closing: the request is handed over."""
    with connect(server) as c:
        c.send_raw(struct.pack(">ihhih", 11, 18, 99, 5, -1) + b"\x00")
        request = take(server.data_plane_request_channel)
        assert (request.api_version, request.correlation_id, request.body) == (99, 5, None)
        answer(server.data_plane_request_channel, request)


@pytest.mark.parametrize("version", [3, 4])
def test_client_information_from_api_versions(server, version):
    channel = server.data_plane_request_channel
    with connect(server) as c:
        c.send(18, version, api_versions.REQUEST(client_software_name="librdkafka",
                                                 client_software_version="2.16.0"))
        answer(channel, take(channel))
        c.receive(18, 0)
        c.send(18, 0, API_VERSIONS_V0)
        later = take(channel)
        assert (later.client_software_name, later.client_software_version) == ("librdkafka", "2.16.0")
        answer(channel, later)


def test_client_information_unknown_with_oldest_api_versions(server):
    channel = server.data_plane_request_channel
    with connect(server) as c:
        c.send(18, 0, API_VERSIONS_V0)
        request = take(channel)
        assert (request.client_software_name, request.client_software_version) == ("unknown", "unknown")
        answer(channel, request)


def test_a_full_request_queue_blocks_the_processor():
    """queued.max.requests is the back-pressure: nothing is dropped, the Processor waits."""
    with socket_server(queued_max_requests="2") as server:
        channel = server.data_plane_request_channel
        clients = [connect(server) for _ in range(5)]
        try:
            for c in clients:
                c.send(18, 0, API_VERSIONS_V0)
            assert wait_for(lambda: channel.request_queue_size == 2)
            seen = []
            for _ in range(5):
                request = take(channel)
                seen.append(request.connection_id)
                answer(channel, request)
            assert len(set(seen)) == 5
            for c in clients:
                assert c.receive(18, 0)[1].error_code == 0
        finally:
            for c in clients:
                c.close()


def test_new_connections_are_spread_round_robin():
    with socket_server(num_network_threads="3") as server:
        clients = [connect(server) for _ in range(6)]
        try:
            assert wait_for(lambda: [len(p.connections) for p in server.processors] == [2, 2, 2])
        finally:
            for c in clients:
                c.close()


def test_buffered_requests_are_served_without_waiting_for_socket_data(monkeypatch):
    """Kafka's testLatencyWithBufferedDataAndNoSocketData: requests read together are handed over
    as soon as the previous one is answered. With the poll timeout raised to a minute, any poll
    that blocked while a buffered request was ready would make ``take`` give up after 5 s."""
    monkeypatch.setattr("kafkalite.network.processor.POLL_TIMEOUT", 60.0)
    with socket_server() as server, connect(server) as c:
        channel = server.data_plane_request_channel
        corrs = list(range(100, 110))
        c.send_raw(b"".join(c.request_bytes(18, 0, API_VERSIONS_V0, corr) for corr in corrs))
        served = []
        for _ in corrs:
            request = take(channel)
            served.append(request.correlation_id)
            answer(channel, request)
        assert served == corrs
        assert [c.receive(18, 0)[0] for _ in corrs] == corrs


def test_max_connections_makes_the_acceptor_wait_for_a_slot():
    """Over max.connections the Acceptor stops accepting until a connection closes (Kafka's
    waitForConnectionSlot); the time it waits is counted as blocked."""
    with socket_server(max_connections="2") as server:
        acceptor = server.acceptors["PLAINTEXT"]
        first, second = connect(server), connect(server)
        third = connect(server)  # TCP-connected by the kernel, but not accepted yet
        try:
            assert wait_for(lambda: server.quotas.total == 2)
            blocked_before = acceptor.blocked_ns
            third.send(18, 0, API_VERSIONS_V0)
            assert server.data_plane_request_channel.receive_request(timeout=0.5) is None
            first.close()
            request = take(server.data_plane_request_channel)
            assert request.client_address == "127.0.0.1"
            answer(server.data_plane_request_channel, request)
            assert third.receive(18, 0)[1].error_code == 0
            # It waited at least through the 0.5 s in which the request did not arrive.
            assert acceptor.blocked_ns - blocked_before >= 400_000_000
            assert server.quotas.total == 2
        finally:
            for c in (first, second, third):
                c.close()


def test_exception_while_configuring_a_new_connection(server, monkeypatch):
    processor = server.processors[0]
    original = processor._register
    calls = []

    def boom(sock):
        if not calls:
            calls.append(1)
            raise RuntimeError("injected failure in configure_new_connections")
        return original(sock)

    monkeypatch.setattr(processor, "_register", boom)
    with connect(server) as victim:
        assert victim.closed_by_server()
    assert wait_for(lambda: server.quotas.total == 0)
    with connect(server) as c:
        corr = c.send(18, 0, API_VERSIONS_V0)
        answer(server.data_plane_request_channel, take(server.data_plane_request_channel))
        assert c.receive(18, 0)[0] == corr
    assert processor.is_alive()
