"""``__transaction_state`` on a broker: the coordinator's writes through a CoordinatorLog (acks=all,
as the group coordinator's), and its partitions followed as this broker gains and loses their
leadership (``transaction-log-loader``), the coordinator epoch being the partition's leader epoch
when it arrived (Kafka's onElection / onResignation)."""

from __future__ import annotations

from collections.abc import Callable

from ...replication.replica_manager import ReplicaManager
from ..log_store import CoordinatorLog, KeyValue, PartitionLoader, read_records
from .coordinator import TransactionCoordinator
from .log_records import TRANSACTION_STATE_TOPIC


class ReplicatedTxnLogStore:
    """TransactionStateManager's store on this broker's partitions of __transaction_state."""

    def __init__(self, replica_manager: ReplicaManager, timeout_ms: int) -> None:
        self.log = CoordinatorLog(replica_manager, TRANSACTION_STATE_TOPIC, timeout_ms)

    def append(self, index: int, records: list[KeyValue], done: Callable[[int], None]) -> None:
        self.log.append(index, records, done)


class TransactionLogLoader(PartitionLoader):
    """Reads a partition ``load_buffer_bytes`` at a time (transaction.state.log.load.buffer.size)."""

    def __init__(self, coordinator: TransactionCoordinator, replica_manager: ReplicaManager,
                 load_buffer_bytes: int) -> None:
        self._epochs: dict[int, int] = {}

        def begin(index: int) -> None:
            partition = replica_manager.partitions.get((TRANSACTION_STATE_TOPIC, index))
            epoch = partition.leader_epoch if partition is not None else -1
            self._epochs[index] = epoch
            coordinator.on_election(index, epoch)

        def load(index: int, log_: object) -> None:
            records = list(read_records(log_, load_buffer_bytes))  # type: ignore[arg-type]
            coordinator.load(index, self._epochs.get(index, -1), records)

        super().__init__(replica_manager, TRANSACTION_STATE_TOPIC, "transaction-log-loader", begin, load,
                         coordinator.on_resignation)
