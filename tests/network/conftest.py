"""A SocketServer on loopback with the test acting as the request handler, as Kafka's
SocketServerTest does: requests are taken from the RequestChannel by the test itself."""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import Iterator

import pytest
import trustme

from kafkalite.network.request_channel import Request, RequestChannel, SendResponse
from kafkalite.network.socket_server import SocketServer
from kafkalite.protocol import encode_response
from kafkalite.protocol.messages import api_versions
from kafkalite.server.apis import apis_for
from kafkalite.server.config import BrokerConfig

BASE = {
    "node.id": "0",
    "listeners": "PLAINTEXT://127.0.0.1:0",
    "log.dirs": "/tmp/kafkalite-test-unused",
    "num.network.threads": "1",
}


@contextlib.contextmanager
def socket_server(**overrides: str) -> Iterator[SocketServer]:
    props = dict(BASE)
    props.update({k.replace("_", "."): v for k, v in overrides.items()})
    server = SocketServer(BrokerConfig(props).socket_server_settings(), apis_for)
    server.startup()
    try:
        yield server
    finally:
        server.shutdown()
        assert not any(t.is_alive() for t in [*server.acceptors.values(), *server.processors])


@pytest.fixture
def server() -> Iterator[SocketServer]:
    with socket_server() as s:
        yield s


def take(channel: RequestChannel, timeout: float = 5.0) -> Request:
    request = channel.receive_request(timeout=timeout)
    assert isinstance(request, Request), "no request reached the channel in time"
    return request


def answer(channel: RequestChannel, request: Request) -> None:
    """Answer with an ApiVersions-shaped response carrying the request's correlation id."""
    body = api_versions.RESPONSE(error_code=0, api_keys=[])
    channel.send_response(SendResponse(request, encode_response(18, 0, request.correlation_id, body)))


API_VERSIONS_V0 = api_versions.REQUEST()


@pytest.fixture(scope="module")
def contexts() -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context with a certificate for 127.0.0.1, and a client context trusting its CA."""
    ca = trustme.CA()
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert("127.0.0.1").configure_cert(server)
    client = ssl.create_default_context()
    ca.configure_trust(client)
    return server, client
