"""The share coordinator of the ``__share_group_state`` partitions this broker leads (Kafka's
ShareCoordinatorService and ShareCoordinatorShard over the coordinator runtime).

A request for a key whose partition is not led here answers NOT_COORDINATOR, one whose partition
is still loading COORDINATOR_LOAD_IN_PROGRESS. The requests of one partition run one at a time,
in arrival order (Kafka's runtime runs a partition's events on one thread): each computes its
outcome from the state (state.py), writes its record through ``store`` (acks=all), and only once
the record is committed changes the state and answers; reads wait behind the writes before them,
so that they see them. A partition that leaves (or is loaded again) answers what waits
NOT_COORDINATOR and drops its state.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

from kafkalite.common.java import partition_for_key
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.errors import DecodeError

from ..coordinator.log_store import translate_append_error
from ..share.persister import ReadStateResult, ShareStateKey, StateBatch, StateSummary
from . import state as S
from .settings import ShareCoordinatorConfig

log = logging.getLogger("kafkalite.server.share_coordinator")

SHARE_GROUP_STATE_TOPIC = "__share_group_state"


class Store(Protocol):
    def append(self, index: int, records: list[S.KeyValue], done: Callable[[int], None]) -> None: ...


def partition_for(key: ShareStateKey, num_partitions: int) -> int:
    """ShareCoordinatorService.partitionFor: Utils.abs(key.hashCode) % partitions, of the
    coordinator key ``group:topicId:partition``."""
    return partition_for_key(S.coordinator_key(key), num_partitions)


# A request as the partition's queue runs it: (state now) -> (outcome, answer(error)).
Step = Callable[[S.ShareState | None], tuple[S.Outcome, Callable[[int], None]]]


@dataclass
class _Partition:
    loaded: bool = False
    states: dict[ShareStateKey, S.ShareState] = field(default_factory=dict)
    queue: collections.deque[tuple[ShareStateKey, Step]] = field(default_factory=collections.deque)
    busy: bool = False  # a request's record is being written
    # Keys whose state was deleted (its snapshot tombstone written or loaded), until initialized
    # again: a write to one is refused, so a leader's cached share-partition cannot bring it back.
    deleted: set[ShareStateKey] = field(default_factory=set)


class ShareCoordinator:
    def __init__(self, config: ShareCoordinatorConfig, store: Store) -> None:
        self.config = config
        self.store = store
        self._lock = threading.Lock()
        self._partitions: dict[int, _Partition] = {}
        self._running = threading.local()  # the partitions whose queue this thread runs now

    def partition_of(self, key: ShareStateKey) -> int:
        return partition_for(key, self.config.num_partitions)

    # --- leadership -------------------------------------------------------------------------------

    def begin_loading(self, index: int) -> None:
        with self._lock:
            old = self._partitions.get(index)
            self._partitions[index] = _Partition()
        self._fail(old)

    def load(self, index: int, records: Iterable[S.KeyValue]) -> None:
        """Replay the partition's records (snapshots, then the updates after them), then serve it."""
        states: dict[ShareStateKey, S.ShareState] = {}
        deleted: set[ShareStateKey] = set()
        for key, value in records:
            try:
                S.replay(states, key, value, deleted)
            except DecodeError as e:
                log.warning("Skipping an unreadable record of %s-%d: %s", SHARE_GROUP_STATE_TOPIC, index, e)
        with self._lock:
            partition = self._partitions.get(index)
            if partition is None or partition.loaded:
                return  # it left meanwhile
            partition.states = states
            partition.deleted = deleted
            partition.loaded = True
        log.info("Loaded the share state of %s-%d (%d share-partitions)", SHARE_GROUP_STATE_TOPIC, index,
                 len(states))

    def unload(self, index: int) -> None:
        with self._lock:
            old = self._partitions.pop(index, None)
        self._fail(old)

    def owned(self) -> list[int]:
        with self._lock:
            return sorted(i for i, p in self._partitions.items() if p.loaded)

    @staticmethod
    def _fail(partition: _Partition | None) -> None:
        if partition is None:
            return
        while partition.queue:
            _, step = partition.queue.popleft()
            step(None)[1](E.NOT_COORDINATOR)

    # --- the requests -------------------------------------------------------------------------------

    def initialize_state(self, key: ShareStateKey, state_epoch: int, start_offset: int,
                         done: Callable[[int], None]) -> None:
        self._submit(key, done, lambda cur: (S.initialize(key, cur, state_epoch, start_offset), done))

    def write_state(self, key: ShareStateKey, state_epoch: int, leader_epoch: int, start_offset: int,
                    batches: list[StateBatch], done: Callable[[int], None]) -> None:
        per_snapshot = self.config.updates_per_snapshot

        def step(cur: S.ShareState | None) -> tuple[S.Outcome, Callable[[int], None]]:
            # Under the lock. Kafka refuses every write of a state not initialized
            # (WRITE_UNINITIALIZED_SHARE_PARTITION); here a leader's first write may still make it,
            # but not once it was deleted: a leader's cached share-partition is fenced that way.
            partition = self._partitions.get(self.partition_of(key))
            if cur is None and partition is not None and key in partition.deleted:
                return S.Outcome(E.INVALID_REQUEST), done
            return S.write(key, cur, state_epoch, leader_epoch, start_offset, batches, per_snapshot), done
        self._submit(key, done, step)

    def read_state(self, key: ShareStateKey, leader_epoch: int,
                   done: Callable[[ReadStateResult], None]) -> None:
        def step(cur: S.ShareState | None) -> tuple[S.Outcome, Callable[[int], None]]:
            outcome, result = S.read(key, cur, leader_epoch)
            return outcome, lambda error: done(result if error == E.NONE else ReadStateResult(error))
        self._submit(key, lambda error: done(ReadStateResult(error)), step)

    def read_summary(self, key: ShareStateKey, leader_epoch: int,
                     done: Callable[[StateSummary], None]) -> None:
        def step(cur: S.ShareState | None) -> tuple[S.Outcome, Callable[[int], None]]:
            result = S.summary(cur)
            return S.Outcome(E.NONE), lambda error: done(result if error == E.NONE else StateSummary(error))
        self._submit(key, lambda error: done(StateSummary(error)), step)

    def delete_state(self, key: ShareStateKey, done: Callable[[int], None]) -> None:
        self._submit(key, done, lambda cur: (S.delete(key), done))

    # --- one partition's queue ------------------------------------------------------------------------

    def _submit(self, key: ShareStateKey, refuse: Callable[[int], None], step: Step) -> None:
        index = self.partition_of(key)
        with self._lock:
            partition = self._partitions.get(index)
            error = (E.NOT_COORDINATOR if partition is None else
                     E.COORDINATOR_LOAD_IN_PROGRESS if not partition.loaded else E.NONE)
            if not error:
                assert partition is not None
                partition.queue.append((key, step))
        if error:
            refuse(error)
            return
        self._run(index)

    def _run(self, index: int) -> None:
        """Run the partition's queued requests until one has records to write (the queue goes on
        from the append's callback, or here if the append completed at once) or none is left."""
        running = self._running.__dict__.setdefault("indexes", set())
        if index in running:
            return  # an append answered at once, inside this loop: the loop goes on
        running.add(index)
        try:
            self._run_queue(index)
        finally:
            running.discard(index)

    def _run_queue(self, index: int) -> None:
        while True:
            with self._lock:
                partition = self._partitions.get(index)
                if partition is None or partition.busy or not partition.queue:
                    return
                key, step = partition.queue.popleft()
                outcome, answer = step(partition.states.get(key))
                writes = not outcome.error and bool(outcome.records)
                partition.busy = writes
            if not writes:
                answer(outcome.error)
                continue
            written = self._written(index, partition, key, outcome, answer)
            self.store.append(index, list(outcome.records), written)

    def _written(self, index: int, partition: _Partition, key: ShareStateKey, outcome: S.Outcome,
                 answer: Callable[[int], None]) -> Callable[[int], None]:
        def done(error: int) -> None:
            with self._lock:
                current = self._partitions.get(index) is partition
                if current and error == E.NONE:
                    if outcome.deleted:
                        partition.states.pop(key, None)
                        partition.deleted.add(key)
                    elif outcome.after is not None:
                        partition.states[key] = outcome.after
                        partition.deleted.discard(key)
                partition.busy = False
            if error:
                log.info("Writing the share state of %s to %s-%d failed: %s", key, SHARE_GROUP_STATE_TOPIC,
                         index, E.for_code(error).name)
                answer(translate_append_error(error, E.UNKNOWN_SERVER_ERROR))
            else:
                answer(E.NONE if current else E.NOT_COORDINATOR)
            if current:
                self._run(index)
        return done
