"""A TCP proxy a local cluster puts in front of a controller listener, to cut a controller off the
network and heal it again (a network partition between the quorum's voters).

``TcpProxy`` listens on a port of its own and passes every connection it accepts to ``target``
(host, port), bytes both ways, each direction on a thread of its own. ``cut`` closes every
connection it carries and refuses new ones (accepted and closed at once: the peer sees the
connection closed, as after a reset); ``heal`` lets new ones through again. The target may
change (a restarted node listens on another port) without the proxy's port changing, so the
voters' addresses in every node's settings stay valid.
"""

from __future__ import annotations

import logging
import socket
import threading

log = logging.getLogger("kafkalite.local.proxy")

CONNECT_TIMEOUT = 2.0
CHUNK = 65536


class TcpProxy:
    def __init__(self, target: tuple[str, int] | None = None, host: str = "127.0.0.1", port: int = 0,
                 name: str = "tcp-proxy") -> None:
        self.name = name
        self.target = target  # None: connections are refused until it is set
        self._server = socket.create_server((host, port))
        self.host, self.port = self._server.getsockname()[:2]
        self._lock = threading.Lock()
        self._cut = False
        self._closed = False
        self._sockets: set[socket.socket] = set()
        self._threads: set[threading.Thread] = set()
        self.accepted = 0  # connections passed through (for tests)
        self.refused = 0  # connections refused while cut or without a target
        self._acceptor = threading.Thread(target=self._accept_loop, name=f"{name}-acceptor", daemon=True)
        self._acceptor.start()

    @property
    def address(self) -> tuple[str, int]:
        return self.host, self.port

    @property
    def is_cut(self) -> bool:
        return self._cut

    def cut(self) -> None:
        """Close every connection through the proxy and refuse new ones until ``heal``."""
        with self._lock:
            self._cut = True
            sockets = list(self._sockets)
        for s in sockets:
            _close(s)

    def heal(self) -> None:
        with self._lock:
            self._cut = False

    def close(self, timeout: float = 5.0) -> None:
        """Stop listening, close every connection, join every thread."""
        with self._lock:
            self._closed = True
            sockets = list(self._sockets)
        _close(self._server)
        for s in sockets:
            _close(s)
        self._acceptor.join(timeout)
        with self._lock:
            threads = list(self._threads)
        for t in threads:
            t.join(timeout)

    def _accept_loop(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return  # closed
            with self._lock:
                closed, refuse, target = self._closed, self._cut or self.target is None, self.target
            if closed:
                _close(client)
                return
            if refuse or target is None:
                self.refused += 1
                _close(client)
                continue
            try:
                upstream = socket.create_connection(target, CONNECT_TIMEOUT)
            except OSError as e:
                log.debug("%s: cannot reach %s:%d: %s", self.name, *target, e)
                self.refused += 1
                _close(client)
                continue
            upstream.settimeout(None)
            with self._lock:
                if self._cut or self._closed:
                    _close(client)
                    _close(upstream)
                    continue
                self.accepted += 1
                self._sockets.update((client, upstream))
                for src, dst, way in ((client, upstream, "up"), (upstream, client, "down")):
                    t = threading.Thread(target=self._pump, args=(src, dst), name=f"{self.name}-{way}",
                                         daemon=True)
                    self._threads.add(t)
                    t.start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(CHUNK)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            _close(src)
            _close(dst)
            with self._lock:
                self._sockets.discard(src)
                self._sockets.discard(dst)
                self._threads.discard(threading.current_thread())


def _close(s: socket.socket) -> None:
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    s.close()
