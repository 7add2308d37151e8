"""The data path of one broker driven as the controller drives it: LeaderAndIsr makes it leader
(or follower) of partitions, then raw Produce / Fetch / ListOffsets / OffsetForLeaderEpoch /
DeleteRecords requests check Kafka's answers — high watermark and acks=all, leader epochs and
their fencing, the offsets of the log."""

from __future__ import annotations

import threading
import time
import uuid

import pytest

from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import delete_records as dr
from kafkalite.protocol.messages import fetch as fm
from kafkalite.protocol.messages import leader_and_isr as lai
from kafkalite.protocol.messages import list_offsets as lo
from kafkalite.protocol.messages import offset_for_leader_epoch as ofle
from kafkalite.protocol.messages import produce as pm
from kafkalite.protocol.messages import stop_replica as sr
from kafkalite.protocol.records import Record, build_batch
from tests.support.brokers import running_broker
from tests.support.wait import wait_for
from tests.support.wire_client import Client

pytestmark = pytest.mark.integration


TOPIC_ID = uuid.UUID(int=77)
# Record timestamps near now: retention (7 days by default) must not delete them mid-test.
T0 = int(time.time() * 1000) - 60_000
PRODUCE, FETCH, LIST_OFFSETS, DELETE_RECORDS, OFFSET_FOR_LEADER_EPOCH = 0, 1, 2, 21, 23


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with running_broker(tmp_path_factory.mktemp("broker")) as b:
        yield b


_controller_epoch = [100]  # above the in-process controller's own epoch; every request newer


def lead(broker, topic, leader=1, leader_epoch=0, isr=(1,), replicas=(1,), partitions=1):
    """LeaderAndIsr v7 for ``topic`` sent to the broker's privileged listener."""
    R = lai.REQUEST
    state = R["topic_states"]["partition_states"]
    req = R(controller_id=1, controller_epoch=_controller_epoch[0], broker_epoch=-1, topic_states=[
        R["topic_states"](topic_name=topic, topic_id=TOPIC_ID, partition_states=[
            state(partition_index=p, controller_epoch=_controller_epoch[0], leader=leader,
                  leader_epoch=leader_epoch, isr=list(isr), partition_epoch=0, replicas=list(replicas),
                  is_new=True) for p in range(partitions)])])
    with Client("127.0.0.1", broker.bound_port("INTERNAL")) as c:
        resp = c.call(4, 7, req)
    assert {p.error_code for t in resp.topics for p in t.partition_errors} == {0}


def client(broker) -> Client:
    return Client("127.0.0.1", broker.bound_port("PLAINTEXT"))


def produce_request(topic, values, acks=1, timeout_ms=5000, partition=0, timestamp=T0):
    batch = build_batch([Record(offset_delta=i, timestamp_delta=i, key=None, value=v, headers=())
                         for i, v in enumerate(values)], base_timestamp=timestamp)
    R = pm.REQUEST
    return R(transactional_id=None, acks=acks, timeout_ms=timeout_ms, topic_data=[
        R["topic_data"](name=topic, partition_data=[R["topic_data"]["partition_data"](
            index=partition, records=batch)])])


def produce(c, topic, values, **kw):
    (t,) = c.call(PRODUCE, 9, produce_request(topic, values, **kw)).responses
    (p,) = t.partition_responses
    return p


def fetch_request(topic, offset, *, leader_epoch=-1, replica_id=-1, max_wait_ms=0, min_bytes=1):
    R = fm.REQUEST
    return R(replica_id=replica_id, max_wait_ms=max_wait_ms, min_bytes=min_bytes, max_bytes=1 << 20,
             isolation_level=0, session_id=0, session_epoch=-1, forgotten_topics_data=[], rack_id="",
             topics=[R["topics"](topic=topic, partitions=[R["topics"]["partitions"](
                 partition=0, current_leader_epoch=leader_epoch, fetch_offset=offset, last_fetched_epoch=-1,
                 log_start_offset=-1, partition_max_bytes=1 << 20)])])


def fetch(c, topic, offset, **kw):
    (t,) = c.call(FETCH, 11, fetch_request(topic, offset, **kw)).responses
    (p,) = t.partitions
    return p


def list_offset(c, topic, timestamp, version=7):
    R = lo.REQUEST
    req = R(replica_id=-1, isolation_level=0, topics=[R["topics"](name=topic, partitions=[
        R["topics"]["partitions"](partition_index=0, current_leader_epoch=-1, timestamp=timestamp,
                                  max_num_offsets=1)])])
    (t,) = c.call(LIST_OFFSETS, version, req).topics
    (p,) = t.partitions
    return p


def epoch_end(c, topic, epoch, current=-1):
    R = ofle.REQUEST
    req = R(replica_id=-1, topics=[R["topics"](topic=topic, partitions=[R["topics"]["partitions"](
        partition=0, current_leader_epoch=current, leader_epoch=epoch)])])
    (t,) = c.call(OFFSET_FOR_LEADER_EPOCH, 4, req).topics
    (p,) = t.partitions
    return p


def test_list_offsets_latest_earliest_max_timestamp_and_by_time(broker):
    lead(broker, "offsets")
    with client(broker) as c:
        assert produce(c, "offsets", [b"a", b"b", b"c"], timestamp=T0 + 1_000).base_offset == 0
        assert produce(c, "offsets", [b"d", b"e"], timestamp=T0 + 5_000).base_offset == 3
        assert produce(c, "offsets", [b"f"], timestamp=T0 + 2_000).base_offset == 5
        latest, earliest = list_offset(c, "offsets", -1), list_offset(c, "offsets", -2)
        assert (latest.error_code, latest.offset, latest.leader_epoch) == (0, 6, 0)
        assert (earliest.offset, earliest.leader_epoch) == (0, 0)
        top = list_offset(c, "offsets", -3)  # the first record with the largest timestamp
        assert (top.offset, top.timestamp) == (4, T0 + 5_001)
        by_time = list_offset(c, "offsets", T0 + 1_001)
        assert (by_time.offset, by_time.timestamp) == (1, T0 + 1_001)
        assert list_offset(c, "offsets", T0 + 1_003).offset == 3  # the next record at or after it
        assert list_offset(c, "offsets", T0 + 9_999).offset == -1  # none that late
        # v0 (an array of offsets) was removed in Kafka 4.0 (KIP-896): test_release_versions.py.
        assert list_offset(c, "offsets", -1, version=1).offset == 6
        assert list_offset(c, "unknown-topic", -1).error_code == E.UNKNOWN_TOPIC_OR_PARTITION


def test_leader_epochs_fence_requests_and_answer_offset_for_leader_epoch(broker):
    lead(broker, "epochs", leader_epoch=0)
    with client(broker) as c:
        produce(c, "epochs", [b"x"] * 3)
        lead(broker, "epochs", leader_epoch=2)  # a new leader epoch starts at the log end, 3
        produce(c, "epochs", [b"y"] * 2)
        assert (epoch_end(c, "epochs", 0).leader_epoch, epoch_end(c, "epochs", 0).end_offset) == (0, 3)
        assert (epoch_end(c, "epochs", 1).leader_epoch, epoch_end(c, "epochs", 1).end_offset) == (0, 3)
        assert (epoch_end(c, "epochs", 2).leader_epoch, epoch_end(c, "epochs", 2).end_offset) == (2, 5)
        assert epoch_end(c, "epochs", 2, current=1).error_code == E.FENCED_LEADER_EPOCH
        assert fetch(c, "epochs", 0, leader_epoch=1).error_code == E.FENCED_LEADER_EPOCH
        assert fetch(c, "epochs", 0, leader_epoch=3).error_code == E.UNKNOWN_LEADER_EPOCH
        ok = fetch(c, "epochs", 0, leader_epoch=2)
        assert ok.error_code == 0 and ok.high_watermark == 5 and len(ok.records) > 0
        # Batches carry the epoch they were appended in (partitionLeaderEpoch, bytes 12-15).
        assert int.from_bytes(ok.records[12:16], "big") == 0


def test_acks_all_waits_for_the_isr_and_times_out_without_it(broker):
    lead(broker, "acks-all", isr=(1, 2), replicas=(1, 2))
    with client(broker) as c:
        timed_out = produce(c, "acks-all", [b"lost?"], acks=-1, timeout_ms=200)
        # Appended on the leader, but the follower never fetched: not acknowledged.
        assert timed_out.error_code == E.REQUEST_TIMED_OUT
        assert fetch(c, "acks-all", 0).high_watermark == 0
        answers: list = []
        waiting = threading.Thread(target=lambda: answers.append(
            produce(c, "acks-all", [b"kept"], acks=-1, timeout_ms=20_000)))
        waiting.start()
        partition = broker.replica_manager.partitions[("acks-all", 0)]
        assert wait_for(lambda: partition.log.log_end_offset == 2 and
                        broker.replica_manager.produce_purgatory.watched() > 0)
        with client(broker) as follower:  # follower 2 fetches from the log end: it has everything
            f = fetch(follower, "acks-all", 2, replica_id=2)
            assert f.error_code == 0
        waiting.join(10)
        assert [(a.error_code, a.base_offset) for a in answers] == [(0, 1)]
        assert partition.log.high_watermark == 2


def test_leadership_moving_away_answers_waiting_produce_and_refuses_new_ones(broker):
    lead(broker, "moving", isr=(1, 2), replicas=(1, 2))
    with client(broker) as c:
        answers: list = []
        waiting = threading.Thread(target=lambda: answers.append(
            produce(c, "moving", [b"v"], acks=-1, timeout_ms=20_000)))
        waiting.start()
        assert wait_for(lambda: broker.replica_manager.produce_purgatory.watched() > 0)
        lead(broker, "moving", leader=2, leader_epoch=1, isr=(1, 2), replicas=(1, 2))
        waiting.join(10)
        assert [a.error_code for a in answers] == [E.NOT_LEADER_OR_FOLLOWER]
    with client(broker) as c:
        assert produce(c, "moving", [b"w"]).error_code == E.NOT_LEADER_OR_FOLLOWER
        assert fetch(c, "moving", 0).error_code == E.NOT_LEADER_OR_FOLLOWER


def test_delete_records_moves_the_log_start(broker):
    lead(broker, "trim")
    with client(broker) as c:
        for i in range(4):
            produce(c, "trim", [b"%d" % i])
        R = dr.REQUEST
        req = R(timeout_ms=5000, topics=[R["topics"](name="trim", partitions=[
            R["topics"]["partitions"](partition_index=0, offset=2)])])
        (t,) = c.call(DELETE_RECORDS, 2, req).topics
        assert [(p.error_code, p.low_watermark) for p in t.partitions] == [(0, 2)]
        assert list_offset(c, "trim", -2).offset == 2
        assert fetch(c, "trim", 1).error_code == E.OFFSET_OUT_OF_RANGE
        assert fetch(c, "trim", 2).error_code == 0
        beyond = R(timeout_ms=5000, topics=[R["topics"](name="trim", partitions=[
            R["topics"]["partitions"](partition_index=0, offset=99)])])
        (t,) = c.call(DELETE_RECORDS, 2, beyond).topics
        assert t.partitions[0].error_code == E.OFFSET_OUT_OF_RANGE


def test_stop_replica_with_delete_removes_the_partition_directory(broker):
    lead(broker, "doomed")
    with client(broker) as c:
        produce(c, "doomed", [b"bye"])
    directory = broker.replica_manager.partitions[("doomed", 0)].log.dir
    assert directory.is_dir()
    R = sr.REQUEST
    ps = R["topic_states"]["partition_states"]
    req = R(controller_id=1, controller_epoch=_controller_epoch[0], broker_epoch=-1, topic_states=[
        R["topic_states"](topic_name="doomed", partition_states=[
            ps(partition_index=0, leader_epoch=-2, delete_partition=True)])])
    with Client("127.0.0.1", broker.bound_port("INTERNAL")) as c:
        assert [p.error_code for p in c.call(5, 3, req).partition_errors] == [0]
    assert wait_for(lambda: not directory.exists())


def test_a_followers_fetch_leaving_out_a_partition_it_has_not_fetched_is_answered_on_an_append(broker):
    # A follower's long poll sent before it knew it follows "nudge-new" would otherwise hold the
    # new partition's first fetch (and an acks=all produce to it) for replica.fetch.wait.max.ms.
    lead(broker, "nudge-old", isr=(1, 7), replicas=(1, 7))
    lead(broker, "nudge-new", isr=(1, 7), replicas=(1, 7))
    rm = broker.replica_manager  # follower 7: no other test's appends nudged it
    with client(broker) as producer, client(broker) as follower:
        assert fetch(follower, "nudge-old", 0, replica_id=7).error_code == 0
        # Waiting: 60 s is beyond the client's 10 s timeout, so only the nudge answers it in time.
        follower.send(FETCH, 11, fetch_request("nudge-old", 0, replica_id=7, max_wait_ms=60_000))
        assert wait_for(lambda: rm.fetch_purgatory.watched() > 0)
        assert produce(producer, "nudge-new", [b"first"]).error_code == 0
        (t,) = follower.receive(FETCH, 11)[1].responses
        assert [(p.error_code, bytes(p.records)) for p in t.partitions] == [(0, b"")]
        # On its way when the append came: answered at once as well.
        assert produce(producer, "nudge-new", [b"second"]).error_code == 0
        (t,) = follower.call(FETCH, 11, fetch_request("nudge-old", 0, replica_id=7,
                                                      max_wait_ms=60_000)).responses
        assert [p.error_code for p in t.partitions] == [0]
        # Once the follower asks for the partition, nothing is left to answer early.
        assert fetch(follower, "nudge-new", 0, replica_id=7).high_watermark == 0
        assert 7 not in rm._nudges
