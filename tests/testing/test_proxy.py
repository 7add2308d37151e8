"""The TCP proxy a local cluster puts in front of a controller listener: bytes pass both ways,
``cut`` closes what it carries and refuses new connections, ``heal`` lets them through again, the
target may move; every thread ends with ``close``."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from kafkalite.local.proxy import TcpProxy


class Echo:
    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.threads: list[threading.Thread] = []
        self.conns: list[socket.socket] = []
        t = threading.Thread(target=self._accept, daemon=True)
        t.start()
        self.threads.append(t)

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.conns.append(conn)
            t = threading.Thread(target=self._echo, args=(conn,), daemon=True)
            t.start()
            self.threads.append(t)

    @staticmethod
    def _echo(conn: socket.socket) -> None:
        try:
            while data := conn.recv(65536):
                conn.sendall(data)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self) -> None:
        try:
            self.server.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.server.close()
        for c in self.conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for t in self.threads:
            t.join(5)


@pytest.fixture
def echo() -> Iterator[Echo]:
    e = Echo()
    yield e
    e.close()


def roundtrip(port: int, payload: bytes = b"ping") -> bytes:
    with socket.create_connection(("127.0.0.1", port), 2.0) as s:
        s.sendall(payload)
        got = b""
        while len(got) < len(payload):
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
        return got


def closed_by_peer(s: socket.socket) -> bool:
    try:
        return s.recv(1) == b""
    except (ConnectionResetError, TimeoutError):
        return True


def test_bytes_pass_both_ways(echo: Echo) -> None:
    proxy = TcpProxy(("127.0.0.1", echo.port))
    try:
        assert roundtrip(proxy.port) == b"ping"
        big = bytes(range(256)) * 4096  # 1 MiB: many chunks each way
        assert roundtrip(proxy.port, big) == big
        assert proxy.accepted == 2
    finally:
        proxy.close()


def test_cut_closes_connections_and_refuses_until_healed(echo: Echo) -> None:
    proxy = TcpProxy(("127.0.0.1", echo.port))
    try:
        held = socket.create_connection(("127.0.0.1", proxy.port), 2.0)
        held.settimeout(2.0)
        held.sendall(b"x")
        assert held.recv(1) == b"x"
        proxy.cut()
        assert proxy.is_cut and closed_by_peer(held)
        held.close()
        assert roundtrip(proxy.port) == b""  # accepted and closed at once
        assert proxy.refused == 1
        proxy.heal()
        assert roundtrip(proxy.port) == b"ping"
    finally:
        proxy.close()


def test_the_target_may_move_and_may_be_unknown(echo: Echo) -> None:
    proxy = TcpProxy(None)
    try:
        assert roundtrip(proxy.port) == b""
        proxy.target = ("127.0.0.1", echo.port)
        assert roundtrip(proxy.port) == b"ping"
        other = Echo()
        try:
            proxy.target = ("127.0.0.1", other.port)
            assert roundtrip(proxy.port) == b"ping" and len(other.conns) == 1
        finally:
            other.close()
    finally:
        proxy.close()


def test_close_ends_every_thread(echo: Echo) -> None:
    before = set(threading.enumerate())
    proxy = TcpProxy(("127.0.0.1", echo.port), name="closing-proxy")
    held = socket.create_connection(("127.0.0.1", proxy.port), 2.0)
    held.sendall(b"x")
    held.recv(1)
    proxy.close()
    held.close()
    assert not [t for t in set(threading.enumerate()) - before if t.name.startswith("closing-proxy")]
