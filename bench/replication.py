"""``kafkalite bench replication``: what replication costs and how fast a partition fails over.

Three broker processes on this machine (``kafkalite cluster``'s layout, Kafka's defaults unless
``--session-timeout-ms`` says otherwise), two topics of one partition led by broker 2: ``rf1``
(replicas 2) and ``rf3`` (replicas 2, 3, 1, min.insync.replicas 2). The same confluent-kafka
client, in this process, against each in turn (alternating rounds, medians):

- throughput: a Producer with acks=all, linger 5 ms, 1000-byte values, for ``--seconds``;
- end-to-end latency: one message at a time (acks=all, linger 0), from ``produce()`` until a
  Consumer of the partition has it (consumers see only what the high watermark covers, so this
  is the replication's full cost);
- failover: a producer sending one message at a time to ``rf3`` when its leader is SIGKILLed, and
  when it is stopped gracefully (SIGTERM: controlled shutdown), the time from the signal to the
  first message produced after it that is acknowledged. The leader is restarted between the two.
"""

from __future__ import annotations

import array
import contextlib
import os
import shutil
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from kafkalite.clients import BlockingClient
from kafkalite.local import processes as C
from kafkalite.local.settings import free_base_port
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import create_topics as ct

from .markdown import machine, write_section

VALUE_BYTES = 1000
Say = Callable[[str], None]


def heartbeat_interval_ms(session_timeout_ms: int) -> int:
    return min(2000, max(50, session_timeout_ms // 4))


@contextlib.contextmanager
def _cluster(session_timeout_ms: int) -> Iterator[dict[str, Any]]:
    work = tempfile.mkdtemp(prefix="kafkalite-bench-replication-")
    base = free_base_port(3)
    # Heartbeats well within the session (Kafka's 2 s for its 9 s): a session shorter than the
    # heartbeat interval fences every broker each time it is checked. The preferred leader
    # election every second hands rf3 back to broker 2 after each failover.
    extra = (f"broker.session.timeout.ms={session_timeout_ms}",
             f"broker.heartbeat.interval.ms={heartbeat_interval_ms(session_timeout_ms)}",
             "leader.imbalance.check.interval.seconds=1")
    nodes = C.start(3, work, base, extra)
    try:
        if not C.wait_registered(nodes, 60):
            raise RuntimeError("the cluster did not come up")
        cluster_id = open(os.path.join(work, "cluster.id")).read().strip()
        args = {n.node_id: C.broker_args(n.node_id, work, base, cluster_id, extra) for n in nodes}
        yield {"nodes": nodes, "dir": work, "args": args}
    finally:
        C.stop(nodes)
        shutil.rmtree(work, ignore_errors=True)


def _bootstrap(cluster: dict[str, Any]) -> str:
    return ",".join(f"127.0.0.1:{n.client_port}" for n in cluster["nodes"])


def _create(cluster: dict[str, Any], servers: str) -> None:
    """The two topics, by CreateTopics with their assignments (kafkalite's own client: the
    confluent admin client refuses a replica assignment without a partition count here)."""
    from confluent_kafka.admin import AdminClient

    R = ct.REQUEST
    client = BlockingClient("127.0.0.1", cluster["nodes"][0].client_port, "bench-replication", 30)
    try:
        for name, replicas, configs in (("rf1", [2], {}), ("rf3", [2, 3, 1], {"min.insync.replicas": "2"})):
            assignment = R["topics"]["assignments"](partition_index=0, broker_ids=replicas)
            topic = R["topics"](name=name, num_partitions=-1, replication_factor=-1, assignments=[assignment],
                                configs=[R["topics"]["configs"](name=k, value=v) for k, v in configs.items()])
            answer = client.send_and_receive(ApiKey.CREATE_TOPICS, 7, R(topics=[topic], timeout_ms=30000))
            if answer.topics[0].error_code:
                raise RuntimeError(f"CreateTopics {name}: error {answer.topics[0].error_code}")
    finally:
        client.close()
    admin = AdminClient({"bootstrap.servers": servers})
    deadline = time.monotonic() + 60
    while True:  # every replica of rf3 in its ISR
        md = admin.list_topics(timeout=10)
        p = md.topics.get("rf3")
        if p is not None and p.partitions and len(p.partitions[0].isrs) == 3 and "rf1" in md.topics:
            return
        if time.monotonic() > deadline:
            raise RuntimeError("the topics did not come up")
        time.sleep(0.1)


def _producer(servers: str, **conf: Any) -> Any:
    from confluent_kafka import Producer

    return Producer({"bootstrap.servers": servers, "acks": "all", "enable.idempotence": True, **conf})


def throughput(servers: str, topic: str, seconds: float) -> float:
    """acks=all messages per second (the flush at the end counts)."""
    producer = _producer(servers, **{"linger.ms": 5})
    value = os.urandom(VALUE_BYTES)
    sent = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for _ in range(1000):
            try:
                producer.produce(topic, value, partition=0)
                sent += 1
            except BufferError:
                producer.poll(0.01)
        producer.poll(0)
    if producer.flush(60):
        raise RuntimeError(f"{topic}: messages left unacknowledged")
    return sent / (time.perf_counter() - start)


def end_to_end(servers: str, topic: str, seconds: float) -> array.array:
    """ns from produce() until a consumer has each message, one message at a time."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": servers, "group.id": "bench-replication",
                         "fetch.wait.max.ms": 1, "enable.auto.commit": False})
    producer = _producer(servers, **{"linger.ms": 0})
    samples = array.array("q")
    try:
        end = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=30)[1]
        consumer.assign([TopicPartition(topic, 0, end)])
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            t0 = time.perf_counter_ns()
            producer.produce(topic, b"x" * 100, partition=0)
            producer.poll(0)
            while True:
                m = consumer.poll(5.0)
                if m is None:
                    raise RuntimeError(f"{topic}: a message not seen in 5 s")
                if m.error() is None:
                    break
            samples.append(time.perf_counter_ns() - t0)
            producer.poll(0)
        producer.flush(30)
    finally:
        consumer.close()
    return samples


def failover(cluster: dict[str, Any], servers: str, sig: int) -> float:
    """Seconds from ``sig`` to the leader of rf3 (broker 2) until a message produced after it is
    acknowledged; the broker is started again afterwards."""
    _wait_led_by_2(servers)
    producer = _producer(servers, **{"linger.ms": 0, "message.timeout.ms": 120000})
    acked_at: list[float] = []
    stop = threading.Event()
    signalled: list[float] = []

    node = cluster["nodes"][1]
    # Each message remembers when it was sent: only those sent after the signal count.
    thread = threading.Thread(target=_stamped_loop(producer, stop, signalled, acked_at), daemon=True)
    thread.start()
    try:
        time.sleep(1.0)  # settled producing before the fault
        signalled.append(time.monotonic())
        node.process.send_signal(sig)
        deadline = time.monotonic() + 120
        while not acked_at and time.monotonic() < deadline:
            time.sleep(0.001)
        if not acked_at:
            raise RuntimeError("no acknowledgement after the failover")
        took = acked_at[0] - signalled[0]
    finally:
        stop.set()
        thread.join(10)
        producer.flush(60)
    node.process.wait(30)
    with open(os.path.join(cluster["dir"], "broker-2.log"), "ab") as out:
        node.process = subprocess.Popen(cluster["args"][2], stdout=out, stderr=subprocess.STDOUT)
    if not C.wait_registered(cluster["nodes"], 60):
        raise RuntimeError("broker 2 did not come back")
    return took


def _stamped_loop(producer: Any, stop: threading.Event, signalled: list[float],
                  acked_at: list[float]) -> Callable[[], None]:
    def loop() -> None:
        while not stop.is_set():
            sent_at = time.monotonic()

            def delivered(err: Any, _msg: Any, sent_at: float = sent_at) -> None:
                if err is None and signalled and sent_at > signalled[0]:
                    acked_at.append(time.monotonic())

            producer.produce("rf3", b"f", partition=0, on_delivery=delivered)
            producer.poll(0.002)
    return loop


def _wait_led_by_2(servers: str) -> None:
    """Until broker 2 is back in rf3's ISR and its leader again (preferred leader election), so
    that each failover moves the leadership."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": servers})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        p = admin.list_topics("rf3", timeout=10).topics["rf3"].partitions[0]
        if len(p.isrs) == 3 and p.leader == 2:
            return
        time.sleep(0.1)
    raise RuntimeError("broker 2 did not rejoin the ISR and lead rf3 again")


def _pct(samples: array.array, p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))] / 1000 if ordered else float("nan")


def run(seconds: float, rounds: int, session_timeout_ms: int, write_md: str | None, command: str,
        say: Say = print) -> str:
    rates: dict[str, list[float]] = {"rf1": [], "rf3": []}
    lat: dict[str, array.array] = {"rf1": array.array("q"), "rf3": array.array("q")}
    kill: list[float] = []
    graceful: list[float] = []
    with _cluster(session_timeout_ms) as cluster:
        servers = _bootstrap(cluster)
        _create(cluster, servers)
        for r in range(rounds):
            for topic in (("rf1", "rf3") if r % 2 == 0 else ("rf3", "rf1")):
                rate = throughput(servers, topic, seconds)
                rates[topic].append(rate)
                samples = end_to_end(servers, topic, seconds)
                lat[topic].extend(samples)
                say(f"round {r + 1}/{rounds} {topic}: {rate:,.0f} messages/s, end-to-end p50 "
                    f"{_pct(samples, 50):,.0f} us p99 {_pct(samples, 99):,.0f} us")
        for r in range(rounds):
            kill.append(failover(cluster, servers, signal.SIGKILL))
            graceful.append(failover(cluster, servers, signal.SIGTERM))
            say(f"round {r + 1}/{rounds} failover: SIGKILL {kill[-1] * 1000:,.0f} ms, graceful "
                f"{graceful[-1] * 1000:,.0f} ms")
    body = _section(rates, lat, kill, graceful, seconds, rounds, session_timeout_ms, command)
    if write_md:
        write_section(write_md, "replication", body)
        say(f"wrote {write_md}")
    return body


def _section(rates: dict[str, list[float]], lat: dict[str, array.array], kill: list[float],
             graceful: list[float], seconds: float, rounds: int, session_timeout_ms: int,
             command: str) -> str:
    med = {t: statistics.median(v) for t, v in rates.items()}
    text = (f"## Replication: replication factor 3 against 1, and failover\n\nCommand: `{command}`  \n"
            f"Machine: {machine()}; 3 broker processes and the client on the same 2 cores.  \n"
            f"Measured: {time.strftime('%Y-%m-%d %H:%M')}. {rounds} rounds of {seconds:g} s, the topics in "
            f"turn "
            f"(order reversed every other round), medians; one partition led by broker 2, confluent-kafka "
            f"with acks=all and idempotence; broker.session.timeout.ms {session_timeout_ms}, "
            f"broker.heartbeat.interval.ms {heartbeat_interval_ms(session_timeout_ms)}.\n\n")
    text += ("| topic | acks=all messages/s (1000 B, linger 5 ms) | end-to-end p50 us | end-to-end p99 us |\n"
             "| --- | ---: | ---: | ---: |\n")
    for t in ("rf1", "rf3"):
        text += f"| {t} | {med[t]:,.0f} | {_pct(lat[t], 50):,.0f} | {_pct(lat[t], 99):,.0f} |\n"
    text += (f"\nReplication factor 3 against 1: {med['rf3'] / med['rf1']:.2f}x the throughput, "
             f"{_pct(lat['rf3'], 99) / _pct(lat['rf1'], 99):.2f}x the end-to-end p99.\n\n")
    text += ("| failover of rf3's leader | median ms | each round, ms |\n| --- | ---: | --- |\n"
             f"| SIGKILL (detected by the session timeout) | {statistics.median(kill) * 1000:,.0f} | "
             f"{', '.join(f'{k * 1000:,.0f}' for k in kill)} |\n"
             f"| graceful stop (controlled shutdown) | {statistics.median(graceful) * 1000:,.0f} | "
             f"{', '.join(f'{g * 1000:,.0f}' for g in graceful)} |\n")
    ok = statistics.median(graceful) < 1.0
    text += (f"\nGoals:\n\n- time from a graceful stop to the first successful produce under 1 s: "
             f"{statistics.median(graceful) * 1000:,.0f} ms, {'met' if ok else 'NOT met'}\n")
    return text
