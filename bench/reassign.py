"""``kafkalite bench reassign``: how long moving a big partition takes, with and without a
replication throttle, and what producers see meanwhile.

Three broker processes on this machine (``kafkalite cluster``'s layout) whose
``leader.replication.throttled.rate`` and ``follower.replication.throttled.rate`` are ``--throttle``
bytes/s (set in their configuration: kafkalite reads them there too; Kafka takes them only
dynamically). Each case creates a topic of one partition on brokers [1, 2], fills it with
``--size`` bytes (acks=all, 10 kB values), then, while a producer writes to it (acks=all,
idempotent, 1000-byte values at ``--rate`` messages/s, each one timed from produce() to its
acknowledgement), reassigns it to [2, 3] with AlterPartitionReassignments and polls
ListPartitionReassignments until it is done: the time to complete, and the producer's latencies
during the move against those before it. The throttled case's topic throttles what
kafka-reassign-partitions.sh --throttle would: ``leader.replication.throttled.replicas`` 0:1,0:2
(the current replicas), ``follower.replication.throttled.replicas`` 0:3 (the one added); the
unthrottled one none, so the same cluster runs both. Each topic is deleted after its case.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from kafkalite.clients import BlockingClient
from kafkalite.local import processes as C
from kafkalite.local.settings import free_base_port
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import alter_partition_reassignments as A
from kafkalite.protocol.messages import create_topics as ct
from kafkalite.protocol.messages import delete_topics as dt
from kafkalite.protocol.messages import list_partition_reassignments as L

from .markdown import machine, write_section

FILL_VALUE_BYTES = 10_000
VALUE_BYTES = 1000
Say = Callable[[str], None]


@contextlib.contextmanager
def _cluster(throttle: int) -> Iterator[list[Any]]:
    work = tempfile.mkdtemp(prefix="kafkalite-bench-reassign-")
    base = free_base_port(3)
    extra = (f"leader.replication.throttled.rate={throttle}",
             f"follower.replication.throttled.rate={throttle}", "auto.leader.rebalance.enable=false")
    nodes = C.start(3, work, base, extra)
    try:
        if not C.wait_registered(nodes, 60):
            raise RuntimeError("the cluster did not come up")
        yield nodes
    finally:
        C.stop(nodes)
        shutil.rmtree(work, ignore_errors=True)


def _controller(nodes: list[Any]) -> BlockingClient:
    return BlockingClient("127.0.0.1", nodes[0].client_port, "bench-reassign", 60)


def _create(client: BlockingClient, topic: str, throttled: bool) -> None:
    R = ct.REQUEST
    # What kafka-reassign-partitions.sh --throttle sets: the current replicas on the leader side,
    # the one being added on the follower side.
    configs = {"leader.replication.throttled.replicas": "0:1,0:2",
               "follower.replication.throttled.replicas": "0:3"} if throttled else {}
    t = R["topics"](name=topic, num_partitions=-1, replication_factor=-1,
                    assignments=[R["topics"]["assignments"](partition_index=0, broker_ids=[1, 2])],
                    configs=[R["topics"]["configs"](name=k, value=v) for k, v in configs.items()])
    answer = client.send_and_receive(ApiKey.CREATE_TOPICS, 7, R(topics=[t], timeout_ms=30000))
    if answer.topics[0].error_code:
        raise RuntimeError(f"CreateTopics {topic}: {E.for_code(answer.topics[0].error_code).name}")


def _delete(client: BlockingClient, topic: str) -> None:
    R = dt.REQUEST
    client.send_and_receive(ApiKey.DELETE_TOPICS, 6, R(topics=[R["topics"](name=topic)], timeout_ms=30000))


def _producer(servers: str, **conf: Any) -> Any:
    from confluent_kafka import Producer

    return Producer({"bootstrap.servers": servers, "acks": "all", "enable.idempotence": True, **conf})


def fill(servers: str, topic: str, size: int) -> float:
    """Write ``size`` bytes of values; seconds it took."""
    producer = _producer(servers, **{"linger.ms": 20, "batch.size": 1_000_000})
    value = os.urandom(FILL_VALUE_BYTES)
    start = time.perf_counter()
    for _ in range(max(1, size // FILL_VALUE_BYTES)):
        while True:
            try:
                producer.produce(topic, value, partition=0)
                break
            except BufferError:
                producer.poll(0.01)
        producer.poll(0)
    if producer.flush(600):
        raise RuntimeError(f"{topic}: fill left messages unacknowledged")
    return time.perf_counter() - start


class TimedProducer:
    """Produces ``rate`` messages/s in a thread; each acknowledgement's latency with the time it
    was sent."""

    def __init__(self, servers: str, topic: str, rate: int) -> None:
        self.servers, self.topic, self.rate = servers, topic, rate
        self.samples: list[tuple[float, float]] = []  # (sent at, seconds to the ack)
        self.errors = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-reassign-producer")

    def __enter__(self) -> TimedProducer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(120)

    def _run(self) -> None:
        producer = _producer(self.servers, **{"linger.ms": 0, "message.timeout.ms": 120000})
        value = os.urandom(VALUE_BYTES)
        interval = 1 / self.rate
        next_at = time.perf_counter()
        while not self._stop.is_set():
            sent = time.perf_counter()

            def acked(err: Any, _msg: Any, sent: float = sent) -> None:
                if err is not None:
                    self.errors += 1
                else:
                    self.samples.append((sent, time.perf_counter() - sent))

            producer.produce(self.topic, value, partition=0, on_delivery=acked)
            next_at = max(next_at + interval, sent)  # no burst after a stall
            while (wait := next_at - time.perf_counter()) > 0:
                producer.poll(wait)  # serves acknowledgements as they come (and returns then)
        if producer.flush(120):
            raise RuntimeError(f"{self.topic}: messages left unacknowledged")

    def latencies(self, start: float, end: float) -> list[float]:
        return sorted(lat for sent, lat in self.samples if start <= sent < end)


def _alter(client: BlockingClient, topic: str, replicas: list[int]) -> None:
    body = A.REQUEST(timeout_ms=30000, allow_replication_factor_change=True, topics=[A.REASSIGNABLE_TOPIC(
        name=topic, partitions=[A.REASSIGNABLE_PARTITION(partition_index=0, replicas=replicas)])])
    answer = client.send_and_receive(ApiKey.ALTER_PARTITION_REASSIGNMENTS, 1, body)
    code = answer.responses[0].partitions[0].error_code if answer.responses else answer.error_code
    if answer.error_code or code:
        name = E.for_code(code or answer.error_code).name
        raise RuntimeError(f"AlterPartitionReassignments {topic}: {name}")


def _in_progress(client: BlockingClient, topic: str) -> bool:
    body = L.REQUEST(timeout_ms=30000, topics=[L.REQUEST_TOPIC(name=topic, partition_indexes=[0])])
    answer = client.send_and_receive(ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, body)
    if answer.error_code:
        raise RuntimeError(f"ListPartitionReassignments: {E.for_code(answer.error_code).name}")
    return bool(answer.topics)


def _pct(values: list[float], p: float) -> float:
    return values[min(len(values) - 1, int(len(values) * p / 100))] * 1000 if values else float("nan")


def case(nodes: list[Any], topic: str, throttled: bool, size: int, rate: int, baseline_s: float,
         say: Say) -> dict[str, Any]:
    servers = ",".join(f"127.0.0.1:{n.client_port}" for n in nodes)
    client = _controller(nodes)
    try:
        _create(client, topic, throttled)
        took = fill(servers, topic, size)
        say(f"{topic}: {size / 1e6:,.0f} MB written in {took:,.1f} s")
        with TimedProducer(servers, topic, rate) as producer:
            time.sleep(1.0 + baseline_s)  # connected, then latencies before the move, for comparison
            began = time.perf_counter()
            _alter(client, topic, [2, 3])
            while _in_progress(client, topic):
                time.sleep(0.2)
            ended = time.perf_counter()
            time.sleep(1.0)  # the producer's last messages to the old leader finish
        before = producer.latencies(began - baseline_s, began)
        during = producer.latencies(began, ended)
        result = {"throttled": throttled, "seconds": ended - began, "size": size, "errors": producer.errors,
                  "p50_before": _pct(before, 50), "p99_before": _pct(before, 99),
                  "p50_during": _pct(during, 50), "p99_during": _pct(during, 99), "count": len(during)}
        say(f"{topic}: moved in {result['seconds']:,.1f} s ({size / result['seconds'] / 1e6:,.1f} MB/s); "
            f"producer p99 {result['p99_before']:,.1f} ms before, {result['p99_during']:,.1f} ms during "
            f"({len(during)} messages, {producer.errors} errors)")
        _delete(client, topic)
        return result
    finally:
        client.close()


def run(size: int, throttle: int, rate: int, write_md: str | None, command: str, say: Say = print) -> str:
    with _cluster(throttle) as nodes:
        results = [case(nodes, "unthrottled", False, size, rate, 3.0, say),
                   case(nodes, "throttled", True, size, rate, 3.0, say)]
    body = _section(results, size, throttle, rate, command)
    if write_md:
        write_section(write_md, "reassign", body)
        say(f"wrote {write_md}")
    return body


def _section(results: list[dict[str, Any]], size: int, throttle: int, rate: int, command: str) -> str:
    text = (f"## Reassignment: a {size / 1e9:g} GB partition from brokers [1, 2] to [2, 3]\n\nCommand: "
            f"`{command}`  \nMachine: {machine()}; 3 broker processes and the clients on the same cores.  \n"
            f"Measured: {time.strftime('%Y-%m-%d %H:%M')}. One partition filled with {size / 1e6:,.0f} MB "
            f"(10 kB values), then reassigned while a confluent-kafka producer (acks=all, idempotent, "
            f"linger 0) sends {rate} messages/s of {VALUE_BYTES} B; the move is done when "
            f"ListPartitionReassignments no longer lists it. Throttled: leader and follower "
            f"replication.throttled.rate {throttle / 1e6:g} MB/s, with the throttled replicas "
            "kafka-reassign-partitions.sh --throttle sets (leader side 0:1,0:2, follower side 0:3).\n\n")
    text += ("| case | time to complete s | MB/s | producer p50 ms before / during | producer p99 ms "
             "before / during | errors |\n| --- | ---: | ---: | ---: | ---: | ---: |\n")
    for r in results:
        text += (f"| {'throttled' if r['throttled'] else 'unthrottled'} | {r['seconds']:,.1f} | "
                 f"{r['size'] / r['seconds'] / 1e6:,.1f} | {r['p50_before']:,.1f} / {r['p50_during']:,.1f} | "
                 f"{r['p99_before']:,.1f} / {r['p99_during']:,.1f} | {r['errors']} |\n")
    return text
