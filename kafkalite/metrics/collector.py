"""The broker's metrics in Prometheus form, read from the broker's own counters at scrape time
(nothing is pushed on the hot path). Names follow Kafka's JMX names the way the Prometheus JMX
exporter spells them (``kafka.network:type=RequestMetrics,name=TotalTimeMs`` becomes
``kafka_network_requestmetrics_totaltimems``); docs/metrics.md lists each with its JMX name.

Idle and blocked percentages are over the time since the previous scrape, as Kafka's meters are
rates: the first scrape reports them since the broker started.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
    SummaryMetricFamily,
)

from kafkalite.protocol.api_keys import api_name
from kafkalite.protocol.error_codes import for_code

from .request_metrics import SIZE_BUCKETS, SIZES, TIME_BUCKETS, TIMINGS, bucket_bounds, merged

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
# Kafka's Log gauges (kafka.log:type=Log), in the order _logs reads them.
LOG_METRICS = (
    ("Size", "Bytes of the partition's log, every segment"),
    ("NumLogSegments", "Segments of the partition's log"),
    ("LogStartOffset", "First offset of the partition's log"),
    ("LogEndOffset", "Offset the partition's next record gets"),
)


class BrokerCollector:
    """A prometheus_client collector over one running Broker."""

    def __init__(self, broker: Any) -> None:
        self.broker = broker
        self._last: dict[str, tuple[int, int]] = {}  # name -> (monotonic ns, cumulative ns)

    def _percent(self, name: str, cumulative_ns: int, threads: int = 1) -> float:
        now = time.monotonic_ns()
        then, before = self._last.get(name, (self.broker.started_ns, 0))
        self._last[name] = (now, cumulative_ns)
        span = (now - then) * max(threads, 1)
        return min(max((cumulative_ns - before) / span, 0.0), 1.0) if span > 0 else 0.0

    def collect(self) -> Iterator[Metric]:
        ss = self.broker.socket_server
        if ss is None:
            return
        yield from self._network(ss)
        yield from self._requests(ss)
        yield from self._handlers()
        yield from self._controller()
        yield from self._purgatories()
        yield from self._topics()
        yield from self._logs()
        request_log = getattr(self.broker, "request_log", None)
        if request_log is not None:
            yield CounterMetricFamily("kafkalite_request_log_lines_written", "Request log lines written.",
                                      value=request_log.written)
            yield CounterMetricFamily("kafkalite_request_log_lines_dropped",
                                      "Request log lines dropped: the writer fell behind or the disk "
                                      "failed.", value=request_log.dropped)

    def _topics(self) -> Iterator[Metric]:
        """Kafka's BrokerTopicMetrics meters as counters, per topic (label ``topic``) and for all
        topics: a sample without the label, as Kafka's all-topics meter has no topic tag."""
        stats = getattr(self.broker, "topic_stats", None)
        if stats is None:
            return
        counts = stats.snapshot()
        every = counts.pop(None)
        topics = sorted(counts.items())
        for i, name in enumerate(stats.names):
            prometheus = f"kafka_server_brokertopicmetrics_{name.removesuffix('PerSec').lower()}"
            family = CounterMetricFamily(prometheus, f"{BROKER_TOPIC_METRICS[name]} ({name}).",
                                         labels=["topic"])
            family.add_metric([], every[i])  # no label value: the sample has no topic label
            for topic, c in topics:
                family.add_metric([topic], c[i])
            yield family

    def _logs(self) -> Iterator[Metric]:
        """Kafka's Log gauges of each partition this broker hosts, read from its log now."""
        rm = getattr(self.broker, "replica_manager", None)
        if rm is None:
            return
        labels = ["topic", "partition"]
        families = [GaugeMetricFamily(f"kafka_log_log_{name.lower()}", f"{text} ({name}).", labels=labels)
                    for name, text in LOG_METRICS]
        for (topic, index), partition in sorted(list(rm.partitions.items())):
            log = partition.log
            key = [topic, str(index)]
            for family, value in zip(families, (log.size, log.num_segments, log.log_start_offset,
                                                 log.log_end_offset), strict=True):
                family.add_metric(key, value)
        yield from families

    def _purgatories(self) -> Iterator[Metric]:
        purgatories = [p for p in (getattr(self.broker, "topic_purgatory", None),) if p is not None]
        size = GaugeMetricFamily("kafka_server_delayedoperationpurgatory_purgatorysize",
                                 "Entries in the purgatory's watch lists (PurgatorySize).",
                                 labels=["delayedOperation"])
        delayed = GaugeMetricFamily("kafka_server_delayedoperationpurgatory_numdelayedoperations",
                                    "Operations waiting for completion or their timeout "
                                    "(NumDelayedOperations).", labels=["delayedOperation"])
        for p in purgatories:
            size.add_metric([p.name], p.watched())
            delayed.add_metric([p.name], p.delayed())
        yield size
        yield delayed

    def _network(self, ss: Any) -> Iterator[Metric]:
        channels = [c for c in (ss.data_plane_request_channel, ss.control_plane_request_channel) if c]
        g = GaugeMetricFamily("kafka_network_requestchannel_requestqueuesize",
                              "Requests waiting for a handler (RequestQueueSize).", labels=["plane"])
        r = GaugeMetricFamily("kafka_network_requestchannel_responsequeuesize",
                              "Responses waiting for their Processor (ResponseQueueSize).", labels=["plane"])
        for ch in channels:
            g.add_metric([ch.name], ch.request_queue_size)
            r.add_metric([ch.name], ch.response_queue_size)
        yield g
        yield r
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
        for p in ss.processors:
            pct = self._percent(f"processor-{p.id}", p.idle_ns_total)
            per.add_metric([str(p.id), p.listener], pct)
            idle_sum += pct
            n += 1
            labels = [p.listener, str(p.id)]
            count.add_metric(labels, len(p.connections))
            created.add_metric(labels, p.connections_created)
            closed.add_metric(labels, p.connections_closed)
            auth_ok.add_metric(labels, p.successful_authentications)
            auth_failed.add_metric(labels, p.failed_authentications)
        yield per
        yield GaugeMetricFamily("kafka_network_socketserver_networkprocessoravgidlepercent",
                                "Mean of the Processors' idle fractions (NetworkProcessorAvgIdlePercent).",
                                value=idle_sum / n if n else 0.0)
        yield count
        yield created
        yield closed
        yield auth_ok
        yield auth_failed
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
        for name, a in ss.acceptors.items():
            blocked.add_metric([name], self._percent(f"acceptor-{name}", a.blocked_ns))
        yield blocked

    def _requests(self, ss: Any) -> Iterator[Metric]:
        stats = merged(p.request_metrics for p in ss.processors)
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

    def _handlers(self) -> Iterator[Metric]:
        pools = self.broker.pools
        if not pools:
            return
        data = pools[-1]  # the data plane's pool is started last
        yield GaugeMetricFamily("kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent",
                                "Fraction of time the data-plane handlers waited for requests "
                                "(RequestHandlerAvgIdlePercent).",
                                value=self._percent("handlers", data.idle_ns_total, len(data.threads)))

    def _controller(self) -> Iterator[Metric]:
        controller = self.broker.controller
        channel = getattr(controller, "channel", None)
        if channel is None:
            return
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
