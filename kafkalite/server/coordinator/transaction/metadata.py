"""One transactional id's metadata at the coordinator (Kafka's TransactionMetadata) and its moves.

A move is made in two steps, as Kafka makes it. ``prepare_*`` checks the move against the state
table and returns the target as an immutable TxnTransitMetadata, the record written to
``__transaction_state``; the metadata itself only remembers the target state as pending, which
refuses any other move meanwhile (CONCURRENT_TRANSACTIONS). Once the write is committed,
``complete_transition_to(transit)`` applies the target (after Kafka's checks that it is the move
that was prepared); if the write failed, ``fail_transition(transit)`` drops the pending state.
A refused move raises a TransactionStateError and leaves the metadata as it was.

Epochs (KIP-360, KIP-890): an epoch of Short.MAX_VALUE - 1 or more is exhausted, since the
coordinator keeps MAX_VALUE to fence with; InitProducerId on an exhausted epoch rotates to a new
producer id at epoch 0. With transaction version 2 every EndTxn bumps the epoch; if that exhausts
it, the next producer id is chosen at PrepareCommit/PrepareAbort and taken at Complete.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kafkalite.protocol.records.batch import NO_PRODUCER_EPOCH, NO_PRODUCER_ID

from .errors import ConcurrentTransactions, IllegalTransactionTransition, ProducerFenced
from .state import (
    EXPIRABLE_STATES,
    IN_TRANSACTION_STATES,
    VALID_PREVIOUS_STATES,
    TransactionState,
)
from .versions import TransactionVersion

S = TransactionState
EPOCH_MAX = 0x7FFF  # Short.MAX_VALUE: never handed to a client, kept for fencing

TopicPartition = tuple[str, int]


def is_epoch_exhausted(epoch: int) -> bool:
    return epoch >= EPOCH_MAX - 1


@dataclass(frozen=True)
class ProducerIdAndEpoch:
    """What an InitProducerId v3+ says its producer last had (KIP-360)."""

    producer_id: int
    epoch: int


@dataclass(frozen=True)
class TxnTransitMetadata:
    """The target of a prepared move: what is written to the log, and applied once it is."""

    producer_id: int
    prev_producer_id: int
    next_producer_id: int
    producer_epoch: int
    last_producer_epoch: int
    txn_timeout_ms: int
    state: TransactionState
    topic_partitions: frozenset[TopicPartition]
    txn_start_timestamp: int
    txn_last_update_timestamp: int
    client_transaction_version: TransactionVersion


_TRANSIT_FIELDS = frozenset(f.name for f in dataclasses.fields(TxnTransitMetadata)) - {"state",
                                                                                       "prev_producer_id"}


@dataclass
class TransactionMetadata:
    transactional_id: str
    producer_id: int
    txn_timeout_ms: int
    prev_producer_id: int = NO_PRODUCER_ID
    next_producer_id: int = NO_PRODUCER_ID  # KIP-890: taken at Complete when the epoch overflowed
    producer_epoch: int = NO_PRODUCER_EPOCH
    last_producer_epoch: int = NO_PRODUCER_EPOCH  # the epoch before the last bump (KIP-360 retries)
    state: TransactionState = S.EMPTY
    topic_partitions: frozenset[TopicPartition] = frozenset()
    txn_start_timestamp: int = -1
    txn_last_update_timestamp: int = -1
    client_transaction_version: TransactionVersion = TransactionVersion.TV_0
    pending_state: TransactionState | None = None
    # A fence's abort was not written: the epoch was bumped in memory but never handed out, so the
    # next fence does not bump it again (Kafka's hasFailedEpochFence).
    has_failed_epoch_fence: bool = False
    _fencing: bool = field(default=False, repr=False, compare=False)

    # --- reading ---------------------------------------------------------------------------------

    @property
    def pending_transition_in_progress(self) -> bool:
        return self.pending_state is not None

    @property
    def is_producer_epoch_exhausted(self) -> bool:
        return is_epoch_exhausted(self.producer_epoch)

    def snapshot(self) -> TxnTransitMetadata:
        """The metadata as it is, in the form a transit has (Kafka's prepareNoTransit)."""
        return TxnTransitMetadata(
            self.producer_id, self.prev_producer_id, self.next_producer_id, self.producer_epoch,
            self.last_producer_epoch, self.txn_timeout_ms, self.state, self.topic_partitions,
            self.txn_start_timestamp, self.txn_last_update_timestamp, self.client_transaction_version)

    # --- the one gate ------------------------------------------------------------------------

    def prepare_transition_to(self, state: TransactionState, **changes: Any) -> TxnTransitMetadata:
        """The move to ``state`` with ``changes`` (TxnTransitMetadata fields) over the current
        values; the previous producer id is always the current one, as Kafka writes it."""
        self._refuse_if_pending(state)
        unknown = set(changes) - _TRANSIT_FIELDS
        if unknown:
            raise TypeError(f"not fields of a transit: {sorted(unknown)}")
        transit = dataclasses.replace(self.snapshot(), state=state, prev_producer_id=self.producer_id,
                                      **changes)
        if transit.producer_id < 0:
            raise IllegalTransactionTransition(f"illegal new producer id {transit.producer_id}")
        # The epoch is -1 until the first InitProducerId, and may stay so until Dead.
        if not 0 <= transit.producer_epoch <= EPOCH_MAX and not (
                state is S.DEAD and transit.producer_epoch == NO_PRODUCER_EPOCH):
            raise IllegalTransactionTransition(f"illegal new producer epoch {transit.producer_epoch}")
        if self.state not in VALID_PREVIOUS_STATES[state]:
            raise IllegalTransactionTransition(
                f"transactional id {self.transactional_id} cannot move to {state.value} from "
                f"{self.state.value} (only from {sorted(s.value for s in VALID_PREVIOUS_STATES[state])})")
        self.pending_state = state
        return transit

    def _refuse_if_pending(self, target: TransactionState) -> None:
        if self.pending_state is not None:
            raise ConcurrentTransactions(
                f"transactional id {self.transactional_id} is moving to {self.pending_state.value}; "
                f"cannot prepare {target.value}")

    # --- the moves ---------------------------------------------------------------------------

    def prepare_incr_producer_epoch(self, txn_timeout_ms: int, now_ms: int,
                                    new_producer_id: Callable[[], int],
                                    expected: ProducerIdAndEpoch | None = None) -> TxnTransitMetadata:
        """InitProducerId (Kafka's prepareInitProducerIdTransit with the metadata's
        prepareIncrementProducerEpoch and prepareProducerIdRotation).

        No transaction open: bump the epoch (Empty), or take ``new_producer_id()`` at epoch 0
        when the epoch is exhausted. A retry with the epoch before the bump gets the current one
        unchanged. Ongoing: the open transaction's producer is fenced first (the returned
        transit is PrepareEpochFence; the caller aborts with ``prepare_abort_after_fence`` and
        answers CONCURRENT_TRANSACTIONS, so the client retries).

        Where Kafka fails with an IllegalStateException (an exhausted epoch with a retried or a
        stale expected epoch), kafkalite answers as for an epoch that is not exhausted: the retry
        gets the current epoch, a stale epoch is fenced.
        """
        self._refuse_if_pending(S.EMPTY)
        if expected is not None and not (
                self.producer_epoch == NO_PRODUCER_EPOCH  # just created: recovering from UNKNOWN_PRODUCER_ID
                or expected.producer_id == self.producer_id
                # a retry of a rotation whose answer was lost
                or (expected.producer_id == self.prev_producer_id and is_epoch_exhausted(expected.epoch))):
            raise ProducerFenced(f"producer id {expected.producer_id} is not the current one of "
                                 f"transactional id {self.transactional_id}")
        if self.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            raise ConcurrentTransactions(f"transactional id {self.transactional_id} is completing "
                                         f"its transaction ({self.state.value})")
        if self.state is S.ONGOING:
            return self.prepare_fence_producer_epoch()
        if self.state not in EXPIRABLE_STATES:
            raise IllegalTransactionTransition(
                f"InitProducerId on transactional id {self.transactional_id} in state {self.state.value}")

        if expected is None:
            epoch, last_epoch = self.producer_epoch + 1, NO_PRODUCER_EPOCH
        elif self.producer_epoch == NO_PRODUCER_EPOCH or expected.epoch == self.producer_epoch:
            epoch, last_epoch = self.producer_epoch + 1, self.producer_epoch
        elif expected.epoch == self.last_producer_epoch:
            # A retry of a bump that succeeded: no other producer came since (that would have
            # cleared the last epoch), so the current epoch is this producer's.
            return self.prepare_transition_to(
                S.EMPTY, txn_timeout_ms=txn_timeout_ms, topic_partitions=frozenset(), txn_start_timestamp=-1,
                txn_last_update_timestamp=now_ms)
        else:
            raise ProducerFenced(f"epoch {expected.epoch} is neither the current epoch {self.producer_epoch} "
                                 f"nor the last one {self.last_producer_epoch} of transactional id "
                                 f"{self.transactional_id}")
        changes: dict[str, Any] = dict(txn_timeout_ms=txn_timeout_ms, topic_partitions=frozenset(),
                                       txn_start_timestamp=-1, txn_last_update_timestamp=now_ms)
        if self.is_producer_epoch_exhausted:
            last_epoch = self.producer_epoch if expected is not None else NO_PRODUCER_EPOCH
            # Checked before asking for an id, so that a refused move spends none.
            self._check_table(S.EMPTY)
            return self.prepare_transition_to(S.EMPTY, producer_id=new_producer_id(), producer_epoch=0,
                                              last_producer_epoch=last_epoch, **changes)
        return self.prepare_transition_to(S.EMPTY, producer_epoch=epoch, last_producer_epoch=last_epoch,
                                          **changes)

    def prepare_fence_producer_epoch(self) -> TxnTransitMetadata:
        """The bump that fences the producer of an Ongoing transaction before the coordinator
        aborts it (InitProducerId, or the transaction timed out). Not bumped again after a fence
        whose abort was not written, nor past Short.MAX_VALUE."""
        fenced = self.has_failed_epoch_fence or self.producer_epoch >= EPOCH_MAX
        epoch = self.producer_epoch if fenced else self.producer_epoch + 1
        return self.prepare_transition_to(S.PREPARE_EPOCH_FENCE, producer_epoch=epoch)

    def prepare_abort_after_fence(self, fence: TxnTransitMetadata, server_version: TransactionVersion,
                                  now_ms: int) -> TxnTransitMetadata:
        """The coordinator's own abort of a fenced transaction (Kafka's endTransaction with
        isFromClient false): the fence is never written; its epoch is taken now, with no last
        epoch, and the PrepareAbort written carries it (bumped once more at transaction version
        2, which is the server's here)."""
        if self.pending_state is not S.PREPARE_EPOCH_FENCE or fence.state is not S.PREPARE_EPOCH_FENCE \
                or fence.producer_id != self.producer_id:
            raise IllegalTransactionTransition(
                f"transactional id {self.transactional_id} has no fence of producer {fence.producer_id} "
                f"pending (pending: {self.pending_state})")
        before = (self.pending_state, self.producer_epoch, self.last_producer_epoch)
        self.pending_state = None
        self.producer_epoch, self.last_producer_epoch = fence.producer_epoch, NO_PRODUCER_EPOCH
        try:
            transit = self._prepare_end(S.PREPARE_ABORT, server_version, now_ms, None)
        except Exception:
            self.pending_state, self.producer_epoch, self.last_producer_epoch = before
            raise
        self._fencing = True
        return transit

    def prepare_add_partitions(self, partitions: Iterable[TopicPartition], now_ms: int,
                               client_version: TransactionVersion) -> TxnTransitMetadata:
        """AddPartitionsToTxn / AddOffsetsToTxn: Ongoing with these partitions too; a transaction
        starts now unless one is open."""
        start = now_ms if self.state in EXPIRABLE_STATES else self.txn_start_timestamp
        return self.prepare_transition_to(
            S.ONGOING, topic_partitions=self.topic_partitions | frozenset(partitions),
            txn_start_timestamp=start, txn_last_update_timestamp=now_ms,
            client_transaction_version=client_version)

    def prepare_abort_or_commit(self, target: TransactionState, client_version: TransactionVersion,
                                now_ms: int, new_producer_id: Callable[[], int]) -> TxnTransitMetadata:
        """EndTxn: PrepareCommit or PrepareAbort. At transaction version 2 the epoch is bumped
        (the last epoch keeps the old one); if the epoch is exhausted, ``new_producer_id()``
        becomes the next producer id, taken at Complete. Only a version 2 client may abort with
        no transaction open (Kafka's coordinator answers INVALID_TXN_STATE to the others)."""
        return self._prepare_end(target, client_version, now_ms, new_producer_id)

    def _prepare_end(self, target: TransactionState, client_version: TransactionVersion, now_ms: int,
                     new_producer_id: Callable[[], int] | None) -> TxnTransitMetadata:
        if target not in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            raise IllegalTransactionTransition(f"EndTxn cannot move to {target.value}")
        self._refuse_if_pending(target)
        empty_abort = target is S.PREPARE_ABORT and client_version.supports_epoch_bump
        if self.state is not S.ONGOING and not empty_abort:
            raise IllegalTransactionTransition(
                f"transactional id {self.transactional_id} has no transaction to end ({self.state.value}, "
                f"{target.value}, transaction version {int(client_version)})")
        self._check_table(target)
        changes: dict[str, Any] = {"next_producer_id": NO_PRODUCER_ID}
        if client_version.supports_epoch_bump:
            # Already at the maximum (a bug, or a fence at the limit): abort without overflowing.
            bump = not (self.producer_epoch >= EPOCH_MAX and target is S.PREPARE_ABORT)
            epoch = self.producer_epoch + (1 if bump else 0)
            if epoch > EPOCH_MAX:
                raise IllegalTransactionTransition(f"illegal new producer epoch {epoch}")
            changes.update(producer_epoch=epoch, last_producer_epoch=self.producer_epoch)
            # The fence's abort takes no new id (Kafka's): the client's retry rotates it.
            if self.is_producer_epoch_exhausted and new_producer_id is not None:
                changes["next_producer_id"] = new_producer_id()
        # An abort with no transaction open has no start time: it starts now.
        start = self.txn_start_timestamp if self.state is S.ONGOING else now_ms
        return self.prepare_transition_to(target, txn_start_timestamp=start, txn_last_update_timestamp=now_ms,
                                          client_transaction_version=client_version, **changes)

    def prepare_complete(self, now_ms: int) -> TxnTransitMetadata:
        """Every marker is written: CompleteCommit or CompleteAbort, with no partitions. After an
        epoch overflow at version 2 the next producer id is taken at epoch 0 (the last epoch stays
        MAX - 1, the last one the client saw)."""
        target = S.COMPLETE_COMMIT if self.state is S.PREPARE_COMMIT else S.COMPLETE_ABORT
        if self.client_transaction_version.supports_epoch_bump and self.next_producer_id != NO_PRODUCER_ID:
            producer_id, epoch = self.next_producer_id, 0
        else:
            producer_id, epoch = self.producer_id, self.producer_epoch
        transit = self.prepare_transition_to(
            target, producer_id=producer_id, producer_epoch=epoch, next_producer_id=NO_PRODUCER_ID,
            topic_partitions=frozenset(), txn_last_update_timestamp=now_ms)
        # The abort of a fence was written: the next fence bumps again.
        self.has_failed_epoch_fence = False
        return transit

    def prepare_dead(self) -> TxnTransitMetadata:
        """The id expired: its tombstone is written, then the metadata is dropped (a Dead move is
        never completed)."""
        return self.prepare_transition_to(S.DEAD, topic_partitions=frozenset())

    def _check_table(self, target: TransactionState) -> None:
        if self.state not in VALID_PREVIOUS_STATES[target]:
            raise IllegalTransactionTransition(f"transactional id {self.transactional_id} cannot move to "
                                               f"{target.value} from {self.state.value}")

    # --- after the log write -------------------------------------------------------------------

    def complete_transition_to(self, transit: TxnTransitMetadata) -> None:
        """Apply ``transit`` once its record is committed; refused (and nothing changed) unless it
        is the move that was prepared, with Kafka's checks of its epoch, partitions and times."""
        to = self.pending_state
        if to is None:
            raise IllegalTransactionTransition(
                f"transactional id {self.transactional_id} completes a move to {transit.state.value} "
                "with none pending")
        if to is not transit.state:
            self._mismatch(transit)
        if to is S.EMPTY:
            if (self.producer_epoch != transit.producer_epoch and not self._valid_epoch_bump(transit)) \
                    or transit.topic_partitions or transit.txn_start_timestamp != -1:
                self._mismatch(transit)
        elif to is S.ONGOING:
            if not self._valid_producer_epoch(transit) or self.txn_timeout_ms != transit.txn_timeout_ms \
                    or not self.topic_partitions <= transit.topic_partitions:
                self._mismatch(transit)
        elif to in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            empty_abort = (to is S.PREPARE_ABORT and transit.client_transaction_version.supports_epoch_bump
                           and self.state in EXPIRABLE_STATES)
            if not self._valid_producer_epoch(transit) or self.topic_partitions != transit.topic_partitions \
                    or self.txn_timeout_ms != transit.txn_timeout_ms \
                    or not (self.txn_start_timestamp == transit.txn_start_timestamp or empty_abort):
                self._mismatch(transit)
        elif to in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
            if not self._valid_producer_epoch(transit) or self.txn_timeout_ms != transit.txn_timeout_ms \
                    or transit.txn_start_timestamp == -1:
                self._mismatch(transit)
        elif to is S.DEAD:
            raise IllegalTransactionTransition(
                f"transactional id {self.transactional_id} completes a move to Dead: an expired id is "
                "dropped once its tombstone is written, not kept as Dead")
        else:  # PrepareEpochFence: never written; its abort replaces it
            self._mismatch(transit)

        self.producer_id = transit.producer_id
        self.prev_producer_id = transit.prev_producer_id
        self.next_producer_id = transit.next_producer_id
        self.producer_epoch = transit.producer_epoch
        self.last_producer_epoch = transit.last_producer_epoch
        self.txn_timeout_ms = transit.txn_timeout_ms
        self.topic_partitions = transit.topic_partitions
        self.txn_start_timestamp = transit.txn_start_timestamp
        self.txn_last_update_timestamp = transit.txn_last_update_timestamp
        self.client_transaction_version = transit.client_transaction_version
        self.state = to
        self.pending_state = None
        self._fencing = False

    def fail_transition(self, transit: TxnTransitMetadata) -> None:
        """The record of ``transit`` was not written: the move is dropped. When it was the abort
        of a fence, the fenced epoch stays (it was never handed out) and is not bumped again."""
        if self.pending_state is None or self.pending_state is not transit.state:
            self._mismatch(transit)
        self.pending_state = None
        if self._fencing:
            self.has_failed_epoch_fence = True
            self._fencing = False

    def _valid_producer_epoch(self, transit: TxnTransitMetadata) -> bool:
        v2 = transit.client_transaction_version.supports_epoch_bump
        if v2 and transit.state in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT) and transit.producer_epoch == 0:
            # The overflow: the producer id changed at Complete.
            return (transit.last_producer_epoch == self.last_producer_epoch
                    and transit.prev_producer_id == self.producer_id)
        if v2 and transit.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            return (transit.last_producer_epoch == self.producer_epoch
                    and transit.producer_id == self.producer_id)
        return transit.producer_epoch == self.producer_epoch and transit.producer_id == self.producer_id

    def _valid_epoch_bump(self, transit: TxnTransitMetadata) -> bool:
        return transit.producer_epoch == self.producer_epoch + 1 or (
            transit.producer_epoch == 0 and transit.producer_id != self.producer_id)

    def _mismatch(self, transit: TxnTransitMetadata) -> None:
        raise IllegalTransactionTransition(
            f"transactional id {self.transactional_id} (state {self.state.value}, pending "
            f"{self.pending_state.value if self.pending_state else None}) cannot complete {transit}")

    @property
    def in_transaction(self) -> bool:
        return self.state in IN_TRANSACTION_STATES
