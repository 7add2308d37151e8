"""Kafka's CoordinatorTimer over a purgatory: one pending callback per key, scheduling a key again
replaces it, cancelling completes it without calling back. The callback runs on the purgatory's
timer thread."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable

from ...purgatory import DelayedOperation, DelayedOperationPurgatory


class _Timeout(DelayedOperation):
    def __init__(self, delay_ms: int, fn: Callable[[], None]) -> None:
        super().__init__(delay_ms)
        self.fn = fn
        self.cancelled = False

    def try_complete(self) -> bool:
        return self.cancelled and self.force_complete()

    def on_complete(self) -> None:
        pass

    def on_expiration(self) -> None:
        if not self.cancelled:
            self.fn()


class PurgatoryTimer:
    def __init__(self, purgatory: DelayedOperationPurgatory) -> None:
        self.purgatory = purgatory
        self._lock = threading.Lock()
        self._pending: dict[Hashable, _Timeout] = {}

    def schedule(self, key: Hashable, delay_ms: int, fn: Callable[[], None]) -> None:
        self.cancel(key)
        op = _Timeout(delay_ms, fn)
        with self._lock:
            self._pending[key] = op
        self.purgatory.try_complete_else_watch(op, [("consumer-group-timer", key)])

    def cancel(self, key: Hashable) -> None:
        with self._lock:
            op = self._pending.pop(key, None)
        if op is not None:
            op.cancelled = True
            self.purgatory.check_and_complete(("consumer-group-timer", key))
