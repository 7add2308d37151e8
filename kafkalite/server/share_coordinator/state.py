"""A share-partition's state as the share coordinator keeps it (Kafka's ShareCoordinatorShard):
what each request does to it, as a table of pure functions from (state, request) to (error,
record to write, state after), and how a record replays into it when a partition is loaded.

The state of a share-partition is its last snapshot with the updates written since combined over
it (``merge_batches``): a write appends a ShareUpdate of the batches it changed, and every
``updates_per_snapshot`` updates the whole state goes as a new ShareSnapshot (snapshot epoch + 1),
so that loading reads at most that many updates after the last snapshot of a key (older records
are compacted away). A state epoch names one incarnation of the state (InitializeShareGroupState
starts a new one); a leader epoch, the partition leader that wrote it: older ones are fenced.
"""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass, replace

from kafkalite.protocol import error_codes as E
from kafkalite.protocol import share_state_records as sr

from ..share.persister import (
    NO_LEADER_EPOCH,
    ReadStateResult,
    ShareStateKey,
    StateBatch,
    StateSummary,
    merge_batches,
)

KeyValue = tuple[bytes, bytes | None]
SNAPSHOT_EPOCHS = 1 << 16  # ShareSnapshotValue's SnapshotEpoch is a uint16: it wraps


def _next_epoch(epoch: int) -> int:
    return (epoch + 1) % SNAPSHOT_EPOCHS


@dataclass(frozen=True)
class ShareState:
    """One share-partition's state, as its records add up."""

    snapshot_epoch: int
    state_epoch: int
    leader_epoch: int
    start_offset: int
    batches: tuple[StateBatch, ...] = ()
    updates_since_snapshot: int = 0  # ShareUpdates written after the last ShareSnapshot


@dataclass(frozen=True)
class Outcome:
    """What a request does: its error, the records to write first (none: nothing to write), and
    the key's state once they are committed (``after``; with ``deleted`` the state is gone)."""

    error: int
    records: tuple[KeyValue, ...] = ()
    after: ShareState | None = None
    deleted: bool = False


def topic_uuid(key: ShareStateKey) -> uuid.UUID:
    return uuid.UUID(bytes=key.topic_id)


def coordinator_key(key: ShareStateKey) -> str:
    """SharePartitionKey.asCoordinatorKey: ``group:topicId:partition``, the topic id in Kafka's
    base64url form; its hash places the key in ``__share_group_state``."""
    topic = base64.urlsafe_b64encode(key.topic_id).decode().rstrip("=")
    return f"{key.group_id}:{topic}:{key.partition}"


def _batches(batches: tuple[StateBatch, ...] | list[StateBatch]) -> list:
    B = sr.STATE_BATCH.cls
    return [B(first_offset=b.first_offset, last_offset=b.last_offset, delivery_state=b.delivery_state,
              delivery_count=b.delivery_count) for b in batches]


def snapshot_record(key: ShareStateKey, state: ShareState) -> KeyValue:
    value = sr.SHARE_SNAPSHOT_VALUE.cls(snapshot_epoch=state.snapshot_epoch, state_epoch=state.state_epoch,
                                        leader_epoch=state.leader_epoch, start_offset=state.start_offset,
                                        state_batches=_batches(state.batches))
    return (sr.encode_key(True, key.group_id, topic_uuid(key), key.partition), sr.encode_value(True, value))


def update_record(key: ShareStateKey, snapshot_epoch: int, leader_epoch: int, start_offset: int,
                  batches: list[StateBatch]) -> KeyValue:
    value = sr.SHARE_UPDATE_VALUE.cls(snapshot_epoch=snapshot_epoch, leader_epoch=leader_epoch,
                                      start_offset=start_offset, state_batches=_batches(batches))
    return (sr.encode_key(False, key.group_id, topic_uuid(key), key.partition), sr.encode_value(False, value))


def tombstones(key: ShareStateKey) -> list[KeyValue]:
    """Both of the key's records deleted (compaction then drops them)."""
    tid = topic_uuid(key)
    return [(sr.encode_key(True, key.group_id, tid, key.partition), None),
            (sr.encode_key(False, key.group_id, tid, key.partition), None)]


# --- what each request does ---------------------------------------------------------------------

def initialize(key: ShareStateKey, current: ShareState | None, state_epoch: int,
               start_offset: int) -> Outcome:
    """A new incarnation of the state: refused unless its state epoch is newer (FENCED_STATE_EPOCH),
    written as a snapshot with no batches."""
    if current is not None and current.state_epoch >= state_epoch:
        return Outcome(E.FENCED_STATE_EPOCH)
    epoch = 0 if current is None else _next_epoch(current.snapshot_epoch)
    after = ShareState(epoch, state_epoch, NO_LEADER_EPOCH, start_offset)
    return Outcome(E.NONE, (snapshot_record(key, after),), after)


def write(key: ShareStateKey, current: ShareState | None, state_epoch: int, leader_epoch: int,
          start_offset: int, batches: list[StateBatch], updates_per_snapshot: int) -> Outcome:
    """A change from the partition leader: fenced by an older leader epoch, then an older state
    epoch; the first write of a key, and every ``updates_per_snapshot``-th after a snapshot, is a
    snapshot of the whole state, the others an update of what changed. The state epoch stays (an
    update has none: only InitializeShareGroupState starts a new one)."""
    if current is not None and leader_epoch < current.leader_epoch:
        return Outcome(E.FENCED_LEADER_EPOCH)
    if current is not None and state_epoch < current.state_epoch:
        return Outcome(E.FENCED_STATE_EPOCH)
    if current is None:
        after = ShareState(0, state_epoch, leader_epoch, start_offset,
                           tuple(merge_batches([], start_offset, batches)))
        return Outcome(E.NONE, (snapshot_record(key, after),), after)
    new_start = max(current.start_offset, start_offset)
    merged = tuple(merge_batches(list(current.batches), new_start, batches))
    new_leader = max(current.leader_epoch, leader_epoch)
    if current.updates_since_snapshot + 1 >= max(1, updates_per_snapshot):
        after = ShareState(_next_epoch(current.snapshot_epoch), current.state_epoch, new_leader,
                           new_start, merged)
        return Outcome(E.NONE, (snapshot_record(key, after),), after)
    after = ShareState(current.snapshot_epoch, current.state_epoch, new_leader, new_start, merged,
                       current.updates_since_snapshot + 1)
    return Outcome(E.NONE, (update_record(key, current.snapshot_epoch, leader_epoch, start_offset, batches),),
                   after)


def read(key: ShareStateKey, current: ShareState | None,
         leader_epoch: int) -> tuple[Outcome, ReadStateResult]:
    """The state for a (new) partition leader: an older leader epoch is fenced; a newer one is
    written first (an update with no batches), so that the old leader's writes are fenced from then
    on, even after the coordinator moves."""
    if current is None:
        return Outcome(E.NONE), ReadStateResult(E.NONE)
    if leader_epoch < current.leader_epoch:
        return Outcome(E.FENCED_LEADER_EPOCH), ReadStateResult(E.FENCED_LEADER_EPOCH)
    result = ReadStateResult(E.NONE, current.state_epoch, current.start_offset, current.batches)
    if leader_epoch == current.leader_epoch:
        return Outcome(E.NONE), result
    after = replace(current, leader_epoch=leader_epoch,
                    updates_since_snapshot=current.updates_since_snapshot + 1)
    record = update_record(key, current.snapshot_epoch, leader_epoch, -1, [])
    return Outcome(E.NONE, (record,), after), result


def delete(key: ShareStateKey) -> Outcome:
    """Both tombstones, whether or not the key has state here (a stale record may be on the log)."""
    return Outcome(E.NONE, tuple(tombstones(key)), deleted=True)


def summary(current: ShareState | None) -> StateSummary:
    if current is None:
        return StateSummary(E.NONE)
    return StateSummary(E.NONE, current.state_epoch, current.leader_epoch, current.start_offset)


# --- loading ----------------------------------------------------------------------------------

def replay(states: dict[ShareStateKey, ShareState], key_bytes: bytes, value_bytes: bytes | None,
           deleted: set[ShareStateKey] | None = None) -> None:
    """One record of ``__share_group_state`` applied to ``states`` (DecodeError if it is not one):
    a snapshot replaces the key's state, an update combines over it, a tombstone removes it (and
    adds the key to ``deleted``, which a later snapshot takes it out of)."""
    k = sr.decode_key(key_bytes)
    key = ShareStateKey(k.group_id, k.topic_id.bytes, k.partition)
    if value_bytes is None:
        if k.snapshot:  # deletion writes both tombstones; the snapshot's says the state is gone
            states.pop(key, None)
            if deleted is not None:
                deleted.add(key)
        return
    value = sr.decode_value(k.snapshot, value_bytes)
    batches = [StateBatch(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
               for b in value.state_batches]
    if k.snapshot:
        if deleted is not None:
            deleted.discard(key)
        states[key] = ShareState(value.snapshot_epoch, value.state_epoch, value.leader_epoch,
                                 value.start_offset, tuple(batches))
        return
    current = states.get(key)
    if current is None or value.snapshot_epoch != current.snapshot_epoch:
        return  # an update of an older snapshot (superseded) or of deleted state
    start = max(current.start_offset, value.start_offset)
    states[key] = ShareState(current.snapshot_epoch, current.state_epoch,
                             max(current.leader_epoch, value.leader_epoch), start,
                             tuple(merge_batches(list(current.batches), start, batches)),
                             current.updates_since_snapshot + 1)
