"""Bridge between kafkalite's declarations and kio's generated entities (test-only).

kio (PyPI ``kio``) generates one frozen dataclass per (api, version, request/response), with
only the fields of that version. Its names match kafkalite's except that ``..._ms`` durations
are ``datetime.timedelta`` fields without the suffix (``throttle_time_ms`` -> ``throttle_time``),
``..._ms`` timestamps are ``datetime.datetime`` fields without the suffix, -1 being None
(``log_append_time_ms`` -> ``log_append_time``; where kio's type has no None, only timestamps >= 0
are drawn), error codes are ``kio.schema.errors.ErrorCode`` enum members and a zero uuid may read
as None.

This module converts both sides to plain dicts (keyed by kafkalite's names) for comparison,
converts kafkalite values to kio entities, and draws kafkalite values that kio can represent
(error codes restricted to the codes kio's enum knows).
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import io
import types
import typing
from functools import cache
from typing import Any

from hypothesis import strategies as st
from kio.index import load_request_schema, load_response_schema
from kio.schema.errors import ErrorCode
from kio.schema.index import api_key_map, schema_name_map
from kio.serial import entity_reader, entity_writer
from kio.static.constants import EntityType

from kafkalite.common.uuids import ZERO_UUID
from kafkalite.protocol.schema import Api, Array, Field, Primitive, Struct

from .strategies import _primitive

_MS = datetime.timedelta(milliseconds=1)
_TIMEDELTA_TYPES = ("timedelta_i32", "timedelta_i64")
_DATETIME = "datetime_i64"  # kio's timestamps in ms: -1 reads as None
_REQUIRED_DATETIME = "required datetime_i64"  # (strategies only) a timestamp kio cannot make None


# --- kio introspection -----------------------------------------------------------------------


def kio_versions(api_key: int) -> set[int]:
    """The versions kio has entities for (request and response both)."""
    by_version = schema_name_map[api_key_map[api_key]]
    return {
        v for v, kinds in by_version.items()
        if EntityType.request in kinds and EntityType.response in kinds
    }


def kio_entity(api_key: int, version: int, response: bool) -> type:
    return load_response_schema(api_key, version) if response else load_request_schema(api_key, version)


@cache
def kio_reader(entity_type: type) -> Any:
    """``read(buf, offset) -> (entity, bytes_read)``; the body only, no header."""
    return entity_reader(entity_type)


@cache
def kio_writer(entity_type: type) -> Any:
    """``write(file_like, entity)``; the body only, no header."""
    return entity_writer(entity_type)


def kio_encode(entity: Any) -> bytes:
    buf = io.BytesIO()
    kio_writer(type(entity))(buf, entity)
    return buf.getvalue()


def kio_decode(entity_type: type, data: bytes) -> Any:
    value, size = kio_reader(entity_type)(data, 0)
    assert size == len(data), f"kio read {size} of {len(data)} bytes"
    return value


@cache
def kio_fields(entity_type: type) -> tuple[tuple[dataclasses.Field, str, type | None], ...]:
    """(kio field, kafkalite name, nested entity type or None) for each field of ``entity_type``."""
    hints = typing.get_type_hints(entity_type)
    out = []
    for f in dataclasses.fields(entity_type):
        kafka_type = f.metadata.get("kafka_type")
        name = f.name + "_ms" if kafka_type in (*_TIMEDELTA_TYPES, _DATETIME) else f.name
        out.append((f, name, _nested_entity(hints[f.name])))
    return tuple(out)


@cache
def _kio_nullable(entity_type: type) -> frozenset[str]:
    """kafkalite names of the fields kio types as ``X | None`` (uuids and timestamps aside: kio's
    None there is the zero uuid or -1, not a null)."""
    hints = typing.get_type_hints(entity_type)
    return frozenset(
        name for f, name, _ in kio_fields(entity_type)
        if f.metadata.get("kafka_type") not in ("uuid", _DATETIME)
        and type(None) in typing.get_args(hints[f.name])
    )


@cache
def _kio_required_datetimes(entity_type: type) -> frozenset[str]:
    """kafkalite names of the timestamps kio types without None (DescribeTransactions' start time):
    -1 has no value there."""
    hints = typing.get_type_hints(entity_type)
    return frozenset(
        name for f, name, _ in kio_fields(entity_type)
        if f.metadata.get("kafka_type") == _DATETIME and type(None) not in typing.get_args(hints[f.name])
    )


def _nested_entity(hint: Any) -> type | None:
    """The dataclass inside ``X``, ``X | None``, ``tuple[X, ...]`` or ``tuple[X, ...] | None``."""
    if dataclasses.is_dataclass(hint):
        return hint  # type: ignore[return-value]
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType, tuple):
        for arg in typing.get_args(hint):
            if arg is not type(None) and arg is not Ellipsis:
                found = _nested_entity(arg)
                if found is not None:
                    return found
    return None


def kio_field_types(entity_type: type) -> dict[str, str | None]:
    """kafkalite field name -> kio's ``kafka_type`` (None for entity fields)."""
    return {name: f.metadata.get("kafka_type") for f, name, _ in kio_fields(entity_type)}


# --- plain dicts -----------------------------------------------------------------------------


def _plain_scalar(v: Any) -> Any:
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, enum.Enum):
        return int(v.value)
    if isinstance(v, datetime.timedelta):
        return v // _MS
    if isinstance(v, datetime.datetime):
        return round(v.timestamp() * 1000)
    if isinstance(v, int):
        return int(v)
    if isinstance(v, str):
        return str(v)
    if isinstance(v, bytes):
        return bytes(v)
    if isinstance(v, float):
        return float(v)
    return v


def kio_to_dict(entity: Any) -> dict:
    """A kio entity as a dict keyed by kafkalite's field names, with plain values."""
    out = {}
    for f, name, nested in kio_fields(type(entity)):
        v = getattr(entity, f.name)
        if f.metadata.get("kafka_type") == "uuid":
            if isinstance(v, tuple):  # an array of uuids
                v = [ZERO_UUID if x is None else x for x in v]
            else:
                v = ZERO_UUID if v is None else v
        elif f.metadata.get("kafka_type") == _DATETIME and v is None:
            v = -1
        elif nested is not None:
            if isinstance(v, tuple):
                v = [kio_to_dict(x) for x in v]
            elif v is not None:
                v = kio_to_dict(v)
        elif isinstance(v, tuple):
            v = [_plain_scalar(x) for x in v]
        else:
            v = _plain_scalar(v)
        out[name] = v
    return out


def _in_version(f: Field, version: int) -> bool:
    return f.present_in(version) or f.tagged_in(version)


def kafkalite_to_dict(obj: Any, version: int) -> dict:
    """A kafkalite value as a dict of the fields it has in ``version`` only."""
    out = {}
    for f in obj.struct.fields:
        if not _in_version(f, version):
            continue
        v = getattr(obj, f.name)
        if isinstance(v, list):
            v = [kafkalite_to_dict(x, version) if hasattr(x, "struct") else _plain_scalar(x) for x in v]
        elif hasattr(v, "struct"):
            v = kafkalite_to_dict(v, version)
        else:
            v = _plain_scalar(v)
        out[f.name] = v
    return out


# --- kafkalite -> kio ------------------------------------------------------------------------


def _to_kio_scalar(v: Any, kafka_type: str | None) -> Any:
    if v is None:
        return None
    if kafka_type == "error_code":
        return ErrorCode(v)
    if kafka_type in _TIMEDELTA_TYPES:
        return datetime.timedelta(milliseconds=v)
    if kafka_type == _DATETIME:
        return None if v == -1 else datetime.datetime.fromtimestamp(v / 1000, datetime.UTC)
    return v


def to_kio(obj: Any, entity_type: type) -> Any:
    """The kio entity of ``entity_type`` holding the same values as the kafkalite value ``obj``."""
    kwargs = {}
    for f, name, nested in kio_fields(entity_type):
        v = getattr(obj, name)
        kafka_type = f.metadata.get("kafka_type")
        if nested is not None:
            if isinstance(v, list):
                v = tuple(to_kio(x, nested) for x in v)
            elif v is not None:
                v = to_kio(v, nested)
        elif isinstance(v, list):
            v = tuple(_to_kio_scalar(x, kafka_type) for x in v)
        else:
            v = _to_kio_scalar(v, kafka_type)
        kwargs[f.name] = v
    return entity_type(**kwargs)


# --- strategies ------------------------------------------------------------------------------

_ERROR_CODES = sorted(int(e.value) for e in ErrorCode)


def _value(t: Any, kio_type: Any, version: int, nullable: bool) -> st.SearchStrategy[Any]:
    """Values of kafkalite type ``t``; ``kio_type`` is kio's kafka_type string, or its entity."""
    if isinstance(t, Array):
        s: st.SearchStrategy[Any] = st.lists(_value(t.item, kio_type, version, False), max_size=3)
    elif isinstance(t, Struct):
        s = kio_compatible_value(t, version, kio_type)
    else:
        assert isinstance(t, Primitive)
        if kio_type == "error_code":
            s = st.sampled_from(_ERROR_CODES)
        elif kio_type == _DATETIME:
            s = st.just(-1) | st.integers(0, 2**41)  # what a datetime holds to the ms
        elif kio_type == _REQUIRED_DATETIME:
            s = st.integers(0, 2**41)
        else:
            s = _primitive(t)
    return st.none() | s if nullable else s


def kio_compatible_value(s: Struct, version: int, entity_type: type) -> st.SearchStrategy[Any]:
    """kafkalite values of ``s`` at ``version`` that kio's ``entity_type`` can represent."""
    by_name = {name: (f.metadata.get("kafka_type"), nested)
               for f, name, nested in kio_fields(entity_type)}
    kio_nullable = _kio_nullable(entity_type)
    required_datetimes = _kio_required_datetimes(entity_type)
    fields = {}
    for f in s.fields:
        if not _in_version(f, version):
            continue
        kafka_type, nested = by_name[f.name]
        # Null is drawn where either side allows it, so that a nullability one side lacks fails.
        nullable = version in f.nullable or f.name in kio_nullable
        if f.name in required_datetimes:
            kafka_type = _REQUIRED_DATETIME
        fields[f.name] = _value(f.type, nested or kafka_type, version, nullable)
    return st.fixed_dictionaries(fields).map(lambda kw: s.cls(**kw))


def oracle_cases(apis: list[Api]) -> list[tuple[Api, int, bool]]:
    """(api, version, response) for every version kafkalite and kio both have."""
    cases = []
    for a in apis:
        ours = set(range(a.versions.low, a.versions.high + 1))
        for v in sorted(ours & kio_versions(a.key)):
            for response in (False, True):
                cases.append((a, v, response))
    return cases
