"""What the client process runs, one call per measurement, pinned to the client core: the raw
Produce sender and Fetch reader (wire.py), the confluent-kafka clients (clients.py) and the
loopback reader (loopback.py). Arguments and results are plain values, for ``multiprocessing``."""

from __future__ import annotations

import array
import contextlib
import multiprocessing
import os
import signal
from collections.abc import Iterator
from typing import Any

from . import clients, loopback, wire
from .servers import CLIENT_CORE, HOST, pinning


def _init_worker(core: int | None) -> None:
    # Ctrl-C is the benchmark's to handle: it terminates this pool. A worker interrupted while it
    # waits for its next call would die holding the pool's queue lock, and terminate() would then
    # wait for that lock for ever (seen when a measurement's start left the worker idle).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if core is not None:
        os.sched_setaffinity(0, {core})


@contextlib.contextmanager
def _unpinned() -> Iterator[None]:
    """The client process free to run on any core meanwhile. For latencies, one request at a time:
    client and server do not compete for a core then, and a client pinned to one core of this
    shared machine waits behind whatever else runs on it (seen here: a raw round trip's p99 3 ms
    against the bare server pinned, 0.08 ms unpinned, with another process busy on core 1)."""
    if not hasattr(os, "sched_getaffinity"):
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, range(os.cpu_count() or 1))
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


class ClientProcess:
    """One spawned process for every client call of a run, pinned to the client core."""

    def __init__(self, pin: bool = True) -> None:
        core = CLIENT_CORE if pin and pinning() else None
        self._pool = multiprocessing.get_context("spawn").Pool(1, initializer=_init_worker, initargs=(core,))

    def run(self, fn: Any, *args: Any) -> Any:
        return self._pool.apply(fn, args)

    def start(self, fn: Any, *args: Any) -> Any:
        """``fn`` in the background: an AsyncResult."""
        return self._pool.apply_async(fn, args)

    def close(self) -> None:
        self._pool.terminate()
        self._pool.join()

    def __enter__(self) -> ClientProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def prepare_topic(port: int, kind: str, topic: str, partitions: int = 1) -> None:
    """The topic with partition 0 led by the server: CreateTopics on kafkalite, Metadata's
    auto-creation on the mock; the bare server answers for any topic."""
    if kind == "bare":
        return
    with wire.Connection(HOST, port) as conn:
        if kind == "kafkalite":
            wire.create_topic(conn, topic, partitions)
        else:
            wire.auto_create_topic(conn, topic)


def raw_produce(port: int, topic: str, message_bytes: int, batch_records: int, depth: int,
                seconds: float | None = None, requests: int | None = None,
                warmup: float = 0.0) -> wire.Throughput:
    """One Produce frame (a batch of ``batch_records`` messages) sent again and again, ``depth``
    in flight, for ``seconds`` or ``requests`` frames (after ``warmup`` seconds not counted)."""
    batch = wire.record_batch(message_bytes, batch_records)
    frame = wire.produce_frame(topic, 0, batch)
    with wire.Connection(HOST, port) as conn:
        if warmup:
            wire.pipelined_produce(conn, frame, len(batch), depth, seconds=warmup)
        return wire.pipelined_produce(conn, frame, len(batch), depth, seconds=seconds, requests=requests)


def raw_round_trips(port: int, topic: str, message_bytes: int, seconds: float,
                    warmup: int = 200) -> array.array:
    """One single-message Produce at a time (acks=1): each round trip in ns."""
    frame = wire.produce_frame(topic, 0, wire.record_batch(message_bytes, 1))
    with _unpinned(), wire.Connection(HOST, port) as conn:
        wire.round_trips(conn, frame, 60.0, at_most=warmup)
        return wire.round_trips(conn, frame, seconds)


def raw_fetch(port: int, topic: str, batch_records: int, batch_bytes: int, batches: int, depth: int,
              per_fetch: int = 1, seconds: float | None = None) -> wire.Throughput:
    """Read ``batches`` batches from offset 0 with pipelined fetches: once, or round and round
    for ``seconds`` after one untimed pass."""
    plan = wire.fetch_plan(topic, 0, batch_records, batch_bytes, batches, per_fetch)
    with wire.Connection(HOST, port, buffer_bytes=max(8 << 20, 2 * per_fetch * batch_bytes)) as conn:
        if seconds is not None:
            wire.pipelined_fetch(conn, plan, depth)
        return wire.pipelined_fetch(conn, plan, depth, seconds=seconds)


def batch_bytes(message_bytes: int, batch_records: int) -> int:
    return len(wire.record_batch(message_bytes, batch_records))


def produce_rate(port: int, topic: str, message_bytes: int, seconds: float, linger_ms: float,
                 batch: int = 0, server_pid: int | None = None) -> clients.Rate:
    return clients.produce_rate(f"{HOST}:{port}", topic, message_bytes, seconds, linger_ms, batch=batch,
                                server_pid=server_pid)


def produce_spread(port: int, topic: str, partitions: int, producers: int, message_bytes: int,
                   seconds: float, linger_ms: float, server_pid: int | None = None) -> clients.Rate:
    return clients.produce_spread(f"{HOST}:{port}", topic, partitions, producers, message_bytes, seconds,
                                  linger_ms, server_pid=server_pid)


def produce_count(port: int, topic: str, message_bytes: int, count: int, linger_ms: float) -> None:
    clients.produce_count(f"{HOST}:{port}", topic, message_bytes, count, linger_ms)


def produce_latencies(port: int, topic: str, message_bytes: int, seconds: float) -> array.array:
    with _unpinned():  # librdkafka's threads, started in here, take the mask they start with
        return clients.produce_latencies(f"{HOST}:{port}", topic, message_bytes, seconds)


def consume_rate(port: int, topic: str, messages_in_log: int, seconds: float | None,
                 server_pid: int | None = None) -> clients.Rate:
    return clients.consume_rate(f"{HOST}:{port}", topic, messages_in_log, seconds, server_pid)


def loopback_receive(port: int, seconds: float) -> wire.Throughput:
    return loopback.receive(port, seconds)
