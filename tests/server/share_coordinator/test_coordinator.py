"""The share coordinator on a list of records (the records __share_group_state would hold): writes
answered once stored, fencing, a snapshot every N updates, reloading equals the live state."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kafkalite.protocol import error_codes as E
from kafkalite.protocol import share_state_records as sr
from kafkalite.server.share.persister import ReadStateResult, ShareStateKey, StateBatch, StateSummary
from kafkalite.server.share_coordinator.coordinator import ShareCoordinator, partition_for
from kafkalite.server.share_coordinator.settings import ShareCoordinatorConfig

KEY = ShareStateKey("g", bytes(range(16)), 0)


class ListStore:
    """Records per partition; appends answered at once (``hold`` keeps them until released)."""

    def __init__(self) -> None:
        self.records: dict[int, list[tuple[bytes, bytes | None]]] = {}
        self.hold = False
        self.held: list[tuple[int, list, Callable[[int], None]]] = []
        self.error = E.NONE

    def append(self, index, records, done) -> None:
        if self.hold:
            self.held.append((index, records, done))
            return
        if not self.error:
            self.records.setdefault(index, []).extend(records)
        done(self.error)

    def release(self) -> None:
        held, self.held = self.held, []
        for index, records, done in held:
            self.records.setdefault(index, []).extend(records)
            done(E.NONE)


def make(per_snapshot: int = 3) -> tuple[ShareCoordinator, ListStore]:
    store = ListStore()
    c = ShareCoordinator(ShareCoordinatorConfig(num_partitions=4, updates_per_snapshot=per_snapshot), store)
    for i in range(4):
        c.begin_loading(i)
        c.load(i, [])
    return c, store


def call(fn, *args):
    got = []
    fn(*args, got.append)
    assert len(got) == 1
    return got[0]


def reloaded(c: ShareCoordinator, store: ListStore) -> ShareCoordinator:
    other = ShareCoordinator(c.config, ListStore())
    for i in range(4):
        other.begin_loading(i)
        other.load(i, list(store.records.get(i, [])))
    return other


def test_partition_for_hashes_the_coordinator_key_as_java():
    # "g:AAECAwQFBgcICQoLDA0ODw:0".hashCode() in Java, abs, mod 50
    key = "g:AAECAwQFBgcICQoLDA0ODw:0"
    h = 0
    for ch in key:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    h = h - (1 << 32) if h >= 1 << 31 else h
    assert partition_for(KEY, 50) == abs(h) % 50


def test_write_then_read_and_summary():
    c, _ = make()
    batches = [StateBatch(10, 14, 2, 1), StateBatch(15, 15, 0, 2)]
    assert call(c.write_state, KEY, 1, 5, 10, batches) == E.NONE
    result = call(c.read_state, KEY, 5)
    assert result == ReadStateResult(E.NONE, 1, 10, tuple(batches))
    assert call(c.read_summary, KEY, 5) == StateSummary(E.NONE, 1, 5, 10)


def test_initialize_is_fenced_by_a_state_epoch_not_newer():
    c, _ = make()
    assert call(c.initialize_state, KEY, 1, 0) == E.NONE
    assert call(c.initialize_state, KEY, 1, 5) == E.FENCED_STATE_EPOCH
    assert call(c.initialize_state, KEY, 2, 5) == E.NONE
    assert call(c.read_state, KEY, 0).start_offset == 5


def test_older_leader_and_state_epochs_are_fenced():
    c, store = make()
    assert call(c.write_state, KEY, 2, 5, 0, [StateBatch(0, 0, 2, 1)]) == E.NONE
    n = sum(len(r) for r in store.records.values())
    assert call(c.write_state, KEY, 2, 4, 0, [StateBatch(1, 1, 2, 1)]) == E.FENCED_LEADER_EPOCH
    assert call(c.write_state, KEY, 1, 5, 0, [StateBatch(1, 1, 2, 1)]) == E.FENCED_STATE_EPOCH
    assert call(c.read_state, KEY, 4).error == E.FENCED_LEADER_EPOCH
    assert sum(len(r) for r in store.records.values()) == n  # nothing written for a fenced request


def test_a_read_with_a_newer_leader_epoch_fences_the_old_leader_after_a_reload():
    c, store = make()
    assert call(c.write_state, KEY, 1, 3, 0, [StateBatch(0, 0, 2, 1)]) == E.NONE
    assert call(c.read_state, KEY, 4).error == E.NONE
    again = reloaded(c, store)
    assert call(again.write_state, KEY, 1, 3, 0, [StateBatch(1, 1, 2, 1)]) == E.FENCED_LEADER_EPOCH


def test_a_snapshot_every_n_updates():
    c, store = make(per_snapshot=3)
    for i in range(7):
        assert call(c.write_state, KEY, 1, 1, 0, [StateBatch(i, i, 2, 1)]) == E.NONE
    kinds = [sr.decode_key(k).snapshot for k, _ in store.records[c.partition_of(KEY)]]
    # the first write is a snapshot, then two updates and a snapshot, twice
    assert kinds == [True, False, False, True, False, False, True]
    assert call(c.read_state, KEY, 1).batches == (StateBatch(0, 6, 2, 1),)


def test_delete_writes_tombstones_and_forgets():
    c, store = make()
    call(c.write_state, KEY, 1, 1, 0, [StateBatch(0, 3, 0, 1)])
    assert call(c.delete_state, KEY) == E.NONE
    assert store.records[c.partition_of(KEY)][-1][1] is None
    assert call(c.read_state, KEY, 1) == ReadStateResult(E.NONE)
    assert call(reloaded(c, store).read_state, KEY, 1) == ReadStateResult(E.NONE)


def test_not_coordinator_and_loading():
    store = ListStore()
    c = ShareCoordinator(ShareCoordinatorConfig(num_partitions=4), store)
    assert call(c.read_state, KEY, 0).error == E.NOT_COORDINATOR
    c.begin_loading(c.partition_of(KEY))
    assert call(c.write_state, KEY, 0, 0, 0, []) == E.COORDINATOR_LOAD_IN_PROGRESS
    c.load(c.partition_of(KEY), [])
    assert call(c.write_state, KEY, 0, 0, 0, []) == E.NONE


def test_requests_wait_for_the_write_before_them_and_unload_answers_not_coordinator():
    c, store = make()
    store.hold = True
    answers: list = []
    c.write_state(KEY, 1, 1, 0, [StateBatch(0, 0, 2, 1)], answers.append)
    c.read_state(KEY, 1, answers.append)
    assert answers == []  # the read waits behind the write being stored
    store.release()
    assert answers == [E.NONE, ReadStateResult(E.NONE, 1, 0, (StateBatch(0, 0, 2, 1),))]
    c.write_state(KEY, 1, 1, 0, [StateBatch(1, 1, 2, 1)], answers.append)
    c.read_state(KEY, 1, answers.append)
    c.unload(c.partition_of(KEY))
    assert answers[-1] == ReadStateResult(E.NOT_COORDINATOR)
    store.release()  # the write stored after its partition left: the sender retries elsewhere
    assert answers[-1] == E.NOT_COORDINATOR


@pytest.mark.parametrize(("error", "answer"), [(E.NOT_LEADER_OR_FOLLOWER, E.NOT_COORDINATOR),
                                               (E.NOT_ENOUGH_REPLICAS, E.COORDINATOR_NOT_AVAILABLE)])
def test_failed_appends_answer_as_a_coordinator_and_change_nothing(error, answer):
    c, store = make()
    store.error = error
    assert call(c.write_state, KEY, 1, 1, 0, [StateBatch(0, 0, 2, 1)]) == answer
    store.error = E.NONE
    assert call(c.read_state, KEY, 1) == ReadStateResult(E.NONE)


def test_unreadable_records_are_skipped_when_loading():
    c, store = make()
    call(c.write_state, KEY, 1, 1, 0, [StateBatch(0, 0, 2, 1)])
    store.records[c.partition_of(KEY)].insert(0, (b"\x00\x09junk", b"x"))
    assert call(reloaded(c, store).read_state, KEY, 1).batches == (StateBatch(0, 0, 2, 1),)


def test_a_deleted_state_refuses_writes_until_initialized_again():
    """A leader's cached share-partition of a deleted group must not write the state back: its
    write is INVALID_REQUEST (Kafka's write of an uninitialized share-partition), also after the
    partition is loaded again from its tombstones; InitializeShareGroupState starts it anew."""
    c, store = make()
    assert call(c.write_state, KEY, 0, 1, 6, [StateBatch(6, 6, 2, 1)]) == E.NONE
    assert call(c.delete_state, KEY) == E.NONE
    assert call(c.write_state, KEY, 0, 1, 6, [StateBatch(7, 7, 2, 1)]) == E.INVALID_REQUEST
    again = reloaded(c, store)
    assert call(again.write_state, KEY, 0, 1, 6, [StateBatch(7, 7, 2, 1)]) == E.INVALID_REQUEST
    assert call(again.read_summary, KEY, -1).state_epoch == -1
    assert call(again.initialize_state, KEY, 0, 0) == E.NONE
    assert call(again.write_state, KEY, 0, 1, 0, [StateBatch(0, 0, 2, 1)]) == E.NONE
