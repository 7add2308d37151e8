"""The controller's side of producer ids (KIP-730): AllocateProducerIds gives consecutive blocks
of 1000 ids, the next block's start is committed to the metadata log before the answer (a
ProducerIdsRecord: no controller after it repeats an id), and a broker it does not know, or with
another epoch, is refused."""

from __future__ import annotations

import pytest

from kafkalite.controller import records as R
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import allocate_producer_ids as ap
from kafkalite.protocol.messages import api_versions
from tests.support.brokers import running_broker
from tests.support.fake_raft import MetadataLog
from tests.support.wait import wait_for
from tests.support.wire_client import Client


def allocate(c: Client, broker_id: int, epoch: int):
    return c.call(ApiKey.ALLOCATE_PRODUCER_IDS, 0, ap.REQUEST(broker_id=broker_id, broker_epoch=epoch))


def own_block_taken(broker) -> bool:
    # The broker's own manager takes one block at registration: once it has, nothing else asks
    # the controller while a test does, so the blocks a test gets are exactly predictable.
    return wait_for(lambda: broker.producer_ids.blocks_received == 1, timeout=10)


@pytest.mark.integration
def test_blocks_are_consecutive_and_of_a_thousand_ids(tmp_path):
    with running_broker(tmp_path) as broker:
        assert own_block_taken(broker)
        epoch = broker.lifecycle.broker_epoch
        with Client("127.0.0.1", broker.bound_port("INTERNAL")) as c:
            got = [allocate(c, 1, epoch) for _ in range(3)]
        assert broker.controller.store.next_producer_id() == 4000
    assert [(r.error_code, r.producer_id_start, r.producer_id_len) for r in got] == [
        (E.NONE, 1000, 1000), (E.NONE, 2000, 1000), (E.NONE, 3000, 1000)]


@pytest.mark.integration
def test_the_next_block_survives_a_controller_restart(tmp_path):
    with running_broker(tmp_path) as broker:
        assert own_block_taken(broker)
        with Client("127.0.0.1", broker.bound_port("INTERNAL")) as c:
            before = allocate(c, 1, broker.lifecycle.broker_epoch)
    assert (before.error_code, before.producer_id_start) == (E.NONE, 1000)
    with running_broker(tmp_path) as again:
        assert own_block_taken(again)
        # The restarted broker's own block comes after every block given before the restart.
        assert again.producer_ids.generate() == 2000
        with Client("127.0.0.1", again.bound_port("INTERNAL")) as c:
            after = allocate(c, 1, again.lifecycle.broker_epoch)
    assert (after.error_code, after.producer_id_start, after.producer_id_len) == (E.NONE, 3000, 1000)


def test_the_log_keeps_the_next_block_for_the_next_controller():
    log = MetadataLog()
    store = log.store()
    assert [store.allocate_producer_ids(1000, 1, 7) for _ in range(2)] == [0, 1000]
    assert log.records()[-1] == R.PRODUCER_IDS_RECORD(broker_id=1, broker_epoch=7, next_producer_id=2000)
    store = log.store()
    assert store.next_producer_id() == 2000
    assert store.allocate_producer_ids(1000) == 2000


@pytest.mark.integration
def test_an_unknown_broker_or_another_epoch_is_a_stale_broker_epoch(tmp_path):
    with running_broker(tmp_path) as broker:
        assert own_block_taken(broker)
        epoch = broker.lifecycle.broker_epoch
        with Client("127.0.0.1", broker.bound_port("INTERNAL")) as c:
            refused = [allocate(c, 1, epoch + 1), allocate(c, 1, epoch - 1), allocate(c, 1, -1),
                       allocate(c, 99, epoch)]
            # Nothing was given to them: the next block is still the one after the broker's own.
            assert broker.controller.store.next_producer_id() == 1000
            assert allocate(c, 1, epoch).producer_id_start == 1000
    assert [(r.error_code, r.producer_id_start, r.producer_id_len) for r in refused] == [
        (E.STALE_BROKER_EPOCH, 0, 0)] * 4


@pytest.mark.integration
def test_served_on_the_controllers_privileged_listener_only(tmp_path):
    with running_broker(tmp_path) as broker:
        served = {}
        for listener in ("PLAINTEXT", "INTERNAL"):
            with Client("127.0.0.1", broker.bound_port(listener)) as c:
                response = c.call(ApiKey.API_VERSIONS, 3, api_versions.REQUEST(
                    client_software_name="test", client_software_version="1"))
                served[listener] = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
    assert ApiKey.ALLOCATE_PRODUCER_IDS not in served["PLAINTEXT"]
    assert served["INTERNAL"][ApiKey.ALLOCATE_PRODUCER_IDS] == (0, 0)
    # InitProducerId is for clients: every listener.
    assert served["PLAINTEXT"][ApiKey.INIT_PRODUCER_ID] == (0, 5)
    assert served["INTERNAL"][ApiKey.INIT_PRODUCER_ID] == (0, 5)
