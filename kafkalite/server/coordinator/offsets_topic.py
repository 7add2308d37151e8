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
import threading
import time
from collections.abc import Callable, Iterator

from kafkalite.common.errors import ApiError
from kafkalite.common.java import partition_for_key
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.records import Record, build_batch, iter_batches
from kafkalite.protocol.records.records import decode_records
from kafkalite.storage.log import FetchIsolation, Log

from ..purgatory import DelayedOperation
from ..replication.replica_manager import ReplicaManager, partition_key
from .group_coordinator import GroupCoordinator
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
        self.replica_manager = replica_manager
        self.config = config

    def append(self, group_id: str, records: list[tuple[bytes, bytes | None]],
               done: Callable[[int], None]) -> None:
        index = partition_for(group_id, self.config.num_partitions)
        batch = build_batch([Record(i, 0, key, value) for i, (key, value) in enumerate(records)],
                            base_timestamp=int(time.time() * 1000))
        rm = self.replica_manager
        try:
            info, _ = rm.append_to_leader(OFFSETS_TOPIC, index, bytearray(batch), -1)
        except ApiError as e:
            done(_commit_error(e.code))
            return
        rm.produce_purgatory.try_complete_else_watch(
            DelayedStore(self.config.commit_timeout_ms, rm, index, info.last_offset + 1, done),
            [partition_key(OFFSETS_TOPIC, index)])


class DelayedStore(DelayedOperation):
    """The coordinator's append waiting for the high watermark (a DelayedProduce of one batch)."""

    def __init__(self, timeout_ms: int, rm: ReplicaManager, index: int, required: int,
                 done: Callable[[int], None]) -> None:
        super().__init__(timeout_ms)
        self.rm, self.index, self.required, self.done = rm, index, required, done
        self.error = E.REQUEST_TIMED_OUT

    def try_complete(self) -> bool:
        partition = self.rm.partitions.get((OFFSETS_TOPIC, self.index))
        if partition is None or not partition.is_leader:
            self.error = E.NOT_LEADER_OR_FOLLOWER
            return self.force_complete()
        reached, error = partition.required_offset_reached(self.required)
        if reached:
            self.error = error
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        self.done(_commit_error(self.error))

    def on_expiration(self) -> None:
        pass


def read_records(log_: Log) -> Iterator[tuple[bytes, bytes | None]]:
    """Every (key, value) of the log from its start to its end, in offset order."""
    offset = log_.log_start_offset
    end = log_.log_end_offset
    while offset < end:
        data = log_.read(offset, 1 << 20, FetchIsolation.LOG_END).read()
        if not data:
            break
        for pos, header in iter_batches(data):
            offset = header.next_offset
            if header.is_control:
                continue
            for r in decode_records(data, pos, header):
                if r.key is not None:
                    yield r.key, r.value


class CoordinatorLoader:
    """Follows the leadership of __consumer_offsets partitions: a partition this broker now leads
    has its groups loaded in the background (``group-metadata-manager-0``), one it no longer leads
    is unloaded at once (Kafka's onElection / onResignation)."""

    def __init__(self, coordinator: GroupCoordinator, replica_manager: ReplicaManager) -> None:
        self.coordinator = coordinator
        self.replica_manager = replica_manager
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def on_leadership(self, topic: str, index: int, leads: bool) -> None:
        if topic != OFFSETS_TOPIC:
            return
        if not leads:
            self.coordinator.unload(index)
            return
        self.coordinator.begin_loading(index)
        thread = threading.Thread(target=self._load, args=(index,), name="group-metadata-manager-0",
                                  daemon=True)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def _load(self, index: int) -> None:
        partition = self.replica_manager.partitions.get((OFFSETS_TOPIC, index))
        if partition is None or not partition.is_leader:
            self.coordinator.unload(index)
            return
        try:
            self.coordinator.load(index, list(read_records(partition.log)), already_loading=True)
        except Exception:
            log.exception("Loading the groups of %s-%d failed", OFFSETS_TOPIC, index)
            self.coordinator.unload(index)

    def shutdown(self, timeout: float = 5.0) -> None:
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout)
