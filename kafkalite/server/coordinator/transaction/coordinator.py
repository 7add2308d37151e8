"""Kafka's TransactionCoordinator: the transactional ids whose ``__transaction_state`` partition
this broker leads, and the requests about them (InitProducerId with a transactional id,
AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, their v4+ verification, DescribeTransactions,
ListTransactions), answered through callbacks: a handler thread never waits.

A request checks and prepares its move under the state manager's lock, writes it to
``__transaction_state`` (state_manager), and is answered once the write is committed. Once
PrepareCommit/PrepareAbort is written, the markers go to every partition of the transaction
(``markers``, the TransactionMarkerChannelManager), and once every partition has its marker,
CompleteCommit/CompleteAbort is written (prepared before the markers go, as Kafka does, so that
every request meanwhile answers CONCURRENT_TRANSACTIONS). EndTxn is answered right after the
markers are handed over: those of partitions this broker leads are written in-process at once,
so with no follower to wait for the transaction is complete when its producer hears of it.

Two timers (the broker's scheduler): transactions Ongoing past their timeout are fenced (epoch+1)
and aborted (``abort_timed_out_transactions``); ids idle past transactional.id.expiration.ms get a
tombstone (``expire_transactional_ids``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from kafkalite.common.errors import ApiError
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.records.batch import NO_PRODUCER_EPOCH, NO_PRODUCER_ID

from .errors import TransactionStateError
from .metadata import EPOCH_MAX, ProducerIdAndEpoch, TransactionMetadata, TxnTransitMetadata
from .settings import TransactionConfig
from .state import TransactionState
from .state_manager import KeyValue, ListedTransaction, TransactionStateManager
from .versions import TransactionVersion

log = logging.getLogger("kafkalite.server.coordinator.transaction")

S = TransactionState
PREPARED = (S.PREPARE_COMMIT, S.PREPARE_ABORT)
TopicPartition = tuple[str, int]
InitCallback = Callable[[int, int, int], None]  # (error, producer id, epoch)
EndCallback = Callable[[int, int, int], None]  # (error, producer id, epoch): EndTxn v5 answers them


class MarkerSender(Protocol):
    """The TransactionMarkerChannelManager as the coordinator sees it."""

    def add_markers(self, request: MarkerRequest) -> None: ...

    def remove_for_partition(self, index: int) -> None: ...

    def retry_later(self, fn: Callable[[], None]) -> None: ...


@dataclass
class MarkerRequest:
    """The markers of one transaction: ``on_written()`` once every partition acknowledged
    (never, if the transaction's partition moved or a marker was fenced)."""

    transactional_id: str
    txn_partition: int  # of __transaction_state
    coordinator_epoch: int
    commit: bool
    producer_id: int
    producer_epoch: int
    partitions: frozenset[TopicPartition]
    on_written: Callable[[], None] = field(repr=False, default=lambda: None)


@dataclass(frozen=True)
class DescribedTransaction:
    error: int
    transactional_id: str
    state: str = ""
    timeout_ms: int = 0
    start_time_ms: int = -1
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH
    partitions: dict[str, list[int]] = field(default_factory=dict)


class TransactionCoordinator:
    def __init__(self, node_id: int, config: TransactionConfig, state: TransactionStateManager,
                 generate_producer_id: Callable[[], int], markers: MarkerSender) -> None:
        """``generate_producer_id``: the broker's ProducerIdManager.generate (ApiError
        COORDINATOR_LOAD_IN_PROGRESS while it has no block)."""
        self.node_id = node_id
        self.config = config
        self.state = state
        self.generate_producer_id = generate_producer_id
        self.markers = markers
        self.active = True

    @property
    def lock(self) -> Any:  # the state manager's RLock
        return self.state.lock

    def partition_for(self, transactional_id: str) -> int:
        return self.state.partition_for(transactional_id)

    def owns(self, transactional_id: str) -> int:
        """NONE if this broker coordinates the id now, else COORDINATOR_LOAD_IN_PROGRESS or
        NOT_COORDINATOR."""
        try:
            self.state.get(transactional_id)
        except ApiError as e:
            return e.code
        return E.NONE

    def shutdown(self) -> None:
        self.active = False

    # --- leadership of __transaction_state ------------------------------------------------------

    def on_election(self, index: int, coordinator_epoch: int) -> None:
        self.markers.remove_for_partition(index)
        self.state.begin_loading(index, coordinator_epoch)

    def load(self, index: int, coordinator_epoch: int, records: Iterable[KeyValue]) -> None:
        """After ``on_election``: read the partition; the transactions found preparing their end get
        their markers sent again."""
        preparing = self.state.load(index, coordinator_epoch, records)
        requests = []
        with self.lock:
            for metadata in preparing or ():
                if not metadata.pending_transition_in_progress:
                    requests.append(self._prepare_markers(metadata, coordinator_epoch)[0])
        for request in requests:
            self._send_markers(request)

    def on_resignation(self, index: int) -> None:
        self.state.unload(index)
        self.markers.remove_for_partition(index)

    # --- InitProducerId -------------------------------------------------------------------------

    def handle_init_producer_id(self, transactional_id: str | None, txn_timeout_ms: int,
                                expected: ProducerIdAndEpoch | None, respond: InitCallback) -> None:
        if transactional_id is None:
            try:
                respond(E.NONE, self.generate_producer_id(), 0)
            except ApiError as e:
                respond(e.code, NO_PRODUCER_ID, NO_PRODUCER_EPOCH)
            return

        def fail(error: int) -> None:
            respond(error, NO_PRODUCER_ID, NO_PRODUCER_EPOCH)

        if transactional_id == "":
            return fail(E.INVALID_REQUEST)
        if not self.config.valid_timeout(txn_timeout_ms):
            return fail(E.INVALID_TRANSACTION_TIMEOUT)
        now = self.state.now_ms()
        with self.lock:
            try:
                coordinator_epoch, metadata = self.state.get(transactional_id)
                if metadata is None:
                    metadata = TransactionMetadata(transactional_id, self.generate_producer_id(),
                                                   txn_timeout_ms, txn_last_update_timestamp=now)
                    coordinator_epoch, metadata = self.state.put_if_absent(metadata)
                transit = metadata.prepare_incr_producer_epoch(txn_timeout_ms, now, self.generate_producer_id,
                                                               expected)
            except ApiError as e:  # a refusal of the state, or no producer id to give yet
                return fail(e.code)
            abort: TxnTransitMetadata | int | None = None
            if transit.state is S.PREPARE_EPOCH_FENCE:
                # The open transaction is aborted first; the client retries (and bumps again).
                abort = self._prepare_fenced_abort(metadata, transit)
                if isinstance(abort, int):
                    return fail(abort)
        if isinstance(abort, TxnTransitMetadata):
            self._write_end(transactional_id, coordinator_epoch, metadata, abort,
                            lambda error, _pid, _epoch: fail(error or E.CONCURRENT_TRANSACTIONS))
            return

        def written(error: int) -> None:
            if error == E.NONE:
                log.info("Initialized transactional id %s with producer id %d and epoch %d", transactional_id,
                         transit.producer_id, transit.producer_epoch)
                respond(E.NONE, transit.producer_id, transit.producer_epoch)
            else:
                fail(error)

        self.state.append(transactional_id, coordinator_epoch, metadata, transit, written)

    # --- AddPartitionsToTxn / AddOffsetsToTxn ---------------------------------------------------

    def handle_add_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                              partitions: Iterable[TopicPartition], respond: Callable[[int], None],
                              client_version: TransactionVersion = TransactionVersion.TV_0) -> None:
        wanted = frozenset(partitions)
        if not transactional_id:
            return respond(E.INVALID_REQUEST)
        with self.lock:
            try:
                coordinator_epoch, metadata = self.state.get(transactional_id)
            except ApiError as e:
                return respond(e.code)
            if metadata is None or metadata.producer_id != producer_id:
                return respond(E.INVALID_PRODUCER_ID_MAPPING)
            if metadata.producer_epoch != producer_epoch:
                return respond(E.PRODUCER_FENCED)
            if metadata.pending_transition_in_progress or metadata.state in PREPARED:
                return respond(E.CONCURRENT_TRANSACTIONS)
            if metadata.state is S.ONGOING and wanted <= metadata.topic_partitions:
                return respond(E.NONE)
            try:
                transit = metadata.prepare_add_partitions(wanted, self.state.now_ms(), client_version)
            except TransactionStateError as e:
                return respond(e.code)
        self.state.append(transactional_id, coordinator_epoch, metadata, transit, respond)

    def handle_verify_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                                 partitions: Iterable[TopicPartition],
                                 respond: Callable[[dict[TopicPartition, int]], None]) -> None:
        """AddPartitionsToTxn v4+ with VerifyOnly (KIP-890 part 1): each partition NONE if it is in
        the transaction, else TRANSACTION_ABORTABLE; the pending move is not looked at."""
        wanted = list(partitions)

        def every(error: int) -> None:
            respond({tp: error for tp in wanted})

        if not transactional_id:
            return every(E.INVALID_REQUEST)
        with self.lock:
            try:
                _, metadata = self.state.get(transactional_id)
            except ApiError as e:
                return every(e.code)
            if metadata is None or metadata.producer_id != producer_id:
                return every(E.INVALID_PRODUCER_ID_MAPPING)
            if metadata.producer_epoch != producer_epoch:
                return every(E.PRODUCER_FENCED)
            if metadata.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
                return every(E.CONCURRENT_TRANSACTIONS)
            added = metadata.topic_partitions
            result = {tp: E.NONE if tp in added else E.TRANSACTION_ABORTABLE for tp in wanted}
        respond(result)

    # --- EndTxn -------------------------------------------------------------------------------

    def handle_end_txn(self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool,
                       client_version: TransactionVersion, respond: EndCallback) -> None:
        """``client_version``: TV_2 for an EndTxn v5+ (the epoch is bumped and answered), else TV_0."""
        def fail(error: int) -> None:
            respond(error, NO_PRODUCER_ID, NO_PRODUCER_EPOCH)

        if not transactional_id:
            return fail(E.INVALID_REQUEST)
        with self.lock:
            try:
                coordinator_epoch, metadata = self.state.get(transactional_id)
            except ApiError as e:
                return fail(e.code)
            if metadata is None:
                return fail(E.INVALID_PRODUCER_ID_MAPPING)
            if client_version.supports_epoch_bump:
                outcome = self._check_end_v2(metadata, producer_id, producer_epoch, commit)
            else:
                outcome = self._check_end_v1(metadata, producer_id, producer_epoch, commit)
            if isinstance(outcome, int):
                if outcome == E.NONE:  # a retry of an end already done
                    return respond(E.NONE, metadata.producer_id, metadata.producer_epoch)
                return fail(outcome)
            target = outcome
            try:
                transit = metadata.prepare_abort_or_commit(target, client_version, self.state.now_ms(),
                                                           self.generate_producer_id)
            except ApiError as e:
                return fail(e.code)
        self._write_end(transactional_id, coordinator_epoch, metadata, transit, respond)

    def _check_end_v1(self, metadata: TransactionMetadata, producer_id: int, producer_epoch: int,
                      commit: bool) -> int | TransactionState:
        """Kafka's endTransactionWithTV1 before the write: an error, NONE (a retry), or the target."""
        if metadata.producer_id != producer_id:
            return E.INVALID_PRODUCER_ID_MAPPING
        if producer_epoch != metadata.producer_epoch:
            return E.PRODUCER_FENCED
        if metadata.pending_transition_in_progress:
            return E.CONCURRENT_TRANSACTIONS
        return self._by_state(metadata.state, commit, retry=True)

    def _check_end_v2(self, metadata: TransactionMetadata, producer_id: int, producer_epoch: int,
                      commit: bool) -> int | TransactionState:
        """Kafka's endTransaction at transaction version 2: a retry is told apart by the epoch
        (the end bumped it) or by the producer id (the bump rotated it)."""
        retry_on_overflow = (metadata.prev_producer_id == producer_id and producer_epoch == EPOCH_MAX - 1
                             and metadata.producer_epoch == 0)
        retry_on_bump = metadata.producer_epoch == producer_epoch + 1
        if metadata.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            valid_epoch = retry_on_bump
        elif metadata.state in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
            valid_epoch = retry_on_bump or retry_on_overflow or producer_epoch == metadata.producer_epoch
        else:
            valid_epoch = producer_epoch == metadata.producer_epoch
        if metadata.producer_id != producer_id and not retry_on_overflow:
            return E.INVALID_PRODUCER_ID_MAPPING
        if not valid_epoch:
            return E.PRODUCER_FENCED
        if metadata.pending_transition_in_progress:
            return E.CONCURRENT_TRANSACTIONS
        retry = retry_on_bump or retry_on_overflow
        state = metadata.state
        if state is S.EMPTY:
            return S.PREPARE_ABORT if not commit else E.INVALID_TXN_STATE
        if state is S.COMPLETE_COMMIT and not commit and not retry:
            return S.PREPARE_ABORT
        if state is S.COMPLETE_ABORT and not commit and not retry:
            return S.PREPARE_ABORT
        return self._by_state(state, commit, retry)

    @staticmethod
    def _by_state(state: TransactionState, commit: bool, retry: bool) -> int | TransactionState:
        if state is S.ONGOING:
            return S.PREPARE_COMMIT if commit else S.PREPARE_ABORT
        if state is S.COMPLETE_COMMIT:
            return E.NONE if commit and retry else E.INVALID_TXN_STATE
        if state is S.COMPLETE_ABORT:
            return E.NONE if not commit and retry else E.INVALID_TXN_STATE
        if state is S.PREPARE_COMMIT:
            return E.CONCURRENT_TRANSACTIONS if commit else E.INVALID_TXN_STATE
        if state is S.PREPARE_ABORT:
            return E.CONCURRENT_TRANSACTIONS if not commit else E.INVALID_TXN_STATE
        return E.INVALID_TXN_STATE  # Empty (at version 0/1), Dead, PrepareEpochFence

    def _write_end(self, transactional_id: str, coordinator_epoch: int, metadata: TransactionMetadata,
                   transit: TxnTransitMetadata, respond: EndCallback) -> None:
        """Write PrepareCommit/PrepareAbort; once written, answer and send the markers."""
        target = transit.state

        def written(error: int) -> None:
            if error != E.NONE:
                log.info("Ending the transaction of %s failed: %s", transactional_id, E.for_code(error).name)
                respond(error, NO_PRODUCER_ID, NO_PRODUCER_EPOCH)
                return
            markers = None
            with self.lock:
                try:
                    epoch_now, current = self.state.get(transactional_id)
                except ApiError:
                    epoch_now, current = -1, None
                if epoch_now != coordinator_epoch or current is not metadata:
                    outcome = E.NOT_COORDINATOR
                elif metadata.pending_transition_in_progress:
                    outcome = E.CONCURRENT_TRANSACTIONS
                elif metadata.state is not target:
                    outcome = E.INVALID_TXN_STATE
                else:
                    outcome = E.NONE
                    markers = self._prepare_markers(metadata, coordinator_epoch)
            if markers is None:
                respond(outcome, NO_PRODUCER_ID, NO_PRODUCER_EPOCH)
                return
            request, complete = markers
            # The markers first: those of partitions this broker leads are written at once (and,
            # if every one is and needs no follower, Complete* too), so that the producer's next
            # transaction does not find this one still completing (CONCURRENT_TRANSACTIONS, and
            # its client's backoff). What is left to do (markers sent elsewhere, followers to
            # wait for) goes on after the answer, as Kafka's.
            self._send_markers(request)
            # EndTxn v5 is told the producer id and epoch to go on with: after an epoch overflow,
            # the next producer id at epoch 0, taken at Complete.
            if complete.producer_id != request.producer_id:
                respond(E.NONE, complete.producer_id, complete.producer_epoch)
            else:
                respond(E.NONE, request.producer_id, request.producer_epoch)

        self.state.append(transactional_id, coordinator_epoch, metadata, transit, written)

    def _prepare_fenced_abort(self, metadata: TransactionMetadata, fence: TxnTransitMetadata
                              ) -> TxnTransitMetadata | int:
        """The coordinator's own abort of a fenced Ongoing transaction (InitProducerId, timeout),
        prepared under the lock right after ``fence``; an error code if it cannot be."""
        try:
            return metadata.prepare_abort_after_fence(fence, metadata.client_transaction_version,
                                                      self.state.now_ms())
        except ApiError as e:
            metadata.fail_transition(fence)
            return e.code

    # --- markers, then Complete* ----------------------------------------------------------------

    def _prepare_markers(self, metadata: TransactionMetadata, coordinator_epoch: int
                         ) -> tuple[MarkerRequest, TxnTransitMetadata]:
        """Under the lock, with ``metadata`` in PrepareCommit/PrepareAbort: its Complete move
        (pending from now on) and the markers to send before it is written."""
        txn_id = metadata.transactional_id
        complete = metadata.prepare_complete(self.state.now_ms())
        request = MarkerRequest(
            txn_id, self.partition_for(txn_id), coordinator_epoch, metadata.state is S.PREPARE_COMMIT,
            metadata.producer_id, metadata.producer_epoch, metadata.topic_partitions,
            on_written=lambda: self._write_complete(txn_id, coordinator_epoch, metadata, complete))
        return request, complete

    def _send_markers(self, request: MarkerRequest) -> None:
        """Outside the lock."""
        if not request.partitions:  # an abort with nothing to abort (version 2)
            request.on_written()
        else:
            self.markers.add_markers(request)

    def _write_complete(self, transactional_id: str, coordinator_epoch: int, metadata: TransactionMetadata,
                        complete: TxnTransitMetadata) -> None:
        """Every marker is written: CompleteCommit/CompleteAbort, retried while the partition
        cannot take it (COORDINATOR_NOT_AVAILABLE), given up once it changed hands."""
        with self.lock:
            try:
                epoch_now, current = self.state.get(transactional_id)
            except ApiError:
                return
            if epoch_now != coordinator_epoch or current is not metadata \
                    or metadata.pending_state is not complete.state:
                return

        def written(error: int) -> None:
            if error == E.COORDINATOR_NOT_AVAILABLE:
                self.markers.retry_later(lambda: self._write_complete(transactional_id, coordinator_epoch,
                                                                      metadata, complete))
            elif error != E.NONE:
                log.warning("Completing the transaction of %s failed: %s", transactional_id,
                            E.for_code(error).name)

        self.state.append(transactional_id, coordinator_epoch, metadata, complete, written,
                          retry_on=frozenset({E.COORDINATOR_NOT_AVAILABLE}))

    # --- timers -------------------------------------------------------------------------------

    def abort_timed_out_transactions(self) -> int:
        """Fence and abort every Ongoing transaction past its timeout; the number started."""
        started = 0
        for t in self.state.timed_out_transactions():
            with self.lock:
                try:
                    coordinator_epoch, metadata = self.state.get(t.transactional_id)
                except ApiError:
                    continue
                if metadata is None or (metadata.producer_id, metadata.producer_epoch) != (
                        t.producer_id, t.producer_epoch) or metadata.pending_transition_in_progress:
                    continue
                try:
                    fence = metadata.prepare_fence_producer_epoch()
                except ApiError:
                    continue
                abort = self._prepare_fenced_abort(metadata, fence)
                if isinstance(abort, int):
                    continue
            log.info("Aborting the transaction of %s (producer id %d): it timed out", t.transactional_id,
                     t.producer_id)
            started += 1
            self._write_end(t.transactional_id, coordinator_epoch, metadata, abort,
                            self._on_timeout_abort(t.transactional_id))
        return started

    @staticmethod
    def _on_timeout_abort(transactional_id: str) -> EndCallback:
        def done(error: int, _producer_id: int, _epoch: int) -> None:
            TransactionCoordinator._aborted(transactional_id, error)
        return done

    @staticmethod
    def _aborted(transactional_id: str, error: int) -> None:
        if error not in (E.NONE, E.INVALID_PRODUCER_ID_MAPPING, E.PRODUCER_FENCED, E.CONCURRENT_TRANSACTIONS):
            log.warning("Rollback of the timed-out transaction of %s failed: %s", transactional_id,
                        E.for_code(error).name)

    def expire_transactional_ids(self) -> int:
        return self.state.expire_transactional_ids()

    # --- DescribeTransactions / ListTransactions ------------------------------------------------

    def describe(self, transactional_ids: Iterable[str]) -> list[DescribedTransaction]:
        out = []
        for txn_id in transactional_ids:
            if not self.active:
                out.append(DescribedTransaction(E.COORDINATOR_NOT_AVAILABLE, txn_id))
                continue
            if not txn_id:
                out.append(DescribedTransaction(E.INVALID_REQUEST, txn_id))
                continue
            with self.lock:
                try:
                    _, m = self.state.get(txn_id)
                except ApiError as e:
                    out.append(DescribedTransaction(e.code, txn_id))
                    continue
                if m is None or m.state is S.DEAD:
                    out.append(DescribedTransaction(E.TRANSACTIONAL_ID_NOT_FOUND, txn_id))
                    continue
                partitions: dict[str, list[int]] = {}
                for topic, index in sorted(m.topic_partitions):
                    partitions.setdefault(topic, []).append(index)
                out.append(DescribedTransaction(E.NONE, txn_id, m.state.value, m.txn_timeout_ms,
                                                m.txn_start_timestamp, m.producer_id, m.producer_epoch,
                                                partitions))
        return out

    def list_transactions(self, state_filters: Iterable[str] = (), producer_id_filters: Iterable[int] = (),
                          duration_ms: int = -1, id_pattern: str | None = None
                          ) -> tuple[int, list[str], list[ListedTransaction]]:
        if not self.active:
            return E.COORDINATOR_NOT_AVAILABLE, [], []
        return self.state.list_transactions(state_filters, producer_id_filters, duration_ms, id_pattern)
