"""A share group's start offsets as the admin apis see them (Kafka's GroupCoordinatorService
describe/alter/deleteShareGroupOffsets), on the group's coordinator: DescribeShareGroupOffsets
reads each share-partition's start offset with ReadShareGroupStateSummary; AlterShareGroupOffsets
starts a new state (InitializeShareGroupState, the state epoch one higher) at the offsets given;
DeleteShareGroupOffsets forgets whole topics' state (DeleteShareGroupState). Altering and deleting
need the group empty (NON_EMPTY_GROUP). DeleteGroups of a share group deletes the state of every
share-partition the group has state for first (Kafka's GroupCoordinatorService.deleteGroups ->
persister.deleteState), then the group.

After any of these, ``forget(group_id)`` drops this broker's cached share-partitions of the group
(their next use reads the state again). Other leaders are not told: they read it again when the
group's first share session opens there (SharePartitionManager drops idle share-partitions then),
or find out at their next write: an altered state has a newer state epoch (FENCED_STATE_EPOCH), a
deleted one refuses writes until it is initialized again (INVALID_REQUEST, as Kafka's
ShareCoordinatorShard); either way the leader drops its share-partition and reads the state again.

The share group's membership lives in the share-group coordinator: it is asked through
``lookup(group_id)``, which answers None for no such share group (GROUP_ID_NOT_FOUND), else the
group's facts (empty or not, the topics it has state for). ``check_group(group_id)`` is the group
coordinator's own check (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, INVALID_GROUP_ID).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from kafkalite.protocol import error_codes as E

from ..metadata_cache import MetadataCache
from ..share.persister import UNINITIALIZED_STATE_EPOCH, Persister, ShareStateKey, StateSummary


@dataclass(frozen=True)
class ShareGroupFacts:
    """What the offsets apis need of a share group."""

    is_empty: bool
    topics: frozenset[str]  # the topics the group has share-partition state for (subscribed ones)


ShareGroupLookup = Callable[[str], "ShareGroupFacts | None"]


def no_share_groups(group_id: str) -> ShareGroupFacts | None:
    """The lookup until the share-group coordinator provides one: no share group exists."""
    return None


@dataclass(frozen=True)
class PartitionOffset:
    partition: int
    start_offset: int
    leader_epoch: int
    error: int


@dataclass(frozen=True)
class TopicOffsets:
    name: str
    topic_id: uuid.UUID
    partitions: tuple[PartitionOffset, ...]


ZERO = uuid.UUID(int=0)


class _Countdown:
    def __init__(self, n: int, finish: Callable[[], None]) -> None:
        self.left, self.finish, self.lock = n, finish, threading.Lock()
        if n == 0:
            finish()

    def one(self) -> None:
        with self.lock:
            self.left -= 1
            last = self.left == 0
        if last:
            self.finish()


class ShareGroupOffsets:
    def __init__(self, persister: Persister, metadata_cache: MetadataCache,
                 check_group: Callable[[str], int], lookup: ShareGroupLookup = no_share_groups,
                 forget: Callable[[str], None] = lambda group_id: None) -> None:
        self.persister = persister
        self.metadata_cache = metadata_cache
        self.check_group = check_group
        self.lookup = lookup
        self.forget = forget  # this broker's share-partitions of a group whose state changed

    def _group_error(self, group_id: str, must_be_empty: bool) -> tuple[int, ShareGroupFacts | None]:
        error = self.check_group(group_id)
        if error:
            return error, None
        facts = self.lookup(group_id)
        if facts is None:
            return E.GROUP_ID_NOT_FOUND, None
        if must_be_empty and not facts.is_empty:
            return E.NON_EMPTY_GROUP, None
        return E.NONE, facts

    def describe(self, group_id: str, topics: list[tuple[str, list[int]]] | None,
                 done: Callable[[int, list[TopicOffsets]], None]) -> None:
        """Each asked partition's start offset (topics None: every partition of the group's topics)."""
        error, facts = self._group_error(group_id, must_be_empty=False)
        if error:
            done(error, [])
            return
        assert facts is not None
        snap = self.metadata_cache.snapshot
        if topics is None:
            topics = [(t, sorted(snap.topics[t].partitions)) for t in sorted(facts.topics)
                      if t in snap.topics]
        results: dict[tuple[str, int], PartitionOffset] = {}
        asks: list[tuple[str, int, ShareStateKey]] = []
        for name, partitions in topics:
            info = snap.topics.get(name)
            for p in partitions:
                if info is None or p not in info.partitions:
                    results[(name, p)] = PartitionOffset(p, -1, -1, E.UNKNOWN_TOPIC_OR_PARTITION)
                else:
                    asks.append((name, p, ShareStateKey(group_id, info.topic_id.bytes, p)))
        lock = threading.Lock()

        def finish() -> None:
            out = []
            for name, partitions in topics:
                info = snap.topics.get(name)
                out.append(TopicOffsets(name, info.topic_id if info is not None else ZERO,
                                        tuple(results[(name, p)] for p in partitions)))
            done(E.NONE, out)

        countdown = _Countdown(len(asks), finish)
        for name, p, key in asks:
            def answered(s: StateSummary, name: str = name, p: int = p) -> None:
                with lock:
                    results[(name, p)] = PartitionOffset(p, s.start_offset, s.leader_epoch, s.error)
                countdown.one()
            self.persister.read_summary(key, -1, answered)

    def alter(self, group_id: str, topics: list[tuple[str, list[tuple[int, int]]]],
              done: Callable[[int, list[TopicOffsets]], None]) -> None:
        """A new state at each given start offset (the state epoch after the current one)."""
        error, _ = self._group_error(group_id, must_be_empty=True)
        if error:
            done(error, [])
            return
        snap = self.metadata_cache.snapshot
        results: dict[tuple[str, int], PartitionOffset] = {}
        asks: list[tuple[str, int, int, ShareStateKey]] = []
        for name, partitions in topics:
            info = snap.topics.get(name)
            for p, offset in partitions:
                if info is None or p not in info.partitions:
                    results[(name, p)] = PartitionOffset(p, -1, -1, E.UNKNOWN_TOPIC_OR_PARTITION)
                else:
                    asks.append((name, p, offset, ShareStateKey(group_id, info.topic_id.bytes, p)))
        lock = threading.Lock()

        def finish() -> None:
            self.forget(group_id)
            done(E.NONE, [TopicOffsets(name, snap.topics[name].topic_id if name in snap.topics else ZERO,
                                       tuple(results[(name, p)] for p, _ in partitions))
                          for name, partitions in topics])

        countdown = _Countdown(len(asks), finish)
        for name, p, offset, key in asks:
            def initialized(error: int, name: str = name, p: int = p) -> None:
                with lock:
                    results[(name, p)] = PartitionOffset(p, -1, -1, error)
                countdown.one()

            def read(s: StateSummary, key: ShareStateKey = key, offset: int = offset,
                     initialized: Callable[[int], None] = initialized) -> None:
                if s.error:
                    initialized(s.error)
                else:
                    self.persister.initialize_state(key, s.state_epoch + 1, offset, initialized)
            self.persister.read_summary(key, -1, read)

    def delete(self, group_id: str, topics: list[str],
               done: Callable[[int, list[tuple[str, uuid.UUID, int]]], None]) -> None:
        """Every partition's state of each topic forgotten; a topic answers its first error."""
        error, _ = self._group_error(group_id, must_be_empty=True)
        if error:
            done(error, [])
            return
        snap = self.metadata_cache.snapshot
        errors: dict[str, int] = {}
        asks: list[tuple[str, ShareStateKey]] = []
        for name in topics:
            info = snap.topics.get(name)
            if info is None:
                errors[name] = E.UNKNOWN_TOPIC_OR_PARTITION
                continue
            errors[name] = E.NONE
            asks += [(name, ShareStateKey(group_id, info.topic_id.bytes, p)) for p in sorted(info.partitions)]
        lock = threading.Lock()

        def finish() -> None:
            self.forget(group_id)
            done(E.NONE, [(name, snap.topics[name].topic_id if name in snap.topics else ZERO, errors[name])
                          for name in topics])

        countdown = _Countdown(len(asks), finish)
        for name, key in asks:
            def deleted(error: int, name: str = name) -> None:
                with lock:
                    if error and not errors[name]:
                        errors[name] = error
                countdown.one()
            self.persister.delete_state(key, deleted)

    def delete_group(self, group_id: str, delete_membership: Callable[[str], int],
                     done: Callable[[int], None]) -> None:
        """DeleteGroups of a share group: an empty group's share-partition state deleted on the
        share coordinators, then ``delete_membership`` (the share-group manager's delete_group);
        ``done`` gets the first error. The group's coordinator does not know which partitions
        have state (Kafka keeps that in ShareGroupStatePartitionMetadata; kafkalite reads and skips
        that record), so every partition of every topic not internal is asked its summary and
        those with state are deleted."""
        error, _ = self._group_error(group_id, must_be_empty=True)
        if error:
            done(error)
            return
        snap = self.metadata_cache.snapshot
        keys = [ShareStateKey(group_id, info.topic_id.bytes, p) for name, info in sorted(snap.topics.items())
                if not name.startswith("__") for p in sorted(info.partitions)]
        lock = threading.Lock()
        first = [E.NONE]

        def failed(code: int) -> None:
            with lock:
                first[0] = first[0] or code

        def finish() -> None:
            error = first[0] or delete_membership(group_id)
            self.forget(group_id)
            done(error)

        deletes = _Countdown(len(keys), finish)
        for key in keys:
            def deleted(code: int) -> None:
                failed(code)
                deletes.one()

            def summarized(s: StateSummary, key: ShareStateKey = key,
                           deleted: Callable[[int], None] = deleted) -> None:
                if s.error:
                    deleted(s.error)
                elif s.state_epoch == UNINITIALIZED_STATE_EPOCH:
                    deleted(E.NONE)  # no state for this partition
                else:
                    self.persister.delete_state(key, deleted)
            self.persister.read_summary(key, -1, summarized)
