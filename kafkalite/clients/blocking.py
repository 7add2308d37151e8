"""A blocking Kafka client for one peer, on kafkalite's own codec and framing (the same the
server uses): the controller's RequestSendThreads and the brokers' lifecycle thread use it."""

from __future__ import annotations

import socket
from typing import Any

from kafkalite.protocol import UNLIMITED_FRAME_SIZE, FrameDecoder, decode_response, encode_request


class BlockingClient:
    def __init__(self, host: str, port: int, client_id: str, timeout: float, strict: bool = True) -> None:
        """``strict``: refuse a response with bytes after its body (else ignored, as Kafka's
        clients ignore them: librdkafka's mock cluster sends one in flexible Metadata)."""
        self.host = host
        self.strict = strict
        self.port = port
        self.client_id = client_id
        self.timeout = timeout
        self._sock: socket.socket | None = None
        self._decoder = FrameDecoder(UNLIMITED_FRAME_SIZE)
        self._correlation = 0

    @property
    def connected(self) -> bool:
        return self._sock is not None

    def connect(self) -> None:
        if self._sock is None:
            sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._sock = sock
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
            self._sock.sendall(encode_request(api_key, version, corr, self.client_id, body))
            while True:
                for payload in self._decoder.frames():
                    got, response = decode_response(payload, api_key, version, self.strict)
                    if got != corr:
                        raise ConnectionError(f"correlation id {got} does not match {corr}")
                    return response
                data = self._sock.recv(65536)
                if not data:
                    raise ConnectionError(f"{self.host}:{self.port} closed the connection")
                self._decoder.feed(data)
        except BaseException:
            self.close()
            raise
