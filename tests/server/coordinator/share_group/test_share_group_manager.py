"""Share-group membership (ShareGroupHeartbeat's rules on the coordinator) and the simple
assignor: join at epoch 0 with the client's member id, leave at -1, epochs and fencing,
subscription and topic changes moving the group epoch, session expiry, the size limits, the
group id namespace shared with classic groups, and describe/list."""

from __future__ import annotations

import uuid

from kafkalite.protocol import error_codes as E
from kafkalite.server.coordinator.share_group.assignor import assign
from kafkalite.server.coordinator.share_group.manager import ShareGroupManager
from kafkalite.server.coordinator.share_group.settings import ShareGroupConfig

T1, T2 = uuid.UUID(int=1), uuid.UUID(int=2)


class World:
    def __init__(self, **config: int) -> None:
        self.now = 0
        self.topics = {"t1": (T1, 1), "t2": (T2, 4)}
        self.classic: set[str] = set()
        self.owned = True
        self.m = ShareGroupManager(ShareGroupConfig(**config),
                                   lambda g: E.NONE if self.owned else E.NOT_COORDINATOR,
                                   lambda g: g in self.classic, lambda: dict(self.topics), lambda: self.now)

    def hb(self, member: str, epoch: int, topics: list[str] | None = None, group: str = "g"):
        return self.m.heartbeat(group, member, epoch, None, topics, "client", "/127.0.0.1")


def test_simple_assignor_shares_partitions_between_members():
    topics = {"t1": (T1, 1), "t2": (T2, 4)}
    everyone = frozenset({"t1", "t2"})
    # One partition, four members: every member has it.
    assert assign({m: frozenset({"t1"}) for m in "abcd"}, topics) == {m: {T1: [0]} for m in "abcd"}
    # Topic by topic: t1's one partition shared by both; fewer members than t2's partitions: each
    # partition to one member, round robin.
    assert assign({"a": everyone, "b": everyone}, topics) == {"a": {T1: [0], T2: [0, 2]},
                                                               "b": {T1: [0], T2: [1, 3]}}
    # More members than partitions: one partition each, partitions shared.
    five = assign({m: frozenset({"t2"}) for m in "abcde"}, topics)
    assert [five[m][T2] for m in "abcde"] == [[0], [1], [2], [3], [0]]
    # Unknown topics and unsubscribed members get nothing.
    assert assign({"a": frozenset({"nope"})}, topics) == {"a": {}}


def test_join_with_the_clients_member_id_and_get_the_assignment():
    w = World()
    first = w.hb("m1", 0, ["t1"])
    assert (first.error, first.member_id, first.member_epoch) == (E.NONE, "m1", 1)
    assert first.assignment == {T1: [0]} and first.heartbeat_interval_ms == 5000
    second = w.hb("m2", 0, ["t1"])
    assert second.member_epoch == 2 and second.assignment == {T1: [0]}
    # m1 moves to the new epoch on its next heartbeat and is told its (unchanged) assignment.
    again = w.hb("m1", 1)
    assert again.member_epoch == 2 and again.assignment == {T1: [0]}
    steady = w.hb("m1", 2)
    assert steady.member_epoch == 2 and steady.assignment is None  # nothing new: not sent


def test_epochs_are_fenced_and_unknown_members_refused():
    w = World()
    w.hb("m1", 0, ["t1"])
    w.hb("m2", 0, ["t1"])
    assert w.hb("m1", 1).member_epoch == 2
    assert w.hb("m1", 1).error == E.NONE  # the previous epoch: its answer may have been lost
    w.hb("m3", 0, ["t1"])
    assert w.hb("m1", 2).member_epoch == 3
    assert w.hb("m1", 1).error == E.FENCED_MEMBER_EPOCH
    assert w.hb("m1", 7).error == E.FENCED_MEMBER_EPOCH
    assert w.hb("ghost", 3).error == E.UNKNOWN_MEMBER_ID
    assert w.hb("", 3).error == E.INVALID_REQUEST
    assert w.hb("", 0, ["t1"]).error == E.INVALID_REQUEST  # v1: the client names itself
    assert w.m.heartbeat("g", "m1", 3, "", None, "c", "/h").error == E.INVALID_REQUEST  # an empty rack
    assert w.hb("m1", 3, group="none-such").error == E.GROUP_ID_NOT_FOUND  # only a join makes a group
    assert w.hb("m9", 0, []).error == E.INVALID_REQUEST  # a join must subscribe


def test_leave_and_subscription_changes_move_the_group_epoch():
    w = World()
    w.hb("m1", 0, ["t1"])
    w.hb("m2", 0, ["t1"])
    left = w.hb("m2", -1)
    assert (left.error, left.member_epoch) == (E.NONE, -1)
    assert w.hb("m2", 2).error == E.UNKNOWN_MEMBER_ID
    changed = w.hb("m1", 1, ["t1", "t2"])
    assert changed.member_epoch == 4 and changed.assignment == {T1: [0], T2: [0, 1, 2, 3]}
    # A subscribed topic growing moves the epoch too.
    w.topics["t2"] = (T2, 5)
    grown = w.hb("m1", 4)
    assert grown.member_epoch == 5 and grown.assignment == {T1: [0], T2: [0, 1, 2, 3, 4]}


def test_members_without_heartbeats_expire_after_the_session():
    w = World(session_timeout_ms=45000)
    w.hb("m1", 0, ["t1"])
    w.now = 30000
    w.hb("m2", 0, ["t1"])
    w.now = 45001
    assert w.m.expire_members() == 1
    assert w.hb("m1", 2).error == E.UNKNOWN_MEMBER_ID
    _, group = w.m.describe("g")
    assert group is not None and list(group.members) == ["m2"]


def test_limits_namespace_and_ownership():
    w = World(max_size=10, max_groups=1)
    for i in range(10):
        assert w.hb(f"m{i}", 0, ["t1"]).error == E.NONE
    assert w.hb("m10", 0, ["t1"]).error == E.GROUP_MAX_SIZE_REACHED
    assert w.hb("x", 0, ["t1"], group="other").error == E.GROUP_MAX_SIZE_REACHED  # max groups
    w.classic.add("classic")
    w.m.config = ShareGroupConfig(max_groups=5)
    assert w.hb("x", 0, ["t1"], group="classic").error == E.GROUP_ID_NOT_FOUND
    w.owned = False
    assert w.hb("m1", 1).error == E.NOT_COORDINATOR
    assert w.m.list_groups() == []  # its partition moved away: forgotten


def test_describe_list_and_offsets_view():
    w = World()
    w.hb("m1", 0, ["t1", "t2"])
    error, group = w.m.describe("g")
    assert error == E.NONE and group is not None
    assert (group.state.value, group.group_epoch, group.assignment_epoch) == ("Stable", 1, 1)
    assert w.m.list_groups() == [("g", "Stable")]
    view = w.m.describe_for_offsets("g")
    assert view.exists and not view.empty and view.subscribed_topics == {"t1", "t2"}
    w.hb("m1", -1)
    assert w.m.list_groups() == [("g", "Empty")]
    assert w.m.delete_group("g") == E.NONE
    assert w.m.describe("g") == (E.NONE, None)
    assert not w.m.describe_for_offsets("g").exists


def test_changes_are_written_as_share_group_records_and_load_back():
    w = World()
    written: list[tuple[bytes, bytes | None]] = []
    answers = []

    def store(group_id, records, done):
        written.extend(records)
        done(E.NONE)

    w.m.store = store

    def hb(member: str, epoch: int, topics: list[str] | None = None):
        w.m.heartbeat_and_store("g", member, epoch, "rack-1", topics, "client", "/127.0.0.1", answers.append)
        return answers[-1]

    hb("m1", 0, ["t1", "t2"])
    hb("m2", 0, ["t2"])
    hb("m1", 1)
    count = len(written)
    hb("m1", 2)  # nothing changed: nothing written
    assert len(written) == count
    hb("m2", -1)  # tombstones for m2
    assert hb("m1", 2).member_epoch == 3
    # A coordinator loading the partition hands the share records to a new manager.
    from kafkalite.server.coordinator.group_coordinator import GroupCoordinator
    from kafkalite.server.coordinator.settings import GroupConfig

    coordinator = GroupCoordinator(1, GroupConfig(), store=None, partition_for=lambda g: 0)  # type: ignore[arg-type]
    again = World()
    coordinator.share_groups_loaded = again.m.load
    try:
        coordinator.load(0, written)
    finally:
        coordinator.shutdown()
    error, group = again.m.describe("g")
    assert error == E.NONE and group is not None
    assert (group.group_epoch, group.assignment_epoch, list(group.members)) == (3, 3, ["m1"])
    m1 = group.members["m1"]
    assert (m1.member_epoch, m1.rack_id, m1.client_id, m1.subscribed_topic_names) == (3, "rack-1", "client",
                                                                                      {"t1", "t2"})
    assert m1.assignment == {T1: [0], T2: [0, 1, 2, 3]} and group.target == {"m1": m1.assignment}
    # The restored member goes on heartbeating at its epoch.
    assert again.hb("m1", 3).error == E.NONE
