"""What the controller tells a broker, applied with Kafka's fencing (Kafka's ReplicaManager and
MetadataCache.updateMetadata): LeaderAndIsr and StopReplica change the table of partitions this
broker hosts; an UpdateMetadata that passes the fencing is applied by the MetadataCache itself.

Fencing, as Kafka does it:
- a request from an older controller epoch than the newest seen: STALE_CONTROLLER_EPOCH, nothing
  applied;
- a request for an older broker epoch than this broker's (and not -1, unknown): STALE_BROKER_EPOCH;
- LeaderAndIsr for a partition with a leader epoch not above the one held: STALE_CONTROLLER_EPOCH
  for that partition; a partition this broker is not a replica of: UNKNOWN_TOPIC_OR_PARTITION;
- StopReplica with a leader epoch not above the one held: FENCED_LEADER_EPOCH for that partition,
  except the sentinels -1 (no epoch) and -2 (topic being deleted), which always apply.

Log dirs (JBOD, KIP-112/113): a partition whose log dir went offline is *offline* here (Kafka's
HostedPartition.Offline): Produce, Fetch, ListOffsets and LeaderAndIsr get KAFKA_STORAGE_ERROR for
it until the broker restarts. The LogDirFailureHandler thread takes each dir the log manager's
failure channel reports (``handle_log_dir_failure``): its partitions' fetchers and moves stop, they
become offline, waiting requests answer, the log manager forgets the dir's logs, and
``log_dir_listeners`` hear of it (the broker's heartbeat tells the controller, which moves their
leadership away). With no dir left online the broker shuts down (``on_all_log_dirs_offline``).
``alter_replica_log_dirs`` is AlterReplicaLogDirs; the ReplicaAlterLogDirsThread moves the data.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import uuid
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, Literal

from kafkalite.common.errors import ApiError
from kafkalite.common.leader_and_isr import EPOCH_DURING_DELETE, NO_EPOCH, UNKNOWN_BROKER_EPOCH
from kafkalite.common.uuids import ZERO_UUID
from kafkalite.metrics.components import replica_manager_metrics
from kafkalite.metrics.registry import MetricsRegistry
from kafkalite.protocol import error_codes as E
from kafkalite.storage.checkpoint import TopicPartition as LogTopicPartition
from kafkalite.storage.files import future_dir_name
from kafkalite.storage.log import AppendOrigin, LogAppendInfo
from kafkalite.storage.log_dir_failure import KafkaStorageError
from kafkalite.storage.log_manager import DirIo, LogManager

from ..metadata_cache import MetadataCache
from ..purgatory import DelayedOperationPurgatory
from .alter_log_dirs import ReplicaAlterLogDirsThread
from .partition import NO_LEADER_EPOCH, Partition, PartitionState, not_leader
from .quota import ReplicationQuotas
from .replica_fetcher import InitialFetchState, ReplicaFetcherManager, ReplicationSettings

log = logging.getLogger("kafkalite.server.replication.replica_manager")


def partition_key(topic: str, index: int) -> Hashable:
    """The purgatories' key of a partition: what appends and high watermark moves check."""
    return ("partition", topic, index)


def follower_key(replica_id: int) -> Hashable:
    """The fetch purgatory's key of every waiting fetch of one follower."""
    return ("follower", replica_id)


class IsrChangeCounts:
    """The ISR changes of the partitions led here, as the controller answered them (Kafka's
    ReplicaManager meters IsrExpandsPerSec, IsrShrinksPerSec and FailedIsrUpdatesPerSec, marked
    by each Partition through its IsrChangeListener)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.expands = 0
        self.shrinks = 0
        self.failed = 0

    def mark_expand(self) -> None:
        with self._lock:
            self.expands += 1

    def mark_shrink(self) -> None:
        with self._lock:
            self.shrinks += 1

    def mark_failed(self) -> None:
        with self._lock:
            self.failed += 1


@dataclasses.dataclass
class PartitionResult:
    topic: str
    topic_id: uuid.UUID
    index: int
    error_code: int


class ReplicaManager:
    """The partitions this broker hosts (``partitions``: (topic, index) -> Partition, each with its
    log from ``log_manager``) and the two purgatories of the data path: acks=all produce requests
    waiting for the high watermark, and fetches waiting for min_bytes (Kafka's
    delayedProducePurgatory and delayedFetchPurgatory). A new log's settings are the log
    manager's ``config_for(topic)``.

    Replication: the partitions this broker follows are fetched by ``fetcher_manager``'s threads;
    the ISR changes its leaders propose go through ``alter_isr`` (the broker's
    AlterPartitionManager), and ``maybe_shrink_isr`` runs on Kafka's isr-expiration schedule."""

    def __init__(self, node_id: int, metadata_cache: MetadataCache, log_manager: LogManager,
                 settings: ReplicationSettings | None = None,
                 alter_isr: Callable[[Partition, tuple[int, ...]], None] | None = None,
                 inter_broker_listener: str | None = None, metrics: MetricsRegistry | None = None) -> None:
        """``metrics``: the broker's registry, where the ReplicaManager and its purgatories
        report until ``shutdown``."""
        metrics = metrics or MetricsRegistry()
        self.node_id = node_id
        self.inter_broker_listener = inter_broker_listener  # where followers find their leaders
        self.metadata_cache = metadata_cache
        self.log_manager = log_manager
        self.settings = settings or ReplicationSettings()
        self.alter_isr = alter_isr
        # The replication throttles (quota.py): the follower's for the fetchers, the leader's for
        # FetchApis' reads of followers' fetches.
        self.quotas = ReplicationQuotas(self.settings)
        self.fetcher_manager = ReplicaFetcherManager(node_id, self.settings, self._follower_high_watermark,
                                                     quota=self.quotas.follower)
        self.controller_epoch = 0  # the newest seen
        self.broker_epoch = UNKNOWN_BROKER_EPOCH  # given by the controller at registration
        self.partitions: dict[tuple[str, int], Partition] = {}
        self.deleted: set[tuple[str, int]] = set()
        self._lock = threading.Lock()  # handler threads may apply requests concurrently
        self.produce_purgatory = DelayedOperationPurgatory("Produce", node_id, metrics)
        self.fetch_purgatory = DelayedOperationPurgatory("Fetch", node_id, metrics)
        self.isr_changes = IsrChangeCounts()
        self._metrics = metrics.register("replica-manager", replica_manager_metrics(self))
        self._nudges: dict[int, set[Hashable]] = {}  # see _nudge
        self._nudge_lock = threading.Lock()
        # Partitions followed whose leader had no address when the LeaderAndIsr came (not yet
        # registered with a controller that restarted): fetched once the metadata knows it.
        self._leader_unknown: set[tuple[str, int]] = set()
        self._leader_unknown_lock = threading.Lock()
        self.leadership_listeners: list[Callable[[str, int, bool], None]] = []
        # Partitions whose log dir is offline (Kafka's HostedPartition.Offline).
        self.offline_partitions: set[tuple[str, int]] = set()
        self.log_dir_listeners: list[Callable[[Path], None]] = []  # told of each dir gone offline
        self.on_all_log_dirs_offline: Callable[[str], None] = lambda why: None
        self.alter_log_dirs = ReplicaAlterLogDirsThread(
            log_manager, self.partitions.get, self.settings.fetch_max_bytes,
            self.settings.alter_log_dirs_io_max_bytes_per_second, self._log_moved)
        self._stopping = threading.Event()
        self._failure_handler = threading.Thread(target=self._handle_log_dir_failures,
                                                 name="LogDirFailureHandler", daemon=True)
        self.fetcher_manager.storage_io = self.storage_io

    def startup(self) -> None:
        """The ReplicaAlterLogDirsThread and the LogDirFailureHandler (Kafka's
        ReplicaManager.startup); a dir that failed while the logs loaded is handled now."""
        self.alter_log_dirs.start()
        self._failure_handler.start()

    def get_partition(self, topic: str, index: int) -> Partition:
        """The partition if this broker hosts it, else the error a data request gets: NOT_LEADER_
        OR_FOLLOWER for a partition the metadata knows (it lives elsewhere), else
        UNKNOWN_TOPIC_OR_PARTITION."""
        partition = self.partitions.get((topic, index))
        if partition is not None:
            return partition
        if (topic, index) in self.offline_partitions:
            raise ApiError(E.KAFKA_STORAGE_ERROR,
                           f"Partition {topic}-{index} is in an offline log directory")
        topic_info = self.metadata_cache.snapshot.topics.get(topic)
        if topic_info is not None and index in topic_info.partitions:
            raise not_leader(topic, index, self.node_id)
        raise ApiError(E.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.")

    def get_leader_partition(self, topic: str, index: int,
                             current_leader_epoch: int = NO_LEADER_EPOCH) -> Partition:
        partition = self.get_partition(topic, index)
        partition.check_leader(current_leader_epoch)
        return partition

    # --- fencing ------------------------------------------------------------------------------

    def _fence(self, controller_epoch: int, broker_epoch: int) -> int:
        if broker_epoch != UNKNOWN_BROKER_EPOCH and broker_epoch < self.broker_epoch:
            return E.STALE_BROKER_EPOCH
        if controller_epoch < self.controller_epoch:
            return E.STALE_CONTROLLER_EPOCH
        self.controller_epoch = controller_epoch
        return E.NONE

    # --- LeaderAndIsr -------------------------------------------------------------------------

    def become_leader_or_follower(
        self, controller_epoch: int, broker_epoch: int, states: list[tuple[str, uuid.UUID, Any]],
        leaders: dict[int, tuple[str, int]] | None = None,
    ) -> tuple[int, list[PartitionResult]]:
        """``states``: (topic, topic id, LeaderAndIsrPartitionState) for every partition;
        ``leaders``: the inter-broker address of each live leader (LeaderAndIsr's live_leaders).
        A partition met for the first time gets its log (found on disk, or created). A partition
        this broker now follows is fetched from its log end; one it leads is fetched no more."""
        changed = []
        with self._lock:
            error = self._fence(controller_epoch, broker_epoch)
            if error:
                return error, [PartitionResult(t, tid, s.partition_index, error) for t, tid, s in states]
            results = []
            for topic, topic_id, s in states:
                key = (topic, s.partition_index)
                current = self.partitions.get(key)
                if key in self.offline_partitions:
                    code = E.KAFKA_STORAGE_ERROR
                elif self.node_id not in s.replicas:
                    code = E.UNKNOWN_TOPIC_OR_PARTITION
                elif current is not None and topic_id != ZERO_UUID and current.topic_id not in (
                        ZERO_UUID, topic_id):
                    code = E.INCONSISTENT_TOPIC_ID
                elif current is not None and s.leader_epoch <= current.leader_epoch:
                    code = E.STALE_CONTROLLER_EPOCH
                else:
                    state = PartitionState(s.leader, s.leader_epoch, tuple(s.isr), tuple(s.replicas),
                                           s.partition_epoch)
                    try:
                        if current is None:
                            self.partitions[key] = self._create_partition(topic, topic_id, s.partition_index,
                                                                          state, bool(s.is_new))
                            if self.log_manager.get_future_log(*key) is not None:  # a move goes on
                                self.alter_log_dirs.add_partitions([key])
                        else:
                            current.make_leader_or_follower(state)
                        self.deleted.discard(key)
                        changed.append(key)
                        code = E.NONE
                    except OSError as e:  # a log dir that cannot hold it: that partition only
                        log.error("Cannot create the log of %s-%d: %s", topic, s.partition_index, e)
                        if isinstance(e, KafkaStorageError) and not s.is_new:
                            self.offline_partitions.add(key)  # its log may be on an offline dir
                        code = E.KAFKA_STORAGE_ERROR
                results.append(PartitionResult(topic, topic_id, s.partition_index, code))
        self._update_fetchers(changed, leaders or {})
        for key in changed:  # waiting requests of a partition whose leader changed answer now
            self._complete_delayed(key)
        self._tell_listeners(changed)
        return E.NONE, results

    def _tell_listeners(self, keys: list[tuple[str, int]]) -> None:
        """Whether this broker now leads each partition, to whoever listens (the group
        coordinator, for its offsets partitions: Kafka's onLeadershipChange)."""
        for topic, index in keys:
            partition = self.partitions.get((topic, index))
            leads = partition is not None and partition.is_leader
            for listener in self.leadership_listeners:
                try:
                    listener(topic, index, leads)
                except Exception:
                    log.exception("A leadership listener failed for %s-%d", topic, index)

    def _update_fetchers(self, changed: list[tuple[str, int]], leaders: dict[int, tuple[str, int]]) -> None:
        follow: dict[tuple[str, int], tuple[Partition, InitialFetchState]] = {}
        stop = []
        for key in changed:
            partition = self.partitions.get(key)
            if partition is None:
                continue
            address = leaders.get(partition.leader)
            if partition.is_leader or address is None:
                stop.append(key)  # led here, or no live leader to fetch from
            else:
                follow[key] = (partition, InitialFetchState(partition.leader, address, partition.leader_epoch,
                                                            partition.log.log_end_offset))
            with self._leader_unknown_lock:
                if address is None and not partition.is_leader:
                    if key not in self._leader_unknown:
                        log.info("Broker %d: %s-%d follows broker %d, whose address is not known yet",
                                 self.node_id, *key, partition.leader)
                    self._leader_unknown.add(key)
                else:
                    self._leader_unknown.discard(key)
        if stop:
            self.fetcher_manager.remove_fetcher_for_partitions(stop)
        if follow:
            self.fetcher_manager.add_fetcher_for_partitions(follow)

    def _create_partition(self, topic: str, topic_id: uuid.UUID, index: int,
                          state: PartitionState, is_new: bool = True) -> Partition:
        partition_log = self.log_manager.get_or_create(topic, index, is_new=is_new)
        return Partition(topic, index, topic_id, partition_log, self.node_id, state, self.alter_isr,
                         self.settings.lag_time_max_ms, isr_changes=self.isr_changes)

    # --- StopReplica --------------------------------------------------------------------------

    def stop_replicas(self, controller_epoch: int, broker_epoch: int,
                      partitions: list[tuple[str, int, int, bool]]) -> tuple[int, list[PartitionResult]]:
        """``partitions``: (topic, partition, leader epoch, delete). A stopped replica serves
        nothing until the next LeaderAndIsr; with delete its log goes too."""
        stopped = []
        with self._lock:
            error = self._fence(controller_epoch, broker_epoch)
            if error:
                return error, [PartitionResult(t, ZERO_UUID, p, error) for t, p, _, _ in partitions]
            results = []
            deleted = False
            for topic, index, epoch, delete in partitions:
                key = (topic, index)
                current = self.partitions.get(key)
                if key in self.offline_partitions:
                    code = E.KAFKA_STORAGE_ERROR  # as Kafka answers for an offline partition
                    if delete:
                        self.offline_partitions.discard(key)
                elif (current is not None and epoch not in (NO_EPOCH, EPOCH_DURING_DELETE)
                        and epoch <= current.leader_epoch):
                    code = E.FENCED_LEADER_EPOCH
                else:
                    self.partitions.pop(key, None)
                    stopped.append(key)
                    code = E.NONE
                    if delete:
                        self.deleted.add(key)
                        try:
                            self.log_manager.delete(topic, index, checkpoint=False)
                            deleted = True
                        except OSError as e:
                            log.error("Cannot delete the log of %s-%d: %s", topic, index, e)
                            code = E.KAFKA_STORAGE_ERROR
                results.append(PartitionResult(topic, ZERO_UUID, index, code))
            if deleted:  # once for the whole request, as Kafka's stopPartitions
                try:
                    self.log_manager.checkpoint_dirs()
                except OSError as e:
                    log.error("Cannot checkpoint the log dirs after deleting logs: %s", e)
        if stopped:
            self.fetcher_manager.remove_fetcher_for_partitions(stopped)
            self.alter_log_dirs.remove_partitions(stopped)
        for key in stopped:
            self._complete_delayed(key)
        self._tell_listeners(stopped)
        return E.NONE, results

    def _complete_delayed(self, key: tuple[str, int]) -> None:
        self.produce_purgatory.check_and_complete(partition_key(*key))
        self.fetch_purgatory.check_and_complete(partition_key(*key))

    # --- the data path ------------------------------------------------------------------------

    def append_to_leader(self, topic: str, index: int, records: bytearray | memoryview,
                         required_acks: int = 1,
                         origin: AppendOrigin = AppendOrigin.CLIENT) -> tuple[LogAppendInfo, Partition]:
        """Append validated batches to a partition this broker leads (raises ApiError otherwise,
        or the log's refusal; NOT_ENOUGH_REPLICAS for acks=all with the ISR below
        min.insync.replicas); ``origin``: a client, or a coordinator (transaction markers, its own
        records). Fetches waiting on it are checked (read_committed ones too: a marker moves the
        last stable offset once the high watermark covers it, here if it did at once, else at
        the high watermark's move), and acks=all produces if the high watermark moved. The
        offsets given, and the partition (for its log start offset)."""
        partition = self.get_partition(topic, index)
        with self.storage_io(partition, "appending to"):
            info = partition.append_records_to_leader(records, required_acks, origin)
        key = partition_key(topic, index)
        self.fetch_purgatory.check_and_complete(key)
        for replica in partition.followers_yet_to_fetch():
            self._nudge(replica, key)
        if partition.log.high_watermark > info.last_offset:
            self.produce_purgatory.check_and_complete(key)
        return info, partition

    # A follower's fetch that waits here may have been sent before the follower knew it follows
    # a partition (a new topic, a new leader): the partition is only asked for in its next fetch,
    # after replica.fetch.wait.max.ms, and an acks=all produce to it would wait that long (Kafka
    # lets it wait). So an append to a partition some follower has not fetched yet in this
    # leadership "nudges" that follower: its next fetch here that leaves such a partition out is
    # answered at once, whether it is waiting already or still on its way. One nudge answers one
    # fetch, so a follower that never asks for the partition fetches at most once per append.

    def _nudge(self, replica_id: int, key: Hashable) -> None:
        with self._nudge_lock:
            self._nudges.setdefault(replica_id, set()).add(key)
        self.fetch_purgatory.check_and_complete(follower_key(replica_id))

    def nudged(self, replica_id: int, asked: frozenset) -> bool:
        """Whether a fetch of ``replica_id`` asking for ``asked`` must be answered now (and the
        nudges it answers are used up)."""
        if not self._nudges:  # the usual case, checked without the lock on every try
            return False
        with self._nudge_lock:
            pending = self._nudges.get(replica_id)
            if not pending or pending <= asked:
                return False
            del self._nudges[replica_id]
            return True

    def follower_fetched(self, partition: Partition, replica_id: int, fetch_offset: int) -> None:
        """A follower's fetch tells its log end offset (Kafka's updateFollowerFetchState); the
        high watermark may move, answering acks=all produces, and the follower may rejoin the ISR."""
        if self._nudges:
            with self._nudge_lock:
                pending = self._nudges.get(replica_id)
                if pending is not None:
                    pending.discard(partition_key(partition.topic, partition.index))
                    if not pending:
                        del self._nudges[replica_id]
        if partition.update_follower_fetch_state(replica_id, fetch_offset):
            self.high_watermark_moved(partition.topic, partition.index)

    def high_watermark_moved(self, topic: str, index: int) -> None:
        """Replication moved a leader's high watermark, and with it maybe the last stable offset:
        waiting produces and fetches (read_committed ones included) may answer."""
        self._complete_delayed((topic, index))

    def _follower_high_watermark(self, partition: Partition) -> None:
        # A follower's fetch moved its log end and high watermark (and last stable offset): its
        # consumers may read on.
        self.fetch_purgatory.check_and_complete(partition_key(partition.topic, partition.index))

    def alter_partition_answered(self, partition: Partition, moved: bool) -> None:
        """The controller answered an ISR change (the AlterPartitionManager's callback)."""
        if moved:
            self.high_watermark_moved(partition.topic, partition.index)
        else:  # a smaller ISR may fail waiting acks=all produces (NOT_ENOUGH_REPLICAS_AFTER_APPEND)
            self.produce_purgatory.check_and_complete(partition_key(partition.topic, partition.index))

    def maybe_shrink_isr(self) -> None:
        """Kafka's isr-expiration task: every leader proposes its ISR without the followers that
        have not caught up for replica.lag.time.max.ms."""
        for partition in list(self.partitions.values()):
            if partition.is_leader:
                out = partition.out_of_sync_replicas()
                if out and partition.maybe_shrink_isr():
                    log.info("Broker %d: %s-%d: shrinking the ISR from %s: %s not caught up for %d ms",
                             self.node_id, partition.topic, partition.index, list(partition.isr), list(out),
                             self.settings.lag_time_max_ms)

    def shutdown(self, timeout: float) -> None:
        self._metrics.close()
        self._stopping.set()
        self.log_manager.failure_channel.wake()  # its handler's wait ends now, not at its timeout
        self.alter_log_dirs.shutdown(timeout)
        if self._failure_handler.is_alive():
            self._failure_handler.join(timeout)
        self.fetcher_manager.shutdown(timeout)
        self.produce_purgatory.shutdown(timeout)
        self.fetch_purgatory.shutdown(timeout)

    # --- UpdateMetadata -----------------------------------------------------------------------

    def update_metadata(self, request: Any, version: int) -> int:
        with self._lock:
            error = self._fence(request.controller_epoch, request.broker_epoch)
            if error:
                return error
            self.metadata_cache.update_metadata(request, version)
        self._follow_leaders_now_known()
        return E.NONE

    def _follow_leaders_now_known(self) -> None:
        """Start fetching the partitions whose leader had no address, for those whose leader the
        metadata now lists (Kafka's brokers learn leaders' endpoints from the metadata as well)."""
        if not self._leader_unknown or self.inter_broker_listener is None:
            return  # the usual case, on every UpdateMetadata
        brokers = self.metadata_cache.snapshot.brokers
        with self._lock:  # not while a LeaderAndIsr changes the partitions
            with self._leader_unknown_lock:
                waiting = list(self._leader_unknown)
            leaders: dict[int, tuple[str, int]] = {}
            known = []
            for key in waiting:
                partition = self.partitions.get(key)
                info = brokers.get(partition.leader) if partition is not None else None
                endpoint = info.endpoint(self.inter_broker_listener) if info is not None else None
                if partition is not None and endpoint is not None:
                    leaders[partition.leader] = (endpoint.host, endpoint.port)
                    known.append(key)
            if known:
                self._update_fetchers(known, leaders)

    # --- log dirs: failures (Kafka's handleLogDirFailure) ------------------------------------------

    def storage_io(self, partition: Partition, what: str) -> StorageIo:
        """Work on a partition's log files: an I/O error takes its dir offline (the failure
        channel) and is answered KAFKA_STORAGE_ERROR."""
        return StorageIo(self.log_manager.io(partition.log.dir.parent,
                                             f"{what} {partition.topic}-{partition.index}"))

    def _handle_log_dir_failures(self) -> None:
        channel = self.log_manager.failure_channel
        while not self._stopping.is_set():
            path = channel.take_next_offline_log_dir(timeout=0.2)
            if path is None:
                continue
            try:
                self.handle_log_dir_failure(path)
            except Exception:
                log.exception("Broker %d: handling the failure of log dir %s failed", self.node_id, path)

    def handle_log_dir_failure(self, path: Path) -> None:
        """Kafka's ReplicaManager.handleLogDirFailure for a dir gone offline."""
        with self._lock:
            offline = [key for key, p in self.partitions.items() if p.log.dir.parent == path]
            futures = [(key.topic, key.partition) for key in self.log_manager.all_future_logs()
                       if self.log_manager.dir_of(*key, future=True) == path]
            self.fetcher_manager.remove_fetcher_for_partitions(offline)
            self.alter_log_dirs.remove_partitions(offline + futures)
            for key in offline:
                del self.partitions[key]
                self.offline_partitions.add(key)
            self.log_manager.handle_log_dir_failure(path)
        log.warning("Broker %d stopped fetcher for partitions %s and stopped moving logs for partitions %s "
                    "because they are in the failed log directory %s.", self.node_id,
                    ",".join(f"{t}-{i}" for t, i in sorted(offline)),
                    ",".join(f"{t}-{i}" for t, i in sorted(futures)), path)
        for key in offline:  # waiting produces and fetches answer (KAFKA_STORAGE_ERROR)
            self._complete_delayed(key)
        self._tell_listeners(offline)
        if not self.log_manager.online_dirs:
            why = (f"Shutdown broker because all log dirs in "
                   f"{', '.join(map(str, self.log_manager.log_dirs))} have failed")
            log.error("Broker %d: %s", self.node_id, why)
            self.on_all_log_dirs_offline(why)
            return
        for listener in self.log_dir_listeners:
            listener(path)

    # --- log dirs: AlterReplicaLogDirs ------------------------------------------------------------

    def alter_replica_log_dirs(self, destinations: dict[tuple[str, int], str]) -> dict[tuple[str, int], int]:
        """Kafka's ReplicaManager.alterReplicaLogDirs: for each partition, the dir its replica is
        to move to; the error code of each."""
        results = {}
        lm = self.log_manager
        with self._lock:
            for key, destination in destinations.items():
                topic, index = key
                path = lm.find_dir(destination)
                if len(future_dir_name(topic, index, uuid.uuid4().hex)) > 255:
                    code = E.INVALID_TOPIC_EXCEPTION  # the future log's name would be too long
                elif path is None:
                    code = E.BY_NAME["LOG_DIR_NOT_FOUND"].code
                elif not lm.is_online(path):
                    code = E.KAFKA_STORAGE_ERROR
                elif key in self.offline_partitions:
                    code = E.KAFKA_STORAGE_ERROR
                else:
                    code = self._alter_log_dir(key, path)
                if code != E.NONE:
                    log.warning("Broker %d: unable to alter the log dir of %s-%d to %s: %s", self.node_id,
                                topic, index, destination, E.BY_CODE[code].name)
                results[key] = code
        return results

    def _alter_log_dir(self, key: tuple[str, int], path: Path) -> int:
        lm = self.log_manager
        future_dir = lm.dir_of(*key, future=True)
        if future_dir is not None and future_dir != path:  # another destination: that move stops
            self.alter_log_dirs.remove_partitions([key])
            lm.abort_future(*key)
        partition = self.partitions.get(key)
        if partition is None:
            # Not hosted (yet): the log is created there when the partition comes; Kafka answers
            # REPLICA_NOT_AVAILABLE meanwhile.
            lm.preferred_dirs[LogTopicPartition(*key)] = path
            return E.REPLICA_NOT_AVAILABLE
        if lm.dir_of(*key) == path:
            return E.NONE  # already there
        if lm.offline_dirs:
            return E.KAFKA_STORAGE_ERROR  # Kafka creates no future log while a dir is offline
        try:
            lm.get_or_create_future(*key, path)
        except KafkaStorageError:
            return E.KAFKA_STORAGE_ERROR
        self.alter_log_dirs.add_partitions([key])
        return E.NONE

    def _log_moved(self, key: tuple[str, int]) -> None:
        """The ReplicaAlterLogDirsThread swapped a partition's future log in."""
        self._complete_delayed(key)  # fetches waiting on the old log look at the new one


class StorageIo:
    """ReplicaManager.storage_io's context: the log dir's (LogManager.io), with a
    KafkaStorageError, raised by it or inside, answered as KAFKA_STORAGE_ERROR. A class rather than
    a generator: every append and read enters one."""

    __slots__ = ("_io",)

    def __init__(self, io: DirIo) -> None:
        self._io = io

    def __enter__(self) -> None:
        try:
            self._io.__enter__()
        except KafkaStorageError as e:
            raise ApiError(E.KAFKA_STORAGE_ERROR, str(e)) from e

    def __exit__(self, typ: type[BaseException] | None, exc: BaseException | None,
                 tb: object) -> Literal[False]:
        try:
            self._io.__exit__(typ, exc, tb)
        except KafkaStorageError as e:
            raise ApiError(E.KAFKA_STORAGE_ERROR, str(e)) from e
        if isinstance(exc, KafkaStorageError):
            raise ApiError(E.KAFKA_STORAGE_ERROR, str(exc)) from exc
        return False
