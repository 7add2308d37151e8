"""The group coordinator with real purgatories and timers, its records kept in a list (the broker's
__consumer_offsets path is tested with real clients in test_consumer_groups.py)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import pytest

from kafkalite.protocol import coordinator_records as cr
from kafkalite.protocol import error_codes as E
from kafkalite.server.coordinator.group import CommittedOffset, GroupState
from kafkalite.server.coordinator.group_coordinator import GroupCoordinator
from kafkalite.server.coordinator.results import JoinResult, SyncResult
from kafkalite.server.coordinator.settings import GroupConfig
from tests.support.wait import wait_for

PROTOCOLS = [("range", b"sub-range"), ("roundrobin", b"sub-rr")]


class ListStore:
    def __init__(self) -> None:
        self.records: list[tuple[bytes, bytes | None]] = []
        self.fail_with = E.NONE

    def append(self, group_id, records, done, producer=None, placed=None) -> None:
        if not self.fail_with:
            if placed is not None:
                placed(len(self.records))
            self.records.extend(records)
        done(self.fail_with)


@pytest.fixture
def coordinator():
    store = ListStore()
    c = GroupCoordinator(1, GroupConfig(min_session_timeout_ms=10, initial_rebalance_delay_ms=0), store,
                         partition_for=lambda group: 0)
    c.load(0, [])
    c.store_list = store  # type: ignore[attr-defined]
    yield c
    c.shutdown()


@contextlib.contextmanager
def coordinator_with(initial_rebalance_delay_ms: int) -> Iterator[GroupCoordinator]:
    """A coordinator of partition 0's groups with this initial delay, shut down afterwards."""
    config = GroupConfig(min_session_timeout_ms=10, initial_rebalance_delay_ms=initial_rebalance_delay_ms)
    c = GroupCoordinator(1, config, ListStore(), partition_for=lambda group: 0)
    try:
        c.load(0, [])
        yield c
    finally:
        c.shutdown()


class Answer:
    def __init__(self) -> None:
        self.event = threading.Event()
        self.value = None

    def __call__(self, value) -> None:
        self.value = value
        self.event.set()

    def get(self, timeout: float = 10):
        assert self.event.wait(timeout), "no answer"
        return self.value


def join(c: GroupCoordinator, member_id: str = "", session_ms: int = 10000, rebalance_ms: int = 10000,
         protocols=PROTOCOLS, instance_id: str | None = None, group: str = "g") -> Answer:
    answer = Answer()
    c.join_group(group, member_id, instance_id, True, "client", "/127.0.0.1", rebalance_ms, session_ms,
                 "consumer", list(protocols), answer)
    return answer


def join_new(c: GroupCoordinator, **kw) -> Answer:
    first: JoinResult = join(c, **kw).get()
    assert first.error == E.MEMBER_ID_REQUIRED and first.member_id
    return join(c, member_id=first.member_id, **kw)


def sync(c: GroupCoordinator, member_id: str, generation: int, assignments=None, group: str = "g") -> Answer:
    answer = Answer()
    c.sync_group(group, generation, member_id, None, "consumer", None, assignments or {}, answer)
    return answer


def test_two_members_form_a_generation_and_get_the_leaders_assignment(coordinator):
    a = join_new(coordinator)
    first: JoinResult = a.get()
    assert (first.error, first.generation_id, first.protocol_name) == (E.NONE, 1, "range")
    assert first.leader_id == first.member_id and len(first.members) == 1
    s = sync(coordinator, first.member_id, 1, {first.member_id: b"all"}).get()
    assert s == SyncResult(E.NONE, "consumer", "range", b"all")
    assert coordinator.groups["g"].state is GroupState.STABLE
    # A second member: the leader's heartbeat says rebalance, both join again.
    b = join_new(coordinator)
    assert coordinator.heartbeat("g", first.member_id, None, 1) == E.REBALANCE_IN_PROGRESS
    a2 = join(coordinator, member_id=first.member_id)
    ra, rb = a2.get(), b.get()
    assert ra.generation_id == rb.generation_id == 2
    assert ra.leader_id == first.member_id and {m[0] for m in ra.members} == {ra.member_id, rb.member_id}
    assert rb.members == ()  # only the leader sees the members
    follower = sync(coordinator, rb.member_id, 2)
    assert not follower.event.is_set()  # waits for the leader's assignment
    sync(coordinator, ra.member_id, 2, {ra.member_id: b"p0", rb.member_id: b"p1"}).get()
    assert follower.get().assignment == b"p1"
    assert coordinator.heartbeat("g", rb.member_id, None, 2) == E.NONE
    assert coordinator.heartbeat("g", rb.member_id, None, 1) == E.ILLEGAL_GENERATION
    assert coordinator.heartbeat("g", "nobody", None, 2) == E.UNKNOWN_MEMBER_ID
    # The assignment was stored: a group metadata record with both members.
    key, value = coordinator.store_list.records[-1]
    assert cr.decode_key(key) == cr.GroupKey("g")
    stored = cr.decode_group_value(value)
    assert (stored.generation, stored.protocol, {m.member_id: m.assignment for m in stored.members}) == (
        2, "range", {ra.member_id: b"p0", rb.member_id: b"p1"})


def test_protocol_chosen_by_votes_and_an_incompatible_member_refused(coordinator):
    a = join_new(coordinator, protocols=[("roundrobin", b"x"), ("range", b"y")]).get()
    assert a.protocol_name == "roundrobin"
    refused = join(coordinator, protocols=[("sticky", b"z")]).get()
    assert refused.error == E.INCONSISTENT_GROUP_PROTOCOL


def test_a_silent_member_is_removed_after_its_session_and_the_group_rebalances(coordinator):
    a = join_new(coordinator, session_ms=300).get()
    sync(coordinator, a.member_id, 1, {a.member_id: b"x"}).get()
    b = join_new(coordinator, session_ms=60000)
    # a never heartbeats again: its session ends, the rebalance goes on without it.
    result = b.get()
    assert result.error == E.NONE and result.generation_id == 2 and result.leader_id == result.member_id
    assert set(coordinator.groups["g"].members) == {result.member_id}


def test_leave_group_rebalances_and_the_last_member_leaves_the_group_empty(coordinator):
    a = join_new(coordinator).get()
    sync(coordinator, a.member_id, 1, {a.member_id: b"x"}).get()
    assert coordinator.leave_group("g", [(a.member_id, None), ("other", None)]) == (
        E.NONE, [E.NONE, E.UNKNOWN_MEMBER_ID])
    assert wait_for(lambda: coordinator.groups["g"].state is GroupState.EMPTY, timeout=5)


def test_offsets_commit_fetch_and_reload_from_the_records(coordinator):
    done = Answer()
    coordinator.commit_offsets("simple", "", None, -1, {("t", 0): CommittedOffset(5, 2, "meta", 1000)}, done)
    assert done.get() == E.NONE
    a = join_new(coordinator).get()
    sync(coordinator, a.member_id, 1, {a.member_id: b"x"}).get()
    done = Answer()
    coordinator.commit_offsets("g", a.member_id, None, 1, {("t", 1): CommittedOffset(7, -1, "", 2000)}, done)
    assert done.get() == E.NONE
    stale = Answer()
    coordinator.commit_offsets("g", a.member_id, None, 0, {("t", 1): CommittedOffset(9, -1, "", 2000)}, stale)
    assert stale.get() == E.ILLEGAL_GENERATION
    assert coordinator.fetch_offsets("g", [("t", 1), ("t", 2)]) == (
        E.NONE, {("t", 1): CommittedOffset(7, -1, "", 2000), ("t", 2): None})
    # Another coordinator loads the partition's records: the same offsets.
    other = GroupCoordinator(2, GroupConfig(), ListStore(), partition_for=lambda group: 0)
    try:
        assert other.fetch_offsets("g", None)[0] == E.NOT_COORDINATOR
        other.load(0, coordinator.store_list.records)
        simple = other.fetch_offsets("simple", None)
        assert simple == (E.NONE, {("t", 0): CommittedOffset(5, 2, "meta", 1000)})
        assert other.fetch_offsets("g", None)[1] == {("t", 1): CommittedOffset(7, -1, "", 2000)}
        assert other.groups["g"].generation_id == 1
    finally:
        other.shutdown()


def test_delete_groups_refuses_a_group_with_members_and_tombstones_an_empty_one(coordinator):
    done = Answer()
    coordinator.commit_offsets("idle", "", None, -1, {("t", 0): CommittedOffset(1, -1, "", 0)}, done)
    done.get()
    a = join_new(coordinator).get()
    deleted = Answer()
    coordinator.delete_groups(["idle", "g", "missing"], deleted)
    assert deleted.get() == {"idle": E.NONE, "g": E.NON_EMPTY_GROUP, "missing": E.GROUP_ID_NOT_FOUND}
    assert "idle" not in coordinator.groups and a.member_id in coordinator.groups["g"].members
    tail = [(cr.decode_key(k), v) for k, v in coordinator.store_list.records[-2:]]
    assert tail == [(cr.OffsetKey("idle", "t", 0), None), (cr.GroupKey("idle"), None)]


def test_requests_for_groups_of_a_partition_not_led_here_are_refused(coordinator):
    coordinator.unload(0)
    assert join(coordinator).get().error == E.NOT_COORDINATOR
    assert coordinator.heartbeat("g", "m", None, 1) == E.NOT_COORDINATOR
    assert coordinator.check_group("") == E.INVALID_GROUP_ID


def test_offset_delete_refuses_the_topics_members_subscribe_to(coordinator):
    # A consumer protocol subscription (version 0) to topic "t" only.
    subscription = b"\x00\x00" + b"\x00\x00\x00\x01" + b"\x00\x01t" + b"\xff\xff\xff\xff"
    a = join_new(coordinator, protocols=[("range", subscription)]).get()
    sync(coordinator, a.member_id, 1, {a.member_id: b"x"}).get()
    for topic in ("t", "u"):
        done = Answer()
        offsets = {(topic, 0): CommittedOffset(1, -1, "", 0)}
        coordinator.commit_offsets("g", a.member_id, None, 1, offsets, done)
        assert done.get() == E.NONE
    answers: list = []
    coordinator.delete_offsets("g", [("t", 0), ("u", 0)], lambda error, per: answers.append((error, per)))
    assert answers == [(E.NONE, {("t", 0): E.GROUP_SUBSCRIBED_TO_TOPIC})]
    assert set(coordinator.groups["g"].offsets) == {("t", 0)}


def test_offsets_of_an_empty_group_expire_after_the_retention_and_the_group_goes(tmp_path):
    now = [1_000_000]
    store = ListStore()
    c = GroupCoordinator(1, GroupConfig(min_session_timeout_ms=10, initial_rebalance_delay_ms=0), store,
                         partition_for=lambda group: 0, now_ms=lambda: now[0])
    try:
        c.load(0, [])
        done = Answer()
        c.commit_offsets("old", "", None, -1, {("t", 0): CommittedOffset(5, -1, "", now[0])}, done)
        assert done.get() == E.NONE
        now[0] += 1000
        done = Answer()
        c.commit_offsets("old", "", None, -1, {("t", 1): CommittedOffset(6, -1, "", now[0])}, done)
        assert done.get() == E.NONE
        assert c.cleanup_expired_offsets(retention_ms=1500) == 0  # neither is 1.5 s old yet
        now[0] += 600
        assert c.cleanup_expired_offsets(retention_ms=1500) == 1  # t-0's commit is
        assert set(c.groups["old"].offsets) == {("t", 1)}
        now[0] += 1000
        assert c.cleanup_expired_offsets(retention_ms=1500) == 1
        assert "old" not in c.groups  # nothing left: the group goes, with a tombstone
        assert [(cr.decode_key(k), v) for k, v in store.records[-2:]] == [
            (cr.OffsetKey("old", "t", 1), None), (cr.GroupKey("old"), None)]
    finally:
        c.shutdown()


def test_the_initial_rebalance_delay_lets_members_started_together_form_one_generation():
    with coordinator_with(1000) as c:
        first = join_new(c)
        assert not first.event.wait(0.1)  # held for group.initial.rebalance.delay.ms
        second = join_new(c)  # within the delay: the same first generation
        a, b = first.get(), second.get()
        assert a.generation_id == b.generation_id == 1
        assert len(c.groups["g"].members) == 2


def test_a_first_member_waits_one_initial_delay_and_its_session_does_not_run_while_it_waits():
    # Kafka: the member that starts the first rebalance does not extend the initial delay, and a
    # new member waiting in its JoinGroup cannot heartbeat, so its session does not expire it.
    with coordinator_with(300) as c:
        first: JoinResult = join(c, session_ms=100).get()
        answer = join(c, member_id=first.member_id, session_ms=100)
        result = answer.get()
        assert (result.error, result.generation_id, result.member_id) == (E.NONE, 1, first.member_id)
        assert list(c.groups["g"].members) == [first.member_id]
        # The member now heartbeats in its session, as any member of a formed generation.
        assert not c.groups["g"].members[first.member_id].is_new


def test_a_member_waiting_in_a_rebalance_is_not_expired_by_its_session():
    with coordinator_with(0) as c:
        a = join_new(c, session_ms=10000).get()
        b_join = join_new(c, session_ms=10000)
        a = join(c, member_id=a.member_id, session_ms=10000).get()
        b = b_join.get()
        assert a.generation_id == b.generation_id == 2
        syncs = [sync(c, a.member_id, 2, {a.member_id: b"x", b.member_id: b"y"}), sync(c, b.member_id, 2)]
        assert [s.get().error for s in syncs] == [E.NONE, E.NONE]
        group = c.groups["g"]
        rejoin = join(c, member_id=a.member_id, session_ms=10000)  # the rebalance now waits for b
        member = group.members[a.member_id]
        assert member.await_join is not None
        c.member_expired(group, member, member.last_heartbeat_ms)  # a's session ran out meanwhile
        assert a.member_id in group.members
        b_rejoin = join(c, member_id=b.member_id, session_ms=10000)
        assert rejoin.get().generation_id == b_rejoin.get().generation_id == 3
