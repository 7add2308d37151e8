"""Replication between brokers in one process (real sockets, real fetcher threads): followers
copy the leader's batches, the high watermark follows the ISR, acks=all waits for it and is
refused below min.insync.replicas, a stalled follower leaves the ISR and comes back, a follower
that missed a leadership change truncates what the new leader never had, controlled shutdown and
preferred leader election move leaderships, and a deleted topic leaves no directory anywhere.
Process-level chaos (SIGKILL, stalled links, real clients): tests/test_replication_faults.py."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkalite.controller.context import TopicPartition
from kafkalite.protocol import error_codes as E
from kafkalite.server.broker import Broker
from kafkalite.server.handlers.fetch import FetchApis, FetchInfo
from tests.support.brokers import connect, create, running_broker
from tests.support.raw_requests import batch, produce, read_log
from tests.support.wait import wait_for
from tests.support.wire_client import Client

pytestmark = pytest.mark.integration


FAST = {"broker_heartbeat_interval_ms": "100", "broker_session_timeout_ms": "1500",
        "replica_fetch_wait_max_ms": "100", "replica_fetch_backoff_ms": "100",
        "auto_leader_rebalance_enable": "false"}


@contextlib.contextmanager
def brokers(tmp_path: Path, count: int = 3, **overrides: str) -> Iterator[list[Broker]]:
    """``count`` brokers, broker 1 the controller, each seeing all."""
    settings = {**FAST, **overrides}
    with contextlib.ExitStack() as stack:
        first = stack.enter_context(running_broker(tmp_path / "1", **settings))
        controller = f"127.0.0.1:{first.bound_port('INTERNAL')}"
        started = [first]
        for n in range(2, count + 1):
            started.append(stack.enter_context(running_broker(
                tmp_path / str(n), node_id=str(n), controller_quorum_bootstrap_servers=controller,
                **settings)))
        ids = set(range(1, count + 1))
        assert wait_for(lambda: all(set(b.metadata_cache.snapshot.brokers) == ids for b in started),
                        timeout=10)
        yield started


def partition_of(broker: Broker, topic: str, index: int = 0):
    return broker.replica_manager.partitions.get((topic, index))


def leader_state(broker: Broker, topic: str, index: int = 0):
    """The controller's (leader, leader epoch, ISR) of a partition, from broker 1."""
    lead = broker.controller.context.partition_leadership[TopicPartition(topic, index)]
    return lead.leader, lead.leader_epoch, tuple(lead.isr)


def in_sync(brokers_: list[Broker], topic: str, end: int) -> bool:
    """Every broker's replica holds ``end`` offsets with the high watermark there."""
    parts = [partition_of(b, topic) for b in brokers_]
    return all(p is not None and p.log.log_end_offset == end and p.log.high_watermark == end for p in parts)


def values(n: int, start: int = 0) -> list[bytes]:
    return [f"v{i}".encode() for i in range(start, start + n)]


def test_followers_copy_the_leaders_batches_and_the_high_watermark_follows(tmp_path):
    with brokers(tmp_path) as (one, two, three):
        assert create(one, "r", [1, 2, 3]).error_code == 0
        assert wait_for(lambda: all(partition_of(b, "r") is not None for b in (one, two, three)), timeout=10)
        with connect(one) as c:
            for i in range(20):
                p = produce(c, "r", batch(values(5, 5 * i)), acks=-1)
                assert (p.error_code, p.base_offset) == (0, 5 * i)
        # acks=all answered: the high watermark covered each batch, so every ISR member had it.
        assert wait_for(lambda: in_sync([one, two, three], "r", 100), timeout=10)
        leader_bytes = open(partition_of(one, "r").log.active_segment.log_path, "rb").read()
        for follower in (two, three):
            log = partition_of(follower, "r").log
            assert open(log.active_segment.log_path, "rb").read() == leader_bytes  # batches as they were
            assert log.leader_epoch_cache.entries() == partition_of(one, "r").log.leader_epoch_cache.entries()
        # Followers refuse Produce; their fetchers follow broker 1.
        with connect(two) as c:
            assert produce(c, "r", batch([b"x"])).error_code == E.NOT_LEADER_OR_FOLLOWER
        assert two.replica_manager.fetcher_manager.fetching() == {("r", 0): 1}
        assert one.replica_manager.fetcher_manager.fetching() == {}


def test_acks_all_needs_min_insync_replicas_and_the_high_watermark_waits_for_them(tmp_path):
    with brokers(tmp_path, 2, replica_lag_time_max_ms="1000") as (one, two):
        assert create(one, "m", [1, 2], min_insync_replicas="2").error_code == 0
        assert wait_for(lambda: partition_of(two, "m") is not None, timeout=10)
        with connect(one) as c:
            assert produce(c, "m", batch(values(3)), acks=-1).error_code == 0
            assert wait_for(lambda: in_sync([one, two], "m", 3), timeout=10)
            # The follower stalls (its fetcher removed): after replica.lag.time.max.ms the leader
            # takes it out of the ISR through the controller.
            two.replica_manager.fetcher_manager.remove_fetcher_for_partitions([("m", 0)])
            assert wait_for(lambda: leader_state(one, "m")[2] == (1,), timeout=10)
            assert wait_for(lambda: partition_of(one, "m").isr == (1,), timeout=10)  # the answer came
            refused = produce(c, "m", batch(values(1, 3)), acks=-1)
            assert refused.error_code == E.NOT_ENOUGH_REPLICAS
            # acks=1 is taken, but the high watermark stays below it while the ISR is too small.
            assert produce(c, "m", batch(values(1, 3)), acks=1).error_code == 0
            leader = partition_of(one, "m").log
            assert (leader.log_end_offset, leader.high_watermark) == (4, 3)
            # The follower fetches again: it catches up, rejoins the ISR, the high watermark moves.
            partition = partition_of(two, "m")
            two.replica_manager._update_fetchers([("m", 0)], {1: ("127.0.0.1", one.bound_port("INTERNAL"))})
            assert wait_for(lambda: leader_state(one, "m")[2] == (1, 2), timeout=10)
            assert wait_for(lambda: in_sync([one, two], "m", 4), timeout=10)
            assert partition.log is partition_of(two, "m").log
            assert produce(c, "m", batch(values(1, 4)), acks=-1).error_code == 0


def test_a_follower_that_missed_a_leader_change_truncates_and_catches_up(tmp_path):
    with brokers(tmp_path, 2) as (one, two):
        assert create(one, "d", [2, 1]).error_code == 0  # broker 2 leads, broker 1 follows
        assert wait_for(lambda: partition_of(one, "d") is not None and partition_of(two, "d") is not None,
                        timeout=10)
        with connect(two) as c:
            assert produce(c, "d", batch(values(10)), acks=-1).error_code == 0
        assert wait_for(lambda: in_sync([one, two], "d", 10), timeout=10)
        # Broker 1 stops fetching; broker 2 takes five records alone (acks=1: in its log only).
        one.replica_manager.fetcher_manager.remove_fetcher_for_partitions([("d", 0)])
        with connect(two) as c:
            assert produce(c, "d", batch(values(5, 10)), acks=1).error_code == 0
        assert partition_of(two, "d").log.log_end_offset == 15
        # Broker 2 stops gracefully: broker 1, still in the ISR, leads (epoch 1) and takes three.
        two.shutdown()
        assert wait_for(lambda: leader_state(one, "d")[:2] == (1, 1), timeout=10)
        assert wait_for(lambda: partition_of(one, "d").is_leader, timeout=10)
        with connect(one) as c:
            p = produce(c, "d", batch([b"new1", b"new2", b"new3"]), acks=1)
            assert (p.error_code, p.base_offset) == (0, 10)
        # Broker 2 comes back as a follower: offsets 10-14 of epoch 0 were never the new leader's.
        controller = f"127.0.0.1:{one.bound_port('INTERNAL')}"
        with running_broker(tmp_path / "2", node_id="2", controller_quorum_bootstrap_servers=controller,
                            **FAST) as again:
            assert wait_for(lambda: partition_of(again, "d") is not None, timeout=10)
            assert wait_for(lambda: partition_of(again, "d").log.log_end_offset == 13, timeout=10)
            with connect(one) as c:
                leader_records, _ = read_log(c, "d")
            log = partition_of(again, "d").log
            assert log.leader_epoch_cache.entries() == partition_of(one, "d").log.leader_epoch_cache.entries()
            assert [r.value for r in leader_records][10:] == [b"new1", b"new2", b"new3"]
            assert open(log.active_segment.log_path, "rb").read() == open(
                partition_of(one, "d").log.active_segment.log_path, "rb").read()


def test_controlled_shutdown_moves_leadership_before_the_broker_stops(tmp_path):
    with brokers(tmp_path) as (one, two, three):
        assert create(one, "c", [2, 3, 1]).error_code == 0
        assert wait_for(lambda: all(partition_of(b, "c") is not None for b in (one, two, three)), timeout=10)
        with connect(two) as c:
            assert produce(c, "c", batch(values(4)), acks=-1).error_code == 0
        two.shutdown()
        leader, epoch, isr = leader_state(one, "c")
        assert (leader, epoch) == (3, 1) and 2 not in isr  # moved before broker 2 went
        assert wait_for(lambda: partition_of(three, "c").is_leader, timeout=10)
        with connect(three) as c:
            assert produce(c, "c", batch(values(1, 4)), acks=-1).error_code == 0


def test_preferred_leader_election_moves_leadership_back(tmp_path):
    with brokers(tmp_path, 2) as (one, two):
        assert create(one, "p", [2, 1]).error_code == 0
        assert wait_for(lambda: partition_of(one, "p") is not None and partition_of(two, "p") is not None,
                        timeout=10)
        assert wait_for(lambda: leader_state(one, "p")[2] == (2, 1), timeout=10)
        two.shutdown()
        assert wait_for(lambda: leader_state(one, "p")[0] == 1, timeout=10)
        controller = f"127.0.0.1:{one.bound_port('INTERNAL')}"
        with running_broker(tmp_path / "2", node_id="2", controller_quorum_bootstrap_servers=controller,
                            **FAST) as again:
            assert wait_for(lambda: 2 in leader_state(one, "p")[2], timeout=10)  # caught up, in the ISR
            assert one.controller.rebalance_leaders()
            assert leader_state(one, "p")[0] == 2
            assert wait_for(lambda: partition_of(again, "p").is_leader, timeout=10)
            assert one.controller.rebalance_leaders() == []  # balanced: nothing more to move


def test_a_deleted_topic_leaves_no_directory_on_any_broker(tmp_path):
    with brokers(tmp_path, log_segment_delete_delay_ms="100") as all_:
        assert create(all_[0], "gone", [1, 2, 3]).error_code == 0
        assert wait_for(lambda: all(partition_of(b, "gone") is not None for b in all_), timeout=10)
        with connect(all_[0]) as c:
            assert produce(c, "gone", batch(values(3)), acks=-1).error_code == 0
        dirs = [tmp_path / str(n) / "gone-0" for n in (1, 2, 3)]
        assert all(d.exists() for d in dirs)
        all_[0].controller.delete_topic("gone", None).result(10)
        assert wait_for(lambda: not any(b.replica_manager.fetcher_manager.fetching() for b in all_),
                        timeout=10)
        # Renamed at once, removed after file.delete.delay.ms (the scheduler looks every second).
        assert wait_for(lambda: not any(p.name.startswith("gone-") for n in (1, 2, 3)
                                        for p in (tmp_path / str(n)).iterdir()), timeout=10)


def alter(client, broker_id: int, broker_epoch: int, topic_id, leader_epoch: int, isr: list[int],
          partition_epoch: int, version: int = 2):
    from kafkalite.protocol.messages import alter_partition as ap

    R = ap.REQUEST
    part = R["topics"]["partitions"](partition_index=0, leader_epoch=leader_epoch, new_isr=isr,
                                     new_isr_with_epochs=[R["topics"]["partitions"]["new_isr_with_epochs"](
                                         broker_id=b, broker_epoch=-1) for b in isr],
                                     partition_epoch=partition_epoch)
    response = client.call(56, version, R(broker_id=broker_id, broker_epoch=broker_epoch,
                                          topics=[R["topics"](topic_name="a", topic_id=topic_id,
                                                              partitions=[part])]))
    if response.error_code:
        return response.error_code, None
    (t,) = response.topics
    (p,) = t.partitions
    return p.error_code, p


def test_the_controller_checks_every_alter_partition_as_kafka_does(tmp_path):
    with brokers(tmp_path) as (one, two, three):
        assert create(one, "a", [2, 3, 1]).error_code == 0
        assert wait_for(lambda: all(partition_of(b, "a") is not None for b in (one, two, three)), timeout=10)
        ctx = one.controller.context
        lead = ctx.partition_leadership[TopicPartition("a", 0)]
        topic_id, epoch2 = ctx.topic_ids["a"], ctx.broker_epoch(2)
        e, pe = lead.leader_epoch, lead.partition_epoch
        with Client("127.0.0.1", one.bound_port("INTERNAL")) as c:
            assert alter(c, 2, epoch2 - 1, topic_id, e, [2, 3], pe)[0] == E.STALE_BROKER_EPOCH
            assert alter(c, 3, ctx.broker_epoch(3), topic_id, e, [3, 2], pe)[0] == E.NOT_LEADER_OR_FOLLOWER
            assert alter(c, 2, epoch2, topic_id, e - 1, [2, 3], pe)[0] == E.FENCED_LEADER_EPOCH
            assert alter(c, 2, epoch2, topic_id, e, [2, 3], pe + 5)[0] == E.INVALID_UPDATE_VERSION
            assert alter(c, 2, epoch2, topic_id, e, [3, 1], pe)[0] == E.INVALID_REQUEST  # leader left out
            assert alter(c, 2, epoch2, uuid.uuid4(), e, [2, 3], pe)[0] == E.UNKNOWN_TOPIC_ID
            nothing_changed = ctx.partition_leadership[TopicPartition("a", 0)]
            assert (nothing_changed.isr, nothing_changed.partition_epoch) == (lead.isr, pe)
            # Accepted (v3, with broker epochs): a new partition epoch, the same leader epoch.
            code, answer = alter(c, 2, epoch2, topic_id, e, [2, 3], pe, version=3)
            assert code == E.NONE and (answer.leader_id, answer.leader_epoch, answer.isr,
                                       answer.partition_epoch) == (2, e, [2, 3], pe + 1)
            # Every broker's metadata hears it (UpdateMetadata).
            assert wait_for(lambda: all(b.metadata_cache.snapshot.topics["a"].partitions[0].isr == (2, 3)
                                        for b in (one, two, three)), timeout=10)
        three.shutdown()  # a broker that is gone cannot join an ISR
        assert wait_for(lambda: 3 not in one.controller.context.live_or_shutting_down_broker_ids, timeout=10)
        lead = ctx.partition_leadership[TopicPartition("a", 0)]
        with Client("127.0.0.1", one.bound_port("INTERNAL")) as c:
            assert alter(c, 2, epoch2, topic_id, lead.leader_epoch, [2, 1, 3],
                         lead.partition_epoch)[0] == E.INELIGIBLE_REPLICA


def test_no_unclean_election_unless_the_topic_allows_it(tmp_path):
    with brokers(tmp_path, 2, replica_lag_time_max_ms="500") as (one, two):
        assert create(one, "clean", [2, 1]).error_code == 0
        assert create(one, "unclean", [2, 1], unclean_leader_election_enable="true").error_code == 0
        assert wait_for(lambda: all(partition_of(b, t) is not None for b in (one, two)
                                    for t in ("clean", "unclean")), timeout=10)
        both = ("clean", "unclean")
        assert wait_for(lambda: all(leader_state(one, t)[2] == (2, 1) for t in both), timeout=10)
        # Broker 1 stops following: it leaves both ISRs, broker 2 is the last member.
        one.replica_manager.fetcher_manager.remove_fetcher_for_partitions([("clean", 0), ("unclean", 0)])
        assert wait_for(lambda: all(leader_state(one, t)[2] == (2,) for t in both), timeout=10)
        two.shutdown()  # nothing to hand over to: it stops leading both, and its session ends
        assert wait_for(lambda: leader_state(one, "unclean")[0] == 1, timeout=10)  # allowed: broker 1
        assert leader_state(one, "unclean")[2] == (1,)
        # The clean topic stays offline with its last ISR member remembered, until it is back.
        assert leader_state(one, "clean")[:1] == (-1,) and leader_state(one, "clean")[2] == (2,)


def test_a_waiting_followers_fetch_is_read_again_only_once_the_log_end_moves(tmp_path):
    """A follower's fetch waiting at the leader's log end reads nothing more until an append (or a
    leadership change) moves what it would read: the other followers' fetches, which move the
    high watermark, do not make it read again (FetchApis.at_log_end, Kafka's offset comparison).
    Its fetch offset is taken when it arrives, not on each try (Kafka's fetchMessages)."""
    with brokers(tmp_path) as (one, two, three):
        assert create(one, "w", [1, 2, 3]).error_code == 0
        assert wait_for(lambda: all(partition_of(b, "w") is not None for b in (one, two, three)), timeout=10)
        with connect(one) as c:
            assert produce(c, "w", batch(values(4)), acks=-1).error_code == 0
        assert wait_for(lambda: in_sync([one, two, three], "w", 4), timeout=10)
        apis = one.apis.area(FetchApis)
        partition = partition_of(one, "w")
        epoch = partition.leader_epoch
        topic_id = partition.topic_id

        def info(offset: int, leader_epoch: int = epoch, topic: str | None = "w") -> list[FetchInfo]:
            return [FetchInfo(topic, topic_id, 0, offset, 1 << 20, leader_epoch)]

        assert apis.at_log_end(info(4))
        assert not apis.at_log_end(info(3))  # behind: there is something to read
        assert not apis.at_log_end(info(4, epoch - 1))  # an old epoch: read, to answer its error
        assert not apis.at_log_end(info(4, -1))  # no epoch named: read as before
        assert not apis.at_log_end(info(4, topic=None))  # an unknown topic id: its error
        # The followers' fetches wait at the log end meanwhile; an append answers them at once
        # and, acks=all, they bring the high watermark with them.
        with connect(one) as c:
            assert produce(c, "w", batch(values(2, 4)), acks=-1).error_code == 0
        assert not apis.at_log_end(info(4))
        assert wait_for(lambda: in_sync([one, two, three], "w", 6), timeout=10)
        # On a follower, nothing is led: a fetch there is read (and refused).
        assert not two.apis.area(FetchApis).at_log_end(info(6))
