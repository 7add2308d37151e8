"""``wait_for``: the bounded wait tests use instead of sleeps."""

from __future__ import annotations

import time
from typing import Any


def wait_for(predicate: Any, timeout: float = 5.0, interval: float = 0.01) -> bool:
    """Poll ``predicate`` until true or ``timeout``: the bounded wait tests use instead of sleeps."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())
