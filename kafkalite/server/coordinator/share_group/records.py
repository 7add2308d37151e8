"""A share group as records of ``__consumer_offsets`` (key versions 9-15, Kafka's ShareGroup*
records) and back: ``group_records`` writes what a change left (a member's metadata and
assignments, the group's epoch, the target assignment; tombstones for members gone, or for the
whole group), ``replay`` rebuilds the groups from a partition's records, oldest first (Kafka's
GroupCoordinatorShard.replay)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kafkalite.protocol import coordinator_records as cr

from .group import ShareGroup, ShareMember, TopicPartitions

Record = tuple[bytes, bytes | None]
STABLE = 0  # MemberState.STABLE: share members are always stable (no revocation)


def _tps(struct: Any, assignment: TopicPartitions) -> list[Any]:
    return [struct(topic_id=t, partitions=list(ps)) for t, ps in sorted(assignment.items())]


def _value(version: int, **fields: object) -> bytes:
    return cr.encode_share_value(version, cr.share_value_struct(version).cls(**fields))


def member_records(group: ShareGroup, member: ShareMember) -> list[Record]:
    g, m = group.group_id, member.member_id
    target_tp = cr.share_value_struct(cr.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER)["topic_partitions"]
    current_tp = cr.share_value_struct(cr.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT)["assigned_partitions"]
    return [
        (cr.encode_share_key(cr.ShareRecordKey(cr.SHARE_GROUP_MEMBER_METADATA, g, m)),
         _value(cr.SHARE_GROUP_MEMBER_METADATA, rack_id=member.rack_id, client_id=member.client_id,
                client_host=member.client_host,
                subscribed_topic_names=sorted(member.subscribed_topic_names))),
        (cr.encode_share_key(cr.ShareRecordKey(cr.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER, g, m)),
         _value(cr.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER,
                topic_partitions=_tps(target_tp, group.target.get(m, {})))),
        (cr.encode_share_key(cr.ShareRecordKey(cr.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT, g, m)),
         _value(cr.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT, member_epoch=member.member_epoch,
                previous_member_epoch=member.previous_member_epoch, state=STABLE,
                assigned_partitions=_tps(current_tp, member.assignment))),
    ]


def member_tombstones(group_id: str, member_id: str) -> list[Record]:
    return [(cr.encode_share_key(cr.ShareRecordKey(v, group_id, member_id)), None)
            for v in (cr.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT, cr.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER,
                      cr.SHARE_GROUP_MEMBER_METADATA)]


def group_records(group: ShareGroup, gone: Iterable[str] = ()) -> list[Record]:
    """The group's records after a change (every member's, then the group's epochs); members
    in ``gone`` get tombstones."""
    g = group.group_id
    records: list[Record] = []
    for member_id in gone:
        records += member_tombstones(g, member_id)
    for member in group.members.values():
        records += member_records(group, member)
    pm = cr.share_value_struct(cr.SHARE_GROUP_PARTITION_METADATA)["topics"]
    records += [
        (cr.encode_share_key(cr.ShareRecordKey(cr.SHARE_GROUP_PARTITION_METADATA, g)),
         _value(cr.SHARE_GROUP_PARTITION_METADATA, topics=[
             pm(topic_id=tid, topic_name=name, num_partitions=count, partition_metadata=[])
             for name, (tid, count) in sorted(group.subscribed_metadata.items())])),
        (cr.encode_share_key(cr.ShareRecordKey(cr.SHARE_GROUP_METADATA, g)),
         _value(cr.SHARE_GROUP_METADATA, epoch=group.group_epoch)),
        (cr.encode_share_key(cr.ShareRecordKey(cr.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA, g)),
         _value(cr.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA, assignment_epoch=group.assignment_epoch)),
    ]
    return records


def group_tombstones(group: ShareGroup) -> list[Record]:
    """A deleted group: its members', then its own (Kafka writes them in this order)."""
    records: list[Record] = []
    for member_id in group.members:
        records += member_tombstones(group.group_id, member_id)
    return records + [(cr.encode_share_key(cr.ShareRecordKey(v, group.group_id)), None)
                      for v in (cr.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA, cr.SHARE_GROUP_PARTITION_METADATA,
                                cr.SHARE_GROUP_METADATA)]


def _assignment(tps: Iterable[Any]) -> TopicPartitions:
    return {t.topic_id: list(t.partitions) for t in tps}


def replay(records: Iterable[tuple[cr.ShareRecordKey, bytes | None]], now_ms: int) -> dict[str, ShareGroup]:
    """The share groups a partition's records leave, oldest first. Members restored get a new
    session from ``now_ms`` (their timers did not survive the move)."""
    groups: dict[str, ShareGroup] = {}
    for key, value in records:
        if key.version == cr.SHARE_GROUP_STATE_PARTITION_METADATA:
            continue  # the share coordinator's bookkeeping of initialized state: not kept here
        if key.version == cr.SHARE_GROUP_METADATA and value is None:
            groups.pop(key.group, None)
            continue
        group = groups.setdefault(key.group, ShareGroup(key.group))
        if key.member is not None:
            if value is None:
                if key.version == cr.SHARE_GROUP_MEMBER_METADATA:
                    group.members.pop(key.member, None)
                elif key.version == cr.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER:
                    group.target.pop(key.member, None)
                continue
            v = cr.decode_share_value(key.version, value)
            member = group.members.get(key.member)
            if member is None:
                member = group.members[key.member] = ShareMember(key.member, "", "", last_heartbeat_ms=now_ms)
            if key.version == cr.SHARE_GROUP_MEMBER_METADATA:
                member.rack_id, member.client_id, member.client_host = v.rack_id, v.client_id, v.client_host
                member.subscribed_topic_names = frozenset(v.subscribed_topic_names)
            elif key.version == cr.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER:
                group.target[key.member] = _assignment(v.topic_partitions)
            else:
                member.member_epoch, member.previous_member_epoch = v.member_epoch, v.previous_member_epoch
                member.assignment = _assignment(v.assigned_partitions)
            continue
        if value is None:
            continue
        v = cr.decode_share_value(key.version, value)
        if key.version == cr.SHARE_GROUP_METADATA:
            group.group_epoch = v.epoch
        elif key.version == cr.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA:
            group.assignment_epoch = v.assignment_epoch
        elif key.version == cr.SHARE_GROUP_PARTITION_METADATA:
            group.subscribed_metadata = {t.topic_name: (t.topic_id, t.num_partitions) for t in v.topics}
    return groups
