"""Hypothesis strategies built from the declarations, so every message and version is covered."""

from __future__ import annotations

import functools
from typing import Any

from hypothesis import strategies as st

from kafkalite.protocol.schema import Array, Primitive, Struct

_INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint16": (0, 2**16 - 1),
}


def _primitive(t: Primitive) -> st.SearchStrategy[Any]:
    if t.name in _INT_RANGES:
        lo, hi = _INT_RANGES[t.name]
        return st.integers(lo, hi)
    if t.name == "float64":
        return st.floats(allow_nan=False)
    if t.name == "bool":
        return st.booleans()
    if t.name == "uuid":
        return st.uuids()
    if t.name == "string":
        return st.text(max_size=12)
    return st.binary(max_size=12)


def value_of(t: Any, version: int, nullable: bool) -> st.SearchStrategy[Any]:
    if isinstance(t, Primitive):
        s = _primitive(t)
    elif isinstance(t, Struct):
        s = struct_value(t, version)
    else:
        assert isinstance(t, Array)
        s = st.lists(value_of(t.item, version, False), max_size=3)
    return st.none() | s if nullable else s


@functools.cache
def struct_value(s: Struct, version: int) -> st.SearchStrategy[Any]:
    """Values of ``s`` with every field of ``version`` drawn and every other field at its default.
    Built once per (struct, version): a strategy built afresh in every example costs most of the
    example's time."""
    fields = {
        f.name: value_of(f.type, version, version in f.nullable)
        for f in s.fields
        if f.present_in(version) or f.tagged_in(version)
    }
    return st.fixed_dictionaries(fields).map(lambda kw: s.cls(**kw))
