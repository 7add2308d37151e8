"""Turns: the broker's busy threads (Processors, request handlers) run their Python work one at a
time, handing over at batch boundaries.

On CPython they run one at a time anyway: the GIL. But a thread drops the GIL at every system call
(each send, recv, poll), and when another thread is waiting for it, it takes it, so with three
Processors busy every system call became a thread switch (about four futex calls per request,
measured with ``strace -f -c``). Holding a turn from the end of one poll to the start of the next,
and a handler holding one per batch, makes the hand-over happen once per batch instead. Turns are
handed over in arrival order (FIFO), so no Processor starves.

A thread never blocks while it holds its turn: Processors give it up around their poll and around
a wait for room in the request queue, handlers before a request that may wait.
"""

from __future__ import annotations

import collections
import threading


class Turns:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held = False
        self._waiting: collections.deque[threading.Lock] = collections.deque()

    def acquire(self) -> None:
        with self._lock:
            if not self._held:
                self._held = True
                return
            baton = threading.Lock()
            baton.acquire()
            self._waiting.append(baton)
        baton.acquire()  # released by the thread whose turn ends: the turn is ours

    def release(self) -> None:
        with self._lock:
            if self._waiting:
                self._waiting.popleft().release()  # straight to the next in line
            else:
                self._held = False

    def __enter__(self) -> Turns:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
