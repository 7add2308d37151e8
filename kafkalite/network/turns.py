"""Turns: the broker's busy threads (Processors, request handlers) run their Python work one at a
time, handing over at batch boundaries.

On CPython they run one at a time anyway: the GIL. But a thread drops the GIL at every system call
(each send, recv, poll), and when another thread is waiting for it, it takes it, so with three
Processors busy every system call became a thread switch (about four futex calls per request,
measured with ``strace -f -c``). Holding a turn from the end of one poll to the start of the next,
and a handler holding one per batch, makes the hand-over happen once per batch instead. Turns are
handed over in arrival order (FIFO), so no Processor starves.

A thread should not block while it holds its turn: Processors give it up around their poll and
around a wait for room in the request queue, handlers before a request that may wait. Turns guard
no data (the code is thread-safe without them), so a holder that blocks anyway, say a handler
stuck on a slow disk, must not stall the rest: after ``PRESUMED_BLOCKED_AFTER`` seconds the turn
counts as abandoned and threads run without one (trading the GIL as they would without turns)
until its holder gives it back.
"""

from __future__ import annotations

import collections
import threading
import time

PRESUMED_BLOCKED_AFTER = 0.02  # seconds; a batch takes far less


class Turns:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held = False
        self._since = 0.0  # when the current holder got the turn
        self._waiting: collections.deque[threading.Lock] = collections.deque()

    def acquire(self) -> bool:
        """Wait for the turn; False if the holder is presumed blocked and the caller goes on
        without it (then it must not call release)."""
        with self._lock:
            if not self._held:
                self._held = True
                self._since = time.monotonic()
                return True
            wait = self._since + PRESUMED_BLOCKED_AFTER - time.monotonic()
            if wait <= 0:
                return False
            baton = threading.Lock()
            baton.acquire()
            self._waiting.append(baton)
        if baton.acquire(timeout=wait):  # released by the thread whose turn ends
            return True
        with self._lock:
            try:
                self._waiting.remove(baton)
                return False
            except ValueError:
                pass  # handed over to us just now
        baton.acquire()
        return True

    def release(self) -> None:
        with self._lock:
            if self._waiting:
                self._waiting.popleft().release()  # straight to the next in line
                self._since = time.monotonic()
            else:
                self._held = False
