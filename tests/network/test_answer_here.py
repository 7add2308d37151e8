"""ApiVersions answered on the Processor (processor.ANSWERED_HERE, SocketServer.answer_here): the
same bytes as the handler's, in order with the connection's other requests, counted as before."""

from __future__ import annotations

import dataclasses
import struct

import pytest

from kafkalite.network.request_channel import NoOpResponse, Request, Response
from kafkalite.protocol import ApiKey
from kafkalite.protocol.messages import api_versions, metadata
from kafkalite.server.apis import SERVED_BY_KEY, apis_for
from kafkalite.server.handlers.api_versions import ApiVersionsApis
from kafkalite.server.kafka_apis import KafkaApis
from tests.support.wait import wait_for
from tests.support.wire_client import Client

from .conftest import answer, socket_server, take

pytestmark = pytest.mark.integration

TWO_LISTENERS = dict(listeners="PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
                     listener_security_protocol_map="PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
                     inter_broker_listener_name="INTERNAL")


class Recorder:
    """KafkaApis.handle_here over the broker's ApiVersions handler, keeping each request it was
    given (a copy: what the handler thread would have been handed)."""

    def __init__(self) -> None:
        versions = ApiVersionsApis(lambda name, privileged: apis_for(name, privileged, advertised=True))
        self.apis = KafkaApis(versions, served=[SERVED_BY_KEY[ApiKey.API_VERSIONS]])
        self.requests: list[Request] = []
        self.hand_over = False  # answer None: the request goes to the handlers after all

    def __call__(self, request: Request) -> Response | None:
        self.requests.append(dataclasses.replace(request))
        return None if self.hand_over else self.apis.handle_here(request)

    def handler_bytes(self, request: Request) -> bytes:
        response = self.apis.handle(request)
        return bytes(response.payload)  # type: ignore[union-attr]


def frame(client: Client) -> bytes:
    payload = client.receive_frame()
    return struct.pack(">i", len(payload)) + payload


def request_for(version: int, client: Client, correlation_id: int) -> bytes:
    body = api_versions.REQUEST(client_software_name="kafkalite-test", client_software_version="1")
    return client.request_bytes(18, version, body, correlation_id)


@pytest.mark.parametrize("listener", ["PLAINTEXT", "INTERNAL"])
def test_every_version_is_answered_here_with_the_handlers_bytes(listener):
    recorder = Recorder()
    with socket_server(**TWO_LISTENERS) as server:
        server.answer_here(recorder)
        served = apis_for(listener, listener == "INTERNAL")[ApiKey.API_VERSIONS]
        with Client("127.0.0.1", server.bound_port(listener)) as c:
            for version in range(served.low, served.high + 1):
                c.send_raw(request_for(version, c, 100 + version))
                got = frame(c)
                request = recorder.requests[-1]
                assert (request.api_version, request.correlation_id, request.listener) == (
                    version, 100 + version, listener)
                assert got == recorder.handler_bytes(request)
            # A version it does not know: the v0 UNSUPPORTED_VERSION answer, here too.
            c.send_raw(struct.pack(">ihhih", 11, 18, 99, 7, -1) + b"\x00")
            got = frame(c)
            request = recorder.requests[-1]
            assert (request.api_version, request.body) == (99, None)
            assert got == recorder.handler_bytes(request)
        assert server.data_plane_request_channel.request_queue_size == 0
        # Nothing reached the handlers; every answer counted as handed over and taken back.
        # Nothing reached the handlers; every answer counted as handed over and taken back, and
        # in the request metrics once its send completed.
        p = next(p for p in server.processors if p.listener == listener)
        count = served.high - served.low + 2
        assert p.requests_handed_over == p.answers_taken == count
        assert wait_for(lambda: sum(s.count for s in p.request_metrics.stats.values()) == count)
        assert p.request_metrics.stats[(18, 99)].errors == {35: 1}  # UNSUPPORTED_VERSION


def test_the_listeners_answers_differ():
    """Each listener answers its own table (the privileged one serves the controller's apis)."""
    recorder = Recorder()
    with socket_server(**TWO_LISTENERS) as server:
        server.answer_here(recorder)
        answers = []
        for listener in ("PLAINTEXT", "INTERNAL"):
            with Client("127.0.0.1", server.bound_port(listener)) as c:
                answers.append(c.call(18, 3, api_versions.REQUEST()))
        keys = [{k.api_key for k in a.api_keys} for a in answers]
        assert keys[0] < keys[1]


def test_pipelined_requests_keep_their_order():
    """Metadata, ApiVersions, Metadata sent at once on one connection: the ApiVersions is not
    answered while the first Metadata is with the handlers, and the answers come in order."""
    recorder = Recorder()
    with socket_server() as server:
        server.answer_here(recorder)
        channel = server.data_plane_request_channel
        with Client("127.0.0.1", server.bound_port("PLAINTEXT")) as c:
            md = metadata.REQUEST(topics=[])
            c.send_raw(c.request_bytes(3, 1, md, 1) + request_for(3, c, 2) + c.request_bytes(3, 1, md, 3))
            first = take(channel)
            assert first.correlation_id == 1
            assert recorder.requests == []  # the connection is muted while the first is out
            answer(channel, first)
            assert struct.unpack_from(">i", c.receive_frame())[0] == 1
            assert struct.unpack_from(">i", c.receive_frame())[0] == 2  # answered here
            third = take(channel)
            assert third.correlation_id == 3
            answer(channel, third)
            assert struct.unpack_from(">i", c.receive_frame())[0] == 3
        assert [r.correlation_id for r in recorder.requests] == [2]


def test_an_answer_of_none_hands_the_request_over():
    """While a test's faults are active KafkaApis.handle_here answers None: the handlers get it."""
    recorder = Recorder()
    recorder.hand_over = True
    with socket_server() as server:
        server.answer_here(recorder)
        channel = server.data_plane_request_channel
        with Client("127.0.0.1", server.bound_port("PLAINTEXT")) as c:
            corr = c.send(18, 3, api_versions.REQUEST())
            request = take(channel)
            assert request.correlation_id == corr
            channel.send_response(NoOpResponse(request))
            p = server.processors[0]
            assert wait_for(lambda: p.answers_taken == p.requests_handed_over == 1)


def test_processors_added_later_answer_here_too():
    recorder = Recorder()
    with socket_server() as server:
        server.answer_here(recorder)
        server.resize_processors("PLAINTEXT", 2)
        assert all(p.answer_here is recorder for p in server.processors)


def test_faults_make_handle_here_hand_over():
    recorder = Recorder()

    class Active:
        active = True

    recorder.apis.faults = Active()  # type: ignore[assignment]
    request = Request(processor=0, connection_id="c", listener="PLAINTEXT", security_protocol="PLAINTEXT",
                      header=None, body=None, size=0, client_address="127.0.0.1",
                      client_software_name="x", client_software_version="1", privileged=False)
    assert recorder.apis.handle_here(request) is None
