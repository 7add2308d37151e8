"""Typed views built from setting rows: a field's default is its row's, ``view`` fills it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pytest

from kafkalite.common.config_def import Setting, at_least, fields_from, one_of, view
from kafkalite.common.errors import ConfigError

ROWS = (
    Setting("a.count", "int", 3, "A count.", validator=at_least(1)),
    Setting("a.names", "list", ["x", "y"], "Some names.", validator=one_of("x", "y", "z")),
    Setting("a.map", "map", {}, "A map.", item_type="int"),
    Setting("a.minutes", "int", 2, "Minutes."),
)
_field = fields_from(ROWS)


@dataclass(frozen=True)
class AView:
    owner: str
    count: int = _field("a.count")
    names: tuple[str, ...] = _field("a.names", tuple)
    mapping: Mapping[str, int] = _field("a.map")
    ms: int = _field("a.minutes", lambda m: m * 60000)


def test_defaults_come_from_the_rows_through_their_conversion():
    assert AView("me") == AView("me", 3, ("x", "y"), {}, 120000)
    assert AView("me").mapping is not AView("me").mapping  # a mutable default is made anew


def test_a_view_takes_each_setting_and_the_given_values():
    values = {"a.count": 5, "a.names": ["z"], "a.map": {"k": 1}, "a.minutes": 1}
    assert view(AView, values, owner="me") == AView("me", 5, ("z",), {"k": 1}, 60000)
    assert view(AView, values, owner="me", count=9).count == 9


def test_a_field_names_a_setting_of_its_rows():
    with pytest.raises(KeyError):
        _field("no.such")


def test_rows_parse_and_validate_as_kafka():
    count, names = ROWS[0], ROWS[1]
    assert count.parse(" 7 ") == 7
    with pytest.raises(ConfigError, match=r"a\.count.*at least 1"):
        count.parse("0")
    assert names.parse("x, z") == ["x", "z"]
    with pytest.raises(ConfigError, match="duplicate"):
        names.parse("x,x")
