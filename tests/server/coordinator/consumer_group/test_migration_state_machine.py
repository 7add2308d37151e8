"""Classic members (eager, as librdkafka's range assignor) and consumer-protocol members in one
consumer group, driven by Hypothesis: classic clients join and sync, heartbeat (rejoining on
REBALANCE_IN_PROGRESS after dropping everything), leave, time out; consumer clients heartbeat
reporting what they own. After every step no partition is owned by two live members; after all
heartbeat until nothing changes, every subscribed partition is owned exactly once."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kafkalite.protocol import consumer_protocol as cp
from kafkalite.protocol import error_codes as E
from kafkalite.server.coordinator.consumer_group import classic
from kafkalite.server.coordinator.consumer_group.assignors import Assignment

from .support import Harness

CLASSIC = ["k0", "k1", "k2"]
MODERN = ["m0", "m1"]
PROTOCOLS = [("range", cp.encode_subscription(cp.Subscription(("a", "b")), version=1))]


class Client:
    def __init__(self) -> None:
        self.epoch = -1  # -1: not in the group
        self.owned: Assignment = {}


class MigrationMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.h = Harness({"a": 3, "b": 2})
        self.clients = {c: Client() for c in CLASSIC + MODERN}

    def _group_exists(self) -> bool:
        group = self.h.manager.groups.get("g")
        return group is not None and bool(group.members)

    def _owned_from(self, data: bytes) -> Assignment:
        return classic.to_assignment(cp.decode_assignment(data).partitions, self.h.view())

    def _classic_rejoin(self, name: str) -> None:
        """Eager: everything dropped, then JoinGroup and SyncGroup (again while told to)."""
        client = self.clients[name]
        client.owned = {}
        for _ in range(3):
            answer, records = self.h.manager.classic_join(classic.JoinRequest(
                "g", name, None, False, "c", "/h", 30000, 10000, "consumer", PROTOCOLS))
            self.h.written.extend(records)
            assert answer.error == E.NONE, answer
            client.epoch = answer.generation_id
            error, data = self.h.manager.classic_sync("g", name, None, answer.generation_id, "consumer",
                                                      "range")
            if error == E.NONE:
                client.owned = self._owned_from(data)
                return
            assert error == E.REBALANCE_IN_PROGRESS

    @rule(name=st.sampled_from(MODERN))
    def modern_join(self, name: str) -> None:
        client = self.clients[name]
        if client.epoch >= 0:
            return
        client.owned = {}
        result = self.h.heartbeat(name, 0, subscribed_topic_names=("a", "b"))
        assert result.error == E.NONE
        client.epoch = result.member_epoch
        client.owned = {t: ps for t, ps in (result.assignment or {}).items() if ps}

    @precondition(lambda self: self._group_exists())
    @rule(name=st.sampled_from(CLASSIC))
    def classic_join(self, name: str) -> None:
        if self.clients[name].epoch < 0:
            self._classic_rejoin(name)

    @rule(name=st.sampled_from(CLASSIC + MODERN))
    def heartbeat(self, name: str) -> None:
        client = self.clients[name]
        if client.epoch < 0 or not self._group_exists():
            return
        if name in CLASSIC:
            error = self.h.manager.classic_heartbeat("g", name, None, client.epoch)
            if error in (E.UNKNOWN_MEMBER_ID, E.ILLEGAL_GENERATION):
                client.epoch, client.owned = -1, {}
            elif error == E.REBALANCE_IN_PROGRESS:
                self._classic_rejoin(name)
            else:
                assert error == E.NONE
            return
        result = self.h.heartbeat(name, client.epoch, owned=dict(client.owned))
        if result.error in (E.FENCED_MEMBER_EPOCH, E.UNKNOWN_MEMBER_ID):
            client.epoch, client.owned = -1, {}
            return
        assert result.error == E.NONE, result
        client.epoch = result.member_epoch
        if result.assignment is not None:
            client.owned = {t: ps for t, ps in result.assignment.items() if ps}

    @rule(name=st.sampled_from(CLASSIC + MODERN))
    def leave(self, name: str) -> None:
        client = self.clients[name]
        if client.epoch < 0 or not self._group_exists():
            return
        if name in CLASSIC:
            known = name in self.h.manager.groups["g"].members
            errors, records = self.h.manager.classic_leave("g", [(name, None)])
            assert errors == [E.NONE if known else E.UNKNOWN_MEMBER_ID]
            self.h.written.extend(records)
        else:
            self.h.heartbeat(name, -1)
        client.epoch, client.owned = -1, {}

    @rule(name=st.sampled_from(CLASSIC + MODERN), kind=st.sampled_from(["session", "join", "sync"]))
    def time_out(self, name: str, kind: str) -> None:
        if self.h.timer.fire((kind, "g", name)):
            group = self.h.manager.groups.get("g")
            if group is None or name not in group.members:
                self.clients[name].owned = {}  # a zombie: it learns at its next request

    @precondition(lambda self: self._group_exists())
    @rule()
    def settle(self) -> None:
        for _ in range(20):
            before = {n: (c.epoch, c.owned) for n, c in self.clients.items()}
            for name in self.clients:
                self.heartbeat(name)
            if before == {n: (c.epoch, c.owned) for n, c in self.clients.items()}:
                break
        group = self.h.manager.groups["g"]
        if not group.members:
            return
        owners: dict[tuple, str] = {}
        for name, client in self.clients.items():
            if name not in group.members:
                continue
            for t, ps in client.owned.items():
                for p in ps:
                    assert (t, p) not in owners
                    owners[(t, p)] = name
        topics = self.h.view()
        assert set(owners) == {(topics[n][0], p) for n in ("a", "b") for p in range(topics[n][1])}

    @invariant()
    def no_partition_owned_twice(self) -> None:
        group = self.h.manager.groups.get("g")
        members = group.members if group is not None else {}
        seen: dict[tuple, str] = {}
        for name, client in self.clients.items():
            if name not in members:
                continue
            for t, ps in client.owned.items():
                for p in ps:
                    assert (t, p) not in seen, f"{(t, p)} owned by {seen.get((t, p))} and {name}"
                    seen[(t, p)] = name


MigrationMachine.TestCase.settings = settings(max_examples=100, stateful_step_count=40, deadline=None)
test_classic_and_consumer_members_state_machine = MigrationMachine.TestCase
