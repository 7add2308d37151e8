"""Share sessions (Kafka's ShareSession and ShareSessionCache): the partitions a share consumer
fetches from this broker, keyed by (group id, member id). ShareSessionEpoch 0 opens a session
(replacing one the member had), -1 closes it, any other value must be the next epoch (the last
one plus 1): else SHARE_SESSION_NOT_FOUND (no session) or INVALID_SHARE_SESSION_EPOCH. Requests
add partitions to the session and ForgottenTopicsData takes them out. The cache holds at most
group.share.max.share.sessions sessions (SHARE_SESSION_LIMIT_REACHED beyond).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import NamedTuple

from kafkalite.protocol import error_codes as E

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
MAX_EPOCH = 0x7FFFFFFF  # then back to 1 (ShareRequestMetadata.nextEpoch)


class SharePartitionRef(NamedTuple):
    """A partition as a share session knows it (name resolved from the topic id; None: unknown)."""

    topic: str | None
    topic_id: uuid.UUID
    partition: int


@dataclass
class ShareSession:
    group_id: str
    member_id: str
    epoch: int = 1  # the epoch the next request must carry
    partitions: dict[tuple[uuid.UUID, int], SharePartitionRef] = field(default_factory=dict)


class ShareSessionCache:
    def __init__(self, max_sessions: int) -> None:
        self.max_sessions = max_sessions
        self.sessions: dict[tuple[str, str], ShareSession] = {}

    def open_or_continue(self, group_id: str, member_id: str, epoch: int, added: list[SharePartitionRef],
                         forgotten: list[tuple[uuid.UUID, int]]) -> tuple[int, ShareSession | None]:
        """(error, the session) for a request of ``epoch`` (not FINAL_EPOCH: ``close``)."""
        key = (group_id, member_id)
        if epoch == INITIAL_EPOCH:
            if key not in self.sessions and len(self.sessions) >= self.max_sessions:
                return E.SHARE_SESSION_LIMIT_REACHED, None
            session = self.sessions[key] = ShareSession(group_id, member_id)
        else:
            found = self.sessions.get(key)
            if found is None:
                return E.SHARE_SESSION_NOT_FOUND, None
            if epoch != found.epoch:
                return E.INVALID_SHARE_SESSION_EPOCH, None
            session = found
            session.epoch = epoch + 1 if epoch < MAX_EPOCH else 1
        for ref in added:
            session.partitions[(ref.topic_id, ref.partition)] = ref
        for tp in forgotten:
            session.partitions.pop(tp, None)
        return E.NONE, session

    def check(self, group_id: str, member_id: str, epoch: int) -> int:
        """The error of a request of ``epoch`` that only acknowledges (ShareAcknowledge, or a
        closing ShareFetch): it needs the session and, unless closing, its next epoch."""
        found = self.sessions.get((group_id, member_id))
        if found is None:
            return E.SHARE_SESSION_NOT_FOUND
        if epoch not in (found.epoch, FINAL_EPOCH):
            return E.INVALID_SHARE_SESSION_EPOCH
        return E.NONE

    def advance(self, group_id: str, member_id: str) -> None:
        found = self.sessions.get((group_id, member_id))
        if found is not None:
            found.epoch = found.epoch + 1 if found.epoch < MAX_EPOCH else 1

    def close(self, group_id: str, member_id: str) -> ShareSession | None:
        return self.sessions.pop((group_id, member_id), None)
