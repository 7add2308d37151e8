"""A share group and its members as the coordinator keeps them (Kafka's ShareGroup and
ShareGroupMember): the group epoch moves when membership, subscriptions or the subscribed
topics change; the target assignment is computed at a group epoch (the assignment epoch); a
member takes the target on its next heartbeat (no revocation: share partitions are not owned),
its member epoch then being the assignment epoch."""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, field

TopicPartitions = dict[uuid.UUID, list[int]]


class ShareGroupState(enum.Enum):
    """Kafka's ShareGroup.ShareGroupState (as DescribeGroups and ListGroups name them)."""

    EMPTY = "Empty"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass
class ShareMember:
    member_id: str
    client_id: str
    client_host: str
    rack_id: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = 0
    subscribed_topic_names: frozenset[str] = frozenset()
    assignment: TopicPartitions = field(default_factory=dict)
    last_heartbeat_ms: int = 0
    # The session timeout armed at its last heartbeat (the group's then; None: loaded, the group's now).
    session_timeout_ms: int | None = None


@dataclass
class ShareGroup:
    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ShareMember] = field(default_factory=dict)
    target: dict[str, TopicPartitions] = field(default_factory=dict)
    # What the target was computed from: {topic name: (topic id, partitions)} subscribed.
    subscribed_metadata: dict[str, tuple[uuid.UUID, int]] = field(default_factory=dict)

    @property
    def state(self) -> ShareGroupState:
        return ShareGroupState.STABLE if self.members else ShareGroupState.EMPTY

    def subscribed_topics(self) -> set[str]:
        return {t for m in self.members.values() for t in m.subscribed_topic_names}
