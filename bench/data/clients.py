"""confluent-kafka (librdkafka) as the benchmarks' real client: the same code against every
server. Each function runs in the client process and returns plain figures."""

from __future__ import annotations

import array
import math
import os
import time
from typing import Any, NamedTuple

# The benchmark's Consumer settings, besides the defaults. A fetch at the log's end answers at once
# (a pass over the mock's small log must not wait 500 ms there before the next pass), and
# prefetching is not paced: with librdkafka's defaults the consumer stops fetching for 1 s each
# time 64 MiB wait in its queue, which a fast server fills, so that it would be the client's
# pacing that is measured (seen here: 0.5 GB/s against the bare server with them, 1.2 without).
CONSUMER_SETTINGS = {"fetch.wait.max.ms": 0, "queued.max.messages.kbytes": 1 << 20,
                     "fetch.queue.backoff.ms": 1}


def server_cpu(pid: int | None) -> float:
    """user + system CPU seconds of process ``pid`` so far (its threads included), from /proc;
    NaN without a pid. Read here, in the client, at the edges of the measuring window, so that
    a client's start, warm-up and flush outside it do not count."""
    if pid is None:
        return math.nan
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Rate(NamedTuple):
    messages: int
    value_bytes: int
    seconds: float
    server_cpu: float = math.nan  # the server's CPU seconds over the measuring window

    @property
    def server_ms_per_mb(self) -> float:
        """The server's CPU milliseconds per MB (1e6 bytes) of message values."""
        return self.server_cpu * 1000 / (self.value_bytes / 1e6) if self.value_bytes else math.nan

    @property
    def server_share(self) -> float:
        """The server's CPU use over the window, as a share of one core."""
        return self.server_cpu / self.seconds

    @property
    def per_second(self) -> float:
        return self.messages / self.seconds

    @property
    def gb_per_second(self) -> float:
        return self.value_bytes / self.seconds / 1e9


def _check(errors: list[Any], what: str) -> None:
    if errors:
        raise RuntimeError(f"{what}: {len(errors)} delivery errors, the first {errors[0]}")


def produce_rate(bootstrap: str, topic: str, message_bytes: int, seconds: float, linger_ms: float = 5,
                 acks: int = 1, batch: int = 0, warmup_messages: int = 10_000,
                 server_pid: int | None = None) -> Rate:
    """Messages per second one Producer delivers (acknowledged) to partition 0: produced in a
    tight loop for ``seconds``, then flushed; the time includes the flush. ``batch`` > 0 hands
    the messages over ``batch`` at a time with ``produce_batch`` (one Python call for many, so
    that the client's ceiling is librdkafka's rather than the Python loop's). Delivery reports
    come for errors only, so that a Python callback per message is not what is measured."""
    from confluent_kafka import Producer

    errors: list[Any] = []
    producer = Producer({"bootstrap.servers": bootstrap, "acks": acks, "linger.ms": linger_ms,
                         "delivery.report.only.error": True,
                         "on_delivery": lambda err, _msg: errors.append(err)})
    value = b"x" * message_bytes
    produce, poll = producer.produce, producer.poll
    chunk = batch or 1000
    messages = [{"value": value} for _ in range(chunk)]

    def send_one_by_one() -> None:
        for _ in range(chunk):
            while True:
                try:
                    produce(topic, value, partition=0)
                    break
                except BufferError:  # the local queue is full: serve delivery reports, then retry
                    poll(0.001)
        poll(0)

    def send_batch() -> None:
        left = messages
        while producer.produce_batch(topic, left, partition=0) < len(left):
            left = [m for m in left if m.pop("_error", None) is not None]  # not queued: queue full
            poll(0.001)
        poll(0)

    send = send_batch if batch else send_one_by_one
    for _ in range(max(1, warmup_messages // chunk)):
        send()
    if producer.flush(60):
        raise RuntimeError(f"{bootstrap}: warm-up messages not delivered in 60 s")
    _check(errors, bootstrap)
    sent = 0
    cpu0 = server_cpu(server_pid)
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        send()
        sent += chunk
    left = producer.flush(120)
    elapsed = time.perf_counter() - start
    cpu = server_cpu(server_pid) - cpu0
    if left:
        raise RuntimeError(f"{bootstrap}: {left} messages not delivered in 120 s")
    _check(errors, bootstrap)
    return Rate(sent, sent * message_bytes, elapsed, cpu)


def produce_spread(bootstrap: str, topic: str, partitions: int, producers: int, message_bytes: int,
                   seconds: float, linger_ms: float = 5, batch: int = 1000,
                   server_pid: int | None = None) -> Rate:
    """``producers`` Producers (a connection each) in this process, each writing to its own share
    of the topic's ``partitions`` (producer i: partitions i, i + producers, ...), ``batch``
    messages a ``produce_batch`` call spread round the producer's partitions; the producers in
    turn, for ``seconds``, then all flushed (the flush counts). acks=1, delivery reports for errors
    only."""
    from confluent_kafka import Producer

    errors: list[Any] = []
    value = b"x" * message_bytes
    clients = [Producer({"bootstrap.servers": bootstrap, "acks": 1, "linger.ms": linger_ms,
                         "delivery.report.only.error": True,
                         "on_delivery": lambda err, _msg: errors.append(err)}) for _ in range(producers)]
    mine = [list(range(i, partitions, producers)) for i in range(producers)]
    messages = [[{"value": value, "partition": ps[k % len(ps)]} for k in range(batch)] for ps in mine]

    def send(i: int) -> None:
        p, left = clients[i], messages[i]
        while p.produce_batch(topic, left) < len(left):
            left = [m for m in left if m.pop("_error", None) is not None]
            p.poll(0.001)
        p.poll(0)

    def flush_all(timeout: float) -> int:
        return sum(p.flush(timeout) for p in clients)

    for i in range(producers):  # warm-up: every partition's leader known, connections made
        send(i)
    if flush_all(60):
        raise RuntimeError(f"{bootstrap}: warm-up messages not delivered in 60 s")
    _check(errors, bootstrap)
    sent = 0
    cpu0 = server_cpu(server_pid)
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for i in range(producers):
            send(i)
        sent += batch * producers
    left = flush_all(120)
    elapsed = time.perf_counter() - start
    cpu = server_cpu(server_pid) - cpu0
    if left:
        raise RuntimeError(f"{bootstrap}: {left} messages not delivered in 120 s")
    _check(errors, bootstrap)
    return Rate(sent, sent * message_bytes, elapsed, cpu)


def produce_count(bootstrap: str, topic: str, message_bytes: int, count: int, linger_ms: float = 5) -> None:
    """``count`` messages to partition 0 (acks=1, ``linger_ms``), all delivered: a log of batches
    as this producer makes them, for a Consumer to read."""
    from confluent_kafka import Producer

    errors: list[Any] = []
    producer = Producer({"bootstrap.servers": bootstrap, "acks": 1, "linger.ms": linger_ms,
                         "delivery.report.only.error": True,
                         "on_delivery": lambda err, _msg: errors.append(err)})
    value = b"x" * message_bytes
    for _ in range(count):
        while True:
            try:
                producer.produce(topic, value, partition=0)
                break
            except BufferError:
                producer.poll(0.001)
    if producer.flush(60):
        raise RuntimeError(f"{bootstrap}: messages not delivered in 60 s")
    _check(errors, bootstrap)


def produce_latencies(bootstrap: str, topic: str, message_bytes: int, seconds: float,
                      warmup: int = 200) -> array.array:
    """One message at a time (linger 0, acks=1): ns from ``produce`` to its delivery report."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": 1, "linger.ms": 0})
    value = b"x" * message_bytes
    out = array.array("q")
    errors: list[Any] = []
    delivered: list[int] = []

    def report(err: Any, _msg: Any) -> None:
        delivered.append(time.perf_counter_ns())
        if err is not None:
            errors.append(err)

    def one() -> int:
        delivered.clear()
        t = time.perf_counter_ns()
        producer.produce(topic, value, partition=0, on_delivery=report)
        while not delivered:
            producer.poll(1.0)
        return delivered[0] - t

    for _ in range(warmup):
        one()
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        out.append(one())
    _check(errors, bootstrap)
    return out


def consume_rate(bootstrap: str, topic: str, messages_in_log: int, seconds: float | None = None,
                 server_pid: int | None = None) -> Rate:
    """A Consumer with ``assign()`` reading partition 0 from offset 0: the ``messages_in_log``
    messages once, or (with ``seconds``) again and again from offset 0 until the time is up (for
    a log too small to read for long: the mock keeps 5 MiB a partition). Bytes are the values'."""
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "kafkalite-bench",
                         "enable.auto.commit": False, "enable.auto.offset.store": False,
                         "enable.partition.eof": False, **CONSUMER_SETTINGS})
    try:
        # Connected (ApiVersions, Metadata) before the clock starts, as the loopback ceiling is
        # timed once connected: the client's bootstrap is not the server's reading.
        consumer.list_topics(topic, timeout=10.0)
        messages = value_bytes = 0
        deadline = None
        cpu0 = server_cpu(server_pid)
        start = time.perf_counter()
        while True:
            consumer.assign([TopicPartition(topic, 0, 0)])
            left = messages_in_log
            while left > 0:
                batch = consumer.consume(min(left, 10_000), 10.0)
                if not batch:
                    raise RuntimeError(f"{bootstrap}: nothing consumed in 10 s, {left} messages short")
                for m in batch:
                    if m.error() is not None:
                        raise KafkaException(m.error())
                    value_bytes += len(m.value() or b"")
                left -= len(batch)
                messages += len(batch)
            if seconds is None:
                break
            if deadline is None:  # the first pass warmed up: time from here
                messages = value_bytes = 0
                cpu0 = server_cpu(server_pid)
                start = time.perf_counter()
                deadline = start + seconds
            elif time.perf_counter() >= deadline:
                break
        elapsed = time.perf_counter() - start
        return Rate(messages, value_bytes, elapsed, server_cpu(server_pid) - cpu0)
    finally:
        consumer.close()
