"""TransactionMetadata's moves, with the epochs and producer ids Kafka's TransactionMetadataTest
expects."""

from __future__ import annotations

import dataclasses

import pytest

from kafkalite.protocol import error_codes as E
from kafkalite.server.coordinator.transaction.errors import (
    ConcurrentTransactions,
    IllegalTransactionTransition,
    ProducerFenced,
)
from kafkalite.server.coordinator.transaction.metadata import (
    EPOCH_MAX,
    ProducerIdAndEpoch,
    TransactionMetadata,
    is_epoch_exhausted,
)
from kafkalite.server.coordinator.transaction.state import (
    COMPLETED_STATES,
    EXPIRABLE_STATES,
    VALID_PREVIOUS_STATES,
    TransactionState,
)
from kafkalite.server.coordinator.transaction.versions import TransactionVersion

S = TransactionState
TV0, TV2 = TransactionVersion.TV_0, TransactionVersion.TV_2
TP = ("t", 0)


def ids(start: int = 1000):
    n = iter(range(start, start + 100))
    return lambda: next(n)


def no_id() -> int:
    raise AssertionError("no new producer id expected")


def done(m: TransactionMetadata, transit) -> None:
    m.complete_transition_to(transit)
    assert m.pending_state is None and m.state is transit.state


def meta(state: S = S.EMPTY, epoch: int = 0, **kw) -> TransactionMetadata:
    kw.setdefault("txn_start_timestamp", 1 if state not in (S.EMPTY,) else -1)
    return TransactionMetadata("tx", producer_id=7, txn_timeout_ms=30000, producer_epoch=epoch, state=state,
                               **kw)


def test_the_table_is_kafkas():
    assert VALID_PREVIOUS_STATES[S.PREPARE_ABORT] == {S.ONGOING, S.PREPARE_EPOCH_FENCE, S.EMPTY,
                                                      S.COMPLETE_COMMIT, S.COMPLETE_ABORT}
    assert VALID_PREVIOUS_STATES[S.DEAD] == {S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}
    assert EXPIRABLE_STATES == {S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}
    assert COMPLETED_STATES == {S.COMPLETE_COMMIT, S.COMPLETE_ABORT}
    assert set(VALID_PREVIOUS_STATES) == set(S)
    assert is_epoch_exhausted(EPOCH_MAX - 1) and not is_epoch_exhausted(EPOCH_MAX - 2)


def test_new_id_gets_epoch_zero():
    m = TransactionMetadata("tx", producer_id=7, txn_timeout_ms=30000)
    t = m.prepare_incr_producer_epoch(60000, 5, no_id)
    assert (t.producer_id, t.producer_epoch, t.last_producer_epoch, t.txn_timeout_ms) == (7, 0, -1, 60000)
    assert m.pending_state is S.EMPTY and m.producer_epoch == -1  # nothing applied before the write
    done(m, t)
    assert (m.producer_epoch, m.txn_last_update_timestamp, m.prev_producer_id) == (0, 5, 7)


def test_bump_without_and_with_expected_epoch():
    m = meta(epoch=3, last_producer_epoch=1)
    t = m.prepare_incr_producer_epoch(30000, 5, no_id)
    assert (t.producer_epoch, t.last_producer_epoch) == (4, -1)
    m.fail_transition(t)
    t = m.prepare_incr_producer_epoch(30000, 5, no_id, ProducerIdAndEpoch(7, 3))
    assert (t.producer_epoch, t.last_producer_epoch) == (4, 3)
    done(m, t)
    # the same request again (its answer lost): the current epoch, unchanged
    t = m.prepare_incr_producer_epoch(30000, 6, no_id, ProducerIdAndEpoch(7, 3))
    assert (t.producer_id, t.producer_epoch, t.last_producer_epoch) == (7, 4, 3)
    done(m, t)


def test_stale_epoch_or_producer_is_fenced_and_nothing_changes():
    m = meta(epoch=5, last_producer_epoch=4, prev_producer_id=6)
    before = m.snapshot()
    with pytest.raises(ProducerFenced) as e:
        m.prepare_incr_producer_epoch(30000, 5, no_id, ProducerIdAndEpoch(7, 2))
    assert e.value.code == E.PRODUCER_FENCED
    with pytest.raises(ProducerFenced):
        m.prepare_incr_producer_epoch(30000, 5, no_id, ProducerIdAndEpoch(99, 5))
    with pytest.raises(ProducerFenced):  # the previous id, but its epoch was not exhausted
        m.prepare_incr_producer_epoch(30000, 5, no_id, ProducerIdAndEpoch(6, 10))
    assert m.snapshot() == before and m.pending_state is None


def test_exhausted_epoch_rotates_to_a_new_producer_id():
    m = meta(state=S.COMPLETE_COMMIT, epoch=EPOCH_MAX - 1)
    t = m.prepare_incr_producer_epoch(30000, 5, ids())
    assert (t.producer_id, t.prev_producer_id, t.producer_epoch, t.last_producer_epoch) == (1000, 7, 0, -1)
    m.fail_transition(t)
    # with the expected epoch: the last epoch recorded, so that a retry is recognised
    t = m.prepare_incr_producer_epoch(30000, 5, ids(2000), ProducerIdAndEpoch(7, EPOCH_MAX - 1))
    assert (t.producer_id, t.producer_epoch, t.last_producer_epoch) == (2000, 0, EPOCH_MAX - 1)
    done(m, t)
    assert (m.producer_id, m.prev_producer_id, m.producer_epoch) == (2000, 7, 0)
    # the retry, from the old producer id with its exhausted epoch
    t = m.prepare_incr_producer_epoch(30000, 6, no_id, ProducerIdAndEpoch(7, EPOCH_MAX - 1))
    assert (t.producer_id, t.producer_epoch) == (2000, 0)


def test_init_while_pending_or_completing_is_concurrent():
    m = meta(state=S.PREPARE_COMMIT)
    with pytest.raises(ConcurrentTransactions) as e:
        m.prepare_incr_producer_epoch(30000, 5, no_id)
    assert e.value.code == E.CONCURRENT_TRANSACTIONS
    m = meta()
    m.prepare_incr_producer_epoch(30000, 5, no_id)
    with pytest.raises(ConcurrentTransactions):
        m.prepare_incr_producer_epoch(30000, 5, no_id)


def test_init_on_an_ongoing_transaction_fences_and_aborts():
    m = meta(state=S.ONGOING, epoch=3, last_producer_epoch=2, topic_partitions=frozenset({TP}))
    fence = m.prepare_incr_producer_epoch(30000, 5, no_id)
    assert (fence.state, fence.producer_epoch) == (S.PREPARE_EPOCH_FENCE, 4)
    with pytest.raises(IllegalTransactionTransition):
        m.complete_transition_to(fence)  # a fence is never written
    abort = m.prepare_abort_after_fence(fence, TV0, 9)
    assert (abort.state, abort.producer_epoch, abort.last_producer_epoch) == (S.PREPARE_ABORT, 4, -1)
    assert abort.topic_partitions == {TP}
    done(m, abort)
    done(m, m.prepare_complete(10))
    assert (m.state, m.producer_epoch, m.topic_partitions) == (S.COMPLETE_ABORT, 4, frozenset())
    # the client's retry bumps once more
    t = m.prepare_incr_producer_epoch(30000, 11, no_id)
    assert t.producer_epoch == 5


def test_fence_at_version_2_bumps_twice():
    m = meta(state=S.ONGOING, epoch=3, topic_partitions=frozenset({TP}), client_transaction_version=TV2)
    fence = m.prepare_fence_producer_epoch()
    abort = m.prepare_abort_after_fence(fence, TV2, 9)
    assert (abort.producer_epoch, abort.last_producer_epoch, abort.next_producer_id) == (5, 4, -1)


def test_a_failed_fence_is_not_bumped_again():
    m = meta(state=S.ONGOING, epoch=3, topic_partitions=frozenset({TP}))
    abort = m.prepare_abort_after_fence(m.prepare_fence_producer_epoch(), TV0, 9)
    m.fail_transition(abort)
    assert (m.state, m.producer_epoch, m.has_failed_epoch_fence, m.pending_state) == (
        S.ONGOING, 4, True, None)
    abort = m.prepare_abort_after_fence(m.prepare_fence_producer_epoch(), TV0, 10)
    assert abort.producer_epoch == 4
    done(m, abort)
    m.prepare_complete(11)
    assert not m.has_failed_epoch_fence


def test_fence_at_the_maximum_does_not_overflow():
    m = meta(state=S.ONGOING, epoch=EPOCH_MAX, topic_partitions=frozenset({TP}))
    assert m.prepare_fence_producer_epoch().producer_epoch == EPOCH_MAX


def test_add_partitions_starts_a_transaction_once():
    m = meta(epoch=0)
    t = m.prepare_add_partitions([TP], 100, TV0)
    assert (t.state, t.topic_partitions, t.txn_start_timestamp, t.txn_last_update_timestamp) == (
        S.ONGOING, {TP}, 100, 100)
    done(m, t)
    t = m.prepare_add_partitions([("u", 1)], 200, TV0)
    assert (t.topic_partitions, t.txn_start_timestamp) == ({TP, ("u", 1)}, 100)
    done(m, t)


def test_end_at_version_0_keeps_the_epoch():
    m = meta(state=S.ONGOING, epoch=4, last_producer_epoch=3, topic_partitions=frozenset({TP}))
    t = m.prepare_abort_or_commit(S.PREPARE_COMMIT, TV0, 50, no_id)
    assert (t.producer_epoch, t.last_producer_epoch, t.txn_start_timestamp, t.next_producer_id) == (
        4, 3, 1, -1)
    done(m, t)
    c = m.prepare_complete(60)
    assert (c.state, c.producer_id, c.producer_epoch, c.topic_partitions) == (
        S.COMPLETE_COMMIT, 7, 4, frozenset())
    done(m, c)


def test_end_at_version_2_bumps_the_epoch():
    m = meta(state=S.ONGOING, epoch=4, topic_partitions=frozenset({TP}), client_transaction_version=TV2)
    t = m.prepare_abort_or_commit(S.PREPARE_ABORT, TV2, 50, no_id)
    assert (t.producer_epoch, t.last_producer_epoch, t.next_producer_id) == (5, 4, -1)
    done(m, t)
    c = m.prepare_complete(60)
    assert (c.producer_id, c.producer_epoch, c.last_producer_epoch) == (7, 5, 4)


def test_end_at_version_2_on_an_exhausted_epoch_takes_the_next_producer_id_at_complete():
    m = meta(state=S.ONGOING, epoch=EPOCH_MAX - 1, topic_partitions=frozenset({TP}),
             client_transaction_version=TV2)
    t = m.prepare_abort_or_commit(S.PREPARE_COMMIT, TV2, 50, ids(5000))
    assert (t.producer_id, t.producer_epoch, t.last_producer_epoch, t.next_producer_id) == (
        7, EPOCH_MAX, EPOCH_MAX - 1, 5000)
    done(m, t)
    c = m.prepare_complete(60)
    assert (c.producer_id, c.prev_producer_id, c.producer_epoch) == (5000, 7, 0)
    assert (c.last_producer_epoch, c.next_producer_id) == (EPOCH_MAX - 1, -1)
    done(m, c)
    assert (m.producer_id, m.producer_epoch, m.state) == (5000, 0, S.COMPLETE_COMMIT)


def test_abort_with_no_transaction_open_only_at_version_2():
    m = meta(state=S.COMPLETE_COMMIT, epoch=2)
    before = m.snapshot()
    with pytest.raises(IllegalTransactionTransition) as e:
        m.prepare_abort_or_commit(S.PREPARE_ABORT, TV0, 50, no_id)
    assert e.value.code == E.INVALID_TXN_STATE
    with pytest.raises(IllegalTransactionTransition):
        m.prepare_abort_or_commit(S.PREPARE_COMMIT, TV2, 50, no_id)
    assert m.snapshot() == before and m.pending_state is None
    t = m.prepare_abort_or_commit(S.PREPARE_ABORT, TV2, 50, no_id)
    assert (t.producer_epoch, t.txn_start_timestamp) == (3, 50)
    done(m, t)
    done(m, m.prepare_complete(60))
    assert m.state is S.COMPLETE_ABORT


def test_dead_is_prepared_but_never_completed():
    m = meta(state=S.COMPLETE_ABORT, epoch=2, topic_partitions=frozenset())
    t = m.prepare_dead()
    assert t.state is S.DEAD
    with pytest.raises(IllegalTransactionTransition):
        m.complete_transition_to(t)
    assert m.state is S.COMPLETE_ABORT and m.pending_state is S.DEAD
    m = meta(state=S.ONGOING, topic_partitions=frozenset({TP}))
    with pytest.raises(IllegalTransactionTransition):
        m.prepare_dead()


def test_completion_must_match_the_prepared_move():
    m = meta(epoch=1)
    with pytest.raises(IllegalTransactionTransition):
        m.complete_transition_to(m.snapshot())  # nothing pending
    t = m.prepare_add_partitions([TP], 5, TV0)
    other = TransactionMetadata("tx", producer_id=7, txn_timeout_ms=30000, producer_epoch=1).prepare_dead()
    with pytest.raises(IllegalTransactionTransition):
        m.complete_transition_to(other)
    with pytest.raises(IllegalTransactionTransition):  # epoch differs from what was prepared
        m.complete_transition_to(dataclasses.replace(t, producer_epoch=9))
    assert m.pending_state is S.ONGOING and m.state is S.EMPTY
    done(m, t)


def test_prepare_transition_to_validates():
    m = meta(epoch=1)
    with pytest.raises(IllegalTransactionTransition):
        m.prepare_transition_to(S.COMPLETE_COMMIT)
    with pytest.raises(IllegalTransactionTransition):
        m.prepare_transition_to(S.ONGOING, producer_id=-1)
    with pytest.raises(IllegalTransactionTransition):
        m.prepare_transition_to(S.ONGOING, producer_epoch=EPOCH_MAX + 1)
    with pytest.raises(TypeError):
        m.prepare_transition_to(S.ONGOING, bogus=1)
    assert m.pending_state is None
    t = m.prepare_transition_to(S.ONGOING, topic_partitions=frozenset({TP}), txn_start_timestamp=3)
    assert t.prev_producer_id == 7
