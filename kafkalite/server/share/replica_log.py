"""The ``ShareLog`` of a broker: share-partitions read the partitions this broker leads through
its ReplicaManager, as a consumer's Fetch does (up to the high watermark: read_uncommitted, the
share.isolation.level default)."""

from __future__ import annotations

from kafkalite.common.file_slice import FileSlice
from kafkalite.storage.log import FetchIsolation

from ..replication.replica_manager import ReplicaManager


class ReplicaShareLog:
    def __init__(self, replica_manager: ReplicaManager) -> None:
        self.replica_manager = replica_manager

    def read(self, topic: str, partition: int, offset: int, max_bytes: int) -> bytes:
        p = self.replica_manager.get_partition(topic, partition)
        result = p.read(offset, max_bytes, FetchIsolation.HIGH_WATERMARK, min_one_message=True)
        records = result.records
        return records.read() if type(records) is FileSlice else bytes(records)

    def bounds(self, topic: str, partition: int) -> tuple[int, int]:
        p = self.replica_manager.get_partition(topic, partition)
        p.check_leader()
        return p.log.log_start_offset, p.log.high_watermark

    def offset_for_timestamp(self, topic: str, partition: int, timestamp: int) -> int:
        p = self.replica_manager.get_partition(topic, partition)
        p.check_leader()
        high_watermark = p.log.high_watermark
        found = p.log.fetch_offset_by_timestamp(timestamp)
        return high_watermark if found is None else min(found.offset, high_watermark)

    def leader_epoch(self, topic: str, partition: int) -> int:
        p = self.replica_manager.get_partition(topic, partition)
        p.check_leader()
        return p.leader_epoch
