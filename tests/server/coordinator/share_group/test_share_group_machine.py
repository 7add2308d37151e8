"""Share-group membership driven by Hypothesis through joins, heartbeats at right and wrong
epochs, subscription changes, leaves, topics growing and session expiries, against a model of
Kafka's rules: the group epoch moves exactly when membership, a subscription or a subscribed
topic changes and never goes back; a member's epoch is the assignment epoch after its heartbeat;
a wrong epoch is fenced, an unknown member refused; and the target assignment shares every
subscribed partition among its subscribers (each has one, no member has a partition it did not
subscribe to)."""

from __future__ import annotations

import uuid

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kafkalite.protocol import error_codes as E
from kafkalite.server.coordinator.share_group.manager import ShareGroupManager
from kafkalite.server.coordinator.share_group.settings import ShareGroupConfig

MEMBERS = ("m1", "m2", "m3", "m4")
TOPICS = {"a": uuid.UUID(int=1), "b": uuid.UUID(int=2)}
SESSION_MS = 45000


class ShareGroupMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.now = 0
        self.partitions = {"a": 1, "b": 3}
        self.m = ShareGroupManager(ShareGroupConfig(max_size=10), lambda g: E.NONE, lambda g: False,
                                   lambda: {t: (TOPICS[t], n) for t, n in self.partitions.items()},
                                   lambda: self.now)
        # The model: member -> (epoch, subscription, last heartbeat); the highest group epoch seen.
        self.members: dict[str, tuple[int, frozenset[str], int]] = {}
        self.seen_epoch = 0

    def hb(self, member: str, epoch: int, topics: list[str] | None = None):
        return self.m.heartbeat("g", member, epoch, None, topics, "c", "/h")

    @rule(member=st.sampled_from(MEMBERS), topics=st.sets(st.sampled_from(sorted(TOPICS)), min_size=1))
    def join(self, member: str, topics: set[str]) -> None:
        before = self._group().group_epoch if self.members else self.seen_epoch
        r = self.hb(member, 0, sorted(topics))
        assert r.error == E.NONE
        assert r.member_epoch == self._group().group_epoch > before
        self.members[member] = (r.member_epoch, frozenset(topics), self.now)
        assert r.assignment is not None

    @precondition(lambda self: self.members)
    @rule(data=st.data())
    def heartbeat(self, data: st.DataObject) -> None:
        member = data.draw(st.sampled_from(sorted(self.members)))
        epoch, subscribed, _ = self.members[member]
        r = self.hb(member, epoch)
        assert r.error == E.NONE
        group = self._group()
        assert r.member_epoch == group.assignment_epoch == group.group_epoch
        self.members[member] = (r.member_epoch, subscribed, self.now)

    @precondition(lambda self: self.members)
    @rule(data=st.data(), topics=st.sets(st.sampled_from(sorted(TOPICS)), min_size=1))
    def resubscribe(self, data: st.DataObject, topics: set[str]) -> None:
        member = data.draw(st.sampled_from(sorted(self.members)))
        epoch, subscribed, _ = self.members[member]
        before = self._group().group_epoch
        r = self.hb(member, epoch, sorted(topics))
        assert r.error == E.NONE
        if frozenset(topics) != subscribed:  # a new subscription: a new epoch, and its assignment
            assert self._group().group_epoch > before and r.assignment is not None
        self.members[member] = (r.member_epoch, frozenset(topics), self.now)

    @precondition(lambda self: self.members)
    @rule(data=st.data(), wrong=st.integers(1, 5))
    def wrong_epoch_is_fenced(self, data: st.DataObject, wrong: int) -> None:
        member = data.draw(st.sampled_from(sorted(self.members)))
        epoch = self._group().members[member].member_epoch
        previous = self._group().members[member].previous_member_epoch
        bad = epoch + wrong
        if bad != previous:
            assert self.hb(member, bad).error == E.FENCED_MEMBER_EPOCH

    @rule(member=st.sampled_from(MEMBERS))
    def unknown_or_leave(self, member: str) -> None:
        if member not in self.members:
            # Only a join makes the group; then an unknown member is refused.
            expected = E.UNKNOWN_MEMBER_ID if self.m.describe("g")[1] is not None else E.GROUP_ID_NOT_FOUND
            assert self.hb(member, 1).error == expected
            assert self.hb(member, -1).error == expected
            return
        before = self._group().group_epoch
        assert self.hb(member, -1).member_epoch == -1
        del self.members[member]
        assert self._group().group_epoch == before + 1

    @rule()
    def topic_grows(self) -> None:
        self.partitions["b"] += 1

    @rule(ms=st.integers(1, SESSION_MS))
    def time_passes(self, ms: int) -> None:
        self.now += ms
        expired = {m for m, (_, _, last) in self.members.items() if self.now - last > SESSION_MS}
        assert self.m.expire_members() == len(expired)
        for m in expired:
            del self.members[m]

    def _group(self):
        _, group = self.m.describe("g")
        assert group is not None
        return group

    @invariant()
    def model_and_rules_hold(self) -> None:
        _, group = self.m.describe("g")
        if group is None:
            assert not self.members
            return
        assert set(group.members) == set(self.members)
        assert group.group_epoch >= self.seen_epoch
        self.seen_epoch = group.group_epoch
        assert group.assignment_epoch == group.group_epoch  # describe computes the target
        for member_id, member in group.members.items():
            assert member.member_epoch <= group.assignment_epoch
            assert member.subscribed_topic_names == self.members[member_id][1]
            target = group.target.get(member_id, {})
            allowed = {TOPICS[t] for t in member.subscribed_topic_names}
            assert set(target) <= allowed
        for name, topic_id in TOPICS.items():
            subscribers = [m for m in group.members.values() if name in m.subscribed_topic_names]
            if not subscribers:
                continue
            parts = [group.target.get(m.member_id, {}).get(topic_id, []) for m in subscribers]
            assert {p for ps in parts for p in ps} == set(range(self.partitions[name]))  # each partition
            assert all(parts)  # and each subscriber has one


TestShareGroupMachine = ShareGroupMachine.TestCase
TestShareGroupMachine.settings = settings(max_examples=80, stateful_step_count=30, deadline=None)
