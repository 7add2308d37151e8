"""Where a share-partition's state outlives its leader (Kafka's Persister interface,
server-common/.../share/persister/Persister.java): the partition leader reads the state when a
share-partition is first used and writes every change before it answers the acknowledgement.

Kafka's DefaultStatePersister sends InitializeShareGroupState, ReadShareGroupState,
WriteShareGroupState, DeleteShareGroupState and ReadShareGroupStateSummary to the share
coordinator, which keeps the state on ``__share_group_state``; ``InMemoryPersister`` keeps it in
a dict, for tests of the share-partition alone. Answers go through callbacks with Kafka error codes
(the leader's request thread does not wait).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from kafkalite.protocol import error_codes as E

# Kafka's sentinels (PartitionFactory): no state yet, no leader epoch known.
UNINITIALIZED_STATE_EPOCH = -1
UNINITIALIZED_START_OFFSET = -1
NO_LEADER_EPOCH = -1


@dataclass(frozen=True)
class StateBatch:
    """A run of offsets in one delivery state (PersisterStateBatch): ``delivery_state`` is
    RecordState's id (0 AVAILABLE, 2 ACKNOWLEDGED, 4 ARCHIVED; ACQUIRED is never persisted)."""

    first_offset: int
    last_offset: int
    delivery_state: int
    delivery_count: int


@dataclass(frozen=True)
class ShareStateKey:
    """A share-partition (SharePartitionKey): the coordinator key is ``group:topic_id:partition``."""

    group_id: str
    topic_id: bytes  # the topic's 16-byte uuid
    partition: int


@dataclass(frozen=True)
class ReadStateResult:
    error: int
    state_epoch: int = UNINITIALIZED_STATE_EPOCH
    start_offset: int = UNINITIALIZED_START_OFFSET
    batches: tuple[StateBatch, ...] = ()
    error_message: str | None = None


@dataclass(frozen=True)
class StateSummary:
    error: int
    state_epoch: int = UNINITIALIZED_STATE_EPOCH
    leader_epoch: int = NO_LEADER_EPOCH
    start_offset: int = UNINITIALIZED_START_OFFSET
    error_message: str | None = None


class Persister(Protocol):
    def initialize_state(self, key: ShareStateKey, state_epoch: int, start_offset: int,
                         done: Callable[[int], None]) -> None:
        """Start (or restart, with a higher ``state_epoch``) the partition's state at ``start_offset``."""

    def read_state(self, key: ShareStateKey, leader_epoch: int,
                   done: Callable[[ReadStateResult], None]) -> None:
        """The state as last written; a ``leader_epoch`` older than the last one seen is
        FENCED_LEADER_EPOCH."""

    def write_state(self, key: ShareStateKey, state_epoch: int, leader_epoch: int, start_offset: int,
                    batches: list[StateBatch], done: Callable[[int], None]) -> None:
        """Record a change: the batches replace those they overlap, the start offset moves up."""

    def delete_state(self, key: ShareStateKey, done: Callable[[int], None]) -> None:
        """Forget the partition's state (DeleteShareGroupOffsets, a deleted group)."""

    def read_summary(self, key: ShareStateKey, leader_epoch: int,
                     done: Callable[[StateSummary], None]) -> None:
        """The state epoch and start offset only (DescribeShareGroupOffsets)."""


@dataclass
class _Stored:
    state_epoch: int
    leader_epoch: int
    start_offset: int
    batches: dict[int, StateBatch] = field(default_factory=dict)  # first offset -> batch


def merge_batches(current: list[StateBatch], start_offset: int, update: list[StateBatch]) -> list[StateBatch]:
    """``current`` with ``update`` written over it, as the share coordinator combines an update
    with its snapshot: what an update covers wins, runs below ``start_offset`` are gone, and the
    result is sorted, non-overlapping runs."""
    states: dict[int, tuple[int, int]] = {}
    for batch in [*current, *update]:
        for offset in range(max(batch.first_offset, start_offset), batch.last_offset + 1):
            states[offset] = (batch.delivery_state, batch.delivery_count)
    merged: list[StateBatch] = []
    for offset in sorted(states):
        state, count = states[offset]
        last = merged[-1] if merged else None
        if (last is not None and last.last_offset + 1 == offset
                and (last.delivery_state, last.delivery_count) == (state, count)):
            merged[-1] = StateBatch(last.first_offset, offset, state, count)
        else:
            merged.append(StateBatch(offset, offset, state, count))
    return merged


class InMemoryPersister:
    """The ``Persister`` over a dict, answered at once (tests of one share-partition)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._states: dict[ShareStateKey, _Stored] = {}

    def initialize_state(self, key: ShareStateKey, state_epoch: int, start_offset: int,
                         done: Callable[[int], None]) -> None:
        with self._lock:
            current = self._states.get(key)
            if current is not None and current.state_epoch >= state_epoch:
                error = E.FENCED_STATE_EPOCH
            else:
                self._states[key] = _Stored(state_epoch, NO_LEADER_EPOCH, start_offset)
                error = E.NONE
        done(error)

    def read_state(self, key: ShareStateKey, leader_epoch: int,
                   done: Callable[[ReadStateResult], None]) -> None:
        with self._lock:
            current = self._states.get(key)
            if current is None:
                result = ReadStateResult(E.NONE)
            elif leader_epoch < current.leader_epoch:
                result = ReadStateResult(E.FENCED_LEADER_EPOCH)
            else:
                current.leader_epoch = leader_epoch
                result = ReadStateResult(E.NONE, current.state_epoch, current.start_offset,
                                         tuple(current.batches[o] for o in sorted(current.batches)))
        done(result)

    def write_state(self, key: ShareStateKey, state_epoch: int, leader_epoch: int, start_offset: int,
                    batches: list[StateBatch], done: Callable[[int], None]) -> None:
        with self._lock:
            current = self._states.get(key)
            if current is None:
                current = self._states[key] = _Stored(state_epoch, leader_epoch, start_offset)
            if leader_epoch < current.leader_epoch:
                error = E.FENCED_LEADER_EPOCH
            elif state_epoch < current.state_epoch:
                error = E.FENCED_STATE_EPOCH
            else:
                current.leader_epoch = max(current.leader_epoch, leader_epoch)
                current.start_offset = max(current.start_offset, start_offset)
                merged = merge_batches(list(current.batches.values()), current.start_offset, batches)
                current.batches = {b.first_offset: b for b in merged}
                error = E.NONE
        done(error)

    def delete_state(self, key: ShareStateKey, done: Callable[[int], None]) -> None:
        with self._lock:
            self._states.pop(key, None)
        done(E.NONE)

    def read_summary(self, key: ShareStateKey, leader_epoch: int,
                     done: Callable[[StateSummary], None]) -> None:
        with self._lock:
            current = self._states.get(key)
            summary = (StateSummary(E.NONE) if current is None else
                       StateSummary(E.NONE, current.state_epoch, current.leader_epoch, current.start_offset))
        done(summary)
