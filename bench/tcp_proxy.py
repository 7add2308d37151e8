"""A TCP proxy that injects network faults between two peers (for the fault tests and the
``faults`` bench scenario): pass bytes through, stall, close (FIN) or reset (RST) connections.

One thread forwards every connection pair with one selector, in the order bytes arrive; a
stall stops reading both sides of every pair (and accepting new ones), so bytes wait in the
kernels' buffers as they would behind a stalled link. ``resume(deliver=False)`` ends a stall by
cutting the stalled flows instead, as a link that never came back: their waiting bytes are lost.
"""

from __future__ import annotations

import selectors
import socket
import struct
import threading

_CHUNK = 65536


class TcpProxy:
    def __init__(self, target: tuple[str, int], host: str = "127.0.0.1") -> None:
        self.target = target
        self._listen = socket.create_server((host, 0))
        self._listen.setblocking(False)
        self.address = self._listen.getsockname()[:2]
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self._selector.register(self._listen, selectors.EVENT_READ, "accept")
        self._peers: dict[socket.socket, socket.socket] = {}
        self._lock = threading.Lock()
        self._commands: list[tuple[str, threading.Event]] = []
        self._stalled = False
        self._stopping = False
        self.connections = 0  # accepted so far
        self.cut = 0  # connection pairs closed or reset by a fault
        self._thread = threading.Thread(target=self._run, name="tcp-proxy", daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self.address[1])

    # --- faults (any thread) ------------------------------------------------------------------

    def stall(self) -> None:
        self._command("stall")

    def resume(self, deliver: bool = True) -> None:
        self._command("resume" if deliver else "resume-cut")

    def close_all(self) -> None:
        """Close every current connection pair (FIN both ways); what was not forwarded is lost."""
        self._command("close")

    def reset_all(self) -> None:
        """Reset every current connection pair (RST both ways)."""
        self._command("reset")

    def stop(self) -> None:
        self._command("stop")
        self._thread.join(10)
        assert not self._thread.is_alive(), "proxy thread did not stop"

    def __enter__(self) -> TcpProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _command(self, name: str) -> None:
        done = threading.Event()
        with self._lock:
            self._commands.append((name, done))
        self._wake_w.send(b"x")
        done.wait(10)  # applied before the caller goes on: faults happen when the test says

    # --- the forwarding thread ----------------------------------------------------------------

    def _run(self) -> None:
        try:
            while not self._stopping:
                for key, _ in self._selector.select(timeout=1.0):
                    if key.data is None:
                        self._apply_commands()
                    elif self._stalled:
                        continue  # unregistered by a command earlier in this batch
                    elif key.data == "accept":
                        self._accept()
                    else:
                        self._forward(key.fileobj)  # type: ignore[arg-type]
        finally:
            self._set_reading(True)
            for sock in list(self._peers):
                self._drop(sock, reset=False)
            for sock in (self._listen, self._wake_r, self._wake_w):
                sock.close()
            self._selector.close()

    def _apply_commands(self) -> None:
        try:
            self._wake_r.recv(4096)
        except BlockingIOError:
            pass
        with self._lock:
            commands, self._commands = self._commands, []
        for name, done in commands:
            if name == "stall":
                self._set_reading(False)
            elif name == "resume":
                self._set_reading(True)
            elif name == "resume-cut":
                self._set_reading(True)
                self._cut_all(reset=True)
            elif name == "close":
                self._cut_all(reset=False)
            elif name == "reset":
                self._cut_all(reset=True)
            elif name == "stop":
                self._stopping = True
            done.set()

    def _set_reading(self, on: bool) -> None:
        # Stalled sockets are unregistered (not just ignored): their waiting bytes would wake
        # the selector at once, forever. The listen socket too: new connections wait in its backlog.
        if on == (not self._stalled):
            return
        self._stalled = not on
        for sock in [self._listen, *self._peers]:
            if on:
                self._selector.register(sock, selectors.EVENT_READ,
                                        "accept" if sock is self._listen else "peer")
            else:
                self._selector.unregister(sock)

    def _accept(self) -> None:
        try:
            client, _ = self._listen.accept()
        except BlockingIOError:
            return
        try:
            upstream = socket.create_connection(self.target, timeout=5)
        except OSError:
            self._abort(client)
            return
        for s in (client, upstream):
            s.setblocking(False)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._peers[client], self._peers[upstream] = upstream, client
        self._selector.register(client, selectors.EVENT_READ, "peer")
        self._selector.register(upstream, selectors.EVENT_READ, "peer")
        self.connections += 1

    def _forward(self, sock: socket.socket) -> None:
        other = self._peers.get(sock)
        if other is None:
            return
        try:
            data = sock.recv(_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            self._drop(sock, reset=True)
            return
        if not data:
            self._drop(sock, reset=False)
            return
        try:
            other.settimeout(5)  # blocking for a moment: bytes forwarded whole and in order
            other.sendall(data)
            other.setblocking(False)
        except OSError:
            self._drop(sock, reset=True)

    def _cut_all(self, reset: bool) -> None:
        pairs = {min(a.fileno(), b.fileno()): a for a, b in self._peers.items()}
        for sock in pairs.values():
            self._drop(sock, reset)
            self.cut += 1

    def _drop(self, sock: socket.socket, reset: bool) -> None:
        other = self._peers.pop(sock, None)
        if other is not None:
            self._peers.pop(other, None)
        for s in (sock, other):
            if s is None:
                continue
            try:
                self._selector.unregister(s)
            except (KeyError, ValueError):
                pass
            if reset:
                self._abort(s)
            else:
                s.close()

    @staticmethod
    def _abort(sock: socket.socket) -> None:
        # SO_LINGER with a zero timeout: close() sends RST and discards unsent bytes.
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        sock.close()
