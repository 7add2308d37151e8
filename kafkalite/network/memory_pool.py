"""Kafka's request memory pool (queued.max.request.bytes): the bytes of requests a SocketServer's
data plane holds, from the moment a request's size is read until it is parsed.

As Kafka's SimpleMemoryPool in its non-strict mode, a request is always given its buffer while
any memory is left, so one request larger than what is left still goes through, and the pool
can end up to one request over its size. While nothing is left (``out_of_memory``), Processors
stop reading from every connection that is not already in the middle of a request (Kafka's
Selector mutes them) and read again once requests are parsed and their bytes given back. So a
flood of large requests holds at most the pool's size plus one request per Processor (each
checks the pool before it reads a new request's size).

``queued.max.request.bytes`` -1 (the default) means no pool: nothing is counted.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class MemoryPool:
    def __init__(self, size: int) -> None:
        if size <= 0:
            raise ValueError(f"a memory pool needs a positive size, not {size}")
        self.size = size
        self._available = size
        self._lock = threading.Lock()
        self.peak_used = 0
        self.depleted_ns = 0  # time spent out of memory (Kafka's MemoryPoolDepletedTimeTotal)
        self._depleted_since = 0
        # Called when memory is back: the Processors sharing the pool wake to read again.
        self.on_available: list[Callable[[], None]] = []

    @property
    def available(self) -> int:
        return self._available

    @property
    def used(self) -> int:
        return self.size - self._available

    @property
    def out_of_memory(self) -> bool:
        return self._available <= 0

    def take(self, n: int) -> None:
        """Count ``n`` more bytes as held (the caller checked :attr:`out_of_memory` first)."""
        with self._lock:
            before = self._available
            self._available -= n
            used = self.size - self._available
            if used > self.peak_used:
                self.peak_used = used
            if before > 0 >= self._available:
                self._depleted_since = time.monotonic_ns()

    def release(self, n: int) -> None:
        with self._lock:
            before = self._available
            self._available += n
            back = before <= 0 < self._available
            if back:
                self.depleted_ns += time.monotonic_ns() - self._depleted_since
        if back:
            for wake in self.on_available:
                wake()
