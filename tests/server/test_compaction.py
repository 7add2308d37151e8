"""Compaction through a running broker and real clients: a compacted topic created with
CreateTopics keeps the last value of each key once its cleaner thread ran, consumers read it
so, and a record without a key is refused."""

from __future__ import annotations

import pytest

from kafkalite.protocol import error_codes as E
from kafkalite.storage.checkpoint import TopicPartition
from tests.support.brokers import running_broker
from tests.support.wait import wait_for

pytestmark = pytest.mark.integration


def consume_all(bootstrap: str, topic: str, end: int) -> dict[int, tuple[bytes, bytes | None]]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        seen: dict[int, tuple[bytes, bytes | None]] = {}
        last = -1
        while last < end - 1:
            msg = consumer.poll(10)
            assert msg is not None, f"nothing after offset {last}"
            assert msg.error() is None, msg.error()
            seen[msg.offset()] = (msg.key(), msg.value())
            last = msg.offset()
        return seen
    finally:
        consumer.close()


def test_a_compacted_topic_keeps_the_last_value_of_each_key_for_consumers(tmp_path):
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    with running_broker(tmp_path, **{"log.cleaner.backoff.ms": "50"}) as broker:
        bootstrap = f"127.0.0.1:{broker.bound_port('PLAINTEXT')}"
        admin = AdminClient({"bootstrap.servers": bootstrap})
        topic = NewTopic("table", 1, 1, config={"cleanup.policy": "compact", "segment.bytes": "2048",
                                                "min.cleanable.dirty.ratio": "0.01",
                                                "delete.retention.ms": "3600000"})
        admin.create_topics([topic])["table"].result(30)
        # Batches smaller than a segment (segment.bytes is tiny here so that there are many).
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "acks": "all",
                             "batch.num.messages": 10})
        written, failed = [], []
        for i in range(300):
            key = b"user-%d" % (i % 10)
            value = None if i == 295 else b"v%d" % i  # user-5's last record: a tombstone
            producer.produce("table", value=value, key=key, partition=0,
                             on_delivery=lambda err, _m: err is not None and failed.append(err))
            written.append((key, value))
            producer.poll(0)
        assert producer.flush(30) == 0 and not failed, failed[:3]
        log = broker.log_manager.get_log("table", 0)
        assert log is not None
        cleaner, log_dir = broker.log_manager.cleaner, log.dir.parent

        def cleaned_to_the_active_segment() -> bool:
            end = cleaner.cleaned_offset(log_dir, TopicPartition("table", 0))
            return end == log.segments()[-1].base_offset

        # The cleaner thread compacts everything below the active segment.
        assert wait_for(cleaned_to_the_active_segment, timeout=30)
        seen = consume_all(bootstrap, "table", len(written))
        active_base = log.segments()[-1].base_offset
        # Below the active segment, a record stays only if no later one of its key is there too.
        last_below = {key: offset for offset, (key, _) in enumerate(written) if offset < active_base}
        for offset, (key, value) in enumerate(written):
            if offset >= active_base or offset == last_below[key]:
                assert seen[offset] == (key, value)  # the tombstone too, within delete.retention.ms
            else:
                assert offset not in seen
        assert len(seen) < 100

        keyless = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "acks": "all", "retries": 0})
        errors = []
        keyless.produce("table", value=b"no key", partition=0, on_delivery=lambda err, _m: errors.append(err))
        keyless.flush(30)
        assert len(errors) == 1 and errors[0] is not None
        assert errors[0].code() == E.INVALID_RECORD, errors[0]
