"""Fetch: whole record batches from the partitions this broker leads, for consumers (below the
high watermark) and follower replicas (up to the log end) — Kafka's KafkaApis.handleFetchRequest,
ReplicaManager.fetchMessages and DelayedFetch.

Full fetches only: every response lists every partition requested and carries session id 0,
which declines a fetch session (clients then keep sending full fetches, as librdkafka always
does). Limits are Kafka's (KIP-74): ``partition_max_bytes`` per partition and ``max_bytes`` for
the response are soft, the first batch found is returned whole even if larger, so a consumer
always makes progress. Records are not read here: the response carries file slices of the
segments that the Processor sends with ``sendfile``. A fetch that finds fewer than ``min_bytes``
waits in the fetch purgatory (never on a handler thread) until appends bring enough, or
``max_wait_ms`` passes. Versions 0-3 (message formats 0 and 1) are not served, as in Kafka 4.x (the
connection closes, server/apis.py); v18's tagged high watermark of the follower (KIP-1166) is
read and not used, as Kafka 4.1's brokers (only its KRaft quorum uses it).

A read_committed consumer (isolation level 1) reads up to the last stable offset (the log bounds
the read, so a waiting fetch counts only those bytes too) and is told the aborted transactions
overlapping what it was sent (producer id and first offset, Kafka's
collectAbortedTransactions up to the offset after the last batch sent): it drops their records.

A follower's fetch of a partition whose leader-side replication throttle applies to it (a
``leader.replication.throttled.replicas`` replica of this broker, the follower not in the ISR:
replication/quota.py) reads nothing while the leader's quota is exceeded; what it reads is
recorded in the quota.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any, NamedTuple

from kafkalite.common.errors import ApiError
from kafkalite.common.file_slice import FileSlice
from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import fetch
from kafkalite.storage.log import FetchIsolation, Log

from ..purgatory import DelayedOperation
from ..replication.quota import is_throttled
from ..replication.replica_manager import ReplicaManager, follower_key, partition_key
from ..responses import respond
from ..topic_metrics import BrokerTopicStats
from .raft import RaftApis

# _leader_throttled's answers (0: not a throttled replica).
COUNTED, THROTTLED = 1, 2

SendResponse = Callable[[Response], None]
R = fetch.RESPONSE
TopicData = R["responses"]
PartitionData = TopicData["partitions"]
AbortedTransaction = PartitionData["aborted_transactions"]

READ_COMMITTED = 1


class FetchInfo(NamedTuple):
    topic: str | None  # None: a topic id this broker does not know
    topic_id: uuid.UUID
    partition: int
    fetch_offset: int
    max_bytes: int
    current_leader_epoch: int
    last_fetched_epoch: int = -1


class FetchParams(NamedTuple):
    version: int
    replica_id: int
    isolation: FetchIsolation
    max_bytes: int
    min_bytes: int
    max_wait_ms: int

    @property
    def is_from_follower(self) -> bool:
        return self.replica_id >= 0


class FetchApis:
    def __init__(self, replica_manager: ReplicaManager, send_response: SendResponse,
                 topic_stats: BrokerTopicStats, raft: RaftApis | None = None) -> None:
        """``raft``: the quorum's apis (handlers/raft.py), which take the Fetches of
        __cluster_metadata on a controller listener."""
        self.replica_manager = replica_manager
        self.send_response = send_response
        self.topic_stats = topic_stats
        self.raft = raft

    def handle_fetch(self, request: Request) -> Response | None:
        if self.raft is not None and self.raft.serves_fetch(request):
            return self.raft.fetch(request)
        req, version = request.body, request.api_version
        replica_id = req.replica_state.replica_id if version >= 15 else req.replica_id
        if replica_id >= 0:
            isolation = FetchIsolation.LOG_END
        elif req.isolation_level == READ_COMMITTED:
            isolation = FetchIsolation.TXN_COMMITTED
        else:
            isolation = FetchIsolation.HIGH_WATERMARK
        if version >= 7 and req.session_id != 0:
            # No session was ever handed out (responses carry session id 0).
            return respond(request, R(throttle_time_ms=0, error_code=E.FETCH_SESSION_ID_NOT_FOUND,
                                      session_id=0, responses=[]))
        max_bytes = req.max_bytes
        quotas = request.quotas
        if replica_id < 0 and quotas is not None and quotas.fetch.enabled and not quotas.exempt(request):
            # Kafka's getMaxValueInQuotaWindow: at most what the quota allows in its window
            max_bytes = min(max_bytes, quotas.max_value_in_window(quotas.fetch, request))
        params = FetchParams(version, replica_id, isolation, max_bytes, req.min_bytes, req.max_wait_ms)
        infos = self._fetch_infos(req, version)
        datas, readable, done = self.read(infos, params)
        self.topic_stats.fetch_read(infos, datas)
        if done or params.max_wait_ms <= 0 or readable >= params.min_bytes:
            self.topic_stats.fetch_answered(request, params.is_from_follower, infos, datas)
            return respond(request, self._quota_checked(request, params, infos, datas))
        keys = [partition_key(i.topic, i.partition) for i in infos if i.topic is not None]
        operation = DelayedFetch(request, infos, params, self, frozenset(keys))
        if params.is_from_follower:  # see ReplicaManager._nudge
            keys.append(follower_key(params.replica_id))
        self.replica_manager.fetch_purgatory.try_complete_else_watch(operation, keys)
        return None

    def _fetch_infos(self, req: Any, version: int) -> list[FetchInfo]:
        infos = []
        snap = self.replica_manager.metadata_cache.snapshot if version >= 13 else None
        for t in req.topics:
            if snap is not None:
                info = snap.topic_by_id(t.topic_id)
                name, topic_id = (info.name if info is not None else None), t.topic_id
            else:
                name, topic_id = t.topic, uuid.UUID(int=0)
            for p in t.partitions:
                infos.append(FetchInfo(name, topic_id, p.partition, p.fetch_offset, p.partition_max_bytes,
                                       p.current_leader_epoch if version >= 9 else -1,
                                       p.last_fetched_epoch if version >= 12 else -1))
        return infos

    def read(self, infos: list[FetchInfo], params: FetchParams,
             from_purgatory: bool = False) -> tuple[list[Any], int, bool]:
        """Each partition's data (Kafka's readFromLog), the bytes found, and whether the fetch
        must answer now whatever min_bytes says (an error in some partition). A follower's fetch
        offsets are its log end, taken when the fetch arrives, not again on each read of it
        while it waits (``from_purgatory``), as Kafka's fetchMessages and DelayedFetch."""
        rm = self.replica_manager
        budget = params.max_bytes
        readable = 0
        errors = False
        datas = []
        for info in infos:
            if info.topic is None:
                datas.append(_error(info, E.UNKNOWN_TOPIC_ID))
                errors = True
                continue
            try:
                partition = rm.get_partition(info.topic, info.partition)
                if info.last_fetched_epoch >= 0:
                    partition.check_leader(info.current_leader_epoch)
                    diverging = partition.diverging_epoch(info.last_fetched_epoch, info.fetch_offset)
                    if diverging is not None:
                        # The fetcher's log leaves ours: it truncates first (KIP-595), nothing read.
                        datas.append(self._diverging(info, partition, *diverging))
                        errors = True  # answered now, whatever min_bytes says
                        continue
                throttled = params.is_from_follower and self._leader_throttled(partition, params.replica_id)
                # no records while the leader's quota is exceeded
                limit = 0 if throttled == THROTTLED else min(info.max_bytes, max(budget, 0))
                with rm.storage_io(partition, "reading from"):
                    result = partition.read(info.fetch_offset, limit, params.isolation,
                                            min_one_message=readable == 0 and throttled != THROTTLED,
                                            current_leader_epoch=info.current_leader_epoch)
            except ApiError as e:
                datas.append(_error(info, e.code))
                errors = True
                continue
            size = result.records.size
            readable += size
            budget -= size
            if throttled == COUNTED and size:
                rm.quotas.leader.record(size)
            if params.is_from_follower and not from_purgatory:
                rm.follower_fetched(partition, params.replica_id, info.fetch_offset)
            datas.append(PartitionData(
                partition_index=info.partition, error_code=E.NONE, high_watermark=result.high_watermark,
                last_stable_offset=result.last_stable_offset, log_start_offset=result.log_start_offset,
                aborted_transactions=None if params.isolation is not FetchIsolation.TXN_COMMITTED
                else _aborted(partition.log, info.fetch_offset, result.records),
                preferred_read_replica=-1,
                # An empty partition has zero-length records, not null (librdkafka rejects null).
                records=result.records if size else b""))
        return datas, readable, errors

    def at_log_end(self, infos: list[FetchInfo]) -> bool:
        """Whether a waiting follower's fetch would read nothing and answer no error: each
        partition still led here in the epoch the fetch named, its log end the fetch offset.
        Kafka's DelayedFetch.tryComplete compares offsets too, without reading; a waiting
        follower is otherwise tried again on every high watermark move (the other followers'
        fetches) as well as on appends."""
        partitions = self.replica_manager.partitions
        for info in infos:
            partition = partitions.get((info.topic, info.partition)) if info.topic is not None else None
            if (partition is None or not partition.is_leader or info.current_leader_epoch < 0
                    or partition.leader_epoch != info.current_leader_epoch
                    or partition.log.log_end_offset != info.fetch_offset):
                return False
        return True

    def _leader_throttled(self, partition: Any, replica_id: int) -> int:
        """Kafka's shouldLeaderThrottle for a follower's fetch of a partition led here: THROTTLED
        (read nothing), COUNTED (a throttled replica not in sync: what it reads is recorded) or 0."""
        quota = self.replica_manager.quotas.leader
        if quota.unlimited or replica_id in partition.isr:
            return 0
        throttled = partition.log.config.leader_replication_throttled_replicas
        if not is_throttled(throttled, partition.index, self.replica_manager.node_id):
            return 0
        return THROTTLED if quota.should_throttle(throttled, partition.index, self.replica_manager.node_id,
                                                  False) else COUNTED

    @staticmethod
    def _diverging(info: FetchInfo, partition: Any, epoch: int, end_offset: int) -> Any:
        log = partition.log
        return PartitionData(
            partition_index=info.partition, error_code=E.NONE, high_watermark=log.high_watermark,
            last_stable_offset=log.last_stable_offset, log_start_offset=log.log_start_offset,
            diverging_epoch=PartitionData["diverging_epoch"](epoch=epoch, end_offset=end_offset),
            aborted_transactions=None, preferred_read_replica=-1, records=b"")

    def _quota_checked(self, request: Request, params: FetchParams, infos: list[FetchInfo],
                       datas: list[Any]) -> Any:
        """The response, after the consumer_byte_rate quota (Kafka's KafkaApis.handleFetchRequest):
        the bytes returned are recorded; over the quota they are taken back and the response is
        empty, with the throttle time (the connection is muted for it when it is sent)."""
        quotas = request.quotas
        if quotas is None or params.is_from_follower or quotas.exempt(request) or not quotas.fetch.enabled:
            return self._response(infos, datas)
        size = sum(_size(d.records) for d in datas)
        user, client_id = quotas.who(request)
        ms = quotas.fetch.record(user, client_id, size)
        if ms <= 0:
            return self._response(infos, datas)
        quotas.fetch.unrecord(user, client_id, size)
        quotas.fetch.throttled(user, client_id, ms)
        return R(throttle_time_ms=ms, error_code=E.NONE, session_id=0, responses=[])

    def _response(self, infos: list[FetchInfo], datas: list[Any]) -> Any:
        topics: list[Any] = []
        for info, data in zip(infos, datas, strict=True):
            # Consecutive partitions of one topic share its entry, as requested.
            if topics and (topics[-1].topic, topics[-1].topic_id) == (info.topic or "", info.topic_id):
                topics[-1].partitions.append(data)
            else:
                topics.append(TopicData(topic=info.topic or "", topic_id=info.topic_id, partitions=[data]))
        return R(throttle_time_ms=0, error_code=E.NONE, session_id=0, responses=topics)


def _aborted(log: Log, fetch_offset: int, records: FileSlice) -> list[Any]:
    """The aborted transactions a read_committed fetch of ``records`` from ``fetch_offset`` is told
    of: those overlapping [fetch_offset, the offset after the last batch sent); none when nothing
    is sent (Kafka's LocalLog.addAbortedTransactions, emptyFetchDataInfo)."""
    if not records.size or not log.has_aborted_transactions_from(fetch_offset):
        return []  # the common case: no transaction aborted in what the fetch reads, or after it
    upper = log.fetch_upper_bound_offset(records)
    if upper is None:  # the segment went meanwhile: what the log holds up to the last stable offset
        upper = log.last_stable_offset
    return [AbortedTransaction(producer_id=txn.producer_id, first_offset=txn.first_offset)
            for txn in log.collect_aborted_transactions(fetch_offset, upper)]


def _error(info: FetchInfo, code: int) -> Any:
    return PartitionData(partition_index=info.partition, error_code=code, high_watermark=-1,
                         last_stable_offset=-1, log_start_offset=-1, aborted_transactions=None,
                         preferred_read_replica=-1, records=b"")


class DelayedFetch(DelayedOperation):
    """A fetch waiting for ``min_bytes`` (Kafka's DelayedFetch): checked on every append to (and
    high watermark move of) its partitions; answered with what there is after ``max_wait_ms``."""

    def __init__(self, request: Request, infos: list[FetchInfo], params: FetchParams,
                 apis: FetchApis, partitions: frozenset = frozenset()) -> None:
        super().__init__(params.max_wait_ms)
        self.request, self.infos, self.params, self.apis = request, infos, params, apis
        self.partitions = partitions  # the partition keys it asks for
        self._datas: list[Any] | None = None  # the read that completed it, answered as it is

    def try_complete(self) -> bool:
        params = self.params
        if params.is_from_follower and self.apis.replica_manager.nudged(params.replica_id, self.partitions):
            return self.force_complete()  # a partition it left out has data (ReplicaManager._nudge)
        if params.is_from_follower and self.apis.at_log_end(self.infos):
            return False  # nothing new to read, nothing to answer: no read (appends wake it)
        datas, readable, done = self.apis.read(self.infos, self.params, from_purgatory=True)
        if done or readable >= self.params.min_bytes:
            self._datas = datas
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        datas = self._datas
        if datas is None:  # expired (or forced): what there is now
            datas, _, _ = self.apis.read(self.infos, self.params, from_purgatory=True)
        self.apis.topic_stats.fetch_answered(self.request, self.params.is_from_follower, self.infos, datas)
        self.apis.send_response(respond(self.request, self.apis._quota_checked(self.request, self.params,
                                                                                self.infos, datas)))

    def on_expiration(self) -> None:
        pass


def _size(records: Any) -> int:
    """Bytes of a partition's records: a FileSlice's size, or the bytes'."""
    if records is None:
        return 0
    size = getattr(records, "size", None)
    return int(size) if size is not None else len(records)
