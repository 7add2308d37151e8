"""Producer ids on real ``kafkalite broker`` processes: broker 1 runs the controller (reached on its
CONTROLLER listener), broker 2 gets its blocks from it over the network. Ids stay distinct across
both brokers and across a restart of both, and real idempotent producers (kafka-python's defaults,
confluent-kafka with enable.idempotence) get one."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from kafkalite.protocol import ApiKey
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import init_producer_id as ipi
from kafkalite.server.coordinator.producer_id_manager import COORDINATOR_LOAD_IN_PROGRESS
from tests.support.broker_process import BrokerProcess, free_port
from tests.support.wait import wait_for
from tests.support.wire_client import Client

pytestmark = pytest.mark.integration


BLOCK = 1000  # Kafka's producer id block size


@contextmanager
def two_processes(tmp: Path, cport: int) -> Iterator[tuple[BrokerProcess, BrokerProcess]]:
    """Broker 1 (the controller, CONTROLLER listener on ``cport``) and broker 2, both registered."""
    brokers: list[BrokerProcess] = []
    try:
        port = free_port()
        one = BrokerProcess(
            tmp / "broker-1", f"listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{cport}",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "controller.listener.names=CONTROLLER", f"controller.quorum.bootstrap.servers=127.0.0.1:{cport}",
            node_id=1)
        one.port = port
        brokers.append(one)
        brokers.append(BrokerProcess(tmp / "broker-2",
                                     f"controller.quorum.bootstrap.servers=127.0.0.1:{cport}", node_id=2))
        for b in brokers:
            # "is up" is printed once the broker is registered (it has a broker epoch).
            assert wait_for(lambda b=b: any(" is up: " in line for line in list(b.lines)), timeout=30), \
                "\n".join(b.lines)
        yield brokers[0], brokers[1]
    finally:
        for b in brokers:
            b.stop()


def new_id(c: Client) -> int:
    """A producer id, retried while the broker has none yet, as clients retry."""
    answers = []

    def answered() -> bool:
        answers.append(c.call(ApiKey.INIT_PRODUCER_ID, 4, ipi.REQUEST(transactional_id=None,
                                                                      transaction_timeout_ms=60000)))
        return answers[-1].error_code != COORDINATOR_LOAD_IN_PROGRESS

    assert wait_for(answered, timeout=10)
    assert (answers[-1].error_code, answers[-1].producer_epoch) == (E.NONE, 0)
    return int(answers[-1].producer_id)


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    with two_processes(tmp_path_factory.mktemp("producer-ids"), free_port()) as brokers:
        yield brokers


def test_many_ids_on_both_brokers_are_distinct(pair):
    one, two = pair
    ids: list[int] = []
    with Client("127.0.0.1", one.port) as c1, Client("127.0.0.1", two.port) as c2:
        # More than a block on each, interleaved: both brokers go on to further blocks.
        for _ in range(BLOCK + 200):
            ids.append(new_id(c1))
            ids.append(new_id(c2))
    assert len(set(ids)) == len(ids) == 2 * (BLOCK + 200)
    assert min(ids) >= 0
    # Blocks are whole and handed out in order: the ids cover at least three distinct blocks.
    assert len({i // BLOCK for i in ids}) >= 3


def test_kafka_python_idempotent_producer_gets_an_id(pair):
    from kafka import KafkaProducer

    _one, two = pair
    producer = KafkaProducer(bootstrap_servers=f"127.0.0.1:{two.port}", request_timeout_ms=20000)
    try:
        manager = producer._transaction_manager  # idempotence is kafka-python's default
        assert manager is not None and not manager.is_transactional()
        assert wait_for(manager.has_producer_id, timeout=20)
        got = manager.producer_id_and_epoch
        assert got.producer_id >= 0 and got.epoch == 0
    finally:
        producer.close(timeout=5)


def test_confluent_kafka_idempotent_producer_gets_an_id(pair):
    from confluent_kafka import Producer

    _one, two = pair
    stats: list[dict] = []
    producer = Producer({"bootstrap.servers": f"127.0.0.1:{two.port}", "enable.idempotence": True,
                         "statistics.interval.ms": 100, "stats_cb": lambda s: stats.append(json.loads(s))})

    def assigned() -> bool:
        producer.poll(0.05)  # serves the statistics callback
        return bool(stats) and stats[-1].get("eos", {}).get("idemp_state") == "Assigned"

    try:
        assert wait_for(assigned, timeout=20)
        eos = stats[-1]["eos"]
        assert eos["producer_id"] >= 0 and eos["producer_epoch"] == 0
    finally:
        producer.flush(5)


def test_ids_after_restarting_both_brokers_are_above_every_earlier_one(tmp_path):
    cport = free_port()
    with two_processes(tmp_path, cport) as (one, two):
        with Client("127.0.0.1", one.port) as c1, Client("127.0.0.1", two.port) as c2:
            before = [new_id(c) for c in (c1, c2) for _ in range(10)]
    with two_processes(tmp_path, cport) as (one, two):
        with Client("127.0.0.1", one.port) as c1, Client("127.0.0.1", two.port) as c2:
            after = [new_id(c) for c in (c1, c2) for _ in range(10)]
        logged = [line for line in one.lines if re.search(r"Broker \d gets producer ids", line)]
    assert min(after) > max(before)
    # Both brokers' blocks came from the restarted controller, above the two given before.
    assert len(logged) == 2 and min(after) >= 2 * BLOCK
