"""Counting the error codes a response carries (Kafka's AbstractResponse.errorCounts()): every
response of every version, against a plain recursive walk and, where kio declares the message,
against kio's generated entities (which hold only the fields of their version)."""

from __future__ import annotations

import collections
import dataclasses
import enum

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalite.protocol import decode_body, encode_body
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.error_counts import (
    compile_counter,
    error_code_paths,
    error_counts,
    top_level_error_code,
)
from kafkalite.protocol.messages import BY_KEY, create_topics, metadata
from kafkalite.protocol.schema import INT16, STRING, Array, F, Struct

from .cases import body_cases
from .strategies import struct_value

RESPONSES = [p for p in body_cases() if p.values[2]]


def _walk(obj, version: int, counts: collections.Counter) -> None:
    """The oracle: every field of ``version`` named error_code, at any depth, one by one."""
    for f in obj.struct.fields:
        if not (f.present_in(version) or f.tagged_in(version)):
            continue
        v = getattr(obj, f.name)
        if f.name == "error_code":
            counts[v] += 1
        elif isinstance(v, list):
            for x in v:
                if hasattr(x, "struct"):
                    _walk(x, version, counts)
        elif hasattr(v, "struct"):
            _walk(v, version, counts)


@pytest.mark.slow
@pytest.mark.parametrize(("api", "version", "response"), RESPONSES)
@settings(max_examples=30)
@given(data=st.data())
def test_every_error_code_of_the_version_is_counted(api, version, response, data):
    value = data.draw(struct_value(api.response, version))
    # What a client reads: the value as decoded from its own bytes.
    decoded = decode_body(api.key, version, encode_body(api.key, version, value, response=True),
                          response=True)
    expected: collections.Counter = collections.Counter()
    _walk(decoded, version, expected)
    assert dict(error_counts(api.key, version, decoded)) == dict(expected)
    assert sum(error_counts(api.key, version, value).values()) == sum(expected.values())
    has_own = any(f.name == "error_code" and f.present_in(version) for f in api.response.fields)
    assert top_level_error_code(api.key, version, decoded) == (decoded.error_code if has_own else 0)


def test_a_create_topics_with_one_topic_of_three_refused():
    R = create_topics.RESPONSE
    body = R(topics=[R["topics"](name=n, error_code=c) for n, c in
                     (("a", E.NONE), ("b", E.TOPIC_ALREADY_EXISTS), ("c", E.NONE))])
    assert error_counts(19, 7, body) == {E.NONE: 2, E.TOPIC_ALREADY_EXISTS: 1}
    assert top_level_error_code(19, 7, body) == 0  # CreateTopics has no error of its own


def test_metadata_counts_topics_and_partitions_and_a_null_list_as_empty():
    R = metadata.RESPONSE
    T, P = R["topics"], R["topics"]["partitions"]
    body = R(topics=[
        T(name="a", error_code=E.NONE,
          partitions=[P(error_code=E.NONE), P(error_code=E.LEADER_NOT_AVAILABLE)]),
        T(name="b", error_code=E.UNKNOWN_TOPIC_OR_PARTITION, partitions=[]),
    ])
    assert error_counts(3, 12, body) == {E.NONE: 2, E.LEADER_NOT_AVAILABLE: 1,
                                         E.UNKNOWN_TOPIC_OR_PARTITION: 1}
    assert error_counts(3, 12, R(topics=[])) == {}
    assert error_counts(18, 3, BY_KEY[18].response(error_code=E.UNSUPPORTED_VERSION)) == {35: 1}


def test_only_the_fields_of_the_version_count():
    """A field named error_code that a version does not have is not part of that response."""
    item = Struct("Item", F("name", STRING), F("error_code", INT16, "1+"))
    s = Struct("Response", F("error_code", INT16, "2+"), F("items", Array(item), nullable="0+"),
               F("nested", item), F("other_error_code", INT16))
    assert error_code_paths(s, 0) == []
    assert error_code_paths(s, 1) == [(("items", True), ("error_code", False)),
                                      (("nested", False), ("error_code", False))]
    assert error_code_paths(s, 2) == [(("error_code", False),), *error_code_paths(s, 1)]
    value = s(error_code=1, items=[item(error_code=2), item(error_code=2)], nested=item(error_code=3),
              other_error_code=4)
    assert compile_counter(error_code_paths(s, 2))(value) == {1: 1, 2: 2, 3: 1}
    assert compile_counter(error_code_paths(s, 1))(value) == {2: 2, 3: 1}
    assert compile_counter(error_code_paths(s, 0))(value) == {}
    value.items = None  # null: no items
    assert compile_counter(error_code_paths(s, 2))(value) == {1: 1, 3: 1}


# --- kio (Aiven's generated Kafka types) as an independent oracle -----------------------------


def _kio_counts(entity, counts: collections.Counter) -> None:
    for f in dataclasses.fields(entity):
        v = getattr(entity, f.name)
        if f.name == "error_code":
            counts[int(v.value) if isinstance(v, enum.Enum) else int(v)] += 1
        elif dataclasses.is_dataclass(v):
            _kio_counts(v, counts)
        elif isinstance(v, tuple):
            for x in v:
                if dataclasses.is_dataclass(x):
                    _kio_counts(x, counts)


def _kio_cases() -> list:
    try:
        from .kio_bridge import oracle_cases
    except ImportError:
        return []
    apis = [BY_KEY[k] for k in (18, 3, 19, 20, 62, 63)]
    return [pytest.param(a, v, id=f"{a.name}-v{v}") for a, v, r in oracle_cases(apis) if r]


@pytest.mark.slow
@pytest.mark.parametrize(("api", "version"), _kio_cases())
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_the_same_counts_as_kios_entities(api, version, data):
    from .kio_bridge import kio_compatible_value, kio_entity, to_kio

    entity_type = kio_entity(api.key, version, True)
    value = data.draw(kio_compatible_value(api.response, version, entity_type))
    expected: collections.Counter = collections.Counter()
    _kio_counts(to_kio(value, entity_type), expected)
    assert dict(error_counts(api.key, version, value)) == dict(expected)
