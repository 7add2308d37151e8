"""The quota math of server/client_quotas.py: Kafka's precedence (checked against a model of its
8 levels, Hypothesis), the Rate window, the throttle time formula and the token bucket."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalite.server.client_quotas import (
    DEFAULT,
    ClientQuotaManager,
    ClientQuotas,
    ControllerMutationQuotaManager,
    Rate,
    ThrottlingQuotaExceeded,
    entity,
    quota_limit,
    quota_metric_tags,
    throttle_time_ms,
)

KEY = "producer_byte_rate"
USERS, CLIENTS = ["alice", "bob"], ["app", "other"]
ENTITIES = ([entity(u, c) for u in USERS + [DEFAULT] for c in CLIENTS + [DEFAULT]]
            + [entity(u) for u in USERS + [DEFAULT]] + [entity(client_id=c) for c in CLIENTS + [DEFAULT]])


def model(q: dict, user: str, client: str) -> float | None:
    """Kafka's documented order: the first level with a quota wins."""
    for e in (entity(user, client), entity(user, DEFAULT), entity(user), entity(DEFAULT, client),
              entity(DEFAULT, DEFAULT), entity(DEFAULT), entity(client_id=client), entity(client_id=DEFAULT)):
        if e in q:
            return q[e]
    return None


@given(st.dictionaries(st.sampled_from(ENTITIES), st.integers(1, 10 ** 6)),
       st.sampled_from(USERS), st.sampled_from(CLIENTS))
def test_precedence_matches_kafkas_levels(q, user, client):
    quotas = ClientQuotas()
    for e, v in q.items():
        quotas.replace(e, {KEY: float(v)})
    tags = quota_metric_tags(quotas, KEY, user, client)
    assert quota_limit(quotas, KEY, tags) == model(q, user, client)


def test_rate_window_is_at_least_samples_minus_one_windows():
    r = Rate(11, 1000)
    r.record(1000, 0)
    assert r.window_size(0) == 10_000
    assert r.measure(0) == 100.0
    r.record(1000, 20_500)  # the first sample expired
    assert r.measure(20_500) == 100.0


def test_throttle_time_formula():
    assert throttle_time_ms(150, 100, 10_000) == 5000
    assert throttle_time_ms(100, 100, 10_000) == 0


def test_manager_throttles_over_the_bound_and_caps_request_quota():
    now = [0.0]
    quotas = ClientQuotas()
    quotas.replace(entity(client_id="c"), {KEY: 100.0})
    m = ClientQuotaManager("Produce", KEY, quotas, 11, 1, clock=lambda: now[0])
    assert m.record("u", "c", 500) == 0  # 500 over 10 s: 50/s
    assert m.record("u", "c", 1500) == 10_000  # 2000 over 10 s: 200/s, (200-100)/100 x 10 s
    assert m.record("u", "other", 10 ** 6) == 0  # another client id: no quota
    capped = ClientQuotaManager("Request", KEY, quotas, 11, 1, clock=lambda: now[0], max_throttle_ms=1000)
    assert capped.record("u", "c", 10 ** 6) == 1000


def test_token_bucket_strict_and_permissive():
    now = [0.0]
    quotas = ClientQuotas()
    quotas.replace(entity(client_id="c"), {"controller_mutation_rate": 2.0})
    m = ControllerMutationQuotaManager(quotas, 11, 1, clock=lambda: now[0])
    assert m.record_mutation("u", "c", 22, strict=True) == 0  # the whole burst
    assert m.record_mutation("u", "c", 4, strict=True) == 2000  # below zero: -(-4)/2 s
    with pytest.raises(ThrottlingQuotaExceeded) as e:
        m.record_mutation("u", "c", 1, strict=True)
    assert e.value.throttle_ms == 2000
    assert m.record_mutation("u", "c", 2, strict=False) == 3000  # permissive: accepted, throttled
    now[0] = 10.0  # 20 tokens back
    assert m.record_mutation("u", "c", 1, strict=True) == 0
