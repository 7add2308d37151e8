"""A broker's life cycle: start the socket server (control plane first) and the handler pools,
run until told to stop, then stop gracefully: stop accepting, answer the requests already
taken, close connections, join every thread within a bound."""

from __future__ import annotations

import dataclasses
import logging
import os
import signal
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kafkalite.common.endpoints import Endpoint
from kafkalite.common.errors import ConfigError
from kafkalite.controller.controller import KafkaController
from kafkalite.controller.group_configs import GroupConfigView
from kafkalite.metrics.components import (
    controller_state,
    handler_pool_metrics,
    quota_metrics,
    raft_metrics,
    request_log_metrics,
    topic_metrics,
)
from kafkalite.metrics.http import MetricsServer
from kafkalite.metrics.registry import MetricsRegistry, Registration
from kafkalite.metrics.request_log import RequestLog
from kafkalite.network.request_channel import Response
from kafkalite.network.socket_server import SocketServer
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.raft.config import QuorumConfig
from kafkalite.raft.manager import RaftManager
from kafkalite.storage.log_manager import LogManager
from kafkalite.storage.volume import FILES, MemoryVolume, Volume

from . import meta_properties
from .apis import SERVED, SERVED_BY_KEY, ApiTable, apis_for
from .authorizer import ALLOW_ALL, Authorizer
from .authorizer.standard import StandardAuthorizer
from .checks import Checks
from .client_quotas import QuotaManagers
from .config import BrokerConfig
from .controller_node import ControllerNodeProvider
from .coordinator.group_coordinator import GroupCoordinator
from .coordinator.offsets_topic import CoordinatorLoader, ReplicatedOffsetsStore, partition_for
from .coordinator.producer_id_manager import ProducerIdManager
from .coordinator.share_group.manager import ShareGroupManager
from .coordinator.transaction.coordinator import TransactionCoordinator
from .coordinator.transaction.markers import TransactionMarkerChannelManager
from .coordinator.transaction.state_manager import TransactionStateManager
from .coordinator.transaction.state_topic import ReplicatedTxnLogStore, TransactionLogLoader
from .coordinator.transaction.verification import AddPartitionsToTxnManager
from .dynamic_config import (
    BrokerLoggers,
    CleanerThreads,
    DynamicBrokerConfig,
    LogDefaults,
    ProducerIdExpiration,
    TransactionVerification,
)
from .faults.injector import FaultInjector
from .faults.operations import BrokerFaults
from .group_configs import GroupConfigCache, bounds_of
from .handlers.acls import AclApis
from .handlers.api_versions import ApiVersionsApis
from .handlers.client_quotas import ClientQuotaApis
from .handlers.cluster import ClusterApis
from .handlers.configs import ConfigApis, ConfigDescriber
from .handlers.control import ControlApis
from .handlers.elections import ElectionApis
from .handlers.fetch import FetchApis
from .handlers.groups import GroupApis
from .handlers.isr import IsrApis
from .handlers.log_dirs import LogDirApis
from .handlers.metadata import AutoTopicCreator, MetadataApis
from .handlers.offsets import OffsetApis
from .handlers.produce import ProduceApis
from .handlers.producers import ProducerIdApis
from .handlers.producers_state import ProducerStateApis
from .handlers.raft import RaftApis
from .handlers.reassignments import ReassignmentApis
from .handlers.registration import RegistrationApis
from .handlers.scram import ScramApis
from .handlers.share import ShareApis
from .handlers.share_offsets import ShareOffsetApis
from .handlers.share_state import ShareStateApis
from .handlers.topic_partitions import TopicPartitionsApis
from .handlers.topics import TopicApis
from .handlers.transactions import TransactionApis
from .handlers.txn_markers import TxnMarkerApis
from .handlers.txn_offsets import TxnOffsetApis
from .kafka_apis import KafkaApis
from .lifecycle import BrokerLifecycleManager
from .metadata_cache import BrokerInfo, MetadataCache, Snapshot
from .purgatory import DelayedOperationPurgatory
from .replication.alter_partition_manager import AlterPartitionManager
from .replication.replica_manager import ReplicaManager, partition_key
from .request_handler import RequestHandlerPool
from .scheduler import Scheduler
from .share.manager import GroupShareSettings, SharePartitionManager
from .share.replica_log import ReplicaShareLog
from .share_coordinator.coordinator import SHARE_GROUP_STATE_TOPIC, ShareCoordinator
from .share_coordinator.default_persister import DefaultStatePersister
from .share_coordinator.group_offsets import ShareGroupFacts, ShareGroupOffsets
from .share_coordinator.state_topic import ReplicatedShareStateStore, ShareStateLoader
from .topic_configs import ControllerLink, TopicConfigCache
from .topic_metrics import BrokerTopicStats

log = logging.getLogger("kafkalite.server.broker")

SHUTDOWN_TIMEOUT = 10.0
# Kafka's LogManager.InitialTaskDelayMs (log.initial.task.delay.ms in Kafka's newer versions, a setting
# kafkalite does not act on): how long after startup the first log retention runs.
INITIAL_TASK_DELAY_MS = 30_000
# How often the segments rolled since the last round are flushed; Kafka schedules a one-off
# "flush-log" task at each roll instead (UnifiedLog.roll), kafkalite polls for them.
ROLLED_FLUSH_INTERVAL_MS = 1000
# How often deleted logs whose file.delete.delay.ms has passed are removed (Kafka's
# "kafka-delete-logs" task, which Kafka reschedules for the next one due).
DELETE_LOGS_INTERVAL_MS = 1000
CONTROLLED_SHUTDOWN_TIMEOUT = 10.0  # seconds to wait for the controller to move leaderships
# What a controller-only node (process.roles=controller) serves on its controller listeners: the
# brokers' requests to the controller and the client requests they forward. (The quorum's own
# apis, Vote, BeginQuorumEpoch, ..., join them with the RaftManager.)
CONTROLLER_NODE_APIS = frozenset({
    ApiKey.API_VERSIONS, ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE, ApiKey.METADATA,
    ApiKey.BROKER_REGISTRATION, ApiKey.BROKER_HEARTBEAT, ApiKey.ALTER_PARTITION,
    ApiKey.ALLOCATE_PRODUCER_IDS, ApiKey.CREATE_TOPICS, ApiKey.DELETE_TOPICS, ApiKey.CREATE_PARTITIONS,
    ApiKey.DESCRIBE_CONFIGS, ApiKey.ALTER_CONFIGS, ApiKey.INCREMENTAL_ALTER_CONFIGS,
    ApiKey.DESCRIBE_ACLS, ApiKey.CREATE_ACLS, ApiKey.DELETE_ACLS, ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS,
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS, ApiKey.DESCRIBE_CLIENT_QUOTAS, ApiKey.ALTER_CLIENT_QUOTAS,
    ApiKey.ELECT_LEADERS, ApiKey.ALTER_PARTITION_REASSIGNMENTS, ApiKey.LIST_PARTITION_REASSIGNMENTS,
    # The metadata quorum's (handlers/raft.py): the voters' requests and their Fetch of __cluster_metadata.
    ApiKey.VOTE, ApiKey.BEGIN_QUORUM_EPOCH, ApiKey.END_QUORUM_EPOCH, ApiKey.DESCRIBE_QUORUM,
    ApiKey.FETCH_SNAPSHOT, ApiKey.FETCH,
})
# On a controller-only node every Fetch is the quorum's (it has no partitions of its own).
QUORUM_FETCH = dataclasses.replace(SERVED_BY_KEY[ApiKey.FETCH], handler=RaftApis.fetch)


class Broker:
    def __init__(self, config: BrokerConfig, volume: Volume | None = None) -> None:
        """``volume``: where the logs live; by default files, or a new MemoryVolume with
        log.storage=memory (a test cluster gives a restarted broker its old one)."""
        self.config = config
        self.volume: Volume = volume if volume is not None else (
            MemoryVolume() if config.memory_storage else FILES)
        self.node_id: int = config.node_id
        self.socket_server: SocketServer | None = None
        self.metadata_cache: MetadataCache | None = None
        self.pools: list[RequestHandlerPool] = []
        self.controller: KafkaController | None = None
        self.lifecycle: BrokerLifecycleManager | None = None
        self._stopped = threading.Event()
        self._stop_requested = threading.Event()
        self.started_ns = time.monotonic_ns()
        self.metrics_server: MetricsServer | None = None
        self.request_log: RequestLog | None = None
        self.topic_purgatory: DelayedOperationPurgatory | None = None
        self.replica_manager: ReplicaManager | None = None
        self.cluster_id: str | None = None
        self.fatal: str | None = None  # why the broker must stop (one line), set by any thread
        self.log_config = config.log_config()  # the broker's defaults for every log
        self.log_manager: LogManager | None = None
        self._dir_ids: dict[str, uuid.UUID] = {}  # log dir -> its meta.properties directory.id
        self.scheduler: Scheduler | None = None
        self.controller_link: ControllerLink | None = None  # topic configs, auto-creation, forwarding
        # Which controller is active (controller_node.py), shared by every sender to the controller.
        self.controller_nodes: ControllerNodeProvider | None = None
        self.raft_apis: RaftApis | None = None  # the quorum's apis (handlers/raft.py)
        self.raft: RaftManager | None = None  # the metadata quorum (on a controller node)
        self.topic_configs: TopicConfigCache | None = None
        # The settings in effect: the dynamic configs the controller pushes over the static ones.
        self.dynamic_config = DynamicBrokerConfig(config)
        self.producer_ids: ProducerIdManager | None = None
        self.group_coordinator: GroupCoordinator | None = None
        self.coordinator_loader: CoordinatorLoader | None = None
        self.share_groups: ShareGroupManager | None = None
        self.share_partitions: SharePartitionManager | None = None
        # The transaction coordinator of the __transaction_state partitions this broker leads, its
        # markers' senders, and the produce path's verification (KIP-890).
        self.txn_coordinator: TransactionCoordinator | None = None
        self.txn_loader: TransactionLogLoader | None = None
        self.txn_markers: TransactionMarkerChannelManager | None = None
        self.txn_verifier: AddPartitionsToTxnManager | None = None
        self.alter_partition_manager: AlterPartitionManager | None = None
        # The share coordinator of the __share_group_state partitions this broker leads, and the
        # persister through which this broker's share-partitions keep their state (KIP-932).
        self.share_coordinator: ShareCoordinator | None = None
        self.share_state_loader: ShareStateLoader | None = None
        self.share_persister: DefaultStatePersister | None = None
        self.share_offsets: ShareGroupOffsets | None = None  # Describe/Alter/DeleteShareGroupOffsets
        # The group configs (ConfigResource GROUP) the controller pushed; ``group_config(group_id)``
        # is what the group and share code read.
        self.group_configs = GroupConfigCache(bounds_of(config))
        self.faults: FaultInjector | None = None
        self.quotas: QuotaManagers | None = None  # client quotas (client_quotas.py), made in startup
        self.fault_ops: BrokerFaults | None = None  # the faults as operations (POST /faults)
        self.topic_stats = BrokerTopicStats()  # Kafka's BrokerTopicMetrics, counted by Produce and Fetch
        # What the components report (kafkalite/metrics/registry.py), read by the metrics endpoint.
        self.metrics = MetricsRegistry()
        self._metrics: list[Registration] = []  # the broker's own registrations, closed at shutdown
        # Who may do what (server/authorizer): the StandardAuthorizer over the ACLs the controller
        # pushes when authorizer.class.name is set, else ALLOW_ALL. Every handler asks ``authorizer``.
        auth = config.authorizer_settings()
        self.standard_authorizer: StandardAuthorizer | None = (
            StandardAuthorizer(auth) if auth.enabled else None)
        self.authorizer: Authorizer = self.standard_authorizer or ALLOW_ALL

    # --- start --------------------------------------------------------------------------------

    def startup(self) -> None:
        cfg = self.config
        if cfg.ignored:  # Kafka settings kafkalite does not act on, once, as Kafka lists unused ones
            log.warning("These configurations '[%s]' were supplied but are not used yet.",
                        ", ".join(cfg.ignored))
        # A node that runs the controller makes the cluster id; a broker adopts the controller's.
        # A lone controller makes the cluster id; the voters of a quorum must share one (Kafka's
        # `kafka-storage format --cluster-id`): a voter that made its own would be refused by the rest.
        quorum = cfg.is_controller and len(cfg.quorum_voters) > 1
        cluster_id = meta_properties.resolve(cfg.log_dirs, self.node_id, cfg.cluster_id,
                                             cfg.is_controller and not quorum, self.volume)
        if quorum and cluster_id is None:  # neither configured nor in meta.properties
            raise ConfigError(f"node {self.node_id} is one of {len(cfg.quorum_voters)} voters "
                              "(controller.quorum.voters) and has no cluster id: set the same cluster.id "
                              "on every voter", "cluster.id")
        self.cluster_id = cluster_id
        self._read_dir_ids()
        controller_listeners = frozenset(cfg.controller_listener_names)

        def only_served(table: dict) -> dict:  # a controller-only node serves the controller's apis
            return table if cfg.is_broker else {k: v for k, v in table.items() if k in CONTROLLER_NODE_APIS}

        def served_here(name: str, privileged: bool) -> dict:
            return only_served(apis_for(name, privileged, cfg.is_controller, controller_listeners))

        def advertised_here(name: str, privileged: bool) -> dict:
            table = only_served(apis_for(name, privileged, cfg.is_controller, controller_listeners,
                                         advertised=True))
            if not cfg.group_config().consumer_protocol_enabled:
                # group.coordinator.rebalance.protocols without consumer: not offered (Kafka's
                # ApiVersionsManager); a request anyway is UNSUPPORTED_VERSION (GroupApis).
                table = {k: v for k, v in table.items()
                         if k not in (ApiKey.CONSUMER_GROUP_HEARTBEAT, ApiKey.CONSUMER_GROUP_DESCRIBE)}
            return table

        if cfg.request_log is not None:
            self.request_log = RequestLog(*cfg.request_log)
            self.request_log.start()
        self.socket_server = SocketServer(cfg.socket_server_settings(), served_here, self.request_log,
                                          self.metrics)
        self.socket_server.startup()
        me = BrokerInfo(self.node_id, tuple(self._advertised_endpoints()), cfg.broker_rack)
        nodes = ControllerNodeProvider(self._voters(), cfg.controller_bootstrap_servers)
        self.controller_nodes = nodes
        # A lone controller is active from the start; in a quorum the active one is learned.
        controller_id = self.node_id if cfg.is_controller and len(nodes.voters) <= 1 else -1
        if controller_id >= 0:
            nodes.learn(controller_id, 0)
        self.metadata_cache = MetadataCache(cluster_id, controller_id,
                                            {self.node_id: me} if cfg.is_broker else {})
        # The raft apis' object exists before the quorum's first request can arrive: the listener
        # serves them from startup (BROKER_NOT_AVAILABLE until the RaftManager is set).
        self.raft_apis = RaftApis(None, self.send_response, controller_listeners)
        if cfg.is_controller:
            assert cluster_id is not None
            # The controller is the state machine of the metadata quorum (KRaft): the RaftManager
            # replicates __cluster_metadata among the voters and tells the controller what is
            # committed and who leads; it acts only while this node leads.
            self.raft = RaftManager(self.node_id, nodes.voters, cluster_id, cfg.metadata_partition_dir,
                                    QuorumConfig(**cfg.quorum_settings().quorum_config_args()),
                                    None, security=cfg.controller_security)
            self.controller = KafkaController(cfg.controller_settings(), self.raft, cluster_id, self.metrics)
            self.controller.leader_listeners.append(nodes.learn)
            if self.standard_authorizer is not None:
                # A controller node authorizes from the ACLs of the metadata it replays, from the
                # start (brokers' registrations included), as Kafka's controllers do.
                self.controller.acl_listeners.append(self.standard_authorizer.load)
            self._metrics.append(self.metrics.register("raft-metrics", raft_metrics(self.raft.metrics)))
            self.raft.listener = self.controller
            self.controller.channel.request_log = self.request_log
            self.controller.startup()
            self.raft_apis.raft = self.raft
            self.raft.startup()
            if len(nodes.voters) == 1:
                self.controller.await_active(10)  # a sole voter leads at once: its state is loaded
        if not cfg.is_broker:
            self._start_controller_only(advertised_here)
            return
        if not cfg.is_controller or len(nodes.voters) > 1:
            # Forwarding to the active controller (a voter's own controller may be a standby).
            self.controller_link = ControllerLink(self.node_id, nodes, security=cfg.controller_security)
        # Each log gets its topic's overrides over the broker's defaults (from the controller).
        self.topic_configs = TopicConfigCache(self.log_config, self.controller, self.controller_link)
        self.log_manager = LogManager(cfg.log_dirs, self.topic_configs.log_config,
                                      producer_id_expiration_ms=cfg.log_schedule.producer_id_expiration_ms,
                                      cleaner_config=cfg.cleaner_config(), volume=self.volume)
        self.topic_configs.log_manager = self.log_manager
        dynamic = self.dynamic_config
        if self.controller is not None:  # an APPEND to a topic's list starts from these defaults
            self.controller.configs.topic_defaults = dynamic.log_config
            self.controller.configs.group_bounds = bounds_of(cfg)
        dynamic.add_reconfigurable(LogDefaults(self.topic_configs, self.log_manager))
        dynamic.add_reconfigurable(CleanerThreads(self.log_manager))
        dynamic.add_reconfigurable(ProducerIdExpiration(self.log_manager))
        self.replica_manager = rm = ReplicaManager(
            self.node_id, self.metadata_cache, self.log_manager, cfg.replication_settings(),
            alter_isr=lambda partition, isr: self._alter_partitions().submit(partition, isr),
            inter_broker_listener=cfg.inter_broker_listener_name, metrics=self.metrics)
        # JBOD: a failed log dir is told to the controller at once (the next heartbeat names it);
        # with every dir failed the broker stops (Kafka halts).
        rm.log_dir_listeners.append(lambda path: self.lifecycle.propagate_directory_failure()
                                    if self.lifecycle is not None else None)
        rm.on_all_log_dirs_offline = self._all_log_dirs_failed
        rm.startup()
        dynamic.add_reconfigurable(rm.alter_log_dirs)  # replica.alter.log.dirs.io.max.bytes.per.second
        dynamic.add_reconfigurable(rm.quotas)  # leader/follower.replication.throttled.rate
        # A leader's ISR changes, to the controller (started now: it waits for registration).
        self.alter_partition_manager = AlterPartitionManager(
            self.node_id, nodes,
            lambda: self.lifecycle.broker_epoch if self.lifecycle is not None else -1,
            rm.alter_partition_answered, security=cfg.controller_security)
        self.alter_partition_manager.start()
        self._start_scheduler()
        self.topic_purgatory = DelayedOperationPurgatory("topic", self.node_id, self.metrics)
        # Asks the controller for producer id blocks once the lifecycle has registered this broker.
        self.producer_ids = ProducerIdManager(
            self.node_id, lambda: self.lifecycle.broker_epoch if self.lifecycle is not None else -1,
            nodes, security=cfg.controller_security)
        self.producer_ids.startup()
        # The group coordinator of the __consumer_offsets partitions this broker leads.
        offsets_topic = cfg.offsets_topic_config()
        self.group_coordinator = GroupCoordinator(
            self.node_id, cfg.group_config(), ReplicatedOffsetsStore(rm, offsets_topic),
            lambda group: partition_for(group, offsets_topic.num_partitions), metrics=self.metrics,
            topics=self._topics_view, group_config=self.group_config)
        self.coordinator_loader = CoordinatorLoader(self.group_coordinator, rm)
        rm.leadership_listeners.append(self.coordinator_loader.on_leadership)
        coordinator = self.group_coordinator
        assert self.scheduler is not None
        self.scheduler.schedule("delete-expired-group-metadata",
                                lambda: coordinator.cleanup_expired_offsets(offsets_topic.retention_ms),
                                offsets_topic.retention_check_interval_ms)
        self._start_share_coordinator()
        self._start_share_groups()
        self._start_transaction_coordinator()
        self.quotas = QuotaManagers(cfg.quota_settings(), self._send_response_now,
                                    node_listeners=frozenset(cfg.controller_listener_names))
        self.apis = self._kafka_apis(advertised_here)
        # The markers of partitions this broker leads: written in-process by WriteTxnMarkers' logic.
        assert self.txn_markers is not None
        self.txn_markers.local_writer = self.apis.area(TxnMarkerApis).write_markers
        self.metadata_cache.add_listener(self.topic_stats.on_metadata_change)  # drops deleted topics
        self.metadata_cache.add_listener(self._on_topics_change)  # consumer groups' subscriptions
        self.apis.faults = self.faults = self._fault_injector()
        self.apis.quotas = self.quotas
        hidden = {cfg.privileged_listener_name, *cfg.controller_listener_names}
        clients = [e.name for e in cfg.listeners if e.name not in hidden]
        self.fault_ops = BrokerFaults(self.faults, self.socket_server, clients, self.controller)
        ss = self.socket_server
        if ss.control_plane_request_channel is not None:
            self.pools.append(RequestHandlerPool(ss.control_plane_request_channel, self.apis.handle, 1,
                                                 "control-plane-kafka-request-handler", turns=ss.turns))
        self.pools.append(RequestHandlerPool(ss.data_plane_request_channel, self.apis.handle,
                                             cfg.num_io_threads, turns=ss.turns))
        for pool in self.pools:
            pool.start()
        ss.answer_here(self.apis.handle_here)  # ApiVersions, on the Processors
        # Live num.network.threads, connection limits, listener security (the SocketServer) and
        # num.io.threads (the data plane's pool; the control plane's keeps its one thread).
        self.dynamic_config.add_reconfigurable(ss)
        self.dynamic_config.add_reconfigurable(self.pools[-1])
        self._register_metrics()
        self._start_lifecycle()
        if cfg.metrics_endpoint is not None:
            host, port = cfg.metrics_endpoint
            self.metrics_server = MetricsServer(self.metrics, self.node_id, host, port,
                                                {"/faults": self.fault_ops.apply})
            log.info("Broker %d serves Prometheus metrics on http://%s:%d/metrics", self.node_id,
                     host, self.metrics_server.port)
        for e in self._advertised_endpoints():
            log.info("Broker %d advertises %s://%s:%d", self.node_id, e.name, e.host, e.port)
        log.info("Broker %d started (cluster id %s)", self.node_id,
                 cluster_id or "not yet known: the controller's is adopted at registration")

    def _start_controller_only(self, advertised_here: ApiTable) -> None:
        """A controller-only node (process.roles=controller): its controller, and the handlers of
        what the brokers ask the controller and forward to it; no logs, no partitions, no
        registration with the controller, not in Metadata."""
        cfg, cache, send, controller = self.config, self.metadata_cache, self.send_response, self.controller
        assert cache is not None and self.socket_server is not None
        self.topic_configs = TopicConfigCache(self.log_config, controller, None)
        if controller is not None:
            controller.configs.topic_defaults = self.dynamic_config.log_config
            controller.configs.group_bounds = bounds_of(cfg)
            configs = controller.configs
            self.group_configs = GroupConfigCache(bounds_of(cfg), lambda: configs.group_configs)
        self.topic_purgatory = DelayedOperationPurgatory("topic", self.node_id, self.metrics)
        listeners = frozenset(cfg.controller_listener_names)
        self.quotas = QuotaManagers(cfg.quota_settings(), self._send_response_now, node_listeners=listeners)
        describer = ConfigDescriber(cfg, self.dynamic_config, BrokerLoggers())
        areas = (
            ApiVersionsApis(advertised_here), MetadataApis(cache),
            TopicApis(controller, cache, self.topic_purgatory, send, describer, wait_for_metadata=False),
            ConfigApis(self.node_id, describer, self.topic_configs, cache, send, controller, None, listeners,
                       self.group_configs),
            RegistrationApis(controller, send), IsrApis(controller, send),
            ProducerIdApis(None, controller, send), ElectionApis(controller, cache, send),
            ReassignmentApis(controller, send),
            ClientQuotaApis(self.quotas.quotas, send, controller, None, listeners),
            ScramApis(self.socket_server.credentials, send, controller, None, listeners, self.authorizer),
            AclApis(self.standard_authorizer, send, controller, None, listeners), self.raft_apis)
        served = [QUORUM_FETCH if s.key == ApiKey.FETCH else s
                  for s in SERVED if s.key in CONTROLLER_NODE_APIS]
        self.apis = KafkaApis(*areas, served=served,
                              checks=Checks(cache, lambda: self.authorizer, auto_create_topics=False))
        self.apis.quotas = self.quotas
        ss = self.socket_server
        self.pools.append(RequestHandlerPool(ss.data_plane_request_channel, self.apis.handle,
                                             cfg.num_io_threads, turns=ss.turns))
        for pool in self.pools:
            pool.start()
        ss.answer_here(self.apis.handle_here)  # ApiVersions, on the Processors
        log.info("Controller %d started (controller only; cluster id %s)", self.node_id, self.cluster_id)

    def _start_share_groups(self) -> None:
        """Share groups (KIP-932): their membership on the group coordinator, their
        share-partitions on the partitions' leaders, whose state goes through the persister."""
        cfg, rm, cache = self.config, self.replica_manager, self.metadata_cache
        coordinator = self.group_coordinator
        assert rm is not None and cache is not None and coordinator is not None and self.scheduler is not None

        def topics() -> dict[str, tuple[uuid.UUID, int]]:
            return {name: (t.topic_id, len(t.partitions)) for name, t in cache.snapshot.topics.items()
                    if not name.startswith("__")}

        self.share_groups = groups = ShareGroupManager(
            cfg.share_group_config(), coordinator.check_group,
            lambda group_id: group_id in coordinator.groups, topics, store=coordinator.store.append,
            group_config=self.group_config)
        coordinator.share_groups_loaded = groups.load
        coordinator.is_share_group = groups.is_share_group
        self.scheduler.schedule("share-group-session-expiry", groups.expire_members, 1000)
        assert self.share_persister is not None
        broker_reset = cfg.share_partition_config().auto_offset_reset

        def group_settings(group_id: str) -> GroupShareSettings:
            # A group's GROUP config overrides the broker's settings (Kafka's GroupConfigManager).
            view = self.group_config(group_id)
            return GroupShareSettings(view.overrides.get("share.auto.offset.reset", broker_reset),
                                      view.share_record_lock_duration_ms)

        self.share_partitions = partitions = SharePartitionManager(
            cfg.share_partition_config(), self.share_persister, ReplicaShareLog(rm),
            wake=lambda topic, index: rm.fetch_purgatory.check_and_complete(partition_key(topic, index)),
            group_settings=group_settings)
        rm.leadership_listeners.append(
            lambda topic, index, leads: None if leads else partitions.forget_partition(topic, index))

        def lookup(group_id: str) -> ShareGroupFacts | None:
            found = groups.describe_for_offsets(group_id)
            return ShareGroupFacts(found.empty, found.subscribed_topics) if found.exists else None

        # Alter/DeleteShareGroupOffsets and a deleted share group: this broker's cached
        # share-partitions of the group read the state again (others are fenced on their next write).
        self.share_offsets = ShareGroupOffsets(self.share_persister, cache, coordinator.check_group, lookup,
                                               forget=partitions.forget_group)

    def _start_transaction_coordinator(self) -> None:
        """Kafka's TransactionCoordinator.startup: the coordinator, its loader following the
        leadership of __transaction_state, the markers' senders, the two timers."""
        cfg, rm, cache = self.config, self.replica_manager, self.metadata_cache
        assert rm is not None and cache is not None and self.producer_ids is not None
        assert self.scheduler is not None
        txn = cfg.transaction_config()
        listener = cfg.inter_broker_listener_name
        self.txn_markers = TransactionMarkerChannelManager(self.node_id, cache, listener,
                                                           security=cfg.inter_broker_security)
        self.txn_markers.start()
        state = TransactionStateManager(txn, ReplicatedTxnLogStore(rm, txn.request_timeout_ms))
        self.txn_coordinator = coordinator = TransactionCoordinator(
            self.node_id, txn, state, self.producer_ids.generate, self.txn_markers)
        self.txn_loader = TransactionLogLoader(coordinator, rm, txn.load_buffer_size)
        rm.leadership_listeners.append(self.txn_loader.on_leadership)
        self.txn_verifier = AddPartitionsToTxnManager(
            self.node_id, cache, listener, txn.num_partitions, local=coordinator,
            enabled=txn.partition_verification_enable, security=cfg.inter_broker_security)
        self.dynamic_config.add_reconfigurable(TransactionVerification(self.txn_verifier))
        self.scheduler.schedule("transaction-abort", coordinator.abort_timed_out_transactions,
                                txn.abort_timed_out_interval_ms)
        self.scheduler.schedule("transactionalId-expiration", coordinator.expire_transactional_ids,
                                txn.remove_expired_interval_ms)

    def group_config(self, group_id: str) -> GroupConfigView:
        """The group's configs in effect now (its GROUP config overrides over this broker's
        settings): what the consumer-group and share-group code read."""
        return self.group_configs.group_config(group_id)

    def _start_share_coordinator(self) -> None:
        """The share coordinator following the leadership of __share_group_state, and the
        DefaultStatePersister over it (in-process when this broker is the key's coordinator)."""
        cfg, rm, cache = self.config, self.replica_manager, self.metadata_cache
        assert rm is not None and cache is not None
        share = cfg.share_coordinator_config()
        store = ReplicatedShareStateStore(rm, share.write_timeout_ms)
        self.share_coordinator = ShareCoordinator(share, store)
        self.share_state_loader = ShareStateLoader(self.share_coordinator, rm, share.load_buffer_size)
        rm.leadership_listeners.append(self.share_state_loader.on_leadership)
        creator = self._auto_topic_creator(internal=True)

        def create_topic() -> None:
            if creator is not None:
                creator.create(SHARE_GROUP_STATE_TOPIC, cache.snapshot)

        self.share_persister = DefaultStatePersister(
            self.node_id, cache, cfg.inter_broker_listener_name, share.write_timeout_ms,
            local=self.share_coordinator, create_topic=create_topic, security=cfg.inter_broker_security)
        self.share_persister.start()

    def _register_metrics(self) -> None:
        """What the broker itself reports; its components registered theirs when built."""
        register = self.metrics.register
        self._metrics.append(register("topic-metrics", topic_metrics(self.topic_stats)))
        data_plane = self.pools[-1]  # started last
        self._metrics.append(register("request-handler-pool", handler_pool_metrics(data_plane)))
        if self.quotas is not None:
            q = self.quotas
            self._metrics.append(register("client-quotas", quota_metrics(
                [q.produce, q.fetch, q.request, q.controller_mutation])))
        if self.request_log is not None:
            self._metrics.append(register("request-log", request_log_metrics(self.request_log)))
        if self.controller is None:  # the controller's broker reports 1 (KafkaController)
            self._metrics.append(register("no-controller", controller_state(0)))
        if self.standard_authorizer is not None:
            self._metrics.append(register("authorizer", self.standard_authorizer.metrics))

    def _kafka_apis(self, advertised_here: ApiTable) -> KafkaApis:
        """KafkaApis with one object of every area (handlers/), each given what it serves from
        (ApiVersions: what each listener advertises)."""
        cache, rm, controller = self.metadata_cache, self.replica_manager, self.controller
        send = self.send_response
        assert cache is not None and rm is not None and self.topic_configs is not None
        assert self.socket_server is not None
        assert self.topic_purgatory is not None and self.producer_ids is not None
        describer = ConfigDescriber(self.config, self.dynamic_config, BrokerLoggers())
        cache.add_listener(self.topic_configs.on_metadata_change)
        node_listeners = frozenset(self.config.controller_listener_names)
        topics = TopicApis(controller, cache, self.topic_purgatory, send, describer, self.controller_link,
                           node_listeners=node_listeners)
        cache.add_listener(topics.on_metadata_change)
        # The quorum's apis; its ``raft`` is the node's RaftManager once there is one (None: every
        # quorum request answered BROKER_NOT_AVAILABLE).
        assert self.raft_apis is not None
        return KafkaApis(
            ApiVersionsApis(advertised_here), MetadataApis(cache, self._auto_topic_creator(), self.node_id),
            ControlApis(rm, self.topic_configs, send, self.controller_nodes),
            ConfigApis(self.node_id, describer, self.topic_configs, cache, send, controller,
                       self.controller_link, frozenset(self.config.controller_listener_names),
                       self.group_configs), topics,
            RegistrationApis(controller, send), IsrApis(controller, send),
            ProduceApis(rm, send, self.topic_stats, txn_verifier=self.txn_verifier),
            FetchApis(rm, send, self.topic_stats, raft=self.raft_apis), self.raft_apis, OffsetApis(rm),
            ProducerIdApis(self.producer_ids, controller, send, self.txn_coordinator),
            GroupApis(self.group_coordinator, send, cache, self._auto_topic_creator(internal=True),
                      share_groups=self.share_groups, share_offsets=self.share_offsets),
            ShareApis(self.share_groups, self.share_partitions, send, cache, rm.fetch_purgatory),
            TransactionApis(self.txn_coordinator, send, cache,
                            self.config.offsets_topic_config().num_partitions),
            TxnMarkerApis(rm, send, self.group_coordinator,
                          self.config.transaction_config().request_timeout_ms),
            TxnOffsetApis(self.group_coordinator, send, cache), ProducerStateApis(rm),
            ShareStateApis(self.share_coordinator, send), ShareOffsetApis(self.share_offsets, send),
            ClientQuotaApis(self._quotas().quotas, send, controller, self.controller_link,
                            frozenset(self.config.controller_listener_names)),
            ClusterApis(cache), LogDirApis(rm),
            TopicPartitionsApis(cache, self.config["max.request.partition.size.limit"]),
            ElectionApis(controller, cache, send, self.controller_link, node_listeners),
            ReassignmentApis(controller, send, self.controller_link, node_listeners),
            ScramApis(self.socket_server.credentials, send, controller, self.controller_link,
                      frozenset(self.config.controller_listener_names), self.authorizer),
            AclApis(self.standard_authorizer, send, controller, self.controller_link,
                    frozenset(self.config.controller_listener_names)),
            # Every request's authorization (checks.py) asks self.authorizer, looked up at each request.
            checks=Checks(cache, lambda: self.authorizer,
                          auto_create_topics=self.config.auto_create_topics[0]))

    def _quotas(self) -> QuotaManagers:
        assert self.quotas is not None
        return self.quotas

    def _fault_injector(self) -> FaultInjector:
        """The faults a test may inject (kafkalite.testing, ``kafkalite fault``); none at first."""
        cache = self.metadata_cache
        assert cache is not None

        def topic_name(topic_id: uuid.UUID) -> str | None:
            info = cache.snapshot.topic_by_id(topic_id)
            return info.name if info is not None else None

        faults = FaultInjector(self.node_id, topic_name, self._send_response_now)
        versions = self.apis.area(ApiVersionsApis)
        versions.max_versions = faults.max_versions_for
        faults.on_max_versions.append(versions.forget)
        return faults

    def _topics_view(self) -> dict[str, tuple[uuid.UUID, int]]:
        """The topics consumer groups assign: name -> (topic id, partition count)."""
        cache = self.metadata_cache
        if cache is None:
            return {}
        return {name: (t.topic_id, len(t.partitions)) for name, t in cache.snapshot.topics.items()}

    def _on_topics_change(self, old: Snapshot, new: Snapshot) -> None:
        """Topics created, deleted or grown: consumer groups re-evaluate their subscriptions."""
        if self.group_coordinator is None or old.topics is new.topics:
            return
        if {n: (t.topic_id, len(t.partitions)) for n, t in old.topics.items()} != \
                {n: (t.topic_id, len(t.partitions)) for n, t in new.topics.items()}:
            self.group_coordinator.on_topics_changed()

    def _auto_topic_creator(self, internal: bool = False) -> AutoTopicCreator | None:
        """Metadata's creator of unknown topics (None with auto.create.topics.enable=false); an
        internal topic (``__consumer_offsets``, ``__transaction_state``) is created whatever that
        setting says."""
        enabled, partitions, replication_factor = self.config.auto_create_topics
        if not enabled and not internal:
            return None
        return AutoTopicCreator(partitions, replication_factor, self.controller, self.controller_link,
                                self.config.offsets_topic_config(), self.config.transaction_config(),
                                self.config.share_coordinator_config())

    def _start_scheduler(self) -> None:
        """The log manager's periodic work (Kafka's LogManager.startup and ReplicaManager's
        high watermark checkpoint), on the broker's scheduler thread."""
        lm, every = self.log_manager, self.config.log_schedule
        assert lm is not None
        self.scheduler = scheduler = Scheduler()
        scheduler.schedule("kafka-log-retention", lm.cleanup_logs, every.retention_check_interval_ms,
                           delay_ms=INITIAL_TASK_DELAY_MS)
        scheduler.schedule("kafka-log-flusher", lm.flush_rolled, ROLLED_FLUSH_INTERVAL_MS)
        scheduler.schedule("kafka-recovery-point-checkpoint", lm.checkpoint_recovery_offsets,
                           every.recovery_point_checkpoint_interval_ms)
        scheduler.schedule("kafka-log-start-offset-checkpoint", lm.checkpoint_log_start_offsets,
                           every.log_start_offset_checkpoint_interval_ms)
        scheduler.schedule("highwatermark-checkpoint", lm.checkpoint_high_watermarks,
                           every.high_watermark_checkpoint_interval_ms)
        scheduler.schedule("PeriodicProducerExpirationCheck", lm.remove_expired_producers,
                           every.producer_id_expiration_check_interval_ms)
        scheduler.schedule("kafka-delete-logs", lm.delete_logs, DELETE_LOGS_INTERVAL_MS)
        lm.start_cleaner()
        rm = self.replica_manager
        assert rm is not None
        # Kafka's ReplicaManager: followers behind for replica.lag.time.max.ms leave the ISR.
        scheduler.schedule("isr-expiration", rm.maybe_shrink_isr, max(1, rm.settings.lag_time_max_ms // 2))
        scheduler.start()

    def _all_log_dirs_failed(self, why: str) -> None:
        self.fatal = why
        self.request_stop()

    def offline_log_dir_ids(self) -> list[uuid.UUID]:
        """The directory.id (meta.properties) of each offline log dir, for BrokerHeartbeat's
        OfflineLogDirs; a dir whose id could not be read gets a stable one made from its path."""
        lm = self.log_manager
        if lm is None:
            return []
        ids = []
        for path in lm.offline_dirs:
            known = self._dir_ids.get(str(path))
            ids.append(known or uuid.uuid5(uuid.NAMESPACE_URL, f"kafkalite-log-dir:{path.absolute()}"))
        return ids

    def _read_dir_ids(self) -> None:
        for d in self.config.log_dirs:
            dir_id = meta_properties.directory_id(d, self.volume)
            if dir_id is not None:
                self._dir_ids[d] = dir_id

    def _alter_partitions(self) -> AlterPartitionManager:
        assert self.alter_partition_manager is not None
        return self.alter_partition_manager

    def send_response(self, response: Response) -> None:
        """Answer a request that waited (in a purgatory, or for the controller), from whichever
        thread completed it: through the request channel of the plane it came from (after the
        round-trip time a test added, if any)."""
        faults = self.faults
        if faults is not None and faults.delays(response.request):
            faults.later(response)
        else:
            self._send_response_now(response)

    def _send_response_now(self, response: Response) -> None:
        ss = self.socket_server
        assert ss is not None
        channel = ss.control_plane_request_channel
        if channel is None or response.request.listener != self.config.control_plane_listener_name:
            channel = ss.data_plane_request_channel
        channel.send_responses([response])

    def _voters(self) -> dict[int, tuple[str, int]]:
        """The controller quorum's voters: controller.quorum.voters, else, on a node that runs the
        controller alone, this node at the address the settings name (its privileged listener
        when they name none)."""
        cfg = self.config
        if cfg.quorum_voters or not cfg.is_controller:
            return cfg.quorum_voters
        if cfg.controller_address is not None:
            return {self.node_id: cfg.controller_address}
        assert self.socket_server is not None
        return {self.node_id: self.socket_server.bound_address(cfg.privileged_listener_name)}

    @property
    def controller_address(self) -> tuple[str, int]:
        """Where this broker sends its next request to the controller (the one believed active)."""
        assert self.controller_nodes is not None
        return self.controller_nodes.current().address

    def _start_lifecycle(self) -> None:
        cfg = self.config
        rm = self.replica_manager
        assert rm is not None

        def registered(epoch: int) -> None:
            rm.broker_epoch = epoch

        def adopt(cluster_id: str) -> None:
            meta_properties.write(cfg.log_dirs, cluster_id, self.node_id, self.volume)
            self._read_dir_ids()
            self.cluster_id = cluster_id
            assert self.metadata_cache is not None
            self.metadata_cache.set_cluster_id(cluster_id)

        def fatal(why: str) -> None:
            path = meta_properties.path_for(cfg.log_dirs)
            self.fatal = (f"{why}; {path} ties this node to cluster {self.cluster_id}: use another "
                          f"log.dirs, or delete {path} to let it join the controller's cluster")
            log.error("Broker %d stops: %s", self.node_id, self.fatal)
            self.request_stop()

        session_ms = cfg.controller_settings().session_timeout_ms
        if cfg.heartbeat_interval_ms >= session_ms:
            log.warning("broker.heartbeat.interval.ms %d is not below broker.session.timeout.ms %d: the "
                        "controller will fence brokers between their heartbeats", cfg.heartbeat_interval_ms,
                        session_ms)
        assert self.controller_nodes is not None
        self.lifecycle = BrokerLifecycleManager(
            self.node_id, self.cluster_id, self.controller_nodes, list(self._advertised_endpoints()),
            cfg.broker_rack, cfg.heartbeat_interval_ms, registered,
            on_cluster_id=adopt, on_fatal=fatal, offline_log_dirs=self.offline_log_dir_ids,
            security=cfg.controller_security)
        self.lifecycle.start()

    def _advertised_endpoints(self) -> Iterator[Endpoint]:
        """What the broker registers and clients see: its advertised listeners except the
        controller's (Kafka advertises those only to the controller quorum)."""
        assert self.socket_server is not None
        hidden = set(self.config.controller_listener_names)
        for e in self.config.advertised_listeners:
            if e.name in hidden:
                continue
            port = e.port or self.socket_server.bound_port(e.name)  # port 0: the bound one
            yield Endpoint(e.name, e.host, port, e.security_protocol)

    def bound_port(self, listener: str | None = None) -> int:
        assert self.socket_server is not None
        return self.socket_server.bound_port(listener or self.config.listeners[0].name)

    # --- stop ---------------------------------------------------------------------------------

    def request_stop(self) -> None:
        self._stop_requested.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._stop_requested.wait(timeout)

    def shutdown(self, timeout: float = SHUTDOWN_TIMEOUT, graceful: bool = True) -> None:
        """``graceful`` False stops without a controlled shutdown and without waiting for the
        requests taken to be answered (a test cluster's killed broker, or its end)."""
        if self._stopped.is_set():
            return
        log.info("Broker %d shutting down", self.node_id)
        if self.lifecycle is not None:
            rm = self.replica_manager
            replicated = rm is not None and any(len(p.state.replicas) > 1
                                                for p in list(rm.partitions.values()))
            # Nothing another broker could take over: no need to ask (and no handler to wait for).
            if graceful and self.config.controlled_shutdown and self.fatal is None and replicated:
                # Leaderships move to other replicas first: clients fail over before this broker
                # stops answering. Bounded: a controller that cannot be reached does not hold it.
                started = time.monotonic()
                if self.lifecycle.controlled_shutdown(CONTROLLED_SHUTDOWN_TIMEOUT):
                    log.info("Broker %d: controlled shutdown done in %.0f ms", self.node_id,
                             (time.monotonic() - started) * 1000)
                else:
                    log.warning("Broker %d: controlled shutdown not confirmed by the controller within "
                                "%.0f s; shutting down anyway", self.node_id, CONTROLLED_SHUTDOWN_TIMEOUT)
            self.lifecycle.shutdown()
        if self.alter_partition_manager is not None:
            self.alter_partition_manager.shutdown()
        if self.producer_ids is not None:
            self.producer_ids.shutdown()
        if self.metrics_server is not None:
            self.metrics_server.shutdown()
        for registration in self._metrics:
            registration.close()
        if self.faults is not None:
            self.faults.shutdown()  # delayed responses go now: the graceful stop waits for them
        ss = self.socket_server
        if ss is not None:
            ss.stop_accepting()
            if graceful and not ss.wait_for_responses(timeout / 2):
                log.warning("Some requests were still unanswered at shutdown")
        if self.controller is not None:
            self.controller.shutdown()
        if self.raft is not None:
            self.raft.shutdown()
        if self.quotas is not None:
            self.quotas.close()
        for pool in self.pools:
            pool.shutdown(timeout / 4)
        if self.controller_link is not None:
            self.controller_link.shutdown()
        if self.topic_purgatory is not None:
            self.topic_purgatory.shutdown(timeout / 4)
        if self.coordinator_loader is not None:
            self.coordinator_loader.shutdown(timeout / 4)
        if self.share_partitions is not None:
            self.share_partitions.shutdown()
        if self.group_coordinator is not None:
            self.group_coordinator.shutdown()
        if self.share_persister is not None:
            self.share_persister.shutdown(timeout / 4)
        if self.share_state_loader is not None:
            self.share_state_loader.shutdown(timeout / 4)
        if self.txn_loader is not None:
            self.txn_loader.shutdown(timeout / 4)
        if self.txn_coordinator is not None:
            self.txn_coordinator.shutdown()
        if self.txn_markers is not None:
            self.txn_markers.shutdown(timeout / 4)
        if self.txn_verifier is not None:
            self.txn_verifier.shutdown(timeout / 4)
        if self.replica_manager is not None:
            self.replica_manager.shutdown(timeout / 4)
        if self.scheduler is not None:
            self.scheduler.shutdown(timeout / 4)
        if ss is not None:
            ss.shutdown(timeout / 4)
        if self.request_log is not None:
            self.request_log.shutdown()  # after the Processors: their last lines are written
        if self.log_manager is not None:
            # Last: nothing appends any more. The marker lets the next start skip recovery.
            self.log_manager.shutdown(self.replica_manager.broker_epoch if self.replica_manager else -1)
        self._stopped.set()
        log.info("Broker %d shut down", self.node_id)


@contextmanager
def stop_on_signals(on_first: Any) -> Iterator[None]:
    """SIGTERM/SIGINT call ``on_first()`` once; a second signal exits at once."""
    seen: list[int] = []

    def handler(signum: int, _frame: Any) -> None:
        if seen:
            log.warning("Second signal %s: exiting now", signal.Signals(signum).name)
            os._exit(1)
        seen.append(signum)
        log.info("Signal %s: stopping gracefully (send again to force)", signal.Signals(signum).name)
        on_first()

    previous = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def use_sched_batch() -> None:
    """Put the calling thread, and so every thread it starts later, under SCHED_BATCH (Linux):
    a thread woken there does not preempt the one running. Python threads hand each other work
    and then the interpreter's lock; preempted at the hand-over, the woken thread would only
    block on that lock, and the two would switch back and forth (the broker's hops, Processor to
    handler to Processor, took 10 context switches a request; 3 with SCHED_BATCH, and the one-
    request round trip took 12% less). Nothing where there is no such policy; a refusal is logged."""
    policy = getattr(os, "SCHED_BATCH", None)
    if policy is None:
        return
    try:
        os.sched_setscheduler(0, policy, os.sched_param(0))
    except OSError as e:
        log.warning("SCHED_BATCH not set (%s); threads.sched.batch has no effect", e)


def run(config: BrokerConfig) -> int:
    """Run a broker in the foreground until SIGTERM or SIGINT; the exit code.

    "is up" is printed once the broker is registered with the controller; until then it says
    where it waits for it. A fatal condition (a broker of another cluster) stops it with 1."""
    if config.sched_batch:
        use_sched_batch()  # before any thread starts: threads take their creator's policy
    broker = Broker(config)
    with stop_on_signals(broker.request_stop):
        try:
            broker.startup()
        except Exception:
            broker.shutdown()
            raise
        try:
            lifecycle = broker.lifecycle
            if lifecycle is None:  # a controller-only node
                print(f"kafkalite controller {broker.node_id} is up (cluster id {broker.cluster_id}; "
                      "Ctrl-C to stop)", flush=True)
                while not broker.wait(1.0):
                    pass
                return 0 if not broker.fatal else 1
            if not lifecycle.registered.wait(0.5) and not broker.wait(0):
                host, port = broker.controller_address
                print(f"kafkalite broker {broker.node_id} is waiting for the controller at "
                      f"{host}:{port} ...", flush=True)
            while not lifecycle.registered.wait(0.1) and not broker.wait(0):
                pass
            if not broker.wait(0):
                servers = ",".join(f"{e.host}:{e.port}" for e in broker._advertised_endpoints()
                                   if e.name != config.control_plane_listener_name)
                print(f"kafkalite broker {broker.node_id} is up: bootstrap.servers={servers} "
                      f"(cluster id {broker.cluster_id}; Ctrl-C to stop)", flush=True)
            while not broker.wait(1.0):
                pass
        finally:
            broker.shutdown()
    if broker.fatal:
        print(f"Error: {broker.fatal}", file=sys.stderr, flush=True)
        return 1
    return 0
