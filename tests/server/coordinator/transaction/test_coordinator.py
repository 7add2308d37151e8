"""TransactionCoordinator against an in-memory __transaction_state (a store that answers each write
when the test says, or at once) and markers the test acknowledges: each api's answers and errors
as Kafka's coordinator gives them, then a Hypothesis state machine of init / add / end / fence /
timeout / reload checking what the state table implies."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from kafkalite.protocol import error_codes as E
from kafkalite.server.coordinator.transaction.coordinator import MarkerRequest, TransactionCoordinator
from kafkalite.server.coordinator.transaction.metadata import EPOCH_MAX, ProducerIdAndEpoch
from kafkalite.server.coordinator.transaction.settings import TransactionConfig
from kafkalite.server.coordinator.transaction.state import TransactionState
from kafkalite.server.coordinator.transaction.state_manager import TransactionStateManager
from kafkalite.server.coordinator.transaction.versions import TransactionVersion

S = TransactionState
TV0, TV2 = TransactionVersion.TV_0, TransactionVersion.TV_2
PARTITIONS = 3


class MemoryStore:
    """__transaction_state in memory: every write kept per partition; answered at once with
    ``error`` unless ``hold`` (then ``release()`` answers them)."""

    def __init__(self) -> None:
        self.log: dict[int, list] = {}
        self.error = E.NONE
        self.hold = False
        self.held: list = []

    def append(self, index, records, done):
        if self.hold:
            self.held.append((index, records, done))
            return
        if self.error == E.NONE:
            self.log.setdefault(index, []).extend(records)
        done(self.error)

    def release(self, error=E.NONE):
        held, self.held = self.held, []
        for index, records, done in held:
            if error == E.NONE:
                self.log.setdefault(index, []).extend(records)
            done(error)


class Markers:
    def __init__(self) -> None:
        self.requests: list[MarkerRequest] = []
        self.later: list = []

    def add_markers(self, request):
        self.requests.append(request)

    def remove_for_partition(self, index):
        self.requests = [r for r in self.requests if r.txn_partition != index]

    def retry_later(self, fn):
        self.later.append(fn)

    def ack_all(self):
        requests, self.requests = self.requests, []
        for r in requests:
            r.on_written()


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


def make(config: TransactionConfig | None = None):
    clock, store, markers = Clock(), MemoryStore(), Markers()
    config = config or TransactionConfig(num_partitions=PARTITIONS, max_timeout_ms=60_000,
                                         transactional_id_expiration_ms=100_000)
    state = TransactionStateManager(config, store, now_ms=clock)
    ids = itertools.count(1000)
    coordinator = TransactionCoordinator(1, config, state, lambda: next(ids), markers)
    for i in range(PARTITIONS):
        coordinator.on_election(i, 7)
        coordinator.load(i, 7, [])
    return coordinator, store, markers, clock


class Calls:
    def __init__(self) -> None:
        self.got: list = []

    def __call__(self, *args):
        self.got.append(args[0] if len(args) == 1 else args)

    @property
    def last(self):
        return self.got[-1]


def init(c, txn="t", timeout=30_000, expected=None):
    out = Calls()
    c.handle_init_producer_id(txn, timeout, expected, out)
    return out.last


def add(c, pid, epoch, parts=(("x", 0),), txn="t"):
    out = Calls()
    c.handle_add_partitions(txn, pid, epoch, set(parts), out)
    return out.last


def end(c, pid, epoch, commit=True, version=TV0, txn="t"):
    out = Calls()
    c.handle_end_txn(txn, pid, epoch, commit, version, out)
    return out.last


def describe(c, txn="t"):
    return c.describe([txn])[0]


def test_init_gives_epoch_0_then_bumps_and_rejects_bad_requests():
    c, *_ = make()
    assert init(c) == (E.NONE, 1000, 0)
    assert init(c) == (E.NONE, 1000, 1)
    assert init(c, timeout=0)[0] == E.INVALID_TRANSACTION_TIMEOUT
    assert init(c, timeout=60_001)[0] == E.INVALID_TRANSACTION_TIMEOUT
    assert init(c, txn="")[0] == E.INVALID_REQUEST
    assert init(c, txn=None) == (E.NONE, 1001, 0)  # idempotent: a fresh id, no state


def test_kip360_expected_epoch_retry_and_fence():
    c, *_ = make()
    init(c)
    assert init(c, expected=ProducerIdAndEpoch(1000, 0)) == (E.NONE, 1000, 1)
    # The same request again (its answer lost): the current epoch, unchanged.
    assert init(c, expected=ProducerIdAndEpoch(1000, 0)) == (E.NONE, 1000, 1)
    assert init(c, expected=ProducerIdAndEpoch(999, 1))[0] == E.PRODUCER_FENCED
    assert init(c, expected=ProducerIdAndEpoch(1000, 5))[0] == E.PRODUCER_FENCED


def test_commit_flow_markers_then_complete():
    c, _, markers, _ = make()
    _, pid, epoch = init(c)
    assert add(c, pid, epoch, [("x", 0), ("y", 1)]) == E.NONE
    assert describe(c).state == "Ongoing" and describe(c).partitions == {"x": [0], "y": [1]}
    assert add(c, pid, epoch, [("x", 0)]) == E.NONE  # already in: no write
    assert end(c, pid, epoch) == (E.NONE, pid, epoch)
    assert describe(c).state == "PrepareCommit"
    [request] = markers.requests
    assert (request.commit, request.producer_id, request.producer_epoch, request.coordinator_epoch,
            request.partitions) == (True, pid, epoch, 7, frozenset({("x", 0), ("y", 1)}))
    # Meanwhile everything waits.
    assert add(c, pid, epoch) == E.CONCURRENT_TRANSACTIONS
    assert end(c, pid, epoch)[0] == E.CONCURRENT_TRANSACTIONS
    assert init(c)[0] == E.CONCURRENT_TRANSACTIONS
    markers.ack_all()
    d = describe(c)
    assert (d.state, d.partitions) == ("CompleteCommit", {})
    assert end(c, pid, epoch) == (E.NONE, pid, epoch)  # a retry
    assert end(c, pid, epoch, commit=False)[0] == E.INVALID_TXN_STATE


def test_end_and_add_errors():
    c, *_ = make()
    _, pid, epoch = init(c)
    assert end(c, pid, epoch)[0] == E.INVALID_TXN_STATE  # Empty at version 0
    assert end(c, pid + 1, epoch)[0] == E.INVALID_PRODUCER_ID_MAPPING
    assert end(c, pid, epoch + 1)[0] == E.PRODUCER_FENCED
    assert add(c, pid + 1, epoch) == E.INVALID_PRODUCER_ID_MAPPING
    assert add(c, pid, epoch + 1) == E.PRODUCER_FENCED
    assert add(c, pid, epoch, txn="other") == E.INVALID_PRODUCER_ID_MAPPING
    assert end(c, pid, epoch, txn="other")[0] == E.INVALID_PRODUCER_ID_MAPPING


def test_tv2_end_bumps_the_epoch_and_tells_it():
    c, _, markers, _ = make()
    _, pid, epoch = init(c)
    add(c, pid, epoch)
    assert end(c, pid, epoch, version=TV2) == (E.NONE, pid, epoch + 1)
    markers.ack_all()
    assert describe(c).producer_epoch == epoch + 1
    assert end(c, pid, epoch, version=TV2) == (E.NONE, pid, epoch + 1)  # retry of the bumped end
    # Version 2 may abort with nothing open.
    assert end(c, pid, epoch + 1, commit=False, version=TV2) == (E.NONE, pid, epoch + 2)
    assert describe(c).state == "CompleteAbort"  # no partitions: completed at once


def test_tv2_overflow_rotates_the_producer_id():
    c, _, markers, _ = make()
    _, pid, _ = init(c)
    _, meta = c.state.get("t")
    meta.producer_epoch = EPOCH_MAX - 1  # exhausted: the end's bump takes the last epoch
    add(c, pid, EPOCH_MAX - 1)
    error, new_pid, new_epoch = end(c, pid, EPOCH_MAX - 1, version=TV2)
    assert error == E.NONE and new_pid != pid and new_epoch == 0
    markers.ack_all()
    d = describe(c)
    assert (d.producer_id, d.producer_epoch, d.state) == (new_pid, 0, "CompleteCommit")


def test_init_on_an_ongoing_transaction_fences_and_aborts_it():
    c, _, markers, _ = make()
    _, pid, epoch = init(c)
    add(c, pid, epoch)
    assert init(c)[0] == E.CONCURRENT_TRANSACTIONS
    # The fence's epoch (a version 0 transaction: no second bump), never handed out.
    assert describe(c).state == "PrepareAbort" and describe(c).producer_epoch == epoch + 1
    [request] = markers.requests
    assert not request.commit and request.producer_epoch == epoch + 1
    assert add(c, pid, epoch) == E.PRODUCER_FENCED
    markers.ack_all()
    assert init(c) == (E.NONE, pid, epoch + 2)


def test_timed_out_transactions_are_aborted():
    c, _, markers, clock = make()
    _, pid, epoch = init(c, timeout=1000)
    add(c, pid, epoch)
    clock.now += 999
    assert c.abort_timed_out_transactions() == 0
    clock.now += 2
    assert c.abort_timed_out_transactions() == 1
    assert describe(c).state == "PrepareAbort"
    markers.ack_all()
    assert describe(c).state == "CompleteAbort"
    assert end(c, pid, epoch)[0] == E.PRODUCER_FENCED


def test_failed_write_drops_the_move_and_translates_the_error():
    c, store, _, _ = make()
    store.error = E.NOT_ENOUGH_REPLICAS
    assert init(c)[0] == E.COORDINATOR_NOT_AVAILABLE
    store.error = E.NOT_LEADER_OR_FOLLOWER
    assert init(c)[0] == E.NOT_COORDINATOR
    store.error = E.NONE
    assert init(c) == (E.NONE, 1000, 0)


def test_write_answered_after_the_partition_moved_is_not_coordinator():
    c, store, _, _ = make()
    store.hold = True
    out = Calls()
    c.handle_init_producer_id("t", 30_000, None, out)
    c.on_resignation(c.partition_for("t"))
    store.release()
    assert out.last[0] == E.NOT_COORDINATOR


def test_loading_and_not_owning():
    c, store, markers, _ = make()
    _, pid, epoch = init(c)
    add(c, pid, epoch)
    end(c, pid, epoch)
    index = c.partition_for("t")
    c.on_election(index, 8)
    assert init(c)[0] == E.COORDINATOR_LOAD_IN_PROGRESS
    assert describe(c).error == E.COORDINATOR_LOAD_IN_PROGRESS
    assert c.list_transactions()[0] == E.COORDINATOR_LOAD_IN_PROGRESS
    markers.requests.clear()
    c.load(index, 8, store.log[index])
    # Loaded in PrepareCommit: its markers go again, at the new coordinator epoch.
    [request] = markers.requests
    assert request.coordinator_epoch == 8 and request.commit
    markers.ack_all()
    assert describe(c).state == "CompleteCommit"
    c.on_resignation(index)
    assert describe(c).error == E.NOT_COORDINATOR
    assert add(c, pid, epoch) == E.NOT_COORDINATOR


def test_expired_ids_get_a_tombstone_and_go():
    c, store, _, clock = make()
    init(c)
    clock.now += 100_001
    assert c.expire_transactional_ids() == 1
    assert describe(c).error == E.TRANSACTIONAL_ID_NOT_FOUND
    index = c.partition_for("t")
    assert store.log[index][-1][1] is None
    c.on_election(index, 9)
    c.load(index, 9, store.log[index])
    assert describe(c).error == E.TRANSACTIONAL_ID_NOT_FOUND


def test_verify_partitions():
    c, *_ = make()
    _, pid, epoch = init(c)
    add(c, pid, epoch, [("x", 0)])
    out = Calls()
    c.handle_verify_partitions("t", pid, epoch, [("x", 0), ("x", 1)], out)
    assert out.last == {("x", 0): E.NONE, ("x", 1): E.TRANSACTION_ABORTABLE}
    c.handle_verify_partitions("t", pid, epoch + 1, [("x", 0)], out)
    assert out.last == {("x", 0): E.PRODUCER_FENCED}
    c.handle_verify_partitions("t", pid + 1, epoch, [("x", 0)], out)
    assert out.last == {("x", 0): E.INVALID_PRODUCER_ID_MAPPING}


def test_list_transactions_filters():
    c, _, _, clock = make()
    for name in ("a", "b", "c"):
        init(c, txn=name)
    _, pid, epoch = init(c, txn="d")
    add(c, pid, epoch, txn="d")
    clock.now += 5000
    error, unknown, listed = c.list_transactions(["Ongoing", "Bogus"])
    assert (error, unknown, [t.transactional_id for t in listed]) == (E.NONE, ["Bogus"], ["d"])
    assert c.list_transactions(["Bogus"])[2] == []
    assert {t.transactional_id for t in c.list_transactions(producer_id_filters=[pid])[2]} == {"d"}
    # As Kafka's, the duration is measured from the start time, -1 with no transaction open.
    assert [t.transactional_id for t in c.list_transactions(["Ongoing"], duration_ms=4000)[2]] == ["d"]
    assert c.list_transactions(["Ongoing"], duration_ms=6000)[2] == []
    assert sorted(t.transactional_id for t in c.list_transactions(id_pattern="[ab]")[2]) == ["a", "b"]
    assert c.list_transactions(id_pattern="(")[0] == E.INVALID_REGULAR_EXPRESSION


# --- the state machine ----------------------------------------------------------------------------

IDS = ("t1", "t2")


class CoordinatorMachine(RuleBasedStateMachine):
    """Random requests from producers of two ids, some writes failing, markers acknowledged late,
    timeouts and reloads. After each step: a prepared end has its markers queued (or is being
    written), Complete* and Empty hold no partitions, Ongoing holds some, epochs stay below the
    maximum, and what a reload reads back is what the cache held."""

    def __init__(self) -> None:
        super().__init__()
        self.c, self.store, self.markers, self.clock = make()
        self.producers: dict[str, tuple[int, int]] = {}
        self.epoch = 7

    def _cached(self, txn):
        try:
            return self.c.state.get(txn)[1]
        except Exception:
            return None

    @rule(txn=st.sampled_from(IDS), fail=st.booleans())
    def init(self, txn, fail):
        self.store.error = E.NOT_ENOUGH_REPLICAS if fail else E.NONE
        error, pid, epoch = init(self.c, txn=txn)
        self.store.error = E.NONE
        assert error in (E.NONE, E.CONCURRENT_TRANSACTIONS, E.COORDINATOR_NOT_AVAILABLE)
        if error == E.NONE:
            assert not fail
            self.producers[txn] = (pid, epoch)

    @rule(txn=st.sampled_from(IDS),
          parts=st.sets(st.sampled_from([("x", 0), ("x", 1), ("y", 0)]), min_size=1))
    def add(self, txn, parts):
        if txn not in self.producers:
            return
        pid, epoch = self.producers[txn]
        error = add(self.c, pid, epoch, parts, txn=txn)
        assert error in (E.NONE, E.CONCURRENT_TRANSACTIONS, E.PRODUCER_FENCED, E.INVALID_PRODUCER_ID_MAPPING)
        if error == E.NONE:
            assert set(parts) <= self._cached(txn).topic_partitions

    @rule(txn=st.sampled_from(IDS), commit=st.booleans(), v2=st.booleans())
    def end(self, txn, commit, v2):
        if txn not in self.producers:
            return
        pid, epoch = self.producers[txn]
        error, new_pid, new_epoch = end(self.c, pid, epoch, commit, TV2 if v2 else TV0, txn=txn)
        assert error in (E.NONE, E.CONCURRENT_TRANSACTIONS, E.PRODUCER_FENCED, E.INVALID_TXN_STATE,
                         E.INVALID_PRODUCER_ID_MAPPING)
        if error == E.NONE and v2:
            self.producers[txn] = (new_pid, new_epoch)

    @rule()
    def ack_markers(self):
        self.markers.ack_all()

    @rule(ms=st.integers(0, 40_000))
    def time_passes(self, ms):
        self.clock.now += ms
        self.c.abort_timed_out_transactions()

    @rule()
    def reload(self):
        before = {t: self._cached(t) for t in IDS}
        before = {t: (m.producer_id, m.producer_epoch, m.state, m.topic_partitions) for t, m in before.items()
                  # (A fence whose abort was not written keeps its epoch in memory only, as Kafka's.)
                  if m is not None and not m.pending_transition_in_progress and m.producer_epoch >= 0
                  and not m.has_failed_epoch_fence}
        self.epoch += 1
        self.markers.requests.clear()
        for i in range(PARTITIONS):
            self.c.on_election(i, self.epoch)
            self.c.load(i, self.epoch, self.store.log.get(i, []))
        for t, (pid, epoch, state, parts) in before.items():
            m = self._cached(t)
            assert (m.producer_id, m.producer_epoch, m.topic_partitions) == (pid, epoch, parts)
            assert m.state is state

    @invariant()
    def states_are_consistent(self):
        queued = {r.transactional_id for r in self.markers.requests}
        for t in IDS:
            m = self._cached(t)
            if m is None:
                continue
            # -1: created by an InitProducerId whose write failed (kept, as Kafka keeps it).
            assert 0 <= m.producer_epoch < EPOCH_MAX or (m.producer_epoch == -1 and m.state is S.EMPTY)
            if m.state in (S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
                assert not m.topic_partitions
            if m.state is S.ONGOING:
                assert m.topic_partitions and not m.pending_transition_in_progress
            if m.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
                assert t in queued and m.pending_state in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT)


TestCoordinatorMachine = CoordinatorMachine.TestCase
TestCoordinatorMachine.settings = settings(max_examples=200, stateful_step_count=30, deadline=None)


@pytest.mark.parametrize("version", [TV0, TV2])
def test_end_of_an_empty_abort_by_version(version):
    c, *_ = make()
    _, pid, epoch = init(c)
    error = end(c, pid, epoch, commit=False, version=version)[0]
    assert error == (E.NONE if version is TV2 else E.INVALID_TXN_STATE)
