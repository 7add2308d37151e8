"""The uniform and range assignors: every subscribed partition to exactly one subscriber, balance,
stickiness, range's contiguous co-partitioned ranges."""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from kafkalite.server.coordinator.consumer_group.assignors import range_, uniform

T = [uuid.UUID(int=i + 1) for i in range(4)]

subscriptions = st.dictionaries(st.sampled_from([f"m{i}" for i in range(6)]),
                                st.frozensets(st.sampled_from(T), min_size=1), min_size=1)
partitions = st.fixed_dictionaries({t: st.integers(0, 9) for t in T})


def _owners(result):
    owners: dict[tuple[uuid.UUID, int], list[str]] = {}
    for m, a in result.items():
        for t, ps in a.items():
            for p in ps:
                owners.setdefault((t, p), []).append(m)
    return owners


@given(subscriptions, partitions, st.sampled_from([uniform, range_]))
def test_every_subscribed_partition_goes_to_exactly_one_subscriber(subs, counts, assignor):
    result = assignor(subs, counts, {})
    owners = _owners(result)
    wanted = {(t, p) for t in T for p in range(counts[t]) if any(t in s for s in subs.values())}
    assert set(owners) == wanted
    for (t, _), ms in owners.items():
        assert len(ms) == 1 and t in subs[ms[0]]


@given(st.integers(1, 6), partitions, st.data())
def test_uniform_is_balanced_and_sticky_for_one_subscription(n, counts, data):
    subs = {f"m{i}": frozenset(T) for i in range(n)}
    first = uniform(subs, counts, {})
    loads = [sum(len(ps) for ps in a.values()) for a in first.values()]
    assert max(loads) - min(loads) <= 1
    # One member more: the others keep all they can (each moves at most its surplus).
    subs["new"] = frozenset(T)
    second = uniform(subs, counts, first)
    loads = [sum(len(ps) for ps in a.values()) for a in second.values()]
    assert max(loads) - min(loads) <= 1
    for m, a in first.items():
        kept = sum(len(a.get(t, frozenset()) & second[m].get(t, frozenset())) for t in T)
        assert kept == min(sum(len(ps) for ps in a.values()), sum(len(ps) for ps in second[m].values()))


def test_range_gives_contiguous_co_partitioned_ranges():
    subs = {"a": frozenset(T[:2]), "b": frozenset(T[:2])}
    result = range_(subs, {T[0]: 5, T[1]: 5}, {})
    assert result["a"] == {T[0]: frozenset({0, 1, 2}), T[1]: frozenset({0, 1, 2})}
    assert result["b"] == {T[0]: frozenset({3, 4}), T[1]: frozenset({3, 4})}
