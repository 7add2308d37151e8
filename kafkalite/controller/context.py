"""The controller's view of the cluster (the parts of Kafka's ControllerContext kafkalite needs).

Brokers: every registered broker is "live or shutting down"; the ones in ``shutting_down_broker_ids``
are excluded from ``live_broker_ids``. A broker's epoch is the one it registered with; requests to it
carry that epoch so that a restarted broker (new epoch) rejects requests meant for its predecessor.

Topics: ids, replica assignments, the current leader/ISR of each partition, and the topics queued
for deletion (``topics_to_be_deleted``) and those whose deletion has begun
(``topics_with_deletion_started``).
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterable
from typing import NamedTuple

from kafkalite.common.endpoints import Endpoint
from kafkalite.common.leader_and_isr import EPOCH_DURING_DELETE, NO_EPOCH

INITIAL_CONTROLLER_EPOCH = 0  # Kafka's KafkaController.InitialControllerEpoch

LEADER_RECOVERY_RECOVERED = 0
LEADER_RECOVERY_RECOVERING = 1


class TopicPartition(NamedTuple):
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclasses.dataclass(frozen=True)
class LeaderIsrAndControllerEpoch:
    """A partition's leader, leader epoch, ISR and partition epoch (Kafka's LeaderAndIsr, whose
    ``partitionEpoch`` was the ZooKeeper version), with the epoch of the controller that chose them."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    partition_epoch: int
    controller_epoch: int
    leader_recovery_state: int = LEADER_RECOVERY_RECOVERED


@dataclasses.dataclass(frozen=True)
class ControllerBroker:
    """A registered broker: id, registration epoch, listener endpoints, rack."""

    id: int
    epoch: int
    endpoints: tuple[Endpoint, ...]
    rack: str | None = None

    def endpoint(self, listener: str) -> Endpoint | None:
        """The endpoint of ``listener`` (names compared in upper case), or None."""
        name = listener.upper()
        for e in self.endpoints:
            if e.name.upper() == name:
                return e
        return None


class ControllerContext:
    def __init__(self) -> None:
        self.epoch: int = INITIAL_CONTROLLER_EPOCH
        self.shutting_down_broker_ids: set[int] = set()
        self._brokers: dict[int, ControllerBroker] = {}

        self.topic_ids: dict[str, uuid.UUID] = {}
        self.partition_assignments: dict[str, dict[int, list[int]]] = {}
        self.partition_leadership: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        self.topics_to_be_deleted: set[str] = set()
        self.topics_with_deletion_started: set[str] = set()
        # Replicas a broker reported on an offline log directory: not online though the broker is.
        self.replicas_on_offline_dirs: dict[int, set[TopicPartition]] = {}

    # --- brokers ------------------------------------------------------------------------------

    def set_live_brokers(self, brokers: Iterable[ControllerBroker]) -> None:
        self._brokers.clear()
        self.add_live_brokers(brokers)

    def add_live_brokers(self, brokers: Iterable[ControllerBroker]) -> None:
        for b in brokers:
            self._brokers[b.id] = b

    def remove_live_brokers(self, broker_ids: Iterable[int]) -> None:
        for broker_id in broker_ids:
            self._brokers.pop(broker_id, None)

    def update_broker_metadata(self, broker: ControllerBroker) -> None:
        """Replace a registered broker's metadata (endpoints, rack; Kafka's updateBrokerMetadata)."""
        self._brokers[broker.id] = broker

    @property
    def live_broker_ids(self) -> set[int]:
        return set(self._brokers) - self.shutting_down_broker_ids

    @property
    def live_or_shutting_down_broker_ids(self) -> set[int]:
        return set(self._brokers)

    @property
    def live_or_shutting_down_brokers(self) -> list[ControllerBroker]:
        """Every registered broker, in registration order."""
        return list(self._brokers.values())

    def live_broker(self, broker_id: int) -> ControllerBroker | None:
        """The registered broker ``broker_id`` (live or shutting down), or None."""
        return self._brokers.get(broker_id)

    def broker_epoch(self, broker_id: int) -> int:
        """The epoch of a registered broker; KeyError if it is not registered."""
        return self._brokers[broker_id].epoch

    def is_replica_online(self, broker_id: int, tp: TopicPartition,
                          include_shutting_down: bool = False) -> bool:
        ids = self.live_or_shutting_down_broker_ids if include_shutting_down else self.live_broker_ids
        return broker_id in ids and tp not in self.replicas_on_offline_dirs.get(broker_id, ())

    # --- topics and partitions ----------------------------------------------------------------

    def add_topic(self, topic: str, topic_id: uuid.UUID,
                  assignment: dict[int, list[int]] | None = None) -> None:
        existing = self.topic_ids.get(topic)
        if existing is not None and existing != topic_id:
            raise ValueError(f"topic {topic} already has id {existing}, not {topic_id}")
        self.topic_ids[topic] = topic_id
        self.partition_assignments.setdefault(topic, {})
        for partition, replicas in (assignment or {}).items():
            self.partition_assignments[topic][partition] = list(replicas)

    @property
    def all_topics(self) -> set[str]:
        return set(self.partition_assignments) | set(self.topic_ids)

    def partitions_for_topic(self, topic: str) -> set[TopicPartition]:
        return {TopicPartition(topic, p) for p in self.partition_assignments.get(topic, {})}

    @property
    def all_partitions(self) -> set[TopicPartition]:
        return {TopicPartition(t, p) for t, parts in self.partition_assignments.items() for p in parts}

    def partition_replica_assignment(self, tp: TopicPartition) -> list[int]:
        """The partition's replicas ([] when unknown)."""
        return list(self.partition_assignments.get(tp.topic, {}).get(tp.partition, ()))

    def update_partition_replica_assignment(self, tp: TopicPartition, replicas: Iterable[int]) -> None:
        self.partition_assignments.setdefault(tp.topic, {})[tp.partition] = list(replicas)

    def put_partition_leadership(self, tp: TopicPartition, info: LeaderIsrAndControllerEpoch) -> None:
        self.partition_leadership[tp] = info

    def partition_leadership_info(self, tp: TopicPartition) -> LeaderIsrAndControllerEpoch | None:
        return self.partition_leadership.get(tp)

    def leader_epoch(self, tp: TopicPartition) -> int:
        """The epoch a StopReplica carries: -2 when the topic is queued for deletion (it overrides
        any epoch), else the partition's leader epoch, or -1 when it has no leader yet."""
        if self.is_topic_queued_up_for_deletion(tp.topic):
            return EPOCH_DURING_DELETE
        info = self.partition_leadership.get(tp)
        return info.leader_epoch if info is not None else NO_EPOCH

    def partitions_on_broker(self, broker_id: int) -> set[TopicPartition]:
        return {TopicPartition(t, p) for t, parts in self.partition_assignments.items()
                for p, replicas in parts.items() if broker_id in replicas}

    def partitions_led_by(self, broker_id: int) -> set[TopicPartition]:
        """Partitions whose current leader is ``broker_id`` (topics queued for deletion included)."""
        return {tp for tp, info in self.partition_leadership.items() if info.leader == broker_id}

    # --- deletion -----------------------------------------------------------------------------

    def queue_topic_deletion(self, topics: Iterable[str]) -> None:
        self.topics_to_be_deleted.update(topics)

    def begin_topic_deletion(self, topics: Iterable[str]) -> None:
        self.topics_with_deletion_started.update(topics)

    def is_topic_queued_up_for_deletion(self, topic: str) -> bool:
        return topic in self.topics_to_be_deleted

    def is_topic_deletion_in_progress(self, topic: str) -> bool:
        return topic in self.topics_with_deletion_started

    def remove_topic(self, topic: str) -> None:
        """Forget a topic: its deletion marks, id, assignment and the leadership of its partitions."""
        self.topics_to_be_deleted.discard(topic)
        self.topics_with_deletion_started.discard(topic)
        self.topic_ids.pop(topic, None)
        parts = self.partition_assignments.pop(topic, {})
        for p in parts:
            self.partition_leadership.pop(TopicPartition(topic, p), None)
        # Leadership recorded for partitions missing from the assignment goes as well.
        for tp in [tp for tp in self.partition_leadership if tp.topic == topic]:
            del self.partition_leadership[tp]
        for offline in self.replicas_on_offline_dirs.values():
            offline.difference_update({tp for tp in offline if tp.topic == topic})
