"""A share group's state deleted with it, seen from a partition leader that is not the group's
coordinator (two brokers in the test's process, on the wire): the leader's cached share-partition
does not serve the old state to the group's next member, whether it learns of the deletion when the
group's first share session opens there again, or, while another share session of the group is
still open, from the share coordinator refusing its next write (the state was deleted)."""

from __future__ import annotations

import uuid

import pytest

from kafkalite.protocol import ApiKey
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import delete_groups, find_coordinator
from tests.support.brokers import connect, create, two_brokers
from tests.support.raw_requests import batch, produce
from tests.support.share_requests import acquired_ranges, call_share_fetch, share_heartbeat
from tests.support.wait import wait_for


@pytest.fixture(scope="module")
def brokers(tmp_path_factory):
    with two_brokers(tmp_path_factory.mktemp("sharestate"), **{
            "group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "1",
            "share.coordinator.state.topic.num.partitions": "1",
            "share.auto.offset.reset": "earliest"}) as bs:
        yield {b.node_id: b for b in bs}


def coordinator_of(brokers, group: str) -> int:
    with connect(brokers[1]) as c:
        def found() -> int | None:
            (answer,) = c.call(ApiKey.FIND_COORDINATOR, 4, find_coordinator.REQUEST(
                key_type=0, coordinator_keys=[group])).coordinators
            return answer.node_id if answer.error_code == E.NONE else None
        assert wait_for(lambda: found() is not None, timeout=10)
        node = found()
        assert node is not None
        return node








def setup_and_delete(brokers, close_session: bool):
    """A group reads and accepts offsets 0-5 of a topic led by the broker that is not its
    coordinator, its member leaves (its share session closed or not), the group is deleted."""
    group = f"g-{uuid.uuid4().hex[:6]}"
    coordinator = coordinator_of(brokers, group)
    leader = 2 if coordinator == 1 else 1
    topic = f"t-{uuid.uuid4().hex[:6]}"
    assert create(brokers[leader], topic, [leader]).error_code == E.NONE
    assert wait_for(lambda: all(topic in b.metadata_cache.snapshot.topics for b in brokers.values()), 10)
    tid = brokers[leader].metadata_cache.snapshot.topics[topic].topic_id
    c, lead = connect(brokers[coordinator]), connect(brokers[leader])
    try:
        return _read_and_delete(brokers, group, topic, tid, c, lead, close_session, leader)
    except BaseException:
        c.close()
        lead.close()
        raise


def _read_and_delete(brokers, group, topic, tid, c, lead, close_session, leader):
    records = batch([b"r%d" % i for i in range(6)])
    assert wait_for(lambda: produce(lead, topic, records).error_code == E.NONE, 10)
    assert wait_for(lambda: share_heartbeat(c, group, "m", 0, topic).error_code == E.NONE, 10)
    assert acquired_ranges(call_share_fetch(lead, group, "m", 0, tid, max_wait_ms=5000)) == [(0, 5)]
    accepted = call_share_fetch(lead, group, "m", 1, tid, acks=[(0, 5, 1)])
    assert accepted.responses[0].partitions[0].acknowledge_error_code == E.NONE
    if close_session:
        assert call_share_fetch(lead, group, "m", -1, None).error_code == E.NONE
    assert share_heartbeat(c, group, "m", -1).error_code == E.NONE
    (result,) = c.call(ApiKey.DELETE_GROUPS, 2, delete_groups.REQUEST(groups_names=[group])).results
    assert result.error_code == E.NONE
    assert brokers[leader].share_partitions.holds(group) == [(tid, 0)]  # still cached there
    assert wait_for(lambda: share_heartbeat(c, group, "n", 0, topic).error_code == E.NONE, 10)  # a new group
    return group, topic, tid, c, lead


def test_the_groups_first_share_session_on_a_leader_reads_the_state_again(brokers):
    group, _, tid, c, lead = setup_and_delete(brokers, close_session=True)
    with c, lead:
        assert acquired_ranges(call_share_fetch(lead, group, "n", 0, tid, max_wait_ms=5000)) == [(0, 5)]
        assert call_share_fetch(lead, group, "n", -1, None).error_code == E.NONE
        assert share_heartbeat(c, group, "n", -1).error_code == E.NONE


def test_a_leader_still_serving_the_group_is_fenced_at_its_next_write(brokers):
    group, topic, tid, c, lead = setup_and_delete(brokers, close_session=False)
    with c, lead:
        # "m"'s session is still open here, so the cached share-partition (start offset 6) stays.
        assert acquired_ranges(call_share_fetch(lead, group, "n", 0, tid)) == []
        assert produce(lead, topic, batch([b"r6"])).error_code == E.NONE
        assert acquired_ranges(call_share_fetch(lead, group, "n", 1, tid, max_wait_ms=5000)) == [(6, 6)]
        # Its write is refused (the state was deleted): the leader drops it and reads the state
        # again, so the new group starts at share.auto.offset.reset (earliest).
        refused = call_share_fetch(lead, group, "n", 2, tid, acks=[(6, 6, 1)])
        assert refused.responses[0].partitions[0].acknowledge_error_code == E.INVALID_REQUEST
        got: list[tuple[int, int]] = []
        epoch = 3

        def fetched() -> bool:
            nonlocal epoch
            got.extend(acquired_ranges(call_share_fetch(lead, group, "n", epoch, tid, max_wait_ms=1000)))
            epoch += 1
            return bool(got)
        assert wait_for(fetched, 10)
        assert got == [(0, 6)]
        assert call_share_fetch(lead, group, "n", -1, None).error_code == E.NONE
        assert call_share_fetch(lead, group, "m", -1, None).error_code == E.NONE
        assert share_heartbeat(c, group, "n", -1).error_code == E.NONE
