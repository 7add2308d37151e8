"""The group coordinator's delayed operations (Kafka's DelayedJoin, InitialDelayedJoin,
DelayedHeartbeat and the pending member's expiry): a rebalance waiting in the ``Rebalance``
purgatory for its members, and each member's session (or a pending member id's time) in the
``Heartbeat`` purgatory. They call back the coordinator through ``Coordinator``, what they need of
it, so that this module does not import group_coordinator.py."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol

from ..purgatory import DelayedOperation, DelayedOperationPurgatory
from .group import GroupMetadata, GroupState, MemberMetadata

S = GroupState


class Coordinator(Protocol):
    """What the delayed operations call (the GroupCoordinator)."""

    @property
    def _lock(self) -> AbstractContextManager[Any]: ...

    @property
    def rebalance_purgatory(self) -> DelayedOperationPurgatory: ...

    def can_complete_join(self, group: GroupMetadata) -> bool: ...

    def complete_join(self, group: GroupMetadata) -> None: ...

    def member_expired(self, group: GroupMetadata, member: MemberMetadata, since_ms: int) -> None: ...

    def pending_member_expired(self, group: GroupMetadata, member_id: str) -> None: ...


class DelayedJoin(DelayedOperation):
    """A rebalance waiting for its members (Kafka's DelayedJoin)."""

    def __init__(self, coordinator: Coordinator, group: GroupMetadata, delay_ms: float) -> None:
        super().__init__(delay_ms)
        self.coordinator, self.group = coordinator, group

    def try_complete(self) -> bool:
        return self.coordinator.can_complete_join(self.group) and self.force_complete()

    def on_complete(self) -> None:
        self.coordinator.complete_join(self.group)

    def on_expiration(self) -> None:
        pass


class InitialDelayedJoin(DelayedJoin):
    """The first rebalance of an empty group waits group.initial.rebalance.delay.ms for more
    members, each new one extending it by as much, up to the rebalance timeout (Kafka's
    InitialDelayedJoin): a group of consumers started together forms in one generation."""

    def __init__(self, coordinator: Coordinator, group: GroupMetadata, delay_ms: float,
                 remaining_ms: float) -> None:
        super().__init__(coordinator, group, delay_ms)
        self.configured_delay_ms = delay_ms
        self.remaining_ms = remaining_ms

    def try_complete(self) -> bool:
        return False  # only the timer completes it

    def on_complete(self) -> None:
        coordinator, group = self.coordinator, self.group
        with coordinator._lock:
            if group.new_member_added and self.remaining_ms > 0 and group.is_in(S.PREPARING_REBALANCE):
                group.new_member_added = False
                delay = min(self.configured_delay_ms, self.remaining_ms)
                remaining = max(self.remaining_ms - self.configured_delay_ms, 0)
                coordinator.rebalance_purgatory.try_complete_else_watch(
                    InitialDelayedJoin(coordinator, group, delay, remaining), [("join", group.group_id)])
                return
        coordinator.complete_join(group)


class DelayedHeartbeat(DelayedOperation):
    """A member's session: expires unless its next heartbeat (or join or sync) comes first."""

    def __init__(self, coordinator: Coordinator, group: GroupMetadata, member: MemberMetadata,
                 since_ms: int, timeout_ms: int) -> None:
        super().__init__(timeout_ms)
        self.coordinator, self.group, self.member, self.since_ms = coordinator, group, member, since_ms

    def try_complete(self) -> bool:
        # A later heartbeat replaced this deadline: done, without expiring the member.
        return self.member.last_heartbeat_ms != self.since_ms and self.force_complete()

    def on_complete(self) -> None:
        pass

    def on_expiration(self) -> None:
        self.coordinator.member_expired(self.group, self.member, self.since_ms)


class DelayedPendingMember(DelayedOperation):
    """A member id handed out by MEMBER_ID_REQUIRED, dropped if its JoinGroup does not follow."""

    def __init__(self, coordinator: Coordinator, group: GroupMetadata, member_id: str,
                 delay_ms: float) -> None:
        super().__init__(delay_ms)
        self.coordinator, self.group, self.member_id = coordinator, group, member_id

    def try_complete(self) -> bool:
        return False

    def on_complete(self) -> None:
        pass

    def on_expiration(self) -> None:
        self.coordinator.pending_member_expired(self.group, self.member_id)
