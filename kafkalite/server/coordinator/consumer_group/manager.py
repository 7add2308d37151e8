"""The consumer groups of the consumer rebalance protocol (KIP-848) a coordinator holds: Kafka's
GroupMetadataManager.consumerGroupHeartbeat and what follows from it.

A heartbeat is validated (INVALID_REQUEST, UNSUPPORTED_ASSIGNOR, INVALID_REGULAR_EXPRESSION), its
member found or created (static members by instance id; UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH,
UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID, GROUP_MAX_SIZE_REACHED), its metadata updated; a
changed subscription (or subscribed topics' partitions) bumps the group epoch, and a group epoch
ahead of the assignment epoch runs the assignor for a new target assignment; then the member
reconciles towards its target (reconciliation.py). Every change is returned as Kafka 4's
``__consumer_offsets`` records (coordinator_records 3-8), which the caller appends and answers
after; changes not caused by a request (a session or rebalance timeout, a topic created) go to
``write``. The session of each member and the revocation deadline of a member that must revoke
run on ``timer``; everything runs under the coordinator's lock (``lock``).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, NamedTuple, Protocol

from kafkalite.controller.group_configs import GroupConfigView
from kafkalite.protocol import coordinator_records as cr
from kafkalite.protocol import error_codes as E

from ..settings import GroupConfig
from . import classic
from .assignors import ASSIGNORS, Assignment, TopicId
from .classic import may_downgrade
from .model import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ClassicMemberMetadata,
    ConsumerGroup,
    ConsumerGroupMember,
    ConsumerGroupState,
)
from .reconciliation import MemberState, Reconciled, reconcile
from .regex import InvalidRegex, compile_topic_regex, matching_topics

log = logging.getLogger("kafkalite.server.coordinator.consumer_group")

Records = list[tuple[bytes, bytes | None]]
TopicsView = Mapping[str, tuple[TopicId, int]]  # topic name -> (topic id, partition count)


class Timer(Protocol):
    """Kafka's CoordinatorTimer: one pending callback per key, a new one replacing it."""

    def schedule(self, key: Hashable, delay_ms: int, fn: Callable[[], None]) -> None: ...

    def cancel(self, key: Hashable) -> None: ...


class HeartbeatRequest(NamedTuple):
    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    owned: Assignment | None = None  # TopicPartitions: what the member owns (None: unchanged)
    client_id: str = ""
    client_host: str = ""
    version: int = 1


@dataclass(frozen=True)
class HeartbeatResult:
    error: int = E.NONE
    message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: Assignment | None = None


def _error(code: int, message: str, member_id: str | None = None, epoch: int = 0) -> HeartbeatResult:
    return HeartbeatResult(code, message, member_id, epoch)


class _Invalid(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def _full(owned: Iterable[Any]) -> Assignment:
    return {t: frozenset(ps) for t, ps in owned if ps}


def _tps(assignment: Assignment) -> list[Any]:
    T = cr.CG_TOPIC_PARTITIONS.cls
    return [T(topic_id=t, partitions=sorted(ps)) for t, ps in sorted(assignment.items()) if ps]


class ConsumerGroupManager:
    def __init__(
        self,
        config: GroupConfig,
        topics: Callable[[], TopicsView],
        timer: Timer,
        write: Callable[[str, Records], None],
        lock: threading.RLock | None = None,
        partition_for: Callable[[str], int] | None = None,
        group_config: Callable[[str], GroupConfigView] | None = None,
    ) -> None:
        """``group_config``: a group's configs (ConfigResource GROUP) now, whose
        consumer.session.timeout.ms / consumer.heartbeat.interval.ms override ``config``'s."""
        self.config = config
        self.group_config = group_config
        self.topics = topics
        self.timer = timer
        self.write = write
        self._lock = lock or threading.RLock()
        self.partition_for = partition_for or (lambda group_id: 0)
        self.groups: dict[str, ConsumerGroup] = {}
        # Online downgrade (set by the coordinator): called instead of removing the last member of
        # the consumer protocol when the others are classic members and the policy allows it.
        self.downgrade: Callable[[ConsumerGroup, str, Records], None] | None = None
        self._join_deadlines: set[tuple[str, str]] = set()  # classic members asked to rejoin

    # --- the heartbeat ------------------------------------------------------------------------

    def heartbeat(self, req: HeartbeatRequest) -> tuple[HeartbeatResult, Records]:
        """The answer to a ConsumerGroupHeartbeat and the records to append before it is sent."""
        try:
            self._validate(req)
        except _Invalid as e:
            return _error(e.code, e.message, req.member_id or None), []
        with self._lock:
            records: Records = []
            try:
                if req.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
                    return self._leave(req, records), records
                return self._heartbeat(req, records), records
            except _Invalid as e:
                return _error(e.code, e.message, req.member_id or None), []

    def check(self, req: HeartbeatRequest) -> HeartbeatResult | None:
        """The error a heartbeat gets before its group is looked at (None: valid)."""
        try:
            self._validate(req)
        except _Invalid as e:
            return _error(e.code, e.message, req.member_id or None)
        return None

    def _validate(self, req: HeartbeatRequest) -> None:
        """Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid."""

        def bad(message: str) -> _Invalid:
            return _Invalid(E.INVALID_REQUEST, message)

        if not req.group_id:
            raise bad("GroupId can't be empty.")
        if req.instance_id is not None and not req.instance_id:
            raise bad("InstanceId can't be empty.")
        if req.rack_id is not None and not req.rack_id:
            raise bad("RackId can't be empty.")
        if req.version >= 1 and not req.member_id:
            raise bad("MemberId can't be empty.")
        epoch = req.member_epoch
        if epoch > 0 or epoch == LEAVE_GROUP_MEMBER_EPOCH:
            if not req.member_id:
                raise bad("MemberId can't be empty.")
        elif epoch == 0:
            if req.rebalance_timeout_ms == -1:
                raise bad("RebalanceTimeoutMs must be provided in first request.")
            if req.owned is None or any(req.owned.values()):
                raise bad("TopicPartitions must be empty when (re-)joining.")
            if not req.subscribed_topic_names and not req.subscribed_topic_regex:
                raise bad("SubscribedTopicNames or SubscribedTopicRegex must be set in first request.")
        elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            if not req.member_id:
                raise bad("MemberId can't be empty.")
            if req.instance_id is None:
                raise bad("InstanceId can't be null.")
        else:
            raise bad(f"MemberEpoch is invalid: {epoch}.")
        if req.server_assignor is not None and req.server_assignor not in self.config.consumer_assignors:
            raise _Invalid(
                E.UNSUPPORTED_ASSIGNOR,
                f"ServerAssignor {req.server_assignor} is not supported. "
                f"Supported assignors: {', '.join(self.config.consumer_assignors)}.",
            )
        if req.subscribed_topic_regex:
            try:
                compile_topic_regex(req.subscribed_topic_regex)
            except InvalidRegex as e:
                raise _Invalid(E.INVALID_REGULAR_EXPRESSION, str(e)) from None

    def _heartbeat(self, req: HeartbeatRequest, records: Records) -> HeartbeatResult:
        group = self.groups.get(req.group_id)
        if group is None:
            if req.member_epoch != 0:
                raise _Invalid(E.GROUP_ID_NOT_FOUND, f"Consumer group {req.group_id} not found.")
            group = ConsumerGroup(req.group_id)
        member = self._member_for(group, req, records)
        if req.member_epoch != 0:
            self._check_epoch(member, req)
        elif member.member_id in group.members:
            # A known member back with epoch 0 (it lost its partitions): it starts over.
            member.rec = Reconciled()
        joined = group.members.get(member.member_id) is not member
        if joined:
            self.groups[group.group_id] = group
            group.add(member)
        before = member.metadata_key()
        self._update_metadata(member, req)
        bumped = joined and not records  # a static member replacing another keeps the epoch
        if member.metadata_key() != before or joined:
            records.append(self._member_record(group.group_id, member))
        if (member.subscribed_topic_names, member.subscribed_topic_regex) != (before[4], before[5]):
            bumped = True
        if self._refresh_subscribed_topics(group, records) or bumped:
            self._bump(group, records)
        self._maybe_assign(group, records)
        old_assigned = member.rec.assigned
        self._reconcile(group, member, req.owned if req.member_epoch != 0 else {}, records, force=joined)
        self._schedule_session(group, member)
        full = req.member_epoch == 0 or (
            req.rebalance_timeout_ms != -1
            and req.subscribed_topic_names is not None
            and req.owned is not None
        )
        changed = member.rec.assigned != old_assigned
        return HeartbeatResult(
            E.NONE,
            None,
            member.member_id,
            member.member_epoch,
            self._heartbeat_interval_ms(group.group_id),
            member.rec.assigned if full or changed else None,
        )

    def _member_for(
        self, group: ConsumerGroup, req: HeartbeatRequest, records: Records
    ) -> ConsumerGroupMember:
        member_id = req.member_id or (str(uuid.uuid4()) if req.version == 0 else "")
        if req.instance_id is not None:
            existing_id = group.static_members.get(req.instance_id)
            existing = group.members.get(existing_id) if existing_id is not None else None
            if req.member_epoch == 0:
                if existing is None:
                    self._check_size(group)
                    return ConsumerGroupMember(member_id, instance_id=req.instance_id)
                if existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                    raise _Invalid(
                        E.UNRELEASED_INSTANCE_ID,
                        f"Static member {existing.member_id} with instance id {req.instance_id} "
                        "is not released.",
                    )
                # The static member comes back under a new id: it takes the old one's place and
                # assignment, at its epoch before it left (Kafka's consumerGroupStaticMemberGroupLeave).
                old = group.remove(existing.member_id)
                assert old is not None
                self.timer.cancel(("session", group.group_id, old.member_id))
                self.timer.cancel(("revocation", group.group_id, old.member_id))
                records.extend(self._member_tombstones(group.group_id, old.member_id))
                new = replace(
                    old, member_id=member_id, rec=replace(old.rec, member_epoch=old.rec.previous_member_epoch)
                )
                group.target[member_id] = old.rec.assigned
                records.append(self._target_record(group.group_id, member_id, old.rec.assigned))
                return new
            if existing is None:
                raise _Invalid(E.UNKNOWN_MEMBER_ID, f"Instance id {req.instance_id} is unknown.")
            if existing.member_id != req.member_id:
                raise _Invalid(
                    E.FENCED_INSTANCE_ID,
                    f"Static member {req.member_id} with instance id "
                    f"{req.instance_id} was fenced by member {existing.member_id}.",
                )
            return existing
        member = group.members.get(member_id)
        if member is None:
            if req.member_epoch != 0:
                raise _Invalid(
                    E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group.group_id}."
                )
            self._check_size(group)
            member = ConsumerGroupMember(member_id)
        return member

    def _check_size(self, group: ConsumerGroup) -> None:
        if len(group.members) >= self.config.consumer_max_size:
            raise _Invalid(
                E.GROUP_MAX_SIZE_REACHED,
                f"The consumer group has reached its maximum capacity of "
                f"{self.config.consumer_max_size} members.",
            )

    @staticmethod
    def _check_epoch(member: ConsumerGroupMember, req: HeartbeatRequest) -> None:
        """Kafka's throwIfConsumerGroupMemberEpochIsInvalid (with the lost-response rule)."""
        epoch = member.member_epoch
        if req.member_epoch > epoch:
            raise _Invalid(
                E.FENCED_MEMBER_EPOCH,
                f"The consumer group member has a greater member epoch "
                f"({req.member_epoch}) than the one known by the group coordinator ({epoch}).",
            )
        if req.member_epoch < epoch:
            # The member may have missed the answer that moved it to ``epoch``: accepted while it
            # asks from the previous epoch and owns nothing beyond what it has now.
            owned = req.owned
            if (
                req.member_epoch == member.rec.previous_member_epoch
                and owned is not None
                and all(ps <= member.rec.assigned.get(t, frozenset()) for t, ps in owned.items())
            ):
                return
            raise _Invalid(
                E.FENCED_MEMBER_EPOCH,
                f"The consumer group member has a smaller member epoch "
                f"({req.member_epoch}) than the one known by the group coordinator ({epoch}).",
            )

    @staticmethod
    def _update_metadata(member: ConsumerGroupMember, req: HeartbeatRequest) -> None:
        if req.rack_id is not None:
            member.rack_id = req.rack_id
        if req.client_id:
            member.client_id = req.client_id
        if req.client_host:
            member.client_host = req.client_host
        if req.rebalance_timeout_ms != -1:
            member.rebalance_timeout_ms = req.rebalance_timeout_ms
        if req.subscribed_topic_names is not None:
            member.subscribed_topic_names = tuple(sorted(set(req.subscribed_topic_names)))
        if req.subscribed_topic_regex is not None:
            member.subscribed_topic_regex = req.subscribed_topic_regex or None
        if req.server_assignor is not None:
            member.server_assignor = req.server_assignor

    # --- leaving and fencing -----------------------------------------------------------------

    def _leave(self, req: HeartbeatRequest, records: Records) -> HeartbeatResult:
        group = self.groups.get(req.group_id)
        if group is None:
            raise _Invalid(E.GROUP_ID_NOT_FOUND, f"Consumer group {req.group_id} not found.")
        if req.instance_id is not None:
            member_id = group.static_members.get(req.instance_id)
            if member_id is None:
                raise _Invalid(E.UNKNOWN_MEMBER_ID, f"Instance id {req.instance_id} is unknown.")
            if member_id != req.member_id:
                raise _Invalid(
                    E.FENCED_INSTANCE_ID, f"Static member {req.member_id} was fenced by {member_id}."
                )
        member = group.members.get(req.member_id)
        if member is None:
            raise _Invalid(
                E.UNKNOWN_MEMBER_ID, f"Member {req.member_id} is not a member of group {group.group_id}."
            )
        if req.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            # A static member's temporary leave: it keeps its partitions for its session.
            member.rec = replace(
                member.rec,
                previous_member_epoch=member.member_epoch,
                member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH,
            )
            records.append(self._current_record(group.group_id, member))
            self._schedule_session(group, member)
            log.info("Static member %s of group %s left temporarily", member.member_id, group.group_id)
            return HeartbeatResult(
                E.NONE,
                None,
                member.member_id,
                LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                self._heartbeat_interval_ms(group.group_id),
            )
        log.info("Member %s has left consumer group %s", member.member_id, group.group_id)
        self._remove_member(group, member, records)
        return HeartbeatResult(
            E.NONE, None, member.member_id, LEAVE_GROUP_MEMBER_EPOCH,
            self._heartbeat_interval_ms(group.group_id),
        )

    def _remove_member(self, group: ConsumerGroup, member: ConsumerGroupMember, records: Records) -> None:
        """The member out of the group, its partitions free, the group epoch bumped (Kafka's
        consumerGroupFenceMember); or the group downgraded to a classic one without it."""
        self._cancel_timers(group.group_id, member.member_id)
        if self.downgrade is not None and may_downgrade(
            group, member.member_id, self.config.consumer_migration_policy, self.config.max_size
        ):
            log.info("Downgrading consumer group %s to a classic group: member %s left", group.group_id,
                     member.member_id)
            self.downgrade(group, member.member_id, records)
            return
        group.remove(member.member_id)
        records.extend(self._member_tombstones(group.group_id, member.member_id))
        self._refresh_subscribed_topics(group, records)
        self._bump(group, records)
        self._maybe_assign(group, records)

    def _expired(self, group_id: str, member_id: str, why: str) -> None:
        """A member's session or revocation deadline passed: it is fenced."""
        with self._lock:
            group = self.groups.get(group_id)
            member = group.members.get(member_id) if group is not None else None
            if group is None or member is None:
                return
            if why == "revocation" and member.rec.state != MemberState.UNREVOKED_PARTITIONS:
                return
            if why == "join":
                self._join_deadlines.discard((group_id, member_id))
            log.info("Member %s of consumer group %s fenced: its %s timed out", member_id, group_id, why)
            records: Records = []
            self._remove_member(group, member, records)
            self.write(group_id, records)

    def _schedule_revocation(self, group: ConsumerGroup, member: ConsumerGroupMember) -> None:
        """A member that must revoke has its rebalance timeout to do it, or it is fenced."""
        group_id, member_id = group.group_id, member.member_id
        self.timer.schedule(
            ("revocation", group_id, member_id),
            max(member.rebalance_timeout_ms, 0),
            lambda: self._expired(group_id, member_id, "revocation"),
        )

    def _schedule_session(self, group: ConsumerGroup, member: ConsumerGroupMember) -> None:
        group_id, member_id = group.group_id, member.member_id
        self.timer.schedule(
            ("session", group_id, member_id),
            member.classic.session_timeout_ms if member.classic is not None
            else self._session_timeout_ms(group_id),
            lambda: self._expired(group_id, member_id, "session"),
        )

    def _schedule_classic_timeout(
        self, group: ConsumerGroup, member: ConsumerGroupMember, kind: str, if_absent: bool = False
    ) -> None:
        """A classic member's rebalance timeout to rejoin ("join") or to sync ("sync")."""
        group_id, member_id = group.group_id, member.member_id
        if kind == "join":
            if if_absent and (group_id, member_id) in self._join_deadlines:
                return
            self._join_deadlines.add((group_id, member_id))
        self.timer.schedule(
            (kind, group_id, member_id),
            max(member.rebalance_timeout_ms, 0),
            lambda: self._expired(group_id, member_id, kind),
        )

    def _cancel_timers(self, group_id: str, member_id: str, kinds: Iterable[str] = (
            "session", "revocation", "join", "sync")) -> None:
        for kind in kinds:
            self.timer.cancel((kind, group_id, member_id))
        self._join_deadlines.discard((group_id, member_id))

    # Kafka's consumerGroupSessionTimeoutMs / consumerGroupHeartbeatIntervalMs: the group's own
    # config if it set one, else the broker's; read at each heartbeat, so a change applies at the next.
    def _session_timeout_ms(self, group_id: str) -> int:
        view = self.group_config(group_id) if self.group_config is not None else None
        if view is not None and "consumer.session.timeout.ms" in view.overrides:
            return view.consumer_session_timeout_ms
        return self.config.consumer_session_timeout

    def _heartbeat_interval_ms(self, group_id: str) -> int:
        view = self.group_config(group_id) if self.group_config is not None else None
        if view is not None and "consumer.heartbeat.interval.ms" in view.overrides:
            return view.consumer_heartbeat_interval_ms
        return self.config.consumer_heartbeat_interval

    # --- epochs, target assignment, reconciliation --------------------------------------------

    def _bump(self, group: ConsumerGroup, records: Records) -> None:
        group.group_epoch += 1
        records.append(self._epoch_record(group))

    @staticmethod
    def _epoch_record(group: ConsumerGroup) -> tuple[bytes, bytes | None]:
        return (
            cr.encode_key(cr.ConsumerGroupKey(cr.CONSUMER_GROUP_METADATA, group.group_id)),
            cr.encode_consumer_group_value(
                cr.CONSUMER_GROUP_METADATA, cr.CONSUMER_GROUP_METADATA_VALUE.cls(epoch=group.group_epoch)
            ),
        )

    @staticmethod
    def _assignment_epoch_record(group: ConsumerGroup) -> tuple[bytes, bytes | None]:
        return (
            cr.encode_key(cr.ConsumerGroupKey(cr.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA, group.group_id)),
            cr.encode_consumer_group_value(
                cr.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA,
                cr.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE.cls(assignment_epoch=group.assignment_epoch),
            ),
        )

    def _subscribed_names(self, group: ConsumerGroup, topics: TopicsView) -> dict[str, set[str]]:
        """Each member's subscribed topic names that exist (its regex evaluated)."""
        out: dict[str, set[str]] = {}
        for m in group.members.values():
            names = {t for t in m.subscribed_topic_names if t in topics}
            if m.subscribed_topic_regex:
                try:
                    names |= matching_topics(m.subscribed_topic_regex, set(topics))
                except InvalidRegex:
                    pass
            out[m.member_id] = names
        return out

    def _refresh_subscribed_topics(self, group: ConsumerGroup, records: Records) -> bool:
        """The subscribed topics' ids and partition counts as the broker's metadata has them; a
        change is written (ConsumerGroupPartitionMetadata) and asks for a new group epoch."""
        topics = self.topics()
        names = set().union(*self._subscribed_names(group, topics).values()) if group.members else set()
        now = {n: topics[n] for n in sorted(names)}
        if now == group.subscribed_topics:
            return False
        group.subscribed_topics = now
        records.append(self._partition_metadata_record(group))
        return True

    def _maybe_assign(self, group: ConsumerGroup, records: Records) -> None:
        """A group epoch ahead of the assignment's: the assignor's new target (Kafka's
        TargetAssignmentBuilder), written for the members whose target changed."""
        if group.group_epoch <= group.assignment_epoch:
            return
        topics = self.topics()
        by_name = self._subscribed_names(group, topics)
        subs = {m: frozenset(topics[n][0] for n in names) for m, names in by_name.items()}
        counts = {
            tid: n for name, (tid, n) in topics.items() if any(name in names for names in by_name.values())
        }
        new = ASSIGNORS[self.preferred_assignor(group)](subs, counts, group.target)
        for member_id, assignment in new.items():
            if group.target.get(member_id, {}) != assignment or member_id not in group.target:
                records.append(self._target_record(group.group_id, member_id, assignment))
        group.target = new
        group.assignment_epoch = group.group_epoch
        records.append(self._assignment_epoch_record(group))

    def preferred_assignor(self, group: ConsumerGroup) -> str:
        """The assignor most members ask for, else the first configured (Kafka's
        computePreferredServerAssignor)."""
        asked: dict[str, int] = {}
        for m in group.members.values():
            if m.server_assignor:
                asked[m.server_assignor] = asked.get(m.server_assignor, 0) + 1
        if asked:
            return max(sorted(asked), key=lambda a: asked[a])
        return self.config.consumer_assignors[0]

    def _reconcile(
        self,
        group: ConsumerGroup,
        member: ConsumerGroupMember,
        owned: Assignment | None,
        records: Records,
        force: bool = False,
    ) -> None:
        """``force``: the member's current assignment is written even unchanged (a new member id)."""
        before = member.rec
        if before.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            return
        after = reconcile(
            before,
            group.assignment_epoch,
            group.target.get(member.member_id, {}),
            owned,
            lambda t, p: group.holder(t, p, member.member_id) is not None,
        )
        if after == before and before.member_epoch != 0 and not force:
            return
        member.rec = after
        records.append(self._current_record(group.group_id, member))
        key = ("revocation", group.group_id, member.member_id)
        if (
            after.state == MemberState.UNREVOKED_PARTITIONS
            and before.state != MemberState.UNREVOKED_PARTITIONS
        ):
            self._schedule_revocation(group, member)
        elif after.state != MemberState.UNREVOKED_PARTITIONS:
            self.timer.cancel(key)

    # --- topics change ---------------------------------------------------------------------------

    def on_topics_changed(self) -> None:
        """Topics were created, deleted or grew: the groups whose subscribed topics changed get a
        new epoch and target (Kafka re-evaluates regexes and subscribed metadata alike)."""
        with self._lock:
            for group in list(self.groups.values()):
                if not group.members:
                    continue
                records: Records = []
                if self._refresh_subscribed_topics(group, records):
                    self._bump(group, records)
                    self._maybe_assign(group, records)
                    self.write(group.group_id, records)

    # --- records -------------------------------------------------------------------------------

    @staticmethod
    def _member_record(group_id: str, m: ConsumerGroupMember) -> tuple[bytes, bytes | None]:
        return (
            cr.encode_key(cr.ConsumerGroupKey(cr.CONSUMER_GROUP_MEMBER_METADATA, group_id, m.member_id)),
            cr.encode_consumer_group_value(
                cr.CONSUMER_GROUP_MEMBER_METADATA,
                cr.CONSUMER_GROUP_MEMBER_METADATA_VALUE.cls(
                    instance_id=m.instance_id,
                    rack_id=m.rack_id,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    subscribed_topic_names=list(m.subscribed_topic_names),
                    subscribed_topic_regex=m.subscribed_topic_regex,
                    rebalance_timeout_ms=m.rebalance_timeout_ms,
                    server_assignor=m.server_assignor,
                    classic_member_metadata=None if m.classic is None else cr.CLASSIC_MEMBER_METADATA.cls(
                        session_timeout_ms=m.classic.session_timeout_ms,
                        supported_protocols=[
                            cr.CLASSIC_MEMBER_METADATA["supported_protocols"].cls(name=n, metadata=md)
                            for n, md in m.classic.supported_protocols
                        ],
                    ),
                ),
            ),
        )

    @staticmethod
    def _target_record(group_id: str, member_id: str, a: Assignment) -> tuple[bytes, bytes | None]:
        return (
            cr.encode_key(
                cr.ConsumerGroupKey(cr.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER, group_id, member_id)
            ),
            cr.encode_consumer_group_value(
                cr.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
                cr.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE.cls(topic_partitions=_tps(a)),
            ),
        )

    @staticmethod
    def _current_record(group_id: str, m: ConsumerGroupMember) -> tuple[bytes, bytes | None]:
        return (
            cr.encode_key(
                cr.ConsumerGroupKey(cr.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, group_id, m.member_id)
            ),
            cr.encode_consumer_group_value(
                cr.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT,
                cr.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE.cls(
                    member_epoch=m.rec.member_epoch,
                    previous_member_epoch=m.rec.previous_member_epoch,
                    state=int(m.rec.state),
                    assigned_partitions=_tps(m.rec.assigned),
                    partitions_pending_revocation=_tps(m.rec.pending_revocation),
                ),
            ),
        )

    @staticmethod
    def _partition_metadata_record(group: ConsumerGroup) -> tuple[bytes, bytes | None]:
        V = cr.CONSUMER_GROUP_PARTITION_METADATA_VALUE
        return (
            cr.encode_key(cr.ConsumerGroupKey(cr.CONSUMER_GROUP_PARTITION_METADATA, group.group_id)),
            cr.encode_consumer_group_value(
                cr.CONSUMER_GROUP_PARTITION_METADATA,
                V.cls(
                    topics=[
                        V["topics"].cls(
                            topic_id=tid, topic_name=name, num_partitions=n, partition_metadata=[]
                        )
                        for name, (tid, n) in sorted(group.subscribed_topics.items())
                    ]
                ),
            ),
        )

    @staticmethod
    def _member_tombstones(group_id: str, member_id: str) -> Records:
        """Kafka's order: current assignment, target assignment, member metadata."""
        return [
            (cr.encode_key(cr.ConsumerGroupKey(record, group_id, member_id)), None)
            for record in (
                cr.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT,
                cr.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
                cr.CONSUMER_GROUP_MEMBER_METADATA,
            )
        ]

    @staticmethod
    def group_tombstones(group_id: str) -> Records:
        """Kafka's createGroupTombstoneRecords of an empty consumer group."""
        return [
            (cr.encode_key(cr.ConsumerGroupKey(record, group_id)), None)
            for record in (
                cr.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA,
                cr.CONSUMER_GROUP_PARTITION_METADATA,
                cr.CONSUMER_GROUP_METADATA,
            )
        ]

    # --- loading --------------------------------------------------------------------------------

    def replay(self, partition_groups: Mapping[str, list[tuple[cr.ConsumerGroupKey, bytes | None]]]) -> None:
        """The groups of a partition rebuilt from their records, oldest first (Kafka's replay);
        members get fresh sessions (they keep their epochs and assignments)."""
        with self._lock:
            for group_id, entries in partition_groups.items():
                try:
                    group = self._replay_group(group_id, entries)
                except Exception as e:  # an unreadable record costs its group, not the partition
                    log.warning("Skipping consumer group %s: a record cannot be replayed: %s", group_id, e)
                    continue
                if group is None:
                    self.groups.pop(group_id, None)
                    continue
                self.groups[group_id] = group
                for member in group.members.values():
                    self._schedule_session(group, member)
                    if member.rec.state == MemberState.UNREVOKED_PARTITIONS:
                        self._schedule_revocation(group, member)

    @staticmethod
    def _replay_group(
        group_id: str, entries: list[tuple[cr.ConsumerGroupKey, bytes | None]]
    ) -> ConsumerGroup | None:
        group = ConsumerGroup(group_id)
        exists = False
        members: dict[str, ConsumerGroupMember] = {}
        for key, value in entries:
            kind = key.record
            v = cr.decode_consumer_group_value(kind, value) if value is not None else None
            mid = key.member_id or ""
            if kind == cr.CONSUMER_GROUP_METADATA:
                exists = v is not None
                group.group_epoch = v.epoch if v is not None else 0
            elif kind == cr.CONSUMER_GROUP_PARTITION_METADATA:
                group.subscribed_topics = (
                    {} if v is None else {t.topic_name: (t.topic_id, t.num_partitions) for t in v.topics}
                )
            elif kind == cr.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA:
                group.assignment_epoch = v.assignment_epoch if v is not None else 0
            elif kind == cr.CONSUMER_GROUP_MEMBER_METADATA:
                if v is None:
                    members.pop(mid, None)
                    continue
                m = members.setdefault(mid, ConsumerGroupMember(mid))
                m.instance_id, m.rack_id, m.client_id, m.client_host = (
                    v.instance_id,
                    v.rack_id,
                    v.client_id,
                    v.client_host,
                )
                m.subscribed_topic_names = tuple(v.subscribed_topic_names)
                m.subscribed_topic_regex = v.subscribed_topic_regex
                m.rebalance_timeout_ms, m.server_assignor = v.rebalance_timeout_ms, v.server_assignor
                c = v.classic_member_metadata
                m.classic = None if c is None else ClassicMemberMetadata(
                    c.session_timeout_ms, tuple((p.name, bytes(p.metadata)) for p in c.supported_protocols)
                )
            elif kind == cr.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER:
                if v is None:
                    group.target.pop(mid, None)
                else:
                    group.target[mid] = _full((t.topic_id, t.partitions) for t in v.topic_partitions)
            elif kind == cr.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT:
                if v is None:
                    if mid in members:
                        members[mid].rec = Reconciled()
                    continue
                m = members.setdefault(mid, ConsumerGroupMember(mid))
                m.rec = Reconciled(
                    MemberState(v.state),
                    v.member_epoch,
                    v.previous_member_epoch,
                    _full((t.topic_id, t.partitions) for t in v.assigned_partitions),
                    _full((t.topic_id, t.partitions) for t in v.partitions_pending_revocation),
                )
        if not exists:
            return None
        for m in members.values():
            group.add(m)
        return group

    def unload(self, partition: int) -> None:
        with self._lock:
            for group_id in [g for g in self.groups if self.partition_for(g) == partition]:
                group = self.groups.pop(group_id)
                group.dead = True
                for member_id in group.members:
                    self._cancel_timers(group_id, member_id)

    # --- classic members (online migration, classic.py) ------------------------------------

    def upgrade(self, group_id: str, generation: int, protocol_name: str,
                members: list[classic.ClassicMember]) -> Records:
        """A non-empty classic group becomes a consumer group (Kafka's convertToConsumerGroup):
        its records; classic.MalformedProtocol if a member's protocol cannot be read."""
        with self._lock:
            records: Records = []
            group = classic.from_classic(self, group_id, generation, protocol_name, members, records)
            self.groups[group_id] = group
            for member in group.members.values():
                self._schedule_session(group, member)
            return records

    def classic_join(self, req: classic.JoinRequest) -> tuple[classic.JoinAnswer, Records]:
        with self._lock:
            records: Records = []
            answer = classic.join(self, self.groups[req.group_id], req, records)
            return answer, records

    def classic_sync(self, group_id: str, member_id: str, instance_id: str | None, generation_id: int,
                     protocol_type: str | None, protocol_name: str | None) -> tuple[int, bytes]:
        with self._lock:
            return classic.sync(self, self.groups[group_id], member_id, instance_id, generation_id,
                                protocol_type, protocol_name)

    def classic_heartbeat(self, group_id: str, member_id: str, instance_id: str | None,
                          generation_id: int) -> int:
        with self._lock:
            return classic.heartbeat(self, self.groups[group_id], member_id, instance_id, generation_id)

    def classic_leave(
        self, group_id: str, members: list[tuple[str, str | None]]
    ) -> tuple[list[int], Records]:
        with self._lock:
            records: Records = []
            errors = classic.leave(self, self.groups[group_id], members, records)
            return errors, records

    def release(self, group_id: str) -> ConsumerGroup | None:
        """The group handed over to the classic coordinator (a downgrade): removed with its
        timers; the caller writes its tombstones."""
        with self._lock:
            group = self.groups.pop(group_id, None)
            if group is not None:
                for member_id in group.members:
                    self._cancel_timers(group_id, member_id)
                group.dead = True
            return group

    def member_tombstones(self, group: ConsumerGroup) -> Records:
        """Every member's and the group's tombstones (Kafka's createGroupTombstoneRecords)."""
        records: Records = []
        for member_id in group.members:
            records.extend(self._member_tombstones(group.group_id, member_id))
        return records + self.group_tombstones(group.group_id)

    # --- what admin and offsets ask ------------------------------------------------------------

    def delete(self, group_id: str) -> Records:
        """An empty group removed (DeleteGroups, a classic JoinGroup converting it): its tombstones."""
        with self._lock:
            group = self.groups.pop(group_id, None)
            if group is None:
                return []
            group.dead = True
            return self.group_tombstones(group_id)

    def validate_offset_commit(
        self, group_id: str, member_id: str, member_epoch: int, is_transactional: bool, version: int
    ) -> int:
        """Kafka's ConsumerGroup.validateOffsetCommit."""
        with self._lock:
            group = self.groups[group_id]
            if member_epoch < 0 and not group.members:
                return E.NONE  # an admin's commit to an empty group
            member = group.members.get(member_id)
            if member is None:
                return E.UNKNOWN_MEMBER_ID
            if member.classic is not None:  # a classic member commits with its generation
                return E.ILLEGAL_GENERATION if member_epoch != member.member_epoch else E.NONE
            if not is_transactional and version < 9:
                return E.UNSUPPORTED_VERSION
            if member_epoch != member.member_epoch:
                return E.STALE_MEMBER_EPOCH
            return E.NONE

    def validate_offset_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> int:
        """Kafka's ConsumerGroup.validateOffsetFetch: no member id and a negative epoch is an admin."""
        with self._lock:
            group = self.groups[group_id]
            if member_epoch < 0 and member_id is None:
                return E.NONE
            member = group.members.get(member_id or "")
            if member is None:
                return E.UNKNOWN_MEMBER_ID
            if member_epoch != member.member_epoch:
                return E.STALE_MEMBER_EPOCH
            return E.NONE

    def subscribed_topic_names(self, group_id: str) -> set[str]:
        with self._lock:
            group = self.groups.get(group_id)
            return set(group.subscribed_topics) if group is not None else set()

    def is_empty(self, group_id: str) -> bool:
        with self._lock:
            group = self.groups.get(group_id)
            return group is None or not group.members

    def describe(self, group_id: str) -> ConsumerGroup | None:
        return self.groups.get(group_id)

    def state(self, group_id: str) -> ConsumerGroupState | None:
        group = self.groups.get(group_id)
        return group.state if group is not None else None
