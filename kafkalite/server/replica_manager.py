"""What the controller tells a broker, applied with Kafka's fencing (Kafka's ReplicaManager and
MetadataCache.updateMetadata): LeaderAndIsr and StopReplica change the table of partitions this
broker hosts; an UpdateMetadata that passes the fencing is applied by the MetadataCache itself.

Fencing, as Kafka does it:
- a request from an older controller epoch than the newest seen: STALE_CONTROLLER_EPOCH, nothing
  applied;
- a request for an older broker epoch than this broker's (and not -1, unknown): STALE_BROKER_EPOCH;
- LeaderAndIsr for a partition with a leader epoch not above the one held: STALE_CONTROLLER_EPOCH
  for that partition; a partition this broker is not a replica of: UNKNOWN_TOPIC_OR_PARTITION;
- StopReplica with a leader epoch not above the one held: FENCED_LEADER_EPOCH for that partition,
  except the sentinels -1 (no epoch) and -2 (topic being deleted), which always apply.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import uuid
from typing import Any

from kafkalite.common.leader_and_isr import EPOCH_DURING_DELETE, NO_EPOCH, UNKNOWN_BROKER_EPOCH
from kafkalite.common.uuids import ZERO_UUID
from kafkalite.protocol import error_codes as E

from .metadata_cache import MetadataCache

log = logging.getLogger("kafkalite.server.replica_manager")



@dataclasses.dataclass(frozen=True)
class HostedPartition:
    topic: str
    topic_id: uuid.UUID
    index: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    replicas: tuple[int, ...]
    partition_epoch: int


@dataclasses.dataclass
class PartitionResult:
    topic: str
    topic_id: uuid.UUID
    index: int
    error_code: int


class ReplicaManager:
    def __init__(self, node_id: int, metadata_cache: MetadataCache) -> None:
        self.node_id = node_id
        self.metadata_cache = metadata_cache
        self.controller_epoch = 0  # the newest seen
        self.broker_epoch = UNKNOWN_BROKER_EPOCH  # given by the controller at registration
        self.partitions: dict[tuple[str, int], HostedPartition] = {}
        self.deleted: set[tuple[str, int]] = set()
        self._lock = threading.Lock()  # handler threads may apply requests concurrently

    # --- fencing ------------------------------------------------------------------------------

    def _fence(self, controller_epoch: int, broker_epoch: int) -> int:
        if broker_epoch != UNKNOWN_BROKER_EPOCH and broker_epoch < self.broker_epoch:
            return E.STALE_BROKER_EPOCH
        if controller_epoch < self.controller_epoch:
            return E.STALE_CONTROLLER_EPOCH
        self.controller_epoch = controller_epoch
        return E.NONE

    # --- LeaderAndIsr -------------------------------------------------------------------------

    def become_leader_or_follower(
        self, controller_epoch: int, broker_epoch: int, states: list[tuple[str, uuid.UUID, Any]]
    ) -> tuple[int, list[PartitionResult]]:
        """``states``: (topic, topic id, LeaderAndIsrPartitionState) for every partition."""
        with self._lock:
            error = self._fence(controller_epoch, broker_epoch)
            if error:
                return error, [PartitionResult(t, tid, s.partition_index, error) for t, tid, s in states]
            results = []
            for topic, topic_id, s in states:
                key = (topic, s.partition_index)
                current = self.partitions.get(key)
                if self.node_id not in s.replicas:
                    code = E.UNKNOWN_TOPIC_OR_PARTITION
                elif current is not None and topic_id != ZERO_UUID and current.topic_id not in (
                        ZERO_UUID, topic_id):
                    code = E.INCONSISTENT_TOPIC_ID
                elif current is not None and s.leader_epoch <= current.leader_epoch:
                    code = E.STALE_CONTROLLER_EPOCH
                else:
                    self.partitions[key] = HostedPartition(
                        topic, topic_id, s.partition_index, s.leader, s.leader_epoch, tuple(s.isr),
                        tuple(s.replicas), s.partition_epoch)
                    self.deleted.discard(key)
                    code = E.NONE
                results.append(PartitionResult(topic, topic_id, s.partition_index, code))
            return E.NONE, results

    # --- StopReplica --------------------------------------------------------------------------

    def stop_replicas(self, controller_epoch: int, broker_epoch: int,
                      partitions: list[tuple[str, int, int, bool]]) -> tuple[int, list[PartitionResult]]:
        """``partitions``: (topic, partition, leader epoch, delete)."""
        with self._lock:
            error = self._fence(controller_epoch, broker_epoch)
            if error:
                return error, [PartitionResult(t, ZERO_UUID, p, error) for t, p, _, _ in partitions]
            results = []
            for topic, index, epoch, delete in partitions:
                key = (topic, index)
                current = self.partitions.get(key)
                if (current is not None and epoch not in (NO_EPOCH, EPOCH_DURING_DELETE)
                        and epoch <= current.leader_epoch):
                    code = E.FENCED_LEADER_EPOCH
                else:
                    self.partitions.pop(key, None)
                    if delete:
                        self.deleted.add(key)
                    code = E.NONE
                results.append(PartitionResult(topic, ZERO_UUID, index, code))
            return E.NONE, results

    # --- UpdateMetadata -----------------------------------------------------------------------

    def update_metadata(self, request: Any, version: int) -> int:
        with self._lock:
            error = self._fence(request.controller_epoch, request.broker_epoch)
            if error:
                return error
            self.metadata_cache.update_metadata(request, version)
            return E.NONE
