"""A real broker's network threads and handler pool resized live (issue 28) under 200 pipelined
Metadata connections and a confluent-kafka producer: every request answered in order, every
record acknowledged and read back, the broker's own connections (its lifecycle and controller
channel on the inter-broker listener) moved too."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import metadata
from tests.support.brokers import create, running_broker
from tests.support.pipelined_load import PipelinedLoad
from tests.support.real_clients import confluent_consume
from tests.support.wait import wait_for

pytestmark = pytest.mark.integration


def test_network_and_io_threads_resized_under_metadata_load_and_a_producer(tmp_path):
    with running_broker(tmp_path, num_network_threads="3", num_io_threads="4") as broker:
        ss, pool = broker.socket_server, broker.pools[-1]
        assert create(broker, "resized", [1]).error_code == 0
        bootstrap = f"127.0.0.1:{broker.bound_port('PLAINTEXT')}"
        resized = threading.Event()
        delivered: list[int] = []
        failures: list[str] = []

        def produce() -> None:
            """acks=all records numbered 0, 1, ... until the resizes are done (and at least 500)."""
            from confluent_kafka import Producer

            def report(err: Any, msg: Any) -> None:
                if err is not None:
                    failures.append(str(err))
                else:
                    delivered.append(int(msg.value()))

            producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 1,
                                 "enable.idempotence": True})
            n = 0
            while not resized.is_set() or n < 500:
                producer.produce("resized", value=b"%d" % n, partition=0, on_delivery=report)
                n += 1
                producer.poll(0.001)
            if producer.flush(60) != 0:
                failures.append("records left undelivered")
            close = getattr(producer, "close", None)  # Producer.close is recent in confluent-kafka
            if close is not None:
                close()

        load = PipelinedLoad(ss.bound_address("PLAINTEXT"), connections=200, in_flight=3, reconnect_every=30,
                             api_key=ApiKey.METADATA, version=9,
                             body=metadata.REQUEST(topics=None, allow_auto_topic_creation=False)).start()
        producer = threading.Thread(target=produce, name="test-producer", daemon=True)
        producer.start()
        old = broker.config.values
        try:
            assert wait_for(lambda: load.min_answered() >= 3 and len(delivered) > 100, timeout=60), \
                (load.errors, failures)
            for network, io in [(5, 8), (2, 4), (1, 2)]:
                new = dict(old, **{"num.network.threads": network, "num.io.threads": io})
                for component in (ss, pool):
                    component.validate_reconfiguration(new)
                for component in (ss, pool):
                    component.reconfigure(old, new)
                old = new
                mark, records = load.answered, len(delivered)
                assert wait_for(lambda mark=mark, records=records: load.answered > mark + 1500
                                and len(delivered) > records + 100 and not load.errors,
                                timeout=60), (load.errors, failures)
                for name in ("PLAINTEXT", "INTERNAL"):
                    assert ss.processor_count(name) == network
                assert len(pool.threads) == io
            assert wait_for(lambda: len(ss.processors) == 2, timeout=30)  # one per listener
            assert wait_for(lambda: not any(p.is_alive() for p in ss.retired_processors))
        finally:
            resized.set()
            finished = load.stop()
            producer.join(120)
        assert finished and not load.errors, load.errors[:10]
        assert load.sent == load.answered
        assert len(ss.retired_processors) == 8  # 5 → 2 → 1 on two listeners
        assert sum(p.connections_handed_off for p in ss.retired_processors) > 0
        assert not producer.is_alive() and not failures, failures[:5]
        # Every record acknowledged, once, in the order produced, and read back so.
        assert delivered == list(range(len(delivered)))
        records = confluent_consume(bootstrap, "resized", [0], len(delivered))
        assert [int(r.value) for r in records] == delivered
        # The broker's own connections moved as well: a topic created now goes through the
        # controller and its push back to this broker.
        assert create(broker, "after-resizes", [1]).error_code == 0
        assert wait_for(lambda: "after-resizes" in broker.metadata_cache.snapshot.topics)
