"""Members of the classic protocol inside a consumer group (online migration, Kafka 4's
GroupMetadataManager.classicGroup*ToConsumerGroup and ConsumerGroup.fromClassicGroup).

A classic group of protocol type "consumer" becomes a consumer group when a ConsumerGroupHeartbeat
joins it (``from_classic``): each member keeps its id, its subscription (its JoinGroup metadata,
a ConsumerProtocolSubscription) and its last assignment (its SyncGroup share, a
ConsumerProtocolAssignment) at the epoch of the classic generation, and its session timeout and
protocols as ClassicMemberMetadata. From then on these members' JoinGroup, SyncGroup, Heartbeat
and LeaveGroup are served by the consumer group:

- JoinGroup updates the member (subscription, owned partitions of the metadata), bumps the group
  epoch if its subscription changed, runs the assignor and reconciles the member; it answers at
  once with generation = the member's epoch and no leader (the member is a follower; SyncGroup
  hands it its assigned partitions).
- Heartbeat answers REBALANCE_IN_PROGRESS while the member must rejoin: its epoch is behind the
  group's, it must revoke, or partitions it waits for were released.
- A member that must rejoin has its rebalance timeout to do so (join timeout), and a member that
  joined its rebalance timeout to sync (sync timeout), or it is fenced; its session runs for its
  classic session timeout.
- LeaveGroup removes the member as a consumer-protocol member's leave does.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from kafkalite.protocol import consumer_protocol as cp
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.errors import DecodeError

from .assignors import Assignment, TopicId
from .model import ClassicMemberMetadata, ConsumerGroup, ConsumerGroupMember
from .reconciliation import MemberState, Reconciled

if TYPE_CHECKING:
    from .manager import ConsumerGroupManager, Records, TopicsView

log = logging.getLogger("kafkalite.server.coordinator.consumer_group")

CONSUMER_PROTOCOL_TYPE = "consumer"


class ClassicMember(NamedTuple):
    """A classic group's member as the upgrade reads it."""

    member_id: str
    instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocols: tuple[tuple[str, bytes], ...]
    assignment: bytes


@dataclass(frozen=True)
class JoinAnswer:
    error: int
    member_id: str
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None


class MalformedProtocol(Exception):
    """A member's embedded consumer protocol cannot be read (the upgrade is refused)."""


def to_assignment(tps: cp.TopicPartitions, topics: TopicsView) -> Assignment:
    out: dict[TopicId, frozenset[int]] = {}
    for name, partitions in tps:
        if name in topics and partitions:
            tid = topics[name][0]
            out[tid] = out.get(tid, frozenset()) | frozenset(partitions)
    return out


def assignment_bytes(member: ConsumerGroupMember, topics: TopicsView) -> bytes:
    """The member's assigned partitions as a ConsumerProtocolAssignment of the version its first
    protocol's subscription has (Kafka's prepareAssignment)."""
    return encode_for(member, member.rec.assigned, topics)


def encode_for(member: ConsumerGroupMember, assignment: Assignment, topics: TopicsView) -> bytes:
    names = {tid: name for name, (tid, _) in topics.items()}
    tps = tuple(sorted((names[t], tuple(sorted(ps))) for t, ps in assignment.items() if t in names and ps))
    version = cp.LATEST_VERSION
    if member.classic is not None and member.classic.supported_protocols:
        try:
            version = cp.version_of(member.classic.supported_protocols[0][1])
        except DecodeError:
            pass
    return cp.encode_assignment(cp.AssignmentData(tps), version)


def from_classic(mgr: ConsumerGroupManager, group_id: str, generation: int, protocol_name: str,
                 members: list[ClassicMember], records: Records) -> ConsumerGroup:
    """Kafka's ConsumerGroup.fromClassicGroup and createConsumerGroupRecords: every member Stable
    at the generation with its last assignment as current and target. MalformedProtocol if a
    member's subscription or assignment cannot be read."""
    topics = mgr.topics()
    group = ConsumerGroup(group_id, group_epoch=generation, assignment_epoch=generation)
    for m in members:
        metadata = dict(m.protocols).get(protocol_name)
        try:
            if metadata is None:
                raise MalformedProtocol(f"member {m.member_id} has no protocol {protocol_name}")
            sub = cp.decode_subscription(metadata)
            assigned = to_assignment(cp.decode_assignment(m.assignment).partitions, topics)
        except DecodeError as e:
            raise MalformedProtocol(str(e)) from None
        member = ConsumerGroupMember(
            m.member_id, instance_id=m.instance_id, rack_id=sub.rack_id, client_id=m.client_id,
            client_host=m.client_host, subscribed_topic_names=tuple(sorted(set(sub.topics))),
            rebalance_timeout_ms=m.rebalance_timeout_ms,
            rec=Reconciled(MemberState.STABLE, generation, generation, assigned, {}),
            classic=ClassicMemberMetadata(m.session_timeout_ms, m.protocols))
        group.add(member)
        group.target[m.member_id] = assigned
    for member in group.members.values():
        records.append(mgr._member_record(group_id, member))
    mgr._refresh_subscribed_topics(group, records)
    records.append(mgr._epoch_record(group))
    for member_id, assigned in group.target.items():
        records.append(mgr._target_record(group_id, member_id, assigned))
    records.append(mgr._assignment_epoch_record(group))
    for member in group.members.values():
        records.append(mgr._current_record(group_id, member))
    return group


def supports(group: ConsumerGroup, protocol_type: str, protocols: list[tuple[str, bytes]]) -> bool:
    """Kafka's ConsumerGroup.supportsClassicProtocols: protocol type "consumer" and a protocol
    every classic member has."""
    if protocol_type != CONSUMER_PROTOCOL_TYPE or not protocols:
        return False
    classic = [m.classic for m in group.members.values() if m.classic is not None]
    if not classic:
        return True
    names = {name for name, _ in protocols}
    return any(all(name in {n for n, _ in c.supported_protocols} for c in classic) for name in names)


def member_for(group: ConsumerGroup, member_id: str, instance_id: str | None) -> ConsumerGroupMember | int:
    """Kafka's validateConsumerGroupMember then throwIfMemberDoesNotUseClassicProtocol: the
    member, or the error."""
    if instance_id is None:
        member = group.members.get(member_id)
    else:
        known = group.static_members.get(instance_id)
        member = group.members.get(known) if known is not None else None
        if member is not None and member.member_id != member_id:
            return E.FENCED_INSTANCE_ID
    if member is None or member.classic is None:
        return E.UNKNOWN_MEMBER_ID
    return member


class JoinRequest(NamedTuple):
    group_id: str
    member_id: str
    instance_id: str | None
    require_known_member_id: bool
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]


def join(mgr: ConsumerGroupManager, group: ConsumerGroup, req: JoinRequest,
         records: Records) -> JoinAnswer:
    """Kafka's classicGroupJoinToConsumerGroup."""
    member_id = req.member_id or str(uuid.uuid4())
    if req.member_id not in group.members and len(group.members) >= mgr.config.consumer_max_size:
        return JoinAnswer(E.GROUP_MAX_SIZE_REACHED, member_id)
    if not supports(group, req.protocol_type, req.protocols):
        return JoinAnswer(E.INCONSISTENT_GROUP_PROTOCOL, member_id)
    if not req.member_id and req.require_known_member_id and req.instance_id is None:
        return JoinAnswer(E.MEMBER_ID_REQUIRED, member_id)  # KIP-394: it joins again with this id
    try:
        sub = cp.decode_subscription(req.protocols[0][1])
    except DecodeError:
        return JoinAnswer(E.INCONSISTENT_GROUP_PROTOCOL, member_id)
    if req.instance_id is not None:
        existing_id = group.static_members.get(req.instance_id)
        if existing_id is not None and existing_id != member_id:
            if req.member_id:
                return JoinAnswer(E.FENCED_INSTANCE_ID, member_id)
            # A static member back with a new id replaces the old one (its partitions freed).
            old = group.members[existing_id]
            mgr._remove_member(group, old, records)
            if mgr.groups.get(group.group_id) is not group:
                return JoinAnswer(E.REBALANCE_IN_PROGRESS, member_id)  # it became a classic group
    member = group.members.get(member_id)
    joined = member is None
    if member is None:
        member = ConsumerGroupMember(member_id, instance_id=req.instance_id)
    before = member.metadata_key()
    member.instance_id = req.instance_id
    member.rack_id = sub.rack_id
    member.rebalance_timeout_ms = req.rebalance_timeout_ms
    member.server_assignor = None
    member.subscribed_topic_names = tuple(sorted(set(sub.topics)))
    member.client_id, member.client_host = req.client_id, req.client_host
    member.classic = ClassicMemberMetadata(req.session_timeout_ms, tuple(req.protocols))
    if joined:
        group.add(member)
    if member.metadata_key() != before or joined:
        records.append(mgr._member_record(group.group_id, member))
    bumped = joined or member.subscribed_topic_names != before[4]
    if mgr._refresh_subscribed_topics(group, records) or bumped:
        mgr._bump(group, records)
    mgr._maybe_assign(group, records)
    mgr._reconcile(group, member, to_assignment(sub.owned_partitions, mgr.topics()), records, force=joined)
    mgr.timer.cancel(("join", group.group_id, member_id))
    mgr._schedule_session(group, member)
    mgr._schedule_classic_timeout(group, member, "sync")
    return JoinAnswer(E.NONE, member_id, member.member_epoch, CONSUMER_PROTOCOL_TYPE,
                      req.protocols[0][0])


def _must_rejoin(group: ConsumerGroup, member: ConsumerGroupMember) -> bool:
    """Kafka's classicGroupHeartbeatToConsumerGroup conditions: a newer group epoch, partitions
    to revoke, or partitions it waits for that are free now."""
    if member.member_epoch < group.group_epoch or member.rec.state == MemberState.UNREVOKED_PARTITIONS:
        return True
    if member.rec.state == MemberState.UNRELEASED_PARTITIONS:
        target = group.target.get(member.member_id, {})
        waiting = any(group.holder(t, p, member.member_id) is not None
                      for t, ps in target.items() for p in ps - member.rec.assigned.get(t, frozenset()))
        return not waiting
    return False


def sync(mgr: ConsumerGroupManager, group: ConsumerGroup, member_id: str, instance_id: str | None,
         generation_id: int, protocol_type: str | None, protocol_name: str | None) -> tuple[int, bytes]:
    """Kafka's classicGroupSyncToConsumerGroup: (error, the member's assignment)."""
    member = member_for(group, member_id, instance_id)
    if isinstance(member, int):
        return member, b""
    assert member.classic is not None
    if generation_id != member.member_epoch:
        return E.ILLEGAL_GENERATION, b""
    if (protocol_type is not None and protocol_type != CONSUMER_PROTOCOL_TYPE) or (
            protocol_name is not None and protocol_name != member.classic.supported_protocols[0][0]):
        return E.INCONSISTENT_GROUP_PROTOCOL, b""
    if group.group_epoch > member.member_epoch and member.rec.state != MemberState.UNREVOKED_PARTITIONS:
        mgr._schedule_classic_timeout(group, member, "join", if_absent=True)
        return E.REBALANCE_IN_PROGRESS, b""
    mgr.timer.cancel(("sync", group.group_id, member.member_id))
    mgr._schedule_session(group, member)
    return E.NONE, assignment_bytes(member, mgr.topics())


def heartbeat(mgr: ConsumerGroupManager, group: ConsumerGroup, member_id: str, instance_id: str | None,
              generation_id: int) -> int:
    """Kafka's classicGroupHeartbeatToConsumerGroup."""
    member = member_for(group, member_id, instance_id)
    if isinstance(member, int):
        return member
    if generation_id != member.member_epoch:
        return E.ILLEGAL_GENERATION
    mgr._schedule_session(group, member)
    if _must_rejoin(group, member):
        mgr._schedule_classic_timeout(group, member, "join", if_absent=True)
        return E.REBALANCE_IN_PROGRESS
    return E.NONE


def leave(mgr: ConsumerGroupManager, group: ConsumerGroup, members: list[tuple[str, str | None]],
          records: Records, no_member: str = "") -> list[int]:
    """Kafka's classicGroupLeaveToConsumerGroup: one error per (member id, instance id)."""
    errors = []
    for member_id, instance_id in members:
        if mgr.groups.get(group.group_id) is not group:
            errors.append(E.UNKNOWN_MEMBER_ID)  # converted back to a classic group meanwhile
            continue
        if instance_id is None:
            member = group.members.get(member_id)
        else:
            known = group.static_members.get(instance_id)
            member = group.members.get(known) if known is not None else None
            if member is not None and member_id != no_member and member.member_id != member_id:
                errors.append(E.FENCED_INSTANCE_ID)
                continue
        if member is None or member.classic is None:
            errors.append(E.UNKNOWN_MEMBER_ID)
            continue
        log.info("Classic member %s has left consumer group %s", member.member_id, group.group_id)
        mgr._remove_member(group, member, records)
        errors.append(E.NONE)
    return errors


def classic_members_of(group: ConsumerGroup, but: str,
                       topics: Mapping[str, tuple[TopicId, int]]) -> list[tuple[ConsumerGroupMember, bytes]]:
    """The members other than ``but`` with their target assignments as ConsumerProtocolAssignment
    bytes (what ClassicGroup.fromConsumerGroup gives a downgraded group's members)."""
    return [(m, encode_for(m, group.target.get(m.member_id, {}), topics))
            for m in group.members.values() if m.member_id != but]


def may_downgrade(group: ConsumerGroup, leaving: str, policy: str, classic_max_size: int,
                  log_refusal: Callable[[str], None] = log.info) -> bool:
    """Kafka's validateOnlineDowngradeWithFencedMember."""
    if any(m.classic is None for m in group.members.values() if m.member_id != leaving):
        return False
    if len(group.members) <= 1:
        return False  # it becomes empty: it stays a consumer group (an empty one converts freely)
    if policy not in ("bidirectional", "downgrade"):
        log_refusal(f"Cannot downgrade consumer group {group.group_id} to a classic group: "
                    "the online downgrade is disabled.")
        return False
    if len(group.members) - 1 > classic_max_size:
        log_refusal(f"Cannot downgrade consumer group {group.group_id} to a classic group: "
                    "its size is greater than group.max.size.")
        return False
    return True
