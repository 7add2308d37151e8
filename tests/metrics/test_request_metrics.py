"""RequestMetrics: power-of-two buckets, one shard per Processor, summed at scrape time."""

from __future__ import annotations

import types

from hypothesis import given
from hypothesis import strategies as st

from kafkalite.metrics.request_metrics import (
    TIME_BUCKETS,
    Histogram,
    RequestMetrics,
    bucket_bounds,
    merged,
)


@given(st.lists(st.integers(0, 2**40), max_size=200))
def test_every_value_lands_in_the_first_bucket_whose_bound_holds_it(values):
    h = Histogram(TIME_BUCKETS)
    for v in values:
        h.observe(v)
    assert sum(h.counts) == len(values) and h.sum == sum(values)
    bounds = bucket_bounds(TIME_BUCKETS, 1.0)
    cumulative = 0
    for bound, count in zip(bounds, h.counts, strict=False):
        cumulative += count
        assert cumulative == sum(1 for v in values if v <= bound)


def _request(api_key: int, version: int, size: int, start: int) -> types.SimpleNamespace:
    header = types.SimpleNamespace(request_api_key=api_key, request_api_version=version)
    # 1 ms queued, 2 ms in the handler, 3 ms waiting for the Processor, sent 4 ms later.
    return types.SimpleNamespace(header=header, size=size, start_ns=start, dequeue_ns=start + 1_000_000,
                                 api_local_complete_ns=start + 3_000_000,
                                 response_enqueue_ns=start + 3_000_000,
                                 response_dequeue_ns=start + 6_000_000)


def test_record_splits_a_request_into_kafkas_timings():
    m = RequestMetrics()
    m.record(_request(18, 3, 40, 0), 500, 0, 10_000_000)
    m.record(_request(18, 3, 40, 0), 500, 35, 10_000_000)
    stats = m.stats[(18, 3)]
    assert stats.count == 2 and stats.errors == {35: 1}
    queue, local, response_queue, send, total, req_bytes, resp_bytes = stats.histograms
    assert (queue.sum, local.sum, response_queue.sum, send.sum, total.sum) == (
        2000, 4000, 6000, 8000, 20000)  # microseconds, two requests
    assert (req_bytes.sum, resp_bytes.sum) == (80, 1000)


def test_shards_are_summed():
    a, b = RequestMetrics(), RequestMetrics()
    a.record(_request(3, 12, 10, 0), 100, 0, 5_000_000)
    b.record(_request(3, 12, 10, 0), 100, 3, 5_000_000)
    b.record(_request(18, 3, 10, 0), 100, 0, 5_000_000)
    total = merged([a, b])
    assert total[(3, 12)].count == 2 and total[(3, 12)].errors == {3: 1}
    assert total[(18, 3)].count == 1
    assert a.stats[(3, 12)].count == 1  # the shards themselves are untouched
