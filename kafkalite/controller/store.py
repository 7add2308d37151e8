"""The controller's durable state: the metadata log (``__cluster_metadata``) and its image.

Every mutation the controller makes is a list of metadata records (records.py) handed to
``write(records) -> last offset``, which returns once they are committed and applied to the image
(the controller's write blocks on RaftManager.append(...).result(timeout)); a write that fails
(this node no longer leads, the commit did not come in time) raises ApiError(NOT_CONTROLLER) and
changes nothing here. The image (image.py) is applied from the Raft listener's handle_commit and
handle_load_snapshot (``apply_entries``, ``load_snapshot``); the loaders read it.

A broker's epoch is the offset of its RegisterBrokerRecord, as Kafka's. A block of producer ids
is a ProducerIdsRecord naming the first id of the next block, so no id is given twice.
"""

from __future__ import annotations

import dataclasses
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kafkalite.common.endpoints import Endpoint
from kafkalite.common.scram import ScramCredential

from . import records as R
from .acls import AclBinding
from .image import (
    MetadataImage,
    PartitionRegistration,
    QuotaEntity,
    acl_record,
    client_quota_record,
    partition_change,
    partition_record,
    register_broker_record,
    scram_record,
)

# Writes records to the metadata log: the last offset once committed and applied; ApiError
# (NOT_CONTROLLER) when not.
Write = Callable[[list[Any]], int]
# (topic, partition) -> (adding replicas, removing replicas) of a reassignment in progress.
StoredReassignments = Mapping[tuple[str, int], tuple[tuple[int, ...], tuple[int, ...]]]

__all__ = ["ControllerStore", "QuotaEntity", "StoredPartition", "StoredReassignments", "Write"]


@dataclasses.dataclass(frozen=True, order=True)
class StoredPartition:
    topic: str
    partition: int
    replicas: tuple[int, ...]
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    partition_epoch: int
    leader_recovery_state: int = 0

    def registration(self, adding: tuple[int, ...] = (), removing: tuple[int, ...] = ()
                     ) -> PartitionRegistration:
        return PartitionRegistration(self.replicas, self.isr, self.leader, self.leader_epoch,
                                     self.partition_epoch, removing, adding, self.leader_recovery_state)


class ControllerStore:
    def __init__(self, write: Write, image: MetadataImage | None = None) -> None:
        self._write = write
        self.image = image if image is not None else MetadataImage()
        self.lock = threading.RLock()  # the image's: replay, snapshots and loaders
        self.bytes_since_snapshot = 0
        self.last_epoch = 0  # the Raft epoch of the last entry applied

    # --- replay (the Raft listener's thread) -------------------------------------------------------

    def apply_entries(self, entries: Iterable[Any]) -> None:
        """Apply committed log entries (``offset``, ``epoch``, ``data``), in order."""
        with self.lock:
            for e in entries:
                if getattr(e, "control", False):
                    continue
                self.image.apply(R.decode(e.data), e.offset)
                self.bytes_since_snapshot += len(e.data)
                self.last_epoch = e.epoch

    def load_snapshot(self, end_offset: int, epoch: int, payload: bytes) -> None:
        """Replace the image with a snapshot of every record below ``end_offset``."""
        with self.lock:
            self.image.load(R.decode_all(payload), end_offset - 1)
            self.bytes_since_snapshot = 0
            self.last_epoch = epoch

    def snapshot(self) -> tuple[int, int, bytes]:
        """(end offset, epoch, payload) of a snapshot of the image as it is now."""
        with self.lock:
            self.bytes_since_snapshot = 0
            return self.image.offset + 1, self.last_epoch, R.encode_all(self.image.to_records())

    # --- writing (the controller's event thread) ---------------------------------------------------

    def write(self, records: Sequence[Any]) -> int:
        """Write ``records`` (none: nothing, -1): the last offset."""
        return self._write(list(records)) if records else -1

    def register_broker(self, broker_id: int, incarnation_id: uuid.UUID, endpoints: Iterable[Endpoint],
                        rack: str | None) -> int:
        """A new registration (unfenced): its broker epoch, the offset of its record."""
        return self.write([register_broker_record(broker_id, incarnation_id, endpoints, rack)])

    def fence_broker(self, broker_id: int, epoch: int) -> None:
        b = self.image.brokers.get(broker_id)
        if b is not None and b.epoch == epoch and not b.fenced:
            self.write([R.FENCE_BROKER_RECORD(id=broker_id, epoch=epoch)])

    def allocate_producer_ids(self, size: int, broker_id: int = -1, broker_epoch: int = -1) -> int:
        """The first id of a new block of ``size`` producer ids, committed before this returns."""
        first = self.image.next_producer_id
        self.write([R.PRODUCER_IDS_RECORD(broker_id=broker_id, broker_epoch=broker_epoch,
                                          next_producer_id=first + size)])
        return first

    def next_producer_id(self) -> int:
        """The first id of the next block to be given (0 before any)."""
        return self.image.next_producer_id

    def create_topic(self, name: str, topic_id: uuid.UUID, partitions: list[StoredPartition],
                     configs: Mapping[str, str] | None = None) -> None:
        records: list[Any] = [R.TOPIC_RECORD(name=name, topic_id=topic_id)]
        records += [R.CONFIG_RECORD(resource_type=R.CONFIG_TOPIC, resource_name=name, name=k, value=v)
                    for k, v in sorted((configs or {}).items())]
        records += [partition_record(topic_id, p.partition, p.registration()) for p in partitions]
        self.write(records)

    def add_partitions(self, partitions: list[StoredPartition]) -> None:
        """New partitions of existing topics (CreatePartitions)."""
        self.write([partition_record(self.image.topic_ids[p.topic], p.partition, p.registration())
                    for p in partitions])

    def _changes(self, partitions: Iterable[StoredPartition],
                 reassigning: StoredReassignments | None = None) -> list[Any]:
        out = []
        for p in partitions:
            topic = self.image.topic(p.topic)
            old = topic.partitions.get(p.partition) if topic is not None else None
            if topic is None or old is None:
                continue
            adding, removing = old.adding, old.removing
            if reassigning is not None:
                adding, removing = reassigning.get((p.topic, p.partition), ((), ()))
            record = partition_change(topic.topic_id, p.partition, old, p.registration(adding, removing))
            if record is not None:
                out.append(record)
        return out

    def update_partitions(self, partitions: list[StoredPartition]) -> None:
        """Partitions' new leadership and replicas (the reassignments in progress kept)."""
        self.write(self._changes(partitions))

    def update_reassignments(self, partitions: list[StoredPartition], started: StoredReassignments,
                             ended: list[tuple[str, int]]) -> None:
        """Partitions' new state with the reassignments that start (or change) and those that end,
        in one write."""
        current = self.load_reassignments()
        for key in ended:
            current.pop(key, None)
        current.update(started)
        self.write(self._changes(partitions, current))

    def load_reassignments(self) -> dict[tuple[str, int], tuple[tuple[int, ...], tuple[int, ...]]]:
        """The reassignments in progress: (topic, partition) -> (adding, removing)."""
        with self.lock:
            return {(t.name, i): (p.adding, p.removing) for t in self.image.topics.values()
                    for i, p in sorted(t.partitions.items()) if p.adding or p.removing}

    def begin_topic_deletion(self, name: str) -> None:
        topic_id = self.image.topic_ids.get(name)
        if topic_id is not None and topic_id not in self.image.deleting:
            self.write([R.BEGIN_TOPIC_DELETION_RECORD(topic_id=topic_id)])

    def delete_topic(self, name: str) -> None:
        topic_id = self.image.topic_ids.get(name)
        if topic_id is not None:
            self.write([R.REMOVE_TOPIC_RECORD(topic_id=topic_id)])

    def deleting_topics(self) -> list[str]:
        """Topics whose deletion has begun and not finished."""
        with self.lock:
            return sorted(self.image.topics[t].name for t in self.image.deleting)

    def load(self) -> tuple[dict[str, uuid.UUID], list[StoredPartition]]:
        with self.lock:
            parts = [StoredPartition(t.name, i, p.replicas, p.leader, p.leader_epoch, p.isr,
                                     p.partition_epoch, p.leader_recovery_state)
                     for t in self.image.topics.values() for i, p in t.partitions.items()]
            return dict(self.image.topic_ids), sorted(parts)

    # --- configs ---------------------------------------------------------------------------------

    def _set_configs(self, kind: int, owner: str, configs: Mapping[str, str]) -> None:
        old = self.image.configs.get((kind, owner), {})
        records = [R.CONFIG_RECORD(resource_type=kind, resource_name=owner, name=k, value=None)
                   for k in sorted(old) if k not in configs]
        records += [R.CONFIG_RECORD(resource_type=kind, resource_name=owner, name=k, value=v)
                    for k, v in sorted(configs.items()) if old.get(k) != v]
        self.write(records)

    def set_topic_configs(self, topic: str, configs: Mapping[str, str]) -> None:
        """Replace the topic's overrides with ``configs`` (AlterConfigs, IncrementalAlterConfigs)."""
        self._set_configs(R.CONFIG_TOPIC, topic, configs)

    def set_broker_configs(self, broker: str, configs: Mapping[str, str]) -> None:
        """Replace the dynamic configs of ``broker`` (an id, or '' for the cluster default)."""
        self._set_configs(R.CONFIG_BROKER, broker, configs)

    def set_group_configs(self, group: str, configs: Mapping[str, str]) -> None:
        """Replace the group configs of ``group`` (ConfigResource type GROUP)."""
        self._set_configs(R.CONFIG_GROUP, group, configs)

    def load_group_configs(self) -> dict[str, dict[str, str]]:
        with self.lock:
            return self.image.group_configs()

    def load_topic_configs(self) -> dict[str, dict[str, str]]:
        with self.lock:
            return self.image.topic_configs()

    def load_broker_configs(self) -> dict[str, dict[str, str]]:
        with self.lock:
            return self.image.broker_configs()

    # --- client quotas, SCRAM, ACLs --------------------------------------------------------------------

    def set_client_quotas(self, entity: QuotaEntity, values: Mapping[str, float]) -> None:
        """Replace the client quotas of ``entity``."""
        old = self.image.client_quotas.get(entity, {})
        records = [client_quota_record(entity, k, None) for k in sorted(old) if k not in values]
        records += [client_quota_record(entity, k, float(v)) for k, v in sorted(values.items())
                    if old.get(k) != float(v)]
        self.write(records)

    def load_client_quotas(self) -> dict[QuotaEntity, dict[str, float]]:
        with self.lock:
            return {e: dict(v) for e, v in self.image.client_quotas.items()}

    def set_scram_credentials(self, user: str, credentials: Mapping[int, ScramCredential]) -> None:
        """Replace ``user``'s SCRAM credentials (mechanism type -> salted keys; empty: none)."""
        old = self.image.scram.get(user, {})
        records: list[Any] = [R.REMOVE_USER_SCRAM_CREDENTIAL_RECORD(name=user, mechanism=m)
                              for m in sorted(old) if m not in credentials]
        records += [scram_record(user, m, c) for m, c in sorted(credentials.items()) if old.get(m) != c]
        self.write(records)

    def load_scram_credentials(self) -> dict[str, dict[int, ScramCredential]]:
        with self.lock:
            return {u: dict(c) for u, c in self.image.scram.items()}

    def add_acls(self, bindings: Iterable[AclBinding]) -> None:
        known = set(self.image.acls.values())
        new = sorted(set(bindings) - known)
        self.write([acl_record(uuid.uuid4(), b) for b in new])

    def delete_acls(self, bindings: Iterable[AclBinding]) -> None:
        gone = set(bindings)
        self.write([R.REMOVE_ACCESS_CONTROL_ENTRY_RECORD(id=acl_id)
                    for acl_id, b in sorted(self.image.acls.items()) if b in gone])

    def load_acls(self) -> list[AclBinding]:
        with self.lock:
            return sorted(self.image.acls.values())
