"""Kafka's RequestMetrics, kept by each Processor for the requests it completes (one shard per
Processor, written by that thread only, so recording takes no lock) and summed at scrape time.

Histograms have power-of-two buckets: the bucket of a value is its ``bit_length()``, one C call,
so recording a request costs a few list increments on the Processor's hot path rather than a
search per histogram.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

TIME_BUCKETS = 26  # microseconds: up to 2**25 us (33 s), then +Inf
SIZE_BUCKETS = 31  # bytes: up to 2**30 bytes (1 GiB), then +Inf

# Kafka's names for the timings, in the order ApiStats keeps them.
TIMINGS = ("RequestQueueTimeMs", "LocalTimeMs", "ResponseQueueTimeMs", "ResponseSendTimeMs", "TotalTimeMs")
SIZES = ("RequestBytes", "ResponseBytes")


class Histogram:
    __slots__ = ("counts", "sum")

    def __init__(self, buckets: int) -> None:
        self.counts = [0] * (buckets + 1)  # the last is +Inf
        self.sum = 0

    def observe(self, value: int) -> None:
        """``value`` >= 0 in the histogram's unit (microseconds or bytes)."""
        i = value.bit_length()
        counts = self.counts
        counts[i if i < len(counts) else -1] += 1
        self.sum += value

    def merge(self, other: Histogram) -> None:
        self.counts = [a + b for a, b in zip(self.counts, other.counts, strict=True)]
        self.sum += other.sum


class ApiStats:
    """One api key and version: requests, errors by code, and the histograms."""

    __slots__ = ("count", "errors", "histograms")

    def __init__(self) -> None:
        self.count = 0
        self.errors: dict[int, int] = {}
        self.histograms = ([Histogram(TIME_BUCKETS) for _ in TIMINGS]
                           + [Histogram(SIZE_BUCKETS) for _ in SIZES])

    def merge(self, other: ApiStats) -> None:
        self.count += other.count
        for code, n in other.errors.items():
            self.errors[code] = self.errors.get(code, 0) + n
        for mine, theirs in zip(self.histograms, other.histograms, strict=True):
            mine.merge(theirs)


class RequestMetrics:
    """One Processor's shard: (api key, version) -> ApiStats."""

    def __init__(self) -> None:
        self.stats: dict[tuple[int, int], ApiStats] = {}

    def record(self, request: Any, response_bytes: int, error_code: int, now_ns: int) -> None:
        """A request whose response has been written (or dropped): Kafka's updateRequestMetrics."""
        header = request.header
        key = (header.request_api_key, header.request_api_version)
        stats = self.stats.get(key)
        if stats is None:
            stats = self.stats[key] = ApiStats()
        stats.count += 1
        if error_code:
            stats.errors[error_code] = stats.errors.get(error_code, 0) + 1
        start = request.start_ns
        dequeue = request.dequeue_ns or start
        local = request.api_local_complete_ns or dequeue
        enqueue = request.response_enqueue_ns or local
        taken = request.response_dequeue_ns or enqueue
        h = stats.histograms
        h[0].observe(max(dequeue - start, 0) // 1000)
        h[1].observe(max(local - dequeue, 0) // 1000)
        h[2].observe(max(taken - enqueue, 0) // 1000)
        h[3].observe(max(now_ns - taken, 0) // 1000)
        h[4].observe(max(now_ns - start, 0) // 1000)
        h[5].observe(request.size)
        h[6].observe(response_bytes)


def merged(shards: Iterable[RequestMetrics]) -> dict[tuple[int, int], ApiStats]:
    """All shards summed (a consistent enough view: each shard is read while its thread runs)."""
    out: dict[tuple[int, int], ApiStats] = {}
    for shard in shards:
        for key, stats in list(shard.stats.items()):
            out.setdefault(key, ApiStats()).merge(stats)
    return out


def bucket_bounds(buckets: int, scale: float) -> list[float]:
    """Upper bounds of buckets 0..buckets-1 (value < 2**i), in the exported unit."""
    return [(2**i - 1) * scale if i else 0.0 for i in range(buckets)]
