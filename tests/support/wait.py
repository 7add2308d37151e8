"""``wait_for``: the bounded wait tests use instead of sleeps."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def wait_for(predicate: Any, timeout: float = 5.0, interval: float = 0.01) -> bool:
    """Poll ``predicate`` until true or ``timeout``: the bounded wait tests use instead of sleeps."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())


def wait_for_value(get: Callable[[], T | None], timeout: float = 5.0, interval: float = 0.01) -> T | None:
    """Poll ``get`` until it returns something other than None, or ``timeout``: that value, else
    None (``wait_for`` for a value rather than a condition)."""
    found: list[T] = []

    def got() -> bool:
        value = get()
        if value is not None:
            found.append(value)
        return value is not None

    return found[-1] if wait_for(got, timeout, interval) else None
