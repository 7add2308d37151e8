"""Worker processes hosting many confluent-kafka clients of one group for the group benchmarks
(group_protocols.py, share.py): librdkafka runs several threads per client, and 50 clients in the
benchmark's own process would make it, not the server, what is measured. Each worker hosts up to
``per_process`` clients; the benchmark starts them (spawn, so no librdkafka state is inherited),
waits until every client is made, then sets ``go``. Workers report on a queue with
``time.monotonic()`` stamps, which are one clock for every process of the machine."""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from .data.servers import cpu_seconds

SWEEP_S = 0.005  # how often a group worker polls each of its consumers


@dataclasses.dataclass
class Pool:
    procs: list[Any]
    events: Any  # multiprocessing Queue of tuples, each starting with its kind
    go: Any
    leave: Any
    stop: Any

    def get(self, timeout: float) -> tuple:
        try:
            return tuple(self.events.get(timeout=timeout))
        except queue.Empty:
            dead = [p.pid for p in self.procs if not p.is_alive()]
            raise RuntimeError(f"no report from the workers in {timeout:g} s"
                               + (f" (dead workers: {dead})" if dead else "")) from None

    def cpu_seconds(self) -> float:
        """The workers' CPU time so far, all threads."""
        total = 0.0
        for p in self.procs:
            with contextlib.suppress(OSError):
                total += cpu_seconds(p.pid)
        return total


@contextlib.contextmanager
def started(target: Callable[..., None], count: int, per_process: int, core: int | None,
            args: tuple) -> Iterator[Pool]:
    """Workers running ``target(first_index, n, events, go, leave, stop, core, *args)`` for
    ``count`` clients, ``per_process`` a worker; once each has reported ``("ready", ...)``."""
    ctx = multiprocessing.get_context("spawn")
    pool = Pool([], ctx.Queue(), ctx.Event(), ctx.Event(), ctx.Event())
    try:
        for first in range(0, count, per_process):
            n = min(per_process, count - first)
            p = ctx.Process(target=target, args=(first, n, pool.events, pool.go, pool.leave, pool.stop,
                                                 core, *args), daemon=True)
            p.start()
            pool.procs.append(p)
        for _ in pool.procs:
            kind, *rest = pool.get(120)
            if kind == "error":
                raise RuntimeError(f"a worker failed: {rest[0]}")
            assert kind == "ready", kind
        yield pool
    finally:
        pool.stop.set()
        for p in pool.procs:
            p.join(60)
            if p.is_alive():
                p.kill()
                p.join(10)
        pool.events.close()
        pool.events.join_thread()


def worker_setup(core: int | None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the benchmark's: it stops the pool
    if core is not None:
        os.sched_setaffinity(0, {core})


def close_all(clients: list[Any]) -> None:
    """Close every client at once: a classic consumer's close() waits for its group's rebalance,
    which waits for the others' LeaveGroup."""
    threads = [threading.Thread(target=c.close, daemon=True) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)


def group_members(first: int, n: int, events: Any, go: Any, leave: Any, stop: Any, core: int | None,
                  config: dict[str, Any], topic: str) -> None:
    """``n`` consumers of one group: made, then (on ``go``) subscribed to ``topic`` and polled
    in turn every SWEEP_S; each change of a member's assignment is reported as ``("assign",
    index, when, partitions)``. On ``leave`` member 0 closes (``("left", 0, when)`` just before),
    in a thread of its own."""
    worker_setup(core)
    try:
        from confluent_kafka import Consumer

        members = {first + i: Consumer({**config, "client.id": f"bench-member-{first + i}"})
                   for i in range(n)}
        events.put(("ready", first))
        go.wait()
        for c in members.values():
            c.subscribe([topic])
        held: dict[int, tuple[int, ...]] = {}
        closing = None
        while not stop.is_set():
            if 0 in members and leave.is_set():
                # closed in a thread of its own: this one keeps polling the others meanwhile
                events.put(("left", 0, time.monotonic()))
                closing = threading.Thread(target=members.pop(0).close, daemon=True)
                closing.start()
            for index, c in members.items():
                c.poll(0)
                now = tuple(sorted(tp.partition for tp in c.assignment()))
                if held.get(index) != now:
                    held[index] = now
                    events.put(("assign", index, time.monotonic(), now))
            time.sleep(SWEEP_S)
        if closing is not None:
            closing.join(60)
        close_all(list(members.values()))
    except BaseException as e:  # reported: the benchmark stops with it
        events.put(("error", f"{type(e).__name__}: {e}"))


def share_members(first: int, n: int, events: Any, go: Any, leave: Any, stop: Any, core: int | None,
                  config: dict[str, Any], topic: str) -> None:
    """``n`` ShareConsumers of one share group, each polled by a thread of its own (one instance
    is not to be used from two threads). Each poll's records are reported as ``("records", when,
    count)``, each acknowledgement the broker confirmed as ``("acked", when, count)`` (the
    acknowledgement-commit callback: acknowledged implicitly by the next poll in ``implicit``
    mode, by ``acknowledge()`` in ``explicit`` mode, sent with the next poll either way)."""
    worker_setup(core)
    try:
        from confluent_kafka import ShareConsumer

        explicit = config.get("share.acknowledgement.mode") == "explicit"
        consumers = []
        for i in range(n):
            c = ShareConsumer({**config, "client.id": f"bench-share-{first + i}"})

            def acked(offsets: dict, error: object) -> None:
                count = sum(len(o) for o in offsets.values())
                events.put(("acked", time.monotonic(), count) if error is None
                           else ("ack-failed", time.monotonic(), count, str(error)))

            c.set_acknowledgement_commit_callback(acked)
            consumers.append(c)
        events.put(("ready", first))
        go.wait()

        def consume(c: Any) -> None:
            try:
                c.subscribe([topic])
                while not stop.is_set():
                    batch = c.poll(0.1)
                    count = 0
                    for m in batch:
                        if m.error() is not None:
                            events.put(("error", f"record: {m.error()}"))
                            continue
                        count += 1
                        if explicit:
                            c.acknowledge(m)
                    if count:
                        events.put(("records", time.monotonic(), count))
            except BaseException as e:
                events.put(("error", f"{type(e).__name__}: {e}"))

        threads = [threading.Thread(target=consume, args=(c,), daemon=True) for c in consumers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        close_all(consumers)
    except BaseException as e:
        events.put(("error", f"{type(e).__name__}: {e}"))
