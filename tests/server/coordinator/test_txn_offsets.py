"""Transactional group offsets (TxnOffsetCommit, KIP-98) in the group coordinator: pending per
producer until the transaction's marker, committed or dropped by it, OffsetFetch's
require_stable view, expiry and deletion, and a partition loaded back from its batches (markers
included) equal to what the coordinator held; the store is a list of batches with log offsets
(the broker's __consumer_offsets path is tested over the wire in
tests/server/test_txn_markers.py)."""

from __future__ import annotations

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from kafkalite.protocol import error_codes as E
from kafkalite.server.coordinator.group import CommittedOffset
from kafkalite.server.coordinator.group_coordinator import GroupCoordinator
from kafkalite.server.coordinator.offsets import LoadedBatch
from kafkalite.server.coordinator.settings import GroupConfig

TP = ("t", 0)
TP1 = ("t", 1)


class BatchStore:
    """__consumer_offsets' partition 0 as a list of batches, each at the log offset of its first record."""

    def __init__(self) -> None:
        self.batches: list[LoadedBatch] = []
        self.end = 0  # the log end offset
        self.fail_with = E.NONE

    def append(self, group_id, records, done, producer=None, placed=None) -> None:
        if self.fail_with:
            done(self.fail_with)
            return
        self._add(LoadedBatch(list(records), producer_id=producer.producer_id if producer else -1),
                  len(records), placed)
        done(E.NONE)

    def marker(self, producer_id: int, commit: bool) -> None:
        self._add(LoadedBatch([], producer_id=producer_id, marker=commit), 1, None)

    def _add(self, batch: LoadedBatch, count: int, placed) -> None:
        if placed is not None:
            placed(self.end)
        self.batches.append(batch._replace(base_offset=self.end))
        self.end += count


def offset(value: int, ts: int = 1_000) -> CommittedOffset:
    return CommittedOffset(value, -1, f"m{value}", ts)


def new_coordinator(store: BatchStore, now=lambda: 1_000_000) -> GroupCoordinator:
    c = GroupCoordinator(1, GroupConfig(min_session_timeout_ms=10, initial_rebalance_delay_ms=0), store,
                         partition_for=lambda group: 0, now_ms=now)
    c.load(0, [])
    return c


@pytest.fixture
def store() -> BatchStore:
    return BatchStore()


@pytest.fixture
def coordinator(store):
    c = new_coordinator(store)
    yield c
    c.shutdown()


def txn_commit(c: GroupCoordinator, producer_id: int, offsets: dict, group: str = "g", member: str = "",
               generation: int = -1, instance: str | None = None, epoch: int = 0) -> int:
    answers: list[int] = []
    c.commit_txn_offsets(group, producer_id, epoch, member, instance, generation, offsets, answers.append)
    assert len(answers) == 1
    return answers[0]


def commit(c: GroupCoordinator, offsets: dict, group: str = "g") -> int:
    answers: list[int] = []
    c.commit_offsets(group, "", None, -1, offsets, answers.append)
    return answers[0]


def committed(c: GroupCoordinator, group: str = "g") -> dict:
    error, found = c.fetch_offsets(group, None)
    assert error == E.NONE
    return {tp: o.offset for tp, o in found.items()}


def reloaded(store: BatchStore) -> GroupCoordinator:
    c = GroupCoordinator(1, GroupConfig(), store, partition_for=lambda group: 0)
    c.load_batches(0, list(store.batches))
    return c


def test_txn_offsets_are_pending_until_the_commit_marker(coordinator, store):
    assert txn_commit(coordinator, 7, {TP: offset(5)}) == E.NONE
    assert committed(coordinator) == {}
    assert coordinator.unstable_partitions("g", [TP, TP1]) == {TP}
    store.marker(7, True)
    coordinator.complete_transaction(0, 7, True)
    assert committed(coordinator) == {TP: 5}
    assert coordinator.unstable_partitions("g", [TP]) == set()
    assert store.batches[0].producer_id == 7  # a transactional batch of the producer


def test_an_abort_drops_them_and_keeps_what_was_committed(coordinator, store):
    assert commit(coordinator, {TP: offset(3)}) == E.NONE
    txn_commit(coordinator, 7, {TP: offset(5), TP1: offset(9)})
    coordinator.complete_transaction(0, 7, False)
    assert committed(coordinator) == {TP: 3}
    assert coordinator.unstable_partitions("g", [TP, TP1]) == set()


def test_a_regular_commit_written_after_the_txn_offsets_wins(coordinator):
    txn_commit(coordinator, 7, {TP: offset(5), TP1: offset(6)})
    commit(coordinator, {TP: offset(8)})
    coordinator.complete_transaction(0, 7, True)
    assert committed(coordinator) == {TP: 8, TP1: 6}


def test_the_marker_of_another_producer_or_partition_changes_nothing(coordinator):
    txn_commit(coordinator, 7, {TP: offset(5)})
    txn_commit(coordinator, 8, {TP1: offset(6)})
    coordinator.complete_transaction(3, 7, True)  # another partition of __consumer_offsets
    coordinator.complete_transaction(0, 9, True)
    assert committed(coordinator) == {}
    coordinator.complete_transaction(0, 8, True)
    assert committed(coordinator) == {TP1: 6}
    assert coordinator.unstable_partitions("g", [TP, TP1]) == {TP}


def test_a_failed_append_leaves_nothing_pending(coordinator, store):
    store.fail_with = E.NOT_COORDINATOR
    assert txn_commit(coordinator, 7, {TP: offset(5)}) == E.NOT_COORDINATOR
    assert coordinator.unstable_partitions("g", [TP]) == set()
    coordinator.complete_transaction(0, 7, True)
    assert committed(coordinator) == {}


def test_member_and_generation_are_checked_only_when_given(coordinator):
    # v0-2, and v3+ without a member: no check (a group is created for the offsets, as Kafka's).
    assert txn_commit(coordinator, 7, {TP: offset(1)}, group="other") == E.NONE
    assert txn_commit(coordinator, 7, {TP: offset(1)}, member="nobody") == E.UNKNOWN_MEMBER_ID
    assert txn_commit(coordinator, 7, {TP: offset(1)}, generation=3) == E.ILLEGAL_GENERATION
    assert txn_commit(coordinator, 7, {TP: offset(1)}, generation=0) == E.NONE
    assert txn_commit(coordinator, 7, {TP: offset(1)}, group="") == E.INVALID_GROUP_ID


def test_a_group_not_coordinated_here(store):
    c = GroupCoordinator(1, GroupConfig(), store, partition_for=lambda group: 0)
    try:
        assert txn_commit(c, 7, {TP: offset(1)}) == E.NOT_COORDINATOR
        c.begin_loading(0)
        assert txn_commit(c, 7, {TP: offset(1)}) == E.COORDINATOR_LOAD_IN_PROGRESS
    finally:
        c.shutdown()


def test_loading_applies_committed_transactions_drops_aborted_keeps_open_ones(coordinator, store):
    commit(coordinator, {TP: offset(1)})
    txn_commit(coordinator, 7, {TP: offset(5)})
    txn_commit(coordinator, 8, {TP1: offset(6)})
    txn_commit(coordinator, 9, {("u", 0): offset(7)})
    store.marker(7, True)
    store.marker(8, False)
    c = reloaded(store)
    try:
        assert committed(c) == {TP: 5}
        assert c.unstable_partitions("g", [TP, TP1, ("u", 0)]) == {("u", 0)}
        c.complete_transaction(0, 9, True)  # the open one ends after the load
        assert committed(c) == {TP: 5, ("u", 0): 7}
    finally:
        c.shutdown()


def test_a_marker_written_while_the_partition_loads_applies_after_it(store):
    setup = new_coordinator(store)
    txn_commit(setup, 7, {TP: offset(5)})
    setup.shutdown()
    c = GroupCoordinator(1, GroupConfig(), store, partition_for=lambda group: 0)
    try:
        c.begin_loading(0)
        batches = list(store.batches)  # what the load read before the marker came
        store.marker(7, True)
        c.complete_transaction(0, 7, True)
        c.load_batches(0, batches, already_loading=True)
        assert committed(c) == {TP: 5}
    finally:
        c.shutdown()


def test_expiry_leaves_partitions_and_groups_with_pending_offsets(store):
    now = [1_000_000]
    c = new_coordinator(store, now=lambda: now[0])
    try:
        commit(c, {TP: offset(1, ts=now[0]), TP1: offset(2, ts=now[0])})
        txn_commit(c, 7, {TP: offset(5)})
        now[0] += 10_000
        assert c.cleanup_expired_offsets(1_000) == 1  # TP1 only
        assert committed(c) == {TP: 1}
        c.complete_transaction(0, 7, False)
        assert c.cleanup_expired_offsets(1_000) == 1
        assert "g" not in c.groups  # nothing left: the group goes
    finally:
        c.shutdown()


def test_a_group_with_only_pending_offsets_is_not_removed_by_expiry(store):
    now = [1_000_000]
    c = new_coordinator(store, now=lambda: now[0])
    try:
        txn_commit(c, 7, {TP: offset(5)})
        now[0] += 10_000
        assert c.cleanup_expired_offsets(1_000) == 0
        c.complete_transaction(0, 7, True)
        assert committed(c) == {TP: 5}
    finally:
        c.shutdown()


def test_deleting_a_partitions_offsets_removes_its_pending_ones_as_kafka(coordinator):
    txn_commit(coordinator, 7, {TP: offset(5), TP1: offset(6)})
    answers: list = []
    coordinator.delete_offsets("g", [TP], lambda error, per: answers.append((error, per)))
    assert answers == [(E.NONE, {})]
    assert coordinator.unstable_partitions("g", [TP, TP1]) == {TP1}
    coordinator.complete_transaction(0, 7, True)
    assert committed(coordinator) == {TP1: 6}


class LoadMatchesMemory(RuleBasedStateMachine):
    """Any mix of regular commits, transactional commits of a few producers, their markers and
    offset deletions: a coordinator loading the log afterwards holds what this one holds."""

    def __init__(self) -> None:
        super().__init__()
        self.store = BatchStore()
        self.c = new_coordinator(self.store)
        self.value = 0

    def teardown(self) -> None:
        self.c.shutdown()

    def _next(self) -> CommittedOffset:
        self.value += 1
        return offset(self.value)

    @rule(tps=st.sets(st.sampled_from([TP, TP1, ("u", 0)]), min_size=1))
    def regular_commit(self, tps):
        assert commit(self.c, {tp: self._next() for tp in sorted(tps)}) == E.NONE

    @rule(producer=st.sampled_from([7, 8]), tps=st.sets(st.sampled_from([TP, TP1, ("u", 0)]), min_size=1))
    def txn_commit(self, producer, tps):
        assert txn_commit(self.c, producer, {tp: self._next() for tp in sorted(tps)}) == E.NONE

    @rule(producer=st.sampled_from([7, 8]), commit=st.booleans())
    def end(self, producer, commit):
        self.store.marker(producer, commit)
        self.c.complete_transaction(0, producer, commit)

    @rule(tp=st.sampled_from([TP, TP1, ("u", 0)]))
    def delete(self, tp):
        self.c.delete_offsets("g", [tp], lambda error, per: None)

    @invariant()
    def loading_agrees(self):
        c = reloaded(self.store)
        try:
            mine, theirs = self.c.groups.get("g"), c.groups.get("g")
            if mine is None or theirs is None:
                assert mine is None or not mine.has_offsets()
                assert theirs is None or not theirs.has_offsets()
                return
            assert theirs.offsets == mine.offsets
            assert {p: o for p, o in theirs.pending_txn_offsets.items() if o} == \
                {p: o for p, o in mine.pending_txn_offsets.items() if o}
        finally:
            c.shutdown()


TestLoadMatchesMemory = LoadMatchesMemory.TestCase
TestLoadMatchesMemory.settings = settings(max_examples=60, stateful_step_count=20, deadline=None)
