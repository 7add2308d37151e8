"""A broker with log.storage=memory: it serves Produce and Fetch, writes nothing under log.dirs
(the controller's store included), and its logs stay in its volume after it stops."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from kafkalite.storage.log_manager import LogManager
from kafkalite.storage.volume import MemoryVolume
from tests.support.brokers import running_broker

pytestmark = pytest.mark.integration


def _produce(servers: str, values: list[bytes]) -> None:
    producer = Producer({"bootstrap.servers": servers})
    for v in values:
        producer.produce("kept", v, partition=0)
    assert producer.flush(30) == 0


def _consume(servers: str, count: int) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": servers, "group.id": "m", "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition("kept", 0, 0)])
        got: list[bytes] = []
        for _ in range(300):
            m = consumer.poll(0.1)
            if m is not None and m.error() is None:
                got.append(m.value())
                if len(got) == count:
                    break
        return got
    finally:
        consumer.close()


def test_memory_storage_serves_and_writes_nothing(tmp_path):
    absent = tmp_path / "absent"
    with running_broker(tmp_path, log_dirs=str(absent), log_storage="memory") as broker:
        assert isinstance(broker.volume, MemoryVolume)
        servers = f"127.0.0.1:{broker.bound_port()}"
        _produce(servers, [b"a", b"b"])
        assert _consume(servers, 2) == [b"a", b"b"]
        volume = broker.volume
    assert not absent.exists()
    # The logs stay in the volume for a broker given it again (a test cluster's restarted
    # follower); the controller's store does not (broker 1 is never restarted there).
    logs = LogManager([absent], volume=volume)
    try:
        assert logs.get_log("kept", 0).log_end_offset == 2
    finally:
        logs.shutdown()
    assert not absent.exists()
