"""Consumer groups inside the GroupCoordinator: one namespace with classic groups (empty ones
convert both ways; non-empty ones migrate online, test_migration.py), ListGroups' types and
states, DeleteGroups, offsets committed by members with their epochs and shared with the
classic machinery, and the groups reloaded from the records."""

from __future__ import annotations

import uuid

from kafkalite.protocol import coordinator_records as cr
from kafkalite.protocol import error_codes as E
from kafkalite.server.coordinator.consumer_group.manager import HeartbeatRequest
from kafkalite.server.coordinator.group import CommittedOffset
from kafkalite.server.coordinator.group_coordinator import GroupCoordinator
from kafkalite.server.coordinator.settings import GroupConfig
from tests.support.wait import wait_for

from ..test_group_coordinator import Answer, ListStore, join, join_new, sync

T = uuid.UUID(int=7)


def make() -> tuple[GroupCoordinator, ListStore]:
    store = ListStore()
    c = GroupCoordinator(1, GroupConfig(min_session_timeout_ms=10, initial_rebalance_delay_ms=0), store,
                         partition_for=lambda group: 0, topics=lambda: {"t": (T, 2)})
    c.load(0, [])
    return c, store


def classic_member(c: GroupCoordinator, group: str) -> str:
    """A classic group with one member, Stable."""
    a = join_new(c, group=group).get()
    assert sync(c, a.member_id, 1, {a.member_id: b"x"}, group=group).get().error == E.NONE
    return a.member_id


def cg_heartbeat(c: GroupCoordinator, member: str, epoch: int, group: str = "g", **fields) -> object:
    if epoch == 0:
        fields.setdefault("rebalance_timeout_ms", 30000)
        fields.setdefault("owned", {})
        fields.setdefault("subscribed_topic_names", ("t",))
    answer = Answer()
    c.consumer_group_heartbeat(HeartbeatRequest(group, member, epoch, **fields), answer)
    return answer.get()


def test_groups_of_both_kinds_listed_with_their_type_and_state():
    c, _ = make()
    try:
        assert cg_heartbeat(c, "m", 0).error == E.NONE
        classic_member(c, "classic")
        _, groups = c.list_groups()
        assert sorted(groups) == [("classic", "consumer", "Stable", "classic"),
                                  ("g", "consumer", "Stable", "consumer")]
        assert c.list_groups(types={"Consumer"})[1] == [("g", "consumer", "Stable", "consumer")]
        assert sorted(g for g, *_ in c.list_groups(states={"stable"})[1]) == ["classic", "g"]
        assert c.list_groups(states={"empty"})[1] == []
        # DescribeGroups describes classic groups only (Kafka: not a classic group -> Dead).
        assert c.describe_group("g") == (E.NONE, None)
        counts = c.metrics_counts()
        assert counts.consumer_by_state["Stable"] == 1 and counts.by_state["Empty"] == 0
    finally:
        c.shutdown()


def test_the_other_protocol_with_unreadable_embedded_metadata_is_refused():
    """Non-empty groups migrate online (test_migration.py), but only members whose metadata is a
    ConsumerProtocolSubscription: these (b"sub-range") are not."""
    c, _ = make()
    try:
        cg_heartbeat(c, "m", 0)
        assert join(c, member_id="x").get().error == E.INCONSISTENT_GROUP_PROTOCOL
        classic_member(c, "classic")
        assert cg_heartbeat(c, "x", 0, group="classic").error == E.GROUP_ID_NOT_FOUND
        assert "classic" not in c.consumer.groups
    finally:
        c.shutdown()


def test_empty_groups_convert_both_ways_keeping_their_offsets():
    c, store = make()
    try:
        done = Answer()
        c.commit_offsets("g", "", None, -1, {("t", 0): CommittedOffset(5, -1, "", 0)}, done)
        assert done.get() == E.NONE
        first = classic_member(c, "g")
        assert c.leave_group("g", [(first, None)])[1] == [E.NONE]
        assert wait_for(lambda: c.groups["g"].state.value == "Empty", timeout=5)
        assert cg_heartbeat(c, "m", 0).error == E.NONE  # empty classic -> consumer group
        assert (cr.encode_key(cr.GroupKey("g")), None) in store.records
        assert c.fetch_offsets("g", [("t", 0)], "m", 1)[1][("t", 0)].offset == 5  # type: ignore[union-attr]
        assert cg_heartbeat(c, "m", -1).error == E.NONE
        assert join(c).get().error == E.MEMBER_ID_REQUIRED  # empty consumer group -> classic
        assert "g" not in c.consumer.groups
        assert (cr.encode_key(cr.ConsumerGroupKey(cr.CONSUMER_GROUP_METADATA, "g")), None) in store.records
        assert c.fetch_offsets("g", [("t", 0)])[1][("t", 0)].offset == 5  # type: ignore[union-attr]
    finally:
        c.shutdown()


def test_offsets_of_members_checked_against_their_epochs():
    c, _ = make()
    try:
        cg_heartbeat(c, "m", 0)
        offsets = {("t", 0): CommittedOffset(9, -1, "", 0)}
        for member, epoch, expected in [("m", 1, E.NONE), ("m", 0, E.STALE_MEMBER_EPOCH),
                                        ("z", 1, E.UNKNOWN_MEMBER_ID), ("", -1, E.UNKNOWN_MEMBER_ID)]:
            done = Answer()
            c.commit_offsets("g", member, None, epoch, offsets, done, group_id_not_found=True)
            assert done.get() == expected, (member, epoch)
        assert c.fetch_offsets("g", None, "m", 2)[0] == E.STALE_MEMBER_EPOCH
        assert c.fetch_offsets("g", None)[1][("t", 0)].offset == 9  # type: ignore[union-attr]
        # Subscribed topics' offsets cannot be deleted; the group cannot while it has members.
        deleted = Answer()
        c.delete_offsets("g", [("t", 0)], lambda error, per: deleted((error, per)))
        assert deleted.get() == (E.NONE, {("t", 0): E.GROUP_SUBSCRIBED_TO_TOPIC})
        result = Answer()
        c.delete_groups(["g"], result)
        assert result.get() == {"g": E.NON_EMPTY_GROUP}
        cg_heartbeat(c, "m", -1)
        result = Answer()
        c.delete_groups(["g"], result)
        assert result.get() == {"g": E.NONE}
        assert "g" not in c.consumer.groups and "g" not in c.groups
    finally:
        c.shutdown()


def test_groups_of_both_kinds_reload_from_the_partition():
    c, store = make()
    try:
        cg_heartbeat(c, "m", 0, instance_id="i")
        done = Answer()
        c.commit_offsets("g", "m", None, 1, {("t", 1): CommittedOffset(3, -1, "", 0)}, done,
                         group_id_not_found=True)
        assert done.get() == E.NONE
        classic_member(c, "classic")
    finally:
        c.shutdown()
    other = GroupCoordinator(2, GroupConfig(min_session_timeout_ms=10), ListStore(),
                             partition_for=lambda g: 0,
                             topics=lambda: {"t": (T, 2)})
    try:
        other.load(0, store.records)
        group = other.consumer.groups["g"]
        assert group.members["m"].member_epoch == 1 and group.static_members == {"i": "m"}
        assert other.fetch_offsets("g", None, "m", 1)[1][("t", 1)].offset == 3  # type: ignore[union-attr]
        assert sorted(other.list_groups()[1]) == [("classic", "consumer", "Empty", "classic"),
                                                  ("g", "consumer", "Stable", "consumer")]
        # The member goes on where it was: same epoch, nothing new to assign.
        again = cg_heartbeat(other, "m", 1, owned={T: frozenset({0, 1})})
        assert (again.error, again.member_epoch) == (E.NONE, 1)
        other.unload(0)
        assert "g" not in other.consumer.groups
    finally:
        other.shutdown()


def test_an_empty_consumer_group_without_offsets_is_deleted_at_the_cleanup():
    c, store = make()
    try:
        cg_heartbeat(c, "m", 0)
        c.cleanup_expired_offsets(0)
        assert "g" in c.consumer.groups  # it has a member
        cg_heartbeat(c, "m", -1)
        c.cleanup_expired_offsets(10**9)
        assert "g" not in c.consumer.groups and "g" not in c.groups
        tombstone = (cr.encode_key(cr.ConsumerGroupKey(cr.CONSUMER_GROUP_METADATA, "g")), None)
        assert store.records[-1] == tombstone
    finally:
        c.shutdown()
