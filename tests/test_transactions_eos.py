"""Exactly-once consume-transform-produce (issue 27) over 3 broker processes, topics with
replication factor 3: a confluent-kafka processor (a process of its own, so that it can be
SIGKILLed) reads ``eos-in`` read_committed in a group, writes each record to the same partition of
``eos-out`` and commits its consumed offsets in the same transaction (send_offsets_to_transaction).
Mid-run the processor is SIGKILLed and started again (its transactional id fences the dead one and
aborts its open transaction), and the broker coordinating its transactions (FindCoordinator key
type 1; the leader of __transaction_state's partition abs(hash(id)) % 50) is SIGKILLed and started
again (another broker takes the partition over and loads its state). Afterwards ``eos-out`` read
read_committed holds every input record exactly once, in input order per partition, and the
group's committed offsets are the input's end offsets.

``KAFKALITE_TXN_TARGET=mock`` runs it against librdkafka's mock cluster (3 brokers): no broker is
killed there; as its read_committed consumers also see aborted records and it keeps no offsets
committed in a transaction (a restarted processor reads from the start again), the output is
checked for every record at least once (see tests/support/transactions.py)."""

from __future__ import annotations

import collections
import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkalite.local import processes as C
from kafkalite.local.settings import free_base_port
from tests.support.transactions import (
    TOPIC_PARTITIONS_ON_MOCK,
    create_topic,
    find_transaction_coordinator,
    mock_cluster,
    produce_confluent,
    target_kind,
)
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

IN, OUT, GROUP = "eos-in", "eos-out", "eos-processor"
PARTITIONS, PER_PARTITION = 3, 600
SETTINGS = ("broker.heartbeat.interval.ms=200", "broker.session.timeout.ms=1500",
            "replica.lag.time.max.ms=3000", "replica.fetch.backoff.ms=100", "min.insync.replicas=2",
            "transaction.abort.timed.out.transaction.cleanup.interval.ms=1000",
            "offsets.topic.num.partitions=5")

PROCESSOR = textwrap.dedent("""
    import sys, time
    from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
    bootstrap, source, sink, group, txn_id, progress = sys.argv[1:7]
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "isolation.level": "read_committed",
                         "session.timeout.ms": 6000, "heartbeat.interval.ms": 500})
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 5,
                         "transaction.timeout.ms": 20000, "message.timeout.ms": 20000})
    producer.init_transactions(60)
    consumer.subscribe([source])

    def rewind():
        # Back to the group's committed offsets: what the aborted transaction read is read again.
        assigned = consumer.assignment()
        if assigned:
            for tp in consumer.committed(assigned, timeout=30):
                consumer.seek(TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else 0))

    with open(progress, "a", buffering=1) as out:
        while True:
            msgs = [m for m in consumer.consume(200, timeout=0.5) if m.error() is None]
            if not msgs:
                continue
            try:
                producer.begin_transaction()
                for m in msgs:
                    while True:
                        try:
                            producer.produce(sink, m.value(), key=m.key(), partition=m.partition())
                            break
                        except BufferError:
                            producer.poll(0.05)
                producer.send_offsets_to_transaction(
                    consumer.position(consumer.assignment()), consumer.consumer_group_metadata(), 60)
                while True:
                    try:
                        producer.commit_transaction(60)
                        break
                    except KafkaException as e:
                        if not e.args[0].retriable():
                            raise
                out.write("%d\\n" % len(msgs))
            except KafkaException as e:
                err = e.args[0]
                if err.fatal() or not err.txn_requires_abort():
                    print("fatal:", err, flush=True)
                    sys.exit(3)  # the test starts it again
                out.write("abort %s\\n" % err)
                producer.abort_transaction(60)
                rewind()
""")


class Processor:
    """The processor process, started again by a watcher thread whenever it exits on its own (a
    fatal error: the coordinator moved under it, say); ``kill`` SIGKILLs it on purpose."""

    def __init__(self, script: Path, bootstrap: str, txn_id: str, work: Path) -> None:
        self.args = [sys.executable, str(script), bootstrap, IN, OUT, GROUP, txn_id, str(work / "progress")]
        self.log = work / "processor.log"
        self.progress = work / "progress"
        self.proc: subprocess.Popen | None = None
        self.restarts = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.start()
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._watcher.start()

    def start(self) -> None:
        with self._lock, open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.args, stdout=log, stderr=subprocess.STDOUT)

    def _watch(self) -> None:
        while not self._stop.wait(0.2):
            with self._lock:
                exited = self.proc is not None and self.proc.poll() is not None
            if exited and not self._stop.is_set():
                self.restarts += 1
                self.start()

    def committed_records(self) -> int:
        try:
            lines = self.progress.read_text().splitlines()
        except FileNotFoundError:
            return 0
        return sum(int(x) for x in lines if x.isdigit())

    def kill(self) -> None:
        """SIGKILL, then start again (the watcher would, too: this does it at once)."""
        with self._lock:
            assert self.proc is not None
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
            self.proc = None
        self.start()

    def stop(self) -> None:
        self._stop.set()
        self._watcher.join(10)
        with self._lock:
            if self.proc is not None and self.proc.poll() is None:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)


@contextlib.contextmanager
def servers(work: Path) -> Iterator[tuple[str, list | None]]:
    """(bootstrap, nodes): 3 kafkalite broker processes, or the mock's 3 brokers (no nodes)."""
    if target_kind() == "mock":
        with mock_cluster(3) as bootstrap:
            yield bootstrap, None
        return
    directory = str(work / "cluster")
    base = free_base_port()
    nodes = C.start(3, directory, base, SETTINGS)
    try:
        assert C.wait_registered(nodes, 60), "cluster did not come up"
        yield ",".join(f"127.0.0.1:{n.client_port}" for n in nodes), nodes
    finally:
        C.stop(nodes)


def produce_input(bootstrap: str, start: int, count: int) -> None:
    """Values ``<partition>-<n>`` for n in [start, start + count) to each partition, acks=all."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5,
                         "message.timeout.ms": 60000})
    try:
        for n in range(start, start + count):
            for p in range(PARTITIONS):
                produce_confluent(producer, IN, b"%d-%d" % (p, n), p)
        assert producer.flush(60) == 0
    finally:
        getattr(producer, "close", lambda: None)()


def committed_offsets(bootstrap: str) -> dict[int, int]:
    """The group's committed offsets (OffsetFetch, require_stable as librdkafka asks)."""
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "enable.auto.commit": False})
    try:
        got = consumer.committed([TopicPartition(IN, p) for p in range(PARTITIONS)], timeout=10)
        return {tp.partition: tp.offset for tp in got}
    except KafkaException:
        return {}  # the coordinator moving, or offsets not stable yet: asked again
    finally:
        consumer.close()


def read_output(bootstrap: str, want: int, timeout: float = 60) -> dict[int, list[bytes]]:
    """eos-out read read_committed to its end (the LSO) once ``want`` records are read."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "eos-reader",
                         "enable.auto.commit": False, "isolation.level": "read_committed",
                         "enable.partition.eof": True})
    out: dict[int, list[bytes]] = collections.defaultdict(list)
    at_end: set[int] = set()
    try:
        consumer.assign([TopicPartition(OUT, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
        deadline = time.monotonic() + timeout
        while sum(map(len, out.values())) < want or len(at_end) < PARTITIONS:
            assert time.monotonic() < deadline, f"{sum(map(len, out.values()))} of {want} output records"
            for m in consumer.consume(500, timeout=0.2):
                if m.error() is not None:
                    assert m.error().code() == KafkaError._PARTITION_EOF, m.error()
                    at_end.add(m.partition())
                    continue
                at_end.discard(m.partition())
                out[m.partition()].append(m.value())
    finally:
        consumer.close()
    return out


def kill_and_restart(nodes: list, node_id: int) -> None:
    node = nodes[node_id - 1]
    node.process.send_signal(signal.SIGKILL)
    node.process.wait(10)
    node.process = C._spawn(node.args, node.log_path)
    assert C.wait_registered(nodes, 60), f"broker {node_id} did not come back"


def test_exactly_once_through_a_killed_processor_and_a_killed_coordinator(tmp_path):
    script = tmp_path / "processor.py"
    script.write_text(PROCESSOR)
    with servers(tmp_path) as (bootstrap, nodes):
        mock = nodes is None
        for topic in (IN, OUT):
            create_topic(bootstrap, topic, PARTITIONS, 3, mock=mock)
        partitions_made = TOPIC_PARTITIONS_ON_MOCK if mock else PARTITIONS
        assert partitions_made >= PARTITIONS
        # A transactional id whose coordinator is not broker 1 (the controller): killing it is a
        # failover of __transaction_state's partition, elected by the controller meanwhile.
        txn_id = next(f"eos-{i}" for i in range(100)
                      if mock or find_transaction_coordinator(bootstrap, f"eos-{i}", 60) != 1)
        half = PER_PARTITION // 2
        produce_input(bootstrap, 0, half)
        processor = Processor(script, bootstrap, txn_id, tmp_path)
        try:
            total = PARTITIONS * PER_PARTITION
            assert wait_for(lambda: processor.committed_records() >= total // 6, timeout=120), \
                processor.log.read_text()[-3000:]
            processor.kill()  # mid-run: with a transaction open, most likely
            produce_input(bootstrap, half, PER_PARTITION - half)
            done_before = processor.committed_records()
            assert wait_for(lambda: processor.committed_records() >= done_before + total // 6, timeout=120), \
                processor.log.read_text()[-3000:]
            if not mock:
                coordinator = find_transaction_coordinator(bootstrap, txn_id)
                kill_and_restart(nodes, coordinator)
            ends = {p: PER_PARTITION for p in range(PARTITIONS)}
            if mock:  # it keeps no offsets committed in a transaction (OffsetFetch answers none)
                assert wait_for(lambda: processor.committed_records() >= total, timeout=180, interval=0.5)
            else:
                assert wait_for(lambda: committed_offsets(bootstrap) == ends, timeout=180, interval=0.5), \
                    (committed_offsets(bootstrap), processor.log.read_text()[-3000:])
        finally:
            processor.stop()
        out = read_output(bootstrap, total)
        for p in range(PARTITIONS):
            want = [b"%d-%d" % (p, n) for n in range(PER_PARTITION)]
            if mock:  # aborted output is visible there: at least once, nothing foreign
                assert set(out[p]) == set(want), p
            else:
                assert out[p] == want, (p, [v for v, c in collections.Counter(out[p]).items() if c > 1][:5])
        if not mock:
            assert committed_offsets(bootstrap) == ends
