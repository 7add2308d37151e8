"""The controller inside an in-process broker: topic deletion completes only once the replicas
have stopped (Kafka's TopicDeletionManager), and the store follows."""

from __future__ import annotations

import threading

from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import create_topics as ct
from kafkalite.protocol.messages import delete_topics as dt

from ..kafka_client import Client, wait_for
from ..server.conftest import running_broker


def create(c: Client, name: str, partitions: int = 2):
    R = ct.REQUEST
    return c.call(19, 7, R(timeout_ms=10000, topics=[
        R["topics"](name=name, num_partitions=partitions, replication_factor=1)])).topics[0]


def test_deletion_waits_for_stop_replica_and_then_frees_the_name(tmp_path):
    with running_broker(tmp_path) as broker:
        assert broker.lifecycle is not None and broker.lifecycle.registered.wait(10)
        controller = broker.controller
        gate = threading.Event()
        original = broker.apis.handlers[5]

        def slow_stop_replica(request):
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
