"""The replica fetcher's long poll: never past the moment a backed-off partition may join the
next fetch (its fetches against real leaders: test_replication.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kafkalite.server.replication.replica_fetcher import long_poll_ms


def test_the_long_poll_is_replica_fetch_wait_max_ms_unless_a_backoff_ends_sooner():
    assert long_poll_ms(500, []) == 500
    assert long_poll_ms(500, [0.0495]) == 50
    assert long_poll_ms(500, [0.9, 0.2]) == 201
    assert long_poll_ms(500, [2.0]) == 500


@given(st.integers(0, 30_000), st.lists(st.floats(0.0001, 60.0)))
def test_the_long_poll_ends_with_the_first_backoff_and_never_after_the_maximum(wait_max, backoffs):
    ms = long_poll_ms(wait_max, backoffs)
    assert ms <= wait_max
    assert all(ms <= b * 1000 + 1 for b in backoffs)
    assert ms == wait_max or any(ms >= b * 1000 for b in backoffs)  # as long as it may be
