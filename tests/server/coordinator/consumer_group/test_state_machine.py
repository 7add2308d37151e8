"""The consumer-group manager driven by Hypothesis against Kafka's invariants: clients join, leave,
heartbeat reporting what they own (revoking what they were told to drop), lose answers, time out;
topics grow. After every step: no partition is owned by two live members (a partition is assigned
only after its previous owner revoked it, as the clients see it and as the coordinator records
it), member epochs never go down; after all members heartbeat until nothing changes: every
subscribed partition is owned exactly once and the uniform target is balanced."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kafkalite.protocol import error_codes as E
from kafkalite.server.coordinator.consumer_group.assignors import Assignment
from kafkalite.server.coordinator.consumer_group.model import ConsumerGroupState

from .support import Harness

CLIENTS = [f"c{i}" for i in range(5)]


class Client:
    """A consumer as librdkafka behaves: it owns what its last answer assigned, and drops all on
    a fencing error."""

    def __init__(self) -> None:
        self.epoch = -1  # -1: not in the group
        self.owned: Assignment = {}
        self.full_next = False  # after a lost answer the next heartbeat is a full one (as librdkafka)
        self.fenced = False  # told FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID: it rejoins (epoch 0)
        self.subscription: dict[str, object] = {}

    def fields(self) -> dict[str, object]:
        fields: dict[str, object] = {"owned": dict(self.owned)}
        if self.full_next:
            fields.update(self.subscription, rebalance_timeout_ms=30000)
        return fields


class ConsumerGroupMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.h = Harness({"a": 3, "b": 2})
        self.clients = {c: Client() for c in CLIENTS}
        self.epochs: dict[str, int] = {}

    def _apply(self, name: str, result, lost: bool = False) -> None:
        client = self.clients[name]
        if result.error in (E.FENCED_MEMBER_EPOCH, E.UNKNOWN_MEMBER_ID):
            client.epoch, client.owned, client.fenced = -1, {}, True
            return
        assert result.error == E.NONE, result
        if lost:
            client.full_next = True
            return
        client.full_next = False
        client.epoch = result.member_epoch
        if result.assignment is not None:
            client.owned = {t: ps for t, ps in result.assignment.items() if ps}

    @rule(name=st.sampled_from(CLIENTS), regex=st.booleans())
    def join(self, name: str, regex: bool) -> None:
        client = self.clients[name]
        if client.epoch >= 0:
            return
        client.owned, client.fenced = {}, False  # rejoining: it dropped everything
        client.subscription = {"subscribed_topic_regex": "a|b", "subscribed_topic_names": ()} if regex \
            else {"subscribed_topic_names": ("a", "b")}
        self._apply(name, self.h.heartbeat(name, 0, **client.subscription))  # type: ignore[arg-type]

    @rule(name=st.sampled_from(CLIENTS), lost=st.booleans())
    def heartbeat(self, name: str, lost: bool) -> None:
        client = self.clients[name]
        if client.epoch < 0:
            return
        self._apply(name, self.h.heartbeat(name, client.epoch, **client.fields()), lost)  # type: ignore[arg-type]

    @rule(name=st.sampled_from(CLIENTS))
    def leave(self, name: str) -> None:
        client = self.clients[name]
        if client.epoch < 0:
            return
        self.h.heartbeat(name, -1)
        client.epoch, client.owned, client.fenced = -1, {}, False
        self.epochs.pop(name, None)

    @rule(name=st.sampled_from(CLIENTS), kind=st.sampled_from(["session", "revocation"]))
    def time_out(self, name: str, kind: str) -> None:
        """The member's session (or revocation deadline) passed: the coordinator fences it; the
        client (a zombie now) learns it at its next heartbeat."""
        if self.h.timer.fire((kind, "g", name)):
            if name not in self.h.manager.groups["g"].members:
                self.clients[name].owned = {}  # it is no one's concern any more (a zombie)
                self.epochs.pop(name, None)

    @rule(topic=st.sampled_from(["a", "b", "c"]), more=st.integers(1, 2))
    def grow(self, topic: str, more: int) -> None:
        self.h.set_topic(topic, self.h.partitions.get(topic, 0) + more)
        self.h.manager.on_topics_changed()

    @precondition(lambda self: any(c.epoch >= 0 for c in self.clients.values()))
    @rule()
    def settle(self) -> None:
        """Everyone heartbeats until nothing changes: all subscribed partitions owned once."""
        for _ in range(20):
            before = {n: (c.epoch, c.owned) for n, c in self.clients.items()}
            for name, client in self.clients.items():
                if client.fenced:  # a fenced member rejoins at once, as librdkafka does
                    self.join(name, "subscribed_topic_regex" in client.subscription)
                elif client.epoch >= 0:
                    self._apply(name, self.h.heartbeat(name, client.epoch, **client.fields()))  # type: ignore[arg-type]
            if before == {n: (c.epoch, c.owned) for n, c in self.clients.items()}:
                break
        group = self.h.manager.groups["g"]
        if not group.members:
            return
        assert group.state == ConsumerGroupState.STABLE
        owners: dict[tuple, str] = {}
        for name, client in self.clients.items():
            for t, ps in client.owned.items():
                for p in ps:
                    assert (t, p) not in owners
                    owners[(t, p)] = name
        topics = self.h.view()
        wanted = {(topics[n][0], p) for n in ("a", "b") for p in range(topics[n][1])}
        assert set(owners) == wanted
        loads = [sum(len(ps) for ps in a.values()) for a in group.target.values()]
        assert max(loads) - min(loads) <= 1

    @invariant()
    def no_partition_owned_twice(self) -> None:
        group = self.h.manager.groups.get("g")
        members = group.members if group is not None else {}
        seen: dict[tuple, str] = {}
        for name, client in self.clients.items():
            if name not in members:
                continue  # a zombie's view does not count (Kafka fences it)
            for t, ps in client.owned.items():
                for p in ps:
                    assert (t, p) not in seen, f"{(t, p)} owned by {seen.get((t, p))} and {name}"
                    seen[(t, p)] = name
        held: dict[tuple, str] = {}
        for m in members.values():
            for part in (m.rec.assigned, m.rec.pending_revocation):
                for t, ps in part.items():
                    for p in ps:
                        assert (t, p) not in held or held[(t, p)] == m.member_id
                        held[(t, p)] = m.member_id

    @invariant()
    def member_epochs_never_go_down(self) -> None:
        group = self.h.manager.groups.get("g")
        for m in (group.members.values() if group is not None else ()):
            if m.member_epoch >= 0:
                assert m.member_epoch >= self.epochs.get(m.member_id, 0)
                self.epochs[m.member_id] = m.member_epoch
        for name in list(self.epochs):
            if group is None or name not in group.members:
                del self.epochs[name]


ConsumerGroupMachine.TestCase.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
test_consumer_group_state_machine = ConsumerGroupMachine.TestCase
