"""The ceilings for a broker's appends on this machine, measured by a process pinned to the server
core, as a broker appends a 1 MiB batch, with nothing checked or answered:

- ``write``: ``pwrite`` 1 MiB chunks to a new file in the directory brokers keep their logs in;
- ``receive``: the same, each chunk first read off a TCP connection from the client core
  (blocking ``recv_into``, the listening socket's receive buffer Kafka's default
  ``socket.receive.buffer.bytes``, 100 KiB, as a broker's): what a broker with Kafka's socket
  settings could take 1 MiB Produce requests at here, protocol and threads aside.

Each first writes ``warmup`` bytes untimed, as much as the broker has taken before its 1 MiB
measurement, because the rate falls once a GB or so is in the page cache (seen here: about 1 GB/s
for the first GB, 0.4 GB/s after), and writes them back (fsync), as the benchmark does before each
measurement. Run as ``python -m kafkalite_bench.data.disk write SECONDS WARMUP`` or ``python -m
kafkalite_bench.data.disk receive SECONDS WARMUP PORT``: it prints MB/s."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from . import servers
from .loopback import wait_listening

CHUNK = 1 << 20
KAFKA_SOCKET_RECEIVE_BUFFER = 102400  # socket.receive.buffer.bytes' default
MODES = ("write", "receive")


def _rate(next_chunk: Callable[[], memoryview | bytes], seconds: float, warmup: int) -> float:
    """MB/s of 1 MiB ``pwrite``s of what ``next_chunk`` gives, to a new file, for ``seconds``
    after ``warmup`` bytes (written back before the clock starts)."""
    work = tempfile.mkdtemp(prefix="kafkalite-bench-disk-")
    fd = os.open(os.path.join(work, "00000000000000000000.log"), os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        pos = 0
        while pos < warmup:
            pos += os.pwrite(fd, next_chunk(), pos)
        os.fsync(fd)
        start, written = time.perf_counter(), 0
        while (elapsed := time.perf_counter() - start) < seconds:
            n = os.pwrite(fd, next_chunk(), pos)
            pos += n
            written += n
        return written / elapsed / 1e6
    finally:
        os.close(fd)
        shutil.rmtree(work, ignore_errors=True)


def write_rate(seconds: float, warmup: int) -> float:
    chunk = os.urandom(CHUNK)
    return _rate(lambda: chunk, seconds, warmup)


def receive_write_rate(seconds: float, warmup: int, port: int) -> float:
    """As :func:`write_rate`, each chunk read whole off the first connection to ``port`` first."""
    with socket.create_server((servers.HOST, port)) as listener:
        # Set before accept, so the connection has it from its handshake on (as the Acceptor does).
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, KAFKA_SOCKET_RECEIVE_BUFFER)
        conn, _ = listener.accept()
    buf = bytearray(CHUNK)
    view = memoryview(buf)

    def next_chunk() -> memoryview:
        got = 0
        while got < CHUNK:
            n = conn.recv_into(view[got:])
            if not n:
                raise EOFError("the sender closed the connection")
            got += n
        return view

    with conn:
        return _rate(next_chunk, seconds, warmup)


def send_chunks(port: int) -> int:
    """The client side of ``receive``: 1 MiB chunks to ``port`` until it closes; bytes sent."""
    chunk = os.urandom(CHUNK)
    sent = 0
    with socket.create_connection((servers.HOST, port), timeout=600) as sock:
        try:
            while True:
                sock.sendall(chunk)
                sent += CHUNK
        except (BrokenPipeError, ConnectionResetError):
            return sent


def measure(seconds: float, warmup: int, pin: bool = True, mode: str = "write",
            client: Any = None) -> float:
    """A ceiling (``mode``) in a process of its own, started as the servers are (on the server
    core when pinning); ``receive`` needs ``client``, the benchmark's ClientProcess, to send."""
    log = tempfile.NamedTemporaryFile(prefix="kafkalite-bench-disk-", suffix=".log", delete=False)
    log.close()
    args = [sys.executable, "-m", "kafkalite_bench.data.disk", mode, str(seconds), str(warmup)]
    port = servers.free_port() if mode == "receive" else 0
    if mode == "receive":
        args.append(str(port))
    proc = servers._popen(args, log.name, pin and servers.pinning())
    try:
        if mode == "receive":
            wait_listening(proc, port, log.name)
            sending = client.start(send_chunks, port)
        if proc.wait(seconds + 300) != 0:
            raise RuntimeError(f"the {mode} ceiling failed: {open(log.name).read()}")
        if mode == "receive":
            sending.get(60)
        with open(log.name) as f:
            return float(f.read().split()[-1])
    finally:
        servers._stop(proc)
        os.unlink(log.name)


if __name__ == "__main__":
    mode, secs, warm = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    rate = write_rate(secs, warm) if mode == "write" else receive_write_rate(secs, warm, int(sys.argv[4]))
    print(f"{rate:.1f}")
