"""A minimal blocking Kafka client for tests: real frames over a real loopback socket."""

from __future__ import annotations

import socket
import struct
import time
from typing import Any

from kafkalite.protocol import UNLIMITED_FRAME_SIZE, FrameDecoder, decode_response, encode_request


class Client:
    def __init__(self, host: str, port: int, client_id: str | None = "test", timeout: float = 10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.client_id = client_id
        self.decoder = FrameDecoder(UNLIMITED_FRAME_SIZE)
        self._frames: list[bytes] = []
        self._corr = 0

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request_bytes(
        self, api_key: int, version: int, body: Any, correlation_id: int | None = None
    ) -> bytes:
        if correlation_id is None:
            self._corr += 1
            correlation_id = self._corr
        return encode_request(api_key, version, correlation_id, self.client_id, body)

    def send(self, api_key: int, version: int, body: Any, correlation_id: int | None = None) -> int:
        data = self.request_bytes(api_key, version, body, correlation_id)
        self.sock.sendall(data)
        return struct.unpack_from(">i", data, 8)[0]

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def receive_frame(self) -> bytes:
        while not self._frames:
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("closed by the server")
            self.decoder.feed(data)
            self._frames.extend(self.decoder.frames())
        return self._frames.pop(0)

    def receive(self, api_key: int, version: int) -> tuple[int, Any]:
        return decode_response(self.receive_frame(), api_key, version)

    def call(self, api_key: int, version: int, body: Any) -> Any:
        corr = self.send(api_key, version, body)
        got, response = self.receive(api_key, version)
        assert got == corr
        return response

    def closed_by_server(self, timeout: float = 5.0) -> bool:
        """True once the server has closed this connection (EOF or reset) within ``timeout``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                return False
            except (ConnectionResetError, BrokenPipeError):
                return True
            if not data:
                return True
        return False

