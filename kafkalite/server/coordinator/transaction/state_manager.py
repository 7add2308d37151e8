"""The transaction coordinator's cache of ``__transaction_state`` (Kafka's TransactionStateManager):
per partition of that topic this broker leads, the TransactionMetadata of each transactional id
it holds, loaded from the partition's log when the leadership arrives and dropped when it goes.

A partition is in one of three conditions for a request: owned (its map answers, with the
coordinator epoch, the partition's leader epoch when it was loaded), loading
(COORDINATOR_LOAD_IN_PROGRESS), or neither (NOT_COORDINATOR). Writes go through ``store`` (a
CoordinatorLog of ``__transaction_state`` on a broker, a list in memory in the unit tests); once a
write is answered the move it carries is completed (``complete_transition_to``) or dropped
(``fail_transition``), unless the partition changed hands meanwhile: then the answer is
NOT_COORDINATOR and the metadata (gone with the old cache) is not touched.

One lock (``lock``, reentrant) guards every map and every metadata, shared with the coordinator;
nothing waits while holding it, and ``store`` is never called under it.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

from kafkalite.common.errors import ApiError
from kafkalite.protocol import error_codes as E

from .. import log_store
from . import log_records
from .metadata import TransactionMetadata, TxnTransitMetadata
from .settings import TRANSACTION_VERSION, TransactionConfig
from .state import EXPIRABLE_STATES, TransactionState
from .versions import TransactionVersion

log = logging.getLogger("kafkalite.server.coordinator.transaction")

S = TransactionState
KeyValue = tuple[bytes, bytes | None]


class TxnLogStore(Protocol):
    """Where the records go: ``done(error)`` once committed (acks=all) or failed, with the
    replica manager's error (translated here)."""

    def append(self, index: int, records: list[KeyValue], done: Callable[[int], None]) -> None: ...


def translate_append_error(code: int) -> int:
    """Kafka's appendTransactionToLog: what a client is told of a failed write."""
    return log_store.translate_append_error(code, E.UNKNOWN_SERVER_ERROR)


@dataclass
class _Owned:
    coordinator_epoch: int
    transactions: dict[str, TransactionMetadata] = field(default_factory=dict)


@dataclass(frozen=True)
class TimedOut:
    transactional_id: str
    producer_id: int
    producer_epoch: int


@dataclass(frozen=True)
class ListedTransaction:
    transactional_id: str
    producer_id: int
    state: str


def _now_ms() -> int:
    return int(time.time() * 1000)


class TransactionStateManager:
    def __init__(self, config: TransactionConfig, store: TxnLogStore,
                 version: TransactionVersion = TRANSACTION_VERSION,
                 now_ms: Callable[[], int] = _now_ms) -> None:
        self.config = config
        self.store = store
        self.version = version  # the level records are written at
        self.now_ms = now_ms
        self.lock = threading.RLock()
        self._loading: dict[int, int] = {}  # partition -> coordinator epoch being loaded
        self._owned: dict[int, _Owned] = {}

    # --- where an id lives --------------------------------------------------------------------

    def partition_for(self, transactional_id: str) -> int:
        return log_records.partition_for(transactional_id, self.config.num_partitions)

    @property
    def owned_partitions(self) -> dict[int, int]:
        """{partition: coordinator epoch} of the loaded partitions."""
        with self.lock:
            return {i: o.coordinator_epoch for i, o in self._owned.items()}

    @property
    def loading_partitions(self) -> dict[int, int]:
        with self.lock:
            return dict(self._loading)

    def get(self, transactional_id: str) -> tuple[int, TransactionMetadata | None]:
        """(coordinator epoch, the id's metadata or None); ApiError COORDINATOR_LOAD_IN_PROGRESS
        while its partition loads, NOT_COORDINATOR when it is not this broker's."""
        index = self.partition_for(transactional_id)
        with self.lock:
            if index in self._loading:
                raise ApiError(E.COORDINATOR_LOAD_IN_PROGRESS,
                               f"__transaction_state-{index} is being loaded")
            owned = self._owned.get(index)
            if owned is None:
                raise ApiError(E.NOT_COORDINATOR, f"this broker does not lead __transaction_state-{index}")
            return owned.coordinator_epoch, owned.transactions.get(transactional_id)

    def put_if_absent(self, metadata: TransactionMetadata) -> tuple[int, TransactionMetadata]:
        """Kafka's putTransactionStateIfNotExists (the caller holds ``lock`` since its ``get``)."""
        index = self.partition_for(metadata.transactional_id)
        with self.lock:
            owned = self._owned.get(index)
            if owned is None:
                raise ApiError(E.NOT_COORDINATOR, f"this broker does not lead __transaction_state-{index}")
            current = owned.transactions.setdefault(metadata.transactional_id, metadata)
            return owned.coordinator_epoch, current

    def all_metadata(self) -> list[tuple[int, int, TransactionMetadata]]:
        """(partition, coordinator epoch, metadata) of every id loaded (the caller holds ``lock``
        if it acts on them)."""
        with self.lock:
            return [(i, o.coordinator_epoch, m) for i, o in self._owned.items()
                    for m in o.transactions.values()]

    # --- leadership ---------------------------------------------------------------------------

    def begin_loading(self, index: int, coordinator_epoch: int) -> None:
        """The leadership arrived: requests for the partition answer COORDINATOR_LOAD_IN_PROGRESS
        until ``load``; what was cached for it before is dropped."""
        with self.lock:
            self._owned.pop(index, None)
            self._loading[index] = coordinator_epoch

    def load(self, index: int, coordinator_epoch: int,
             records: Iterable[KeyValue]) -> list[TransactionMetadata] | None:
        """Read the partition's records (the last value of each id wins, a tombstone removes it)
        and own the partition; the metadata found in PrepareCommit/PrepareAbort, whose markers
        must be sent again. None if the load is stale (the partition was unloaded or loaded again
        at another epoch meanwhile)."""
        found: dict[str, TransactionMetadata] = {}
        for key, value in records:
            try:
                record = log_records.read(key, value)
            except Exception as e:  # not a record of this log (a corrupt key, an unknown status)
                log.warning("Skipping a record of __transaction_state-%d: %s", index, e)
                continue
            if isinstance(record, log_records.TxnTombstone):
                found.pop(record.transactional_id, None)
            else:
                found[record.transactional_id] = record.metadata
        with self.lock:
            if self._loading.get(index) != coordinator_epoch:
                return None
            del self._loading[index]
            self._owned[index] = _Owned(coordinator_epoch, found)
            log.info("Loaded %d transactional ids of __transaction_state-%d at coordinator epoch %d",
                     len(found), index, coordinator_epoch)
            return [m for m in found.values() if m.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT)]

    def unload(self, index: int) -> None:
        with self.lock:
            self._loading.pop(index, None)
            if self._owned.pop(index, None) is not None:
                log.info("Unloaded __transaction_state-%d", index)

    # --- writes -------------------------------------------------------------------------------

    def append(self, transactional_id: str, coordinator_epoch: int, metadata: TransactionMetadata,
               transit: TxnTransitMetadata, done: Callable[[int], None],
               retry_on: frozenset[int] = frozenset()) -> None:
        """Write ``transit`` (a tombstone for Dead); then complete or fail the move and call
        ``done(error)`` (outside the lock). An error in ``retry_on`` keeps the move pending for
        the caller to write again (Kafka's retryOnError, for Complete* after the markers)."""
        self.append_many(self.partition_for(transactional_id), coordinator_epoch,
                         [(metadata, transit)], lambda errors: done(errors[0]), retry_on)

    def append_many(self, index: int, coordinator_epoch: int,
                    moves: list[tuple[TransactionMetadata, TxnTransitMetadata]],
                    done: Callable[[list[int]], None], retry_on: frozenset[int] = frozenset()) -> None:
        """Several ids of one partition in one batch (the expiry's tombstones)."""
        records: list[KeyValue] = []
        for metadata, transit in moves:
            value = None if transit.state is S.DEAD else log_records.value_bytes(transit, self.version)
            records.append((log_records.key_bytes(metadata.transactional_id), value))

        def written(raw: int) -> None:
            error = translate_append_error(raw)
            with self.lock:
                errors = [self._after_write(index, coordinator_epoch, m, t, error, retry_on)
                          for m, t in moves]
            done(errors)

        self.store.append(index, records, written)

    def _after_write(self, index: int, coordinator_epoch: int, metadata: TransactionMetadata,
                     transit: TxnTransitMetadata, error: int, retry_on: frozenset[int]) -> int:
        owned = self._owned.get(index)
        if owned is None or owned.coordinator_epoch != coordinator_epoch \
                or owned.transactions.get(metadata.transactional_id) is not metadata:
            # The partition changed hands: whatever was written, this cache is gone.
            return E.NOT_COORDINATOR
        if error == E.NONE:
            if transit.state is S.DEAD:
                if metadata.pending_state is S.DEAD:
                    del owned.transactions[metadata.transactional_id]
                return E.NONE
            try:
                metadata.complete_transition_to(transit)
            except ApiError as e:
                log.error("Transactional id %s: the move written cannot be applied: %s",
                          metadata.transactional_id, e)
                return E.UNKNOWN_SERVER_ERROR
            return E.NONE
        if error in retry_on:
            return error
        if metadata.pending_state is transit.state:
            metadata.fail_transition(transit)
        return error

    # --- the timers' views --------------------------------------------------------------------

    def timed_out_transactions(self) -> list[TimedOut]:
        """Ongoing transactions past their timeout with no move in flight (Kafka's
        timedOutTransactions)."""
        now = self.now_ms()
        with self.lock:
            return [TimedOut(m.transactional_id, m.producer_id, m.producer_epoch)
                    for o in self._owned.values() for m in o.transactions.values()
                    if m.state is S.ONGOING and not m.pending_transition_in_progress
                    and m.txn_start_timestamp + m.txn_timeout_ms < now]

    def expire_transactional_ids(self, done: Callable[[str, int], None] | None = None) -> int:
        """Write a tombstone for every id with no transaction, no move in flight and no update for
        transactional.id.expiration.ms (Kafka's removeExpiredTransactionalIds); the ids are
        dropped once it is written. The number of ids whose tombstone is being written."""
        now = self.now_ms()
        expired: dict[int, tuple[int, list[tuple[TransactionMetadata, TxnTransitMetadata]]]] = {}
        with self.lock:
            for index, owned in self._owned.items():
                moves = []
                for m in owned.transactions.values():
                    idle_since = now - self.config.transactional_id_expiration_ms
                    if m.state in EXPIRABLE_STATES and not m.pending_transition_in_progress \
                            and m.txn_last_update_timestamp <= idle_since:
                        moves.append((m, m.prepare_dead()))
                if moves:
                    expired[index] = (owned.coordinator_epoch, moves)
        for index, (epoch, moves) in expired.items():
            ids = [m.transactional_id for m, _ in moves]

            def written(errors: list[int], ids: list[str] = ids) -> None:
                for txn_id, error in zip(ids, errors, strict=True):
                    if error != E.NONE:
                        log.warning("Expiring transactional id %s failed: %s", txn_id, E.for_code(error).name)
                    if done is not None:
                        done(txn_id, error)

            self.append_many(index, epoch, moves, written)
        return sum(len(moves) for _, moves in expired.values())

    # --- ListTransactions ---------------------------------------------------------------------

    def list_transactions(self, state_filters: Iterable[str] = (), producer_id_filters: Iterable[int] = (),
                          duration_ms: int = -1, id_pattern: str | None = None
                          ) -> tuple[int, list[str], list[ListedTransaction]]:
        """(error, unknown state filters, transactions) as Kafka's listTransactionStates:
        COORDINATOR_LOAD_IN_PROGRESS while a partition loads; a state filter Kafka does not know
        is answered back (and, if every filter is unknown, nothing matches); a duration keeps the
        transactions running longer than it; a pattern (v2) must match the whole id
        (INVALID_REGULAR_EXPRESSION if it is not one)."""
        wanted_names = list(state_filters)
        by_name = {s.value: s for s in TransactionState}
        unknown = [n for n in wanted_names if n not in by_name]
        states = {by_name[n] for n in wanted_names if n in by_name}
        pids = set(producer_id_filters)
        pattern = None
        if id_pattern:
            try:
                pattern = re.compile(id_pattern)
            except re.error:
                return E.INVALID_REGULAR_EXPRESSION, unknown, []
        with self.lock:
            if self._loading:
                return E.COORDINATOR_LOAD_IN_PROGRESS, unknown, []
            if wanted_names and not states:
                return E.NONE, unknown, []
            now = self.now_ms()
            out = []
            for owned in self._owned.values():
                for m in owned.transactions.values():
                    if m.state is S.DEAD or (pids and m.producer_id not in pids) \
                            or (states and m.state not in states) \
                            or (duration_ms >= 0 and now - m.txn_start_timestamp <= duration_ms) \
                            or (pattern is not None and not pattern.fullmatch(m.transactional_id)):
                        continue
                    out.append(ListedTransaction(m.transactional_id, m.producer_id, m.state.value))
            return E.NONE, unknown, out
