"""Kafka's classic group coordinator (GroupCoordinator.scala), the facade the group handlers call
for the groups whose ``__consumer_offsets`` partition this broker leads: membership here
(JoinGroup, SyncGroup, Heartbeat, LeaveGroup, DescribeGroups, ListGroups, DeleteGroups, and the
loading and unloading of a partition's groups); OffsetCommit, OffsetFetch, OffsetDelete and the
offsets' expiry delegated to its OffsetManager (offsets.py); the delayed operations in
delayed.py; what it answers in results.py.

Answers go through callbacks, so that requests wait without a handler thread: a JoinGroup waits
in the ``Rebalance`` purgatory (DelayedJoin) until every known member has rejoined or the
rebalance timeout passed; each member's session is a DelayedHeartbeat in the ``Heartbeat``
purgatory, completed early by its next heartbeat and expired by the purgatory's timer thread.
What must survive the coordinator (a generation's assignment, committed offsets, a deleted group)
is appended to the group's partition of ``__consumer_offsets`` through ``store`` and answered
once the append is committed (acks=all); ``load``/``unload`` follow the leadership of those
partitions.

One lock guards every group, shared with the OffsetManager (Kafka locks each group; CPython runs
one thread at a time, and no callback here waits on anything).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from kafkalite.controller.group_configs import GroupConfigView
from kafkalite.metrics.components import GroupCounts, group_coordinator_metrics
from kafkalite.metrics.registry import MetricsRegistry
from kafkalite.protocol import coordinator_records as cr
from kafkalite.protocol import error_codes as E

from ..purgatory import DelayedOperationPurgatory
from .consumer_group import classic as classic_members
from .consumer_group.manager import (
    ConsumerGroupManager,
    HeartbeatRequest,
    HeartbeatResult,
    Records,
    TopicsView,
)
from .consumer_group.model import ConsumerGroup, ConsumerGroupState
from .consumer_group.timer import PurgatoryTimer
from .delayed import DelayedHeartbeat, DelayedJoin, DelayedPendingMember, InitialDelayedJoin
from .group import CommittedOffset, GroupMetadata, GroupState, MemberMetadata
from .offsets import LoadedBatch, OffsetManager
from .results import (
    NO_GENERATION,
    NO_MEMBER,
    GroupSummary,
    JoinResult,
    MemberSummary,
    OffsetsStore,
    SyncResult,
)
from .settings import GroupConfig

__all__ = ["NEW_MEMBER_JOIN_TIMEOUT_MS", "NO_GENERATION", "NO_MEMBER", "GroupConfig", "GroupCoordinator",
           "GroupSummary", "JoinResult", "LoadedBatch", "MemberSummary", "OffsetsStore", "SyncResult"]

log = logging.getLogger("kafkalite.server.coordinator")

S = GroupState

# A new member cannot heartbeat while its first JoinGroup waits, so its session does not run then;
# this bounds how long a JoinGroup of a client that went away keeps a place (Kafka's
# GroupCoordinator.NewMemberJoinTimeoutMs).
NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000


def _now_ms() -> int:
    return int(time.time() * 1000)


class GroupCoordinator:
    def __init__(self, node_id: int, config: GroupConfig, store: OffsetsStore,
                 partition_for: Callable[[str], int], now_ms: Callable[[], int] = _now_ms,
                 metrics: MetricsRegistry | None = None,
                 topics: Callable[[], TopicsView] | None = None,
                 group_config: Callable[[str], GroupConfigView] | None = None) -> None:
        """``metrics``: the broker's registry, where the coordinator and its purgatories report
        until ``shutdown``. ``topics``: the broker's topics (name -> (id, partitions)), which
        consumer groups (KIP-848) assign. ``group_config``: a group's configs (the broker's
        ``group_config``), whose session and heartbeat overrides consumer groups read."""
        metrics = metrics or MetricsRegistry()
        self.config = config
        self.store = store
        self.partition_for = partition_for
        self._now_ms = now_ms
        self._lock = threading.RLock()
        self.groups: dict[str, GroupMetadata] = {}
        self.owned: set[int] = set()  # __consumer_offsets partitions loaded and served here
        self.loading: set[int] = set()
        # Transactions ended (WriteTxnMarkers) in a partition while it loads: applied after the load.
        self._ended_while_loading: dict[int, list[tuple[int, bool]]] = {}
        self.rebalance_purgatory = DelayedOperationPurgatory("Rebalance", node_id, metrics)
        self.heartbeat_purgatory = DelayedOperationPurgatory("Heartbeat", node_id, metrics)
        # Consumer groups (KIP-848): their membership there, their offsets in ``groups`` as an
        # Empty classic group's (one namespace of group ids, one OffsetManager for both kinds).
        self.consumer = ConsumerGroupManager(config, topics or dict, PurgatoryTimer(self.heartbeat_purgatory),
                                             self._write, self._lock, partition_for, group_config)
        self.consumer.downgrade = self._downgrade
        self.offset_manager = OffsetManager(self.groups, self._lock, store, self.check_group,
                                            self._heartbeat, now_ms, busy=self._consumer_group_busy,
                                            subscribed=self._consumer_group_subscriptions)
        self._metrics = metrics.register("group-coordinator", group_coordinator_metrics(self.metrics_counts))
        # Share groups' records (key versions 9-15) of a partition loaded: to the share groups'
        # manager (coordinator/share_group/), set by the broker.
        # Share groups share the group id namespace (the broker sets the share-group manager's check).
        self.is_share_group: Callable[[str], bool] = lambda group_id: False
        self.share_groups_loaded: Callable[[list[tuple[cr.ShareRecordKey, bytes | None]]], None] = \
            lambda records: None

    def metrics_counts(self) -> GroupCounts:
        """Groups by state, offsets held and offsets committed, read under the lock (the scrape's)."""
        with self._lock:
            by_state = dict.fromkeys((state.value for state in GroupState), 0)  # every state, as Kafka
            consumer = dict.fromkeys((state.value for state in ConsumerGroupState), 0)
            for group in self.groups.values():
                if group.group_id in self.consumer.groups:
                    consumer[self.consumer.groups[group.group_id].state.value] += 1
                else:
                    by_state[group.state.value] += 1
            offsets = sum(len(group.offsets) for group in self.groups.values())
            return GroupCounts(by_state, offsets, self.offset_manager.offset_commits, consumer)

    def shutdown(self) -> None:
        self._metrics.close()
        self.rebalance_purgatory.shutdown()
        self.heartbeat_purgatory.shutdown()

    # --- ownership ------------------------------------------------------------------------------

    def check_group(self, group_id: str | None) -> int:
        """The error a request for ``group_id`` gets before anything else (Kafka's validateGroupStatus)."""
        if not group_id:
            return E.INVALID_GROUP_ID
        partition = self.partition_for(group_id)
        if partition in self.loading:
            return E.COORDINATOR_LOAD_IN_PROGRESS
        if partition not in self.owned:
            return E.NOT_COORDINATOR
        return E.NONE

    def begin_loading(self, partition: int) -> None:
        """``partition``'s leadership came here: its groups answer COORDINATOR_LOAD_IN_PROGRESS
        until ``load(..., already_loading=True)``."""
        with self._lock:
            self.loading.add(partition)

    def load(self, partition: int, records: Iterable[tuple[bytes, bytes | None]],
             already_loading: bool = False) -> None:
        """``load_batches`` of records written outside any transaction, oldest first."""
        self.load_batches(partition, [LoadedBatch(list(records))], already_loading)

    def load_batches(self, partition: int, batches: Iterable[LoadedBatch],
                     already_loading: bool = False) -> None:
        """Become the coordinator of ``partition``'s groups from its batches, oldest first
        (Kafka's GroupMetadataManager.loadGroupsAndOffsets, replayed as OffsetMetadataManager
        does): a transactional batch's offsets are pending until its producer's marker, made
        committed by COMMIT, dropped by ABORT; those of a transaction still open stay pending.
        With ``already_loading`` the partition was marked loading when its leadership came, and
        an ``unload`` since (the leadership left again) makes this load void."""
        with self._lock:
            if not already_loading:
                self.loading.add(partition)
        offsets: dict[str, dict[tuple[str, int], CommittedOffset]] = {}
        pending: dict[int, dict[str, dict[tuple[str, int], CommittedOffset]]] = {}  # producer -> group
        groups: dict[str, Any] = {}
        share_records: list[tuple[cr.ShareRecordKey, bytes | None]] = []
        consumer_groups: dict[str, list[tuple[cr.ConsumerGroupKey, bytes | None]]] = {}
        for batch in batches:
            if batch.marker is not None:
                ended = pending.pop(batch.producer_id, {})
                if batch.marker:
                    for group_id, txn_offsets in ended.items():
                        committed = offsets.setdefault(group_id, {})
                        for tp, o in txn_offsets.items():
                            current = committed.get(tp)
                            if current is None or current.written_before(o):
                                committed[tp] = o
                continue
            for key_bytes, value in batch.records:
                try:
                    share_key = cr.decode_share_key(key_bytes)
                    if share_key is not None:
                        share_records.append((share_key, value))
                        continue
                    key = cr.decode_key(key_bytes)
                    if isinstance(key, cr.OffsetKey):
                        tp = (key.topic, key.partition)
                        if value is None:  # a tombstone removes the committed and pending offsets
                            offsets.get(key.group, {}).pop(tp, None)
                            for by_group in pending.values():
                                by_group.get(key.group, {}).pop(tp, None)
                            continue
                        v = cr.decode_offset_value(value)
                        o = CommittedOffset(v.offset, v.leader_epoch, v.metadata, v.commit_timestamp,
                                            v.expire_timestamp, batch.base_offset)
                        if batch.producer_id >= 0:
                            pending.setdefault(batch.producer_id, {}).setdefault(key.group, {})[tp] = o
                        else:
                            offsets.setdefault(key.group, {})[tp] = o
                    elif isinstance(key, cr.ConsumerGroupKey):
                        consumer_groups.setdefault(key.group, []).append((key, value))
                    else:
                        groups[key.group] = cr.decode_group_value(value) if value is not None else None
                except Exception as e:  # one unreadable record does not cost the partition
                    log.warning("Skipping an unreadable record of __consumer_offsets-%d: %s", partition, e)
        open_txns: dict[str, dict[int, dict[tuple[str, int], CommittedOffset]]] = {}
        for producer_id, by_group in pending.items():
            for group_id, txn_offsets in by_group.items():
                if txn_offsets:
                    open_txns.setdefault(group_id, {})[producer_id] = txn_offsets
        with self._lock:
            if partition not in self.loading:
                return  # unloaded meanwhile
            for group_id in set(offsets) | set(groups) | set(open_txns):
                value = groups.get(group_id)
                committed = offsets.get(group_id, {})
                if value is None and not committed and group_id not in open_txns:
                    continue
                group = GroupMetadata(group_id, state_timestamp=self._now_ms())
                if value is not None:
                    group.generation_id = value.generation
                    group.protocol_type = value.protocol_type or None
                    group.protocol_name = value.protocol
                    # Members are not restored: they rejoin (their sessions did not survive the move).
                group.offsets = committed
                group.pending_txn_offsets = open_txns.get(group_id, {})
                self.groups[group_id] = group
            self.consumer.replay(consumer_groups)
            for group_id in consumer_groups:
                if group_id in self.consumer.groups and group_id not in self.groups:
                    self.groups[group_id] = GroupMetadata(group_id, state_timestamp=self._now_ms())
            self.loading.discard(partition)
            self.owned.add(partition)
            self.share_groups_loaded(share_records)
            # Markers written while the partition loaded (after the load read the log's end).
            for producer_id, commit in self._ended_while_loading.pop(partition, []):
                self._complete_transaction(partition, producer_id, commit)
        log.info("Loaded the groups of __consumer_offsets-%d", partition)

    def unload(self, partition: int) -> None:
        """No longer the coordinator of ``partition``'s groups (its leadership moved)."""
        with self._lock:
            self.owned.discard(partition)
            self.loading.discard(partition)
            self._ended_while_loading.pop(partition, None)
            self.consumer.unload(partition)
            for group_id in [g for g in self.groups if self.partition_for(g) == partition]:
                group = self.groups.pop(group_id)
                for member in group.members.values():
                    self._answer_join(member, JoinResult(E.NOT_COORDINATOR, member_id=member.member_id))
                    self._answer_sync(member, SyncResult(E.NOT_COORDINATOR))
                group.state = S.DEAD

    # --- JoinGroup -------------------------------------------------------------------------------

    def join_group(self, group_id: str, member_id: str, group_instance_id: str | None,
                   require_known_member_id: bool, client_id: str, client_host: str,
                   rebalance_timeout_ms: int, session_timeout_ms: int, protocol_type: str,
                   protocols: list[tuple[str, bytes]], respond: Callable[[JoinResult], None]) -> None:
        error = self.check_group(group_id)
        if error:
            respond(JoinResult(error, member_id=member_id))
            return
        if not self.config.min_session_timeout_ms <= session_timeout_ms <= self.config.max_session_timeout_ms:
            respond(JoinResult(E.INVALID_SESSION_TIMEOUT, member_id=member_id))
            return
        if self.is_share_group(group_id):
            respond(JoinResult(E.INCONSISTENT_GROUP_PROTOCOL, member_id=member_id))
            return
        with self._lock:
            if group_id in self.consumer.groups:
                # Kafka's classicGroupJoin: an empty consumer group becomes a classic one whatever
                # group.consumer.migration.policy says; a non-empty one takes the member in as a
                # classic member (online migration, consumer_group/classic.py).
                if not self.consumer.is_empty(group_id):
                    self._join_consumer_group(classic_members.JoinRequest(
                        group_id, member_id, group_instance_id, require_known_member_id, client_id,
                        client_host, rebalance_timeout_ms, session_timeout_ms, protocol_type, protocols),
                        respond)
                    return
                log.info("Converting the empty consumer group %s to a classic group", group_id)
                self._write(group_id, self.consumer.delete(group_id))
            group = self.groups.get(group_id)
            if group is None:
                if member_id != NO_MEMBER:
                    respond(JoinResult(E.UNKNOWN_MEMBER_ID, member_id=member_id))
                    return
                group = self.groups[group_id] = GroupMetadata(group_id, state_timestamp=self._now_ms())
            if group.is_in(S.DEAD):
                respond(JoinResult(E.COORDINATOR_NOT_AVAILABLE, member_id=member_id))
                return
            if not group.supports(protocol_type, protocols):
                respond(JoinResult(E.INCONSISTENT_GROUP_PROTOCOL, member_id=member_id))
                return
            if member_id == NO_MEMBER:
                self._join_unknown_member(group, group_instance_id, require_known_member_id, client_id,
                                          client_host, rebalance_timeout_ms, session_timeout_ms,
                                          protocol_type, protocols, respond)
            else:
                self._join_known_member(group, member_id, group_instance_id, client_id, client_host,
                                        rebalance_timeout_ms, session_timeout_ms, protocol_type, protocols,
                                        respond)
            self._try_complete_join(group)

    def _join_consumer_group(self, request: classic_members.JoinRequest,
                             respond: Callable[[JoinResult], None]) -> None:
        """A classic member's JoinGroup served by a consumer group, answered once its records are
        committed: no leader, so the member syncs as a follower and gets its assignment."""
        answer, records = self.consumer.classic_join(request)
        result = JoinResult(answer.error, answer.generation_id, answer.protocol_type, answer.protocol_name,
                            NO_MEMBER, answer.member_id)
        if not records:
            respond(result)
            return
        self.store.append(request.group_id, records, lambda error: respond(
            result if not error else JoinResult(error, member_id=answer.member_id)))

    def _join_unknown_member(self, group: GroupMetadata, instance_id: str | None, require_known: bool,
                             client_id: str, client_host: str, rebalance_timeout_ms: int,
                             session_timeout_ms: int, protocol_type: str, protocols: list[tuple[str, bytes]],
                             respond: Callable[[JoinResult], None]) -> None:
        if len(group.members) >= self.config.max_size:
            respond(JoinResult(E.GROUP_MAX_SIZE_REACHED))
            return
        new_id = f"{client_id}-{uuid.uuid4()}" if instance_id is None else f"{instance_id}-{uuid.uuid4()}"
        if instance_id is not None and instance_id in group.static_members:
            # A static member back with a new id: it replaces the old one, whose requests are fenced.
            old = group.remove(group.static_members[instance_id])
            if old is not None:
                self._answer_join(old, JoinResult(E.FENCED_INSTANCE_ID, member_id=old.member_id))
                self._answer_sync(old, SyncResult(E.FENCED_INSTANCE_ID))
            member = self._new_member(new_id, instance_id, client_id, client_host, rebalance_timeout_ms,
                                      session_timeout_ms, protocol_type, protocols)
            group.add(member)
            if group.is_in(S.STABLE) and old is not None and old.matches(protocols):
                member.assignment = old.assignment
                if group.leader_id == old.member_id or group.leader_id is None:
                    group.leader_id = new_id
                self._heartbeat(group, member)
                respond(self._join_result(group, member, E.NONE, leader_view=False))
                return
            member.await_join = respond
            self._prepare_rebalance(group, f"static member {instance_id} rejoined")
            return
        if require_known and instance_id is None:
            # KIP-394: the member gets its id first and joins again with it.
            group.pending_members.add(new_id)
            self._schedule_pending_expiry(group, new_id, session_timeout_ms)
            respond(JoinResult(E.MEMBER_ID_REQUIRED, member_id=new_id))
            return
        member = self._new_member(new_id, instance_id, client_id, client_host, rebalance_timeout_ms,
                                  session_timeout_ms, protocol_type, protocols)
        self._add_and_rebalance(group, member, respond)

    def _join_known_member(self, group: GroupMetadata, member_id: str, instance_id: str | None,
                           client_id: str, client_host: str, rebalance_timeout_ms: int,
                           session_timeout_ms: int, protocol_type: str, protocols: list[tuple[str, bytes]],
                           respond: Callable[[JoinResult], None]) -> None:
        if member_id in group.pending_members:
            group.pending_members.discard(member_id)
            joining = self._new_member(member_id, instance_id, client_id, client_host, rebalance_timeout_ms,
                                       session_timeout_ms, protocol_type, protocols)
            self._add_and_rebalance(group, joining, respond)
            return
        known = group.members.get(member_id)
        if known is None:
            respond(JoinResult(E.UNKNOWN_MEMBER_ID, member_id=member_id))
            return
        if instance_id is not None and group.static_members.get(instance_id) != member_id:
            respond(JoinResult(E.FENCED_INSTANCE_ID, member_id=member_id))
            return
        member = known
        if group.is_in(S.PREPARING_REBALANCE):
            self._update_member(group, member, rebalance_timeout_ms, session_timeout_ms, protocols, respond)
        elif group.is_in(S.COMPLETING_REBALANCE):
            if member.matches(protocols):
                # A JoinGroup repeated (its answer was lost): the same answer again.
                respond(self._join_result(group, member, E.NONE, leader_view=member_id == group.leader_id))
            else:
                self._update_member(group, member, rebalance_timeout_ms, session_timeout_ms, protocols,
                                    respond)
                self._prepare_rebalance(group, f"member {member_id} changed its protocols")
        elif group.is_in(S.STABLE):
            if member_id == group.leader_id or not member.matches(protocols):
                # The leader rejoining asks for a new assignment (a changed subscription).
                self._update_member(group, member, rebalance_timeout_ms, session_timeout_ms, protocols,
                                    respond)
                self._prepare_rebalance(group, f"member {member_id} rejoined")
            else:
                respond(self._join_result(group, member, E.NONE, leader_view=False))
        else:  # Empty or Dead: the member is not in it
            respond(JoinResult(E.UNKNOWN_MEMBER_ID, member_id=member_id))

    def _new_member(self, member_id: str, instance_id: str | None, client_id: str, client_host: str,
                    rebalance_timeout_ms: int, session_timeout_ms: int, protocol_type: str,
                    protocols: list[tuple[str, bytes]]) -> MemberMetadata:
        return MemberMetadata(member_id, instance_id, client_id, client_host, rebalance_timeout_ms,
                              session_timeout_ms, protocol_type, list(protocols), is_new=True)

    def _add_and_rebalance(self, group: GroupMetadata, member: MemberMetadata,
                           respond: Callable[[JoinResult], None]) -> None:
        member.await_join = respond
        # Only a member that arrives while a first rebalance already waits extends the initial
        # delay (Kafka's newMemberAdded): the member that starts it does not.
        if group.is_in(S.PREPARING_REBALANCE) and group.generation_id == 0:
            group.new_member_added = True
        group.add(member)
        self._heartbeat(group, member)
        self._prepare_rebalance(group, f"adding new member {member.member_id}")

    def _update_member(self, group: GroupMetadata, member: MemberMetadata, rebalance_timeout_ms: int,
                       session_timeout_ms: int, protocols: list[tuple[str, bytes]],
                       respond: Callable[[JoinResult], None]) -> None:
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        member.protocols = list(protocols)
        if member.await_join is not None and member.await_join is not respond:
            # Kafka answers an older JoinGroup still waiting for this member with this error.
            self._answer_join(member, JoinResult(E.UNKNOWN_MEMBER_ID, member_id=member.member_id))
        member.await_join = respond
        self._heartbeat(group, member)

    def _prepare_rebalance(self, group: GroupMetadata, reason: str) -> None:
        """Kafka's maybePrepareRebalance / prepareRebalance."""
        if not group.can_rebalance():
            return
        if group.is_in(S.COMPLETING_REBALANCE):
            # The assignment in progress is void: every member rejoins.
            for member in group.members.values():
                self._answer_sync(member, SyncResult(E.REBALANCE_IN_PROGRESS))
        initial = group.is_in(S.EMPTY)
        delay = (self.config.initial_rebalance_delay_ms if initial else group.rebalance_timeout_ms())
        group.transition_to(S.PREPARING_REBALANCE, self._now_ms())
        log.info("Preparing to rebalance group %s in state PreparingRebalance with old generation %d "
                 "(reason: %s)", group.group_id, group.generation_id, reason)
        join = (InitialDelayedJoin(self, group, delay, group.rebalance_timeout_ms()) if initial and delay > 0
                else DelayedJoin(self, group, delay))
        self.rebalance_purgatory.try_complete_else_watch(join, [("join", group.group_id)])

    def _try_complete_join(self, group: GroupMetadata) -> None:
        self.rebalance_purgatory.check_and_complete(("join", group.group_id))

    def can_complete_join(self, group: GroupMetadata) -> bool:
        with self._lock:
            return group.is_in(S.PREPARING_REBALANCE) and group.has_all_members_joined()

    def complete_join(self, group: GroupMetadata) -> None:
        """Kafka's onCompleteJoin: members that did not rejoin leave; a new generation starts and
        every waiting JoinGroup is answered (the leader with every member's metadata)."""
        with self._lock:
            if not group.is_in(S.PREPARING_REBALANCE):
                return
            for member in group.not_yet_rejoined():
                group.remove(member.member_id)
                log.info("Member %s of group %s did not rejoin in time: removed", member.member_id,
                         group.group_id)
            # Pending members (handed an id, not joined yet) stay: their JoinGroup starts the
            # next rebalance, or their pending time runs out (Kafka keeps them too).
            group.init_next_generation(self._now_ms())
            if group.is_in(S.EMPTY):
                self._store_group(group, lambda _error: None)
                return
            log.info("Stabilized group %s generation %d with %d members", group.group_id, group.generation_id,
                     len(group.members))
            for member in list(group.members.values()):
                self._answer_join(member, self._join_result(group, member, E.NONE,
                                                            leader_view=member.member_id == group.leader_id))
                self._heartbeat(group, member)

    def _join_result(self, group: GroupMetadata, member: MemberMetadata, error: int,
                     leader_view: bool) -> JoinResult:
        protocol = group.protocol_name
        members: tuple[tuple[str, str | None, bytes], ...] = ()
        if leader_view and protocol is not None:
            members = tuple((m.member_id, m.group_instance_id, m.metadata(protocol))
                            for m in group.members.values())
        return JoinResult(error, group.generation_id, group.protocol_type, protocol,
                          group.leader_id or NO_MEMBER, member.member_id, members)

    @staticmethod
    def _answer_join(member: MemberMetadata, result: JoinResult) -> None:
        respond, member.await_join = member.await_join, None
        if respond is not None:
            respond(result)

    @staticmethod
    def _answer_sync(member: MemberMetadata, result: SyncResult) -> None:
        respond, member.await_sync = member.await_sync, None
        if respond is not None:
            respond(result)

    # --- SyncGroup -------------------------------------------------------------------------------

    def sync_group(self, group_id: str, generation_id: int, member_id: str, group_instance_id: str | None,
                   protocol_type: str | None, protocol_name: str | None, assignments: dict[str, bytes],
                   respond: Callable[[SyncResult], None]) -> None:
        error = self.check_group(group_id)
        if error:
            respond(SyncResult(error))
            return
        with self._lock:
            if group_id in self.consumer.groups:
                error, assignment = self.consumer.classic_sync(group_id, member_id, group_instance_id,
                                                               generation_id, protocol_type, protocol_name)
                respond(SyncResult(error, protocol_type, protocol_name, assignment) if not error
                        else SyncResult(error))
                return
            group = self.groups.get(group_id)
            member = group.members.get(member_id) if group is not None else None
            if group is None or member is None:
                respond(SyncResult(E.UNKNOWN_MEMBER_ID))
                return
            if group_instance_id is not None and group.static_members.get(group_instance_id) != member_id:
                respond(SyncResult(E.FENCED_INSTANCE_ID))
                return
            if generation_id != group.generation_id:
                respond(SyncResult(E.ILLEGAL_GENERATION))
                return
            if ((protocol_type is not None and protocol_type != group.protocol_type)
                    or (protocol_name is not None and protocol_name != group.protocol_name)):
                respond(SyncResult(E.INCONSISTENT_GROUP_PROTOCOL))
                return
            if group.is_in(S.PREPARING_REBALANCE):
                respond(SyncResult(E.REBALANCE_IN_PROGRESS))
            elif group.is_in(S.COMPLETING_REBALANCE):
                member.await_sync = respond
                self._heartbeat(group, member)
                if member_id == group.leader_id:
                    self._leader_assigned(group, assignments)
            elif group.is_in(S.STABLE):
                self._heartbeat(group, member)
                respond(SyncResult(E.NONE, group.protocol_type, group.protocol_name, member.assignment))
            else:
                respond(SyncResult(E.UNKNOWN_MEMBER_ID))

    def _leader_assigned(self, group: GroupMetadata, assignments: dict[str, bytes]) -> None:
        """The leader's assignment: stored, then every member answered and the group Stable."""
        generation = group.generation_id
        for member in group.members.values():
            member.assignment = assignments.get(member.member_id, b"")

        def stored(error: int) -> None:
            with self._lock:
                if not group.is_in(S.COMPLETING_REBALANCE) or group.generation_id != generation:
                    return  # another rebalance began meanwhile; its own answers follow
                if error:
                    for member in group.members.values():
                        member.assignment = b""
                        self._answer_sync(member, SyncResult(error))
                    self._prepare_rebalance(group, "the group's assignment could not be stored")
                    return
                for member in group.members.values():
                    self._answer_sync(member, SyncResult(E.NONE, group.protocol_type, group.protocol_name,
                                                         member.assignment))
                group.transition_to(S.STABLE, self._now_ms())

        self._store_group(group, stored)

    # --- Heartbeat, LeaveGroup, sessions --------------------------------------------------------

    def heartbeat(self, group_id: str, member_id: str, group_instance_id: str | None,
                  generation_id: int) -> int:
        error = self.check_group(group_id)
        if error:
            return error
        with self._lock:
            if group_id in self.consumer.groups:
                return self.consumer.classic_heartbeat(group_id, member_id, group_instance_id, generation_id)
            group = self.groups.get(group_id)
            member = group.members.get(member_id) if group is not None else None
            if group is None or member is None or group.is_in(S.EMPTY, S.DEAD):
                return E.UNKNOWN_MEMBER_ID
            if group_instance_id is not None and group.static_members.get(group_instance_id) != member_id:
                return E.FENCED_INSTANCE_ID
            if generation_id != group.generation_id:
                return E.ILLEGAL_GENERATION
            self._heartbeat(group, member)
            if group.is_in(S.PREPARING_REBALANCE):
                return E.REBALANCE_IN_PROGRESS
            return E.NONE

    def _heartbeat(self, group: GroupMetadata, member: MemberMetadata) -> None:
        """The member's session starts again (Kafka's completeAndScheduleNextHeartbeatExpiration)."""
        member.last_heartbeat_ms = self._now_ms()
        key = ("member", group.group_id, member.member_id)
        self.heartbeat_purgatory.check_and_complete(key)  # the previous deadline is void
        timeout = NEW_MEMBER_JOIN_TIMEOUT_MS if member.is_new else member.session_timeout_ms
        self.heartbeat_purgatory.try_complete_else_watch(
            DelayedHeartbeat(self, group, member, member.last_heartbeat_ms, timeout), [key])

    def _schedule_pending_expiry(self, group: GroupMetadata, member_id: str, session_timeout_ms: int) -> None:
        self.heartbeat_purgatory.try_complete_else_watch(
            DelayedPendingMember(self, group, member_id, session_timeout_ms),
            [("pending", group.group_id, member_id)])

    def member_expired(self, group: GroupMetadata, member: MemberMetadata, since_ms: int) -> None:
        with self._lock:
            if group.members.get(member.member_id) is not member or member.last_heartbeat_ms != since_ms:
                return
            if not member.is_new and (member.await_join is not None or member.await_sync is not None):
                # A member waiting in JoinGroup or SyncGroup cannot heartbeat: its wait is its
                # heartbeat (Kafka's hasSatisfiedHeartbeat); the rebalance timeout bounds it.
                return
            log.info("Member %s in group %s has failed (session timeout %d ms): removing it",
                     member.member_id, group.group_id, member.session_timeout_ms)
            self._remove_member(group, member, "session timeout")

    def pending_member_expired(self, group: GroupMetadata, member_id: str) -> None:
        with self._lock:
            if member_id in group.pending_members:
                group.pending_members.discard(member_id)
                self._try_complete_join(group)

    def _remove_member(self, group: GroupMetadata, member: MemberMetadata, reason: str) -> None:
        group.remove(member.member_id)
        self._answer_join(member, JoinResult(E.UNKNOWN_MEMBER_ID, member_id=member.member_id))
        self._answer_sync(member, SyncResult(E.UNKNOWN_MEMBER_ID))
        if group.is_in(S.STABLE, S.COMPLETING_REBALANCE):
            self._prepare_rebalance(group, f"removing member {member.member_id} on {reason}")
        elif group.is_in(S.PREPARING_REBALANCE):
            self._try_complete_join(group)

    def leave_group(self, group_id: str, members: list[tuple[str, str | None]]) -> tuple[int, list[int]]:
        """(group error, one error per (member id, instance id)) (Kafka's handleLeaveGroup)."""
        error = self.check_group(group_id)
        if error:
            return error, []
        with self._lock:
            if group_id in self.consumer.groups:
                # Its records are written as a timeout's are (LeaveGroup answers at once here).
                errors, records = self.consumer.classic_leave(group_id, members)
                self._write(group_id, records)
                return E.NONE, errors
            group = self.groups.get(group_id)
            if group is None or group.is_in(S.DEAD):
                return E.NONE, [E.UNKNOWN_MEMBER_ID] * len(members)
            errors = []
            for member_id, instance_id in members:
                if instance_id is not None:
                    known = group.static_members.get(instance_id)
                    if known is None:
                        errors.append(E.UNKNOWN_MEMBER_ID)
                        continue
                    if member_id != NO_MEMBER and member_id != known:
                        errors.append(E.FENCED_INSTANCE_ID)
                        continue
                    member_id = known
                if member_id in group.pending_members:
                    group.pending_members.discard(member_id)
                    self._try_complete_join(group)
                    errors.append(E.NONE)
                    continue
                member = group.members.get(member_id)
                if member is None:
                    errors.append(E.UNKNOWN_MEMBER_ID)
                    continue
                log.info("Member %s has left group %s", member_id, group_id)
                self._remove_member(group, member, "LeaveGroup")
                errors.append(E.NONE)
            return E.NONE, errors


    # --- consumer groups (KIP-848) ------------------------------------------------------------------

    def consumer_group_heartbeat(self, request: HeartbeatRequest,
                                 respond: Callable[[HeartbeatResult], None]) -> None:
        """ConsumerGroupHeartbeat: the manager's answer, sent once its records are committed. A
        classic group of the same id converts when empty (its metadata tombstoned, its offsets
        kept); a non-empty one is GROUP_ID_NOT_FOUND (Kafka's answer when it does not upgrade it)."""
        error = self.check_group(request.group_id)
        if not error and self.is_share_group(request.group_id):
            error = E.GROUP_ID_NOT_FOUND
        if error:
            respond(HeartbeatResult(error, None, request.member_id or None))
            return
        with self._lock:
            group_id = request.group_id
            classic = self.groups.get(group_id)
            records: Records = []
            if classic is not None and group_id not in self.consumer.groups:
                invalid = self.consumer.check(request)
                if invalid is not None:
                    respond(invalid)
                    return
                if request.member_epoch == 0 and not classic.is_in(S.EMPTY, S.DEAD):
                    error_message = self._upgrade(classic, records)
                    if error_message is not None:
                        respond(HeartbeatResult(E.GROUP_ID_NOT_FOUND, error_message,
                                                request.member_id or None))
                        return
                elif request.member_epoch != 0 or not classic.is_in(S.EMPTY):
                    respond(HeartbeatResult(E.GROUP_ID_NOT_FOUND,
                                            f"Group {group_id} is not a consumer group.",
                                            request.member_id or None))
                    return
                elif classic.protocol_type is not None or classic.generation_id:
                    records.append((cr.encode_key(cr.GroupKey(group_id)), None))
                    classic.protocol_type, classic.protocol_name, classic.generation_id = None, None, 0
            result, more = self.consumer.heartbeat(request)
            records += more if not result.error else []
            if group_id in self.consumer.groups and group_id not in self.groups:
                self.groups[group_id] = GroupMetadata(group_id, state_timestamp=self._now_ms())
            if not self.consumer.is_empty(group_id) or classic is None:
                pass
            elif group_id in self.consumer.groups:
                self.groups[group_id].state_timestamp = self._now_ms()  # offsets' retention counts from here
        if not records:
            respond(result)
            return
        self.store.append(group_id, records, lambda error: respond(
            result if not error else HeartbeatResult(error, None, result.member_id)))

    def _upgrade(self, group: GroupMetadata, records: Records) -> str | None:
        """A non-empty classic group becomes a consumer group (Kafka's validateOnlineUpgrade and
        convertToConsumerGroup): its waiting JoinGroups and SyncGroups answered
        REBALANCE_IN_PROGRESS, its metadata tombstoned, its members moved with their
        subscriptions and last assignments. The reason it cannot, else None."""
        group_id = group.group_id
        reason = None
        if self.config.consumer_migration_policy not in ("bidirectional", "upgrade"):
            reason = "the online upgrade is disabled"
        elif group.protocol_type != classic_members.CONSUMER_PROTOCOL_TYPE or group.protocol_name is None:
            reason = "the group does not use the consumer embedded protocol"
        elif len(group.members) > self.config.consumer_max_size:
            reason = "the group size exceeds the consumer group maximum size"
        if reason is None:
            members = [classic_members.ClassicMember(
                m.member_id, m.group_instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                m.session_timeout_ms, tuple(m.protocols), m.assignment)
                       for m in group.members.values()]
            try:
                assert group.protocol_name is not None
                records += self.consumer.upgrade(group_id, group.generation_id, group.protocol_name, members)
            except classic_members.MalformedProtocol as e:
                reason = f"the embedded consumer protocol is malformed: {e}"
        if reason is not None:
            log.info("Cannot upgrade classic group %s to a consumer group: %s", group_id, reason)
            return f"Cannot upgrade classic group {group_id} to a consumer group: {reason}."
        log.info("Upgrading classic group %s (generation %d, %d members) to a consumer group", group_id,
                 group.generation_id, len(group.members))
        records.insert(0, (cr.encode_key(cr.GroupKey(group_id)), None))
        for member in list(group.members.values()):
            self._answer_join(member, JoinResult(E.REBALANCE_IN_PROGRESS, member_id=member.member_id))
            self._answer_sync(member, SyncResult(E.REBALANCE_IN_PROGRESS))
            self.heartbeat_purgatory.check_and_complete(("member", group_id, member.member_id))
        # What stays is the holder of the group's offsets, as for any consumer group: Empty,
        # without members (set directly: a conversion, not a move of the classic state machine).
        group.members.clear()
        group.pending_members.clear()
        group.static_members.clear()
        group.leader_id = group.protocol_type = group.protocol_name = None
        group.generation_id = 0
        group.state, group.state_timestamp = S.EMPTY, self._now_ms()
        self._try_complete_join(group)
        return None

    def _downgrade(self, consumer: ConsumerGroup, leaving: str, records: Records) -> None:
        """The consumer group's last consumer-protocol member left: the group becomes a classic
        group of its classic members, each with its target assignment, at generation = the group
        epoch, then rebalances (Kafka's convertToClassicGroup)."""
        group_id = consumer.group_id
        members = classic_members.classic_members_of(consumer, leaving, self.consumer.topics())
        records += self.consumer.member_tombstones(consumer)
        self.consumer.release(group_id)
        group = self.groups.get(group_id)
        if group is None:
            group = self.groups[group_id] = GroupMetadata(group_id)
        group.generation_id = consumer.group_epoch
        group.protocol_type = classic_members.CONSUMER_PROTOCOL_TYPE
        for m, assignment in members:
            assert m.classic is not None
            group.add(MemberMetadata(
                m.member_id, m.instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                m.classic.session_timeout_ms, classic_members.CONSUMER_PROTOCOL_TYPE,
                list(m.classic.supported_protocols), assignment=assignment))
        group.protocol_name = group.select_protocol()
        # Stable as Kafka builds it (a conversion, not a move of the state machine), then rebalanced.
        group.state, group.state_timestamp = S.STABLE, self._now_ms()
        records.append(self._group_record(group))
        for member in group.members.values():
            self._heartbeat(group, member)
        self._prepare_rebalance(group, f"Downgrade group {group_id} from consumer to classic.")

    def on_topics_changed(self) -> None:
        """The broker's topics changed (created, deleted, partitions added)."""
        self.consumer.on_topics_changed()

    def describe_consumer_group(self, group_id: str) -> tuple[int, ConsumerGroup | None]:
        """(error, the consumer group; None: not one): ConsumerGroupDescribe."""
        error = self.check_group(group_id)
        if error:
            return error, None
        with self._lock:
            return E.NONE, self.consumer.describe(group_id)

    def _write(self, group_id: str, records: Records) -> None:
        """Records of a change no request waits for (a timeout, a topic change, a conversion)."""
        def stored(error: int) -> None:
            if error:
                log.warning("Could not store a change of consumer group %s: error %d", group_id, error)

        if records:
            self.store.append(group_id, records, stored)

    def _consumer_group_busy(self, group_id: str) -> bool:
        """A consumer group with members: its offsets do not expire."""
        return group_id in self.consumer.groups and not self.consumer.is_empty(group_id)

    def _consumer_group_subscriptions(self, group_id: str) -> set[str] | None:
        """The topics a consumer group subscribes to (OffsetDelete's GROUP_SUBSCRIBED_TO_TOPIC);
        None for a classic group."""
        if group_id not in self.consumer.groups:
            return None
        return self.consumer.subscribed_topic_names(group_id)

    # --- offsets: the OffsetManager's (offsets.py) ------------------------------------------------

    def commit_offsets(self, group_id: str, member_id: str, group_instance_id: str | None, generation_id: int,
                       offsets: dict[tuple[str, int], CommittedOffset],
                       respond: Callable[[int], None], group_id_not_found: bool = False) -> None:
        with self._lock:
            if group_id in self.consumer.groups and not self.check_group(group_id):
                # Kafka's ConsumerGroup.validateOffsetCommit; then committed as an admin's commit
                # to the (classic-Empty) holder of the group's offsets.
                error = self.consumer.validate_offset_commit(group_id, member_id, generation_id, False,
                                                             9 if group_id_not_found else 8)
                if error:
                    respond(error)
                    return
                member_id, group_instance_id, generation_id = NO_MEMBER, None, -1
        self.offset_manager.commit_offsets(group_id, member_id, group_instance_id, generation_id, offsets,
                                           respond, group_id_not_found)

    def fetch_offsets(self, group_id: str, partitions: list[tuple[str, int]] | None,
                      member_id: str | None = None, member_epoch: int = -1
                      ) -> tuple[int, dict[tuple[str, int], CommittedOffset | None]]:
        """``member_id`` / ``member_epoch``: OffsetFetch v9+'s, checked for a consumer group
        (Kafka's validateOffsetFetch; a classic group ignores them)."""
        with self._lock:
            if group_id in self.consumer.groups and not self.check_group(group_id):
                error = self.consumer.validate_offset_fetch(group_id, member_id, member_epoch)
                if error:
                    return error, {}
        return self.offset_manager.fetch_offsets(group_id, partitions)

    def delete_offsets(self, group_id: str, partitions: list[tuple[str, int]],
                       respond: Callable[[int, dict[tuple[str, int], int]], None]) -> None:
        self.offset_manager.delete_offsets(group_id, partitions, respond)

    def cleanup_expired_offsets(self, retention_ms: int) -> int:
        """Expired offsets removed (OffsetManager), then the empty consumer groups left without
        offsets deleted with their tombstones (Kafka's cleanupGroupMetadata, maybeDeleteGroup)."""
        expired = self.offset_manager.cleanup_expired_offsets(retention_ms)
        with self._lock:
            for group_id in list(self.consumer.groups):
                holder = self.groups.get(group_id)
                if self.check_group(group_id) or not self.consumer.is_empty(group_id) or (
                        holder is not None and (holder.has_offsets() or not holder.is_in(S.EMPTY))):
                    continue
                self._write(group_id, self.consumer.delete(group_id))
                if holder is not None:
                    del self.groups[group_id]
        return expired

    def commit_txn_offsets(self, group_id: str, producer_id: int, producer_epoch: int, member_id: str,
                           group_instance_id: str | None, generation_id: int,
                           offsets: dict[tuple[str, int], CommittedOffset],
                           respond: Callable[[int], None]) -> None:
        """TxnOffsetCommit (Kafka's handleTxnCommitOffsets), see OffsetManager.commit_txn_offsets."""
        with self._lock:
            if group_id in self.consumer.groups and not self.check_group(group_id) and member_id != NO_MEMBER:
                error = self.consumer.validate_offset_commit(group_id, member_id, generation_id, True, 9)
                if error:
                    respond(error)
                    return
                member_id, group_instance_id, generation_id = NO_MEMBER, None, -1
        self.offset_manager.commit_txn_offsets(group_id, producer_id, producer_epoch, member_id,
                                               group_instance_id, generation_id, offsets, respond)

    def unstable_partitions(self, group_id: str, partitions: list[tuple[str, int]]) -> set[tuple[str, int]]:
        return self.offset_manager.unstable_partitions(group_id, partitions)

    def complete_transaction(self, partition: int, producer_id: int, commit: bool) -> None:
        """A transaction marker of ``producer_id`` was written to ``partition`` of
        __consumer_offsets (Kafka's onTransactionCompleted, after WriteTxnMarkers' append): the
        producer's pending offsets in that partition's groups committed or dropped. A partition
        still loading applies it once loaded; one not coordinated here ignores it."""
        with self._lock:
            if partition in self.loading:
                self._ended_while_loading.setdefault(partition, []).append((producer_id, commit))
                return
            if partition in self.owned:
                self._complete_transaction(partition, producer_id, commit)

    def _complete_transaction(self, partition: int, producer_id: int, commit: bool) -> None:
        groups = [g for g in self.groups.values()
                  if producer_id in g.pending_txn_offsets and self.partition_for(g.group_id) == partition]
        if groups:
            moved = self.offset_manager.complete_transaction(groups, producer_id, commit)
            log.debug("Transaction of producer %d %s in __consumer_offsets-%d: %d offsets committed",
                      producer_id, "committed" if commit else "aborted", partition, moved)

    # --- describe, list, delete ------------------------------------------------------------------

    def describe_group(self, group_id: str) -> tuple[int, GroupSummary | None]:
        """(error, the group as DescribeGroups shows it: None if unknown). As Kafka's summary,
        members' metadata and assignments only for a Stable group."""
        error = self.check_group(group_id)
        if error:
            return error, None
        with self._lock:
            group = self.groups.get(group_id)
            if group is None or group_id in self.consumer.groups:
                return E.NONE, None  # Kafka: "not a classic group", described as Dead / GROUP_ID_NOT_FOUND
            stable = group.is_in(S.STABLE)
            protocol = group.protocol_name or ""
            members = tuple(MemberSummary(
                m.member_id, m.group_instance_id, m.client_id, m.client_host,
                m.metadata(protocol) if stable and protocol else b"", m.assignment if stable else b"")
                for m in group.members.values())
            return E.NONE, GroupSummary(group.state.value, group.protocol_type or "",
                                        protocol if stable else "", members)

    def list_groups(self, states: set[str] | None = None,
                    types: set[str] | None = None) -> tuple[int, list[tuple[str, str, str, str]]]:
        """(error, [(group id, protocol type, state, type)]) of the groups coordinated here; a
        consumer group (KIP-848) is of type "consumer" and protocol type "consumer", with its
        ConsumerGroupState. ``states`` and ``types`` filter, case-insensitively as Kafka."""
        wanted_states = {s.lower() for s in states} if states else None
        wanted_types = {t.lower() for t in types} if types else None
        with self._lock:
            if self.loading:
                return E.COORDINATOR_LOAD_IN_PROGRESS, []
            listed = []
            for g in self.groups.values():
                consumer = self.consumer.groups.get(g.group_id)
                if consumer is not None:
                    row = (g.group_id, "consumer", consumer.state.value, "consumer")
                elif g.is_in(S.DEAD):
                    continue
                else:
                    row = (g.group_id, g.protocol_type or "", g.state.value, "classic")
                if (wanted_states is None or row[2].lower() in wanted_states) and \
                        (wanted_types is None or row[3] in wanted_types):
                    listed.append(row)
            return E.NONE, listed

    def delete_groups(self, group_ids: list[str], respond: Callable[[dict[str, int]], None]) -> None:
        results: dict[str, int] = {}
        deletable: list[GroupMetadata] = []
        with self._lock:
            for group_id in group_ids:
                error = self.check_group(group_id)
                group = self.groups.get(group_id)
                if error:
                    results[group_id] = error
                elif group is None or group.is_in(S.DEAD):
                    results[group_id] = E.GROUP_ID_NOT_FOUND
                elif group_id in self.consumer.groups and not self.consumer.is_empty(group_id):
                    results[group_id] = E.NON_EMPTY_GROUP
                elif not group.is_in(S.EMPTY):
                    results[group_id] = E.NON_EMPTY_GROUP
                else:
                    deletable.append(group)
        remaining = len(deletable)
        if not remaining:
            respond(results)
            return
        lock = threading.Lock()

        def deleted(group: GroupMetadata, error: int) -> None:
            nonlocal remaining
            with self._lock:
                if not error and self.groups.get(group.group_id) is group:
                    group.transition_to(S.DEAD, self._now_ms())
                    del self.groups[group.group_id]
            with lock:
                results[group.group_id] = error
                remaining -= 1
                last = remaining == 0
            if last:
                respond(results)

        for group in deletable:
            # Kafka's deleteAllOffsets: the committed offsets and those only pending in a transaction.
            partitions = dict.fromkeys(group.offsets)
            for pending in group.pending_txn_offsets.values():
                partitions.update(dict.fromkeys(pending))
            tombstones: list[tuple[bytes, bytes | None]] = [
                (cr.encode_key(cr.OffsetKey(group.group_id, t, p)), None) for t, p in partitions]
            tombstones.append((cr.encode_key(cr.GroupKey(group.group_id)), None))
            with self._lock:
                tombstones += self.consumer.delete(group.group_id)
            self.store.append(group.group_id, tombstones, _bind(deleted, group))

    def _store_group(self, group: GroupMetadata, done: Callable[[int], None]) -> None:
        """The group's metadata record for its current generation (Kafka's storeGroup)."""
        self.store.append(group.group_id, [self._group_record(group)], done)

    @staticmethod
    def _group_record(group: GroupMetadata) -> tuple[bytes, bytes | None]:
        M = cr.MEMBER_METADATA.cls
        protocol = group.protocol_name
        value = cr.GROUP_METADATA_VALUE.cls(
            protocol_type=group.protocol_type or "", generation=group.generation_id, protocol=protocol,
            leader=group.leader_id, current_state_timestamp=group.state_timestamp,
            members=[M(member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
                       client_host=m.client_host, rebalance_timeout=m.rebalance_timeout_ms,
                       session_timeout=m.session_timeout_ms,
                       subscription=m.metadata(protocol) if protocol else b"", assignment=m.assignment)
                     for m in group.members.values()])
        return cr.encode_key(cr.GroupKey(group.group_id)), cr.encode_group_value(value)



def _bind(fn: Callable[[GroupMetadata, int], None], group: GroupMetadata) -> Callable[[int], None]:
    return lambda error: fn(group, error)
