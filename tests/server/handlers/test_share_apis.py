"""The share apis on the wire against one broker: ShareGroupHeartbeat, ShareGroupDescribe and
ListGroups of a share group; ShareFetch's share sessions (epochs, SHARE_SESSION_NOT_FOUND,
INVALID_SHARE_SESSION_EPOCH, acknowledgements refused in the opening request), acquired
records, a long poll woken by a produce, unknown topic ids; ShareAcknowledge and
INVALID_RECORD_STATE; DeleteGroups of a share group."""

from __future__ import annotations

import time
import uuid

import pytest

from kafkalite.protocol import ApiKey
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import (
    find_coordinator,
    list_groups,
    share_group_describe,
)
from tests.support.brokers import connect, running_broker
from tests.support.raw_requests import batch, create_topic, produce
from tests.support.share_requests import (
    acquired_batches,
    call_share_acknowledge,
    call_share_fetch,
    fetch_request,
    share_heartbeat,
)
from tests.support.wait import wait_for


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with running_broker(tmp_path_factory.mktemp("share"), **{
            "group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "1",
            "share.auto.offset.reset": "earliest"}) as b:
        yield b


@pytest.fixture
def topic(broker):
    name = f"t-{uuid.uuid4().hex[:6]}"
    with connect(broker) as c:
        create_topic(c, name)
        assert wait_for(lambda: name in broker.metadata_cache.snapshot.topics, timeout=10)
        for i in range(3):
            assert produce(c, name, batch([b"a%d" % i, b"b%d" % i])).error_code == E.NONE
    return name


def topic_id(broker, name: str) -> uuid.UUID:
    return broker.metadata_cache.snapshot.topics[name].topic_id








def test_heartbeat_describe_and_list_a_share_group(broker, topic):
    group = f"g-{uuid.uuid4().hex[:6]}"
    with connect(broker) as c:
        def joined() -> bool:  # FindCoordinator creates __consumer_offsets; then it loads
            c.call(ApiKey.FIND_COORDINATOR, 3, find_coordinator.REQUEST(key=group, key_type=0))
            return share_heartbeat(c, group, "member-1", 0, topic).error_code == E.NONE
        assert wait_for(joined, timeout=10)
        r = share_heartbeat(c, group, "member-1", 1)
        assert (r.error_code, r.member_epoch, r.assignment) == (E.NONE, 1, None)
        assert share_heartbeat(c, group, "member-1", 9).error_code == E.FENCED_MEMBER_EPOCH
        described = c.call(ApiKey.SHARE_GROUP_DESCRIBE, 1, share_group_describe.REQUEST(
            group_ids=[group, "nope"], include_authorized_operations=False)).groups
        assert [(g.group_id, g.error_code, g.group_state) for g in described] == [
            (group, E.NONE, "Stable"), ("nope", E.GROUP_ID_NOT_FOUND, "Dead")]
        (member,) = described[0].members
        (tp,) = member.assignment.topic_partitions
        assert (member.member_id, tp.topic_name, list(tp.partitions)) == ("member-1", topic, [0])
        listed = c.call(ApiKey.LIST_GROUPS, 5, list_groups.REQUEST(types_filter=["share"])).groups
        assert [(g.group_id, g.group_type, g.group_state) for g in listed if g.group_id == group] == [
            (group, "share", "Stable")]
        assert share_heartbeat(c, group, "member-1", -1).member_epoch == -1


def test_share_sessions_and_acquisition(broker, topic):
    group, tid = f"g-{uuid.uuid4().hex[:6]}", topic_id(broker, topic)
    with connect(broker) as c:
        assert call_share_fetch(c, group, "m", 3, tid).error_code == E.SHARE_SESSION_NOT_FOUND
        assert call_share_fetch(c, group, "m", 0, tid, acks=[(0, 0, [1])]).error_code == E.INVALID_REQUEST
        first = call_share_fetch(c, group, "m", 0, tid, max_wait_ms=5000, max_records=3)
        assert first.error_code == E.NONE and first.acquisition_lock_timeout_ms == 30000
        assert acquired_batches(first) == [(0, 2, 1)]  # the state loads, then the waiting fetch acquires
        assert call_share_fetch(c, group, "m", 5, tid).error_code == E.INVALID_SHARE_SESSION_EPOCH
        # Another member of the group gets the rest, not what "m" holds.
        other = call_share_fetch(c, group, "n", 0, tid)
        assert acquired_batches(other) == [(3, 5, 1)]
        # Acknowledging what another member holds fails; the session's epoch still moves on.
        wrong = call_share_fetch(c, group, "m", 1, tid, acks=[(3, 3, [1])])
        (p,) = wrong.responses[0].partitions
        assert p.acknowledge_error_code == E.INVALID_RECORD_STATE
        acked = call_share_acknowledge(c, group, "m", 2, tid, [(0, 2, [1, 2, 3])])
        assert acked.error_code == E.NONE and acked.responses[0].partitions[0].error_code == E.NONE
        # Offset 1 was released: "m" gets it again, as its second delivery.
        assert acquired_batches(call_share_fetch(c, group, "m", 3, tid)) == [(1, 1, 2)]
        closed = call_share_fetch(c, group, "m", -1, None)
        assert closed.error_code == E.NONE
        assert call_share_fetch(c, group, "m", 4, tid).error_code == E.SHARE_SESSION_NOT_FOUND
        unknown = call_share_fetch(c, group, "u", 0, uuid.uuid4())
        assert unknown.responses[0].partitions[0].error_code == E.UNKNOWN_TOPIC_ID


def test_a_waiting_share_fetch_is_woken_by_a_produce(broker, topic):
    group, tid = f"g-{uuid.uuid4().hex[:6]}", topic_id(broker, topic)
    with connect(broker) as c, connect(broker) as producer:
        assert acquired_batches(call_share_fetch(c, group, "m", 0, tid, max_wait_ms=5000)) == [(0, 5, 1)]
        c.send(ApiKey.SHARE_FETCH, 1, fetch_request(group, "m", 1, None, max_wait_ms=20000))
        began = time.monotonic()
        assert produce(producer, topic, batch([b"late"])).error_code == E.NONE
        _, response = c.receive(ApiKey.SHARE_FETCH, 1)
        assert acquired_batches(response) == [(6, 6, 1)]
        assert time.monotonic() - began < 15  # answered by the append, not the 20 s wait


def test_delete_groups_deletes_an_empty_share_group(broker, topic):
    from kafkalite.protocol.messages import delete_groups

    group = f"g-{uuid.uuid4().hex[:6]}"
    with connect(broker) as c:
        def joined() -> bool:
            c.call(ApiKey.FIND_COORDINATOR, 3, find_coordinator.REQUEST(key=group, key_type=0))
            return share_heartbeat(c, group, "m", 0, topic).error_code == E.NONE
        assert wait_for(joined, timeout=10)

        def delete() -> int:
            (result,) = c.call(ApiKey.DELETE_GROUPS, 2, delete_groups.REQUEST(groups_names=[group])).results
            return int(result.error_code)
        assert delete() == E.NON_EMPTY_GROUP
        assert share_heartbeat(c, group, "m", -1).error_code == E.NONE
        assert delete() == E.NONE
        assert share_heartbeat(c, group, "m", 2).error_code == E.GROUP_ID_NOT_FOUND  # gone
