"""``__consumer_offsets`` for the group coordinator (Kafka's GroupMetadataManager's storage half):
which partition holds a group, appending its records with acks=all, and loading a partition's
groups when this broker becomes its leader.

A group lives in partition ``abs(hash(group id)) % offsets.topic.num.partitions`` (Java's
String.hashCode, so that a group maps where Kafka maps it). Appends go through the replica
manager like any produce, as one uncompressed batch, and are answered from the produce
purgatory once the high watermark covers them: what a member was told is stored survives the
leader. Errors are translated as Kafka's coordinator does (NOT_COORDINATOR when the leadership
left, COORDINATOR_NOT_AVAILABLE when the partition cannot take the write now). TxnOffsetCommit's
offsets go as a transactional batch of its producer (sequence -1, as Kafka's); the coordinator's
appends are the coordinator's own (AppendOrigin.COORDINATOR: epochs checked, not sequences). Loading reads
the batches, transaction markers included (a transaction's offsets count only once its COMMIT
marker follows).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

from kafkalite.common.java import partition_for_key
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.records.control import ControlRecordError, ControlRecordType, decode_end_txn_marker
from kafkalite.storage.log import Log

from ..replication.replica_manager import ReplicaManager
from .group_coordinator import GroupCoordinator
from .log_store import CoordinatorLog, PartitionLoader, ProducerFields, read_batches, translate_append_error
from .offsets import LoadedBatch
from .settings import OffsetsTopicConfig

log = logging.getLogger("kafkalite.server.coordinator")

OFFSETS_TOPIC = "__consumer_offsets"


def partition_for(group_id: str, num_partitions: int) -> int:
    """Kafka's partitionFor: Utils.abs(groupId.hashCode) % groupMetadataTopicPartitionCount
    (Utils.abs maps Integer.MIN_VALUE to 0)."""
    return partition_for_key(group_id, num_partitions)


def _commit_error(code: int) -> int:
    """Kafka's translation of an append's error for the group's client."""
    return translate_append_error(code, E.INVALID_COMMIT_OFFSET_SIZE)


class ReplicatedOffsetsStore:
    """The coordinator's OffsetsStore on this broker's partitions of __consumer_offsets."""

    def __init__(self, replica_manager: ReplicaManager, config: OffsetsTopicConfig) -> None:
        self.config = config
        self.log = CoordinatorLog(replica_manager, OFFSETS_TOPIC, config.commit_timeout_ms)

    def append(self, group_id: str, records: list[tuple[bytes, bytes | None]],
               done: Callable[[int], None], producer: ProducerFields | None = None,
               placed: Callable[[int], None] | None = None) -> None:
        """One uncompressed batch (the producer's transactional one when given) appended with
        acks=all to the group's partition; ``placed(base offset)`` once the leader has it (a
        transaction's offsets and a regular commit are ordered by it), then ``done(error)``
        once the high watermark covers it, the error as the group's client gets it."""
        self.log.append(partition_for(group_id, self.config.num_partitions), records,
                        lambda error: done(_commit_error(error)), producer, placed)


def loaded_batches(log_: Log) -> Iterator[LoadedBatch]:
    """The log's batches as the group coordinator replays them (transaction markers as
    COMMIT/ABORT of their producer; other control records skipped)."""
    for batch in read_batches(log_):
        header = batch.header
        if header.is_control:
            for key, value in batch.records:
                try:
                    marker = decode_end_txn_marker(key, value)
                except ControlRecordError:
                    continue  # another control type: nothing to the groups
                yield LoadedBatch([], header.base_offset, header.producer_id,
                                  marker.type is ControlRecordType.COMMIT)
        else:
            yield LoadedBatch(batch.records, header.base_offset,
                              header.producer_id if header.is_transactional else -1)


class CoordinatorLoader(PartitionLoader):
    """Follows the leadership of __consumer_offsets partitions: a partition this broker now leads
    has its groups loaded in the background (``group-metadata-manager-0``), one it no longer leads
    is unloaded at once (Kafka's onElection / onResignation)."""

    def __init__(self, coordinator: GroupCoordinator, replica_manager: ReplicaManager) -> None:
        super().__init__(
            replica_manager, OFFSETS_TOPIC, "group-metadata-manager-0", coordinator.begin_loading,
            lambda index, log_: coordinator.load_batches(index, loaded_batches(log_), already_loading=True),
            coordinator.unload)
