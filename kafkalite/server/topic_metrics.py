"""Kafka's BrokerTopicMetrics (``kafka.server:type=BrokerTopicMetrics``): per topic and for all
topics, the meters Kafka's ReplicaManager and KafkaApis mark on the data path, kept as counts
(Prometheus computes the rates) and exported by kafkalite/metrics/collector.py.

They are counted where Kafka counts them, by the Produce and Fetch handlers, on whichever thread
handles or completes the request. Each thread counts into a shard of its own, so counting takes
no lock and loses no increment when two threads count one topic; a scrape sums the shards.
The handlers also give each request its :class:`TopicTraffic` for the request log.

What counts, as in Kafka:

- TotalProduceRequestsPerSec and TotalFetchRequestsPerSec: partitions, not requests (a request of
  three partitions counts three), once the request itself is served (not for an unsupported
  version or bad acks); a fetch's partitions are counted at its first read, not when a fetch
  that waited is answered.
- MessagesInPerSec and BytesInPerSec: the records (the batch header's count) and bytes of each
  batch appended; BytesRejectedPerSec: the bytes of a batch refused as larger than
  max.message.bytes.
- FailedProduceRequestsPerSec and FailedFetchRequestsPerSec: partitions that failed for any reason
  but the expected ones (:data:`EXPECTED_PRODUCE_ERRORS`, :data:`EXPECTED_FETCH_ERRORS`): Kafka
  means them to count a broker's unexpected failures, not clients' mistakes or leader moves.
- BytesOutPerSec: the record bytes of each Fetch response to a consumer, when it is answered;
  followers' fetches are replication traffic (Kafka's ReplicationBytesOutPerSec), not counted
  here.

Partitions of a topic the broker does not know (UNKNOWN_TOPIC_OR_PARTITION, a topic id it does
not know) count nowhere: Kafka answers them before the log, and no client can make up counters
by naming topics. A deleted topic's counters go (Kafka's removeMetrics); the all-topics ones stay.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Any

from kafkalite.metrics.request_log import TopicTraffic
from kafkalite.network.request_channel import Request
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.primitives import INT32
from kafkalite.protocol.records.batch import RECORDS_COUNT_OFFSET
from kafkalite.storage.segment import FileSlice

from .metadata_cache import Snapshot

# Kafka's meter names, in the order of each topic's list of counts.
NAMES = ("MessagesInPerSec", "BytesInPerSec", "BytesOutPerSec", "BytesRejectedPerSec",
         "FailedProduceRequestsPerSec", "FailedFetchRequestsPerSec", "TotalProduceRequestsPerSec",
         "TotalFetchRequestsPerSec")
(MESSAGES_IN, BYTES_IN, BYTES_OUT, BYTES_REJECTED, FAILED_PRODUCE, FAILED_FETCH, TOTAL_PRODUCE,
 TOTAL_FETCH) = range(len(NAMES))

# Kafka's "known exceptions" of ReplicaManager.appendToLocalLog and readFromLog, which do not
# count as failed requests.
EXPECTED_PRODUCE_ERRORS = frozenset({
    E.UNKNOWN_TOPIC_OR_PARTITION, E.NOT_LEADER_OR_FOLLOWER, E.MESSAGE_TOO_LARGE,
    E.BY_NAME["RECORD_LIST_TOO_LARGE"].code, E.CORRUPT_MESSAGE, E.KAFKA_STORAGE_ERROR,
})
EXPECTED_FETCH_ERRORS = frozenset({
    E.UNKNOWN_TOPIC_OR_PARTITION, E.NOT_LEADER_OR_FOLLOWER, E.UNKNOWN_LEADER_EPOCH,
    E.FENCED_LEADER_EPOCH, E.BY_NAME["REPLICA_NOT_AVAILABLE"].code, E.KAFKA_STORAGE_ERROR,
    E.INCONSISTENT_TOPIC_ID, E.OFFSET_OUT_OF_RANGE,
})

ALL_TOPICS = None  # a shard's key for the all-topics counts

Shard = dict[str | None, list[int]]


class BrokerTopicStats:
    """One broker's BrokerTopicMetrics: per thread, topic (None: all topics) -> counts in
    :data:`NAMES` order."""

    names = NAMES

    def __init__(self) -> None:
        self._local = threading.local()
        self._shards: list[Shard] = []
        self._lock = threading.Lock()  # the list of shards, not the counts

    def _shard(self) -> Shard:
        shard: Shard | None = getattr(self._local, "shard", None)
        if shard is None:
            shard = self._local.shard = {ALL_TOPICS: [0] * len(NAMES)}
            with self._lock:
                self._shards.append(shard)
        return shard

    # --- the handlers' side -------------------------------------------------------------------

    def produced(self, request: Request, topic_data: Sequence[Any], responses: Sequence[Any],
                 served: bool, names: Sequence[str] | None = None) -> None:
        """A Produce request's partitions once appended or refused: ``topic_data`` the request's
        topics, ``responses`` the response's, in the same order; ``served`` false when the whole
        request was refused (then nothing counts); ``names`` the topics' names when the request
        names them by id (v13+). Sets the request's ``topic_traffic``."""
        shard = self._shard()
        every = shard[ALL_TOPICS]
        traffic = []
        for i, (t, response) in enumerate(zip(topic_data, responses, strict=True)):
            topic, results = (names[i] if names is not None else t.name), response.partition_responses
            records = appended = 0
            counts = None
            for p, result in zip(t.partition_data, results, strict=True):
                code = result.error_code
                if not served or code in (E.UNKNOWN_TOPIC_OR_PARTITION, E.UNKNOWN_TOPIC_ID):
                    continue
                if counts is None:
                    counts = shard.get(topic) or shard.setdefault(topic, [0] * len(NAMES))
                counts[TOTAL_PRODUCE] += 1
                every[TOTAL_PRODUCE] += 1
                if code == E.NONE:
                    # Appended: one whole batch v2, checked, so its header's count is right.
                    n, size = INT32.unpack_from(p.records, RECORDS_COUNT_OFFSET)[0], len(p.records)
                    records += n
                    appended += size
                    counts[MESSAGES_IN] += n
                    every[MESSAGES_IN] += n
                    counts[BYTES_IN] += size
                    every[BYTES_IN] += size
                    continue
                if code == E.MESSAGE_TOO_LARGE:
                    size = len(p.records)
                    counts[BYTES_REJECTED] += size
                    every[BYTES_REJECTED] += size
                if code not in EXPECTED_PRODUCE_ERRORS:
                    counts[FAILED_PRODUCE] += 1
                    every[FAILED_PRODUCE] += 1
            traffic.append(TopicTraffic(topic, results, records, appended))
        request.topic_traffic = traffic

    def fetch_read(self, infos: Sequence[Any], datas: Sequence[Any]) -> None:
        """A Fetch request's first read: ``infos`` the partitions asked for (``topic`` None for
        an unknown topic id), ``datas`` what was read, in the same order."""
        shard = self._shard()
        every = shard[ALL_TOPICS]
        for info, data in zip(infos, datas, strict=True):
            topic, code = info.topic, data.error_code
            if topic is None or code == E.UNKNOWN_TOPIC_OR_PARTITION:
                continue
            counts = shard.get(topic) or shard.setdefault(topic, [0] * len(NAMES))
            counts[TOTAL_FETCH] += 1
            every[TOTAL_FETCH] += 1
            if code and code not in EXPECTED_FETCH_ERRORS:
                counts[FAILED_FETCH] += 1
                every[FAILED_FETCH] += 1

    def fetch_answered(self, request: Request, from_follower: bool, infos: Sequence[Any],
                       datas: Sequence[Any]) -> None:
        """A Fetch request about to be answered with ``datas``: bytes out (to a consumer), and the
        request's ``topic_traffic``."""
        shard = self._shard()
        every = shard[ALL_TOPICS]
        partitions: dict[str, list[Any]] = {}  # per topic, in the order asked
        sent: dict[str, int] = {}
        for info, data in zip(infos, datas, strict=True):
            topic = info.topic
            if topic is None:
                continue
            of_topic = partitions.get(topic)
            if of_topic is None:
                partitions[topic] = [data]
                sent[topic] = 0
            else:
                of_topic.append(data)
            records = data.records
            if records:  # bytes, or a slice of a segment for sendfile
                size = records.size if type(records) is FileSlice else len(records)
                sent[topic] += size
                if not from_follower:
                    counts = shard.get(topic) or shard.setdefault(topic, [0] * len(NAMES))
                    counts[BYTES_OUT] += size
                    every[BYTES_OUT] += size
        request.topic_traffic = [TopicTraffic(topic, of_topic, -1, sent[topic])
                                 for topic, of_topic in partitions.items()]

    # --- the collector's side -----------------------------------------------------------------

    def snapshot(self) -> dict[str | None, list[int]]:
        """Every shard summed: topic (None: all topics) -> counts in :data:`NAMES` order."""
        with self._lock:
            shards = list(self._shards)
        out: dict[str | None, list[int]] = {ALL_TOPICS: [0] * len(NAMES)}
        for shard in shards:
            for topic, counts in list(shard.items()):
                total = out.get(topic)
                if total is None:
                    out[topic] = list(counts)
                else:
                    for i, n in enumerate(counts):
                        total[i] += n
        return out

    def remove_topics(self, topics: Iterable[str]) -> None:
        """Forget topics' counters (they were deleted); the all-topics counts keep what they
        counted."""
        with self._lock:
            shards = list(self._shards)
        for topic in topics:
            for shard in shards:
                shard.pop(topic, None)

    def on_metadata_change(self, before: Snapshot, after: Snapshot) -> None:
        """A MetadataCache listener: the topics gone from the metadata were deleted."""
        gone = before.topics.keys() - after.topics.keys()
        if gone:
            self.remove_topics(gone)
