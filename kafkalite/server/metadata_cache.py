"""What a broker knows of the cluster: brokers and their endpoints, the controller, topics and
their partitions. Readers take the current snapshot (an immutable value) without locking; the
controller's requests replace it whole, as Kafka's MetadataCache does."""

from __future__ import annotations

import dataclasses
import functools
import threading
import uuid
from collections.abc import Callable
from typing import Any

from kafkalite.common.endpoints import SECURITY_PROTOCOL_NAMES, Endpoint
from kafkalite.common.leader_and_isr import LEADER_DURING_DELETE
from kafkalite.common.uuids import ZERO_UUID


@dataclasses.dataclass(frozen=True)
class BrokerInfo:
    id: int
    endpoints: tuple[Endpoint, ...]
    rack: str | None = None
    epoch: int = -1

    def endpoint(self, listener: str) -> Endpoint | None:
        for e in self.endpoints:
            if e.name == listener:
                return e
        return None


@dataclasses.dataclass(frozen=True)
class PartitionInfo:
    index: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()
    partition_epoch: int = 0
    controller_epoch: int = 0


@dataclasses.dataclass(frozen=True)
class TopicInfo:
    name: str
    topic_id: uuid.UUID
    partitions: dict[int, PartitionInfo]


@dataclasses.dataclass(frozen=True)
class Snapshot:
    cluster_id: str | None  # None until a broker has adopted the controller's
    controller_id: int
    brokers: dict[int, BrokerInfo]
    topics: dict[str, TopicInfo]

    def topic_by_id(self, topic_id: uuid.UUID) -> TopicInfo | None:
        return self._by_id.get(topic_id)

    @functools.cached_property
    def _by_id(self) -> dict[uuid.UUID, TopicInfo]:
        # Built once per snapshot (snapshots never change): Fetch v13+ looks topics up by id
        # for every topic of every request.
        by_id: dict[uuid.UUID, TopicInfo] = {}
        for t in self.topics.values():
            by_id.setdefault(t.topic_id, t)  # the first, as a scan finds it
        return by_id


class MetadataCache:
    def __init__(self, cluster_id: str | None, controller_id: int = -1,
                 brokers: dict[int, BrokerInfo] | None = None) -> None:
        # Serialises writers; readers use the snapshot as is.
        self._lock = threading.Lock()
        self._snapshot = Snapshot(cluster_id, controller_id, dict(brokers or {}), {})
        # Called with (before, after) after each change, outside the lock (the topic purgatory).
        self._listeners: list[Callable[[Snapshot, Snapshot], None]] = []

    def add_listener(self, listener: Callable[[Snapshot, Snapshot], None]) -> None:
        self._listeners.append(listener)

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    def set_cluster_id(self, cluster_id: str) -> None:
        self.update(lambda snap: dataclasses.replace(snap, cluster_id=cluster_id))

    def update_metadata(self, request: Any, version: int) -> Snapshot:
        """Apply an UpdateMetadata request (Kafka's MetadataCache.updateMetadata); the caller has
        fenced it (ReplicaManager)."""
        return self.update(lambda snap: _apply_update_metadata(snap, request, version))

    def update(self, fn: Callable[[Snapshot], Snapshot]) -> Snapshot:
        """Apply ``fn(snapshot) -> snapshot`` atomically with respect to other writers."""
        with self._lock:
            before = self._snapshot
            after = self._snapshot = fn(before)
        for listener in self._listeners:
            listener(before, after)
        return after


def update_metadata_partitions(request: Any, version: int) -> list[tuple[str, uuid.UUID, Any]]:
    """(topic, topic id, partition state) of an UpdateMetadata request, any version."""
    if version < 5:
        return [(s.topic_name, ZERO_UUID, s) for s in request.ungrouped_partition_states]
    return [(t.topic_name, t.topic_id, s) for t in request.topic_states for s in t.partition_states]


def _broker_endpoints(b: Any, version: int) -> tuple[Endpoint, ...]:
    if version == 0:
        return (Endpoint("PLAINTEXT", b.v0_host, b.v0_port, "PLAINTEXT"),)
    out = []
    for e in b.endpoints:
        protocol = SECURITY_PROTOCOL_NAMES.get(e.security_protocol, "PLAINTEXT")
        out.append(Endpoint(e.listener if version >= 3 else protocol, e.host, e.port, protocol))
    return tuple(out)


def _apply_update_metadata(snap: Snapshot, request: Any, version: int) -> Snapshot:
    """The snapshot after an UpdateMetadata request: brokers replaced by the live brokers, the
    partitions it names replaced (or removed, leader -2: the topic is being deleted), the others
    kept, as Kafka's MetadataCache does."""
    brokers = {b.id: BrokerInfo(b.id, _broker_endpoints(b, version), b.rack)
               for b in request.live_brokers}
    topics: dict[str, TopicInfo] = dict(snap.topics)
    for topic, topic_id, s in update_metadata_partitions(request, version):
        current = topics.get(topic)
        parts = dict(current.partitions) if current else {}
        if s.leader == LEADER_DURING_DELETE:
            parts.pop(s.partition_index, None)
        else:
            parts[s.partition_index] = PartitionInfo(
                s.partition_index, s.leader, s.leader_epoch, tuple(s.replicas), tuple(s.isr),
                tuple(getattr(s, "offline_replicas", ()) or ()), s.zk_version, s.controller_epoch)
        tid = topic_id if topic_id != ZERO_UUID else (current.topic_id if current else ZERO_UUID)
        if parts:
            topics[topic] = TopicInfo(topic, tid, parts)
        else:
            topics.pop(topic, None)
    return Snapshot(snap.cluster_id, request.controller_id, brokers, topics)
