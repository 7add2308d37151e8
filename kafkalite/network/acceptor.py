"""The Acceptor thread of one listener (Kafka's SocketServer.Acceptor).

Binds the listen socket when created (so a port of 0 is known before start-up), then accepts,
configures each socket and hands it round-robin to the listener's Processors: each Processor is
tried once without blocking, and when every queue is full the Acceptor waits for room in the
next one, as Kafka's last try blocks. Time spent blocked there is measured
(AcceptorBlockedPercent).

The listener's Processors change while it runs (num.network.threads, see SocketServer): new ones
are added at the end, and the last ones removed before they retire, under the lock the
hand-over takes, so that no connection is given to a Processor once it is leaving.
"""

from __future__ import annotations

import logging
import selectors
import socket
import threading
import time

from .processor import Processor
from .quotas import ConnectionQuotas, TooManyConnections
from .waker import Waker

log = logging.getLogger("kafkalite.network.acceptor")

SELECT_TIMEOUT = 0.5  # Kafka's 500 ms


class Acceptor(threading.Thread):
    def __init__(
        self,
        listener: str,
        security_protocol: str,
        host: str,
        port: int,
        processors: list[Processor],
        quotas: ConnectionQuotas,
        *,
        send_buffer_bytes: int,  # socket.send.buffer.bytes
        recv_buffer_bytes: int,  # socket.receive.buffer.bytes
        backlog: int,  # socket.listen.backlog.size
        plane: str = "data-plane",
    ) -> None:
        self.listener = listener
        self.plane = plane
        self.security_protocol = security_protocol
        self.processors = processors  # changed under _lock only (add_processors, remove_processors)
        self._lock = threading.Lock()
        self.quotas = quotas
        self.send_buffer_bytes = send_buffer_bytes
        self._server = self._bind(host, port, recv_buffer_bytes, backlog)
        self.host, self.port = self._server.getsockname()[:2]
        super().__init__(
            name=f"{plane}-kafka-socket-acceptor-{listener}-{security_protocol}-{self.port}",
            daemon=True,
        )
        self._running = True
        self._waker = Waker()  # ends select() at once on shutdown
        self._next = 0
        self.blocked_ns = 0  # time spent waiting for a Processor's queue or a connection slot
        self.started = threading.Event()

    @staticmethod
    def _bind(host: str, port: int, recv_buffer_bytes: int, backlog: int) -> socket.socket:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if recv_buffer_bytes != -1:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, recv_buffer_bytes)
            sock.bind((host, port))
            sock.listen(backlog)
            sock.setblocking(False)
        except OSError:
            sock.close()
            raise
        return sock

    def run(self) -> None:
        self.started.set()
        selector = selectors.DefaultSelector()
        selector.register(self._server, selectors.EVENT_READ)
        selector.register(self._waker, selectors.EVENT_READ)
        try:
            while self._running:
                try:
                    events = selector.select(SELECT_TIMEOUT)
                    if any(key.fileobj is self._server for key, _ in events):
                        self._accept_ready()
                except Exception:
                    log.exception("Acceptor %s got an unexpected error", self.name)
        finally:
            selector.close()
            self._server.close()
            self._waker.close()

    def _accept_ready(self) -> None:
        while self._running:
            start = time.monotonic_ns()
            while not self.quotas.wait_for_slot(self.listener, SELECT_TIMEOUT):
                if not self._running:
                    return
            self.blocked_ns += time.monotonic_ns() - start
            try:
                sock, addr = self._server.accept()
            except (BlockingIOError, InterruptedError):
                return
            ip = addr[0]
            try:
                self.quotas.inc(self.listener, ip)
            except TooManyConnections as e:
                log.info("Rejected connection from %s, address already has the configured "
                         "maximum of %d connections", ip, e.limit)
                sock.close()
                continue
            try:
                self._configure(sock)
            except OSError as e:
                log.debug("Could not configure a connection from %s: %s", ip, e)
                sock.close()
                self.quotas.dec(self.listener, ip)
                continue
            self._assign(sock, ip)

    def _configure(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        if self.send_buffer_bytes != -1:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.send_buffer_bytes)

    def add_processors(self, processors: list[Processor]) -> None:
        """Processors (started) that take connections from now on."""
        with self._lock:
            self.processors.extend(processors)

    def remove_processors(self, count: int) -> list[Processor]:
        """Stop giving connections to the last ``count`` Processors (at least one stays); the
        removed ones, which the caller retires."""
        with self._lock:
            count = min(count, len(self.processors) - 1)
            if count <= 0:
                return []
            removed = self.processors[-count:]
            del self.processors[-count:]
            return removed

    def _assign(self, sock: socket.socket, ip: str) -> None:
        """Round robin: each Processor's queue is tried once without waiting, under the lock (so
        that none is given a connection once removed); when all are full, the Acceptor waits for
        room in the next one's queue without the lock (a resize never waits behind a full queue)
        and tries again."""
        while True:
            with self._lock:
                processors = self.processors
                for _ in range(len(processors)):
                    processor = processors[self._next % len(processors)]
                    self._next += 1
                    if processor.accept(sock, ip, may_block=False):
                        return
                waiting_on = processors[self._next % len(processors)]
            if not waiting_on.is_running:  # shutting down: nobody will take it
                sock.close()
                self.quotas.dec(self.listener, ip)
                return
            start = time.monotonic_ns()
            waiting_on.wait_for_room(SELECT_TIMEOUT)
            self.blocked_ns += time.monotonic_ns() - start

    def shutdown(self, timeout: float = 5.0) -> None:
        self._running = False
        if self.is_alive():
            self._waker.wake()
            self.join(timeout)
        else:
            self._server.close()
            self._waker.close()
