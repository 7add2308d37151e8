"""The grouping that lets the property tests run once per distinct codec (conftest.py)."""

from __future__ import annotations

from kafkalite.protocol.messages import fetch, produce

from .layouts import codec_groups, same_codec_as_earlier


def test_versions_with_the_same_bytes_share_a_group():
    assert codec_groups(produce.PRODUCE, False) == ((0, 1, 2), (3, 4, 5, 6, 7, 8), (9, 10, 11, 12), (13,))
    assert not same_codec_as_earlier(produce.PRODUCE, 3, False)
    assert same_codec_as_earlier(produce.PRODUCE, 4, False)


def test_a_new_field_or_flexibility_starts_a_group():
    groups = codec_groups(fetch.FETCH, True)
    firsts = [g[0] for g in groups]
    # v1 throttle time, v4 transactions, v5 log start, v7 sessions, v11 preferred replica,
    # v12 flexible, v13 topic ids, v16 node endpoints (the response of v18 is v17's)
    assert firsts == [0, 1, 4, 5, 7, 11, 12, 13, 16]
    assert sorted(v for g in groups for v in g) == list(range(0, 19))
