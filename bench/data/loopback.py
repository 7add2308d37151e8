"""The loopback ceiling for a consumer: a sender process puts a file (in the page cache) on a TCP
connection over loopback as fast as it can, 1 MiB a call, and the client reads it with
``recv_into`` into a reused buffer, as the raw Fetch reader does. ``sendfile`` is the ceiling a
broker's zero-copy read path can reach; ``copy`` (``pread`` into Python bytes, then ``sendall``)
is the least a broker that copies records through Python pays: the difference is what sendfile
buys on the raw read path, measured without a broker.
Run the sender as ``python -m kafkalite_bench.data.loopback PORT FILE sendfile|copy``."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator

from . import servers
from .wire import Throughput

CHUNK = 1 << 20
MODES = ("sendfile", "copy")


def send(port: int, path: str, mode: str) -> None:
    """Serve one connection: the file over and over until the reader closes it."""
    listener = socket.create_server((servers.HOST, port))
    conn, _ = listener.accept()
    listener.close()
    size = os.path.getsize(path)
    fd = os.open(path, os.O_RDONLY)
    pos = 0
    try:
        while True:
            n = min(CHUNK, size - pos)
            if mode == "sendfile":
                pos += os.sendfile(conn.fileno(), fd, pos, n)
            else:
                conn.sendall(os.pread(fd, n, pos))
                pos += n
            if pos >= size:
                pos = 0
    except (BrokenPipeError, ConnectionResetError):
        pass
    finally:
        os.close(fd)
        conn.close()


def receive(port: int, seconds: float, buffer_bytes: int = 8 << 20) -> Throughput:
    """Read from the sender for ``seconds`` (after a short warm-up): bytes received per second."""
    sock = socket.create_connection((servers.HOST, port), timeout=30)
    buf = bytearray(buffer_bytes)
    view = memoryview(buf)
    recv_into = sock.recv_into
    try:
        warm = time.perf_counter() + min(0.5, seconds / 4)
        while time.perf_counter() < warm:
            recv_into(view)
        received = calls = 0
        start = time.perf_counter()
        deadline = start + seconds
        while True:
            for _ in range(64):
                received += recv_into(view)
            calls += 64
            if time.perf_counter() >= deadline:
                break
        return Throughput(calls, received, time.perf_counter() - start)
    finally:
        view.release()
        sock.close()


@contextlib.contextmanager
def data_file(size: int) -> Iterator[str]:
    """A file of ``size`` bytes, written now (so it is in the page cache), removed afterwards."""
    fd, path = tempfile.mkstemp(prefix="kafkalite-bench-loopback-")
    try:
        block = os.urandom(CHUNK)
        for _ in range(max(1, size // CHUNK)):
            os.write(fd, block)
        os.close(fd)
        yield path
    finally:
        os.unlink(path)


@contextlib.contextmanager
def sender(path: str, mode: str, pin: bool) -> Iterator[tuple[int, int]]:
    """A sender process (on the server's core) for ``path``; yields its port and pid."""
    port = servers.free_port()
    log = tempfile.NamedTemporaryFile(prefix="kafkalite-bench-loopback-", suffix=".log", delete=False)
    log.close()
    proc = servers._popen([sys.executable, "-m", "kafkalite_bench.data.loopback", str(port), path, mode],
                          log.name, pin and servers.pinning())
    try:
        wait_listening(proc, port, log.name)
        yield port, proc.pid
    finally:
        servers._stop(proc)
        os.unlink(log.name)


def wait_listening(proc: subprocess.Popen, port: int, log_path: str, timeout: float = 30.0) -> None:
    """Until ``proc`` listens on ``port`` (RuntimeError, with its log, if it exits or times out)."""
    deadline = time.monotonic() + timeout
    while not _listening(port):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{proc.args!r} did not start listening: {open(log_path).read()}")
        time.sleep(0.05)


def _listening(port: int) -> bool:
    # /proc/net/tcp: a listening socket (state 0A) on the port, without connecting to it (the
    # sender serves the first connection only).
    with open("/proc/net/tcp") as f:
        return any(line.split()[1].endswith(f":{port:04X}") and line.split()[3] == "0A"
                   for line in f.readlines()[1:])


if __name__ == "__main__":
    send(int(sys.argv[1]), sys.argv[2], sys.argv[3])
