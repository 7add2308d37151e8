"""Versions with the same codec are property-tested once.

Many versions of an api write exactly the same bytes (Produce v3-v8 requests, Fetch v7-v10
responses...): the compiler generates the same source for them. The property tests that exercise
the codec (round trips, malformed input, error counting) run for the first version of each such
group only; the kio oracle tests, which check the declarations version by version, run for every
version. This keeps tests/protocol's time proportional to the distinct encodings, not to the
number of versions Kafka lists.
"""

from __future__ import annotations

import pytest

from .layouts import same_codec_as_earlier

# The tests whose outcome depends on the generated codec only, not on the version's number.
CODEC_PROPERTY_TESTS = {
    ("test_roundtrip.py", "test_frame_roundtrip"),
    ("test_roundtrip.py", "test_unknown_tagged_fields_are_skipped_and_kept"),
    ("test_malformed.py", "test_random_bytes"),
    ("test_malformed.py", "test_truncated_and_mutated"),
    ("test_error_counts.py", "test_every_error_code_of_the_version_is_counted"),
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    keep, drop = [], []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        key = (item.path.name, getattr(item, "originalname", item.name))
        if (
            key in CODEC_PROPERTY_TESTS
            and {"api", "version", "response"} <= params.keys()
            and same_codec_as_earlier(params["api"], params["version"], params["response"])
        ):
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
