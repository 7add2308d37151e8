"""The transaction apis on the wire, against a real broker (its own controller, transactions'
topic created by FindCoordinator): FindCoordinator key type 1, InitProducerId with a
transactional id, AddPartitionsToTxn (v0-3 and the batched v4+ with VerifyOnly), AddOffsetsToTxn,
EndTxn (v4, and v5's epoch bump), DescribeTransactions, ListTransactions, and their main errors;
then a confluent-kafka producer's transaction on a one-broker kafkalite.testing.Cluster."""

from __future__ import annotations

import pytest

from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import (
    add_offsets_to_txn,
    add_partitions_to_txn,
    describe_transactions,
    end_txn,
    find_coordinator,
    init_producer_id,
    list_transactions,
)
from kafkalite.protocol.records import iter_batches
from kafkalite.storage.log import FetchIsolation
from tests.support.brokers import connect, running_broker
from tests.support.raw_requests import create_topic
from tests.support.wait import wait_for

FIND_COORDINATOR, INIT_PRODUCER_ID, ADD_PARTITIONS, ADD_OFFSETS, END_TXN = 10, 22, 24, 25, 26
DESCRIBE_TRANSACTIONS, LIST_TRANSACTIONS = 65, 66
SETTINGS = {"transaction_state_log_num_partitions": "3", "offsets_topic_num_partitions": "3"}


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with running_broker(tmp_path_factory.mktemp("txn"), **SETTINGS) as b:
        with connect(b) as c:
            create_topic(c, "t", 2)
            R = find_coordinator.REQUEST

            def found() -> bool:
                r = c.call(FIND_COORDINATOR, 4, R(key_type=1, coordinator_keys=["warm-up"]))
                return r.coordinators[0].error_code == E.NONE

            assert wait_for(found, timeout=20, interval=0.05)
            # Every partition of __transaction_state loaded here.
            assert wait_for(lambda: len(b.txn_coordinator.state.owned_partitions) == 3, timeout=10)
        yield b


@pytest.fixture
def client(broker):
    with connect(broker) as c:
        yield c


def init(c, txn, version=4, timeout_ms=60000, pid=-1, epoch=-1):
    return c.call(INIT_PRODUCER_ID, version, init_producer_id.REQUEST(
        transactional_id=txn, transaction_timeout_ms=timeout_ms, producer_id=pid, producer_epoch=epoch))


def add(c, txn, pid, epoch, parts, version=3):
    R = add_partitions_to_txn.REQUEST
    topics = {}
    for t, p in parts:
        topics.setdefault(t, []).append(p)
    r = c.call(ADD_PARTITIONS, version, R(
        v3_and_below_transactional_id=txn, v3_and_below_producer_id=pid, v3_and_below_producer_epoch=epoch,
        v3_and_below_topics=[R["v3_and_below_topics"](name=t, partitions=ps) for t, ps in topics.items()]))
    return {(t.name, p.partition_index): p.partition_error_code
            for t in r.results_by_topic_v3_and_below for p in t.results_by_partition}


def end(c, txn, pid, epoch, commit=True, version=4):
    return c.call(END_TXN, version, end_txn.REQUEST(transactional_id=txn, producer_id=pid,
                                                    producer_epoch=epoch, committed=commit))


def describe(c, *ids):
    return c.call(DESCRIBE_TRANSACTIONS, 0,
                  describe_transactions.REQUEST(transactional_ids=list(ids))).transaction_states


def test_find_coordinator_for_a_transactional_id(broker, client):
    R = find_coordinator.REQUEST
    r = client.call(FIND_COORDINATOR, 3, R(key="tx", key_type=1))
    assert (r.error_code, r.node_id, r.port) == (E.NONE, 1, broker.bound_port("PLAINTEXT"))
    assert client.call(FIND_COORDINATOR, 3, R(key="", key_type=1)).error_code == E.INVALID_REQUEST
    assert client.call(FIND_COORDINATOR, 3, R(key="x", key_type=7)).error_code == E.INVALID_REQUEST


def test_commit_through_every_api(broker, client):
    r = init(client, "wire-commit")
    assert r.error_code == E.NONE and r.producer_epoch == 0
    pid = r.producer_id
    assert add(client, "wire-commit", pid, 0, [("t", 0), ("t", 1)]) == {("t", 0): 0, ("t", 1): 0}
    r = client.call(ADD_OFFSETS, 3, add_offsets_to_txn.REQUEST(
        transactional_id="wire-commit", producer_id=pid, producer_epoch=0, group_id="g"))
    assert r.error_code == E.NONE
    [d] = describe(client, "wire-commit")
    assert (d.error_code, d.transaction_state, d.producer_id, d.transaction_timeout_ms) == (
        E.NONE, "Ongoing", pid, 60000)
    assert {t.topic: sorted(t.partitions) for t in d.topics}["t"] == [0, 1]
    assert "__consumer_offsets" in {t.topic for t in d.topics}
    assert end(client, "wire-commit", pid, 0).error_code == E.NONE
    # The markers reach the partitions (WriteTxnMarkers to this broker), then CompleteCommit.
    assert wait_for(lambda: describe(client, "wire-commit")[0].transaction_state == "CompleteCommit",
                    timeout=10)
    assert end(client, "wire-commit", pid, 0).error_code == E.NONE  # a retry
    listed = client.call(LIST_TRANSACTIONS, 1, list_transactions.REQUEST(
        state_filters=["CompleteCommit", "Nope"], producer_id_filters=[pid], duration_filter=-1))
    assert listed.error_code == E.NONE and listed.unknown_state_filters == ["Nope"]
    assert [(t.transactional_id, t.transaction_state) for t in listed.transaction_states] == [
        ("wire-commit", "CompleteCommit")]


def test_markers_of_partitions_led_here_are_written_in_process(broker, client):
    """The coordinator writes the markers of the partitions this broker leads through the
    WriteTxnMarkers handler's logic, in-process: no sender thread dials this broker, and with one
    replica the transaction is CompleteCommit (and CompleteAbort) by the time EndTxn is answered,
    its marker in each partition's log."""
    markers = broker.txn_markers
    sent = markers.markers_sent
    pid = init(client, "wire-local").producer_id
    assert add(client, "wire-local", pid, 0, [("t", 0), ("t", 1)]) == {("t", 0): 0, ("t", 1): 0}
    assert end(client, "wire-local", pid, 0).error_code == E.NONE
    [d] = describe(client, "wire-local")
    assert (d.error_code, d.transaction_state) == (E.NONE, "CompleteCommit")
    assert add(client, "wire-local", pid, 0, [("t", 1)]) == {("t", 1): E.NONE}  # no CONCURRENT_TRANSACTIONS
    assert end(client, "wire-local", pid, 0, commit=False).error_code == E.NONE
    assert describe(client, "wire-local")[0].transaction_state == "CompleteAbort"
    assert markers.markers_sent - sent == 3
    assert not markers._senders  # nothing went over the listener
    controls = []
    for index in (0, 1):
        log_ = broker.replica_manager.partitions[("t", index)].log
        data = log_.read(log_.log_start_offset, 1 << 20, FetchIsolation.LOG_END).read()
        controls += [(index, h.producer_id) for _, h in iter_batches(data) if h.is_control]
    assert sorted(c for c in controls if c[1] == pid) == [(0, pid), (1, pid), (1, pid)]


def test_end_txn_v5_bumps_the_epoch(client):
    pid = init(client, "wire-v5").producer_id
    add(client, "wire-v5", pid, 0, [("t", 0)])
    r = end(client, "wire-v5", pid, 0, commit=False, version=5)
    assert (r.error_code, r.producer_id, r.producer_epoch) == (E.NONE, pid, 1)


def test_errors(client):
    assert init(client, "wire-err", timeout_ms=0).error_code == E.INVALID_TRANSACTION_TIMEOUT
    assert init(client, "wire-err", pid=5).error_code == E.INVALID_REQUEST  # an id without an epoch
    pid = init(client, "wire-err").producer_id
    assert init(client, "wire-err").producer_epoch == 1
    # The old epoch is fenced: PRODUCER_FENCED from v2 on, INVALID_PRODUCER_EPOCH before.
    assert add(client, "wire-err", pid, 0, [("t", 0)]) == {("t", 0): E.PRODUCER_FENCED}
    assert add(client, "wire-err", pid, 0, [("t", 0)], version=1) == {("t", 0): E.INVALID_PRODUCER_EPOCH}
    assert end(client, "wire-err", pid, 0, version=1).error_code == E.INVALID_PRODUCER_EPOCH
    assert add(client, "wire-err", pid + 1, 1, [("t", 0)]) == {("t", 0): E.INVALID_PRODUCER_ID_MAPPING}
    assert add(client, "wire-err", pid, 1, [("t", 0), ("nope", 0)]) == {
        ("t", 0): E.OPERATION_NOT_ATTEMPTED, ("nope", 0): E.UNKNOWN_TOPIC_OR_PARTITION}
    assert end(client, "wire-err", pid, 1).error_code == E.INVALID_TXN_STATE  # nothing open
    [d] = describe(client, "never-seen")
    assert d.error_code == E.TRANSACTIONAL_ID_NOT_FOUND


def test_init_fences_an_open_transaction(client):
    pid = init(client, "wire-fence").producer_id
    add(client, "wire-fence", pid, 0, [("t", 1)])
    assert init(client, "wire-fence").error_code == E.CONCURRENT_TRANSACTIONS
    assert add(client, "wire-fence", pid, 0, [("t", 1)]) == {("t", 1): E.PRODUCER_FENCED}
    assert wait_for(lambda: init(client, "wire-fence").error_code == E.NONE, timeout=10)
    assert describe(client, "wire-fence")[0].transaction_state == "Empty"


def test_batched_add_partitions_verify_only(client):
    pid = init(client, "wire-verify").producer_id
    add(client, "wire-verify", pid, 0, [("t", 0)])
    R = add_partitions_to_txn.REQUEST
    T = R["transactions"]
    r = client.call(ADD_PARTITIONS, 5, R(transactions=[
        T(transactional_id="wire-verify", producer_id=pid, producer_epoch=0, verify_only=True,
          topics=[T["topics"](name="t", partitions=[0, 1])]),
        T(transactional_id="wire-unknown", producer_id=1, producer_epoch=0, verify_only=True,
          topics=[T["topics"](name="t", partitions=[0])])]))
    assert r.error_code == E.NONE
    got = {res.transactional_id: {(t.name, p.partition_index): p.partition_error_code
                                  for t in res.topic_results for p in t.results_by_partition}
           for res in r.results_by_transaction}
    assert got == {"wire-verify": {("t", 0): E.NONE, ("t", 1): E.TRANSACTION_ABORTABLE},
                   "wire-unknown": {("t", 0): E.INVALID_PRODUCER_ID_MAPPING}}


def test_verifier_maps_to_produce_codes(broker):
    got = []  # this broker coordinates every id: asked directly, answered at once
    broker.txn_verifier.verify("nobody", 1, 0, [("t", 0)], got.append, produce_version=9)
    assert got == [{("t", 0): E.INVALID_PRODUCER_ID_MAPPING}]


def test_confluent_kafka_transaction_commits():
    confluent_kafka = pytest.importorskip("confluent_kafka")
    from kafkalite.testing import Cluster

    with Cluster(1) as cluster:
        cluster.create_topic("txn-e2e", 1, 1)
        producer = confluent_kafka.Producer({"bootstrap.servers": cluster.bootstrap_servers,
                                             "transactional.id": "e2e", "transaction.timeout.ms": 30000})
        producer.init_transactions(20)
        producer.begin_transaction()
        producer.produce("txn-e2e", b"v1", partition=0)
        producer.produce("txn-e2e", b"v2", partition=0)
        producer.commit_transaction(20)
        coordinator = cluster.broker(1).txn_coordinator
        assert wait_for(lambda: coordinator.describe(["e2e"])[0].state == "CompleteCommit", timeout=10)


def _txn_produce(c, txn, pid, epoch, partition, version, sequence=0):
    from kafkalite.protocol.messages import produce as pm
    from kafkalite.protocol.records import Record, build_batch
    R = pm.REQUEST
    records = build_batch([Record(offset_delta=0, timestamp_delta=0, key=None, value=b"v%d" % version)],
                          producer_id=pid, producer_epoch=epoch, base_sequence=sequence,
                          is_transactional=True)
    r = c.call(0, version, R(transactional_id=txn, acks=-1, timeout_ms=10000, topic_data=[
        R["topic_data"](name="t", partition_data=[R["topic_data"]["partition_data"](index=partition,
                                                                                  records=records)])]))
    return r.responses[0].partition_responses[0].error_code


def test_produce_v12_adds_its_partition_to_the_transaction(client):
    """KIP-890 part 2: a transaction version 2 producer sends Produce v12+ and no AddPartitionsToTxn;
    the partition leader adds the partition (Kafka's TransactionSupportedOperation.ADD_PARTITION),
    where a v11 batch is only verified (and refused: not in the transaction)."""
    pid = init(client, "wire-produce-v12", version=5).producer_id
    assert _txn_produce(client, "wire-produce-v12", pid, 0, 1, version=11) == E.TRANSACTION_ABORTABLE
    assert describe(client, "wire-produce-v12")[0].transaction_state == "Empty"
    assert _txn_produce(client, "wire-produce-v12", pid, 0, 1, version=12) == E.NONE
    [d] = describe(client, "wire-produce-v12")
    assert d.transaction_state == "Ongoing"
    assert [(t.topic, list(t.partitions)) for t in d.topics] == [("t", [1])]
    r = end(client, "wire-produce-v12", pid, 0, commit=True, version=5)
    assert (r.error_code, r.producer_epoch) == (E.NONE, 1)
