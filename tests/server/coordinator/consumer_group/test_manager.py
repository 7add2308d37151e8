"""ConsumerGroupHeartbeat's rules (Kafka's GroupMetadataManagerTest, its consumer-group cases):
validation, joining, epochs and fencing, revocation before assignment, static members, timeouts,
regex subscriptions, max size, the records written and their replay, offsets' member checks."""

from __future__ import annotations

import pytest

from kafkalite.protocol import coordinator_records as cr
from kafkalite.protocol import error_codes as E
from kafkalite.server.coordinator.consumer_group.model import ConsumerGroupState
from kafkalite.server.coordinator.consumer_group.reconciliation import MemberState

from .support import Harness


def test_first_member_gets_every_partition_and_the_group_is_stable():
    h = Harness({"t": 4})
    r = h.heartbeat("a", 0)
    assert (r.error, r.member_id, r.member_epoch) == (E.NONE, "a", 1)
    assert r.assignment == h.tp(t=[0, 1, 2, 3])
    assert h.manager.state("g") == ConsumerGroupState.STABLE
    kinds = [cr.decode_key(k).record for k, _ in h.written]  # type: ignore[union-attr]
    assert kinds == [5, 4, 3, 7, 6, 8]  # member, topics, epoch, target, target epoch, current


@pytest.mark.parametrize("fields, epoch", [
    ({"member_id": ""}, 1),
    ({"instance_id": ""}, 0),
    ({"rack_id": ""}, 0),
    ({"rebalance_timeout_ms": -1}, 0),
    ({"owned": None}, 0),
    ({"subscribed_topic_names": ()}, 0),
    ({}, -3),
    ({"instance_id": None}, -2),
])
def test_invalid_requests(fields, epoch):
    h = Harness({"t": 1})
    member = fields.pop("member_id", "a")
    assert h.heartbeat(member, epoch, **fields).error == E.INVALID_REQUEST


def test_unknown_assignor_and_bad_regex():
    h = Harness({"t": 1})
    assert h.heartbeat("a", 0, server_assignor="sticky").error == E.UNSUPPORTED_ASSIGNOR
    assert h.heartbeat("a", 0, subscribed_topic_regex="(unclosed").error == E.INVALID_REGULAR_EXPRESSION
    assert h.heartbeat("a", 0, subscribed_topic_regex="(?=look)ahead").error == E.INVALID_REGULAR_EXPRESSION


def test_unknown_group_and_member():
    h = Harness({"t": 1})
    assert h.heartbeat("a", 1).error == E.GROUP_ID_NOT_FOUND
    h.heartbeat("a", 0)
    assert h.heartbeat("b", 1).error == E.UNKNOWN_MEMBER_ID


def test_a_partition_is_revoked_before_it_is_assigned_elsewhere():
    h = Harness({"t": 2})
    a = h.heartbeat("a", 0)
    assert a.assignment == h.tp(t=[0, 1])
    b = h.heartbeat("b", 0)
    assert (b.member_epoch, b.assignment) == (2, {})  # partition 1 is still a's
    a2 = h.heartbeat("a", 1, owned=h.tp(t=[0, 1]))
    assert (a2.member_epoch, a2.assignment) == (1, h.tp(t=[0]))  # revoke first, epoch kept
    assert h.heartbeat("b", 2, owned={}).assignment is None  # still not released
    a3 = h.heartbeat("a", 1, owned=h.tp(t=[0]))
    assert a3.member_epoch == 2
    b2 = h.heartbeat("b", 2, owned={})
    assert b2.assignment == h.tp(t=[1])
    assert h.manager.state("g") == ConsumerGroupState.STABLE


def test_epoch_fencing_and_the_lost_response_rule():
    h = Harness({"t": 2})
    h.heartbeat("a", 0)
    assert h.heartbeat("a", 5, owned={}).error == E.FENCED_MEMBER_EPOCH
    h.heartbeat("b", 0)
    h.heartbeat("a", 1, owned=h.tp(t=[0, 1]))
    assert h.heartbeat("a", 1, owned=h.tp(t=[0])).member_epoch == 2
    # The answer that moved a to epoch 2 was lost: epoch 1 is accepted while a owns no more than it has.
    assert h.heartbeat("a", 1, owned=h.tp(t=[0])).error == E.NONE
    assert h.heartbeat("a", 1, owned=h.tp(t=[0, 1])).error == E.FENCED_MEMBER_EPOCH
    assert h.heartbeat("a", 0, owned={}).error == E.NONE  # a fenced member rejoins with epoch 0


def test_leave_frees_the_partitions_and_bumps_the_epoch():
    h = Harness({"t": 2})
    h.heartbeat("a", 0)
    h.heartbeat("b", 0)
    h.heartbeat("a", 1, owned=h.tp(t=[0, 1]))
    h.heartbeat("a", 1, owned=h.tp(t=[0]))
    r = h.heartbeat("a", -1)
    assert (r.error, r.member_epoch) == (E.NONE, -1)
    assert h.heartbeat("b", 2, owned={}).assignment == h.tp(t=[0, 1])
    assert h.heartbeat("b", -1).member_epoch == -1
    assert h.manager.state("g") == ConsumerGroupState.EMPTY


def test_static_member_leaves_temporarily_and_comes_back_under_a_new_id():
    h = Harness({"t": 2})
    h.heartbeat("a", 0, instance_id="i1")
    assert h.heartbeat("x", 0, instance_id="i1").error == E.UNRELEASED_INSTANCE_ID
    assert h.heartbeat("x", 1, instance_id="i1", owned={}).error == E.FENCED_INSTANCE_ID
    assert h.heartbeat("x", 1, instance_id="i9", owned={}).error == E.UNKNOWN_MEMBER_ID
    assert h.heartbeat("a", -2, instance_id="i1").member_epoch == -2
    back = h.heartbeat("a2", 0, instance_id="i1")
    assert (back.error, back.member_epoch, back.assignment) == (E.NONE, 1, h.tp(t=[0, 1]))
    assert set(h.manager.groups["g"].members) == {"a2"}


def test_session_timeout_removes_the_member_and_writes_it():
    h = Harness({"t": 2})
    h.heartbeat("a", 0)
    h.heartbeat("b", 0)
    h.written.clear()
    assert h.timer.fire(("session", "g", "a"))
    assert set(h.manager.groups["g"].members) == {"b"}
    tombstoned = {(cr.decode_key(k).record) for k, v in h.written if v is None}  # type: ignore[union-attr]
    assert tombstoned == {5, 7, 8}


def test_a_member_that_does_not_revoke_within_its_rebalance_timeout_is_fenced():
    h = Harness({"t": 2})
    h.heartbeat("a", 0, rebalance_timeout_ms=1000)
    h.heartbeat("b", 0)
    h.heartbeat("a", 1, owned=h.tp(t=[0, 1]))
    assert h.manager.groups["g"].members["a"].rec.state == MemberState.UNREVOKED_PARTITIONS
    h.timer.advance(1000)
    assert "a" not in h.manager.groups["g"].members
    assert h.heartbeat("b", 2, owned={}).assignment == h.tp(t=[0, 1])


def test_max_size():
    h = Harness({"t": 2}, consumer_max_size=1)
    h.heartbeat("a", 0)
    assert h.heartbeat("b", 0).error == E.GROUP_MAX_SIZE_REACHED


def test_heartbeat_interval_is_the_setting_within_its_bounds():
    h = Harness({"t": 1}, consumer_heartbeat_interval_ms=100, consumer_min_heartbeat_interval_ms=500)
    assert h.heartbeat("a", 0).heartbeat_interval_ms == 500


def test_regex_subscription_follows_created_topics():
    h = Harness({"orders": 1, "other": 1})
    r = h.heartbeat("a", 0, subscribed_topic_regex="ord.*")
    assert r.assignment == h.tp(orders=[0])
    h.set_topic("ordersv2", 2)
    h.set_topic("__consumer_offsets", 3)  # internal topics never match
    h.manager.on_topics_changed()
    r = h.heartbeat("a", 1, owned=h.tp(orders=[0]))
    assert r.assignment == h.tp(orders=[0], ordersv2=[0, 1])
    assert r.member_epoch == 2


def test_partitions_added_bump_the_group_epoch():
    h = Harness({"t": 1})
    h.heartbeat("a", 0)
    h.set_topic("t", 3)
    h.manager.on_topics_changed()
    assert h.heartbeat("a", 1, owned=h.tp(t=[0])).assignment == h.tp(t=[0, 1, 2])


def test_the_records_replayed_rebuild_the_group():
    h = Harness({"t": 3})
    h.heartbeat("a", 0, instance_id="i")
    h.heartbeat("b", 0)
    h.heartbeat("a", 1, owned=h.tp(t=[0, 1, 2]))
    h.heartbeat("c", 0)
    h.heartbeat("c", -1)
    before = h.manager.groups["g"]
    other = Harness({"t": 3})
    other.manager.replay({"g": [(cr.decode_key(k), v) for k, v in h.written]})  # type: ignore[misc]
    after = other.manager.groups["g"]
    assert (after.group_epoch, after.assignment_epoch, after.target, after.subscribed_topics) == (
        before.group_epoch, before.assignment_epoch, before.target, before.subscribed_topics)
    assert {m: (x.rec, x.instance_id, x.subscribed_topic_names) for m, x in after.members.items()} == {
        m: (x.rec, x.instance_id, x.subscribed_topic_names) for m, x in before.members.items()}
    assert set(other.timer.pending) >= {("session", "g", "a"), ("session", "g", "b")}
    # Deleted: tombstones replay to nothing.
    other.manager.replay({"g": [(cr.decode_key(k), v) for k, v in h.written]  # type: ignore[misc]
                          + [(cr.decode_key(k), v) for k, v in h.manager.group_tombstones("g")]})
    assert "g" not in other.manager.groups


def test_offset_commit_and_fetch_member_checks():
    h = Harness({"t": 1})
    h.heartbeat("a", 0)
    m = h.manager
    assert m.validate_offset_commit("g", "a", 1, False, 9) == E.NONE
    assert m.validate_offset_commit("g", "a", 0, False, 9) == E.STALE_MEMBER_EPOCH
    assert m.validate_offset_commit("g", "z", 1, False, 9) == E.UNKNOWN_MEMBER_ID
    assert m.validate_offset_commit("g", "a", 1, False, 8) == E.UNSUPPORTED_VERSION
    assert m.validate_offset_commit("g", "", -1, False, 9) == E.UNKNOWN_MEMBER_ID  # not empty
    assert m.validate_offset_fetch("g", None, -1) == E.NONE
    assert m.validate_offset_fetch("g", "a", 0) == E.STALE_MEMBER_EPOCH
    h.heartbeat("a", -1)
    assert m.validate_offset_commit("g", "", -1, False, 9) == E.NONE


def test_an_unreadable_record_costs_its_group_only():
    h = Harness({"t": 1})
    h.heartbeat("a", 0)
    h.heartbeat("a", 0, group="other")
    records = [(cr.decode_key(k), v) for k, v in h.written]
    broken = [(k, b"\x00\x00\xff" if k.group == "g" and k.record == 8 else v) for k, v in records]  # type: ignore[union-attr]
    fresh = Harness({"t": 1})
    fresh.manager.replay({g: [(k, v) for k, v in broken if k.group == g] for g in ("g", "other")})  # type: ignore[union-attr]
    assert set(fresh.manager.groups) == {"other"}
