"""The controller inside an in-process broker: topic deletion completes only once the replicas
have stopped (Kafka's TopicDeletionManager), and the metadata log follows."""

from __future__ import annotations

import logging
import threading

import pytest

from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import create_topics as ct
from kafkalite.protocol.messages import delete_topics as dt
from tests.support.brokers import running_broker
from tests.support.wait import wait_for
from tests.support.wire_client import Client

pytestmark = pytest.mark.integration


def create(c: Client, name: str, partitions: int = 2):
    R = ct.REQUEST
    return c.call(19, 7, R(timeout_ms=10000, topics=[
        R["topics"](name=name, num_partitions=partitions, replication_factor=1)])).topics[0]


def test_deletion_waits_for_stop_replica_and_then_frees_the_name(tmp_path):
    with running_broker(tmp_path) as broker:
        assert broker.lifecycle is not None and broker.lifecycle.registered.wait(10)
        controller = broker.controller
        gate, entered = threading.Event(), threading.Event()
        original = broker.apis.handlers[5]

        def slow_stop_replica(request):
            entered.set()
            gate.wait(10)
            return original(request)

        broker.apis.handlers[5] = slow_stop_replica
        with Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as c:
            assert create(c, "doomed").error_code == E.NONE
            topics = [dt.REQUEST["topics"](name="doomed")]
            deleted = c.call(20, 6, dt.REQUEST(timeout_ms=10000, topics=topics))
            assert deleted.responses[0].error_code == E.NONE  # gone from the broker's metadata
            # The replica has not answered its StopReplica yet: the deletion is still pending.
            assert controller.deleting() == ["doomed"]
            # Its handler holds it: the next request cannot be in the same batch, behind it.
            assert entered.wait(10)
            again = create(c, "doomed")
            assert again.error_code == E.TOPIC_ALREADY_EXISTS and "marked for deletion" in again.error_message
            gate.set()
            assert wait_for(lambda: controller.deleting() == [], timeout=10)
            assert "doomed" not in controller.context.topic_ids
            assert controller.store.load()[0] == {}
            assert create(c, "doomed").error_code == E.NONE


def test_delete_unknown_topic(tmp_path):
    with running_broker(tmp_path) as broker:
        assert broker.lifecycle.registered.wait(10)
        with Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as c:
            by_name = c.call(20, 5, dt.REQUEST(timeout_ms=1000, topic_names=["nope"]))
            import uuid

            by_id = c.call(20, 6, dt.REQUEST(timeout_ms=1000, topics=[
                dt.REQUEST["topics"](name=None, topic_id=uuid.UUID(int=5))]))
        assert by_name.responses[0].error_code == E.UNKNOWN_TOPIC_OR_PARTITION
        assert by_id.responses[0].error_code == E.UNKNOWN_TOPIC_ID


def test_refused_admin_requests_are_one_info_line_each_and_no_traceback(tmp_path, caplog):
    """A topic that exists, a topic that does not: ordinary answers, logged as Kafka logs them
    (one INFO line naming the request and its outcome), not as a controller failure."""
    caplog.set_level(logging.INFO, logger="kafkalite.controller")
    with running_broker(tmp_path) as broker:
        with Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as c:
            assert create(c, "x").error_code == E.NONE
            caplog.clear()
            assert create(c, "x").error_code == E.TOPIC_ALREADY_EXISTS
            gone = c.call(20, 5, dt.REQUEST(timeout_ms=1000, topic_names=["nope"]))
            assert gone.responses[0].error_code == E.UNKNOWN_TOPIC_OR_PARTITION
            records = [r for r in caplog.records if r.name == "kafkalite.controller"]
    # The controller's other business may log meanwhile (a block of producer ids for the broker):
    # what is asserted is the lines about these two requests, and nothing above INFO.
    about = [r for r in records if "'x'" in r.getMessage() or "'nope'" in r.getMessage()]
    assert [(r.levelname, r.getMessage()) for r in about] == [
        ("INFO", "Controller 1: CreateTopics of 'x' refused: TOPIC_ALREADY_EXISTS "
                 "(Topic 'x' already exists.)"),
        ("INFO", "Controller 1: DeleteTopics of 'nope' refused: UNKNOWN_TOPIC_OR_PARTITION "
                 "(This server does not host this topic-partition.)"),
    ]
    assert not [r for r in records if r.exc_info or r.exc_text or r.levelno > logging.INFO]
    assert "Traceback" not in caplog.text


def test_an_unexpected_failure_of_an_event_keeps_its_traceback(tmp_path, caplog):
    """A bug (any other exception) is still an ERROR with its traceback, naming the request."""
    with running_broker(tmp_path) as broker:
        controller = broker.controller

        def broken() -> None:
            raise RuntimeError("a bug")

        with pytest.raises(RuntimeError):
            controller.call(broken, what="CreateTopics of 'y'")
    (record,) = [r for r in caplog.records if r.name == "kafkalite.controller" and r.levelname == "ERROR"]
    assert record.getMessage() == "Controller 1: event failed (CreateTopics of 'y')"
    assert record.exc_info is not None and record.exc_info[0] is RuntimeError
