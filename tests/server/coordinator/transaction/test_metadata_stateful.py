"""TransactionMetadata driven through random api-like steps (InitProducerId, AddPartitionsToTxn,
EndTxn, the markers written, the timeout's fence and abort, expiry, log writes that succeed or
fail), checked against the state table: every state reached is allowed from the one before, a
producer id's epoch never goes back, a completed or failed write leaves nothing pending, and a
refused step raises a typed error and changes nothing."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from kafkalite.server.coordinator.transaction.errors import TransactionStateError
from kafkalite.server.coordinator.transaction.metadata import (
    EPOCH_MAX,
    ProducerIdAndEpoch,
    TransactionMetadata,
    TxnTransitMetadata,
)
from kafkalite.server.coordinator.transaction.state import VALID_PREVIOUS_STATES, TransactionState
from kafkalite.server.coordinator.transaction.versions import TransactionVersion

S = TransactionState
partitions = st.frozensets(st.tuples(st.sampled_from("tu"), st.integers(0, 2)), min_size=1, max_size=3)
versions = st.sampled_from(list(TransactionVersion))


class TransactionMachine(RuleBasedStateMachine):
    m: TransactionMetadata

    @initialize(epoch=st.sampled_from([-1, 0, 5, EPOCH_MAX - 3, EPOCH_MAX - 1]))
    def start(self, epoch: int) -> None:
        self.next_id = 100
        self.now = 0
        self.pending: TxnTransitMetadata | None = None
        self.max_epoch: dict[int, int] = {}
        self.m = TransactionMetadata("tx", producer_id=self.new_id(), txn_timeout_ms=1000,
                                     producer_epoch=epoch)

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def tick(self) -> int:
        self.now += 1
        return self.now

    def view(self) -> tuple[Any, ...]:
        return self.m.snapshot(), self.m.pending_state, self.m.has_failed_epoch_fence

    def attempt(self, step: Callable[[], TxnTransitMetadata]) -> TxnTransitMetadata | None:
        before = self.view()
        try:
            transit = step()
        except TransactionStateError:
            assert self.view() == before, "a refused step changed the metadata"
            return None
        assert transit.state in VALID_PREVIOUS_STATES and self.m.state in VALID_PREVIOUS_STATES[transit.state]
        assert self.m.pending_state is transit.state
        assert transit.producer_epoch >= self.max_epoch.get(transit.producer_id, -1)
        return transit

    def prepared(self, transit: TxnTransitMetadata | None, server: TransactionVersion) -> None:
        if transit is None:
            return
        if transit.state is S.PREPARE_EPOCH_FENCE:
            # The coordinator aborts the fenced transaction at once (never writing the fence).
            abort = self.m.prepare_abort_after_fence(transit, server, self.tick())
            assert abort.state is S.PREPARE_ABORT and abort.producer_epoch >= transit.producer_epoch
            transit = abort
        self.pending = transit

    # --- api-like steps ------------------------------------------------------------------------

    @rule(expected=st.sampled_from(["none", "current", "stale", "other"]), server=versions)
    def init_producer_id(self, expected: str, server: TransactionVersion) -> None:
        m = self.m
        exp = {"none": None, "current": ProducerIdAndEpoch(m.producer_id, m.producer_epoch),
               "stale": ProducerIdAndEpoch(m.producer_id, m.producer_epoch - 2),
               "other": ProducerIdAndEpoch(m.producer_id + 5000, 0)}[expected]
        self.prepared(self.attempt(
            lambda: m.prepare_incr_producer_epoch(1000, self.tick(), self.new_id, exp)), server)

    @rule(parts=partitions, client=versions)
    def add_partitions(self, parts: frozenset[tuple[str, int]], client: TransactionVersion) -> None:
        self.prepared(self.attempt(lambda: self.m.prepare_add_partitions(parts, self.tick(), client)), client)

    @rule(commit=st.booleans(), client=versions)
    def end_txn(self, commit: bool, client: TransactionVersion) -> None:
        target = S.PREPARE_COMMIT if commit else S.PREPARE_ABORT
        self.prepared(self.attempt(
            lambda: self.m.prepare_abort_or_commit(target, client, self.tick(), self.new_id)), client)

    @rule()
    def markers_written(self) -> None:
        self.prepared(self.attempt(lambda: self.m.prepare_complete(self.tick())), TransactionVersion.TV_0)

    @rule(server=versions)
    def timeout_abort(self, server: TransactionVersion) -> None:
        self.prepared(self.attempt(self.m.prepare_fence_producer_epoch), server)

    @rule()
    def expire(self) -> None:
        self.prepared(self.attempt(self.m.prepare_dead), TransactionVersion.TV_0)

    # --- the log write -------------------------------------------------------------------------

    @rule()
    def write_committed(self) -> None:
        transit, self.pending = self.pending, None
        if transit is None:
            return
        if transit.state is S.DEAD:
            # The tombstone is written: the id is dropped; a later InitProducerId starts afresh.
            self.m = TransactionMetadata("tx", producer_id=self.new_id(), txn_timeout_ms=1000)
            return
        before = self.m.state
        self.m.complete_transition_to(transit)
        assert before in VALID_PREVIOUS_STATES[self.m.state]
        assert self.m.state is transit.state and self.m.pending_state is None
        assert self.m.snapshot() == transit
        event(f"{before.value} -> {transit.state.value}")

    @rule()
    def write_failed(self) -> None:
        transit, self.pending = self.pending, None
        if transit is not None:
            self.m.fail_transition(transit)
            assert self.m.pending_state is None

    @rule(state=st.sampled_from(list(S)))
    def wrong_completion(self, state: TransactionState) -> None:
        base = self.pending or self.m.snapshot()
        if self.pending is not None and state is self.pending.state:
            return
        bogus = dataclasses.replace(base, state=state)
        before = self.view()
        try:
            self.m.complete_transition_to(bogus)
        except TransactionStateError:
            assert self.view() == before
        else:
            raise AssertionError(f"completed {bogus} with {before[1]} pending")

    # --- invariants ----------------------------------------------------------------------------

    @invariant()
    def pending_matches(self) -> None:
        if self.pending is None:
            assert self.m.pending_state is None
        else:
            assert self.m.pending_state is self.pending.state

    @invariant()
    def epoch_never_goes_back(self) -> None:
        m = self.m
        assert -1 <= m.producer_epoch <= EPOCH_MAX
        if m.producer_epoch >= 0:
            assert m.producer_epoch >= self.max_epoch.get(m.producer_id, -1)
            self.max_epoch[m.producer_id] = m.producer_epoch

    @invariant()
    def settled_state_is_one_kafka_writes(self) -> None:
        assert self.m.state is not S.PREPARE_EPOCH_FENCE and self.m.state is not S.DEAD
        if self.m.state is S.EMPTY:
            assert not self.m.topic_partitions


TransactionMachine.TestCase.settings = settings(max_examples=300, stateful_step_count=60, deadline=None)
test_transaction_metadata_against_the_table = TransactionMachine.TestCase
