"""The controller (Kafka's KafkaController, run inside one broker as before KRaft).

All controller state is changed on one event thread, in order: registrations and heartbeats from
brokers, the session checker's "broker expired" events, and topic creation and deletion from the
request handlers. Each event updates the ControllerContext, persists what must survive a restart
in the ControllerStore, and sends LeaderAndIsr / UpdateMetadata / StopReplica through one
ControllerBrokerRequestBatch and the ControllerChannelManager.

Broker changes follow Kafka's processBrokerChange: new brokers get full metadata and the
LeaderAndIsr of partitions they replicate; dead brokers lose leadership (a new leader from the
live ISR, leader epoch + 1) and ISR membership; a bounced broker (same id, new epoch) is handled as
dead then new.
"""

from __future__ import annotations

import concurrent.futures
import functools
import logging
import queue
import random
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from kafkalite.common.endpoints import SECURITY_PROTOCOL_NAMES, Endpoint
from kafkalite.common.errors import ApiError, ConfigError
from kafkalite.common.leader_and_isr import NO_LEADER
from kafkalite.protocol import error_codes as E
from kafkalite.storage.config import LogConfig

from .assignment import assign_replicas, validate_topic_name
from .channel_manager import ControllerChannelManager
from .context import ControllerBroker, ControllerContext, LeaderIsrAndControllerEpoch, TopicPartition
from .request_batch import ControllerBrokerRequestBatch
from .settings import ControllerSettings
from .store import ControllerStore, StoredPartition

log = logging.getLogger("kafkalite.controller")

SESSION_CHECK_INTERVAL = 0.1
# Producer ids a broker gets per AllocateProducerIds (Kafka's ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE).
PRODUCER_ID_BLOCK_SIZE = 1000
MAX_PRODUCER_ID = 2**63 - 1


class KafkaController:
    def __init__(self, settings: ControllerSettings, store_dir: str, cluster_id: str) -> None:
        self.settings = settings
        self.node_id = settings.node_id
        self.cluster_id = cluster_id
        self.listener = settings.listener
        self.session_timeout = settings.session_timeout_ms / 1000
        self.store = ControllerStore(store_dir)
        self.context = ControllerContext()
        self.channel = ControllerChannelManager(self.node_id, settings.socket_timeout_ms)
        self.batch = ControllerBrokerRequestBatch(
            self.context, self.channel.send_request, settings.inter_broker_protocol_version,
            self.node_id, inter_broker_listener=self.listener,
            on_stop_replica_response=self._on_stop_replica_response)
        # Topic -> replicas (broker, partition) whose StopReplica (delete) is not answered yet.
        self._deleting: dict[str, set[tuple[int, TopicPartition]]] = {}
        # Topic -> its config overrides (CreateTopics' configs). Each value is replaced whole,
        # never changed in place, so request handlers read it without the event thread.
        self._topic_configs: dict[str, dict[str, str]] = {}
        self._events: queue.Queue[tuple[Callable[[], Any], concurrent.futures.Future, str] | None] = \
            queue.Queue()
        self._thread = threading.Thread(target=self._run, name="controller-event-thread", daemon=True)
        self._checker = threading.Thread(target=self._check_sessions, name="controller-session-checker",
                                         daemon=True)
        self._stopping = threading.Event()
        self._last_seen: dict[int, float] = {}
        self._rng = random.Random()
        # True while the store misses changes the controller made (a write failed): the session
        # checker asks for a whole rewrite until one succeeds.
        self.store_behind = False

    # --- life cycle -----------------------------------------------------------------------------

    def startup(self) -> None:
        self.context.epoch = self.store.bump_controller_epoch()
        topics, partitions = self.store.load()
        self.context.topic_ids.update(topics)
        self._topic_configs.update(self.store.load_topic_configs())
        for p in partitions:
            tp = TopicPartition(p.topic, p.partition)
            self.context.update_partition_replica_assignment(tp, list(p.replicas))
            self.context.partition_leadership[tp] = LeaderIsrAndControllerEpoch(
                p.leader, p.leader_epoch, p.isr, p.partition_epoch, self.context.epoch)
        self.channel.startup({})
        self._thread.start()
        self._checker.start()
        log.info("Controller %d started with epoch %d (%d topics recovered)", self.node_id,
                 self.context.epoch, len(topics))

    def shutdown(self) -> None:
        self._stopping.set()
        self._events.put(None)
        for t in (self._thread, self._checker):
            if t.is_alive():
                t.join(5)
        self.channel.shutdown()
        self.store.close()

    @property
    def epoch(self) -> int:
        return int(self.context.epoch)

    def _run(self) -> None:
        while True:
            item = self._events.get()
            if item is None:
                return
            fn, future, what = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn())
            except ApiError as e:
                # A request Kafka refuses (a topic that exists, one that does not): an answer,
                # not a failure, so one INFO line as Kafka logs it and no traceback.
                log.info("Controller %d: %s refused: %s (%s)", self.node_id, what or "request",
                         E.for_code(e.code).name, e.message)
                future.set_exception(e)
            except BaseException as e:
                log.exception("Controller %d: event failed%s", self.node_id, f" ({what})" if what else "")
                future.set_exception(e)

    def submit(self, fn: Callable[[], Any], what: str = "") -> concurrent.futures.Future:
        """Run ``fn`` on the event thread; ``what`` names it in the log ("CreateTopics of 'x'")."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._events.put((fn, future, what))
        return future

    def call(self, fn: Callable[[], Any], timeout: float = 30.0, what: str = "") -> Any:
        return self.submit(fn, what).result(timeout)

    # --- membership ---------------------------------------------------------------------------

    def register(self, request: Any) -> concurrent.futures.Future:
        """The future (error code, broker epoch) of a BrokerRegistration request."""
        return self.submit(lambda: self._register(request), what=f"BrokerRegistration of {request.broker_id}")

    def _register(self, request: Any) -> tuple[int, int]:
        if request.cluster_id != self.cluster_id:
            return E.INCONSISTENT_CLUSTER_ID, -1
        names = SECURITY_PROTOCOL_NAMES
        endpoints = tuple(Endpoint(x.name, x.host, x.port, names.get(x.security_protocol, "PLAINTEXT"))
                          for x in request.listeners)
        if not any(e.name == self.listener for e in endpoints):
            log.warning("Broker %d registered without a %s listener", request.broker_id, self.listener)
            return E.INVALID_REQUEST, -1
        try:
            epoch = self.store.next_broker_epoch()
        except sqlite3.Error as e:
            # A broker epoch not on disk could be given twice after a restart: refuse, it retries.
            self._store_failed("a broker epoch", e, "registration refused")
            return E.KAFKA_STORAGE_ERROR, -1
        broker = ControllerBroker(request.broker_id, epoch, endpoints, request.rack)
        bounced = request.broker_id in self.context.live_broker_ids
        if bounced:
            log.info("Broker %d bounced (new epoch %d)", request.broker_id, epoch)
            self._on_broker_failure([request.broker_id])
        self.context.add_live_brokers([broker])
        self._last_seen[broker.id] = time.monotonic()
        self._on_broker_startup([broker])
        return E.NONE, epoch

    def heartbeat(self, broker_id: int, broker_epoch: int) -> int:
        """The error code for a BrokerHeartbeat (no event needed for a known, current broker)."""
        broker = self.context.live_broker(broker_id) if broker_id in self.context.live_broker_ids else None
        if broker is None:
            return E.BROKER_ID_NOT_REGISTERED
        if broker.epoch != broker_epoch:
            return E.STALE_BROKER_EPOCH
        self._last_seen[broker_id] = time.monotonic()
        return E.NONE

    # --- producer ids (KIP-730) ----------------------------------------------------------------

    def allocate_producer_ids(self, broker_id: int, broker_epoch: int) -> concurrent.futures.Future:
        """The future (error code, first id, block length) of an AllocateProducerIds request."""
        return self.submit(lambda: self._allocate_producer_ids(broker_id, broker_epoch),
                           what=f"AllocateProducerIds of broker {broker_id}")

    def _allocate_producer_ids(self, broker_id: int, broker_epoch: int) -> tuple[int, int, int]:
        ctx = self.context
        broker = ctx.live_broker(broker_id) if broker_id in ctx.live_broker_ids else None
        # Kafka's ClusterControlManager.checkBrokerEpoch: an unknown broker is a stale epoch too.
        if broker is None or broker.epoch != broker_epoch:
            return E.STALE_BROKER_EPOCH, 0, 0
        size = PRODUCER_ID_BLOCK_SIZE
        try:
            if self.store.next_producer_id() > MAX_PRODUCER_ID - size:
                log.error("Controller %d: all producer ids are given (the next block would pass the "
                          "int64 limit)", self.node_id)
                return E.UNKNOWN_SERVER_ERROR, 0, 0
            # On disk before the answer: a restarted controller never gives these ids again.
            first = self.store.allocate_producer_ids(size)
        except sqlite3.Error as e:
            self._store_failed("a producer id block", e, "allocation refused")
            return E.KAFKA_STORAGE_ERROR, 0, 0
        log.info("Broker %d gets producer ids %d-%d", broker_id, first, first + size - 1)
        return E.NONE, first, size

    def _check_sessions(self) -> None:
        while not self._stopping.wait(SESSION_CHECK_INTERVAL):
            now = time.monotonic()
            expired = [b for b, seen in list(self._last_seen.items()) if now - seen > self.session_timeout]
            if expired:
                self.submit(functools.partial(self._expire, expired))
            if self.store_behind:
                # Waited for, so catch-ups never pile up in the event queue.
                concurrent.futures.wait([self.submit(self._catch_up_store)], timeout=5)

    def _expire(self, broker_ids: list[int]) -> None:
        now = time.monotonic()
        dead = [b for b in broker_ids
                if b in self._last_seen and now - self._last_seen[b] > self.session_timeout]
        if dead:
            log.info("Brokers %s missed their session timeout: handling as failed", dead)
            self._on_broker_failure(dead)

    def _endpoint(self, broker: ControllerBroker) -> tuple[str, int]:
        for e in broker.endpoints:
            if e.name == self.listener:
                return e.host, e.port
        e = broker.endpoints[0]
        return e.host, e.port

    def _on_broker_startup(self, brokers: list[ControllerBroker]) -> None:
        for b in brokers:
            self.channel.add_broker(b.id, self._endpoint(b))
        new_ids = {b.id for b in brokers}
        ctx = self.context
        changed = []
        # Offline partitions with a live replica again get that replica as leader.
        for tp in ctx.all_partitions:
            lead = ctx.partition_leadership.get(tp)
            if lead is None or lead.leader != NO_LEADER:
                continue
            live = [r for r in ctx.partition_replica_assignment(tp) if r in ctx.live_broker_ids]
            if live:
                isr = tuple(r for r in lead.isr if r in ctx.live_broker_ids) or (live[0],)
                leader = isr[0]
                ctx.partition_leadership[tp] = LeaderIsrAndControllerEpoch(
                    leader, lead.leader_epoch + 1, isr, lead.partition_epoch + 1, ctx.epoch)
                changed.append(tp)
        self._persist(changed)
        self.batch.new_batch()
        # Full metadata to everyone (the new brokers need all of it).
        self.batch.add_update_metadata_request_for_brokers(sorted(ctx.live_or_shutting_down_broker_ids),
                                                           list(ctx.all_partitions))
        for tp in ctx.all_partitions:
            replicas = ctx.partition_replica_assignment(tp)
            targets = [r for r in replicas if r in new_ids or (tp in changed and r in ctx.live_broker_ids)]
            lead = ctx.partition_leadership.get(tp)
            if targets and lead is not None:
                self.batch.add_leader_and_isr_request_for_brokers(targets, tp, lead, replicas, False)
        self.batch.send_requests_to_brokers(ctx.epoch)

    def _on_broker_failure(self, broker_ids: list[int]) -> None:
        ctx = self.context
        dead = set(broker_ids)
        for b in broker_ids:
            self._last_seen.pop(b, None)
            self.channel.remove_broker(b)
        ctx.remove_live_brokers(dead)
        # Deletions wait for no answer from a dead replica (Kafka retries it when the broker is back;
        # here a restarted broker starts with no partitions of a deleted topic anyway).
        for name in list(self._deleting):
            self._deleting[name] = {(b, tp) for b, tp in self._deleting[name] if b not in dead}
            self._maybe_finish_deletion(name)
        changed = []
        for tp in ctx.all_partitions:
            lead = ctx.partition_leadership.get(tp)
            if lead is None or not (lead.leader in dead or dead & set(lead.isr)):
                continue
            isr = tuple(r for r in lead.isr if r not in dead)
            if lead.leader in dead or lead.leader == NO_LEADER:
                leader = isr[0] if isr else NO_LEADER
                # Kafka keeps the last ISR member when no live one is left.
                isr = isr or lead.isr
            else:
                leader = lead.leader
            ctx.partition_leadership[tp] = LeaderIsrAndControllerEpoch(
                leader, lead.leader_epoch + 1, isr, lead.partition_epoch + 1, ctx.epoch)
            changed.append(tp)
        self._persist(changed)
        self.batch.new_batch()
        for tp in changed:
            replicas = ctx.partition_replica_assignment(tp)
            live = [r for r in replicas if r in ctx.live_broker_ids]
            if live:
                self.batch.add_leader_and_isr_request_for_brokers(live, tp, ctx.partition_leadership[tp],
                                                                  replicas, False)
        self.batch.add_update_metadata_request_for_brokers(sorted(ctx.live_or_shutting_down_broker_ids),
                                                           changed)
        self.batch.send_requests_to_brokers(ctx.epoch)

    def _persist(self, partitions: list[TopicPartition]) -> None:
        self._write_store("leadership", lambda: self.store.update_partitions(self._stored(partitions)))

    def _stored(self, partitions: Any) -> list[StoredPartition]:
        ctx = self.context
        return [StoredPartition(tp.topic, tp.partition, tuple(ctx.partition_replica_assignment(tp)),
                                lead.leader, lead.leader_epoch, tuple(lead.isr), lead.partition_epoch)
                for tp in partitions if (lead := ctx.partition_leadership.get(tp)) is not None]

    # --- the store under failure ----------------------------------------------------------------
    # Leadership changes and finished deletions are facts the brokers must hear whatever the disk
    # does: they go ahead in memory and the store catches up later. A new topic or broker epoch
    # is refused instead (KAFKA_STORAGE_ERROR): nothing was promised yet.

    def _write_store(self, what: str, write: Callable[[], None]) -> None:
        if self.store_behind:
            return  # the catch-up writes everything
        try:
            write()
        except sqlite3.Error as e:
            self._store_failed(what, e, f"the whole state is rewritten every "
                                        f"{SESSION_CHECK_INTERVAL * 1000:.0f} ms until it succeeds")
            self.store_behind = True

    def _store_failed(self, what: str, e: Exception, then: str) -> None:
        if not self.store_behind:  # once per run of failures
            log.error("Controller %d could not write %s to its store (%s); %s", self.node_id, what, e,
                      then)

    def _catch_up_store(self) -> None:
        if not self.store_behind:
            return
        ctx = self.context
        try:
            # Topics whose deletion is not finished stay, as they would without the failure.
            self.store.save_all(dict(ctx.topic_ids), self._stored(ctx.all_partitions),
                                dict(self._topic_configs))
        except sqlite3.Error:
            return  # logged when it first failed
        self.store_behind = False
        log.info("Controller %d store written again (%d topics)", self.node_id, len(ctx.topic_ids))

    # --- topics -------------------------------------------------------------------------------

    def create_topic(self, name: str, partitions: int, replication_factor: int,
                     assignment: dict[int, list[int]] | None,
                     validate_only: bool,
                     configs: Mapping[str, str | None] | None = None) -> concurrent.futures.Future:
        """Create a topic on the event thread: the future (topic id, assignment), or ApiError with
        Kafka's code when refused. ``configs``: the topic's config overrides (Kafka's topic-level
        names), checked as Kafka does (INVALID_CONFIG) and kept with the topic."""
        what = f"CreateTopics{' (validate only)' if validate_only else ''} of {name!r}"
        return self.submit(lambda: self._create_topic(name, partitions, replication_factor, assignment,
                                                    validate_only, dict(configs or {})), what=what)

    def _create_topic(self, name: str, partitions: int, replication_factor: int,
                      assignment: dict[int, list[int]] | None, validate_only: bool,
                      configs: dict[str, str | None] | None = None) -> tuple[uuid.UUID, dict]:
        ctx = self.context
        configs = configs or {}
        validate_topic_name(name)
        if name in self._deleting:
            raise ApiError(E.TOPIC_ALREADY_EXISTS, f"Topic '{name}' is marked for deletion.")
        if name in ctx.topic_ids:
            raise ApiError(E.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
        nulls = [k for k, v in configs.items() if v is None]
        if nulls:
            raise ApiError(E.INVALID_REQUEST,
                           f"Null value not supported for topic configs : {','.join(nulls)}")
        overrides = {k: v for k, v in configs.items() if v is not None}
        live = sorted(ctx.live_broker_ids)
        if assignment:
            bad = E.INVALID_REPLICA_ASSIGNMENT
            if sorted(assignment) != list(range(len(assignment))):
                raise ApiError(bad, "Partitions should be consecutive and start at 0.")
            for p, replicas in assignment.items():
                if len(set(replicas)) != len(replicas) or not replicas:
                    raise ApiError(bad, f"Duplicate or empty replicas for partition {p}.")
                if any(r not in ctx.live_broker_ids for r in replicas):
                    raise ApiError(bad, f"Unknown broker in assignment of partition {p}.")
        else:
            if partitions == -1:
                partitions = self.settings.num_partitions
            if replication_factor == -1:
                replication_factor = self.settings.default_replication_factor
            assignment = assign_replicas(partitions, replication_factor, live, self._rng)
        try:
            LogConfig.from_properties(overrides)  # the names and values Kafka's LogConfig takes
        except ConfigError as e:
            raise ApiError(E.INVALID_CONFIG, str(e)) from None
        topic_id = uuid.uuid4()
        if validate_only:
            return topic_id, assignment
        stored = self._new_partitions(name, assignment)
        try:
            self.store.create_topic(name, topic_id, stored, overrides)
        except sqlite3.Error as e:
            self._store_failed(f"topic {name}", e, "creation refused")
            raise ApiError(E.KAFKA_STORAGE_ERROR,
                             f"The controller could not store topic '{name}': {e}") from None
        ctx.topic_ids[name] = topic_id
        if overrides:
            # Before any LeaderAndIsr goes out: the brokers ask for these when it reaches them.
            self._topic_configs[name] = overrides
        self._start_partitions(stored)
        log.info("Created topic %s (%d partitions, id %s%s)", name, len(assignment), topic_id,
                 f", configs {overrides}" if overrides else "")
        return topic_id, assignment

    def _new_partitions(self, name: str, assignment: dict[int, list[int]]) -> list[StoredPartition]:
        """New partitions as Kafka's onNewPartitionCreation starts them: the first live replica
        leads, the live replicas are the ISR, epochs 0."""
        live = self.context.live_broker_ids
        stored = []
        for p, replicas in sorted(assignment.items()):
            isr = tuple(r for r in replicas if r in live)
            leader = isr[0] if isr else NO_LEADER
            stored.append(StoredPartition(name, p, tuple(replicas), leader, 0, isr or tuple(replicas), 0))
        return stored

    def _start_partitions(self, stored: list[StoredPartition]) -> None:
        """Put new (stored) partitions in the context and tell the brokers: LeaderAndIsr to their
        live replicas, UpdateMetadata to every broker."""
        ctx = self.context
        self.batch.new_batch()
        for sp in stored:
            tp = TopicPartition(sp.topic, sp.partition)
            ctx.update_partition_replica_assignment(tp, list(sp.replicas))
            lead = LeaderIsrAndControllerEpoch(sp.leader, 0, sp.isr, 0, ctx.epoch)
            ctx.partition_leadership[tp] = lead
            self.batch.add_leader_and_isr_request_for_brokers(
                [r for r in sp.replicas if r in ctx.live_broker_ids], tp, lead, list(sp.replicas), True)
        self.batch.add_update_metadata_request_for_brokers(
            sorted(ctx.live_or_shutting_down_broker_ids),
            [TopicPartition(sp.topic, sp.partition) for sp in stored])
        self.batch.send_requests_to_brokers(ctx.epoch)

    def topic_configs(self, name: str) -> dict[str, str] | None:
        """The config overrides of a topic the controller has (not being deleted), else None.
        Read from any thread: the dicts are replaced whole on the event thread, never changed."""
        if name not in self.context.topic_ids or name in self._deleting:
            return None
        return self._topic_configs.get(name, {})

    # --- partitions -----------------------------------------------------------------------------

    def create_partitions(self, name: str, count: int, assignment: list[list[int]] | None,
                          validate_only: bool) -> concurrent.futures.Future:
        """Raise a topic's partition count to ``count`` on the event thread (Kafka's
        createPartitions): the future {partition: replicas} of the new partitions, or ApiError
        with Kafka's code when refused. ``assignment``: the new partitions' replicas, in order."""
        what = f"CreatePartitions{' (validate only)' if validate_only else ''} of {name!r}"
        return self.submit(lambda: self._create_partitions(name, count, assignment, validate_only), what=what)

    def _create_partitions(self, name: str, count: int, assignment: list[list[int]] | None,
                           validate_only: bool) -> dict[int, list[int]]:
        ctx = self.context
        existing = ctx.partition_assignments.get(name)
        if name not in ctx.topic_ids or name in self._deleting or not existing:
            raise ApiError(E.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.")
        old = len(existing)
        if count < old:
            raise ApiError(E.INVALID_PARTITIONS, f"Topic currently has {old} partitions, which is higher "
                                                 f"than the requested {count}.")
        if count == old:
            raise ApiError(E.INVALID_PARTITIONS, f"Topic already has {old} partitions.")
        first = existing.get(0)
        if not first:
            raise ApiError(E.UNKNOWN_SERVER_ERROR, f"Unexpected existing replica assignment for topic "
                                                   f"'{name}', partition id 0 is missing.")
        live = sorted(ctx.live_broker_ids)
        if assignment is not None:
            unknown = sorted({b for replicas in assignment for b in replicas} - set(live))
            bad = E.INVALID_REPLICA_ASSIGNMENT
            if unknown:
                raise ApiError(bad, "Unknown broker(s) in replica assignment: "
                                    f"{', '.join(map(str, unknown))}.")
            if len(assignment) != count - old:
                raise ApiError(bad, f"Increasing the number of partitions by {count - old} but "
                                    f"{len(assignment)} assignments provided.")
            added = {old + i: list(replicas) for i, replicas in enumerate(assignment)}
            for p, replicas in added.items():
                if not replicas:
                    raise ApiError(bad, f"Cannot have replication factor of 0 for partition id {p}.")
                if len(set(replicas)) != len(replicas):
                    raise ApiError(bad, f"Duplicate brokers not allowed in replica assignment: "
                                        f"{', '.join(map(str, replicas))} for partition id {p}.")
            odd = {p: len(r) for p, r in added.items() if len(r) != len(first)}
            if odd:
                raise ApiError(bad, f"Inconsistent replication factor between partitions, partition 0 has "
                                    f"{len(first)} while partitions [{', '.join(map(str, odd))}] have "
                                    f"replication factors [{', '.join(map(str, odd.values()))}], "
                                    "respectively.")
        else:
            # Kafka continues the topic's round-robin: from the broker that holds partition 0's
            # first replica, numbering on from the existing partitions.
            start = next((i for i, b in enumerate(live) if b >= first[0]), -1)
            full = assign_replicas(count, len(first), live, self._rng, fixed_start_index=start)
            added = {p: full[p] for p in range(old, count)}
        if validate_only:
            return added
        stored = self._new_partitions(name, added)
        try:
            self.store.add_partitions(stored)
        except sqlite3.Error as e:
            self._store_failed(f"new partitions of {name}", e, "creation refused")
            raise ApiError(E.KAFKA_STORAGE_ERROR,
                           f"The controller could not store the new partitions of '{name}': {e}") from None
        self._start_partitions(stored)
        log.info("Topic %s: partitions %d-%d added (now %d)", name, old, count - 1, count)
        return added

    def delete_topic(self, name: str | None, topic_id: uuid.UUID | None) -> concurrent.futures.Future:
        """Delete a topic on the event thread: the future name, or ApiError when refused."""
        what = f"DeleteTopics of {name!r}" if name is not None else f"DeleteTopics of topic id {topic_id}"
        return self.submit(lambda: self._delete_topic(name, topic_id), what=what)

    def _delete_topic(self, name: str | None, topic_id: uuid.UUID | None) -> str:
        ctx = self.context
        if name is None:
            name = next((n for n, i in ctx.topic_ids.items() if i == topic_id), None)
            if name is None:
                raise ApiError(E.UNKNOWN_TOPIC_ID, "This server does not host this topic ID.")
        if name not in ctx.topic_ids or name in self._deleting:
            raise ApiError(E.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.")
        partitions = list(ctx.partitions_for_topic(name))
        ctx.queue_topic_deletion([name])
        ctx.topics_with_deletion_started.add(name)
        pending: set[tuple[int, TopicPartition]] = set()
        self.batch.new_batch()
        for tp in partitions:
            replicas = [r for r in ctx.partition_replica_assignment(tp) if r in ctx.live_broker_ids]
            pending.update((r, tp) for r in replicas)
            self.batch.add_stop_replica_request_for_brokers(replicas, tp, True)
        # Leader -2 for the topic's partitions: every broker drops them from its metadata.
        self.batch.add_update_metadata_request_for_brokers(sorted(ctx.live_or_shutting_down_broker_ids),
                                                           partitions)
        self._deleting[name] = pending
        self.batch.send_requests_to_brokers(ctx.epoch)
        log.info("Deleting topic %s: waiting for %d replicas to stop", name, len(pending))
        self._maybe_finish_deletion(name)
        return name

    def _on_stop_replica_response(self, response: Any, broker_id: int,
                                  errors: dict[TopicPartition, int]) -> None:
        # Called on the broker's send thread: the state change happens on the event thread.
        self.submit(functools.partial(self._stop_replica_done, broker_id, errors))

    def _stop_replica_done(self, broker_id: int, errors: dict[TopicPartition, int]) -> None:
        for tp, code in errors.items():
            pending = self._deleting.get(tp.topic)
            if pending is None:
                continue
            if code != E.NONE:
                log.warning("Broker %d could not delete %s-%d: %s", broker_id, tp.topic, tp.partition,
                            E.BY_CODE[code].name if code in E.BY_CODE else code)
            pending.discard((broker_id, tp))
        for name in {tp.topic for tp in errors}:
            self._maybe_finish_deletion(name)

    def _maybe_finish_deletion(self, name: str) -> None:
        """Kafka's TopicDeletionManager: the topic goes once every live replica has stopped."""
        if name in self._deleting and not self._deleting[name]:
            del self._deleting[name]
            self._write_store(f"the deletion of topic {name}", lambda: self.store.delete_topic(name))
            self.context.remove_topic(name)
            self._topic_configs.pop(name, None)
            log.info("Deleted topic %s", name)

    def deleting(self) -> list[str]:
        """Topics whose deletion waits for replicas (for tests and operators)."""
        return self.call(lambda: sorted(self._deleting))
