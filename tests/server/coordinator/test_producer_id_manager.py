"""The broker's side of producer ids on an in-process broker: ProducerIdManager never makes a
request wait for the controller (COORDINATOR_LOAD_IN_PROGRESS while it has no ids), asks only with
this broker's current epoch, stops its thread; and InitProducerId answers every version and Kafka's
request checks (KIP-360 without a transactional id, an id without an epoch, an empty
transactional id)."""

from __future__ import annotations

import threading
import time

import pytest

from kafkalite.common.errors import ApiError
from kafkalite.protocol import ApiKey
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import init_producer_id as ipi
from kafkalite.server.coordinator.producer_id_manager import COORDINATOR_LOAD_IN_PROGRESS, ProducerIdManager
from kafkalite.server.handlers.producers import ProducerIdApis
from tests.support.broker_process import free_port
from tests.support.brokers import running_broker
from tests.support.wait import wait_for
from tests.support.wire_client import Client

pytestmark = pytest.mark.integration


def init_producer_id(c: Client, version: int = 5, transactional_id: str | None = None,
                     producer_id: int = -1, producer_epoch: int = -1):
    return c.call(ApiKey.INIT_PRODUCER_ID, version, ipi.REQUEST(
        transactional_id=transactional_id, transaction_timeout_ms=60000, producer_id=producer_id,
        producer_epoch=producer_epoch))


def manager_threads(broker_id: int) -> list[str]:
    name = f"broker-{broker_id}-producer-id-manager"
    return [t.name for t in threading.enumerate() if t.name == name]


def test_without_a_reachable_controller_ids_are_refused_at_once_and_the_thread_stops():
    manager = ProducerIdManager(41, lambda: 1, ("127.0.0.1", free_port()), timeout=5.0)
    manager.startup()
    try:
        assert wait_for(lambda: manager.failed_requests >= 2, timeout=10)  # it keeps trying
        started = time.monotonic()
        with pytest.raises(ApiError) as refused:
            manager.generate()
        assert time.monotonic() - started < 0.5  # not waiting for the controller
        assert refused.value.code == COORDINATOR_LOAD_IN_PROGRESS
        assert manager.blocks_received == 0
    finally:
        manager.shutdown()
    assert manager_threads(41) == []


def test_only_the_current_broker_epoch_gets_a_block(tmp_path):
    with running_broker(tmp_path) as broker:
        epoch = broker.lifecycle.broker_epoch
        assert wait_for(lambda: broker.producer_ids.blocks_received == 1, timeout=10)
        # The same broker id as the registered broker, asking with an epoch the controller
        # did not give: refused every time, no ids.
        wrong = [epoch + 1]
        manager = ProducerIdManager(1, lambda: wrong[0], ("127.0.0.1", broker.bound_port("INTERNAL")))
        manager.startup()
        try:
            assert wait_for(lambda: manager.failed_requests >= 2, timeout=10)
            with pytest.raises(ApiError):
                manager.generate()
            assert manager.blocks_received == 0
            assert broker.controller.store.next_producer_id() == 1000  # only the broker's own block
            wrong[0] = epoch  # as after registering again: the next try gets a block
            assert wait_for(lambda: manager.blocks_received == 1, timeout=10)
            assert manager.generate() == 1000
        finally:
            manager.shutdown()


def test_init_producer_id_waits_for_no_controller_when_the_broker_has_no_ids(tmp_path):
    with running_broker(tmp_path) as broker:
        apis = broker.apis.area(ProducerIdApis)
        # A manager whose controller never answers (nothing listens there).
        stranded = ProducerIdManager(1, lambda: 1, ("127.0.0.1", free_port()))
        stranded.startup()
        own, apis.producer_ids = apis.producer_ids, stranded
        try:
            with Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as c:
                answer = init_producer_id(c)
                assert (answer.error_code, answer.producer_id, answer.producer_epoch) == (
                    COORDINATOR_LOAD_IN_PROGRESS, -1, -1)
                apis.producer_ids = own
                assert wait_for(lambda: own.blocks_received == 1, timeout=10)
                assert init_producer_id(c).error_code == E.NONE  # what a client's retry gets
        finally:
            apis.producer_ids = own
            stranded.shutdown()


def test_every_version_gives_a_new_id_with_epoch_zero(tmp_path):
    with running_broker(tmp_path) as broker:
        assert wait_for(lambda: broker.producer_ids.blocks_received == 1, timeout=10)
        with Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as c:
            answers = [init_producer_id(c, version) for version in range(6)]
    assert [(a.error_code, a.producer_id, a.producer_epoch) for a in answers] == [
        (E.NONE, i, 0) for i in range(6)]


def test_kafkas_request_checks(tmp_path):
    with running_broker(tmp_path) as broker:
        assert wait_for(lambda: broker.producer_ids.blocks_received == 1, timeout=10)
        with Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as c:
            first = init_producer_id(c)
            # KIP-360 without a transactional id: Kafka's coordinator gives a new id, epoch 0.
            bumped = init_producer_id(c, producer_id=first.producer_id, producer_epoch=0)
            id_only = init_producer_id(c, producer_id=first.producer_id)
            epoch_only = init_producer_id(c, producer_epoch=3)
            empty = init_producer_id(c, transactional_id="")
            transactional = [init_producer_id(c, v, transactional_id="txn") for v in (0, 5)]
    assert (bumped.error_code, bumped.producer_epoch) == (E.NONE, 0)
    assert bumped.producer_id == first.producer_id + 1
    refused = [id_only, epoch_only, empty, *transactional]
    assert [(a.error_code, a.producer_id, a.producer_epoch) for a in refused] == [
        (E.INVALID_REQUEST, -1, -1), (E.INVALID_REQUEST, -1, -1), (E.INVALID_REQUEST, -1, -1),
        # A transactional id goes to the transaction coordinator: none here until __transaction_state
        # exists (a FindCoordinator creates it), so NOT_COORDINATOR, which clients retry.
        (E.NOT_COORDINATOR, -1, -1), (E.NOT_COORDINATOR, -1, -1)]


def test_the_broker_stops_its_manager_thread(tmp_path):
    with running_broker(tmp_path, node_id="5") as broker:
        assert wait_for(lambda: broker.producer_ids.blocks_received == 1, timeout=10)
        assert manager_threads(5) == ["broker-5-producer-id-manager"]
    assert manager_threads(5) == []


def test_the_next_block_comes_before_the_current_one_is_used_up(tmp_path):
    block = 1000  # Kafka's producer id block size
    with running_broker(tmp_path) as broker, Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as c:
        manager = broker.producer_ids
        assert wait_for(lambda: manager.has_next_block, timeout=10)
        first = init_producer_id(c).producer_id  # takes the first block into use
        assert not manager.has_next_block
        for _ in range(int(block * 0.9)):
            init_producer_id(c)
        # Past 90% of the block: the next one is asked for while ids remain.
        assert wait_for(lambda: manager.has_next_block, timeout=10)
        assert init_producer_id(c).producer_id < first + block
