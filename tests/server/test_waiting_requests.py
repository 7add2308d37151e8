"""Requests that wait hold no handler thread (issue 15, the purgatory): with one io thread, a
CreateTopics waiting for the controller does not keep Metadata from being answered; it is answered
when the controller and the metadata catch up, or REQUEST_TIMED_OUT after its timeout."""

from __future__ import annotations

import threading

import pytest

from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import create_topics as ct
from kafkalite.protocol.messages import delete_topics as dt
from kafkalite.protocol.messages import metadata
from tests.support.brokers import running_broker
from tests.support.prometheus import scrape, value
from tests.support.wait import wait_for
from tests.support.wire_client import Client

pytestmark = pytest.mark.integration


def create_request(name: str, timeout_ms: int):
    R = ct.REQUEST
    return R(timeout_ms=timeout_ms, topics=[R["topics"](name=name, num_partitions=2, replication_factor=1)])


def test_a_waiting_create_topics_holds_no_handler_thread(tmp_path):
    with running_broker(tmp_path, num_io_threads="1", metrics_port="0") as broker:
        assert broker.controller is not None and broker.topic_purgatory is not None
        gate = threading.Event()
        broker.controller.submit(lambda: gate.wait(20))  # the controller's event thread is busy
        with Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as waiting, \
                Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as other:
            corr = waiting.send(19, 7, create_request("parked", 30000))
            assert wait_for(lambda: broker.topic_purgatory.watched() == 1)
            m = scrape(broker.metrics_server.port)
            for name in ("purgatorysize", "numdelayedoperations"):
                family = f"kafka_server_delayedoperationpurgatory_{name}"
                assert value(m[family], family, delayedOperation="topic") == 1
            # The only io thread is free: another connection's Metadata is answered meanwhile.
            assert other.call(3, 12, metadata.REQUEST(topics=None)).topics == []
            gate.set()
            got, response = waiting.receive(19, 7)
            assert got == corr and response.topics[0].error_code == E.NONE
            assert "parked" in {t.name for t in other.call(3, 12, metadata.REQUEST(topics=None)).topics}
            assert wait_for(lambda: broker.topic_purgatory.watched() == 0)
            # Deleting waits the same way, until the topic is gone from the metadata.
            R = dt.REQUEST
            deleted = waiting.call(20, 6, R(timeout_ms=10000, topics=[R["topics"](name="parked")]))
            assert deleted.responses[0].error_code == E.NONE
            assert other.call(3, 12, metadata.REQUEST(topics=None)).topics == []


def test_a_create_topics_past_its_timeout_is_answered_request_timed_out(tmp_path):
    with running_broker(tmp_path, num_io_threads="1") as broker:
        assert broker.controller is not None and broker.topic_purgatory is not None
        gate = threading.Event()
        broker.controller.submit(lambda: gate.wait(20))
        try:
            with Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as c:
                response = c.call(19, 7, create_request("late", 300))
                assert response.topics[0].error_code == E.REQUEST_TIMED_OUT
                assert broker.topic_purgatory.delayed() == 0 and broker.topic_purgatory.watched() == 0
        finally:
            gate.set()
