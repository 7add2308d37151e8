"""The metadata image: what the committed metadata log says, record by record (Kafka's
MetadataImage / MetadataDelta replay, and the controller managers' replay methods).

``apply(record, offset)`` in log order: topics and their partitions (replicas, ISR, leader,
epochs, the replicas a reassignment adds and removes), registered brokers (epoch, endpoints,
rack, fenced), topic and broker configs, client quotas, SCRAM credentials, ACLs, the next
producer id, and the topics whose deletion has begun. ``to_records()`` writes it all back as
records (a snapshot); ``load(records)`` replaces it with a snapshot's.

A broker's epoch is the offset of its RegisterBrokerRecord (Kafka's): the controller writes the
record with BrokerEpoch -1 and the image takes the offset; a snapshot's record carries the epoch.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterable
from typing import Any

from kafkalite.common.endpoints import SECURITY_PROTOCOL_IDS, SECURITY_PROTOCOL_NAMES, Endpoint
from kafkalite.common.scram import ScramCredential

from . import records as R
from .acls import AclBinding

# A client quota entity: ((type, name or None for the default), ...) sorted by type (quotas.py).
QuotaEntity = tuple[tuple[str, "str | None"], ...]


@dataclasses.dataclass(frozen=True)
class PartitionRegistration:
    """One partition as the log has it (Kafka's PartitionRegistration)."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    leader_epoch: int
    partition_epoch: int
    removing: tuple[int, ...] = ()
    adding: tuple[int, ...] = ()
    leader_recovery_state: int = 0

    def merge(self, r: Any) -> PartitionRegistration:
        """Kafka's PartitionRegistration.merge of a PartitionChangeRecord: a leader given (even
        the same one) is a new leader epoch; every change is a new partition epoch."""
        leader, leader_epoch = self.leader, self.leader_epoch
        if r.leader != R.NO_LEADER_CHANGE:
            leader, leader_epoch = r.leader, leader_epoch + 1
        recovery = self.leader_recovery_state
        if r.leader_recovery_state != R.NO_RECOVERY_STATE_CHANGE:
            recovery = r.leader_recovery_state
        return PartitionRegistration(
            tuple(r.replicas) if r.replicas is not None else self.replicas,
            tuple(r.isr) if r.isr is not None else self.isr,
            leader, leader_epoch, self.partition_epoch + 1,
            tuple(r.removing_replicas) if r.removing_replicas is not None else self.removing,
            tuple(r.adding_replicas) if r.adding_replicas is not None else self.adding,
            recovery)


@dataclasses.dataclass(frozen=True)
class BrokerRegistration:
    id: int
    epoch: int
    incarnation_id: uuid.UUID
    endpoints: tuple[Endpoint, ...]
    rack: str | None
    fenced: bool
    in_controlled_shutdown: bool = False


@dataclasses.dataclass
class TopicImage:
    name: str
    topic_id: uuid.UUID
    partitions: dict[int, PartitionRegistration] = dataclasses.field(default_factory=dict)


class MetadataImage:
    def __init__(self) -> None:
        self.topics: dict[uuid.UUID, TopicImage] = {}
        self.topic_ids: dict[str, uuid.UUID] = {}
        self.deleting: set[uuid.UUID] = set()  # BeginTopicDeletionRecord, until RemoveTopicRecord
        self.brokers: dict[int, BrokerRegistration] = {}
        # (ConfigRecord resource type, resource name) -> {name: value}
        self.configs: dict[tuple[int, str], dict[str, str]] = {}
        self.client_quotas: dict[QuotaEntity, dict[str, float]] = {}
        self.scram: dict[str, dict[int, ScramCredential]] = {}
        self.acls: dict[uuid.UUID, AclBinding] = {}
        # Bumped by every ACL record and every load, never reset: whether the ACLs may have changed
        # since someone last looked, without comparing them (not part of the image's state).
        self.acl_changes = 0
        self.next_producer_id = 0
        self.producer_ids_owner: tuple[int, int] = (-1, -1)  # (broker id, epoch) of the last block
        self.offset = -1  # of the last record applied

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MetadataImage):
            return NotImplemented
        return self._state() == other._state()

    __hash__ = None  # type: ignore[assignment]

    def _state(self) -> tuple:
        return (self.topics, self.topic_ids, self.deleting, self.brokers, self.configs,
                self.client_quotas, self.scram, self.acls, self.next_producer_id, self.producer_ids_owner)

    # --- reading ----------------------------------------------------------------------------------

    def topic(self, name: str) -> TopicImage | None:
        topic_id = self.topic_ids.get(name)
        return self.topics.get(topic_id) if topic_id is not None else None

    def topic_configs(self) -> dict[str, dict[str, str]]:
        """Topic -> its config overrides (those without any left out)."""
        return {name: dict(values) for (kind, name), values in self.configs.items()
                if kind == R.CONFIG_TOPIC and values}

    def broker_configs(self) -> dict[str, dict[str, str]]:
        """Broker id ('' for the cluster default) -> its dynamic configs."""
        return {name: dict(values) for (kind, name), values in self.configs.items()
                if kind == R.CONFIG_BROKER and values}

    def group_configs(self) -> dict[str, dict[str, str]]:
        """Group id -> its group configs (KIP-848 / KIP-932 GroupConfig)."""
        return {name: dict(values) for (kind, name), values in self.configs.items()
                if kind == R.CONFIG_GROUP and values}

    # --- replay -----------------------------------------------------------------------------------

    def apply(self, record: Any, offset: int = -1) -> None:
        """Replay one committed record (``offset``: its offset in the log)."""
        key = R.api_key_of(record)
        handler = _APPLY.get(key)
        if handler is not None:
            handler(self, record, offset)
        if offset >= 0:
            self.offset = offset

    def load(self, records: Iterable[Any], offset: int = -1) -> None:
        """Replace the image with the records of a snapshot (``offset``: the last it covers)."""
        changes = self.acl_changes
        self.__init__()  # type: ignore[misc]
        self.acl_changes = changes + 1
        for r in records:
            self.apply(r)
        self.offset = offset

    def _register_broker(self, r: Any, offset: int) -> None:
        names = SECURITY_PROTOCOL_NAMES
        endpoints = tuple(Endpoint(e.name, e.host, e.port, names.get(e.security_protocol, "PLAINTEXT"))
                          for e in r.end_points)
        epoch = r.broker_epoch if r.broker_epoch >= 0 else offset
        self.brokers[r.broker_id] = BrokerRegistration(r.broker_id, epoch, r.incarnation_id, endpoints,
                                                       r.rack, r.fenced, r.in_controlled_shutdown)

    def _unregister_broker(self, r: Any, offset: int) -> None:
        self.brokers.pop(r.broker_id, None)

    def _fence(self, broker_id: int, epoch: int, fenced: bool) -> None:
        b = self.brokers.get(broker_id)
        if b is not None and b.epoch == epoch:
            self.brokers[broker_id] = dataclasses.replace(b, fenced=fenced,
                                                          in_controlled_shutdown=b.in_controlled_shutdown
                                                          and not fenced)

    def _registration_change(self, r: Any, offset: int) -> None:
        if r.fenced:
            self._fence(r.broker_id, r.broker_epoch, r.fenced > 0)
        b = self.brokers.get(r.broker_id)
        if r.in_controlled_shutdown and b is not None and b.epoch == r.broker_epoch:
            self.brokers[r.broker_id] = dataclasses.replace(b, in_controlled_shutdown=True)

    def _topic(self, r: Any, offset: int) -> None:
        self.topics[r.topic_id] = TopicImage(r.name, r.topic_id)
        self.topic_ids[r.name] = r.topic_id

    def _partition(self, r: Any, offset: int) -> None:
        topic = self.topics.get(r.topic_id)
        if topic is None:
            return
        topic.partitions[r.partition_id] = PartitionRegistration(
            tuple(r.replicas), tuple(r.isr), r.leader, r.leader_epoch, r.partition_epoch,
            tuple(r.removing_replicas), tuple(r.adding_replicas), r.leader_recovery_state)

    def _partition_change(self, r: Any, offset: int) -> None:
        topic = self.topics.get(r.topic_id)
        if topic is None or r.partition_id not in topic.partitions:
            return
        topic.partitions[r.partition_id] = topic.partitions[r.partition_id].merge(r)

    def _remove_topic(self, r: Any, offset: int) -> None:
        topic = self.topics.pop(r.topic_id, None)
        self.deleting.discard(r.topic_id)
        if topic is not None:
            self.topic_ids.pop(topic.name, None)
            self.configs.pop((R.CONFIG_TOPIC, topic.name), None)

    def _begin_deletion(self, r: Any, offset: int) -> None:
        if r.topic_id in self.topics:
            self.deleting.add(r.topic_id)

    def _config(self, r: Any, offset: int) -> None:
        key = (r.resource_type, r.resource_name)
        values = dict(self.configs.get(key, {}))
        if r.value is None:
            values.pop(r.name, None)
        else:
            values[r.name] = r.value
        if values:
            self.configs[key] = values
        else:
            self.configs.pop(key, None)

    def _client_quota(self, r: Any, offset: int) -> None:
        entity: QuotaEntity = tuple(sorted((e.entity_type, e.entity_name) for e in r.entity))
        values = dict(self.client_quotas.get(entity, {}))
        if r.remove:
            values.pop(r.key, None)
        else:
            values[r.key] = r.value
        if values:
            self.client_quotas[entity] = values
        else:
            self.client_quotas.pop(entity, None)

    def _scram(self, r: Any, offset: int) -> None:
        mine = dict(self.scram.get(r.name, {}))
        mine[r.mechanism] = ScramCredential(r.salt, r.stored_key, r.server_key, r.iterations)
        self.scram[r.name] = mine

    def _remove_scram(self, r: Any, offset: int) -> None:
        mine = dict(self.scram.get(r.name, {}))
        mine.pop(r.mechanism, None)
        if mine:
            self.scram[r.name] = mine
        else:
            self.scram.pop(r.name, None)

    def _acl(self, r: Any, offset: int) -> None:
        self.acl_changes += 1
        self.acls[r.id] = AclBinding.of(r.resource_type, r.resource_name, r.pattern_type, r.principal,
                                        r.host, r.operation, r.permission_type)

    def _remove_acl(self, r: Any, offset: int) -> None:
        self.acl_changes += 1
        self.acls.pop(r.id, None)

    def _producer_ids(self, r: Any, offset: int) -> None:
        self.next_producer_id = r.next_producer_id
        self.producer_ids_owner = (r.broker_id, r.broker_epoch)

    # --- snapshot -----------------------------------------------------------------------------

    def to_records(self) -> list[Any]:
        """Every record needed to build this image again, in an order ``load`` replays."""
        out: list[Any] = []
        for reg in sorted(self.brokers.values(), key=lambda b: b.id):
            out.append(register_broker_record(reg.id, reg.incarnation_id, reg.endpoints, reg.rack, reg.epoch,
                                              reg.fenced, reg.in_controlled_shutdown))
        for topic in sorted(self.topics.values(), key=lambda t: t.name):
            out.append(R.TOPIC_RECORD(name=topic.name, topic_id=topic.topic_id))
            for index, p in sorted(topic.partitions.items()):
                out.append(partition_record(topic.topic_id, index, p))
            if topic.topic_id in self.deleting:
                out.append(R.BEGIN_TOPIC_DELETION_RECORD(topic_id=topic.topic_id))
        for (kind, name), values in sorted(self.configs.items()):
            out += [R.CONFIG_RECORD(resource_type=kind, resource_name=name, name=k, value=v)
                    for k, v in sorted(values.items())]
        for entity, quotas in sorted(self.client_quotas.items(), key=lambda kv: repr(kv[0])):
            out += [client_quota_record(entity, k, v) for k, v in sorted(quotas.items())]
        for user, creds in sorted(self.scram.items()):
            out += [scram_record(user, m, c) for m, c in sorted(creds.items())]
        for acl_id, binding in sorted(self.acls.items()):
            out.append(acl_record(acl_id, binding))
        if self.next_producer_id or self.producer_ids_owner != (-1, -1):
            broker, epoch = self.producer_ids_owner
            out.append(R.PRODUCER_IDS_RECORD(broker_id=broker, broker_epoch=epoch,
                                             next_producer_id=self.next_producer_id))
        return out


_APPLY = {
    R.REGISTER_BROKER: MetadataImage._register_broker,
    R.UNREGISTER_BROKER: MetadataImage._unregister_broker,
    R.FENCE_BROKER: lambda self, r, offset: self._fence(r.id, r.epoch, True),
    R.UNFENCE_BROKER: lambda self, r, offset: self._fence(r.id, r.epoch, False),
    R.BROKER_REGISTRATION_CHANGE: MetadataImage._registration_change,
    R.TOPIC: MetadataImage._topic,
    R.PARTITION: MetadataImage._partition,
    R.PARTITION_CHANGE: MetadataImage._partition_change,
    R.REMOVE_TOPIC: MetadataImage._remove_topic,
    R.BEGIN_TOPIC_DELETION: MetadataImage._begin_deletion,
    R.CONFIG: MetadataImage._config,
    R.CLIENT_QUOTA: MetadataImage._client_quota,
    R.USER_SCRAM_CREDENTIAL: MetadataImage._scram,
    R.REMOVE_USER_SCRAM_CREDENTIAL: MetadataImage._remove_scram,
    R.ACCESS_CONTROL_ENTRY: MetadataImage._acl,
    R.REMOVE_ACCESS_CONTROL_ENTRY: MetadataImage._remove_acl,
    R.PRODUCER_IDS: MetadataImage._producer_ids,
}


# --- record builders (shared by the store and the snapshot) ---------------------------------------

def register_broker_record(broker_id: int, incarnation_id: uuid.UUID, endpoints: Iterable[Endpoint],
                           rack: str | None, epoch: int = -1, fenced: bool = False,
                           in_controlled_shutdown: bool = False) -> Any:
    E = R.REGISTER_BROKER_RECORD["end_points"]
    return R.REGISTER_BROKER_RECORD(
        broker_id=broker_id, incarnation_id=incarnation_id, broker_epoch=epoch,
        end_points=[E(name=e.name, host=e.host, port=e.port,
                      security_protocol=SECURITY_PROTOCOL_IDS.get(e.security_protocol, 0))
                    for e in endpoints],
        rack=rack, fenced=fenced, in_controlled_shutdown=in_controlled_shutdown)


def partition_record(topic_id: uuid.UUID, index: int, p: PartitionRegistration) -> Any:
    return R.PARTITION_RECORD(
        partition_id=index, topic_id=topic_id, replicas=list(p.replicas), isr=list(p.isr),
        removing_replicas=list(p.removing), adding_replicas=list(p.adding), leader=p.leader,
        leader_recovery_state=p.leader_recovery_state, leader_epoch=p.leader_epoch,
        partition_epoch=p.partition_epoch)


def partition_change(topic_id: uuid.UUID, index: int, old: PartitionRegistration,
                     new: PartitionRegistration) -> Any | None:
    """The record that takes ``old`` to ``new``: a PartitionChangeRecord with what changed when
    the epochs move as Kafka's merge moves them (leader epoch the same or + 1, partition epoch
    + 1), else a whole PartitionRecord; None when nothing changed."""
    if old == new:
        return None
    bump = new.leader_epoch == old.leader_epoch + 1
    same = new.leader_epoch == old.leader_epoch and new.leader == old.leader
    if new.partition_epoch != old.partition_epoch + 1 or not (bump or same):
        return partition_record(topic_id, index, new)

    def changed(a: tuple[int, ...], b: tuple[int, ...]) -> list[int] | None:
        return list(b) if a != b else None

    return R.PARTITION_CHANGE_RECORD(
        partition_id=index, topic_id=topic_id, isr=changed(old.isr, new.isr),
        leader=new.leader if bump else R.NO_LEADER_CHANGE,
        replicas=changed(old.replicas, new.replicas),
        removing_replicas=changed(old.removing, new.removing),
        adding_replicas=changed(old.adding, new.adding),
        leader_recovery_state=(new.leader_recovery_state
                               if new.leader_recovery_state != old.leader_recovery_state
                               else R.NO_RECOVERY_STATE_CHANGE))


def client_quota_record(entity: QuotaEntity, key: str, value: float | None) -> Any:
    """Set ``key`` (``value`` None: remove it)."""
    D = R.CLIENT_QUOTA_RECORD["entity"]
    return R.CLIENT_QUOTA_RECORD(entity=[D(entity_type=t, entity_name=n) for t, n in entity], key=key,
                                 value=float(value or 0.0), remove=value is None)


def scram_record(user: str, mechanism: int, c: ScramCredential) -> Any:
    return R.USER_SCRAM_CREDENTIAL_RECORD(name=user, mechanism=mechanism, salt=c.salt,
                                          stored_key=c.stored_key, server_key=c.server_key,
                                          iterations=c.iterations)


def acl_record(acl_id: uuid.UUID, b: AclBinding) -> Any:
    return R.ACCESS_CONTROL_ENTRY_RECORD(
        id=acl_id, resource_type=int(b.resource_type), resource_name=b.resource_name,
        pattern_type=int(b.pattern_type), principal=b.principal, host=b.host,
        operation=int(b.operation), permission_type=int(b.permission_type))
