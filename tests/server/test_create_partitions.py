"""CreatePartitions over the wire, two brokers in-process: the controller's broker answers once its
metadata shows the new partitions (which can then be produced to), others answer NOT_CONTROLLER;
Kafka's refusals per topic."""

from __future__ import annotations

import pytest

from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import create_partitions as cp
from tests.support.brokers import connect, create, two_brokers
from tests.support.wait import wait_for

pytestmark = pytest.mark.integration


CREATE_PARTITIONS = 37


def request(*topics: tuple[str, int, list[list[int]] | None], validate_only: bool = False):
    R = cp.REQUEST
    T = R["topics"]
    return R(timeout_ms=10000, validate_only=validate_only, topics=[
        T(name=name, count=count,
          assignments=None if assignment is None else [T["assignments"](broker_ids=b) for b in assignment])
        for name, count, assignment in topics])


def call(broker, body, version: int = 3) -> dict[str, tuple[int, str | None]]:
    with connect(broker) as c:
        results = c.call(CREATE_PARTITIONS, version, body).results
    return {r.name: (r.error_code, r.error_message) for r in results}


def partitions(broker, topic: str) -> int:
    info = broker.metadata_cache.snapshot.topics.get(topic)
    return len(info.partitions) if info else 0


def test_confluent_kafka_adds_partitions_and_produces_to_a_new_one(tmp_path):
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewPartitions

    with two_brokers(tmp_path) as (one, two):
        assert create(one, "grow", [1]).error_code == E.NONE
        bootstrap = f"127.0.0.1:{two.bound_port('PLAINTEXT')}"  # the admin client finds the controller
        admin = AdminClient({"bootstrap.servers": bootstrap})
        futures = admin.create_partitions([NewPartitions("grow", 3)], request_timeout=20)
        assert futures["grow"].result(20) is None
        # Answered once the controller's broker shows them; broker 2 hears of them too.
        assert partitions(one, "grow") == 3
        assert wait_for(lambda: partitions(two, "grow") == 3, timeout=10)
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
        delivered = []
        producer.produce("grow", value=b"into the new one", partition=2,
                         on_delivery=lambda err, msg: delivered.append((err, msg.partition(), msg.offset())))
        assert producer.flush(20) == 0
        assert delivered == [(None, 2, 0)]
        leader = one.metadata_cache.snapshot.topics["grow"].partitions[2].leader
        hosting = one if leader == 1 else two
        assert hosting.replica_manager.get_partition("grow", 2).log.log_end_offset == 1


def test_an_assignment_places_the_new_partitions(tmp_path):
    with two_brokers(tmp_path) as (one, two):
        assert create(one, "placed", [1]).error_code == E.NONE
        assert call(one, request(("placed", 3, [[2], [1]]))) == {"placed": (E.NONE, None)}
        placed = one.metadata_cache.snapshot.topics["placed"].partitions
        assert [placed[p].replicas for p in range(3)] == [(1,), (2,), (1,)]
        assert wait_for(lambda: ("placed", 1) in two.replica_manager.partitions, timeout=10)


def test_refusals(tmp_path):
    with two_brokers(tmp_path) as (one, two):
        assert create(one, "t", [1]).error_code == E.NONE
        # A broker without the controller forwards it (as Kafka 4's brokers do), and answers
        # once its own metadata shows the new partition.
        assert call(two, request(("t", 2, None))) == {"t": (E.NONE, None)}
        assert 1 in two.metadata_cache.snapshot.topics["t"].partitions
        assert call(two, request(("t", 2, None))) == {"t": (E.INVALID_PARTITIONS,
                                                            "Topic already has 2 partitions.")}
        got = call(one, request(("t", 1, None), ("nope", 2, None), ("u", 2, None), ("u", 3, None)), version=0)
        assert got["t"] == (E.INVALID_PARTITIONS,
                            "Topic currently has 2 partitions, which is higher than the requested 1.")
        assert got["nope"] == (E.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'nope' does not exist.")
        assert got["u"] == (E.INVALID_REQUEST, "Duplicate topic in request.")
        assert call(one, request(("t", 3, [[3]]))) == {
            "t": (E.INVALID_REPLICA_ASSIGNMENT, "Unknown broker(s) in replica assignment: 3.")}
        assert call(one, request(("t", 3, None), validate_only=True)) == {"t": (E.NONE, None)}
        assert partitions(one, "t") == 2 and len(one.controller.context.partition_assignments["t"]) == 2
