"""The controller (Kafka's KafkaController), the state machine of the metadata log.

Every controller node runs one; it acts only while its node leads the Raft quorum of
``__cluster_metadata`` (``is_active``). It is a RaftListener: committed records are applied to its
store's image (store.py, image.py) on every node, and snapshots are taken every
``metadata.log.max.record.bytes.between.snapshots`` bytes of records applied. When its node
becomes leader (once the whole committed log is applied) it activates as Kafka's
onControllerFailover: controller epoch = the Raft epoch, the context rebuilt from the image (every
registered, unfenced broker taken as live with a fresh session), the channel started, the full
state sent to every live broker (UpdateMetadata of every partition, then LeaderAndIsr of each
broker's partitions), leaders elected for partitions whose leader is not live, reassignments and
topic deletions resumed. When its node stops leading it drops all that; a standby controller
answers every call NOT_CONTROLLER (ApiError). A write that fails (not the leader any more, no
commit in time) aborts its event (no control request goes out for an uncommitted change) and the
controller starts again from the image if its node still leads.

All controller state is changed on one event thread, in order: registrations and heartbeats from
brokers, the session checker's "broker expired" events, and topic creation and deletion from the
request handlers. Each event updates the ControllerContext, writes what must survive a failover
to the metadata log (the ControllerStore), and sends LeaderAndIsr / UpdateMetadata / StopReplica through one
ControllerBrokerRequestBatch and the ControllerChannelManager.

Broker changes follow Kafka's processBrokerChange: new brokers get full metadata and the
LeaderAndIsr of partitions they replicate; dead brokers lose leadership (a new leader from the
live ISR, leader epoch + 1) and ISR membership; a bounced broker (same id, new epoch) is handled as
dead then new. A partition left with no live ISR member stays offline until one comes back, unless
``unclean.leader.election.enable`` (the topic's, else the broker's) lets another replica lead.

Replication (Kafka's ZooKeeper-era controller with KIP-497's AlterPartition):
- a leader's ISR change (AlterPartition) is checked (broker epoch, leader, leader epoch, partition
  epoch, eligible members) and applied with partition epoch + 1, then UpdateMetadata to everyone;
- controlled shutdown: a broker whose heartbeat asks to shut down has its leaderships moved to
  other live ISR members and leaves the ISRs it is in; its heartbeats are answered
  ``should_shut_down`` once it leads nothing another replica could take;
- preferred leader election every ``leader.imbalance.check.interval.seconds`` when
  ``auto.leader.rebalance.enable``: for a broker whose share of partitions it prefers (first
  replica) but does not lead is above ``leader.imbalance.per.broker.percentage``, those whose ISR
  holds it move back to it;
- ElectLeaders (an admin's PREFERRED or UNCLEAN election of chosen partitions, or all): the same
  leadership changes, answered per partition once applied;
- partition reassignment (AlterPartitionReassignments / ListPartitionReassignments, KIP-455):
  reassignment.py, moved on by ISR changes and broker registrations.
"""

from __future__ import annotations

import concurrent.futures
import functools
import logging
import queue
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from kafkalite.common.endpoints import SECURITY_PROTOCOL_NAMES, Endpoint
from kafkalite.common.errors import ApiError, ConfigError
from kafkalite.common.leader_and_isr import NO_LEADER
from kafkalite.common.uuids import ZERO_UUID as ZERO_TOPIC_ID
from kafkalite.metrics.components import controller_metrics, controller_state
from kafkalite.metrics.registry import MetricsRegistry
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import alter_partition as ap
from kafkalite.protocol.messages.describe_configs import RESOURCE_BROKER
from kafkalite.raft.messages import Entry, OffsetAndEpoch
from kafkalite.storage.config import LogConfig

from . import acls as acl_control
from . import records
from .acls import AclBinding, AclBindingFilter, AclControl
from .assignment import assign_replicas, validate_topic_name
from .channel_manager import ControllerChannelManager
from .configs import PUSH_VERSION, ConfigurationControl, ResourceChange
from .context import ControllerBroker, ControllerContext, LeaderIsrAndControllerEpoch, TopicPartition
from .quotas import PUSH_VERSION as QUOTAS_PUSH_VERSION
from .quotas import ClientQuotaControl
from .reassignment import Ongoing, Reassignments
from .request_batch import ControllerBrokerRequestBatch
from .scram import ScramControl
from .settings import ControllerSettings
from .store import ControllerStore, StoredPartition

log = logging.getLogger("kafkalite.controller")

SESSION_CHECK_INTERVAL = 0.1
# Producer ids a broker gets per AllocateProducerIds (Kafka's ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE).
PRODUCER_ID_BLOCK_SIZE = 1000
MAX_PRODUCER_ID = 2**63 - 1
# Seconds a write waits for its commit before the event is aborted (NOT_CONTROLLER).
WRITE_TIMEOUT = 10.0
# A topic mutation's charge against controller_mutation_rate: called with its partition count
# once the topic is checked; raises ApiError (THROTTLING_QUOTA_EXCEEDED) to refuse it.
Charge = Callable[[int], None]


class MetadataRaft(Protocol):
    """What the controller uses of its node's RaftManager (kafkalite/raft/manager.py)."""

    def append(self, records: list[bytes]) -> concurrent.futures.Future: ...

    @property
    def leader(self) -> tuple[int, int]: ...

    def create_snapshot(self, snapshot_id: OffsetAndEpoch, payload: bytes) -> None: ...


def not_controller() -> ApiError:
    return ApiError(E.NOT_CONTROLLER, E.BY_CODE[E.NOT_CONTROLLER].message)


class KafkaController:
    def __init__(self, settings: ControllerSettings, raft: MetadataRaft, cluster_id: str,
                 metrics: MetricsRegistry | None = None) -> None:
        """``raft``: its node's RaftManager, whose listener this controller is. ``metrics``: the
        broker's registry, where the controller reports (ActiveControllerCount,
        OfflinePartitionsCount, its channel's queues) until ``shutdown``."""
        self.settings = settings
        self.node_id = settings.node_id
        self.cluster_id = cluster_id
        self.listener = settings.listener
        self.session_timeout = settings.session_timeout_ms / 1000
        self.raft = raft
        self.store = ControllerStore(self._write)
        self.context = ControllerContext()
        self.channel = ControllerChannelManager(self.node_id, settings.socket_timeout_ms,
                                               settings.client_security)
        self.batch = self._new_batch()
        # Whether this controller acts (its node leads and it has activated), and the term it
        # acts in: events submitted in an earlier one fail with NOT_CONTROLLER.
        self._active = False
        self._generation = 0
        self._leading_epoch: int | None = None  # the Raft epoch this node leads in, if it does
        self._leadership_lock = threading.Lock()
        # Told of every leader change first (leader id, epoch): the node's ControllerNodeProvider.
        self.leader_listeners: list[Callable[[int, int], object]] = []
        # Told the image's ACLs, from the Raft thread, whenever they change (the node's authorizer).
        self.acl_listeners: list[Callable[[frozenset[AclBinding]], object]] = []
        self._acls_told = -1  # the image's acl_changes when the listeners were last told
        self._last_snapshot = time.monotonic()  # when this node last snapshotted its image
        self._activated = threading.Event()  # set while active
        # Broker -> the directory ids its last heartbeat named offline (BrokerHeartbeat's OfflineLogDirs).
        self._offline_log_dirs: dict[int, frozenset[uuid.UUID]] = {}
        # Topic -> replicas (broker, partition) whose StopReplica (delete) is not answered yet.
        self._deleting: dict[str, set[tuple[int, TopicPartition]]] = {}
        # Topic -> its config overrides (CreateTopics' configs). Each value is replaced whole,
        # never changed in place, so request handlers read it without the event thread.
        self._topic_configs: dict[str, dict[str, str]] = {}
        # Dynamic configs: AlterConfigs / IncrementalAlterConfigs, stored and pushed (configs.py).
        self.configs = ConfigurationControl(self._topic_configs, self.store)
        # Client quotas: AlterClientQuotas, stored and pushed (quotas.py).
        self.quotas = ClientQuotaControl(self.store)
        self.reassignments = Reassignments(self)  # the partition reassignments in progress
        self.scram = ScramControl(self.store)  # SCRAM credentials: stored and pushed (scram.py)
        self.acls = AclControl(self.store)  # CreateAcls / DeleteAcls, stored and pushed (acls.py)
        # (function, its future, what it is, the term it belongs to: None for the activation and
        # deactivation themselves)
        self._events: queue.Queue[tuple[Callable[[], Any], concurrent.futures.Future, str, int | None]
                                  | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="controller-event-thread", daemon=True)
        self._checker = threading.Thread(target=self._check_sessions, name="controller-session-checker",
                                         daemon=True)
        self._stopping = threading.Event()
        self._last_seen: dict[int, float] = {}
        # Brokers shutting down whose leaderships have moved: their heartbeats say should_shut_down.
        self._shutdown_ready: set[int] = set()
        self._fenced_in_log: dict[int, int] = {}  # broker -> the epoch fenced after its controlled shutdown
        self._next_rebalance = time.monotonic() + settings.leader_imbalance_check_interval_seconds
        self._rng = random.Random()
        active = controller_metrics(self.channel, self.offline_partitions_count)
        standby = controller_state(0)
        self._metrics = (metrics or MetricsRegistry()).register(
            "controller", lambda: active() if self._active else standby())

    def _new_batch(self) -> ControllerBrokerRequestBatch:
        s = self.settings
        return ControllerBrokerRequestBatch(
            self.context, self.channel.send_request, s.inter_broker_protocol_version,
            self.node_id, inter_broker_listener=s.inter_broker_listener or self.listener,
            on_stop_replica_response=self._on_stop_replica_response,
            on_leader_and_isr_response=self._on_leader_and_isr_response)

    # --- life cycle -----------------------------------------------------------------------------

    def startup(self) -> None:
        """Start the event thread; the controller activates when its node leads (see
        handle_leader_change), which its RaftManager says once started."""
        self._thread.start()
        self._checker.start()
        log.info("Controller %d started (standby until its node leads the metadata quorum)", self.node_id)

    def shutdown(self) -> None:
        self._metrics.close()
        with self._leadership_lock:
            self._active = False
            self._activated.clear()
            self._generation += 1
        self._stopping.set()
        self._events.put(None)
        for t in (self._thread, self._checker):
            if t.is_alive():
                t.join(5)
        self.channel.shutdown()

    @property
    def is_active(self) -> bool:
        """Whether this controller acts: its node leads the quorum and it has activated."""
        return self._active

    def await_active(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the controller to be active."""
        return self._activated.wait(timeout)

    # --- the Raft listener (called on the RaftManager's thread) ------------------------------------

    def handle_commit(self, entries: list[Entry]) -> None:
        """Apply committed records to the image; a snapshot once enough bytes were applied."""
        self.store.apply_entries(entries)
        self._tell_acls()
        # KIP-630's triggers: enough bytes of records since the last snapshot, or any record and
        # metadata.log.max.snapshot.interval.ms since it (Kafka's SnapshotGenerator).
        since = self.store.bytes_since_snapshot
        due = since > 0 and (time.monotonic() - self._last_snapshot) * 1000 >= \
            self.settings.metadata_log_max_snapshot_interval_ms
        if since >= self.settings.metadata_log_max_record_bytes_between_snapshots or due:
            self._last_snapshot = time.monotonic()
            end, epoch, payload = self.store.snapshot()
            try:
                self.raft.create_snapshot(OffsetAndEpoch(end, epoch), payload)
            except Exception:
                log.exception("Controller %d could not snapshot the metadata below offset %d", self.node_id,
                              end)
            else:
                log.info("Controller %d snapshot of the metadata below offset %d (epoch %d, %d bytes)",
                         self.node_id, end, epoch, len(payload))

    def handle_load_snapshot(self, snapshot_id: OffsetAndEpoch, payload: bytes) -> None:
        """Replace the image with a snapshot's (a follower behind the leader's log start)."""
        self.store.load_snapshot(snapshot_id.offset, snapshot_id.epoch, payload)
        self._tell_acls()
        log.info("Controller %d loaded the metadata snapshot below offset %d", self.node_id,
                 snapshot_id.offset)

    def _tell_acls(self) -> None:
        """The ACLs of the image to ``acl_listeners`` (this node's authorizer), first at once and
        then whenever they change: every controller node authorizes from the metadata it replays,
        standbys and controller-only nodes too, as Kafka's controllers do."""
        changes = self.store.image.acl_changes
        if changes == self._acls_told:
            return  # no ACL record since: the set is not rebuilt on every commit
        acls = frozenset(self.store.load_acls())
        self._acls_told = changes
        for listener in self.acl_listeners:
            listener(acls)

    def handle_leader_change(self, leader_id: int, epoch: int) -> None:
        """Activate when this node leads (the log below its epoch start is applied by then),
        deactivate when it no longer does."""
        for listener in self.leader_listeners:
            listener(leader_id, epoch)
        self._tell_acls()  # the first time, before any record: an empty log has none
        with self._leadership_lock:
            leading = self._leading_epoch
            if leader_id == self.node_id:
                if leading == epoch:
                    return  # told again
                self._leading_epoch = epoch
                self._generation += 1
                self._active = False
                self._activated.clear()
                generation = self._generation
                self._events.put((functools.partial(self._activate, epoch, generation),
                                  concurrent.futures.Future(), f"activation in epoch {epoch}", None))
            elif leading is not None:
                self._leading_epoch = None
                self._generation += 1
                self._active = False
                self._activated.clear()
                self._events.put((self._deactivate, concurrent.futures.Future(), "deactivation", None))

    # --- activation (Kafka's onControllerFailover) and deactivation ------------------------------------

    def _reset(self) -> None:
        """Everything an active controller holds, dropped."""
        self.channel.shutdown()
        self.context = ControllerContext()
        self.batch = self._new_batch()
        self.reassignments = Reassignments(self)
        self._deleting.clear()
        self._offline_log_dirs.clear()
        self._last_seen.clear()
        self._shutdown_ready.clear()
        self._fenced_in_log.clear()
        self._topic_configs.clear()
        self.configs.broker_configs = {}
        self.scram.credentials = {}
        self.acls.acls = frozenset()
        self.quotas.entities = {}

    def _deactivate(self) -> None:
        was = self.context.epoch
        self._reset()
        log.info("Controller %d is no longer active (it was in epoch %d)", self.node_id, was)

    def _activate(self, epoch: int, generation: int) -> None:
        if generation != self._generation:
            return  # leadership changed again meanwhile
        self._reset()
        ctx = self.context
        ctx.epoch = epoch
        with self.store.lock:
            topics, partitions = self.store.load()
            registered = list(self.store.image.brokers.values())
            deleting = self.store.deleting_topics()
            reassigning = self.store.load_reassignments()
            self._topic_configs.update(self.store.load_topic_configs())
            self.configs.load()
            self.scram.load()
            self.acls.load()
            self.quotas.load()
        ctx.topic_ids.update(topics)
        for p in partitions:
            tp = TopicPartition(p.topic, p.partition)
            ctx.update_partition_replica_assignment(tp, list(p.replicas))
            ctx.partition_leadership[tp] = LeaderIsrAndControllerEpoch(
                p.leader, p.leader_epoch, p.isr, p.partition_epoch, epoch, p.leader_recovery_state)
        live = [ControllerBroker(b.id, b.epoch, b.endpoints, b.rack) for b in registered if not b.fenced]
        ctx.set_live_brokers(live)
        now = time.monotonic()
        for b in live:
            self._last_seen[b.id] = now  # a fresh session: each has broker.session.timeout.ms to heartbeat
        self.reassignments.load(reassigning)
        self.channel.startup({})
        with self._leadership_lock:
            if generation != self._generation:
                return
            self._active = True
            self._activated.set()
        log.info("Controller %d started with epoch %d: active, its node leads the metadata quorum "
                 "(%d topics, %d live brokers)", self.node_id, epoch, len(topics), len(live))
        self._next_rebalance = now + self.settings.leader_imbalance_check_interval_seconds
        # The full state to every live broker, offline partitions with a live ISR member led again.
        self._on_broker_startup(live)
        # Partitions led by (or with ISR members on) brokers that are not live: new leaders.
        gone = {r for lead in ctx.partition_leadership.values() for r in (lead.leader, *lead.isr)
                if r >= 0 and r not in ctx.live_broker_ids}
        if gone:
            self._on_broker_failure(sorted(gone))
        for name in deleting:
            if name in ctx.topic_ids and name not in self._deleting:
                log.info("Resuming the deletion of topic %s", name)
                self._start_deletion(name)

    def _write(self, batch: list[Any]) -> int:
        """Write records to the metadata log: the last offset once committed and applied. A
        failure aborts the event (ApiError NOT_CONTROLLER); the controller then starts again from
        the image if its node still leads."""
        try:
            future = self.raft.append([records.encode(r) for r in batch])
            return int(future.result(WRITE_TIMEOUT))
        except Exception as e:
            log.warning("Controller %d: a write of %d records failed (%s): the event is aborted",
                        self.node_id, len(batch), e)
            self._restart_from_image()
            raise not_controller() from None

    def _restart_from_image(self) -> None:
        with self._leadership_lock:
            if not self._active:
                return
            self._generation += 1
            self._active = False
            self._activated.clear()
            leader_id, epoch = self.raft.leader
            self._leading_epoch = epoch if leader_id == self.node_id else None
            if leader_id == self.node_id:
                generation = self._generation
                self._events.put((functools.partial(self._activate, epoch, generation),
                                  concurrent.futures.Future(), f"activation in epoch {epoch}", None))
            else:
                self._events.put((self._deactivate, concurrent.futures.Future(), "deactivation", None))

    @property
    def epoch(self) -> int:
        return int(self.context.epoch)

    def offline_partitions_count(self) -> int:
        """Partitions with no live leader, those of topics being deleted left out (Kafka's
        OfflinePartitionsCount). Read off the event thread from copies: a scrape's view."""
        ctx = self.context
        live = ctx.live_or_shutting_down_broker_ids
        deleting = set(self._deleting)
        return sum(1 for tp, lead in list(ctx.partition_leadership.items())
                   if tp.topic not in deleting and (lead.leader == NO_LEADER or lead.leader not in live))

    def _run(self) -> None:
        while True:
            item = self._events.get()
            if item is None:
                return
            fn, future, what, generation = item
            if not future.set_running_or_notify_cancel():
                continue
            if generation is not None and generation != self._generation:
                future.set_exception(not_controller())  # submitted in a term that has ended
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
        """Run ``fn`` on the event thread; ``what`` names it in the log ("CreateTopics of 'x'").
        A controller that is not active fails it with NOT_CONTROLLER (ApiError)."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._leadership_lock:
            if not self._active:
                future.set_exception(not_controller())
                return future
            self._events.put((fn, future, what, self._generation))
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
        # The broker epoch is the offset of its RegisterBrokerRecord (Kafka's).
        epoch = self.store.register_broker(request.broker_id, request.incarnation_id, endpoints, request.rack)
        broker = ControllerBroker(request.broker_id, epoch, endpoints, request.rack)
        # A new incarnation: what its offline dirs held is learned again (Kafka's onBrokerStartup).
        self.context.replicas_on_offline_dirs.pop(request.broker_id, None)
        self._offline_log_dirs.pop(request.broker_id, None)
        bounced = request.broker_id in self.context.live_or_shutting_down_broker_ids
        if bounced:
            log.info("Broker %d bounced (new epoch %d)", request.broker_id, epoch)
            self._on_broker_failure([request.broker_id])
        self.context.add_live_brokers([broker])
        self._last_seen[broker.id] = time.monotonic()
        self._on_broker_startup([broker])
        return E.NONE, epoch

    def heartbeat(self, broker_id: int, broker_epoch: int, want_shut_down: bool = False,
                  offline_log_dirs: Iterable[uuid.UUID] = ()) -> tuple[int, bool]:
        """(error code, should_shut_down) for a BrokerHeartbeat. No event is needed for a known,
        current broker; the first that asks to shut down starts its controlled shutdown; one that
        names a log dir offline for the first time starts its log dir failure handling."""
        if not self._active:
            return E.NOT_CONTROLLER, False
        broker = self.context.live_broker(broker_id)
        if broker is None:
            return E.BROKER_ID_NOT_REGISTERED, False
        if broker.epoch != broker_epoch:
            return E.STALE_BROKER_EPOCH, False
        self._last_seen[broker_id] = time.monotonic()
        offline = frozenset(offline_log_dirs)
        known = self._offline_log_dirs.get(broker_id, frozenset())
        if offline != known:
            self._offline_log_dirs[broker_id] = offline
            if offline - known:
                log.info("Broker %d reports offline log dirs %s", broker_id,
                         sorted(map(str, offline - known)))
                self.submit(functools.partial(self._on_broker_log_dir_failure, broker_id, broker_epoch),
                            what=f"log dir failure on broker {broker_id}")
        if not want_shut_down:
            return E.NONE, False
        if broker_id not in self.context.shutting_down_broker_ids:
            self.context.shutting_down_broker_ids.add(broker_id)  # no leadership for it from now
            self.submit(functools.partial(self._controlled_shutdown, broker_id, broker_epoch),
                        what=f"controlled shutdown of broker {broker_id}")
        ready = broker_id in self._shutdown_ready
        if ready and not self._fenced_in_log.get(broker_id) == broker_epoch:
            # Its controlled shutdown is done: fenced in the log (Kafka fences a broker once it may
            # stop), so that a new active controller does not take it as live. It stays in the
            # context, shutting down, until its session ends.
            self._fenced_in_log[broker_id] = broker_epoch
            self.submit(functools.partial(self.store.fence_broker, broker_id, broker_epoch),
                        what=f"fencing broker {broker_id} after its controlled shutdown")
        return E.NONE, ready

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
        if self.store.next_producer_id() > MAX_PRODUCER_ID - size:
            log.error("Controller %d: all producer ids are given (the next block would pass the "
                      "int64 limit)", self.node_id)
            return E.UNKNOWN_SERVER_ERROR, 0, 0
        # Committed before the answer (a ProducerIdsRecord): no controller gives these ids again.
        first = self.store.allocate_producer_ids(size, broker_id, broker_epoch)
        log.info("Broker %d gets producer ids %d-%d", broker_id, first, first + size - 1)
        return E.NONE, first, size

    def _check_sessions(self) -> None:
        while not self._stopping.wait(SESSION_CHECK_INTERVAL):
            if not self._active:
                continue
            now = time.monotonic()
            expired = [b for b, seen in list(self._last_seen.items()) if now - seen > self.session_timeout]
            if expired:
                self.submit(functools.partial(self._expire, expired))
            if self.settings.auto_leader_rebalance_enable and now >= self._next_rebalance:
                self._next_rebalance = now + self.settings.leader_imbalance_check_interval_seconds
                concurrent.futures.wait([self.submit(self._rebalance_leaders)], timeout=5)

    def fence(self, broker_id: int) -> concurrent.futures.Future:
        """Handle ``broker_id`` as failed now, not once its session times out: a broker known to be
        dead (one a test cluster killed, kafkalite.testing)."""
        def fence() -> None:
            if broker_id in self._last_seen:
                log.info("Broker %d is known to be dead: handling it as failed", broker_id)
                self._on_broker_failure([broker_id])
        return self.submit(fence, f"fence broker {broker_id}")

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
            # Its ACLs first: the broker authorizes what follows by them (CLUSTER_ACTION); then its
            # dynamic configs, queued before its LeaderAndIsr, and its SCRAM credentials.
            self._push_acls([b.id])
            self._push_configs([b.id], self.configs.full_sets(b.id, list(self.context.topic_ids)))
            self._push_scram([b.id], None)
            if self.quotas.entities:
                self._push_quotas([b.id], self.quotas.entities)
        new_ids = {b.id for b in brokers}
        ctx = self.context
        changed = []
        # Offline partitions with a live ISR member again get it as leader (Kafka's
        # OfflinePartitionLeaderElectionStrategy); another live replica only if unclean election
        # is allowed, and the ISR is then that replica alone.
        for tp in ctx.all_partitions:
            lead = ctx.partition_leadership.get(tp)
            if lead is None or lead.leader != NO_LEADER:
                continue
            replicas = ctx.partition_replica_assignment(tp)
            isr = tuple(r for r in replicas if r in lead.isr and ctx.is_replica_online(r, tp))
            if not isr and self._unclean_allowed(tp.topic):
                isr = tuple(r for r in replicas if r in ctx.live_broker_ids)[:1]
                if isr:
                    log.warning("Unclean leader election for %s: broker %d leads it, outside the last ISR %s",
                                tp, isr[0], list(lead.isr))
            if isr:
                ctx.partition_leadership[tp] = LeaderIsrAndControllerEpoch(
                    isr[0], lead.leader_epoch + 1, isr, lead.partition_epoch + 1, ctx.epoch)
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
        # A new active controller's reassignments may be done already; a new replica may lead one.
        self.reassignments.maybe_complete()
        self.reassignments.brokers_started(new_ids)

    def _on_broker_failure(self, broker_ids: list[int]) -> None:
        ctx = self.context
        dead = set(broker_ids)
        for b in broker_ids:
            registered = ctx.live_broker(b)
            if registered is not None:
                self.store.fence_broker(b, registered.epoch)  # FenceBrokerRecord
        for b in broker_ids:
            self._last_seen.pop(b, None)
            self.channel.remove_broker(b)
            ctx.shutting_down_broker_ids.discard(b)
            self._shutdown_ready.discard(b)
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
                leader = next((r for r in isr if ctx.is_replica_online(r, tp)), NO_LEADER)
                if leader == NO_LEADER and self._unclean_allowed(tp.topic):
                    live = [r for r in ctx.partition_replica_assignment(tp) if r in ctx.live_broker_ids]
                    if live:
                        leader, isr = live[0], (live[0],)
                        log.warning("Unclean leader election for %s: broker %d leads it, outside the last "
                                    "ISR %s", tp, leader, list(lead.isr))
                # Kafka keeps the last ISR member when no live one is left.
                isr = isr or lead.isr
            else:
                leader = lead.leader
            ctx.partition_leadership[tp] = LeaderIsrAndControllerEpoch(
                leader, lead.leader_epoch + 1, isr, lead.partition_epoch + 1, ctx.epoch)
            changed.append(tp)
        self._send_leadership_changes(changed)

    def unclean_allowed(self, topic: str) -> bool:
        """Whether ``topic`` may elect a leader outside its ISR (the topic's
        unclean.leader.election.enable, else the broker's)."""
        return self._unclean_allowed(topic)

    def is_deleting(self, topic: str) -> bool:
        """Whether ``topic``'s deletion has begun (event thread)."""
        return topic in self._deleting

    def _unclean_allowed(self, topic: str) -> bool:
        value = self._topic_configs.get(topic, {}).get("unclean.leader.election.enable")
        if value is None:
            defaults = self.configs.topic_defaults  # the broker's in effect, dynamic ones included
            if defaults is not None:
                return defaults().unclean_leader_election_enable
            return self.settings.unclean_leader_election_enable
        return value.strip().lower() == "true"

    def _send_leadership_changes(self, changed: list[TopicPartition]) -> None:
        """LeaderAndIsr for ``changed`` to their registered replicas, UpdateMetadata to every broker."""
        ctx = self.context
        self._persist(changed)
        self.batch.new_batch()
        for tp in changed:
            replicas = ctx.partition_replica_assignment(tp)
            targets = [r for r in replicas if r in ctx.live_or_shutting_down_broker_ids]
            if targets:
                self.batch.add_leader_and_isr_request_for_brokers(targets, tp, ctx.partition_leadership[tp],
                                                                  replicas, False)
        self.batch.add_update_metadata_request_for_brokers(sorted(ctx.live_or_shutting_down_broker_ids),
                                                           changed)
        self.batch.send_requests_to_brokers(ctx.epoch)

    # --- log dir failures -----------------------------------------------------------------------
    # Kafka's controller learns which replicas are on a failed dir by sending the broker a
    # LeaderAndIsr for all its replicas (KafkaController.onBrokerLogDirFailure): the broker answers
    # KAFKA_STORAGE_ERROR for each offline one. Those replicas then go offline
    # (onReplicasBecomeOffline): a partition they led gets a new leader among the other live ISR
    # members, and they leave the ISR (the last ISR member stays, as Kafka keeps it).

    def _on_broker_log_dir_failure(self, broker_id: int, broker_epoch: int) -> None:
        ctx = self.context
        broker = ctx.live_broker(broker_id)
        if broker is None or broker.epoch != broker_epoch:
            return
        replicas = sorted(ctx.partitions_on_broker(broker_id))
        if not replicas:
            return
        self.batch.new_batch()
        for tp in replicas:
            lead = ctx.partition_leadership.get(tp)
            if lead is not None:
                self.batch.add_leader_and_isr_request_for_brokers(
                    [broker_id], tp, lead, ctx.partition_replica_assignment(tp), False)
        self.batch.send_requests_to_brokers(ctx.epoch)

    def _on_leader_and_isr_response(self, response: Any, broker_id: int) -> None:
        # Called on the broker's send thread: the state change happens on the event thread.
        errors = list(response.partition_errors or [])
        names = {topic_id: name for name, topic_id in self.context.topic_ids.items()}
        offline = {TopicPartition(e.topic_name, e.partition_index) for e in errors
                   if e.error_code == E.KAFKA_STORAGE_ERROR}
        for t in response.topics or []:
            name = names.get(t.topic_id)
            if name is not None:
                offline |= {TopicPartition(name, e.partition_index) for e in t.partition_errors
                            if e.error_code == E.KAFKA_STORAGE_ERROR}
        if offline:
            self.submit(functools.partial(self._on_replicas_offline, broker_id, offline),
                        what=f"offline replicas on broker {broker_id}")

    def _on_replicas_offline(self, broker_id: int, replicas: set[TopicPartition]) -> None:
        ctx = self.context
        if broker_id not in ctx.live_or_shutting_down_broker_ids:
            return
        known = ctx.replicas_on_offline_dirs.setdefault(broker_id, set())
        new = {tp for tp in replicas if tp not in known and tp in ctx.partition_leadership}
        if not new:
            return
        known |= new
        log.warning("Broker %d: replicas %s are on offline log dirs: moving their leadership away",
                    broker_id, sorted(map(str, new)))
        changed = []
        for tp in sorted(new):
            lead = ctx.partition_leadership[tp]
            isr = tuple(r for r in lead.isr if r != broker_id) or lead.isr
            leader = lead.leader
            if leader == broker_id:
                leader = next((r for r in ctx.partition_replica_assignment(tp)
                               if r in isr and r != broker_id and ctx.is_replica_online(r, tp)), NO_LEADER)
            if leader == lead.leader and isr == lead.isr:
                continue
            ctx.partition_leadership[tp] = LeaderIsrAndControllerEpoch(
                leader, lead.leader_epoch + 1, isr, lead.partition_epoch + 1, ctx.epoch)
            changed.append(tp)
        if changed:
            self._send_leadership_changes(changed)

    # --- controlled shutdown --------------------------------------------------------------------

    def _controlled_shutdown(self, broker_id: int, broker_epoch: int) -> None:
        """Move ``broker_id``'s leaderships to other live ISR members (the preferred order) and take
        it out of the ISRs it is in (Kafka's doControlledShutdown); it may stop once nothing it
        leads could move."""
        ctx = self.context
        broker = ctx.live_broker(broker_id)
        if broker is None or broker.epoch != broker_epoch:
            return  # gone, or registered again, since it asked
        changed = []
        for tp in sorted(ctx.all_partitions):
            lead = ctx.partition_leadership.get(tp)
            # A topic being deleted is left alone (Kafka's partitionsToActOn): a LeaderAndIsr for
            # it would make the new leader create the log its StopReplica has just deleted.
            if lead is None or broker_id not in (lead.leader, *lead.isr) or tp.topic in self._deleting:
                continue
            rest = tuple(r for r in lead.isr if r != broker_id)
            if lead.leader == broker_id:
                live = [r for r in ctx.partition_replica_assignment(tp)
                        if r in rest and r in ctx.live_broker_ids]
                if not live:
                    continue  # the only live ISR member: it keeps the partition until it stops
                leader = live[0]
            elif rest:
                leader = lead.leader
            else:
                continue
            ctx.partition_leadership[tp] = LeaderIsrAndControllerEpoch(
                leader, lead.leader_epoch + 1, rest, lead.partition_epoch + 1, ctx.epoch)
            changed.append(tp)
        if changed:
            self._send_leadership_changes(changed)
        log.info("Controlled shutdown of broker %d: %d partitions changed leader or ISR", broker_id,
                 len(changed))
        self._shutdown_ready.add(broker_id)

    # --- AlterPartition -------------------------------------------------------------------------

    def alter_partition(self, request: Any, version: int) -> concurrent.futures.Future:
        """The future AlterPartition response body for a leader's ISR changes."""
        return self.submit(lambda: self._alter_partition(request, version),
                           what=f"AlterPartition of broker {request.broker_id}")

    def _alter_partition(self, request: Any, version: int) -> Any:
        R = ap.RESPONSE
        ctx = self.context
        broker = ctx.live_broker(request.broker_id)
        if broker is None or broker.epoch != request.broker_epoch:
            return R(throttle_time_ms=0, error_code=E.STALE_BROKER_EPOCH, topics=[])
        names = {topic_id: name for name, topic_id in ctx.topic_ids.items()}
        changed: list[TopicPartition] = []
        topics = []
        for t in request.topics:
            name = t.topic_name if version < 2 else names.get(t.topic_id)
            answers = []
            for p in t.partitions:
                new_isr = (tuple(p.new_isr) if version < 3
                           else tuple(b.broker_id for b in p.new_isr_with_epochs))
                tp = TopicPartition(name, p.partition_index) if name is not None else None
                code, lead = self._check_alter(request.broker_id, tp, p.leader_epoch, p.partition_epoch,
                                               new_isr, unknown_topic=E.UNKNOWN_TOPIC_ID if version >= 2
                                               else E.UNKNOWN_TOPIC_OR_PARTITION)
                if code == E.NONE and lead is not None and tp is not None:
                    lead = LeaderIsrAndControllerEpoch(lead.leader, lead.leader_epoch, new_isr,
                                                       lead.partition_epoch + 1, ctx.epoch)
                    ctx.partition_leadership[tp] = lead
                    changed.append(tp)
                    log.info("ISR of %s is now %s (partition epoch %d), asked by its leader %d", tp,
                             list(new_isr), lead.partition_epoch, request.broker_id)
                answers.append(R["topics"]["partitions"](
                    partition_index=p.partition_index, error_code=code,
                    leader_id=lead.leader if lead is not None else -1,
                    leader_epoch=lead.leader_epoch if lead is not None else -1,
                    isr=list(lead.isr) if lead is not None else [],
                    partition_epoch=lead.partition_epoch if lead is not None else -1))
            topics.append(R["topics"](topic_name=t.topic_name if version < 2 else "",
                                      topic_id=t.topic_id if version >= 2 else ZERO_TOPIC_ID,
                                      partitions=answers))
        if changed:
            self._persist(changed)
            self.batch.new_batch()
            self.batch.add_update_metadata_request_for_brokers(sorted(ctx.live_or_shutting_down_broker_ids),
                                                               changed)
            self.batch.send_requests_to_brokers(ctx.epoch)
            # A new replica that joined the ISR may complete its partition's reassignment.
            self.reassignments.maybe_complete(changed)
        return R(throttle_time_ms=0, error_code=E.NONE, topics=topics)

    def _check_alter(self, broker_id: int, tp: TopicPartition | None, leader_epoch: int, partition_epoch: int,
                     new_isr: tuple[int, ...],
                     unknown_topic: int) -> tuple[int, LeaderIsrAndControllerEpoch | None]:
        """Kafka's validation of one partition's ISR change: (error, the partition's state)."""
        ctx = self.context
        if tp is None or tp.topic not in ctx.topic_ids or tp.topic in self._deleting:
            return unknown_topic, None
        lead = ctx.partition_leadership.get(tp)
        if lead is None:
            return E.UNKNOWN_TOPIC_OR_PARTITION, None
        if lead.leader != broker_id:
            return E.NOT_LEADER_OR_FOLLOWER, lead
        if leader_epoch != lead.leader_epoch:
            return E.FENCED_LEADER_EPOCH, lead
        if partition_epoch != lead.partition_epoch:
            return E.INVALID_UPDATE_VERSION, lead
        replicas = ctx.partition_replica_assignment(tp)
        if (broker_id not in new_isr or len(set(new_isr)) != len(new_isr)
                or any(r not in replicas for r in new_isr)):
            return E.INVALID_REQUEST, lead
        added = set(new_isr) - set(lead.isr)
        if any(r not in ctx.live_broker_ids for r in added):
            return E.INELIGIBLE_REPLICA, lead  # a broker that is gone or shutting down cannot join
        return E.NONE, lead

    # --- preferred leader election ------------------------------------------------------------

    def _rebalance_leaders(self) -> list[TopicPartition]:
        """Kafka's checkAndTriggerAutoLeaderRebalance: the partitions moved back to their
        preferred replica."""
        ctx = self.context
        preferred_of: dict[int, list[TopicPartition]] = {}
        for tp in ctx.all_partitions:
            replicas = ctx.partition_replica_assignment(tp)
            if replicas and tp.topic not in self._deleting and tp in ctx.partition_leadership:
                preferred_of.setdefault(replicas[0], []).append(tp)
        changed = []
        threshold = self.settings.leader_imbalance_per_broker_percentage / 100
        for broker_id, tps in sorted(preferred_of.items()):
            not_led = [tp for tp in tps if ctx.partition_leadership[tp].leader != broker_id]
            if broker_id not in ctx.live_broker_ids or len(not_led) / len(tps) <= threshold:
                continue
            for tp in sorted(not_led):
                lead = ctx.partition_leadership[tp]
                if broker_id in lead.isr:
                    ctx.partition_leadership[tp] = LeaderIsrAndControllerEpoch(
                        broker_id, lead.leader_epoch + 1, lead.isr, lead.partition_epoch + 1, ctx.epoch)
                    changed.append(tp)
        if changed:
            log.info("Preferred leader election for %d partitions: %s", len(changed),
                     ", ".join(str(tp) for tp in changed[:10]) + (" ..." if len(changed) > 10 else ""))
            self._send_leadership_changes(changed)
        return changed

    def rebalance_leaders(self) -> list[TopicPartition]:
        """Run the preferred leader election now (tests, operators)."""
        return self.call(self._rebalance_leaders, what="preferred leader election")

    # --- ElectLeaders ---------------------------------------------------------------------------

    def elect_leaders(self, unclean: bool,
                      partitions: list[tuple[str, int]] | None) -> concurrent.futures.Future:
        """The future {(topic, partition): (error code, message)} of an ElectLeaders request
        (``partitions`` None: every partition), once the event thread has applied it."""
        kind = "unclean" if unclean else "preferred"
        return self.submit(lambda: self._elect_leaders(unclean, partitions),
                           what=f"ElectLeaders ({kind})")

    def _elect_leaders(self, unclean: bool, partitions: list[tuple[str, int]] | None
                       ) -> dict[tuple[str, int], tuple[int, str | None]]:
        """Kafka's processReplicaLeaderElection: PREFERRED moves a partition to its first replica
        when that one is live and in the ISR (PREFERRED_LEADER_NOT_AVAILABLE otherwise); UNCLEAN
        gives a partition without a live leader a live ISR member, else any live replica (whatever
        unclean.leader.election.enable says; ELIGIBLE_LEADERS_NOT_AVAILABLE when none is live). A
        partition that already has the leader asked for: ELECTION_NOT_NEEDED."""
        ctx = self.context
        wanted = (sorted(ctx.all_partitions) if partitions is None
                  else [TopicPartition(t, p) for t, p in partitions])
        results: dict[tuple[str, int], tuple[int, str | None]] = {}
        changed = []
        for tp in wanted:
            key = (tp.topic, tp.partition)
            replicas = ctx.partition_replica_assignment(tp)
            lead = ctx.partition_leadership.get(tp)
            if not replicas or lead is None:
                if partitions is not None:
                    results[key] = (E.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")
                continue
            if tp.topic in self._deleting:
                if partitions is not None:
                    results[key] = (E.INVALID_TOPIC_EXCEPTION, "The topic is being deleted")
                continue
            live = ctx.live_broker_ids
            if not unclean:
                preferred = replicas[0]
                if lead.leader == preferred:
                    results[key] = (E.ELECTION_NOT_NEEDED, None)
                elif preferred in live and preferred in lead.isr:
                    ctx.partition_leadership[tp] = LeaderIsrAndControllerEpoch(
                        preferred, lead.leader_epoch + 1, lead.isr, lead.partition_epoch + 1, ctx.epoch)
                    changed.append(tp)
                    results[key] = (E.NONE, None)
                else:
                    results[key] = (E.PREFERRED_LEADER_NOT_AVAILABLE,
                                    f"Failed to elect leader for partition {tp} under strategy "
                                    f"PreferredReplicaPartitionLeaderElectionStrategy")
                continue
            if lead.leader != NO_LEADER and lead.leader in live:
                results[key] = (E.ELECTION_NOT_NEEDED, None)
                continue
            isr = tuple(r for r in replicas if r in lead.isr and r in live)
            if not isr:
                isr = tuple(r for r in replicas if r in live)[:1]
                if isr:
                    log.warning("Unclean leader election for %s (ElectLeaders): broker %d leads it, "
                                "outside the last ISR %s", tp, isr[0], list(lead.isr))
            if isr:
                ctx.partition_leadership[tp] = LeaderIsrAndControllerEpoch(
                    isr[0], lead.leader_epoch + 1, isr, lead.partition_epoch + 1, ctx.epoch)
                changed.append(tp)
                results[key] = (E.NONE, None)
            else:
                results[key] = (E.ELIGIBLE_LEADERS_NOT_AVAILABLE,
                                f"Failed to elect leader for partition {tp} under strategy "
                                f"OfflinePartitionLeaderElectionStrategy(true)")
        if changed:
            shown = ", ".join(str(tp) for tp in changed[:10]) + (" ..." if len(changed) > 10 else "")
            log.info("ElectLeaders (%s) moved %d partitions: %s", "unclean" if unclean else "preferred",
                     len(changed), shown)
            self._send_leadership_changes(changed)
        return results

    # --- partition reassignment (reassignment.py) -------------------------------------------------

    def alter_partition_reassignments(self, partitions: list[tuple[str, int, list[int] | None]],
                                      allow_rf_change: bool, timeout_ms: int) -> concurrent.futures.Future:
        """The future {(topic, partition): (error code, message)} of an AlterPartitionReassignments
        request once applied (replicas None: cancel), or ApiError REQUEST_TIMED_OUT when the event
        thread comes to it after ``timeout_ms``."""
        deadline = time.monotonic() + timeout_ms / 1000
        return self.submit(lambda: self.reassignments.alter(partitions, allow_rf_change, deadline),
                           what="AlterPartitionReassignments")

    def list_partition_reassignments(self, topics: list[tuple[str, list[int]]] | None
                                     ) -> concurrent.futures.Future:
        """The future {topic: {partition: (replicas, adding, removing)}} of the reassignments in
        progress (``topics`` None: all)."""
        return self.submit(lambda: self.reassignments.list(topics), what="ListPartitionReassignments")

    def reassigning(self) -> Ongoing:
        """Every reassignment in progress (tests, operators)."""
        result: Ongoing = self.call(lambda: self.reassignments.list(None))
        return result

    def stored_partitions(self, partitions: Any) -> list[StoredPartition]:
        """The stored state of ``partitions`` as the context has them (event thread)."""
        return self._stored(partitions)

    def _persist(self, partitions: list[TopicPartition]) -> None:
        """Write the partitions' new leadership (PartitionChangeRecords); a failure aborts the event."""
        self.store.update_partitions(self._stored(partitions))

    def _stored(self, partitions: Any) -> list[StoredPartition]:
        ctx = self.context
        return [StoredPartition(tp.topic, tp.partition, tuple(ctx.partition_replica_assignment(tp)),
                                lead.leader, lead.leader_epoch, tuple(lead.isr), lead.partition_epoch,
                                lead.leader_recovery_state)
                for tp in partitions if (lead := ctx.partition_leadership.get(tp)) is not None]

    # --- topics -------------------------------------------------------------------------------

    def create_topic(self, name: str, partitions: int, replication_factor: int,
                     assignment: dict[int, list[int]] | None,
                     validate_only: bool,
                     configs: Mapping[str, str | None] | None = None,
                     charge: Charge | None = None) -> concurrent.futures.Future:
        """Create a topic on the event thread: the future (topic id, assignment), or ApiError with
        Kafka's code when refused. ``configs``: the topic's config overrides (Kafka's topic-level
        names), checked as Kafka does (INVALID_CONFIG) and kept with the topic. ``charge``: called
        with the partition count once the topic is checked (controller_mutation_rate; it raises
        ApiError THROTTLING_QUOTA_EXCEEDED to refuse it)."""
        what = f"CreateTopics{' (validate only)' if validate_only else ''} of {name!r}"
        return self.submit(lambda: self._create_topic(name, partitions, replication_factor, assignment,
                                                    validate_only, dict(configs or {}), charge), what=what)

    def _create_topic(self, name: str, partitions: int, replication_factor: int,
                      assignment: dict[int, list[int]] | None, validate_only: bool,
                      configs: dict[str, str | None] | None = None,
                      charge: Charge | None = None) -> tuple[uuid.UUID, dict]:
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
        if charge is not None:
            charge(len(assignment))
        topic_id = uuid.uuid4()
        if validate_only:
            return topic_id, assignment
        stored = self._new_partitions(name, assignment)
        self.store.create_topic(name, topic_id, stored, overrides)
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

    # --- dynamic configs ------------------------------------------------------------------------

    def alter_configs(self, changes: list[ResourceChange], validate_only: bool) -> concurrent.futures.Future:
        """AlterConfigs / IncrementalAlterConfigs on the event thread: the future [(error code,
        message)], one per change in order; each change applied, stored and pushed to the brokers
        alone (a refused one changes nothing)."""
        return self.submit(lambda: [self._alter_config(c, validate_only) for c in changes],
                           what=f"AlterConfigs of {len(changes)} resources")

    def _alter_config(self, change: ResourceChange, validate_only: bool) -> tuple[int, str | None]:
        def topic_exists(name: str) -> bool:
            return name in self.context.topic_ids and name not in self._deleting

        try:
            new = self.configs.alter(change, validate_only, topic_exists)
        except ApiError as e:
            return e.code, e.message
        if new is not None:
            name = change.resource_name
            ctx = self.context
            targets = sorted(ctx.live_or_shutting_down_broker_ids)
            if change.resource_type == RESOURCE_BROKER and name:
                targets = [b for b in targets if str(b) == name]
            self._push_configs(targets, [(change.resource_type, name, new)])
        return E.NONE, None

    def _push_configs(self, brokers: list[int], sets: list[tuple[int, str, Mapping[str, str]]]) -> None:
        body = self.configs.push_body(sets)
        for b in brokers:
            self.channel.send_request(b, ApiKey.ALTER_CONFIGS, PUSH_VERSION, body)

    # --- SCRAM credentials ------------------------------------------------------------------------

    def alter_user_scram_credentials(self, request: Any) -> concurrent.futures.Future:
        """AlterUserScramCredentials on the event thread: the future [(user, error code, message)];
        the changed users' credentials stored, then pushed to every live broker."""
        return self.submit(lambda: self._alter_scram(request), what="AlterUserScramCredentials")

    def _alter_scram(self, request: Any) -> list[tuple[str, int, str | None]]:
        results, changed = self.scram.alter(request)
        if changed:
            self._push_scram(sorted(self.context.live_or_shutting_down_broker_ids), changed)
        return results

    def _push_scram(self, brokers: list[int], users: list[str] | None) -> None:
        body = self.scram.push_body(users)
        for b in brokers:
            self.channel.send_request(b, ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, body)
    # --- ACLs -----------------------------------------------------------------------------------

    def create_acls(self, bindings: list[AclBinding]) -> concurrent.futures.Future:
        """CreateAcls on the event thread: the future [(error code, message)], one per binding;
        the new set stored, then pushed whole to every live broker."""
        def create() -> list[tuple[int, str | None]]:
            results, changed = self.acls.create(bindings)
            if changed:
                self._push_acls(sorted(self.context.live_or_shutting_down_broker_ids))
            return results

        return self.submit(create, what=f"CreateAcls of {len(bindings)} bindings")

    def delete_acls(self, filters: list[AclBindingFilter]) -> concurrent.futures.Future:
        """DeleteAcls on the event thread: the future [(error code, message, removed bindings)],
        one per filter; the new set stored, then pushed whole to every live broker."""
        def delete() -> list[tuple[int, str | None, list[AclBinding]]]:
            results, changed = self.acls.delete(filters)
            if changed:
                self._push_acls(sorted(self.context.live_or_shutting_down_broker_ids))
            return results

        return self.submit(delete, what=f"DeleteAcls of {len(filters)} filters")

    def _push_acls(self, brokers: list[int]) -> None:
        body = acl_control.push_body(self.acls.acls)
        for b in brokers:
            self.channel.send_request(b, ApiKey.CREATE_ACLS, acl_control.PUSH_VERSION, body)
    def alter_client_quotas(self, entries: list[Any], validate_only: bool) -> concurrent.futures.Future:
        """AlterClientQuotas on the event thread: the future [(error code, message)] per entry;
        the entities changed are stored and pushed to every live broker."""
        return self.submit(lambda: self._alter_client_quotas(entries, validate_only),
                           what=f"AlterClientQuotas of {len(entries)} entities")

    def _alter_client_quotas(self, entries: list[Any], validate_only: bool) -> list[tuple[int, str | None]]:
        results, changed = self.quotas.alter(entries, validate_only)
        if changed:
            self._push_quotas(sorted(self.context.live_or_shutting_down_broker_ids), changed)
        return results

    def _push_quotas(self, brokers: list[int], sets: Mapping[Any, Mapping[str, float]]) -> None:
        body = self.quotas.push_body(sets)
        for b in brokers:
            self.channel.send_request(b, ApiKey.ALTER_CLIENT_QUOTAS, QUOTAS_PUSH_VERSION, body)

    def broker_configs(self, name: str) -> dict[str, str]:
        """The dynamic configs of a broker id, or of '' (the cluster default); read from any thread."""
        return self.configs.broker_configs.get(name, {})

    def topic_configs(self, name: str) -> dict[str, str] | None:
        """The config overrides of a topic the controller has (not being deleted), else None.
        Read from any thread: the dicts are replaced whole on the event thread, never changed."""
        if name not in self.context.topic_ids or name in self._deleting:
            return None
        return self._topic_configs.get(name, {})

    # --- partitions -----------------------------------------------------------------------------

    def create_partitions(self, name: str, count: int, assignment: list[list[int]] | None,
                          validate_only: bool, charge: Charge | None = None) -> concurrent.futures.Future:
        """Raise a topic's partition count to ``count`` on the event thread (Kafka's
        createPartitions): the future {partition: replicas} of the new partitions, or ApiError
        with Kafka's code when refused. ``assignment``: the new partitions' replicas, in order."""
        what = f"CreatePartitions{' (validate only)' if validate_only else ''} of {name!r}"
        return self.submit(lambda: self._create_partitions(name, count, assignment, validate_only, charge),
                           what=what)

    def _create_partitions(self, name: str, count: int, assignment: list[list[int]] | None,
                           validate_only: bool, charge: Charge | None = None) -> dict[int, list[int]]:
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
        if charge is not None:
            charge(len(added))
        if validate_only:
            return added
        stored = self._new_partitions(name, added)
        self.store.add_partitions(stored)
        self._start_partitions(stored)
        log.info("Topic %s: partitions %d-%d added (now %d)", name, old, count - 1, count)
        return added

    def delete_topic(self, name: str | None, topic_id: uuid.UUID | None,
                     charge: Charge | None = None) -> concurrent.futures.Future:
        """Delete a topic on the event thread: the future name, or ApiError when refused."""
        what = f"DeleteTopics of {name!r}" if name is not None else f"DeleteTopics of topic id {topic_id}"
        return self.submit(lambda: self._delete_topic(name, topic_id, charge), what=what)

    def _delete_topic(self, name: str | None, topic_id: uuid.UUID | None,
                      charge: Charge | None = None) -> str:
        ctx = self.context
        if name is None:
            name = next((n for n, i in ctx.topic_ids.items() if i == topic_id), None)
            if name is None:
                raise ApiError(E.UNKNOWN_TOPIC_ID, "This server does not host this topic ID.")
        if name not in ctx.topic_ids or name in self._deleting:
            raise ApiError(E.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.")
        partitions = list(ctx.partitions_for_topic(name))
        if charge is not None:
            charge(len(partitions))
        # Written first (kafkalite's BeginTopicDeletionRecord): a new active controller resumes it.
        self.store.begin_topic_deletion(name)
        self._start_deletion(name)
        return name

    def _start_deletion(self, name: str) -> None:
        """StopReplica (delete) to the topic's live replicas, UpdateMetadata to every broker; the
        topic goes once every replica has answered (Kafka's TopicDeletionManager)."""
        ctx = self.context
        partitions = list(ctx.partitions_for_topic(name))
        ctx.queue_topic_deletion([name])
        ctx.topics_with_deletion_started.add(name)
        self.reassignments.topic_deleted(name)
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
            self.store.delete_topic(name)  # RemoveTopicRecord
            self.context.remove_topic(name)
            self._topic_configs.pop(name, None)
            log.info("Deleted topic %s", name)

    def deleting(self) -> list[str]:
        """Topics whose deletion waits for replicas (for tests and operators)."""
        return self.call(lambda: sorted(self._deleting))
