"""Replica assignment and topic names, against Kafka's AdminUtils and Topic tests."""

from __future__ import annotations

import collections

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalite.common.errors import ApiError
from kafkalite.controller.assignment import assign_replicas, validate_topic_name
from kafkalite.protocol import error_codes as E


def test_kafka_reference_assignment():
    # AdminRackAwareTest/AdminUtilsTest's expectation for 5 brokers, 10 partitions, RF 3, start 0.
    expected = {
        0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
        5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2],
    }
    assert assign_replicas(10, 3, [0, 1, 2, 3, 4], fixed_start_index=0) == expected


@given(st.integers(1, 50), st.integers(1, 5), st.lists(st.integers(0, 100), min_size=1, max_size=6,
                                                      unique=True), st.randoms())
def test_assignment_properties(partitions, rf, brokers, rng):
    if rf > len(brokers):
        with pytest.raises(ApiError) as info:
            assign_replicas(partitions, rf, brokers, rng)
        assert info.value.code == E.INVALID_REPLICATION_FACTOR
        return
    result = assign_replicas(partitions, rf, brokers, rng)
    assert sorted(result) == list(range(partitions))
    for replicas in result.values():
        assert len(replicas) == rf and len(set(replicas)) == rf and set(replicas) <= set(brokers)
    leaders = collections.Counter(r[0] for r in result.values())
    # Leaders spread round-robin: no broker leads more than one partition above another.
    counts = [leaders.get(b, 0) for b in brokers]
    assert max(counts) - min(counts) <= 1


@pytest.mark.parametrize(("partitions", "rf", "code"), [
    (0, 1, E.INVALID_PARTITIONS), (-3, 1, E.INVALID_PARTITIONS),
    (1, 0, E.INVALID_REPLICATION_FACTOR), (1, 4, E.INVALID_REPLICATION_FACTOR),
])
def test_invalid_counts(partitions, rf, code):
    with pytest.raises(ApiError) as info:
        assign_replicas(partitions, rf, [1, 2, 3])
    assert info.value.code == code


@pytest.mark.parametrize("name", ["", ".", "..", "a" * 250, "has space", "slash/y", "ünïcode"])
def test_illegal_topic_names(name):
    with pytest.raises(ApiError) as info:
        validate_topic_name(name)
    assert info.value.code == E.INVALID_TOPIC_EXCEPTION


@pytest.mark.parametrize("name", ["a", "orders", "a.b_c-D9", "x" * 249, "..."])
def test_legal_topic_names(name):
    validate_topic_name(name)
