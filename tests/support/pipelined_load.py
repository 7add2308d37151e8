"""Pipelined request load over many connections, every answer checked in order.

One thread drives every connection through a selector: each connection keeps up to ``in_flight``
requests sent ahead (numbered by increasing correlation ids) and checks that each response that
comes back carries the oldest id not yet answered, so a response lost, repeated or out of order
on any connection is an error. ``reconnect_every`` makes connections close (once all their
requests are answered) and reconnect, so that new connections keep arriving at the Acceptor.
"""

from __future__ import annotations

import collections
import selectors
import socket
import struct
import threading
from typing import Any

from kafkalite.protocol import UNLIMITED_FRAME_SIZE, FrameDecoder, encode_request
from kafkalite.protocol.messages import api_versions


class _Conn:
    __slots__ = ("answered", "dead", "decoder", "events", "expected", "out", "sent", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.out = bytearray()
        self.decoder = FrameDecoder(UNLIMITED_FRAME_SIZE)
        self.expected: collections.deque[int] = collections.deque()
        self.sent = 0
        self.answered = 0
        self.events = 0
        self.dead = False


class PipelinedLoad:
    def __init__(self, address: tuple[str, int], connections: int = 200, in_flight: int = 4,
                 reconnect_every: int = 0, api_key: int = 18, version: int = 0,
                 body: Any = None, client_id: str = "load") -> None:
        self.address = address
        self.connections = connections
        self.in_flight = in_flight
        self.reconnect_every = reconnect_every
        self.api_key, self.version = api_key, version
        self.body = api_versions.REQUEST() if body is None else body
        self.client_id = client_id
        self.errors: list[str] = []
        self.sent = 0
        self.answered = 0
        self.reconnects = 0
        self._next_corr = 0
        self._sending = True
        self._done = False
        self._selector = selectors.DefaultSelector()
        self._conns: list[_Conn] = []
        self._thread = threading.Thread(target=self._run, name="pipelined-load", daemon=True)

    # --- the test's side ------------------------------------------------------------------------

    def start(self) -> PipelinedLoad:
        for _ in range(self.connections):
            self._conns.append(self._connect())
        self._thread.start()
        return self

    def min_answered(self) -> int:
        """The fewest responses any current connection has had (progress on every connection)."""
        return min((c.answered for c in list(self._conns)), default=0)

    def stop(self, timeout: float = 30.0) -> bool:
        """Send nothing more, wait for every response still due (True if all came), close."""
        self._sending = False
        self._thread.join(timeout)
        finished = not self._thread.is_alive()
        self._done = True
        self._thread.join(5)
        for c in self._conns:
            c.sock.close()  # (again for a dead one: harmless)
        self._selector.close()
        return finished

    @property
    def outstanding(self) -> int:
        return sum(len(c.expected) for c in list(self._conns))

    # --- the driver thread ---------------------------------------------------------------------

    def _connect(self) -> _Conn:
        sock = socket.create_connection(self.address, timeout=10)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        conn = _Conn(sock)
        conn.events = selectors.EVENT_READ
        self._selector.register(sock, selectors.EVENT_READ, conn)
        return conn

    def _run(self) -> None:
        try:
            while not self._done:
                self._fill()
                if not self._sending and not any(c.expected or c.out for c in self._conns):
                    return
                for key, mask in self._selector.select(0.05):
                    conn = key.data
                    if mask & selectors.EVENT_READ:
                        self._read(conn)
                    if mask & selectors.EVENT_WRITE:
                        self._write(conn)
        except Exception as e:  # reported to the test, which fails on any error
            self.errors.append(f"load driver failed: {e!r}")

    def _fill(self) -> None:
        for i, conn in enumerate(self._conns):
            if conn.dead:
                continue
            if (self._sending and self.reconnect_every and conn.sent >= self.reconnect_every
                    and not conn.expected and not conn.out):
                self._selector.unregister(conn.sock)
                conn.sock.close()
                conn = self._conns[i] = self._connect()
                self.reconnects += 1
            while self._sending and len(conn.expected) < self.in_flight:
                self._next_corr += 1
                corr = self._next_corr
                conn.out += encode_request(self.api_key, self.version, corr, self.client_id, self.body)
                conn.expected.append(corr)
                conn.sent += 1
                self.sent += 1
            if conn.out:
                self._write(conn)

    def _write(self, conn: _Conn) -> None:
        try:
            n = conn.sock.send(conn.out)
        except BlockingIOError:
            n = 0
        except OSError as e:
            self._fail(conn, f"send failed: {e}")
            return
        del conn.out[:n]
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if conn.out else 0)
        if events != conn.events:
            conn.events = events
            self._selector.modify(conn.sock, events, conn)

    def _read(self, conn: _Conn) -> None:
        try:
            data = conn.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError as e:
            self._fail(conn, f"read failed: {e}")
            return
        if not data:
            self._fail(conn, "closed by the server")
            return
        conn.decoder.feed(data)
        for frame in conn.decoder.frames():
            corr = struct.unpack_from(">i", frame, 0)[0]
            want = conn.expected.popleft() if conn.expected else None
            if corr != want:
                self.errors.append(f"connection {conn.sock.getsockname()}: response {corr}, "
                                   f"expected {want}")
            conn.answered += 1
            self.answered += 1

    def _fail(self, conn: _Conn, why: str) -> None:
        self.errors.append(f"{why} with {len(conn.expected)} responses due")
        conn.expected.clear()
        conn.out.clear()
        try:
            self._selector.unregister(conn.sock)
        except (KeyError, ValueError):
            pass
        conn.sock.close()
        conn.dead = True  # not replaced: the test fails on the error anyway
