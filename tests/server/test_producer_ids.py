"""InitProducerId on running brokers: ids unique across the cluster (blocks from the controller),
the next block fetched before the current one runs out, transactions refused."""

from __future__ import annotations

from kafkalite.protocol import ApiKey
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import init_producer_id as ipi

from ..kafka_client import wait_for
from .two_brokers import connect, two_brokers

BLOCK = 1000  # Kafka's producer id block size


def init_producer_id(c, transactional_id=None, version=4):
    return c.call(ApiKey.INIT_PRODUCER_ID, version, ipi.REQUEST(
        transactional_id=transactional_id, transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1))


def test_ids_are_unique_across_brokers_and_blocks(tmp_path):
    with two_brokers(tmp_path) as (one, two):
        given: dict[int, list[int]] = {1: [], 2: []}
        with connect(one) as c1, connect(two) as c2:
            for broker in (one, two):
                assert wait_for(lambda b=broker: b.producer_ids.has_next_block, timeout=10)
            # More than a block on broker 1: it goes on to its next block without a gap in service.
            for i in range(BLOCK + 50):
                answer = init_producer_id(c1)
                assert (answer.error_code, answer.producer_epoch) == (E.NONE, 0), i
                given[1].append(answer.producer_id)
                if i % 10 == 0:
                    given[2].append(init_producer_id(c2).producer_id)
        ids = given[1] + given[2]
        assert len(set(ids)) == len(ids) and min(ids) >= 0
        assert one.producer_ids.blocks_received >= 2


def test_the_next_block_comes_before_the_current_one_is_used_up(tmp_path):
    with two_brokers(tmp_path) as (one, _two):
        manager = one.producer_ids
        with connect(one) as c:
            assert wait_for(lambda: manager.has_next_block, timeout=10)
            first = init_producer_id(c).producer_id  # takes the first block into use
            assert not manager.has_next_block
            for _ in range(int(BLOCK * 0.9)):
                init_producer_id(c)
            # Past 90% of the block: the next one is asked for while ids remain.
            assert wait_for(lambda: manager.has_next_block, timeout=10)
            assert init_producer_id(c).producer_id < first + BLOCK


def test_a_transactional_id_is_refused(tmp_path):
    with two_brokers(tmp_path) as (one, _two):
        with connect(one) as c:
            answer = init_producer_id(c, transactional_id="txn-1")
    assert answer.error_code == E.UNSUPPORTED_VERSION and answer.producer_id == -1
