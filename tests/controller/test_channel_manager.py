"""The ControllerChannelManager against real brokers over loopback."""

from __future__ import annotations

import logging
import threading

import pytest

from kafkalite.controller.channel_manager import ControllerChannelManager
from kafkalite.controller.settings import ControllerSettings
from kafkalite.protocol.messages import update_metadata as um
from tests.support.broker_process import free_port
from tests.support.brokers import running_broker
from tests.support.wait import wait_for

pytestmark = pytest.mark.integration

TIMEOUT_MS = ControllerSettings(0, "PLAINTEXT").socket_timeout_ms  # controller.socket.timeout.ms's default


def update(epoch: int, topic: str):
    R = um.REQUEST
    state = R["topic_states"]["partition_states"]
    return R(controller_id=0, controller_epoch=epoch, broker_epoch=-1, live_brokers=[], topic_states=[
        R["topic_states"](topic_name=topic, partition_states=[
            state(partition_index=0, controller_epoch=epoch, leader=1, leader_epoch=0, isr=[1],
                  replicas=[1])])])


def test_requests_arrive_in_order_with_their_callbacks(tmp_path):
    with running_broker(tmp_path) as broker:
        manager = ControllerChannelManager(controller_id=0, socket_timeout_ms=TIMEOUT_MS)
        manager.startup({1: ("127.0.0.1", broker.bound_port("INTERNAL"))})
        try:
            thread = manager.thread_for(1)
            assert thread.name == "Controller-0-to-broker-1-send-thread" and not thread.daemon
            seen = []
            done = threading.Event()
            for i in range(1, 21):
                # Values and builders (called at send time, as Kafka queues them) both work.
                request = update(i, f"t{i}") if i % 2 else (lambda i=i: update(i, f"t{i}"))
                manager.send_request(1, 6, 8, request,
                                     lambda r, i=i: (seen.append((i, r.error_code)), i == 20 and done.set()))
            assert done.wait(10)
            assert seen == [(i, 0) for i in range(1, 21)]
            assert broker.replica_manager.controller_epoch == 20
            assert manager.sent[1] == 20 and manager.queue_time_ns[1] > 0
            assert wait_for(lambda: manager.queue_size(1) == 0)
        finally:
            manager.shutdown()
        assert not thread.is_alive()


def test_requests_queued_while_the_broker_is_down_all_arrive_in_order(tmp_path):
    port = free_port()
    manager = ControllerChannelManager(controller_id=0, socket_timeout_ms=2000)
    manager.startup({1: ("127.0.0.1", port)})
    try:
        seen = []
        for i in range(1, 6):
            manager.send_request(1, 6, 8, update(i, f"t{i}"), lambda r, i=i: seen.append(i))
        assert wait_for(lambda: manager.queue_size(1) == 5)
        assert seen == []
        with running_broker(tmp_path, listeners=f"PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:{port}") as b:
            assert wait_for(lambda: len(seen) == 5, timeout=15)
            assert seen == [1, 2, 3, 4, 5]
            assert sorted(b.metadata_cache.snapshot.topics) == ["t1", "t2", "t3", "t4", "t5"]
    finally:
        manager.shutdown()


def test_unknown_broker_is_logged_and_dropped(caplog):
    manager = ControllerChannelManager(controller_id=0, socket_timeout_ms=TIMEOUT_MS)
    manager.startup({})
    with caplog.at_level(logging.WARNING, logger="kafkalite.controller.channel_manager"):
        manager.send_request(9, 6, 8, update(1, "t"))
    assert "to broker 9, since it is offline" in caplog.text
    assert manager.total_queue_size == 0
    manager.shutdown()


def test_add_broker_only_if_absent_and_remove_drops_everything():
    port = free_port()  # nothing listens: items stay queued
    manager = ControllerChannelManager(controller_id=3, socket_timeout_ms=500)
    manager.startup({})
    try:
        manager.add_broker(1, ("127.0.0.1", port))
        thread = manager.thread_for(1)
        manager.add_broker(1, ("127.0.0.1", port + 1))
        assert manager.thread_for(1) is thread
        manager.send_request(1, 6, 8, update(1, "t"))
        manager.send_request(1, 6, 8, update(2, "t"))
        assert wait_for(lambda: manager.queue_size(1) == 2)
        manager.remove_broker(1)
        assert not thread.is_alive()
        assert manager.broker_ids == [] and manager.queue_size(1) == 0
        assert 1 not in manager.sent and 1 not in manager.queue_time_ns
    finally:
        manager.shutdown()


def test_a_request_that_is_not_a_control_request_is_refused_before_it_is_queued():
    import pytest

    from kafkalite.protocol import ApiKey
    from kafkalite.protocol.messages import metadata

    port = free_port()
    manager = ControllerChannelManager(controller_id=0, socket_timeout_ms=2000)
    manager.startup({1: ("127.0.0.1", port)})
    try:
        with pytest.raises(ValueError, match="Metadata is not a control request"):
            manager.send_request(1, ApiKey.METADATA, 12, metadata.REQUEST(topics=[]))
        assert manager.queue_size(1) == 0
        assert manager.thread_for(1).is_alive()  # the broker's send thread goes on
    finally:
        manager.shutdown()
