"""Transactions with real clients (issue 27): transactional producers of confluent-kafka,
kafka-python and aiokafka in one shape, consumers reading ``read_committed`` or
``read_uncommitted``, the broker a transactional id's coordinator is on, and the server the
tests run against.

The tests target a kafkalite broker process. ``KAFKALITE_TXN_TARGET=mock`` runs the ones that
can run there against librdkafka's mock cluster instead (a confluent-kafka client with
``test.mock.num.brokers`` in a process of its own, kafkalite_bench.data.mock_server), to check the
tests' client code against a server that serves transactions. The mock's gaps (librdkafka 2.16):
it writes COMMIT/ABORT markers but returns no aborted transactions in Fetch and answers the high
watermark as the LSO, so ``read_committed`` consumers see aborted records too; it does not fence
an older epoch of a transactional id; its COMMIT/ABORT batches fail aiokafka's CRC check
(aiokafka's consumers skip the check there); kafka-python 3.0 cannot bootstrap from it ("Unable
to decode response"), so its clients are not run there; it serves no CreateTopics (topics are
made by Metadata's auto-creation, 4 partitions); brokers cannot be killed from outside.
``Target.mock`` lets a test say which of its checks the mock cannot pass; every check runs
against kafkalite.

Every call is bounded in time and every client is closed."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from kafkalite.common.java import partition_for_key

from .broker_process import BrokerProcess
from .wait import wait_for, wait_for_value

TIMEOUT = 30.0
TOPIC_PARTITIONS_ON_MOCK = 4  # what the mock's auto-creation makes

# A single broker serving transactions: the internal topics' replication (Kafka's defaults, 3 and
# 2, are for three brokers or more, as in Kafka's single-broker sample configurations), fewer
# partitions than Kafka's 50 so that the first FindCoordinator's topic is made quickly, groups
# formed at once, and timed-out transactions looked for every 500 ms (Kafka: 10 s).
SINGLE_BROKER = ("transaction.state.log.replication.factor=1", "transaction.state.log.min.isr=1",
                 "transaction.state.log.num.partitions=5", "offsets.topic.replication.factor=1",
                 "offsets.topic.num.partitions=3", "group.initial.rebalance.delay.ms=0",
                 "transaction.abort.timed.out.transaction.cleanup.interval.ms=500")


def target_kind() -> str:
    kind = os.environ.get("KAFKALITE_TXN_TARGET", "kafkalite")
    if kind not in ("kafkalite", "mock"):
        raise ValueError(f"KAFKALITE_TXN_TARGET is kafkalite or mock, not {kind!r}")
    return kind


class Rec(NamedTuple):
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None


@dataclass
class Target:
    """The server a test runs against: a kafkalite broker process or librdkafka's mock cluster."""

    kind: str
    bootstrap: str
    broker: BrokerProcess | None = None
    log_dir: Path | None = None

    @property
    def mock(self) -> bool:
        return self.kind == "mock"

    def create_topic(self, name: str, partitions: int, replication_factor: int = 1) -> None:
        create_topic(self.bootstrap, name, partitions, replication_factor, mock=self.mock)


@contextlib.contextmanager
def mock_cluster(brokers: int = 1) -> Iterator[str]:
    """librdkafka's mock cluster in a process of its own; yields its bootstrap servers."""
    proc = subprocess.Popen([sys.executable, "-m", "kafkalite_bench.data.mock_server", str(brokers)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        addresses = []
        deadline = time.monotonic() + TIMEOUT
        for line in proc.stdout:  # it prints "ready" (or exits) within seconds
            line = line.strip()
            if line == "ready":
                break
            if m := re.match(r"^\d+ ([\d.]+:\d+)$", line):
                addresses.append(m.group(1))
            assert time.monotonic() < deadline, "the mock cluster did not start"
        assert len(addresses) == brokers, addresses
        yield ",".join(addresses)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        if proc.stdout is not None:
            proc.stdout.close()


@contextlib.contextmanager
def target(log_dir: Path, *overrides: str, node_id: int = 1) -> Iterator[Target]:
    """A kafkalite broker process in ``log_dir`` with SINGLE_BROKER and ``overrides`` (or the
    mock when KAFKALITE_TXN_TARGET=mock)."""
    if target_kind() == "mock":
        with mock_cluster(1) as bootstrap:
            yield Target("mock", bootstrap)
        return
    with BrokerProcess(log_dir, *SINGLE_BROKER, *overrides, node_id=node_id) as broker:
        yield Target("kafkalite", broker.bootstrap, broker, log_dir)


def create_topic(bootstrap: str, name: str, partitions: int, replication_factor: int = 1, *,
                 mock: bool = False) -> None:
    """CreateTopics (or, on the mock, Metadata's auto-creation), then wait until every partition
    has a leader."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    if not mock:
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic(name, partitions, replication_factor)],
                            operation_timeout=20)[name].result(TIMEOUT)
    producer = Producer({"bootstrap.servers": bootstrap})  # its Metadata may auto-create
    try:
        want = TOPIC_PARTITIONS_ON_MOCK if mock else partitions

        def led() -> Any:
            topic = producer.list_topics(name, timeout=10).topics.get(name)
            return (topic is not None and topic.error is None and len(topic.partitions) == want
                    and all(p.leader >= 0 for p in topic.partitions.values()))

        assert wait_for(led, timeout=TIMEOUT, interval=0.1), \
            f"topic {name} has no leaders: {producer.list_topics(name, timeout=10).topics.get(name)}"
    finally:
        producer.flush(5)


# --- what a test produces --------------------------------------------------------------------

@dataclass(frozen=True)
class Txn:
    """One transaction: ``values`` spread over ``partitions`` (value i to partitions[i % n]),
    committed or aborted."""

    values: tuple[bytes, ...]
    commit: bool
    partitions: tuple[int, ...] = (0,)

    def placed(self) -> list[tuple[int, bytes]]:
        return [(self.partitions[i % len(self.partitions)], v) for i, v in enumerate(self.values)]


def txns(tag: str, sizes_and_outcomes: Sequence[tuple[int, bool]],
         partitions: tuple[int, ...] = (0,)) -> list[Txn]:
    """Transactions with values ``<tag>-<n>-<c|a>-<i>``: a value says which transaction it was
    in and how that ended."""
    return [Txn(tuple(f"{tag}-{n}-{'c' if commit else 'a'}-{i}".encode() for i in range(size)), commit,
                partitions)
            for n, (size, commit) in enumerate(sizes_and_outcomes)]


def in_log_order(transactions: Sequence[Txn], committed_only: bool) -> list[bytes]:
    """The values a consumer reads, partition by partition, each in the order produced."""
    placed = [pv for t in transactions if t.commit or not committed_only for pv in t.placed()]
    return [v for _, v in sorted(placed, key=lambda pv: pv[0])]  # sorted() is stable


def committed_values(transactions: Sequence[Txn]) -> list[bytes]:
    return in_log_order(transactions, committed_only=True)


def all_values(transactions: Sequence[Txn]) -> list[bytes]:
    return in_log_order(transactions, committed_only=False)


# --- transactional producers -----------------------------------------------------------------

def confluent_transactions(bootstrap: str, topic: str, txn_id: str, transactions: Sequence[Txn],
                           **conf: Any) -> None:
    """init_transactions, then each transaction begun, produced (flushed before an abort, so that
    its records are in the log and the abort has something to abort) and committed or aborted."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 5,
                         **conf})
    try:
        producer.init_transactions(TIMEOUT)
        for t in transactions:
            producer.begin_transaction()
            for p, v in t.placed():
                produce_confluent(producer, topic, v, p)
            if t.commit:
                producer.commit_transaction(TIMEOUT)
            else:
                assert producer.flush(TIMEOUT) == 0
                producer.abort_transaction(TIMEOUT)
    finally:
        close_confluent(producer)


def produce_confluent(producer: Any, topic: str, value: bytes, partition: int) -> None:
    while True:
        try:
            producer.produce(topic, value, key=value, partition=partition)
            producer.poll(0)
            return
        except BufferError:  # the local queue is full: let deliveries make room
            producer.poll(0.05)


def close_confluent(client: Any) -> None:
    close = getattr(client, "close", None)  # Producer.close is recent in confluent-kafka
    if close is not None:
        close()


def kafka_python_transactions(bootstrap: str, topic: str, txn_id: str, transactions: Sequence[Txn],
                              **conf: Any) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=txn_id,
                             request_timeout_ms=int(TIMEOUT * 1000), max_block_ms=int(TIMEOUT * 1000),
                             **conf)
    try:
        producer.init_transactions()
        for t in transactions:
            producer.begin_transaction()
            futures = [producer.send(topic, value=v, key=v, partition=p) for p, v in t.placed()]
            if t.commit:
                producer.commit_transaction()
                for f in futures:
                    f.get(timeout=TIMEOUT)
            else:
                producer.flush(timeout=TIMEOUT)
                producer.abort_transaction()
    finally:
        producer.close(timeout=10)


def aiokafka_transactions(bootstrap: str, topic: str, txn_id: str, transactions: Sequence[Txn],
                          **conf: Any) -> None:
    from aiokafka import AIOKafkaProducer

    async def run() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=txn_id,
                                    request_timeout_ms=int(TIMEOUT * 1000), **conf)
        await producer.start()  # InitProducerId with the transactional id
        try:
            for t in transactions:
                await producer.begin_transaction()
                futures = [await producer.send(topic, value=v, key=v, partition=p) for p, v in t.placed()]
                await asyncio.gather(*futures)
                if t.commit:
                    await producer.commit_transaction()
                else:
                    await producer.abort_transaction()
        finally:
            await producer.stop()

    asyncio.run(asyncio.wait_for(run(), TIMEOUT * 2))


PRODUCERS: dict[str, Callable[..., None]] = {
    "confluent-kafka": confluent_transactions,
    "kafka-python": kafka_python_transactions,
    "aiokafka": aiokafka_transactions,
}


# --- consumers -------------------------------------------------------------------------------

def _values_seen(records: Sequence[Rec]) -> set[bytes]:
    return {r.value for r in records if r.value is not None}


def confluent_read(bootstrap: str, topic: str, partitions: Sequence[int], isolation: str,
                   until: Callable[[list[Rec]], bool], timeout: float = TIMEOUT) -> list[Rec]:
    """Records from the start of ``partitions`` until ``until(records)``; AssertionError after
    ``timeout``."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused-with-assign",
                         "enable.auto.commit": False, "enable.partition.eof": False,
                         "isolation.level": isolation})
    out: list[Rec] = []
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        deadline = time.monotonic() + timeout
        while not until(out):
            if time.monotonic() > deadline:
                raise AssertionError(f"confluent-kafka {isolation}: {len(out)} records in {timeout} s")
            for msg in consumer.consume(500, timeout=0.2):
                assert msg.error() is None, msg.error()
                out.append(Rec(int(msg.partition() or 0), int(msg.offset() or 0), msg.key(), msg.value()))
    finally:
        consumer.close()
    return out


def kafka_python_read(bootstrap: str, topic: str, partitions: Sequence[int], isolation: str,
                      until: Callable[[list[Rec]], bool], timeout: float = TIMEOUT) -> list[Rec]:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                             isolation_level=isolation, request_timeout_ms=int(TIMEOUT * 1000))
    out: list[Rec] = []
    try:
        tps = [TopicPartition(topic, p) for p in partitions]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        deadline = time.monotonic() + timeout
        while not until(out):
            if time.monotonic() > deadline:
                raise AssertionError(f"kafka-python {isolation}: {len(out)} records in {timeout} s")
            for records in consumer.poll(timeout_ms=200).values():
                out += [Rec(r.partition, r.offset, r.key, r.value) for r in records]
    finally:
        consumer.close()
    return out


def aiokafka_read(bootstrap: str, topic: str, partitions: Sequence[int], isolation: str,
                  until: Callable[[list[Rec]], bool], timeout: float = TIMEOUT) -> list[Rec]:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    # The mock's COMMIT/ABORT batches fail aiokafka's CRC check: it is kept for kafkalite only.
    check_crcs = target_kind() != "mock"

    async def run() -> list[Rec]:
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                                    isolation_level=isolation, request_timeout_ms=int(TIMEOUT * 1000),
                                    check_crcs=check_crcs)
        await consumer.start()
        out: list[Rec] = []
        try:
            tps = [TopicPartition(topic, p) for p in partitions]
            consumer.assign(tps)
            await consumer.seek_to_beginning(*tps)
            while not until(out):
                batches = await consumer.getmany(*tps, timeout_ms=200)
                out += [Rec(r.partition, r.offset, r.key, r.value)
                        for records in batches.values() for r in records]
        finally:
            await consumer.stop()
        return out

    try:
        return asyncio.run(asyncio.wait_for(run(), timeout))
    except TimeoutError:
        raise AssertionError(f"aiokafka {isolation}: not done in {timeout} s") from None


CONSUMERS: dict[str, Callable[..., list[Rec]]] = {
    "confluent-kafka": confluent_read,
    "kafka-python": kafka_python_read,
    "aiokafka": aiokafka_read,
}


def clients_for(kind: str) -> list[str]:
    """The clients a test runs on a target: all three on kafkalite, kafka-python left out on the
    mock (it cannot bootstrap from it)."""
    return [c for c in sorted(CONSUMERS) if kind != "mock" or c != "kafka-python"]


def seen_all(values: Sequence[bytes]) -> Callable[[list[Rec]], bool]:
    """``until`` for a read: every one of ``values`` has been read."""
    want = set(values)
    return lambda records: want <= _values_seen(records)


def read_values(consumer: str, bootstrap: str, topic: str, partitions: Sequence[int], isolation: str,
                last: Sequence[bytes], timeout: float = TIMEOUT) -> list[bytes]:
    """The values ``consumer`` reads with ``isolation`` up to and including every one of ``last``
    (values produced after whatever the test checks, so that reading them means reading past it),
    in partition and offset order."""
    records = CONSUMERS[consumer](bootstrap, topic, partitions, isolation, seen_all(last), timeout)
    records.sort(key=lambda r: (r.partition, r.offset))
    return [r.value for r in records if r.value is not None]


# --- coordinators ----------------------------------------------------------------------------

TRANSACTION_STATE = "__transaction_state"


def transaction_state_partition(txn_id: str, partitions: int = 50) -> int:
    """Kafka's TransactionStateManager.partitionFor: Utils.abs(txn_id.hashCode()) % partitions."""
    return partition_for_key(txn_id, partitions)


def find_transaction_coordinator(bootstrap: str, txn_id: str, timeout: float = TIMEOUT) -> int:
    """The node id FindCoordinator (key type 1, TRANSACTION) answers for ``txn_id``, retried while
    the answer is an error (the coordinator loading or moving)."""
    from kafkalite.clients import BlockingClient
    from kafkalite.protocol.api_keys import ApiKey
    from kafkalite.protocol.messages import find_coordinator

    R = find_coordinator.REQUEST
    last: Any = None

    def ask() -> int | None:
        """The coordinator's node id, from the first broker that answers without an error."""
        nonlocal last
        for address in bootstrap.split(","):
            host, port = address.rsplit(":", 1)
            try:
                client = BlockingClient(host, int(port), "txn-tests", 10)
            except OSError:
                continue  # this broker is down: ask another
            try:
                # v2: one key (v4 batches them; the mock serves FindCoordinator up to v3)
                answer = client.send_and_receive(ApiKey.FIND_COORDINATOR, 2, R(key=txn_id, key_type=1))
            except OSError:
                continue
            finally:
                client.close()
            last = answer
            if answer.error_code == 0:
                return int(answer.node_id)
        return None

    node = wait_for_value(ask, timeout=timeout, interval=0.1)
    if node is not None:
        return node
    raise AssertionError(f"no transaction coordinator for {txn_id!r}: {last}")


def partition_dir(log_dir: Path, topic: str, partition: int) -> Path:
    return log_dir / f"{topic}-{partition}"


def txnindex_files(log_dir: Path, topic: str, partition: int) -> list[Path]:
    """The partition's ``.txnindex`` files that hold entries (Kafka's are created empty with each
    segment, or lazily; an empty one records no aborted transaction)."""
    return sorted(p for p in partition_dir(log_dir, topic, partition).glob("*.txnindex") if p.stat().st_size)


def lso_and_hw(bootstrap: str, topic: str, partition: int) -> tuple[int, int]:
    """(LSO, high watermark) as the partition's leader answers ListOffsets v7 LATEST with
    isolation_level 1 (read_committed) and 0, asked of each broker in turn until one leads it."""
    from kafkalite.clients import BlockingClient
    from kafkalite.protocol.api_keys import ApiKey
    from kafkalite.protocol.messages import list_offsets

    R = list_offsets.REQUEST

    def ask() -> tuple[int, int] | None:
        """(LSO, high watermark) from the first broker that leads the partition."""
        for address in bootstrap.split(","):
            host, port = address.rsplit(":", 1)
            ends = []
            try:
                client = BlockingClient(host, int(port), "txn-tests", 10)
            except OSError:
                continue
            try:
                for isolation in (1, 0):
                    answer = client.send_and_receive(ApiKey.LIST_OFFSETS, 7, R(
                        replica_id=-1, isolation_level=isolation, topics=[R["topics"](name=topic, partitions=[
                            R["topics"]["partitions"](partition_index=partition, current_leader_epoch=-1,
                                                      timestamp=-1)])]))
                    (p,) = answer.topics[0].partitions
                    if p.error_code == 0:
                        ends.append(int(p.offset))
            except OSError:
                continue
            finally:
                client.close()
            if len(ends) == 2:
                return ends[0], ends[1]
        return None

    found = wait_for_value(ask, timeout=TIMEOUT, interval=0.1)
    if found is not None:
        return found
    raise AssertionError(f"no leader of {topic}-{partition} answered ListOffsets")


# --- fencing ---------------------------------------------------------------------------------

def confluent_fence(bootstrap: str, topic: str, txn_id: str, first: Sequence[bytes],
                    second: Sequence[bytes]) -> BaseException | None:
    """The first producer begins a transaction and produces ``first``; a second producer with the
    same transactional id then initializes (bumping the epoch: the coordinator aborts the first's
    transaction) and commits ``second``. What the first's commit raised (None: it committed)."""
    from confluent_kafka import KafkaException, Producer

    conf = {"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 5}
    one, two = Producer(conf), Producer(conf)
    try:
        one.init_transactions(TIMEOUT)
        one.begin_transaction()
        for v in first:
            produce_confluent(one, topic, v, 0)
        assert one.flush(TIMEOUT) == 0
        two.init_transactions(TIMEOUT)
        two.begin_transaction()
        for v in second:
            produce_confluent(two, topic, v, 0)
        two.commit_transaction(TIMEOUT)
        try:
            produce_confluent(one, topic, b"after-the-fence", 0)
            one.commit_transaction(TIMEOUT)
        except KafkaException as e:
            return e
        return None
    finally:
        close_confluent(one)
        close_confluent(two)


def is_confluent_fenced(e: BaseException) -> bool:
    from confluent_kafka import KafkaError

    err = e.args[0] if e.args else None
    codes = {KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH}
    return isinstance(err, KafkaError) and err.fatal() and err.code() in codes


def kafka_python_fence(bootstrap: str, topic: str, txn_id: str, first: Sequence[bytes],
                       second: Sequence[bytes]) -> BaseException | None:
    from kafka import KafkaProducer
    from kafka.errors import KafkaError

    def producer() -> Any:
        return KafkaProducer(bootstrap_servers=bootstrap, transactional_id=txn_id,
                             request_timeout_ms=int(TIMEOUT * 1000), max_block_ms=int(TIMEOUT * 1000))

    one = producer()
    two = None
    try:
        one.init_transactions()
        one.begin_transaction()
        for v in first:
            one.send(topic, value=v, key=v, partition=0)
        one.flush(timeout=TIMEOUT)
        two = producer()
        two.init_transactions()
        two.begin_transaction()
        futures = [two.send(topic, value=v, key=v, partition=0) for v in second]
        two.commit_transaction()
        for f in futures:
            f.get(timeout=TIMEOUT)
        try:
            one.send(topic, value=b"after-the-fence", partition=0)
            one.commit_transaction()
        except KafkaError as e:
            return e
        return None
    finally:
        one.close(timeout=10)
        if two is not None:
            two.close(timeout=10)


def is_kafka_python_fenced(e: BaseException) -> bool:
    from kafka.errors import InvalidProducerEpochError, ProducerFencedError

    return isinstance(e, (ProducerFencedError, InvalidProducerEpochError))


def aiokafka_fence(bootstrap: str, topic: str, txn_id: str, first: Sequence[bytes],
                   second: Sequence[bytes]) -> BaseException | None:
    from aiokafka import AIOKafkaProducer
    from aiokafka.errors import KafkaError

    async def run() -> BaseException | None:
        def producer() -> Any:
            return AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=txn_id,
                                    request_timeout_ms=int(TIMEOUT * 1000))

        one, two = producer(), producer()
        await one.start()
        try:
            await one.begin_transaction()
            await asyncio.gather(*[await one.send(topic, value=v, key=v, partition=0) for v in first])
            await two.start()
            await two.begin_transaction()
            await asyncio.gather(*[await two.send(topic, value=v, key=v, partition=0) for v in second])
            await two.commit_transaction()
            try:
                await (await one.send(topic, value=b"after-the-fence", partition=0))
                await one.commit_transaction()
            except KafkaError as e:
                return e
            return None
        finally:
            await one.stop()
            await two.stop()

    return asyncio.run(asyncio.wait_for(run(), TIMEOUT * 3))


def is_aiokafka_fenced(e: BaseException) -> bool:
    from aiokafka.errors import InvalidProducerEpoch, ProducerFenced

    return isinstance(e, (ProducerFenced, InvalidProducerEpoch))


FENCES: dict[str, tuple[Callable[..., BaseException | None], Callable[[BaseException], bool]]] = {
    "confluent-kafka": (confluent_fence, is_confluent_fenced),
    "kafka-python": (kafka_python_fence, is_kafka_python_fenced),
    "aiokafka": (aiokafka_fence, is_aiokafka_fenced),
}
