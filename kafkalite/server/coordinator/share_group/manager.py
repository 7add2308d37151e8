"""Share groups on the group coordinator (Kafka's GroupMetadataManager.shareGroupHeartbeat and
shareGroupDescribe): membership through ShareGroupHeartbeat and what ShareGroupDescribe,
ListGroups and DescribeGroups tell of it.

Heartbeats (ShareGroupHeartbeat v1; the member id is the client's, never empty):
- member epoch 0 joins (or rejoins under the same id): the group epoch moves, the target
  assignment is computed (``simple`` assignor) and the member is at its epoch at once;
- -1 leaves: the group epoch moves and the others get the new target on their next heartbeat;
- otherwise the epoch must be the member's (or its previous one, whose answer may have been
  lost), else FENCED_MEMBER_EPOCH; an unknown member is UNKNOWN_MEMBER_ID. A changed
  subscription, or a subscribed topic created or grown, moves the group epoch.
- at group.share.max.size members a new one is GROUP_MAX_SIZE_REACHED; a new group beyond
  group.share.max.groups too (Kafka throws GroupMaxSizeReachedException for both).

Share groups share the group id namespace with classic and consumer groups: a heartbeat for a
group id that is another type's is GROUP_ID_NOT_FOUND ("not a share group"), as in Kafka. A
member whose heartbeats stop for group.share.session.timeout.ms is removed (``expire_members``,
which the broker's scheduler runs).

A group lives on the coordinator of its __consumer_offsets partition: every change is written
there as Kafka's share group records (key versions 9-15, ``records.py``) and the heartbeat that
made it is answered once they are committed; ``load`` rebuilds the groups when the partition's
leadership comes here (members get a new session).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from kafkalite.controller.group_configs import GroupConfigView
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.coordinator_records import ShareRecordKey

from .assignor import assign
from .group import ShareGroup, ShareGroupState, ShareMember, TopicPartitions
from .records import Record, group_records, group_tombstones, replay
from .settings import ShareGroupConfig

log = logging.getLogger("kafkalite.server.coordinator.share_group")

JOIN_EPOCH = 0
LEAVE_EPOCH = -1
ASSIGNOR = "simple"


@dataclass(frozen=True)
class HeartbeatResult:
    error: int
    message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: TopicPartitions | None = None  # None: unchanged, not sent


@dataclass(frozen=True)
class OffsetsView:
    """What Describe/Alter/DeleteShareGroupOffsets need of a share group."""

    exists: bool
    empty: bool
    subscribed_topics: frozenset[str]


def _now_ms() -> int:
    return int(time.time() * 1000)


# Appends a group's records to its __consumer_offsets partition; done(error) once committed.
Store = Callable[[str, list[Record], Callable[[int], None]], None]


def _fingerprint(group: ShareGroup | None) -> object:
    """What the records say of a group: a change of it is written."""
    if group is None:
        return None
    return (group.group_epoch, group.assignment_epoch, sorted(group.subscribed_metadata.items()),
            tuple((m.member_id, m.member_epoch, m.previous_member_epoch, m.subscribed_topic_names, m.rack_id)
                  for m in group.members.values()))


class ShareGroupManager:
    def __init__(self, config: ShareGroupConfig, check_group: Callable[[str | None], int],
                 other_group_exists: Callable[[str], bool],
                 topics: Callable[[], Mapping[str, tuple[uuid.UUID, int]]],
                 now_ms: Callable[[], int] = _now_ms, store: Store | None = None,
                 group_config: Callable[[str], GroupConfigView] | None = None) -> None:
        """``check_group``: the coordinator's ownership check of a group id (NOT_COORDINATOR,
        COORDINATOR_LOAD_IN_PROGRESS); ``other_group_exists``: a classic or consumer group has
        the id; ``topics``: the topics that exist, {name: (topic id, partition count)};
        ``store``: where changes are written (None: kept in memory only); ``group_config``: a
        group's configs now, whose share.session.timeout.ms / share.heartbeat.interval.ms
        override ``config``'s."""
        self.config = config
        self.group_config = group_config
        self.check_group = check_group
        self.other_group_exists = other_group_exists
        self.topics = topics
        self.now_ms = now_ms
        self.store = store
        self._lock = threading.RLock()
        self.groups: dict[str, ShareGroup] = {}

    # --- ShareGroupHeartbeat -----------------------------------------------------------------

    def heartbeat_and_store(self, group_id: str, member_id: str, member_epoch: int, rack_id: str | None,
                            subscribed_topic_names: list[str] | None, client_id: str, client_host: str,
                            respond: Callable[[HeartbeatResult], None]) -> None:
        """``heartbeat``, answered once the change it made (if any) is written."""
        with self._lock:
            group = self.groups.get(group_id)
            before = _fingerprint(group)
            members = set(group.members) if group is not None else set()
            result = self.heartbeat(group_id, member_id, member_epoch, rack_id, subscribed_topic_names,
                                    client_id, client_host)
            group = self.groups.get(group_id)
            changed = group is not None and _fingerprint(group) != before
            records = group_records(group, members - set(group.members)) if changed and group else []
        if not records or self.store is None:
            respond(result)
            return

        def written(error: int) -> None:
            if error:
                log.warning("Writing share group %s failed: error %d", group_id, error)
                respond(HeartbeatResult(E.NOT_COORDINATOR if error == E.NOT_COORDINATOR
                                        else E.COORDINATOR_NOT_AVAILABLE))
            else:
                respond(result)

        self.store(group_id, records, written)

    def _write(self, group: ShareGroup, records: list[Record]) -> None:
        """Records of a change no request waits for (an expired member, a deleted group)."""
        def written(error: int) -> None:
            if error:
                log.warning("Writing share group %s failed: error %d", group.group_id, error)

        if self.store is not None and records:
            self.store(group.group_id, records, written)

    def load(self, records: list[tuple[ShareRecordKey, bytes | None]]) -> None:
        """The share groups of a __consumer_offsets partition that came here, from its records."""
        groups = replay(records, self.now_ms())
        with self._lock:
            self.groups.update(groups)
        if groups:
            log.info("Loaded %d share groups", len(groups))

    def heartbeat(self, group_id: str, member_id: str, member_epoch: int, rack_id: str | None,
                  subscribed_topic_names: list[str] | None, client_id: str, client_host: str
                  ) -> HeartbeatResult:
        # Kafka's throwIfShareGroupHeartbeatRequestIsInvalid, before the coordinator is looked at.
        if not member_id:
            return HeartbeatResult(E.INVALID_REQUEST, "MemberId can't be empty.")
        if not group_id:
            return HeartbeatResult(E.INVALID_REQUEST, "GroupId can't be empty.")
        if rack_id is not None and not rack_id.strip():
            return HeartbeatResult(E.INVALID_REQUEST, "RackId can't be empty.")
        if member_epoch == JOIN_EPOCH and not subscribed_topic_names:
            return HeartbeatResult(E.INVALID_REQUEST, "SubscribedTopicNames must be set in first request.")
        if member_epoch < LEAVE_EPOCH:
            return HeartbeatResult(E.INVALID_REQUEST, "MemberEpoch is invalid.")
        error = self.check_group(group_id)
        if error:
            return HeartbeatResult(error)
        with self._lock:
            self._forget_unowned()
            group = self.groups.get(group_id)
            if group is None and self.other_group_exists(group_id):
                return HeartbeatResult(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")
            if group is None and member_epoch != JOIN_EPOCH:  # only a join makes a group
                return HeartbeatResult(E.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
            if member_epoch == LEAVE_EPOCH:
                return self._leave(group, member_id)
            if member_epoch == JOIN_EPOCH:
                return self._join(group_id, group, member_id, rack_id, subscribed_topic_names or [],
                                  client_id, client_host)
            member = group.members.get(member_id) if group is not None else None
            if group is None or member is None:
                return HeartbeatResult(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not in group {group_id}.")
            if member_epoch not in (member.member_epoch, member.previous_member_epoch):
                return HeartbeatResult(E.FENCED_MEMBER_EPOCH,
                                       f"The member epoch {member_epoch} is not {member.member_epoch}.")
            self._arm_session(group_id, member)
            if rack_id is not None:
                member.rack_id = rack_id
            subscribed = None if subscribed_topic_names is None else frozenset(subscribed_topic_names)
            if subscribed is not None and subscribed != member.subscribed_topic_names:
                member.subscribed_topic_names = subscribed
                group.group_epoch += 1
            full = subscribed_topic_names is not None or member_epoch != member.member_epoch
            return self._answer(group, member, full)

    def _join(self, group_id: str, group: ShareGroup | None, member_id: str, rack_id: str | None,
              subscribed: list[str], client_id: str, client_host: str) -> HeartbeatResult:
        if group is None:
            if len(self.groups) >= self.config.max_groups:
                return HeartbeatResult(E.GROUP_MAX_SIZE_REACHED,
                                       f"The maximum number of share groups ({self.config.max_groups}) "
                                       "is reached.")
            group = ShareGroup(group_id)
        member = group.members.get(member_id)
        if member is None:
            if len(group.members) >= self.config.max_size:
                return HeartbeatResult(E.GROUP_MAX_SIZE_REACHED,
                                       f"The share group has reached its maximum capacity of "
                                       f"{self.config.max_size} members.")
            member = ShareMember(member_id, client_id, client_host)
            group.members[member_id] = member
            log.info("Member %s joined share group %s", member_id, group_id)
        self.groups[group_id] = group
        member.rack_id = rack_id
        member.subscribed_topic_names = frozenset(subscribed)
        self._arm_session(group_id, member)
        group.group_epoch += 1
        return self._answer(group, member, True)

    def _leave(self, group: ShareGroup | None, member_id: str) -> HeartbeatResult:
        if group is None or member_id not in group.members:
            return HeartbeatResult(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not in the group.")
        self._remove(group, member_id, "left")
        return HeartbeatResult(E.NONE, None, member_id, LEAVE_EPOCH,
                               self._heartbeat_interval_ms(group.group_id))

    def _remove(self, group: ShareGroup, member_id: str, why: str) -> None:
        del group.members[member_id]
        group.target.pop(member_id, None)
        group.group_epoch += 1
        log.info("Member %s of share group %s %s", member_id, group.group_id, why)

    def _answer(self, group: ShareGroup, member: ShareMember, full: bool) -> HeartbeatResult:
        self._maybe_new_target(group)
        if member.member_epoch != group.assignment_epoch:
            member.previous_member_epoch = member.member_epoch
            member.member_epoch = group.assignment_epoch
            member.assignment = group.target.get(member.member_id, {})
            full = True
        return HeartbeatResult(E.NONE, None, member.member_id, member.member_epoch,
                               self._heartbeat_interval_ms(group.group_id),
                               member.assignment if full else None)

    def _maybe_new_target(self, group: ShareGroup) -> None:
        """A new target assignment if the group epoch moved or a subscribed topic changed."""
        existing = self.topics()
        metadata = {t: existing[t] for t in group.subscribed_topics() if t in existing}
        if metadata != group.subscribed_metadata:
            group.subscribed_metadata = metadata
            if group.assignment_epoch == group.group_epoch:
                group.group_epoch += 1
        if group.assignment_epoch == group.group_epoch:
            return
        subscriptions = {m.member_id: m.subscribed_topic_names for m in group.members.values()}
        group.target = assign(subscriptions, metadata)
        group.assignment_epoch = group.group_epoch

    # --- sessions ----------------------------------------------------------------------------

    def expire_members(self) -> int:
        """Remove the members whose session timed out; how many."""
        now = self.now_ms()
        removed = 0
        with self._lock:
            for group in self.groups.values():
                members = list(group.members.values())
                # Members loaded since their last heartbeat have the group's session timeout now.
                loaded = (self._session_timeout_ms(group.group_id)
                          if any(m.session_timeout_ms is None for m in members) else 0)
                gone = [m.member_id for m in members if now - m.last_heartbeat_ms > (
                    loaded if m.session_timeout_ms is None else m.session_timeout_ms)]
                for member_id in gone:
                    self._remove(group, member_id, "expired (no heartbeat in its session)")
                if gone:
                    self._maybe_new_target(group)
                    self._write(group, group_records(group, gone))
                removed += len(gone)
        return removed

    def _arm_session(self, group_id: str, member: ShareMember) -> None:
        """A heartbeat restarts the member's session, with the group's session timeout now."""
        member.last_heartbeat_ms = self.now_ms()
        member.session_timeout_ms = self._session_timeout_ms(group_id)

    # Kafka's shareGroupSessionTimeoutMs / shareGroupHeartbeatIntervalMs: the group's own config if
    # it set one, else the broker's.
    def _session_timeout_ms(self, group_id: str) -> int:
        view = self.group_config(group_id) if self.group_config is not None else None
        if view is not None and "share.session.timeout.ms" in view.overrides:
            return view.share_session_timeout_ms
        return self.config.session_ms

    def _heartbeat_interval_ms(self, group_id: str) -> int:
        view = self.group_config(group_id) if self.group_config is not None else None
        if view is not None and "share.heartbeat.interval.ms" in view.overrides:
            return view.share_heartbeat_interval_ms
        return self.config.heartbeat_ms

    def _forget_unowned(self) -> None:
        """Groups whose __consumer_offsets partition left this coordinator."""
        for group_id in [g for g in self.groups if self.check_group(g)]:
            del self.groups[group_id]

    # --- describe and list -------------------------------------------------------------------

    def describe(self, group_id: str) -> tuple[int, ShareGroup | None]:
        """(error, a copy-free view of the group; None: not a share group here)."""
        error = self.check_group(group_id)
        if error:
            return error, None
        with self._lock:
            group = self.groups.get(group_id)
            if group is not None:
                self._maybe_new_target(group)
            return E.NONE, group

    def list_groups(self) -> list[tuple[str, str]]:
        """(group id, state) of the share groups coordinated here."""
        with self._lock:
            self._forget_unowned()
            return [(g.group_id, g.state.value) for g in self.groups.values()]

    def is_share_group(self, group_id: str) -> bool:
        with self._lock:
            return group_id in self.groups

    def describe_for_offsets(self, group_id: str) -> OffsetsView:
        """For Describe/Alter/DeleteShareGroupOffsets (the share-state helper's handlers)."""
        with self._lock:
            group = self.groups.get(group_id)
            if group is None:
                return OffsetsView(False, True, frozenset())
            return OffsetsView(True, group.state is ShareGroupState.EMPTY,
                               frozenset(group.subscribed_topics()))

    def delete_group(self, group_id: str) -> int:
        """DeleteGroups of a share group: NON_EMPTY_GROUP while it has members."""
        with self._lock:
            group = self.groups.get(group_id)
            if group is None:
                return E.GROUP_ID_NOT_FOUND
            if group.members:
                return E.NON_EMPTY_GROUP
            del self.groups[group_id]
            self._write(group, group_tombstones(group))
            return E.NONE
