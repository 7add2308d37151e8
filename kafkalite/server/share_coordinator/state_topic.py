"""``__share_group_state`` on a broker: the share coordinator's writes through a CoordinatorLog
(acks=all, share.coordinator.write.timeout.ms), and its partitions followed as this broker gains
and loses their leadership (``share-coordinator-loader``: each partition's records replayed in a
background thread, Kafka's onElection / onResignation)."""

from __future__ import annotations

from collections.abc import Callable

from kafkalite.storage.log import Log

from ..coordinator.log_store import CoordinatorLog, KeyValue, PartitionLoader, read_records
from ..replication.replica_manager import ReplicaManager
from .coordinator import SHARE_GROUP_STATE_TOPIC, ShareCoordinator


class ReplicatedShareStateStore:
    """The share coordinator's store on this broker's partitions of __share_group_state."""

    def __init__(self, replica_manager: ReplicaManager, timeout_ms: int) -> None:
        self.log = CoordinatorLog(replica_manager, SHARE_GROUP_STATE_TOPIC, timeout_ms)

    def append(self, index: int, records: list[KeyValue], done: Callable[[int], None]) -> None:
        self.log.append(index, records, done)


class ShareStateLoader(PartitionLoader):
    def __init__(self, coordinator: ShareCoordinator, replica_manager: ReplicaManager,
                 load_buffer_bytes: int) -> None:
        def load(index: int, log_: Log) -> None:
            coordinator.load(index, read_records(log_, load_buffer_bytes))

        super().__init__(replica_manager, SHARE_GROUP_STATE_TOPIC, "share-coordinator-loader",
                         coordinator.begin_loading, load, coordinator.unload)
