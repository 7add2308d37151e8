"""What a broker knows of the cluster: brokers and their endpoints, the controller, topics and
their partitions. Readers take the current snapshot (an immutable value) without locking; the
controller's requests replace it whole, as Kafka's MetadataCache does."""

from __future__ import annotations

import dataclasses
import threading
import uuid
from collections.abc import Callable

from kafkalite.common.endpoints import Endpoint


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
        for t in self.topics.values():
            if t.topic_id == topic_id:
                return t
        return None


class MetadataCache:
    def __init__(self, cluster_id: str | None, controller_id: int = -1,
                 brokers: dict[int, BrokerInfo] | None = None) -> None:
        # Serialises writers and wakes waiters; readers use the snapshot as is.
        self._changed = threading.Condition()
        self._snapshot = Snapshot(cluster_id, controller_id, dict(brokers or {}), {})

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    def set_cluster_id(self, cluster_id: str) -> None:
        self.update(lambda snap: dataclasses.replace(snap, cluster_id=cluster_id))

    def update(self, fn: Callable[[Snapshot], Snapshot]) -> Snapshot:
        """Apply ``fn(snapshot) -> snapshot`` atomically with respect to other writers."""
        with self._changed:
            self._snapshot = fn(self._snapshot)
            self._changed.notify_all()
            return self._snapshot

    def wait_until(self, predicate: Callable[[Snapshot], bool], timeout: float) -> bool:
        """Block until ``predicate(snapshot)`` holds (checked on every update) or ``timeout``."""
        with self._changed:
            return self._changed.wait_for(lambda: predicate(self._snapshot), max(timeout, 0.0))
