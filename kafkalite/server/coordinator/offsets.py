"""A group's committed offsets (Kafka's OffsetMetadataManager): OffsetCommit, TxnOffsetCommit,
OffsetFetch, OffsetDelete, the end of transactions that committed offsets, and the expiry of an
Empty group's offsets after offsets.retention.minutes (Kafka's cleanupGroupMetadata). The
GroupCoordinator owns one and hands it its groups, its lock, its store and what a commit needs of
the membership (the group check, a member's heartbeat); every change is appended to the group's
partition of ``__consumer_offsets`` and applied once committed.

Transactional offsets (KIP-98) are appended as a transactional batch of the producer and stay
pending in their group until the transaction's marker reaches the partition: COMMIT makes them
the committed offsets (unless a regular commit was written after them), ABORT drops them. While
pending, OffsetFetch with require_stable answers UNSTABLE_OFFSET_COMMIT for their partitions, and
expiry leaves the partitions (and the group) alone."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import NamedTuple

from kafkalite.protocol import coordinator_records as cr
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.records.batch import NO_SEQUENCE

from .group import CommittedOffset, GroupMetadata, GroupState, MemberMetadata
from .log_store import ProducerFields
from .results import NO_MEMBER, OffsetsStore

log = logging.getLogger("kafkalite.server.coordinator")

S = GroupState


class OffsetManager:
    """The offsets of the groups in ``groups``, guarded by ``lock`` (both the coordinator's)."""

    def __init__(self, groups: dict[str, GroupMetadata], lock: threading.RLock, store: OffsetsStore,
                 check_group: Callable[[str | None], int],
                 heartbeat: Callable[[GroupMetadata, MemberMetadata], None],
                 now_ms: Callable[[], int], busy: Callable[[str], bool] = lambda group_id: False,
                 subscribed: Callable[[str], set[str] | None] = lambda group_id: None) -> None:
        """``busy(group id)``: a consumer group (KIP-848) with members, whose offsets do not
        expire; ``subscribed(group id)``: a consumer group's subscribed topics (None: a classic
        group's come from its members' metadata)."""
        self.groups = groups
        self._lock = lock
        self.store = store
        self.check_group = check_group
        self._heartbeat = heartbeat
        self._now_ms = now_ms
        self._busy, self._subscribed = busy, subscribed
        self.offset_commits = 0  # offsets committed (Kafka's offset-commit-count), under the lock

    def commit_offsets(self, group_id: str, member_id: str, group_instance_id: str | None, generation_id: int,
                       offsets: dict[tuple[str, int], CommittedOffset],
                       respond: Callable[[int], None], group_id_not_found: bool = False) -> None:
        """Kafka's handleCommitOffsets: a group's member in its generation, or (generation -1, no
        member) a group without members (the simple consumer's commits). ``group_id_not_found``
        (OffsetCommit v9+): a generation of a group not known is GROUP_ID_NOT_FOUND, as Kafka 4.x's
        OffsetMetadataManager answers from v9 on."""
        error = self.check_group(group_id)
        if error:
            respond(error)
            return
        with self._lock:
            group = self.groups.get(group_id)
            if generation_id < 0 and member_id == NO_MEMBER:
                # Kafka: commits without a generation only to a group without members.
                if group is not None and not group.is_in(S.EMPTY):
                    respond(E.ILLEGAL_GENERATION)
                    return
                if group is None:
                    group = self.groups[group_id] = GroupMetadata(group_id, state_timestamp=self._now_ms())
            else:
                if group is None and generation_id >= 0 and group_id_not_found:
                    respond(E.GROUP_ID_NOT_FOUND)
                    return
                member = group.members.get(member_id) if group is not None else None
                if group is None or member is None or group.is_in(S.DEAD):
                    respond(E.UNKNOWN_MEMBER_ID if group is None or member is None
                            else E.COORDINATOR_NOT_AVAILABLE)
                    return
                if group_instance_id is not None and group.static_members.get(group_instance_id) != member_id:
                    respond(E.FENCED_INSTANCE_ID)
                    return
                if generation_id != group.generation_id:
                    respond(E.ILLEGAL_GENERATION)
                    return
                if group.is_in(S.COMPLETING_REBALANCE):
                    respond(E.REBALANCE_IN_PROGRESS)
                    return
                self._heartbeat(group, member)
        target = group
        placed = Placed()

        def stored(error: int) -> None:
            if not error:
                with self._lock:
                    for tp, o in offsets.items():
                        target.commit_offset(tp, replace(o, record_offset=placed.offset))
                    self.offset_commits += len(offsets)
            respond(error)

        self.store.append(group_id, _offset_records(group_id, offsets), stored, placed=placed)

    def commit_txn_offsets(self, group_id: str, producer_id: int, producer_epoch: int, member_id: str,
                           group_instance_id: str | None, generation_id: int,
                           offsets: dict[tuple[str, int], CommittedOffset],
                           respond: Callable[[int], None]) -> None:
        """Kafka's handleTxnCommitOffsets: the offsets a transaction commits, appended as the
        producer's transactional batch and pending until its marker. The member and generation
        are checked only when given (v3+, KIP-447: member id "" and generation -1 skip them)."""
        error = self.check_group(group_id)
        if error:
            respond(error)
            return
        with self._lock:
            group = self.groups.get(group_id)
            if group is None:
                group = self.groups[group_id] = GroupMetadata(group_id, state_timestamp=self._now_ms())
            if group.is_in(S.DEAD):
                error = E.COORDINATOR_NOT_AVAILABLE
            elif group_instance_id is not None and \
                    group.static_members.get(group_instance_id, member_id) != member_id:
                error = E.FENCED_INSTANCE_ID
            elif member_id != NO_MEMBER and member_id not in group.members:
                error = E.UNKNOWN_MEMBER_ID
            elif generation_id >= 0 and generation_id != group.generation_id:
                error = E.ILLEGAL_GENERATION
            else:
                group.prepare_txn_offsets(producer_id, offsets)
        if error:
            respond(error)
            return
        target = group
        placed = Placed()

        def stored(error: int) -> None:
            with self._lock:
                if error:
                    target.txn_offsets_failed(producer_id, offsets)
                else:
                    target.txn_offsets_appended(producer_id, offsets, placed.offset)
                    self.offset_commits += len(offsets)
            respond(error)

        # Kafka writes them with RecordBatch.NO_SEQUENCE: the coordinator's appends are not sequenced.
        self.store.append(group_id, _offset_records(group_id, offsets), stored,
                          producer=ProducerFields(producer_id, producer_epoch, NO_SEQUENCE), placed=placed)

    def complete_transaction(self, groups: list[GroupMetadata], producer_id: int, commit: bool) -> int:
        """The producer's transaction ended in these groups' partition (Kafka's
        handleTxnCompletion): its pending offsets committed or dropped. How many were committed."""
        moved = 0
        with self._lock:
            for group in groups:
                if not group.is_in(S.DEAD):
                    moved += group.complete_txn_offsets(producer_id, commit)
        return moved

    def unstable_partitions(self, group_id: str, partitions: list[tuple[str, int]]) -> set[tuple[str, int]]:
        """Those of ``partitions`` with transactional offsets pending in the group (OffsetFetch's
        require_stable answers UNSTABLE_OFFSET_COMMIT for them)."""
        with self._lock:
            group = self.groups.get(group_id)
            if group is None or not group.pending_txn_offsets:
                return set()
            return {tp for tp in partitions if group.has_pending_txn_offset(tp)}

    def fetch_offsets(self, group_id: str, partitions: list[tuple[str, int]] | None
                      ) -> tuple[int, dict[tuple[str, int], CommittedOffset | None]]:
        """(error, offsets): every committed offset of the group when ``partitions`` is None."""
        error = self.check_group(group_id)
        if error:
            return error, {}
        with self._lock:
            group = self.groups.get(group_id)
            committed = dict(group.offsets) if group is not None else {}
        if partitions is None:
            return E.NONE, dict(committed)
        return E.NONE, {tp: committed.get(tp) for tp in partitions}

    def delete_offsets(self, group_id: str, partitions: list[tuple[str, int]],
                       respond: Callable[[int, dict[tuple[str, int], int]], None]) -> None:
        """Kafka's handleDeleteOffsets: a group's committed offsets removed, except those of topics
        a member of the group is subscribed to (GROUP_SUBSCRIBED_TO_TOPIC)."""
        error = self.check_group(group_id)
        if error:
            respond(error, {})
            return
        with self._lock:
            group = self.groups.get(group_id)
            if group is None or group.is_in(S.DEAD):
                respond(E.GROUP_ID_NOT_FOUND, {})
                return
            subscribed = self._subscribed(group_id)
            if subscribed is None:
                subscribed = group_subscriptions(group)
            per = {tp: E.GROUP_SUBSCRIBED_TO_TOPIC for tp in partitions
                   if subscribed is None or tp[0] in subscribed}
            # As Kafka: a tombstone also for a partition with only pending transactional offsets,
            # which it removes as well.
            removable = [tp for tp in partitions if tp not in per]
        tombstones: list[tuple[bytes, bytes | None]] = [
            (cr.encode_key(cr.OffsetKey(group_id, t, p)), None) for t, p in removable]
        if not tombstones:
            respond(E.NONE, per)
            return

        def stored(error: int) -> None:
            if not error:
                with self._lock:
                    group.remove_offsets(removable)
            respond(error, per)

        self.store.append(group_id, tombstones, stored)

    def cleanup_expired_offsets(self, retention_ms: int) -> int:
        """Kafka's cleanupGroupMetadata (offsets.retention.minutes): an Empty group's offsets go
        ``retention_ms`` after the later of their commit and the group becoming Empty; a group
        left with nothing goes too.
        Tombstones are written for both. How many offsets expired."""
        now = self._now_ms()
        expired: list[tuple[GroupMetadata, list[tuple[str, int]], bool]] = []
        with self._lock:
            for group in self.groups.values():
                if not group.is_in(S.EMPTY) or self._busy(group.group_id):
                    continue
                # Retention counts from the later of the commit and the group becoming Empty; a
                # partition with transactional offsets pending does not expire, nor a group with any.
                gone = [tp for tp, o in group.offsets.items()
                        if now - max(o.commit_timestamp, group.state_timestamp) >= retention_ms
                        and not group.has_pending_txn_offset(tp)]
                if gone:
                    expired.append((group, gone, len(gone) == len(group.offsets)
                                    and not group.pending_txn_offsets))
        for group, gone, whole in expired:
            tombstones: list[tuple[bytes, bytes | None]] = [
                (cr.encode_key(cr.OffsetKey(group.group_id, t, p)), None) for t, p in gone]
            if whole:
                tombstones.append((cr.encode_key(cr.GroupKey(group.group_id)), None))

            def stored(error: int, group: GroupMetadata = group, gone: list = gone,
                       whole: bool = whole) -> None:
                if error:
                    return  # tried again at the next check
                with self._lock:
                    for tp in gone:
                        group.offsets.pop(tp, None)
                    if whole and group.is_in(S.EMPTY) and not group.has_offsets() and \
                            self.groups.get(group.group_id) is group:
                        group.transition_to(S.DEAD, self._now_ms())
                        del self.groups[group.group_id]

            self.store.append(group.group_id, tombstones, stored)
        if expired:
            log.info("Removed %d expired offsets of %d groups", sum(len(g) for _, g, _ in expired),
                     len(expired))
        return sum(len(g) for _, g, _ in expired)


class LoadedBatch(NamedTuple):
    """A batch of __consumer_offsets as loading replays it: its records (key, value or None), the
    log offset of its first one, and for a transaction's batch its producer id (-1 otherwise);
    ``marker`` is True / False for a COMMIT / ABORT marker of that producer (None: data)."""

    records: list[tuple[bytes, bytes | None]]
    base_offset: int = -1
    producer_id: int = -1
    marker: bool | None = None


class Placed:
    """Where an append's batch went in the log (the store tells it before the append completes)."""

    def __init__(self) -> None:
        self.offset = -1

    def __call__(self, offset: int) -> None:
        self.offset = offset


def _offset_records(group_id: str, offsets: dict[tuple[str, int], CommittedOffset]
                    ) -> list[tuple[bytes, bytes | None]]:
    return [(cr.encode_key(cr.OffsetKey(group_id, t, p)),
             cr.encode_offset_value(cr.OFFSET_COMMIT_VALUE.cls(
                 offset=o.offset, leader_epoch=o.leader_epoch, metadata=o.metadata,
                 commit_timestamp=o.commit_timestamp)))
            for (t, p), o in offsets.items()]


def group_subscriptions(group: GroupMetadata) -> set[str] | None:
    """The topics the members of a "consumer" group subscribe to (ConsumerProtocolSubscription:
    int16 version, then an array of topic names); None when one cannot be read (all count as
    subscribed then)."""
    if not group.members:
        return set()
    if group.protocol_type != "consumer" or group.protocol_name is None:
        return None
    topics: set[str] = set()
    for member in group.members.values():
        try:
            data = member.metadata(group.protocol_name)
            count = int.from_bytes(data[2:6], "big", signed=True)
            pos = 6
            for _ in range(count):
                size = int.from_bytes(data[pos:pos + 2], "big", signed=True)
                topics.add(data[pos + 2:pos + 2 + size].decode())
                pos += 2 + size
        except (KeyError, UnicodeDecodeError, ValueError):
            return None
    return topics

