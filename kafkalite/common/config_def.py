"""Settings as data: a ``Setting`` row (Kafka's name, type, default, meaning and validator), the
validators (Kafka's ``Range.atLeast``, ``Range.between``, ``ValidString.in``, ...), the typed parse,
and typed views built from rows.

Each area of kafkalite declares its own rows next to a frozen dataclass, its typed view, whose
fields name the setting they come from (``fields_from(rows)``): a field's default is the row's
default, so each default is written once, and ``view(cls, values)`` builds the dataclass from a
configuration's values. The broker's configuration (server/config.py) assembles the areas' rows
into one table for loading, ``--override``, DescribeConfigs and docs/configuration.md.

Values are parsed as Kafka parses them: text is trimmed; ``int``/``long`` are 32/64-bit signed;
``bool`` is ``true``/``false`` in any case; ``list`` is comma separated with the items trimmed and an
empty text meaning ``[]``; ``map`` is ``key:value`` entries separated by commas, split at the last
colon (so IPv6 keys work). An empty text for a string setting whose default is null means "unset".
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from kafkalite.common.errors import ConfigError

__all__ = [
    "TYPES",
    "UPDATE_MODES",
    "Invalid",
    "OneOf",
    "Range",
    "Setting",
    "Validator",
    "at_least",
    "between",
    "each_value",
    "fields_from",
    "one_of",
    "view",
]


class Invalid(Exception):
    """Why a value is invalid; turned into a ConfigError naming the setting and the value."""


# --- validators ----------------------------------------------------------------------------------


class Validator:
    """Checks a parsed value (``check`` returns the reason it is invalid, or None) and describes the
    valid values for the docs (Kafka's notation: ``[1,...]``, ``[a, b]``)."""

    def check(self, value: Any) -> str | None:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def __call__(self, value: Any) -> None:
        reason = self.check(value)
        if reason is not None:
            raise Invalid(reason)


@dataclass(frozen=True)
class Range(Validator):
    low: int | None
    high: int | None

    def check(self, value: Any) -> str | None:
        if value is None:
            return None
        if self.low is not None and value < self.low:
            return f"must be at least {self.low}" if self.high is None else self._between()
        if self.high is not None and value > self.high:
            return f"must be at most {self.high}" if self.low is None else self._between()
        return None

    def _between(self) -> str:
        return f"must be between {self.low} and {self.high}"

    def describe(self) -> str:
        low = "..." if self.low is None else str(self.low)
        high = "..." if self.high is None else str(self.high)
        return f"[{low},...,{high}]" if self.low is not None and self.high is not None else f"[{low},{high}]"


def at_least(low: int) -> Validator:
    """Kafka's ``Range.atLeast``: the value (or, for a map, every value) is >= ``low``."""
    return Range(low, None)


def between(low: int, high: int) -> Validator:
    """Kafka's ``Range.between``: ``low <= value <= high``, both inclusive."""
    return Range(low, high)


def _show(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


@dataclass(frozen=True)
class OneOf(Validator):
    choices: tuple[Any, ...]

    def check(self, value: Any) -> str | None:
        allowed = ", ".join(_show(c) for c in self.choices)
        if isinstance(value, list):  # Kafka's ValidList.in: every item allowed, no duplicates
            for item in value:
                if item not in self.choices:
                    return f"{item!r} is not one of {allowed}"
            if len(set(value)) != len(value):
                return "duplicate entries"
            return None
        if value is None or value in self.choices:
            return None
        return f"only {allowed} is supported" if len(self.choices) == 1 else f"must be one of {allowed}"

    def describe(self) -> str:
        return "[" + ", ".join(_show(c) for c in self.choices) + "]"


def one_of(*choices: Any) -> Validator:
    """Kafka's ``ValidString.in`` / ``ValidList.in``: the value, or every item of a list, is a choice."""
    return OneOf(tuple(choices))


@dataclass(frozen=True)
class _EachValue(Validator):
    inner: Validator

    def check(self, value: Any) -> str | None:
        for key, item in (value or {}).items():
            reason = self.inner.check(item)
            if reason is not None:
                return f"value for {key!r} {reason}"
        return None

    def describe(self) -> str:
        return "each value " + self.inner.describe()


def each_value(inner: Validator) -> Validator:
    """For a map: every value passes ``inner``."""
    return _EachValue(inner)


# --- settings --------------------------------------------------------------------------

# "password" is a string that is never shown (Kafka's PASSWORD type, printed as [hidden]).
TYPES = ("int", "long", "double", "string", "password", "list", "bool", "map")
_INT_BOUNDS = {"int": (-(2**31), 2**31 - 1), "long": (-(2**63), 2**63 - 1)}
_INT_RE = re.compile(r"[+-]?[0-9]+")
_LIST_SPLIT = re.compile(r"\s*,\s*")


def _parse_double(text: str) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise Invalid("not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise Invalid("not a finite number")
    return value


def _parse_int(text: str, type_: str) -> int:
    text = text.strip()
    if not _INT_RE.fullmatch(text):
        raise Invalid("not an integer")
    value = int(text)
    low, high = _INT_BOUNDS[type_]
    if not low <= value <= high:
        raise Invalid(f"out of range for {type_} ({low}..{high})")
    return value


def _parse_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    raise Invalid("expected true or false")


def _parse_list(text: str) -> list[str]:
    text = text.strip()
    if not text:
        return []
    items = _LIST_SPLIT.split(text)
    if any(not item for item in items):
        raise Invalid("empty entry in comma-separated list")
    return items


# Kafka's update modes of broker settings, from the least to the most dynamic.
UPDATE_MODES = ("read-only", "per-broker", "cluster-wide")


@dataclass(frozen=True)
class Setting:
    """One setting: Kafka's name, type, default and meaning, plus a validator.

    ``default`` is the parsed (Python) value; None means "unset" (Kafka's null). ``item_type`` is the
    type of a map's values ("string" or "int"). ``kafka`` is False for kafkalite-only settings.
    ``group`` is the section of docs/configuration.md that lists it. ``update_mode`` is Kafka's
    "Update Mode" of a broker setting (DynamicBrokerConfig): ``read-only`` (only in the broker's
    configuration), ``per-broker`` (AlterConfigs for one broker id) or ``cluster-wide`` (also at
    the cluster default, the empty broker name).
    """

    name: str
    type: str
    default: Any
    doc: str
    validator: Validator | None = None
    aliases: tuple[str, ...] = ()
    group: str = "server"
    kafka: bool = True
    item_type: str = "string"
    update_mode: str = "read-only"

    def __hash__(self) -> int:  # defaults may be lists or dicts; a setting is identified by its name
        return hash(self.name)

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"setting {self.name}: unknown type {self.type!r}")
        if self.update_mode not in UPDATE_MODES:
            raise ValueError(f"setting {self.name}: unknown update mode {self.update_mode!r}")

    def parse(self, raw: object) -> Any:
        """The value for ``raw`` (text as in a properties file, or an already typed value), validated.

        Raises ConfigError naming this setting.
        """
        try:
            value = self._convert(raw)
            if self.validator is not None:
                self.validator(value)
        except Invalid as e:
            shown = raw if isinstance(raw, str) else str(raw)
            raise ConfigError(f"invalid value {shown!r} for {self.name}: {e}", self.name) from None
        return value

    def _convert(self, raw: object) -> Any:
        if isinstance(raw, str):
            return self._parse_text(raw)
        if self.type in ("int", "long") and isinstance(raw, int) and not isinstance(raw, bool):
            return _parse_int(str(raw), self.type)
        if self.type == "double" and isinstance(raw, int | float) and not isinstance(raw, bool):
            return _parse_double(str(raw))
        if self.type == "bool" and isinstance(raw, bool):
            return raw
        if self.type == "list" and isinstance(raw, list | tuple) and all(isinstance(i, str) for i in raw):
            return _parse_list(",".join(raw))
        if self.type == "map" and isinstance(raw, Mapping):
            return self._parse_text(self.render(dict(raw)))
        raise Invalid(f"expected a value of type {self.type}, got {type(raw).__name__}")

    def _parse_text(self, text: str) -> Any:
        if self.type in ("int", "long"):
            return _parse_int(text, self.type)
        if self.type == "double":
            return _parse_double(text)
        if self.type == "bool":
            return _parse_bool(text)
        if self.type == "list":
            return _parse_list(text)
        if self.type == "map":
            return self._parse_map(text)
        text = text.strip()
        return None if text == "" and self.default is None else text

    def _parse_map(self, text: str) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for entry in _parse_list(text):
            key, sep, value = entry.rpartition(":")
            key, value = key.strip(), value.strip()
            if not sep or not key or not value:
                raise Invalid(f"entry {entry!r} is not key:value")
            if key in result:
                raise Invalid(f"key {key!r} appears more than once")
            if self.item_type == "int":
                try:
                    result[key] = _parse_int(value, "int")
                except Invalid as e:
                    raise Invalid(f"value {value!r} for {key!r}: {e}") from None
            else:
                result[key] = value
        return result

    def render(self, value: Any) -> str:
        """``value`` as text in a properties file (the inverse of ``parse``); None renders as ""."""
        if value is None:
            return ""
        if self.type == "bool":
            return "true" if value else "false"
        if self.type == "list":
            return ",".join(value)
        if self.type == "map":
            return ",".join(f"{k}:{v}" for k, v in value.items())
        return str(value)

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


# --- typed views ---------------------------------------------------------------------------------

T = TypeVar("T")


def _copy(value: Any) -> Any:
    return copy.deepcopy(value)


def fields_from(*tables: Iterable[Setting]) -> Callable[..., Any]:
    """``field(name, convert=None)`` for the dataclass fields of a typed view: the field comes from
    setting ``name`` of ``tables``, its default is the setting's default (through ``convert``, say
    a unit or a list as a tuple), and ``view`` fills it from a configuration's values."""
    by_name = {s.name: s for table in tables for s in table}

    def field(name: str, convert: Callable[[Any], Any] = _copy) -> Any:
        setting = by_name[name]  # KeyError: no such setting in these tables
        metadata = {"setting": name, "convert": convert}
        default = convert(setting.default)
        if isinstance(default, list | dict | set):
            return dataclasses.field(default_factory=lambda: convert(setting.default), metadata=metadata)
        return dataclasses.field(default=default, metadata=metadata)

    return field


def view(cls: type[T], values: Mapping[str, Any], **given: Any) -> T:
    """The typed view ``cls`` of a configuration's ``values`` (by setting name): each field made by
    ``fields_from`` takes its setting's value; ``given`` gives the others (derived values)."""
    kwargs = dict(given)
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        name = f.metadata.get("setting")
        if name is not None and f.name not in kwargs:
            kwargs[f.name] = f.metadata["convert"](values[name])
    return cls(**kwargs)
