"""``__consumer_offsets`` for the group coordinator (Kafka's GroupMetadataManager's storage half):
which partition holds a group, appending its records with acks=all, and loading a partition's
groups when this broker becomes its leader.

A group lives in partition ``abs(hash(group id)) % offsets.topic.num.partitions`` (Java's
String.hashCode, so that a group maps where Kafka maps it). Appends go through the replica
manager like any produce, as one uncompressed batch, and are answered from the produce
purgatory once the high watermark covers them: what a member was told is stored survives the
leader. Errors are translated as Kafka's coordinator does (NOT_COORDINATOR when the leadership
left, COORDINATOR_NOT_AVAILABLE when the partition cannot take the write now).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from kafkalite.common.java import partition_for_key
from kafkalite.protocol import error_codes as E

from ..replication.replica_manager import ReplicaManager
from .group_coordinator import GroupCoordinator
from .log_store import CoordinatorLog, PartitionLoader, read_records
from .settings import OffsetsTopicConfig

log = logging.getLogger("kafkalite.server.coordinator")

OFFSETS_TOPIC = "__consumer_offsets"


def partition_for(group_id: str, num_partitions: int) -> int:
    """Kafka's partitionFor: Utils.abs(groupId.hashCode) % groupMetadataTopicPartitionCount
    (Utils.abs maps Integer.MIN_VALUE to 0)."""
    return partition_for_key(group_id, num_partitions)


def _commit_error(code: int) -> int:
    """Kafka's translation of an append's error for the group's client."""
    if code in (E.UNKNOWN_TOPIC_OR_PARTITION, E.NOT_ENOUGH_REPLICAS, E.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
                E.REQUEST_TIMED_OUT):
        return E.COORDINATOR_NOT_AVAILABLE
    if code in (E.NOT_LEADER_OR_FOLLOWER, E.KAFKA_STORAGE_ERROR):
        return E.NOT_COORDINATOR
    if code in (E.MESSAGE_TOO_LARGE, E.RECORD_LIST_TOO_LARGE, E.INVALID_FETCH_SIZE):
        return E.INVALID_COMMIT_OFFSET_SIZE
    return code


class ReplicatedOffsetsStore:
    """The coordinator's OffsetsStore on this broker's partitions of __consumer_offsets."""

    def __init__(self, replica_manager: ReplicaManager, config: OffsetsTopicConfig) -> None:
        self.config = config
        self.log = CoordinatorLog(replica_manager, OFFSETS_TOPIC, config.commit_timeout_ms)

    def append(self, group_id: str, records: list[tuple[bytes, bytes | None]],
               done: Callable[[int], None]) -> None:
        self.log.append(partition_for(group_id, self.config.num_partitions), records,
                        lambda error: done(_commit_error(error)))


class CoordinatorLoader(PartitionLoader):
    """Follows the leadership of __consumer_offsets partitions: a partition this broker now leads
    has its groups loaded in the background (``group-metadata-manager-0``), one it no longer leads
    is unloaded at once (Kafka's onElection / onResignation)."""

    def __init__(self, coordinator: GroupCoordinator, replica_manager: ReplicaManager) -> None:
        super().__init__(
            replica_manager, OFFSETS_TOPIC, "group-metadata-manager-0", coordinator.begin_loading,
            lambda index, log_: coordinator.load(index, list(read_records(log_)), already_loading=True),
            coordinator.unload)
