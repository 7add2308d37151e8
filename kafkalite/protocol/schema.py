"""The declarative form every Kafka message is written in.

A message is an :class:`Api` with a request and a response :class:`Struct`; a struct is an ordered
list of :class:`Field` objects, each with the versions it exists in, the versions it may be null
in, an optional tag (tagged fields) and a default. The compiler (``compiler.py``) turns one
declaration into a value class per struct and an encoder/decoder per version.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

from kafkalite.common.uuids import ZERO_UUID

from .api_keys import ApiKey

MAX_VERSION = 0x7FFF


@dataclass(frozen=True)
class Versions:
    """An inclusive version range, written as Kafka writes it: "0+", "3-5", "4", "none"."""

    low: int
    high: int

    @classmethod
    def parse(cls, text: str | Versions) -> Versions:
        if isinstance(text, Versions):
            return text
        text = text.strip()
        if text == "none":
            return cls(1, 0)
        if text.endswith("+"):
            return cls(int(text[:-1]), MAX_VERSION)
        if "-" in text:
            low, high = text.split("-")
            return cls(int(low), int(high))
        return cls(int(text), int(text))

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.low <= version <= self.high

    @property
    def empty(self) -> bool:
        return self.low > self.high

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.high == MAX_VERSION:
            return f"{self.low}+"
        return f"{self.low}" if self.low == self.high else f"{self.low}-{self.high}"


@dataclass(frozen=True)
class Primitive:
    """A scalar wire type. ``size`` is its fixed width, or None for length-prefixed types."""

    name: str
    size: int | None
    struct_code: str | None
    default: Any

    def __repr__(self) -> str:
        return self.name


INT8 = Primitive("int8", 1, "b", 0)
INT16 = Primitive("int16", 2, "h", 0)
INT32 = Primitive("int32", 4, "i", 0)
INT64 = Primitive("int64", 8, "q", 0)
UINT16 = Primitive("uint16", 2, "H", 0)
FLOAT64 = Primitive("float64", 8, "d", 0.0)
BOOL = Primitive("bool", 1, "?", False)
UUID = Primitive("uuid", 16, None, ZERO_UUID)
STRING = Primitive("string", None, None, "")
BYTES = Primitive("bytes", None, None, b"")
# Kafka's ``records`` type: bytes on the wire, decoded as a memoryview into the frame, so that a
# produced batch is checked, stamped and written where it was received, not copied.
RECORDS = Primitive("records", None, None, b"")

PRIMITIVES = (INT8, INT16, INT32, INT64, UINT16, FLOAT64, BOOL, UUID, STRING, BYTES, RECORDS)


@dataclass(frozen=True)
class Array:
    """An array of a primitive or of a struct."""

    item: Primitive | Struct

    def __repr__(self) -> str:
        return f"[]{self.item!r}"


FieldType = Union[Primitive, Array, "Struct"]

_NO_DEFAULT = object()


@dataclass(frozen=True)
class Field:
    """One field of a struct.

    ``versions``: where it exists. ``nullable``: where it may be null. ``tag`` with ``tagged``:
    a tagged field, present only as such in those (flexible) versions. ``flexible="none"`` keeps the
    non-compact encoding in flexible versions (the request header's client id). ``default`` is the
    value of a field absent from a version, or not given; otherwise the type's zero.
    """

    name: str
    type: FieldType
    versions: Versions = Versions(0, MAX_VERSION)
    nullable: Versions = Versions(1, 0)
    default: Any = _NO_DEFAULT
    tag: int | None = None
    tagged: Versions = Versions(1, 0)
    flexible: Versions | None = None
    about: str = ""

    def present_in(self, version: int) -> bool:
        """True when the field is written as a regular (untagged) field in ``version``."""
        return self.tag is None and version in self.versions

    def tagged_in(self, version: int) -> bool:
        return self.tag is not None and version in self.tagged

    def default_value(self) -> Any:
        """The default as a fresh value (a new list or struct instance each call)."""
        if self.default is not _NO_DEFAULT:
            d = self.default
            return list(d) if isinstance(d, list) else d
        if isinstance(self.type, Array):
            return []
        if isinstance(self.type, Struct):
            return self.type.cls()
        return self.type.default


def F(
    name: str,
    type: FieldType,
    versions: str = "0+",
    *,
    nullable: str = "none",
    default: Any = _NO_DEFAULT,
    tag: int | None = None,
    tagged: str | None = None,
    flexible: str | None = None,
    about: str = "",
) -> Field:
    """Shorthand for declaring a field with Kafka's version-range strings."""
    if tag is not None and tagged is None:
        tagged = versions
    return Field(
        name=name,
        type=type,
        versions=Versions.parse(versions),
        nullable=Versions.parse(nullable),
        default=default,
        tag=tag,
        tagged=Versions.parse(tagged or "none"),
        flexible=Versions.parse(flexible) if flexible is not None else None,
        about=about,
    )


class Struct:
    """A named, ordered list of fields. ``cls`` is the value class the compiler makes for it."""

    def __init__(self, name: str, *fields: Field) -> None:
        self.name = name
        self.fields: tuple[Field, ...] = fields
        names = [f.name for f in fields]
        if len(set(names)) != len(names):
            raise ValueError(f"{name}: duplicate field names")
        tags = [f.tag for f in fields if f.tag is not None]
        if len(set(tags)) != len(tags):
            raise ValueError(f"{name}: duplicate tags")
        self._cls: type | None = None

    @property
    def cls(self) -> type:
        if self._cls is None:
            self._cls = make_class(self)
        return self._cls

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.cls(*args, **kwargs)

    def __repr__(self) -> str:
        return self.name

    def __getitem__(self, name: str) -> Struct:
        """The struct a field holds (or holds an array of): ``RESPONSE["topics"](name=...)``."""
        for f in self.fields:
            if f.name == name:
                t = f.type.item if isinstance(f.type, Array) else f.type
                if isinstance(t, Struct):
                    return t
                raise KeyError(f"{self.name}.{name} is not a struct field")
        raise KeyError(f"{self.name} has no field {name}")

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"{self.name} has no field {name}")

    def structs(self) -> list[Struct]:
        """This struct and every struct nested in it, depth first."""
        found = [self]
        for f in self.fields:
            t = f.type.item if isinstance(f.type, Array) else f.type
            if isinstance(t, Struct):
                found.extend(t.structs())
        return found


@dataclass
class Api:
    """One Kafka api: key, name, valid versions, first flexible version, request and response."""

    key: int
    name: str
    versions: Versions
    flexible: Versions
    request: Struct
    response: Struct
    codecs: dict = field(default_factory=dict, repr=False, compare=False)

    def is_flexible(self, version: int) -> bool:
        return version in self.flexible


def api(key: ApiKey, versions: str, flexible: str, request: Struct, response: Struct) -> Api:
    """A message: its key (which names it), valid versions, first flexible version, and bodies."""
    return Api(key, key.api_name, Versions.parse(versions), Versions.parse(flexible), request, response)


# --- value classes (one per struct, made on first use) ------------------------------------------

_MISSING = object()


def make_class(s: Struct) -> type:
    """A __slots__ class with every field of every version, keyword or positional construction."""
    names = [f.name for f in s.fields]
    env: dict[str, Any] = {"_MISSING": _MISSING}
    params, body = [], []
    for i, f in enumerate(s.fields):
        d = f.default_value()
        if isinstance(d, (list, Struct)) or hasattr(d, "__slots__"):
            # Mutable default: a fresh one per instance.
            env[f"_d{i}"] = f.default_value
            params.append(f"{f.name}=_MISSING")
            body.append(f"    self.{f.name} = _d{i}() if {f.name} is _MISSING else {f.name}")
        else:
            env[f"_d{i}"] = d
            params.append(f"{f.name}=_d{i}")
            body.append(f"    self.{f.name} = {f.name}")
    params.append("unknown_tags=None")
    body.append("    self.unknown_tags = unknown_tags")
    src = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body) + "\n"
    exec(compile(src, f"<kafkalite {s.name}.__init__>", "exec"), env)

    def __eq__(self: Any, other: Any) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in names)
        if self.unknown_tags:
            inner += f", unknown_tags={self.unknown_tags!r}"
        return f"{s.name}({inner})"

    def to_dict(self: Any) -> dict:
        """Plain dicts and lists, recursively (for logging and comparison)."""
        return {n: _plain(getattr(self, n)) for n in names}

    return type(
        s.name,
        (),
        {
            "__slots__": tuple(names) + ("unknown_tags",),
            "__init__": env["__init__"],
            "__eq__": __eq__,
            "__hash__": None,
            "__repr__": __repr__,
            "to_dict": to_dict,
            "struct": s,
        },
    )


def _plain(v: Any) -> Any:
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if hasattr(v, "to_dict"):
        return v.to_dict()
    return v
