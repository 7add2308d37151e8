"""What each component reports, as metric sources for the broker's MetricsRegistry (registry.py):
the component registers ``purgatory_metrics(self)`` (and the like) when it is built, and closes
the registration when it shuts down.

The metrics package sits below the components (network, controller, server), so each source reads
its component through a Protocol of what it needs: mypy checks the component against it where it
registers. Names follow Kafka's JMX names the way the Prometheus JMX exporter spells them
(collector.py's docstring); docs/metrics.md lists each with its JMX name.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from typing import TYPE_CHECKING, NamedTuple, Protocol

from kafkalite.protocol.api_keys import api_name
from kafkalite.protocol.error_codes import for_code

if TYPE_CHECKING:  # loaded on first use (kafkalite/metrics/prometheus.py)
    from prometheus_client.core import Metric

from .prometheus import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, SummaryMetricFamily
from .registry import MetricSource
from .request_metrics import SIZE_BUCKETS, SIZES, TIME_BUCKETS, TIMINGS, RequestMetrics, bucket_bounds, merged

# What each of Kafka's BrokerTopicMetrics meters counts here (kafkalite/server/topic_metrics.py).
BROKER_TOPIC_METRICS = {
    "MessagesInPerSec": "Records appended to the topic's partitions this broker leads",
    "BytesInPerSec": "Bytes of the record batches appended",
    "BytesOutPerSec": "Record bytes sent to consumers in Fetch responses",
    "BytesRejectedPerSec": "Bytes of record batches refused as larger than max.message.bytes",
    "FailedProduceRequestsPerSec": "Produce partitions that failed unexpectedly (not for a leader "
                                   "move, a size limit, a corrupt batch or a storage error)",
    "FailedFetchRequestsPerSec": "Fetch partitions that failed unexpectedly (not for a leader move, "
                                 "a fenced epoch, an offset out of range or a storage error)",
    "TotalProduceRequestsPerSec": "Partitions of Produce requests, appended or not",
    "TotalFetchRequestsPerSec": "Partitions of Fetch requests, consumers' and followers'",
}
# Kafka's Log gauges (kafka.log:type=Log), in the order replica_manager_metrics reads them.
LOG_METRICS = (
    ("Size", "Bytes of the partition's log, every segment"),
    ("NumLogSegments", "Segments of the partition's log"),
    ("LogStartOffset", "First offset of the partition's log"),
    ("LogEndOffset", "Offset the partition's next record gets"),
)


class Fractions:
    """Shares of time (0 to 1) over the time since the previous read of the same name, as Kafka's
    idle and blocked meters are rates: the first read is over the time since this was made."""

    def __init__(self) -> None:
        self._started_ns = time.monotonic_ns()
        self._last: dict[str, tuple[int, int]] = {}  # name -> (monotonic ns, cumulative ns)

    def __call__(self, name: str, cumulative_ns: int, threads: int = 1) -> float:
        now = time.monotonic_ns()
        then, before = self._last.get(name, (self._started_ns, 0))
        self._last[name] = (now, cumulative_ns)
        span = (now - then) * max(threads, 1)
        return min(max((cumulative_ns - before) / span, 0.0), 1.0) if span > 0 else 0.0


# --- purgatories (kafkalite/server/purgatory.py) -----------------------------------------------

class PurgatoryView(Protocol):
    @property
    def name(self) -> str: ...

    def watched(self) -> int: ...

    def delayed(self) -> int: ...


def purgatory_metrics(purgatory: PurgatoryView) -> MetricSource:
    """Kafka's DelayedOperationPurgatory gauges, labelled with the purgatory's name."""

    def collect() -> Iterator[Metric]:
        size = GaugeMetricFamily("kafka_server_delayedoperationpurgatory_purgatorysize",
                                 "Entries in the purgatory's watch lists (PurgatorySize).",
                                 labels=["delayedOperation"])
        size.add_metric([purgatory.name], purgatory.watched())
        yield size
        delayed = GaugeMetricFamily("kafka_server_delayedoperationpurgatory_numdelayedoperations",
                                    "Operations waiting for completion or their timeout "
                                    "(NumDelayedOperations).", labels=["delayedOperation"])
        delayed.add_metric([purgatory.name], purgatory.delayed())
        yield delayed

    return collect


# --- the network (kafkalite/network/) ----------------------------------------------------------

class RequestChannelView(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def request_queue_size(self) -> int: ...

    @property
    def response_queue_size(self) -> int: ...


def request_channel_metrics(channel: RequestChannelView) -> MetricSource:
    """Kafka's RequestChannel queue sizes, labelled with the plane."""

    def collect() -> Iterator[Metric]:
        g = GaugeMetricFamily("kafka_network_requestchannel_requestqueuesize",
                              "Requests waiting for a handler (RequestQueueSize).", labels=["plane"])
        g.add_metric([channel.name], channel.request_queue_size)
        yield g
        r = GaugeMetricFamily("kafka_network_requestchannel_responsequeuesize",
                              "Responses waiting for their Processor (ResponseQueueSize).", labels=["plane"])
        r.add_metric([channel.name], channel.response_queue_size)
        yield r

    return collect


class ProcessorView(Protocol):
    @property
    def id(self) -> int: ...

    @property
    def listener(self) -> str: ...

    @property
    def idle_ns_total(self) -> int: ...

    @property
    def connections(self) -> Sized: ...

    @property
    def connections_created(self) -> int: ...

    @property
    def connections_closed(self) -> int: ...

    @property
    def successful_authentications(self) -> int: ...

    @property
    def failed_authentications(self) -> int: ...

    @property
    def successful_reauthentications(self) -> int: ...

    @property
    def expired_connections_killed(self) -> int: ...

    @property
    def request_metrics(self) -> RequestMetrics: ...


class AcceptorView(Protocol):
    @property
    def blocked_ns(self) -> int: ...


class MemoryPoolView(Protocol):
    @property
    def available(self) -> int: ...

    @property
    def used(self) -> int: ...

    @property
    def depleted_ns(self) -> int: ...


class SocketServerView(Protocol):
    @property
    def processors(self) -> Sequence[ProcessorView]: ...

    @property
    def acceptors(self) -> Mapping[str, AcceptorView]: ...

    @property
    def memory_pool(self) -> MemoryPoolView | None: ...

    @property
    def retired_processors(self) -> Sequence[ProcessorView]: ...


def socket_server_metrics(ss: SocketServerView) -> MetricSource:
    """The Processors', Acceptors' and memory pool's metrics, and the request metrics the
    Processors record (each its own shard, summed here)."""
    fractions = Fractions()

    def collect() -> Iterator[Metric]:
        yield from _network(ss, fractions)
        # Processors removed by a lower num.network.threads leave their own series, but the
        # requests they completed still count.
        yield from _requests([*ss.processors, *ss.retired_processors])

    return collect


def _network(ss: SocketServerView, fractions: Fractions) -> Iterator[Metric]:
    per = GaugeMetricFamily("kafka_network_processor_idlepercent",
                            "Fraction of time each Processor waited in its poll (IdlePercent).",
                            labels=["networkProcessor", "listener"])
    idle_sum, n = 0.0, 0
    count = GaugeMetricFamily("kafka_server_socket_server_metrics_connection_count",
                              "Open connections (connection-count).",
                              labels=["listener", "networkProcessor"])
    created = CounterMetricFamily("kafka_server_socket_server_metrics_connection_creation",
                                  "Connections registered (connection-creation-total).",
                                  labels=["listener", "networkProcessor"])
    closed = CounterMetricFamily("kafka_server_socket_server_metrics_connection_close",
                                 "Connections closed (connection-close-total).",
                                 labels=["listener", "networkProcessor"])
    auth_ok = CounterMetricFamily("kafka_server_socket_server_metrics_successful_authentication",
                                  "SASL authentications that succeeded "
                                  "(successful-authentication-total).",
                                  labels=["listener", "networkProcessor"])
    auth_failed = CounterMetricFamily("kafka_server_socket_server_metrics_failed_authentication",
                                      "SSL handshakes and SASL authentications that failed "
                                      "(failed-authentication-total).",
                                      labels=["listener", "networkProcessor"])
    reauth_ok = CounterMetricFamily("kafka_server_socket_server_metrics_successful_reauthentication",
                                    "SASL re-authentications that succeeded (KIP-368, "
                                    "successful-reauthentication-total).",
                                    labels=["listener", "networkProcessor"])
    expired = GaugeMetricFamily("kafka_server_socket_server_metrics_expired_connections_killed_count",
                                "Connections closed because their SASL session expired without "
                                "re-authentication (KIP-368, expired-connections-killed-count).",
                                labels=["listener", "networkProcessor"])
    for p in list(ss.processors):
        pct = fractions(f"processor-{p.id}", p.idle_ns_total)
        per.add_metric([str(p.id), p.listener], pct)
        idle_sum += pct
        n += 1
        labels = [p.listener, str(p.id)]
        count.add_metric(labels, len(p.connections))
        created.add_metric(labels, p.connections_created)
        closed.add_metric(labels, p.connections_closed)
        auth_ok.add_metric(labels, p.successful_authentications)
        auth_failed.add_metric(labels, p.failed_authentications)
        reauth_ok.add_metric(labels, p.successful_reauthentications)
        expired.add_metric(labels, p.expired_connections_killed)
    yield per
    yield GaugeMetricFamily("kafka_network_socketserver_networkprocessoravgidlepercent",
                            "Mean of the Processors' idle fractions (NetworkProcessorAvgIdlePercent).",
                            value=idle_sum / n if n else 0.0)
    yield count
    yield created
    yield closed
    yield auth_ok
    yield auth_failed
    yield reauth_ok
    yield expired
    pool = ss.memory_pool
    if pool is not None:  # queued.max.request.bytes set
        yield GaugeMetricFamily("kafka_network_socketserver_memorypoolavailable",
                                "Bytes left in the request memory pool (MemoryPoolAvailable).",
                                value=pool.available)
        yield GaugeMetricFamily("kafka_network_socketserver_memorypoolused",
                                "Bytes of requests read and not yet parsed (MemoryPoolUsed).",
                                value=pool.used)
        yield CounterMetricFamily("kafka_network_socketserver_memorypooldepletedtime",
                                  "Seconds the pool was empty, reads stopped "
                                  "(MemoryPoolDepletedTimeTotal, in ms there).",
                                  value=pool.depleted_ns / 1e9)
    blocked = GaugeMetricFamily("kafka_network_acceptor_acceptorblockedpercent",
                                "Fraction of time each Acceptor waited to hand over a connection "
                                "or for a slot (AcceptorBlockedPercent).", labels=["listener"])
    for name, a in list(ss.acceptors.items()):
        blocked.add_metric([name], fractions(f"acceptor-{name}", a.blocked_ns))
    yield blocked


def _requests(processors: Iterable[ProcessorView]) -> Iterator[Metric]:
    stats = merged(p.request_metrics for p in list(processors))
    requests = CounterMetricFamily("kafka_network_requestmetrics_requests",
                                   "Requests completed (RequestsPerSec).", labels=["request", "version"])
    errors = CounterMetricFamily("kafka_network_requestmetrics_errors",
                                 "Error codes the responses carried, NONE included, at the top "
                                 "level, per topic and per partition (ErrorsPerSec).",
                                 labels=["request", "error"])
    names = TIMINGS + SIZES
    hists = [HistogramMetricFamily(f"kafka_network_requestmetrics_{name.lower()}", f"{name} per request.",
                                   labels=["request", "version"]) for name in names]
    # Microseconds kept, milliseconds shown; each bound's label is its exact value ("1.023").
    time_labels = [repr(b) for b in bucket_bounds(TIME_BUCKETS, 1000)]
    size_labels = [repr(b) for b in bucket_bounds(SIZE_BUCKETS)]
    by_error: dict[tuple[str, str], int] = {}  # ErrorsPerSec has no version: summed over them
    for (key, version), s in sorted(stats.items()):
        request = api_name(key)
        requests.add_metric([request, str(version)], s.count)
        for code, n in s.errors.items():
            labels = (request, for_code(code).name)  # Kafka's name, as its JMX tag has it
            by_error[labels] = by_error.get(labels, 0) + n
        for i, family in enumerate(hists):
            timing = i < len(TIMINGS)
            bounds = time_labels if timing else size_labels
            counts, total = s.histogram(i, len(bounds))
            cumulative, buckets = 0, []
            for bound, c in zip(bounds, counts, strict=False):
                cumulative += c
                buckets.append((bound, cumulative))
            buckets.append(("+Inf", sum(counts)))
            family.add_metric([request, str(version)], buckets, total / 1000 if timing else total)
    for labels, n in sorted(by_error.items()):
        errors.add_metric(list(labels), n)
    yield requests
    yield errors
    yield from hists


# --- the request handlers (kafkalite/server/request_handler.py) -------------------------------

class HandlerPoolView(Protocol):
    @property
    def idle_ns_total(self) -> int: ...

    @property
    def threads(self) -> Sized: ...


def handler_pool_metrics(pool: HandlerPoolView) -> MetricSource:
    """Kafka's RequestHandlerAvgIdlePercent of the data plane's pool."""
    fractions = Fractions()

    def collect() -> Iterator[Metric]:
        yield GaugeMetricFamily("kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent",
                                "Fraction of time the data-plane handlers waited for requests "
                                "(RequestHandlerAvgIdlePercent).",
                                value=fractions("handlers", pool.idle_ns_total, len(pool.threads)))

    return collect


# --- client quotas (kafkalite/server/client_quotas.py) -----------------------------------------

class QuotaManagerView(Protocol):
    @property
    def kind(self) -> str: ...

    def snapshot(self) -> list[tuple[str, str, float, float, int]]: ...


# Kafka's rate attribute of each quota type's sensors (byte-rate, request-time, mutation-rate).
QUOTA_RATES = {"Produce": ("byte_rate", "Bytes per second of Produce requests"),
               "Fetch": ("byte_rate", "Bytes per second of Fetch responses"),
               "Request": ("request_time", "Percent of one handler thread's time"),
               "ControllerMutation": ("mutation_rate", "Partitions created or deleted per second")}


def quota_metrics(managers: Sequence[QuotaManagerView]) -> MetricSource:
    """Kafka's client quota sensors (``kafka.server:type=Produce|Fetch|Request|ControllerMutation,
    user=U,client-id=C``): the rate over the quota window and the throttle times, per sensor."""

    def collect() -> Iterator[Metric]:
        for m in managers:
            kind = m.kind.lower()
            rate_name, rate_help = QUOTA_RATES[m.kind]
            labels = ["user", "client_id"]
            rate = GaugeMetricFamily(f"kafka_server_{kind}_{rate_name}", f"{rate_help} ({m.kind}).",
                                     labels=labels)
            avg = GaugeMetricFamily(f"kafka_server_{kind}_throttle_time",
                                    f"Average milliseconds a throttled {m.kind} response was throttled "
                                    "(throttle-time).", labels=labels)
            count = CounterMetricFamily(f"kafka_server_{kind}_throttled",
                                        f"{m.kind} responses throttled.", labels=labels)
            for user, client_id, value, throttle_ms, throttled in m.snapshot():
                rate.add_metric([user, client_id], value)
                avg.add_metric([user, client_id], throttle_ms / throttled if throttled else 0.0)
                count.add_metric([user, client_id], throttled)
            yield rate
            yield avg
            yield count

    return collect


# --- the controller (kafkalite/controller/) ---------------------------------------------------

class ControllerChannelView(Protocol):
    @property
    def sent(self) -> Mapping[int, int]: ...

    @property
    def queue_time_ns(self) -> Mapping[int, int]: ...

    def queue_size(self, broker_id: int) -> int: ...


def controller_metrics(channel: ControllerChannelView, offline_partitions: Callable[[], int]) -> MetricSource:
    """The active controller's: ActiveControllerCount 1, OfflinePartitionsCount, and its channel
    manager's queues (per broker it sends to)."""

    def collect() -> Iterator[Metric]:
        yield from controller_state(1, offline_partitions())()
        size = GaugeMetricFamily("kafka_controller_controllerchannelmanager_queuesize",
                                 "Control requests waiting per broker (QueueSize).", labels=["broker_id"])
        rate = SummaryMetricFamily("kafka_controller_controllerchannelmanager_requestrateandqueuetimems",
                                   "Control requests sent per broker and the milliseconds they waited "
                                   "in the queue (RequestRateAndQueueTimeMs).", labels=["broker_id"])
        total = 0
        for broker_id in sorted(channel.sent):
            n = channel.queue_size(broker_id)
            total += n
            size.add_metric([str(broker_id)], n)
            rate.add_metric([str(broker_id)], channel.sent.get(broker_id, 0),
                            channel.queue_time_ns.get(broker_id, 0) / 1e6)
        yield size
        yield GaugeMetricFamily("kafka_controller_controllerchannelmanager_totalqueuesize",
                                "Control requests waiting, all brokers (TotalQueueSize).", value=total)
        yield rate

    return collect


RAFT_METRICS = {  # Kafka's kafka.server:type=raft-metrics gauges (KafkaRaftMetrics)
    "current-leader": "The current quorum leader's id; -1 indicates unknown.",
    "current-epoch": "The current quorum epoch.",
    "current-vote": "The current voted leader's id; -1 indicates not voted for anyone.",
    "high-watermark": "The high watermark maintained on this member; -1 if it is unknown.",
    "log-end-offset": "The current raft log end offset.",
    "log-start-offset": "The first offset of the metadata log (after its latest snapshot).",
}


def raft_metrics(gauges: Callable[[], Mapping[str, float]]) -> MetricSource:
    """The metadata quorum's state on this node, as Kafka's raft-metrics report it."""

    def collect() -> Iterator[Metric]:
        values = gauges()
        for name, doc in RAFT_METRICS.items():
            if name in values:
                yield GaugeMetricFamily("kafka_server_raft_metrics_" + name.replace("-", "_"), doc,
                                        value=values[name])

    return collect


def controller_state(active: int, offline_partitions: int = 0) -> MetricSource:
    """KafkaController's ActiveControllerCount and OfflinePartitionsCount: a broker that does
    not run the controller reports 0 and 0, as Kafka's brokers do."""

    def collect() -> Iterator[Metric]:
        yield GaugeMetricFamily("kafka_controller_kafkacontroller_activecontrollercount",
                                "1 on the broker that runs the active controller, else 0 "
                                "(ActiveControllerCount).", value=active)
        yield GaugeMetricFamily("kafka_controller_kafkacontroller_offlinepartitionscount",
                                "Partitions without a live leader, on the active controller "
                                "(OfflinePartitionsCount).", value=offline_partitions)

    return collect


# --- replication and logs (kafkalite/server/replication/) -------------------------------------

class LogView(Protocol):
    @property
    def size(self) -> int: ...

    @property
    def num_segments(self) -> int: ...

    @property
    def log_start_offset(self) -> int: ...

    @property
    def log_end_offset(self) -> int: ...


class PartitionView(Protocol):
    @property
    def log(self) -> LogView: ...

    @property
    def is_leader(self) -> bool: ...

    @property
    def isr(self) -> tuple[int, ...]: ...

    @property
    def replicas(self) -> tuple[int, ...]: ...

    @property
    def under_min_isr(self) -> bool: ...


class IsrChangeCountsView(Protocol):
    @property
    def expands(self) -> int: ...

    @property
    def shrinks(self) -> int: ...

    @property
    def failed(self) -> int: ...


class ReplicaManagerView(Protocol):
    @property
    def partitions(self) -> Mapping[tuple[str, int], PartitionView]: ...

    @property
    def isr_changes(self) -> IsrChangeCountsView: ...

    @property
    def quotas(self) -> ReplicationQuotasView: ...


class ReplicationQuotaView(Protocol):
    def rate(self) -> float: ...


class ReplicationQuotasView(Protocol):
    @property
    def leader(self) -> ReplicationQuotaView: ...

    @property
    def follower(self) -> ReplicationQuotaView: ...


def replica_manager_metrics(rm: ReplicaManagerView) -> MetricSource:
    """Kafka's ReplicaManager gauges and ISR meters, and the Log gauges of each partition hosted."""

    def collect() -> Iterator[Metric]:
        partitions = sorted(list(rm.partitions.items()))
        leaders = [p for _, p in partitions if p.is_leader]
        yield GaugeMetricFamily("kafka_server_replicamanager_partitioncount",
                                "Partitions this broker hosts, led or followed (PartitionCount).",
                                value=len(partitions))
        yield GaugeMetricFamily("kafka_server_replicamanager_leadercount",
                                "Partitions this broker leads (LeaderCount).", value=len(leaders))
        yield GaugeMetricFamily("kafka_server_replicamanager_underreplicatedpartitions",
                                "Partitions led here whose ISR is smaller than their replicas "
                                "(UnderReplicatedPartitions).",
                                value=sum(1 for p in leaders if len(p.isr) < len(p.replicas)))
        yield GaugeMetricFamily("kafka_server_replicamanager_underminisrpartitioncount",
                                "Partitions led here whose ISR is smaller than min.insync.replicas "
                                "(UnderMinIsrPartitionCount).",
                                value=sum(1 for p in leaders if p.under_min_isr))
        changes = rm.isr_changes
        yield CounterMetricFamily("kafka_server_replicamanager_isrexpands",
                                  "ISR expansions the controller accepted from this leader "
                                  "(IsrExpandsPerSec).", value=changes.expands)
        yield CounterMetricFamily("kafka_server_replicamanager_isrshrinks",
                                  "ISR shrinks the controller accepted from this leader "
                                  "(IsrShrinksPerSec).", value=changes.shrinks)
        yield CounterMetricFamily("kafka_server_replicamanager_failedisrupdates",
                                  "ISR changes the controller refused (FailedIsrUpdatesPerSec).",
                                  value=changes.failed)
        quotas = rm.quotas
        yield GaugeMetricFamily("kafka_server_leaderreplication_byte_rate",
                                "Bytes/s this broker sent to throttled followers, over the replication "
                                "quota window (LeaderReplication byte-rate).", value=quotas.leader.rate())
        yield GaugeMetricFamily("kafka_server_followerreplication_byte_rate",
                                "Bytes/s this broker fetched for throttled replicas, over the replication "
                                "quota window (FollowerReplication byte-rate).", value=quotas.follower.rate())
        labels = ["topic", "partition"]
        families = [GaugeMetricFamily(f"kafka_log_log_{name.lower()}", f"{text} ({name}).", labels=labels)
                    for name, text in LOG_METRICS]
        for (topic, index), partition in partitions:
            log = partition.log
            key = [topic, str(index)]
            for family, value in zip(families, (log.size, log.num_segments, log.log_start_offset,
                                                 log.log_end_offset), strict=True):
                family.add_metric(key, value)
        yield from families

    return collect


# --- topics (kafkalite/server/topic_metrics.py) -----------------------------------------------

class TopicStatsView(Protocol):
    @property
    def names(self) -> Sequence[str]: ...

    def snapshot(self) -> dict[str | None, list[int]]: ...


def topic_metrics(stats: TopicStatsView) -> MetricSource:
    """Kafka's BrokerTopicMetrics meters as counters, per topic (label ``topic``) and for all
    topics: a sample without the label, as Kafka's all-topics meter has no topic tag."""

    def collect() -> Iterator[Metric]:
        counts = stats.snapshot()
        every = counts.pop(None)
        topics = sorted((t, c) for t, c in counts.items() if t is not None)
        for i, name in enumerate(stats.names):
            prometheus = f"kafka_server_brokertopicmetrics_{name.removesuffix('PerSec').lower()}"
            family = CounterMetricFamily(prometheus, f"{BROKER_TOPIC_METRICS[name]} ({name}).",
                                         labels=["topic"])
            family.add_metric([], every[i])  # no label value: the sample has no topic label
            for topic, c in topics:
                family.add_metric([topic], c[i])
            yield family

    return collect


# --- the request log (request_log.py) ---------------------------------------------------------

class RequestLogView(Protocol):
    @property
    def written(self) -> int: ...

    @property
    def dropped(self) -> int: ...


def request_log_metrics(request_log: RequestLogView) -> MetricSource:
    def collect() -> Iterator[Metric]:
        yield CounterMetricFamily("kafkalite_request_log_lines_written", "Request log lines written.",
                                  value=request_log.written)
        yield CounterMetricFamily("kafkalite_request_log_lines_dropped",
                                  "Request log lines dropped: the writer fell behind or the disk "
                                  "failed.", value=request_log.dropped)

    return collect


# --- the group coordinator (kafkalite/server/coordinator/) ------------------------------------

class GroupCounts(NamedTuple):
    """What the group coordinator reports, read under its lock at the scrape."""

    by_state: Mapping[str, int]  # each of Kafka's group state names -> groups in it (0 included)
    offsets: int  # committed offsets held
    offset_commits: int  # offsets committed since the start (each partition of a commit counts)
    # Consumer groups (KIP-848) by ConsumerGroupState name (0 included); not in by_state.
    consumer_by_state: Mapping[str, int] = {}


def group_coordinator_metrics(counts: Callable[[], GroupCounts]) -> MetricSource:
    """Kafka's GroupMetadataManager gauges (NumGroups, per state, NumOffsets) and its
    group-coordinator-metrics offset-commit-count."""

    def collect() -> Iterator[Metric]:
        c = counts()
        prefix = "kafka_coordinator_group_groupmetadatamanager_"
        yield GaugeMetricFamily(f"{prefix}numgroups", "Groups this coordinator holds (NumGroups).",
                                value=sum(c.by_state.values()))
        for state, n in c.by_state.items():
            yield GaugeMetricFamily(f"{prefix}numgroups{state.lower()}",
                                    f"Groups in state {state} (NumGroups{state}).", value=n)
        yield GaugeMetricFamily(f"{prefix}numoffsets",
                                "Committed offsets this coordinator holds (NumOffsets).", value=c.offsets)
        yield CounterMetricFamily("kafka_server_group_coordinator_metrics_offset_commit",
                                  "Offsets committed, one per partition of each OffsetCommit "
                                  "(offset-commit-count; its rate is offset-commit-rate).",
                                  value=c.offset_commits)
        consumer = GaugeMetricFamily("kafka_server_group_coordinator_metrics_consumer_group_count",
                                     "Consumer groups (KIP-848) by state (consumer-group-count).",
                                     labels=["state"])
        for state, n in c.consumer_by_state.items():
            consumer.add_metric([state.lower()], n)
        yield consumer

    return collect
