"""A closed-loop load generator speaking real Kafka frames: N connections, each keeping ``depth``
requests in flight, for a fixed time; every request is timed from send to response. The window
starts once every connection is open, and the server's CPU time is read at its two ends, so that
connecting and closing thousands of sockets counts in neither figure."""

from __future__ import annotations

import array
import collections
import itertools
import os
import selectors
import socket
import time
from collections.abc import Iterator

from kafkalite.protocol import UNLIMITED_FRAME_SIZE, FrameDecoder

CLK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """user + system CPU time of process ``pid`` so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK


def run(port: int, connections: int, depth: int, frames: list[bytes], seconds: float,
        core: int | None = None, server_pid: int | None = None) -> tuple[int, array.array, float, float]:
    """(responses, latencies in ns, window seconds, server CPU seconds in the window) over
    ``seconds`` after all connections are open."""
    if core is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {core})
    sel = selectors.DefaultSelector()
    conns = []
    for _ in range(connections):
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.setblocking(False)
        state: tuple[socket.socket, FrameDecoder, collections.deque[int], Iterator[bytes]] = (
            s, FrameDecoder(UNLIMITED_FRAME_SIZE), collections.deque(), itertools.cycle(frames))
        conns.append(state)
        sel.register(s, selectors.EVENT_READ, state)
    latencies = array.array("q")
    done = 0
    now = time.perf_counter_ns
    cpu0 = cpu_seconds(server_pid) if server_pid else 0.0
    start = time.perf_counter()
    for s, _, sent, frame_iter in conns:
        batch = [next(frame_iter) for _ in range(depth)]
        t = now()
        sent.extend([t] * depth)
        s.sendall(b"".join(batch))
    end = start + seconds
    try:
        while time.perf_counter() < end:
            for key, _ in sel.select(0.5):
                s, decoder, sent, frame_iter = key.data
                data = s.recv(262144)
                if not data:
                    raise ConnectionError("the server closed a connection")
                decoder.feed(data)
                got = 0
                t = now()
                for _ in decoder.frames():
                    latencies.append(t - sent.popleft())
                    got += 1
                if got:
                    done += got
                    sent.extend([now()] * got)
                    s.sendall(b"".join(next(frame_iter) for _ in range(got)))
        elapsed = time.perf_counter() - start
        cpu = cpu_seconds(server_pid) - cpu0 if server_pid else 0.0
    finally:
        for s, _, _, _ in conns:
            s.close()
        sel.close()
    return done, latencies, elapsed, cpu
