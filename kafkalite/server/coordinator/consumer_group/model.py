"""A consumer group of the consumer rebalance protocol and its members (Kafka's ConsumerGroup and
ConsumerGroupMember): the group epoch (bumped when subscriptions or the subscribed topics
change), the target assignment and its epoch, each member's subscription and reconciled
assignment.

The group's state follows from these (Kafka's ConsumerGroup.maybeUpdateGroupState): empty
without members; assigning while the group epoch is ahead of the assignment epoch; reconciling
while a member is not stable at the assignment epoch; stable otherwise; dead once deleted.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from .assignors import Assignment, TopicId
from .reconciliation import MemberState, Reconciled

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2


class ConsumerGroupState(enum.Enum):
    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass(frozen=True)
class ClassicMemberMetadata:
    """What a member speaking the classic protocol inside a consumer group joined with (online
    migration): its session timeout and its JoinGroup protocols (name, metadata), in its order."""

    session_timeout_ms: int
    supported_protocols: tuple[tuple[str, bytes], ...]


@dataclass
class ConsumerGroupMember:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    rebalance_timeout_ms: int = -1
    server_assignor: str | None = None
    rec: Reconciled = field(default_factory=Reconciled)
    classic: ClassicMemberMetadata | None = None  # None: it speaks the consumer protocol

    @property
    def member_epoch(self) -> int:
        return self.rec.member_epoch

    def metadata_key(self) -> tuple:
        """What the member-metadata record holds (a change is written)."""
        return (
            self.instance_id,
            self.rack_id,
            self.client_id,
            self.client_host,
            self.subscribed_topic_names,
            self.subscribed_topic_regex,
            self.rebalance_timeout_ms,
            self.server_assignor,
            self.classic,
        )


@dataclass
class ConsumerGroup:
    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ConsumerGroupMember] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)  # instance id -> member id
    target: dict[str, Assignment] = field(default_factory=dict)
    # The subscribed topics as last written (ConsumerGroupPartitionMetadata): name -> (id, partitions).
    subscribed_topics: dict[str, tuple[TopicId, int]] = field(default_factory=dict)
    dead: bool = False

    @property
    def state(self) -> ConsumerGroupState:
        if self.dead:
            return ConsumerGroupState.DEAD
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        for m in self.members.values():
            if m.rec.state != MemberState.STABLE or m.member_epoch != self.assignment_epoch:
                return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    def add(self, member: ConsumerGroupMember) -> None:
        self.members[member.member_id] = member
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id

    def remove(self, member_id: str) -> ConsumerGroupMember | None:
        member = self.members.pop(member_id, None)
        self.target.pop(member_id, None)
        if (
            member is not None
            and member.instance_id is not None
            and self.static_members.get(member.instance_id) == member_id
        ):
            del self.static_members[member.instance_id]
        return member

    def holder(self, topic_id: TopicId, partition: int, but: str) -> str | None:
        """The member other than ``but`` that holds the partition (assigned or pending revocation)."""
        for m in self.members.values():
            if m.member_id == but:
                continue
            if partition in m.rec.assigned.get(topic_id, ()) or partition in m.rec.pending_revocation.get(
                topic_id, ()
            ):
                return m.member_id
        return None
