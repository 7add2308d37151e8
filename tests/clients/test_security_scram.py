"""SCRAM-SHA-256 and -512 on the client side of clients/security.py, against a small server in
the test that answers SaslHandshake and SaslAuthenticate with common/scram.py's ScramServer (the
same math the brokers' SCRAM listeners use): a good password authenticates and the next request
is served; a wrong one gets the server's refusal; a server that does not know the password (a
forged server signature) is refused by the client."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from kafkalite.clients import AuthenticationError, BlockingClient, ClientSecurity
from kafkalite.common import scram
from kafkalite.protocol import UNLIMITED_FRAME_SIZE, FrameDecoder, decode_request, encode_response
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.error_codes import SASL_AUTHENTICATION_FAILED
from kafkalite.protocol.messages import api_versions, sasl_authenticate, sasl_handshake

Tamper = Callable[[bytes], bytes]


@contextmanager
def scram_server(mechanism: str, password: str, tamper: Tamper = lambda b: b) -> Iterator[tuple[int, list]]:
    """One connection: handshake, the SCRAM exchange, then ApiVersions answered if authenticated.
    Yields (port, the api keys it saw)."""
    m = scram.MECHANISMS[mechanism]
    credential = m.credential(password, b"salt-of-the-test", 4096)
    listener = socket.create_server(("127.0.0.1", 0))
    seen: list[int] = []

    def serve() -> None:
        conn, _ = listener.accept()
        server = scram.ScramServer(m, lambda user: credential if user == "broker" else None)
        decoder = FrameDecoder(UNLIMITED_FRAME_SIZE)
        with conn:
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                decoder.feed(data)
                for payload in decoder.frames():
                    header, body = decode_request(payload)
                    seen.append(header.request_api_key)
                    key, version = header.request_api_key, header.request_api_version
                    if key == ApiKey.SASL_HANDSHAKE:
                        out = sasl_handshake.RESPONSE(error_code=0, mechanisms=[mechanism])
                    elif key == ApiKey.SASL_AUTHENTICATE:
                        try:
                            out = sasl_authenticate.RESPONSE(
                                error_code=0, auth_bytes=tamper(server.evaluate(bytes(body.auth_bytes))))
                        except scram.ScramError as e:
                            out = sasl_authenticate.RESPONSE(error_code=SASL_AUTHENTICATION_FAILED,
                                                             error_message=str(e), auth_bytes=b"")
                    else:
                        assert server.complete, "a request before authentication"
                        out = api_versions.RESPONSE(error_code=0, api_keys=[])
                    conn.sendall(bytes(encode_response(key, version, header.correlation_id, out)))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], seen
    finally:
        listener.close()
        thread.join(5)
        assert not thread.is_alive()


def security(mechanism: str, password: str) -> ClientSecurity:
    return ClientSecurity("SASL_PLAINTEXT", "INTERNAL", None, "https", mechanism, "broker", password)


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_authenticates_then_requests_are_served(mechanism):
    with scram_server(mechanism, "pw-1") as (port, seen):
        client = BlockingClient("127.0.0.1", port, "test", 5.0, security=security(mechanism, "pw-1"))
        try:
            assert client.send_and_receive(ApiKey.API_VERSIONS, 0, api_versions.REQUEST()).error_code == 0
        finally:
            client.close()
    assert seen == [ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE, ApiKey.SASL_AUTHENTICATE,
                    ApiKey.API_VERSIONS]


def test_a_wrong_password_is_refused_with_the_servers_message():
    with scram_server("SCRAM-SHA-256", "pw-1") as (port, _):
        client = BlockingClient("127.0.0.1", port, "test", 5.0, security=security("SCRAM-SHA-256", "pw-2"))
        with pytest.raises(AuthenticationError, match="Invalid client credentials") as info:
            client.connect()
        assert "pw-2" not in str(info.value)


def test_a_server_without_the_password_is_refused_by_the_client():
    def forge(token: bytes) -> bytes:  # the server-final message with another signature
        return b"v=" + b"A" * 43 + b"=" if token.startswith(b"v=") else token

    with scram_server("SCRAM-SHA-256", "pw-1", forge) as (port, seen):
        client = BlockingClient("127.0.0.1", port, "test", 5.0, security=security("SCRAM-SHA-256", "pw-1"))
        with pytest.raises(AuthenticationError, match="Invalid server signature"):
            client.connect()
    assert ApiKey.API_VERSIONS not in seen
