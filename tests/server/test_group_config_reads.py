"""Group configs as the group managers read them, on the wire against one broker: a group's
consumer.heartbeat.interval.ms / share.heartbeat.interval.ms is what its heartbeats answer (current
at each heartbeat), its consumer.session.timeout.ms / share.session.timeout.ms expires a silent
member sooner than the broker's; a deleted share group's share-partition state is gone (a new
group of the same id starts at share.auto.offset.reset), and AlterShareGroupOffsets is what the
next fetch serves (the leader's cached share-partition forgotten)."""

from __future__ import annotations

import time
import uuid

import pytest

from kafkalite.protocol import ApiKey
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import (
    alter_share_group_offsets,
    consumer_group_heartbeat,
    delete_groups,
    find_coordinator,
    incremental_alter_configs,
)
from kafkalite.server.share.persister import UNINITIALIZED_STATE_EPOCH, ShareStateKey, StateSummary
from tests.support.brokers import connect, running_broker
from tests.support.raw_requests import batch, create_topic, produce
from tests.support.share_requests import acquired_ranges, call_share_fetch, share_heartbeat
from tests.support.wait import wait_for

GROUP_RESOURCE = 32
SET = 0


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    # The broker's own session timeouts stay Kafka's 45 s; only their minimums are lowered, so
    # that a group may set shorter ones.
    with running_broker(tmp_path_factory.mktemp("groupcfg"), **{
            "group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "1",
            "group.consumer.min.session.timeout.ms": "1000",
            "group.consumer.min.heartbeat.interval.ms": "100",
            "group.share.min.session.timeout.ms": "1000", "group.share.min.heartbeat.interval.ms": "100",
            "share.auto.offset.reset": "earliest"}) as b:
        yield b


@pytest.fixture
def topic(broker):
    name = f"t-{uuid.uuid4().hex[:6]}"
    with connect(broker) as c:
        create_topic(c, name)
        assert wait_for(lambda: name in broker.metadata_cache.snapshot.topics, timeout=10)
        assert produce(c, name, batch([b"r%d" % i for i in range(6)])).error_code == E.NONE
    return name


def set_group_config(broker, group: str, **values: str) -> None:
    R = incremental_alter_configs.REQUEST
    Res = R["resources"]
    request = R(resources=[Res(resource_type=GROUP_RESOURCE, resource_name=group, configs=[
        Res["configs"](name=k.replace("_", "."), config_operation=SET, value=v) for k, v in values.items()])])
    with connect(broker) as c:
        (answer,) = c.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, request).responses
    assert answer.error_code == E.NONE, answer.error_message
    assert wait_for(lambda: all(broker.group_config(group).overrides.get(k.replace("_", ".")) == v
                                for k, v in values.items()), timeout=10)


def consumer_heartbeat(c, group: str, member: str, epoch: int, topic: str | None = None):
    return c.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, consumer_group_heartbeat.REQUEST(
        group_id=group, member_id=member, member_epoch=epoch, rebalance_timeout_ms=30000,
        subscribed_topic_names=[topic] if topic else None, server_assignor=None,
        topic_partitions=[] if epoch == 0 else None))




def joined(c, join) -> bool:
    """The group's coordinator is ready (FindCoordinator creates __consumer_offsets) and the join
    answered."""
    return wait_for(lambda: join().error_code == E.NONE, timeout=10)


def find(c, group: str) -> None:
    c.call(ApiKey.FIND_COORDINATOR, 3, find_coordinator.REQUEST(key=group, key_type=0))


def consumer_members(broker, group: str) -> set[str]:
    found = broker.group_coordinator.consumer.groups.get(group)
    return set(found.members) if found is not None else set()


def share_members(broker, group: str) -> set[str]:
    found = broker.share_groups.groups.get(group)
    return set(found.members) if found is not None else set()


def test_consumer_heartbeat_interval_is_the_groups(broker, topic):
    group, plain = f"g-{uuid.uuid4().hex[:6]}", f"p-{uuid.uuid4().hex[:6]}"
    set_group_config(broker, group, consumer_heartbeat_interval_ms="700")
    with connect(broker) as c:
        find(c, group)
        assert joined(c, lambda: consumer_heartbeat(c, group, "m1", 0, topic))
        first = consumer_heartbeat(c, group, "m1", 0, topic)
        assert (first.error_code, first.heartbeat_interval_ms) == (E.NONE, 700)
        assert joined(c, lambda: consumer_heartbeat(c, plain, "m2", 0, topic))
        assert consumer_heartbeat(c, plain, "m2", 0, topic).heartbeat_interval_ms == 5000  # the broker's
        # A change applies at the next heartbeat.
        set_group_config(broker, group, consumer_heartbeat_interval_ms="900")
        again = consumer_heartbeat(c, group, "m1", first.member_epoch)
        assert (again.error_code, again.heartbeat_interval_ms) == (E.NONE, 900)
        for g, m in ((group, "m1"), (plain, "m2")):
            assert consumer_heartbeat(c, g, m, -1).error_code == E.NONE


def test_a_groups_consumer_session_timeout_expires_a_silent_member_sooner(broker, topic):
    group, plain = f"g-{uuid.uuid4().hex[:6]}", f"p-{uuid.uuid4().hex[:6]}"
    set_group_config(broker, group, consumer_session_timeout_ms="1500", consumer_heartbeat_interval_ms="500")
    with connect(broker) as c:
        find(c, group)
        assert joined(c, lambda: consumer_heartbeat(c, plain, "quiet", 0, topic))
        assert joined(c, lambda: consumer_heartbeat(c, group, "silent", 0, topic))
        began = time.monotonic()
        assert consumer_members(broker, group) == {"silent"}
        assert wait_for(lambda: not consumer_members(broker, group), timeout=10)
        assert 1.4 <= time.monotonic() - began < 10  # its 1.5 s, not the broker's 45 s
        assert consumer_members(broker, plain) == {"quiet"}  # the broker's 45 s still running
        assert consumer_heartbeat(c, group, "silent", 1).error_code == E.UNKNOWN_MEMBER_ID
        assert consumer_heartbeat(c, plain, "quiet", -1).error_code == E.NONE


def test_share_heartbeat_interval_and_session_are_the_groups(broker, topic):
    group, plain = f"g-{uuid.uuid4().hex[:6]}", f"p-{uuid.uuid4().hex[:6]}"
    set_group_config(broker, group, share_heartbeat_interval_ms="600", share_session_timeout_ms="1500")
    with connect(broker) as c:
        find(c, group)
        assert joined(c, lambda: share_heartbeat(c, group, "s1", 0, topic))
        assert share_heartbeat(c, group, "s1", 0, topic).heartbeat_interval_ms == 600
        assert joined(c, lambda: share_heartbeat(c, plain, "s2", 0, topic))
        assert share_heartbeat(c, plain, "s2", 0, topic).heartbeat_interval_ms == 5000  # the broker's
        began = time.monotonic()
        # Silent from now: expired after its 1.5 s (the expiry runs every second), not 45 s.
        assert wait_for(lambda: not share_members(broker, group), timeout=10)
        assert 1.4 <= time.monotonic() - began < 10
        assert share_members(broker, plain) == {"s2"}
        assert share_heartbeat(c, plain, "s2", -1).error_code == E.NONE


# --- share-partition state with its group ------------------------------------------------------





def read_all_and_leave(broker, c, group: str, topic: str) -> uuid.UUID:
    """A member joins, acquires and accepts offsets 0-5 (the start offset moves to 6), leaves."""
    tid = broker.metadata_cache.snapshot.topics[topic].topic_id
    find(c, group)
    assert joined(c, lambda: share_heartbeat(c, group, "m", 0, topic))
    assert acquired_ranges(call_share_fetch(c, group, "m", 0, tid, max_wait_ms=5000)) == [(0, 5)]
    done = call_share_fetch(c, group, "m", 1, tid, acks=[(0, 5, 1)])  # ACCEPT
    assert done.responses[0].partitions[0].acknowledge_error_code == E.NONE
    assert call_share_fetch(c, group, "m", -1, None).error_code == E.NONE  # the share session closes
    assert share_heartbeat(c, group, "m", -1).error_code == E.NONE
    assert summary(broker, group, tid).start_offset == 6
    return tid


def summary(broker, group: str, tid: uuid.UUID) -> StateSummary:
    got: list[StateSummary] = []
    broker.share_persister.read_summary(ShareStateKey(group, tid.bytes, 0), -1, got.append)
    assert wait_for(lambda: bool(got), timeout=10)
    return got[0]


def test_a_deleted_share_groups_state_is_gone(broker, topic):
    group = f"g-{uuid.uuid4().hex[:6]}"
    with connect(broker) as c:
        tid = read_all_and_leave(broker, c, group, topic)
        (result,) = c.call(ApiKey.DELETE_GROUPS, 2, delete_groups.REQUEST(groups_names=[group])).results
        assert result.error_code == E.NONE
        assert summary(broker, group, tid).state_epoch == UNINITIALIZED_STATE_EPOCH
        assert broker.share_partitions.holds(group) == []  # the leader's cached one forgotten
        # A new group of that id starts at share.auto.offset.reset (earliest), not at offset 6.
        assert joined(c, lambda: share_heartbeat(c, group, "n", 0, topic))
        assert acquired_ranges(call_share_fetch(c, group, "n", 0, tid, max_wait_ms=5000)) == [(0, 5)]
        assert call_share_fetch(c, group, "n", -1, None).error_code == E.NONE
        assert share_heartbeat(c, group, "n", -1).error_code == E.NONE


def test_altered_share_group_offsets_are_what_the_next_fetch_serves(broker, topic):
    group = f"g-{uuid.uuid4().hex[:6]}"
    R = alter_share_group_offsets.REQUEST
    with connect(broker) as c:
        tid = read_all_and_leave(broker, c, group, topic)
        altered = c.call(ApiKey.ALTER_SHARE_GROUP_OFFSETS, 0, R(group_id=group, topics=[R["topics"](
            topic_name=topic, partitions=[R["topics"]["partitions"](partition_index=0, start_offset=2)])]))
        assert altered.error_code == E.NONE
        assert altered.responses[0].partitions[0].error_code == E.NONE
        assert summary(broker, group, tid).start_offset == 2
        assert joined(c, lambda: share_heartbeat(c, group, "n", 0, topic))
        assert acquired_ranges(call_share_fetch(c, group, "n", 0, tid, max_wait_ms=5000)) == [(2, 5)]
        assert call_share_fetch(c, group, "n", -1, None).error_code == E.NONE
        assert share_heartbeat(c, group, "n", -1).error_code == E.NONE


def test_a_groups_by_duration_reset_starts_at_the_records_no_older_than_it(broker, topic):
    """share.auto.offset.reset=by_duration:<ISO-8601>: the first record whose timestamp is within
    the duration (the topic's six records are stamped at the epoch, the seventh now)."""
    group = f"g-{uuid.uuid4().hex[:6]}"
    tid = broker.metadata_cache.snapshot.topics[topic].topic_id
    with connect(broker) as c:
        now = int(time.time() * 1000)
        assert produce(c, topic, batch([b"new"], timestamp=now)).error_code == E.NONE  # offset 6
        set_group_config(broker, group, **{"share.auto.offset.reset": "by_duration:PT1H"})
        find(c, group)
        assert joined(c, lambda: share_heartbeat(c, group, "m", 0, topic))
        assert acquired_ranges(call_share_fetch(c, group, "m", 0, tid, max_wait_ms=5000)) == [(6, 6)]
        assert call_share_fetch(c, group, "m", -1, None).error_code == E.NONE
        assert share_heartbeat(c, group, "m", -1).error_code == E.NONE


def test_a_groups_overrides_are_read_together():
    """A session timeout below the broker's heartbeat interval is valid with the group's own shorter
    interval (as the controller accepted them): the view keeps both."""
    from kafkalite.controller import group_configs as G

    bounds = {"group.consumer.min.session.timeout.ms": 1000, "group.consumer.min.heartbeat.interval.ms": 100}
    both = {"consumer.session.timeout.ms": "1500", "consumer.heartbeat.interval.ms": "500"}
    view = G.view(both, bounds.get)
    assert (view.consumer_session_timeout_ms, view.consumer_heartbeat_interval_ms) == (1500, 500)
    alone = G.view({"consumer.session.timeout.ms": "1500"}, bounds.get)  # not below the 5 s interval
    assert alone.consumer_session_timeout_ms == 45000
