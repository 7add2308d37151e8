"""The group coordinator driven by Hypothesis through random joins, syncs, heartbeats, leaves and
session expiries: whatever the order, the group's state is one the table allows, its generation
never goes back, its leader is a member, and a Stable group's members hold what the leader of
their generation assigned."""

from __future__ import annotations

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kafkalite.protocol import error_codes as E
from kafkalite.server.coordinator.group import GroupState
from kafkalite.server.coordinator.group_coordinator import GroupCoordinator
from kafkalite.server.coordinator.results import JoinResult, SyncResult
from kafkalite.server.coordinator.settings import GroupConfig

PROTOCOLS = [("range", b"r")]


class Store:
    def append(self, group_id, records, done, producer=None, placed=None) -> None:
        done(E.NONE)


class GroupMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        config = GroupConfig(min_session_timeout_ms=1, initial_rebalance_delay_ms=0)
        self.c = GroupCoordinator(1, config, Store(), partition_for=lambda group: 0)
        self.c.load(0, [])
        self.joins: dict[str, JoinResult] = {}  # member -> its last JoinGroup answer
        self.syncs: dict[str, SyncResult] = {}
        self.assigned: dict[int, dict[str, bytes]] = {}  # generation -> the leader's assignment
        self.highest_generation = 0

    def teardown(self) -> None:
        self.c.shutdown()

    @property
    def group(self):
        return self.c.groups.get("g")

    def members(self) -> list[str]:
        # In joining order: member ids are random, so sorting them would make Hypothesis draw a
        # different member when it replays the same steps.
        return list(self.group.members) if self.group else []

    def _join(self, member_id: str) -> None:
        def answered(result: JoinResult) -> None:
            if result.error == E.NONE:
                self.joins[result.member_id] = result

        self.c.join_group("g", member_id, None, True, "c", "/h", 600000, 600000, "consumer", PROTOCOLS,
                          answered)

    @rule()
    def a_new_member_joins(self) -> None:
        first: list[JoinResult] = []
        self.c.join_group("g", "", None, True, "c", "/h", 600000, 600000, "consumer", PROTOCOLS, first.append)
        assert first and first[0].error == E.MEMBER_ID_REQUIRED
        self._join(first[0].member_id)

    @precondition(lambda self: self.members())
    @rule(data=st.data())
    def a_member_rejoins(self, data) -> None:
        self._join(data.draw(st.sampled_from(self.members())))

    @precondition(lambda self: self.members())
    @rule(data=st.data())
    def a_member_syncs(self, data) -> None:
        member = data.draw(st.sampled_from(self.members()))
        joined = self.joins.get(member)
        generation = joined.generation_id if joined else 0
        assignment = {}
        if joined and joined.leader_id == member and joined.members:
            assignment = {m: f"{generation}:{m}".encode() for m, _, _ in joined.members}
            self.assigned[generation] = assignment

        def answered(result: SyncResult) -> None:
            self.syncs[member] = result

        self.c.sync_group("g", generation, member, None, None, None, assignment, answered)

    @precondition(lambda self: self.members())
    @rule(data=st.data())
    def a_member_heartbeats(self, data) -> None:
        member = data.draw(st.sampled_from(self.members()))
        joined = self.joins.get(member)
        error = self.c.heartbeat("g", member, None, joined.generation_id if joined else 0)
        assert error in (E.NONE, E.REBALANCE_IN_PROGRESS, E.ILLEGAL_GENERATION, E.UNKNOWN_MEMBER_ID)

    @precondition(lambda self: self.members())
    @rule(data=st.data())
    def a_member_leaves(self, data) -> None:
        member = data.draw(st.sampled_from(self.members()))
        assert self.c.leave_group("g", [(member, None)]) == (E.NONE, [E.NONE])

    @precondition(lambda self: self.members())
    @rule(data=st.data())
    def a_members_session_expires(self, data) -> None:
        member = self.group.members[data.draw(st.sampled_from(self.members()))]
        self.c.member_expired(self.group, member, member.last_heartbeat_ms)

    @invariant()
    def the_group_is_consistent(self) -> None:
        group = self.group
        if group is None:
            return
        event(f"state {group.state.value}")
        assert group.generation_id >= self.highest_generation
        self.highest_generation = group.generation_id
        if group.members:
            assert group.leader_id in group.members
        if group.state is GroupState.EMPTY:
            assert not group.members
        if group.state is GroupState.STABLE:
            expected = self.assigned[group.generation_id]
            for member_id, member in group.members.items():
                assert member.assignment == expected.get(member_id, b"")


TestGroupMachine = GroupMachine.TestCase
TestGroupMachine.settings = settings(max_examples=60, stateful_step_count=40, deadline=None,
                                     suppress_health_check=[HealthCheck.too_slow])
