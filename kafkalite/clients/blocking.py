"""A blocking Kafka client for one peer, on kafkalite's own codec and framing (the same the
server uses): every connection a broker opens to another broker or to the controller (the
controller's RequestSendThreads, the replica fetchers, the lifecycle thread, ...). ``security``
says how to connect to the peer's listener (clients/security.py: TLS, SASL); PLAINTEXT by default."""

from __future__ import annotations

import socket
from typing import Any

from kafkalite.protocol import UNLIMITED_FRAME_SIZE, FrameDecoder

from .security import PLAINTEXT, ClientSecurity, connect, exchange


class BlockingClient:
    def __init__(self, host: str, port: int, client_id: str, timeout: float, strict: bool = True,
                 security: ClientSecurity = PLAINTEXT) -> None:
        """``strict``: refuse a response with bytes after its body (else ignored, as Kafka's
        clients ignore them: librdkafka's mock cluster sends one in flexible Metadata)."""
        self.host = host
        self.strict = strict
        self.port = port
        self.client_id = client_id
        self.timeout = timeout
        self.security = security
        self._sock: socket.socket | None = None
        self._decoder = FrameDecoder(UNLIMITED_FRAME_SIZE)
        self._correlation = 0

    @property
    def connected(self) -> bool:
        return self._sock is not None

    def connect(self) -> None:
        if self._sock is None:
            self._sock = connect(self.host, self.port, self.timeout, self.security, self.client_id)
            self._decoder = FrameDecoder(UNLIMITED_FRAME_SIZE)

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            try:
                # shutdown() first: it wakes a recv blocked in another thread, which close() alone
                # does not, so a send thread stops at once even when the peer never answers.
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def send_and_receive(self, api_key: int, version: int, body: Any) -> Any:
        """One request, its response (one in flight). Any error leaves the client closed."""
        self.connect()
        assert self._sock is not None
        self._correlation = (self._correlation + 1) & 0x7FFFFFFF
        corr = self._correlation
        try:
            return exchange(self._sock, self._decoder, corr, self.client_id, api_key, version, body,
                            self.strict, f"{self.host}:{self.port}")
        except BaseException:
            self.close()
            raise
