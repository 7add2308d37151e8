"""Online migration of non-empty groups between the classic and the consumer protocol under
group.consumer.migration.policy (Kafka 4's GroupMetadataManager: validateOnlineUpgrade,
convertToConsumerGroup, classicGroup*ToConsumerGroup, validateOnlineDowngradeWithFencedMember,
convertToClassicGroup), on a GroupCoordinator with real purgatories."""

from __future__ import annotations

import uuid

import pytest

from kafkalite.protocol import consumer_protocol as cp
from kafkalite.protocol import coordinator_records as cr
from kafkalite.protocol import error_codes as E
from kafkalite.server.coordinator.consumer_group.manager import HeartbeatRequest
from kafkalite.server.coordinator.group_coordinator import GroupCoordinator, JoinResult, SyncResult
from kafkalite.server.coordinator.settings import GroupConfig
from tests.support.wait import wait_for

from ..test_group_coordinator import Answer, ListStore

T = uuid.UUID(int=7)
POLICIES = ("bidirectional", "upgrade", "downgrade", "disabled")


def make(policy: str = "bidirectional", **config: object) -> tuple[GroupCoordinator, ListStore]:
    store = ListStore()
    cfg = GroupConfig(min_session_timeout_ms=10, initial_rebalance_delay_ms=0,  # type: ignore[arg-type]
                      consumer_migration_policy=policy, **config)
    c = GroupCoordinator(1, cfg, store, partition_for=lambda group: 0, topics=lambda: {"t": (T, 6)})
    c.load(0, [])
    return c, store


def subscription(owned: tuple[int, ...] = ()) -> list[tuple[str, bytes]]:
    data = cp.encode_subscription(cp.Subscription(("t",), owned_partitions=(("t", owned),) if owned else ()),
                                  version=1)
    return [("range", data)]


def assignment(*partitions: int) -> bytes:
    return cp.encode_assignment(cp.AssignmentData((("t", partitions),)), version=1)


def partitions_of(data: bytes) -> set[int]:
    return {p for _, ps in cp.decode_assignment(data).partitions for p in ps}


def join(c: GroupCoordinator, member_id: str = "", protocols: list[tuple[str, bytes]] | None = None,
         protocol_type: str = "consumer", session_ms: int = 10000, group: str = "g") -> Answer:
    answer = Answer()
    c.join_group(group, member_id, None, True, "client", "/127.0.0.1", 10000, session_ms, protocol_type,
                 protocols or subscription(), answer)
    return answer


def sync(c: GroupCoordinator, member_id: str, generation: int, assignments: dict[str, bytes] | None = None,
         protocol_type: str = "consumer") -> SyncResult:
    answer = Answer()
    c.sync_group("g", generation, member_id, None, protocol_type, None, assignments or {}, answer)
    return answer.get()


def cg_heartbeat(c: GroupCoordinator, member: str, epoch: int, group: str = "g", **fields: object):
    if epoch == 0:
        fields.setdefault("rebalance_timeout_ms", 30000)
        fields.setdefault("owned", {})
        fields.setdefault("subscribed_topic_names", ("t",))
    answer = Answer()
    c.consumer_group_heartbeat(HeartbeatRequest(group, member, epoch, **fields), answer)  # type: ignore[arg-type]
    return answer.get()


def classic_group(c: GroupCoordinator, protocol_type: str = "consumer") -> tuple[str, str, int]:
    """A Stable classic group of two members: a owns 0-2, b 3-5. (a, b, generation)."""
    a_id = join(c, protocol_type=protocol_type).get().member_id
    first = join(c, a_id, protocol_type=protocol_type).get()
    sync(c, a_id, first.generation_id, {a_id: assignment(0, 1, 2)}, protocol_type)
    b_id = join(c, protocol_type=protocol_type).get().member_id
    b_join = join(c, b_id, protocol_type=protocol_type)
    assert c.heartbeat("g", a_id, None, first.generation_id) == E.REBALANCE_IN_PROGRESS
    a_join = join(c, a_id, protocol_type=protocol_type).get()
    generation = b_join.get().generation_id
    assignments = {a_id: assignment(0, 1, 2), b_id: assignment(3, 4, 5)}
    leader = sync(c, a_id, generation, assignments, protocol_type)
    assert sync(c, b_id, generation, None, protocol_type).error == E.NONE
    assert leader.error == E.NONE and a_join.error == E.NONE
    return a_id, b_id, generation


def rejoin(c: GroupCoordinator, member_id: str, session_ms: int = 10000) -> tuple[int, set[int]]:
    """A classic member's rejoin and sync inside a consumer group: (generation, partitions)."""
    joined: JoinResult = join(c, member_id, session_ms=session_ms).get()
    assert joined.error == E.NONE and joined.leader_id == "" and joined.protocol_name == "range"
    synced = sync(c, member_id, joined.generation_id)
    assert synced.error == E.NONE
    return joined.generation_id, partitions_of(synced.assignment)


def owners(c: GroupCoordinator) -> dict[int, str]:
    """Partition -> member, failing if two members hold one."""
    out: dict[int, str] = {}
    for m in c.consumer.groups["g"].members.values():
        for p in m.rec.assigned.get(T, frozenset()) | m.rec.pending_revocation.get(T, frozenset()):
            assert p not in out, f"partition {p} held by {out[p]} and {m.member_id}"
            out[p] = m.member_id
    return out


@pytest.mark.parametrize("policy", POLICIES)
def test_a_non_empty_classic_group_upgrades_only_where_the_policy_allows(policy):
    c, store = make(policy)
    try:
        a, b, generation = classic_group(c)
        answer = cg_heartbeat(c, "m", 0)
        if policy in ("downgrade", "disabled"):
            assert answer.error == E.GROUP_ID_NOT_FOUND and "disabled" in answer.message
            assert "g" not in c.consumer.groups and c.groups["g"].state.value == "Stable"
            return
        assert answer.error == E.NONE
        group = c.consumer.groups["g"]
        assert group.group_epoch == generation + 1 and set(group.members) == {a, b, "m"}
        assert group.members[a].classic is not None and group.members["m"].classic is None
        assert group.members[a].rec.assigned == {T: frozenset({0, 1, 2})}
        assert group.members[a].subscribed_topic_names == ("t",)
        # The classic metadata tombstoned, the members written with their classic metadata.
        assert (cr.encode_key(cr.GroupKey("g")), None) in store.records
        member_record = next(v for k, v in store.records if k == cr.encode_key(
            cr.ConsumerGroupKey(cr.CONSUMER_GROUP_MEMBER_METADATA, "g", a)))
        assert member_record is not None
        value = cr.decode_consumer_group_value(cr.CONSUMER_GROUP_MEMBER_METADATA, member_record)
        assert value.classic_member_metadata.session_timeout_ms == 10000
        assert [p.name for p in value.classic_member_metadata.supported_protocols] == ["range"]
        assert c.list_groups()[1] == [("g", "consumer", "Reconciling", "consumer")]
        assert c.describe_group("g") == (E.NONE, None)
    finally:
        c.shutdown()


def test_no_upgrade_of_another_protocol_type_or_above_the_consumer_max_size():
    for config, protocol_type in (({}, "connect"), ({"consumer_max_size": 1}, "consumer")):
        c, _ = make(**config)
        try:
            classic_group(c, protocol_type)
            assert cg_heartbeat(c, "m", 0).error == E.GROUP_ID_NOT_FOUND
            assert "g" not in c.consumer.groups
        finally:
            c.shutdown()


def test_an_invalid_heartbeat_does_not_upgrade():
    c, _ = make()
    try:
        classic_group(c)
        assert cg_heartbeat(c, "m", 0, rebalance_timeout_ms=-1).error == E.INVALID_REQUEST
        assert "g" not in c.consumer.groups
    finally:
        c.shutdown()


def test_waiting_classic_requests_are_answered_rebalance_in_progress_at_the_upgrade():
    c, _ = make()
    try:
        classic_group(c)
        new_id = join(c).get().member_id
        waiting = join(c, new_id)  # a rebalance starts; it waits for a and b
        assert not waiting.event.is_set()
        assert cg_heartbeat(c, "m", 0).error == E.NONE
        assert waiting.get().error == E.REBALANCE_IN_PROGRESS
        assert new_id in c.consumer.groups["g"].members  # it rejoins as a classic member
        assert c.groups["g"].state.value == "Empty" and not c.groups["g"].members
    finally:
        c.shutdown()


def test_classic_and_consumer_members_share_the_partitions_after_the_upgrade():
    c, _ = make()
    try:
        a, b, generation = classic_group(c)
        first = cg_heartbeat(c, "m", 0)
        assert first.assignment == {}  # its partitions are still with the classic members
        epoch = c.consumer.groups["g"].group_epoch
        # The classic members are told to rejoin; their rejoin releases what moves to m.
        assert c.heartbeat("g", a, None, generation) == E.REBALANCE_IN_PROGRESS
        assert c.heartbeat("g", a, None, generation + 5) == E.ILLEGAL_GENERATION
        got = {a: rejoin(c, a), b: rejoin(c, b)}
        assert all(g == epoch for g, _ in got.values())
        assert c.heartbeat("g", a, None, epoch) == E.NONE
        answer = cg_heartbeat(c, "m", first.member_epoch, owned={})
        assert answer.error == E.NONE and answer.member_epoch == epoch
        m_partitions = set(answer.assignment[T])
        sets = [got[a][1], got[b][1], m_partitions]
        assert sorted(p for s in sets for p in s) == list(range(6)) and all(len(s) == 2 for s in sets)
        assert len(owners(c)) == 6
        assert c.consumer.groups["g"].state.value == "Stable"
        # Their offsets are committed with their generation (ILLEGAL_GENERATION for another).
        for generation_id, expected in ((epoch, E.NONE), (epoch - 1, E.ILLEGAL_GENERATION)):
            done = Answer()
            c.commit_offsets("g", a, None, generation_id, {}, done)
            assert done.get() == expected
    finally:
        c.shutdown()


def test_classic_requests_of_unknown_members_and_of_consumer_protocol_members():
    c, _ = make()
    try:
        classic_group(c)
        cg_heartbeat(c, "m", 0)
        assert c.heartbeat("g", "m", None, 1) == E.UNKNOWN_MEMBER_ID  # not a classic member
        assert c.heartbeat("g", "nobody", None, 1) == E.UNKNOWN_MEMBER_ID
        assert sync(c, "nobody", 1).error == E.UNKNOWN_MEMBER_ID
        assert join(c, "x", protocol_type="connect").get().error == E.INCONSISTENT_GROUP_PROTOCOL
        assert join(c, "x", protocols=[("roundrobin", subscription()[0][1])]).get().error == \
            E.INCONSISTENT_GROUP_PROTOCOL  # no protocol in common with the classic members
        assert join(c).get().error == E.MEMBER_ID_REQUIRED
        assert c.leave_group("g", [("m", None), ("nobody", None)])[1] == [E.UNKNOWN_MEMBER_ID] * 2
    finally:
        c.shutdown()


def test_a_classic_member_joining_a_consumer_group_is_assigned_and_leaves():
    c, store = make()
    try:
        assert cg_heartbeat(c, "m", 0).error == E.NONE
        member_id = join(c).get().member_id
        generation, partitions = rejoin(c, member_id)
        assert partitions == set()  # m still owns them all; m must revoke first
        assert c.heartbeat("g", member_id, None, generation) == E.NONE  # waiting on m
        group = c.consumer.groups["g"]
        revoke = cg_heartbeat(c, "m", 1, owned={T: frozenset(range(6))})
        kept = set(revoke.assignment[T])
        cg_heartbeat(c, "m", 1, owned={T: frozenset(kept)})
        # The partitions m released are free now: the classic member rejoins to get them.
        assert c.heartbeat("g", member_id, None, generation) == E.REBALANCE_IN_PROGRESS
        generation, partitions = rejoin(c, member_id)
        assert partitions == set(range(6)) - kept and len(owners(c)) == 6
        assert c.leave_group("g", [(member_id, None)])[1] == [E.NONE]
        assert member_id not in group.members and "g" in c.consumer.groups
        key = cr.ConsumerGroupKey(cr.CONSUMER_GROUP_MEMBER_METADATA, "g", member_id)
        assert (cr.encode_key(key), None) in store.records
    finally:
        c.shutdown()


def test_a_classic_member_silent_for_its_session_is_fenced():
    c, _ = make()
    try:
        cg_heartbeat(c, "m", 0)
        member_id = join(c).get().member_id
        rejoin(c, member_id, session_ms=50)
        assert wait_for(lambda: member_id not in c.consumer.groups["g"].members, timeout=5)
    finally:
        c.shutdown()


@pytest.mark.parametrize("policy", POLICIES)
def test_the_last_consumer_protocol_member_leaving_downgrades_where_the_policy_allows(policy):
    c, store = make(policy)
    try:
        cg_heartbeat(c, "m", 0)
        ids = [join(c).get().member_id for _ in range(2)]
        for member_id in ids:
            rejoin(c, member_id)
        epoch = c.consumer.groups["g"].group_epoch
        assert cg_heartbeat(c, "m", -1).error == E.NONE
        if policy in ("upgrade", "disabled"):
            assert set(c.consumer.groups["g"].members) == set(ids)
            return
        assert "g" not in c.consumer.groups
        group = c.groups["g"]
        assert set(group.members) == set(ids) and group.generation_id == epoch
        assert group.state.value == "PreparingRebalance" and group.protocol_name == "range"
        assert (cr.encode_key(cr.ConsumerGroupKey(cr.CONSUMER_GROUP_METADATA, "g")), None) in store.records
        assert cr.decode_group_value(store.records[-1][1]).generation == epoch
        assert c.list_groups()[1] == [("g", "consumer", "PreparingRebalance", "classic")]
        # The members rejoin the classic group and the leader assigns everything.
        assert c.heartbeat("g", ids[0], None, epoch) == E.REBALANCE_IN_PROGRESS
        answers = [join(c, member_id) for member_id in ids]
        results = [a.get() for a in answers]
        leader = next(r for r in results if r.leader_id == r.member_id)
        assert len(leader.members) == 2 and results[0].generation_id == epoch + 1
        assert sync(c, leader.member_id, epoch + 1, {ids[0]: assignment(0, 1, 2),
                                                      ids[1]: assignment(3, 4, 5)}).error == E.NONE
        assert c.groups["g"].state.value == "Stable"
    finally:
        c.shutdown()


def test_no_downgrade_above_the_classic_max_size_or_to_an_empty_group():
    c, _ = make(max_size=1)
    try:
        cg_heartbeat(c, "m", 0)
        ids = [join(c).get().member_id for _ in range(2)]
        for member_id in ids:
            rejoin(c, member_id)
        cg_heartbeat(c, "m", -1)
        assert set(c.consumer.groups["g"].members) == set(ids)
    finally:
        c.shutdown()
    c, _ = make()
    try:
        cg_heartbeat(c, "m", 0)
        cg_heartbeat(c, "m", -1)
        assert "g" in c.consumer.groups and not c.consumer.groups["g"].members
    finally:
        c.shutdown()


def test_classic_members_reload_with_their_classic_metadata():
    c, store = make()
    try:
        a, _, _ = classic_group(c)
        cg_heartbeat(c, "m", 0)
    finally:
        c.shutdown()
    other, _ = make()
    try:
        other.unload(0)
        other.load(0, store.records)
        group = other.consumer.groups["g"]
        assert group.members[a].classic == c.consumer.groups["g"].members[a].classic
        assert group.members["m"].classic is None and "g" in other.groups
    finally:
        other.shutdown()


def test_a_static_classic_member_back_under_a_new_id_replaces_the_old_one():
    c, _ = make()
    try:
        cg_heartbeat(c, "m", 0)

        def static_join(member_id: str) -> JoinResult:
            answer = Answer()
            c.join_group("g", member_id, "i", True, "client", "/127.0.0.1", 10000, 10000, "consumer",
                         subscription(), answer)
            return answer.get()

        old = static_join("")
        assert old.error == E.NONE and c.consumer.groups["g"].static_members == {"i": old.member_id}
        new = static_join("")
        assert new.error == E.NONE and new.member_id != old.member_id
        assert c.consumer.groups["g"].static_members == {"i": new.member_id}
        assert old.member_id not in c.consumer.groups["g"].members
        assert static_join(old.member_id).error == E.FENCED_INSTANCE_ID
        assert c.heartbeat("g", old.member_id, "i", new.generation_id) == E.FENCED_INSTANCE_ID
    finally:
        c.shutdown()
