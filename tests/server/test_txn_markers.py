"""The data path of transactions over the wire, against a real broker with raw requests (no
transaction coordinator involved: the test plays it): a transactional batch, WriteTxnMarkers
ending it, what read_committed Fetch and ListOffsets see before and after, the markers' errors,
DescribeProducers, and TxnOffsetCommit's offsets made visible by a COMMIT marker in
__consumer_offsets (and loaded back after a restart)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kafkalite.common.java import partition_for_key
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import (
    describe_producers,
    find_coordinator,
    list_offsets,
    offset_fetch,
    txn_offset_commit,
    write_txn_markers,
)
from kafkalite.protocol.records import Record, build_batch
from kafkalite.server.handlers.produce import ProduceApis
from tests.support.brokers import running_broker
from tests.support.raw_requests import (
    create_topic,
    decode_batches,
    fetch_partitions,
    fetch_request,
    produce_request,
)
from tests.support.wait import wait_for
from tests.support.wire_client import Client

pytestmark = pytest.mark.integration

PRODUCE, FETCH, LIST_OFFSETS, OFFSET_FETCH, FIND_COORDINATOR = 0, 1, 2, 9, 10
WRITE_TXN_MARKERS, TXN_OFFSET_COMMIT, DESCRIBE_PRODUCERS = 27, 28, 61
LATEST = -1
SETTINGS = {"offsets.topic.num.partitions": "3", "offsets.topic.replication.factor": "1"}
OFFSETS_PARTITIONS = 3


def txn_batch(producer_id: int, epoch: int, sequence: int, values: list[bytes]) -> bytes:
    return build_batch([Record(i, 0, None, v) for i, v in enumerate(values)], base_timestamp=1_000,
                       producer_id=producer_id, producer_epoch=epoch, base_sequence=sequence,
                       is_transactional=True)


def produce_txn(c: Client, topic: str, batch: bytes, transactional_id: str | None = "tx") -> Any:
    request = produce_request({(topic, 0): batch}, acks=-1)
    request.transactional_id = transactional_id
    (t,) = c.call(PRODUCE, 9, request).responses
    return t.partition_responses[0]


def markers(c: Client, *entries: tuple[int, int, bool, int, dict[str, list[int]]]) -> list[dict]:
    """WriteTxnMarkers v1 of (producer id, epoch, commit, coordinator epoch, {topic: partitions});
    each marker's {(topic, partition): error}."""
    R = write_txn_markers.REQUEST
    M = R["markers"]
    body = R(markers=[M(producer_id=pid, producer_epoch=epoch, transaction_result=commit,
                        coordinator_epoch=coordinator_epoch,
                        topics=[M["topics"](name=t, partition_indexes=ps) for t, ps in topics.items()])
                      for pid, epoch, commit, coordinator_epoch, topics in entries])
    answer = c.call(WRITE_TXN_MARKERS, 1, body)
    assert [m.producer_id for m in answer.markers] == [e[0] for e in entries]
    return [{(t.name, p.partition_index): p.error_code for t in m.topics for p in t.partitions}
            for m in answer.markers]


def fetch_committed(c: Client, topic: str, offset: int = 0, isolation: int = 1) -> Any:
    request = fetch_request([(topic, 0, offset)])
    request.isolation_level = isolation
    ((_, p),) = fetch_partitions(c.call(FETCH, 12, request))
    return p


def latest(c: Client, topic: str, isolation: int, timestamp: int = LATEST) -> int:
    R = list_offsets.REQUEST
    req = R(replica_id=-1, isolation_level=isolation, topics=[R["topics"](name=topic, partitions=[
        R["topics"]["partitions"](partition_index=0, timestamp=timestamp)])])
    (p,) = c.call(LIST_OFFSETS, 7, req).topics[0].partitions
    assert p.error_code == E.NONE
    return int(p.offset)


def producers(c: Client, topic: str, partitions: list[int]) -> list[Any]:
    R = describe_producers.REQUEST
    answer = c.call(DESCRIBE_PRODUCERS, 0, R(topics=[R["topics"](name=topic, partition_indexes=partitions)]))
    return list(answer.topics[0].partitions)


@pytest.fixture
def broker(tmp_path):
    with running_broker(tmp_path, **SETTINGS) as b:
        # The test plays the transaction coordinator: no partition verification (KIP-890).
        b.apis.area(ProduceApis).txn_verifier = None
        yield b


def clients(broker) -> tuple[Client, Client]:
    """A client's connection, and one to the inter-broker listener (WriteTxnMarkers')."""
    return (Client("127.0.0.1", broker.bound_port("PLAINTEXT")),
            Client("127.0.0.1", broker.bound_port("INTERNAL")))


def test_an_aborted_transaction_is_skipped_by_read_committed_consumers(broker):
    topic = f"txn-{uuid.uuid4().hex[:6]}"
    c, inter = clients(broker)
    with c, inter:
        create_topic(c, topic)
        assert produce_txn(c, topic, txn_batch(4000, 0, 0, [b"a", b"b"])).error_code == E.NONE
        open_txn = fetch_committed(c, topic)
        assert (open_txn.high_watermark, open_txn.last_stable_offset) == (2, 0)
        assert open_txn.records in (b"", None) or not bytes(open_txn.records)
        assert open_txn.aborted_transactions == []
        assert latest(c, topic, isolation=1) == 0
        assert latest(c, topic, isolation=0) == 2
        assert latest(c, topic, isolation=1, timestamp=1_000) == -1  # only above the LSO
        ((p,),) = [part.active_producers for part in producers(c, topic, [0])]
        assert (p.producer_id, p.producer_epoch, p.last_sequence) == (4000, 0, 1)
        assert p.current_txn_start_offset == 0

        assert markers(inter, (4000, 0, False, 0, {topic: [0]})) == [{(topic, 0): E.NONE}]
        ended = fetch_committed(c, topic)
        assert (ended.high_watermark, ended.last_stable_offset) == (3, 3)
        assert [(a.producer_id, a.first_offset) for a in ended.aborted_transactions] == [(4000, 0)]
        records, _ = decode_batches(bytes(ended.records), 0)
        assert [r.value for r in records] == [b"a", b"b"]  # the consumer drops them, told they aborted
        assert latest(c, topic, isolation=1) == 3
        ((p,),) = [part.active_producers for part in producers(c, topic, [0])]
        assert (p.producer_id, p.current_txn_start_offset, p.coordinator_epoch) == (4000, -1, 0)
        # read_uncommitted consumers are told of no aborted transaction.
        assert fetch_committed(c, topic, isolation=0).aborted_transactions is None


def test_a_committed_transaction_reads_whole_and_aborts_before_it_are_not_resent(broker):
    topic = f"txn-{uuid.uuid4().hex[:6]}"
    c, inter = clients(broker)
    with c, inter:
        create_topic(c, topic)
        produce_txn(c, topic, txn_batch(4001, 0, 0, [b"x"]))
        markers(inter, (4001, 0, False, 0, {topic: [0]}))  # offsets 0-1
        produce_txn(c, topic, txn_batch(4001, 0, 1, [b"y", b"z"]))
        assert markers(inter, (4001, 0, True, 0, {topic: [0]})) == [{(topic, 0): E.NONE}]  # 2-4
        after = fetch_committed(c, topic, offset=2)
        assert after.last_stable_offset == 5
        assert after.aborted_transactions == []  # the abort ended before offset 2
        whole = fetch_committed(c, topic)
        assert [(a.producer_id, a.first_offset) for a in whole.aborted_transactions] == [(4001, 0)]


def test_marker_errors_are_per_partition(broker):
    topic = f"txn-{uuid.uuid4().hex[:6]}"
    c, inter = clients(broker)
    with c, inter:
        create_topic(c, topic)
        produce_txn(c, topic, txn_batch(4002, 3, 0, [b"x"]))
        errors = markers(inter, (4002, 2, True, 0, {topic: [0], "no-such-topic": [0]}))  # an older epoch
        assert errors == [{(topic, 0): E.INVALID_PRODUCER_EPOCH,
                           ("no-such-topic", 0): E.UNKNOWN_TOPIC_OR_PARTITION}]
        assert markers(inter, (4002, 3, False, 5, {topic: [0]})) == [{(topic, 0): E.NONE}]
        produce_txn(c, topic, txn_batch(4002, 3, 1, [b"y"]))
        # A coordinator older than the one that wrote the last marker is fenced.
        fenced = E.BY_NAME["TRANSACTION_COORDINATOR_FENCED"].code
        assert markers(inter, (4002, 3, True, 4, {topic: [0]})) == [{(topic, 0): fenced}]
        assert fetch_committed(c, topic).last_stable_offset == 2  # still open


def test_clients_may_not_write_markers_nor_transactional_batches_without_their_id(broker):
    topic = f"txn-{uuid.uuid4().hex[:6]}"
    c, _ = clients(broker)
    with c, _:
        create_topic(c, topic)
        no_id = produce_txn(c, topic, txn_batch(4003, 0, 0, [b"x"]), transactional_id=None)
        assert no_id.error_code == E.BY_NAME["TRANSACTIONAL_ID_AUTHORIZATION_FAILED"].code
        from kafkalite.protocol.records.control import EndTransactionMarker, build_marker_batch
        marker = build_marker_batch(EndTransactionMarker.commit(0), 4003, 0, timestamp=1_000)
        assert produce_txn(c, topic, marker).error_code == E.INVALID_RECORD


def test_describe_producers_answers_for_what_this_broker_leads(broker):
    topic = f"txn-{uuid.uuid4().hex[:6]}"
    c, _ = clients(broker)
    with c, _:
        create_topic(c, topic)
        produce_txn(c, topic, txn_batch(4004, 1, 0, [b"x", b"y", b"z"]))
        found, missing = producers(c, topic, [0, 7])
        assert found.error_code == E.NONE
        (p,) = found.active_producers
        assert (p.producer_id, p.producer_epoch, p.last_sequence) == (4004, 1, 2)
        assert p.current_txn_start_offset == 0
        assert p.last_timestamp == 1_000
        assert missing.error_code in (E.UNKNOWN_TOPIC_OR_PARTITION, E.NOT_LEADER_OR_FOLLOWER)
        assert missing.active_producers == []


def txn_offset_commit_request(group: str, producer_id: int, offsets: dict[tuple[str, int], int]) -> Any:
    R = txn_offset_commit.REQUEST
    T = R["topics"]
    by_topic: dict[str, list[Any]] = {}
    for (topic, index), offset in offsets.items():
        by_topic.setdefault(topic, []).append(T["partitions"](partition_index=index, committed_offset=offset,
                                                              committed_metadata="txn"))
    return R(transactional_id="tx", group_id=group, producer_id=producer_id, producer_epoch=0,
             generation_id=-1, member_id="", group_instance_id=None,
             topics=[T(name=t, partitions=ps) for t, ps in by_topic.items()])


def fetch_group(c: Client, group: str, topic: str, require_stable: bool,
                version: int = 7) -> dict[int, tuple]:
    R = offset_fetch.REQUEST
    if version >= 8:
        G = R["groups"]
        body = R(groups=[G(group_id=group, topics=[G["topics"](name=topic, partition_indexes=[0, 1])])],
                 require_stable=require_stable)
        (g,) = c.call(OFFSET_FETCH, version, body).groups
        assert g.error_code == E.NONE
        return {p.partition_index: (p.committed_offset, p.error_code) for t in g.topics for p in t.partitions}
    body = R(group_id=group, topics=[R["topics"](name=topic, partition_indexes=[0, 1])],
             require_stable=require_stable)
    answer = c.call(OFFSET_FETCH, version, body)
    assert answer.error_code == E.NONE
    return {p.partition_index: (p.committed_offset, p.error_code)
            for t in answer.topics for p in t.partitions}


def test_txn_offsets_become_visible_with_the_commit_marker_and_survive_a_restart(tmp_path):
    group, topic = f"g-{uuid.uuid4().hex[:6]}", "consumed"
    offsets_partition = partition_for_key(group, OFFSETS_PARTITIONS)
    unstable = E.UNSTABLE_OFFSET_COMMIT
    with running_broker(tmp_path, **SETTINGS) as b:
        c, inter = clients(b)
        with c, inter:
            create_topic(c, topic, partitions=2)
            found = find_coordinator.REQUEST(key=group, key_type=0)
            assert wait_for(lambda: c.call(FIND_COORDINATOR, 2, found).error_code == E.NONE, timeout=30)
            first = txn_offset_commit_request(group, 5000, {(topic, 0): 10})
            (t,) = c.call(TXN_OFFSET_COMMIT, 3, first).topics
            assert [p.error_code for p in t.partitions] == [E.NONE]
            assert fetch_group(c, group, topic, require_stable=True) == {0: (-1, unstable), 1: (-1, E.NONE)}
            assert fetch_group(c, group, topic, require_stable=False) == {0: (-1, E.NONE), 1: (-1, E.NONE)}
            assert markers(inter, (5000, 0, True, 0, {"__consumer_offsets": [offsets_partition]})) == [
                {("__consumer_offsets", offsets_partition): E.NONE}]
            assert fetch_group(c, group, topic, require_stable=True) == {0: (10, E.NONE), 1: (-1, E.NONE)}
            # A second transaction: aborted for partition 0, and one left open for partition 1.
            c.call(TXN_OFFSET_COMMIT, 3, txn_offset_commit_request(group, 5000, {(topic, 0): 20}))
            markers(inter, (5000, 0, False, 0, {"__consumer_offsets": [offsets_partition]}))
            c.call(TXN_OFFSET_COMMIT, 3, txn_offset_commit_request(group, 5001, {(topic, 1): 30}))
            assert fetch_group(c, group, topic, require_stable=True, version=8) == {
                0: (10, E.NONE), 1: (-1, unstable)}
    with running_broker(tmp_path, **SETTINGS) as b:
        c, inter = clients(b)
        with c, inter:
            def loaded() -> bool:
                return c.call(FIND_COORDINATOR, 2, found).error_code == E.NONE and \
                    c.call(OFFSET_FETCH, 7, offset_fetch.REQUEST(group_id=group, topics=None)).error_code == 0
            assert wait_for(loaded, timeout=30)
            assert fetch_group(c, group, topic, require_stable=True) == {0: (10, E.NONE), 1: (-1, unstable)}
            markers(inter, (5001, 0, True, 0, {"__consumer_offsets": [offsets_partition]}))
            assert fetch_group(c, group, topic, require_stable=True) == {0: (10, E.NONE), 1: (30, E.NONE)}


def test_a_waiting_read_committed_fetch_is_answered_when_the_transaction_ends(broker):
    topic = f"txn-{uuid.uuid4().hex[:6]}"
    c, inter = clients(broker)
    with c, inter:
        create_topic(c, topic)
        produce_txn(c, topic, txn_batch(4005, 0, 0, [b"x"]))
        request = fetch_request([(topic, 0, 0)], max_wait_ms=20_000, min_bytes=1)
        request.isolation_level = 1
        purgatory = broker.replica_manager.fetch_purgatory
        before = purgatory.delayed()
        c.send(FETCH, 12, request)
        # The open transaction's bytes do not count: the fetch waits (it would answer at once
        # if it counted them), until the marker moves the last stable offset past them.
        assert wait_for(lambda: purgatory.delayed() == before + 1, timeout=10)
        assert markers(inter, (4005, 0, True, 0, {topic: [0]})) == [{(topic, 0): E.NONE}]
        _, answer = c.receive(FETCH, 12)
        ((_, p),) = fetch_partitions(answer)
        assert p.last_stable_offset == 2
        records, _ = decode_batches(bytes(p.records), 0)
        assert [r.value for r in records] == [b"x"]


@pytest.mark.parametrize("verification", ["true", "false"])
def test_partition_verification_refuses_a_partition_not_in_the_transaction(tmp_path, verification):
    """KIP-890: with transaction.partition.verification.enable the leader asks the transaction
    coordinator first; a producer that never added the partition (nor began a transaction) is
    refused and nothing is appended."""
    topic = f"txn-{uuid.uuid4().hex[:6]}"
    with running_broker(tmp_path, transaction_partition_verification_enable=verification, **SETTINGS) as b:
        c, inter = clients(b)
        with c, inter:
            create_topic(c, topic)
            batch = txn_batch(4006, 0, 0, [b"x"])
            error = produce_txn(c, topic, batch, transactional_id="never-began").error_code
            if verification == "true":
                assert error != E.NONE
                assert fetch_committed(c, topic, isolation=0).high_watermark == 0
            else:
                assert error == E.NONE


def test_a_diverging_epoch_answer_carries_the_last_stable_offset(broker):
    """A fetch whose last fetched epoch ends earlier here is answered with where the logs part
    (KIP-595's truncation on fetch), and with the partition's offsets: the LSO below an open
    transaction, not the high watermark."""
    topic = f"txn-{uuid.uuid4().hex[:6]}"
    c, inter = clients(broker)
    with c, inter:
        create_topic(c, topic)
        assert produce_txn(c, topic, txn_batch(4100, 0, 0, [b"a", b"b"])).error_code == E.NONE
        # A fetcher that has epoch 0 up to offset 5, where this log's epoch 0 ends at 2.
        request = fetch_request([(topic, 0, 5)])
        request.topics[0].partitions[0].last_fetched_epoch = 0
        ((_, p),) = fetch_partitions(c.call(FETCH, 12, request))
        assert (p.diverging_epoch.epoch, p.diverging_epoch.end_offset) == (0, 2)
        assert (p.high_watermark, p.last_stable_offset) == (2, 0)
