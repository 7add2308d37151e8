"""Medians and table cells shared by the benches: a measurement that failed is NaN, left out of
medians and shown as '-'."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable


def median(values: Iterable[float]) -> float:
    """The median of the values that are not NaN; NaN if none is."""
    good = [v for v in values if not math.isnan(v)]
    return statistics.median(good) if good else math.nan


def count(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:,.0f}"


def millis(seconds: float) -> str:
    return "-" if math.isnan(seconds) else f"{seconds * 1000:,.0f}"


def ratio(a: float, b: float) -> str:
    return "-" if math.isnan(a) or math.isnan(b) or b == 0 else f"{a / b:.2f}x"
