"""Kafka's RequestMetrics, kept by each Processor for the requests it completes (one shard per
Processor, written by that thread only, so recording takes no lock) and summed at scrape time.

Histograms have power-of-two buckets: the bucket of a value is its ``bit_length()``, one C call,
so recording a request costs a few list increments on the Processor's hot path rather than a
search per histogram (about 1 us a request, measured with timeit).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

TIME_BUCKETS = 26  # microseconds: up to 2**25 us (33 s), then +Inf
SIZE_BUCKETS = 31  # bytes: up to 2**30 bytes (1 GiB), then +Inf

# Kafka's names for the timings, in the order ApiStats keeps them.
TIMINGS = ("RequestQueueTimeMs", "LocalTimeMs", "RemoteTimeMs", "ResponseQueueTimeMs", "ResponseSendTimeMs",
           "TotalTimeMs")
Times = tuple[int, int, int, int, int, int]
SIZES = ("RequestBytes", "ResponseBytes")


SLOTS = 65  # per histogram: bit lengths 0..64, so no value can fall outside


class ApiStats:
    """One api key and version: requests, error codes the responses carried (NONE included, as
    Kafka's ErrorsPerSec counts them) by code, and the histograms (TIMINGS then SIZES),
    kept flat: histogram k's bucket i is ``counts[k * SLOTS + i]``, its sum ``sums[k]``."""

    __slots__ = ("count", "counts", "errors", "sums")

    def __init__(self) -> None:
        self.count = 0
        self.errors: dict[int, int] = {}
        self.counts = [0] * (SLOTS * (len(TIMINGS) + len(SIZES)))
        self.sums = [0] * (len(TIMINGS) + len(SIZES))

    def merge(self, other: ApiStats) -> None:
        self.count += other.count
        for code, n in list(other.errors.items()):
            self.errors[code] = self.errors.get(code, 0) + n
        self.counts = [a + b for a, b in zip(self.counts, other.counts, strict=True)]
        self.sums = [a + b for a, b in zip(self.sums, other.sums, strict=True)]

    def histogram(self, k: int, buckets: int) -> tuple[list[int], int]:
        """Histogram k as (counts of buckets 0..buckets-1, then the rest as +Inf; sum)."""
        h = self.counts[k * SLOTS:(k + 1) * SLOTS]
        return h[:buckets] + [sum(h[buckets:])], self.sums[k]


def request_times_us(request: Any, now_ns: int) -> Times:
    """A request's timings in whole microseconds, in Kafka's order: RequestQueueTime, LocalTime,
    RemoteTime (waiting in a purgatory, from the handler's return to the answer), ResponseQueueTime,
    ResponseSendTime, TotalTime (:meth:`RequestMetrics.complete` computes the same inline, once
    per request, for both the metrics and the request log). The stamps come from one monotonic
    clock, in this order, so no timing is negative; a step the request never reached (its
    connection closed first) counts as no time."""
    start = request.start_ns
    dequeue = request.dequeue_ns or start
    local = request.api_local_complete_ns or dequeue
    enqueue = request.response_enqueue_ns or local
    taken = request.response_dequeue_ns or enqueue
    return ((dequeue - start) // 1000, (local - dequeue) // 1000, (enqueue - local) // 1000,
            (taken - enqueue) // 1000, (now_ns - taken) // 1000, (now_ns - start) // 1000)


class RequestMetrics:
    """One Processor's shard: (api key, version) -> ApiStats."""

    def __init__(self) -> None:
        self.stats: dict[tuple[int, int], ApiStats] = {}

    def complete(self, request: Any, now_ns: int, response_bytes: int, error_code: int,
                 error_counts: Mapping[int, int] | None = None) -> Times:
        """A request whose response has been written (or dropped) at ``now_ns``: Kafka's
        updateRequestMetrics. ``error_counts``: every error code the response carried (None:
        ``error_code`` alone, once). Returns its timings (:func:`request_times_us`, computed here
        too, for the request log). Written out flat, with :func:`request_times_us` inlined (a
        call and a tuple's unpacking less): this runs once per request on the Processor's thread,
        whose Python per request is the throughput on a pinned core."""
        header = request.header
        key = (header.request_api_key, header.request_api_version)
        stats = self.stats.get(key)
        if stats is None:
            stats = self.stats[key] = ApiStats()
        stats.count += 1
        errors = stats.errors
        if error_counts is None:
            errors[error_code] = errors.get(error_code, 0) + 1
        else:
            for code, n in error_counts.items():
                errors[code] = errors.get(code, 0) + n
        start = request.start_ns
        dequeue = request.dequeue_ns or start
        local = request.api_local_complete_ns or dequeue
        enqueue = request.response_enqueue_ns or local
        taken = request.response_dequeue_ns or enqueue
        queue_us = (dequeue - start) // 1000
        local_us = (local - dequeue) // 1000
        remote_us = (enqueue - local) // 1000
        response_queue_us = (taken - enqueue) // 1000
        send_us = (now_ns - taken) // 1000
        total_us = (now_ns - start) // 1000
        size = request.size
        c = stats.counts
        c[queue_us.bit_length()] += 1
        c[65 + local_us.bit_length()] += 1
        c[130 + remote_us.bit_length()] += 1
        c[195 + response_queue_us.bit_length()] += 1
        c[260 + send_us.bit_length()] += 1
        c[325 + total_us.bit_length()] += 1
        c[390 + size.bit_length()] += 1
        c[455 + response_bytes.bit_length()] += 1
        s = stats.sums
        s[0] += queue_us
        s[1] += local_us
        s[2] += remote_us
        s[3] += response_queue_us
        s[4] += send_us
        s[5] += total_us
        s[6] += size
        s[7] += response_bytes
        return queue_us, local_us, remote_us, response_queue_us, send_us, total_us


def merged(shards: Iterable[RequestMetrics]) -> dict[tuple[int, int], ApiStats]:
    """All shards summed (a consistent enough view: each shard is read while its thread runs)."""
    out: dict[tuple[int, int], ApiStats] = {}
    for shard in shards:
        for key, stats in list(shard.stats.items()):
            out.setdefault(key, ApiStats()).merge(stats)
    return out


def bucket_bounds(buckets: int, per_unit: int = 1) -> list[float]:
    """Upper bounds of buckets 0..buckets-1 (value < 2**i) in the exported unit, ``per_unit``
    recorded units making one exported unit (1000 us to the ms). Divided, never multiplied by a
    float such as 0.001: each bound is then the double nearest its exact value, and ``repr`` prints
    that value (``1.023``, not ``1.0230000000000001``)."""
    return [(2**i - 1) / per_unit if i else 0.0 for i in range(buckets)]
