"""RequestMetrics: power-of-two buckets, one shard per Processor, summed at scrape time."""

from __future__ import annotations

import types
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from kafkalite.metrics.request_metrics import (
    SIZE_BUCKETS,
    RequestMetrics,
    bucket_bounds,
    merged,
    request_times_us,
)


@given(st.lists(st.integers(0, 2**40), max_size=200))
def test_every_value_lands_in_the_first_bucket_whose_bound_holds_it(values):
    m = RequestMetrics()
    for v in values:  # a request of v bytes
        _record(m, _request(18, 3, v, 0), 0, 0, 10_000_000)
    counts, total = m.stats[(18, 3)].histogram(6, SIZE_BUCKETS) if values else ([0], 0)
    assert sum(counts) == len(values) and total == sum(values)
    cumulative = 0
    for bound, count in zip(bucket_bounds(SIZE_BUCKETS), counts, strict=False):
        cumulative += count
        assert cumulative == sum(1 for v in values if v <= bound)


def _record(m: RequestMetrics, request, response_bytes: int, error_code: int, now_ns: int) -> None:
    assert m.complete(request, now_ns, response_bytes, error_code) == request_times_us(request, now_ns)


def _request(api_key: int, version: int, size: int, start: int) -> types.SimpleNamespace:
    header = types.SimpleNamespace(request_api_key=api_key, request_api_version=version)
    # 1 ms queued, 2 ms in the handler, 1 ms in a purgatory, 2 ms waiting for the Processor,
    # sent 4 ms later.
    return types.SimpleNamespace(header=header, size=size, start_ns=start, dequeue_ns=start + 1_000_000,
                                 api_local_complete_ns=start + 3_000_000,
                                 response_enqueue_ns=start + 4_000_000,
                                 response_dequeue_ns=start + 6_000_000)


def test_record_splits_a_request_into_kafkas_timings():
    m = RequestMetrics()
    _record(m, _request(18, 3, 40, 0), 500, 0, 10_000_000)
    _record(m, _request(18, 3, 40, 0), 500, 35, 10_000_000)
    stats = m.stats[(18, 3)]
    assert stats.count == 2 and stats.errors == {0: 1, 35: 1}  # NONE counted too, as in Kafka
    # microseconds queued, local, remote, response queue, send, total; then request and response bytes
    assert stats.sums == [2000, 4000, 2000, 4000, 8000, 20000, 80, 1000]
    counts, total = stats.histogram(5, 26)  # TotalTimeMs: 10 ms is bucket 14 (8192-16383 us)
    assert counts[14] == 2 and sum(counts) == 2 and total == 20000


def test_a_step_never_reached_counts_as_no_time():
    # Closed before a handler took it: only the queue time (up to the close) is not zero.
    request = types.SimpleNamespace(start_ns=1_000_000, dequeue_ns=0, api_local_complete_ns=0,
                                    response_enqueue_ns=0, response_dequeue_ns=0)
    assert request_times_us(request, 3_500_000) == (0, 0, 0, 0, 2500, 2500)
    request.header = types.SimpleNamespace(request_api_key=18, request_api_version=3)
    request.size = 0
    m = RequestMetrics()
    assert m.complete(request, 3_500_000, 0, 0) == (0, 0, 0, 0, 2500, 2500)  # the same, inlined
    assert m.stats[(18, 3)].sums == [0, 0, 0, 0, 2500, 2500, 0, 0]


def test_shards_are_summed():
    a, b = RequestMetrics(), RequestMetrics()
    _record(a, _request(3, 12, 10, 0), 100, 0, 5_000_000)
    _record(b, _request(3, 12, 10, 0), 100, 3, 5_000_000)
    _record(b, _request(18, 3, 10, 0), 100, 0, 5_000_000)
    total = merged([a, b])
    assert total[(3, 12)].count == 2 and total[(3, 12)].errors == {0: 1, 3: 1}
    assert total[(18, 3)].count == 1
    assert a.stats[(3, 12)].count == 1  # the shards themselves are untouched


def test_every_error_code_a_response_carries_is_counted():
    """Kafka's ErrorsPerSec: each code of the response's errorCounts(), NONE included; a request
    answered without a response (closed, no-op) carries none."""
    m = RequestMetrics()
    m.complete(_request(19, 7, 40, 0), 10_000_000, 100, 0, {0: 2, 36: 1})
    m.complete(_request(19, 7, 40, 0), 10_000_000, 100, 0, {36: 3})
    m.complete(_request(19, 7, 40, 0), 10_000_000, 0, 0, {})
    stats = m.stats[(19, 7)]
    assert stats.count == 3 and stats.errors == {0: 2, 36: 4}


def test_bucket_bounds_are_their_exact_values():
    """A bound divided, not multiplied by 0.001: 1023 us is 1.023 ms, printed without noise."""
    labels = [repr(b) for b in bucket_bounds(26, 1000)]
    assert labels[:4] == ["0.0", "0.001", "0.003", "0.007"] and labels[10] == "1.023"
    assert all(Fraction(label) == Fraction(2**i - 1, 1000) for i, label in enumerate(labels))
    assert [repr(b) for b in bucket_bounds(31)][30] == "1073741823.0"
