"""Requests that wait without holding a thread: Kafka's DelayedOperation and
DelayedOperationPurgatory (server-common, org.apache.kafka.server.purgatory).

A handler that cannot answer yet (CreateTopics until the metadata shows the topic, later Produce
with acks=all, Fetch with max_wait_ms, JoinGroup) wraps the request in a ``DelayedOperation`` and
hands it to a purgatory with ``try_complete_else_watch(operation, keys)``, then goes on to its
next request. The operation is answered (``on_complete``) exactly once, by whichever comes first:

- the thread that makes it completable (an append, a metadata change) calling
  ``check_and_complete(key)`` for a key the operation watches;
- the purgatory's timer thread, ``ExpirationReaper-<broker>-<name>``, when ``delay_ms`` has passed
  since the operation was watched (then ``on_expiration`` follows ``on_complete``);
- anyone calling ``force_complete()``.

Differences from Kafka, all for size: one heap of deadlines instead of the hierarchical timing
wheel (Kafka's SystemTimer), and one lock per purgatory instead of 512 watcher shards (CPython runs
one thread at a time anyway). A completed operation leaves its watch lists and the timer at once
(Kafka purges every ``purgeInterval`` operations), so memory follows the pending operations only.

Locks, in the only order they are taken (a thread holding one may take those below it, never
those above):

1. an operation's ``lock`` (reentrant; Kafka's operation lock, which subclasses may share, as
   DelayedJoin shares its group's). Held around ``try_complete``, hence around ``on_complete``
   when ``try_complete`` completes the operation.
2. the purgatory's ``_lock`` (watch lists, timer heap, and the timer thread's Condition). Held only
   for bookkeeping: no callback (``try_complete``, ``on_complete``, ``on_expiration``) ever runs
   under it, so a callback may send a response, take other locks, or call into this or another
   purgatory.

The completed flag needs no place in the order: it is a test-and-set that never waits.

Callbacks may take operation locks of other operations (say, ``on_complete`` calling
``check_and_complete`` on another purgatory); as in Kafka, it is up to them not to make a cycle.
Expiry calls ``force_complete`` without the operation's lock, as Kafka does, so that one slow
``try_complete`` does not hold up every expiry; ``on_complete`` still runs once. The reaper runs
the callbacks of what expires itself, one after another (Kafka's single timer executor): a slow
one delays the expiries behind it, not the rest of the purgatory.

Shutdown (Kafka's: stop the reaper and nothing else): ``shutdown()`` stops the timer thread
within its timeout. Pending operations are neither completed nor expired; they stay watched, and
``check_and_complete`` still completes them. New operations are refused.
"""

from __future__ import annotations

import abc
import heapq
import itertools
import logging
import threading
import time
from collections.abc import Hashable, Iterable
from contextlib import AbstractContextManager

from kafkalite.metrics.components import purgatory_metrics
from kafkalite.metrics.registry import MetricsRegistry

log = logging.getLogger("kafkalite.server.purgatory")


class DelayedOperation(abc.ABC):
    """An operation that waits at most ``delay_ms`` (Kafka's DelayedOperation). Subclasses define
    ``try_complete``, ``on_complete`` and ``on_expiration``."""

    def __init__(self, delay_ms: float, lock: AbstractContextManager[bool] | None = None) -> None:
        self.delay_ms = delay_ms
        # Kafka's lockOpt: operations that read shared state may share that state's lock.
        self.lock: AbstractContextManager[bool] = lock if lock is not None else threading.RLock()
        # A lock that is never released is an atomic test-and-set: the first non-blocking acquire
        # wins, every later one fails (Kafka's AtomicBoolean.compareAndSet).
        self._completed = threading.Lock()
        # Set by the purgatory, read under its lock.
        self._purgatory: DelayedOperationPurgatory | None = None
        self._keys: tuple[Hashable, ...] = ()
        self._timer_entry: _TimerEntry | None = None

    @abc.abstractmethod
    def try_complete(self) -> bool:
        """If the operation can complete now, call ``force_complete()`` and return what it
        returns; else False. Called with ``self.lock`` held."""

    @abc.abstractmethod
    def on_complete(self) -> None:
        """Send the response. Called exactly once, by ``force_complete``."""

    @abc.abstractmethod
    def on_expiration(self) -> None:
        """Called after ``on_complete`` when the operation completed because it timed out."""

    @property
    def is_completed(self) -> bool:
        return self._completed.locked()

    def force_complete(self) -> bool:
        """Complete the operation unless it already is: True only for the one caller that did."""
        if not self._completed.acquire(blocking=False):
            return False
        purgatory = self._purgatory
        if purgatory is not None:
            # Before on_complete, which may be slow: the purgatory lets go of it at once.
            purgatory._forget(self)
        self.on_complete()
        return True

    def safe_try_complete(self) -> bool:
        """``try_complete`` under the operation's lock, unless already completed (Kafka's
        safeTryComplete): two threads never run ``try_complete`` of one operation at once."""
        with self.lock:
            return not self.is_completed and self.try_complete()


class _TimerEntry:
    __slots__ = ("operation",)

    def __init__(self, operation: DelayedOperation) -> None:
        self.operation: DelayedOperation | None = operation  # None once cancelled or expired


class DelayedOperationPurgatory:
    """Operations watched by key and expired by one timer thread (Kafka's
    DelayedOperationPurgatory with its SystemTimer and ExpiredOperationReaper)."""

    def __init__(self, name: str, broker_id: int, metrics: MetricsRegistry | None = None) -> None:
        """``metrics``: the broker's registry, where the purgatory reports its PurgatorySize and
        NumDelayedOperations (``delayedOperation=<name>``) until it shuts down."""
        self.name = name
        self._lock = threading.Lock()
        self._wakeup = threading.Condition(self._lock)  # the reaper waits on it for a deadline
        self._watchers: dict[Hashable, dict[int, DelayedOperation]] = {}  # by key, then id()
        self._watched = 0  # sum of the watch lists' lengths
        self._timer_queue: list[tuple[float, int, _TimerEntry]] = []  # heap of (deadline, seq, ..)
        self._timer_dead = 0  # entries in the heap whose operation completed before its deadline
        self._timer_seq = itertools.count()  # orders equal deadlines, never compares entries
        self._stopped = False
        self.expiration_reaper = threading.Thread(
            target=self._reap, name=f"ExpirationReaper-{broker_id}-{name}", daemon=True
        )
        self.expiration_reaper.start()
        self._metrics = (metrics or MetricsRegistry()).register(f"purgatory:{name}", purgatory_metrics(self))

    def try_complete_else_watch(self, operation: DelayedOperation, keys: Iterable[Hashable]) -> bool:
        """Complete ``operation`` now if it can; else watch it under ``keys`` and arm its timer.
        True iff this call completed it (Kafka's tryCompleteElseWatch)."""
        watch_keys = tuple(dict.fromkeys(keys))
        if not watch_keys:
            raise ValueError("The watch key list can't be empty")
        with self._lock:
            if self._stopped:
                raise RuntimeError(f"purgatory {self.name} is shut down")
            if operation._purgatory is not None:  # its bookkeeping holds one watch
                raise ValueError("an operation is watched once")
            # Set before the first try: a completion from now on reaches _forget, which removes
            # whatever the watch below adds.
            operation._purgatory = self
        with operation.lock:  # Kafka's safeTryCompleteOrElse
            if operation.is_completed:
                return False
            if operation.try_complete():
                return True
            self._watch(operation, watch_keys)
            # Again, now that it is watched: a change made between the first try and the watch
            # called check_and_complete before there was anything to complete.
            if not operation.is_completed and operation.try_complete():
                return True
        self._arm(operation)
        return False

    def check_and_complete(self, key: Hashable) -> int:
        """Complete what can complete among the operations watching ``key``; how many did. Called
        by the thread that made them completable, holding no lock that an operation may take."""
        with self._lock:
            watchers = self._watchers.get(key)
            candidates = list(watchers.values()) if watchers else []
        completed = 0
        for operation in candidates:  # in the order they were watched, as in Kafka
            try:
                if operation.safe_try_complete():
                    completed += 1
            except Exception:  # one operation's failure must not leave the others waiting
                log.exception("Error completing a delayed operation in purgatory %s", self.name)
        return completed

    def watched(self) -> int:
        """Entries in all watch lists (Kafka's PurgatorySize); an operation counts once per key."""
        with self._lock:
            return self._watched

    def delayed(self) -> int:
        """Operations waiting for their deadline (Kafka's NumDelayedOperations)."""
        with self._lock:
            return len(self._timer_queue) - self._timer_dead

    def shutdown(self, timeout: float = 5.0) -> None:
        """Stop the reaper, waiting for it at most ``timeout`` seconds. Pending operations are left
        as they are (see the module's docstring)."""
        self._metrics.close()
        with self._lock:
            self._stopped = True
            self._wakeup.notify()
        self.expiration_reaper.join(timeout)
        if self.expiration_reaper.is_alive():
            log.warning("%s did not stop within %s s", self.expiration_reaper.name, timeout)

    # Bookkeeping, each under self._lock and calling nothing outside this module.

    def _watch(self, operation: DelayedOperation, keys: tuple[Hashable, ...]) -> None:
        with self._lock:
            if operation.is_completed:  # its _forget has run or will find nothing to remove
                return
            for key in keys:
                self._watchers.setdefault(key, {})[id(operation)] = operation
            self._watched += len(keys)
            operation._keys = keys

    def _arm(self, operation: DelayedOperation) -> None:
        deadline = time.monotonic() + operation.delay_ms / 1000
        with self._lock:
            # Checked under the lock, as _forget runs under it after the flag is set: either this
            # sees the operation completed, or _forget sees the entry and cancels it.
            if operation.is_completed or self._stopped:
                return
            entry = _TimerEntry(operation)
            operation._timer_entry = entry
            heapq.heappush(self._timer_queue, (deadline, next(self._timer_seq), entry))
            if self._timer_queue[0][2] is entry:  # earlier than what the reaper waits for
                self._wakeup.notify()

    def _forget(self, operation: DelayedOperation) -> None:
        """Drop a completed operation from the watch lists and the timer."""
        with self._lock:
            for key in operation._keys:
                watchers = self._watchers[key]
                del watchers[id(operation)]
                if not watchers:
                    del self._watchers[key]
            self._watched -= len(operation._keys)
            operation._keys = ()
            entry = operation._timer_entry
            if entry is not None:
                operation._timer_entry = None
                entry.operation = None
                self._timer_dead += 1
                self._drop_dead_entries()

    def _drop_dead_entries(self) -> None:
        queue = self._timer_queue
        while queue and queue[0][2].operation is None:
            heapq.heappop(queue)
            self._timer_dead -= 1
        # Lazy deletion alone would keep a completed operation's entry until its deadline: rebuild
        # once more than half are dead, which keeps the heap under twice the pending operations
        # at a cost of O(1) per cancellation, amortized.
        if self._timer_dead * 2 > len(queue):
            self._timer_queue = [item for item in queue if item[2].operation is not None]
            heapq.heapify(self._timer_queue)
            self._timer_dead = 0

    def _reap(self) -> None:
        while True:
            with self._lock:
                while True:
                    if self._stopped:
                        return
                    self._drop_dead_entries()
                    if not self._timer_queue:
                        self._wakeup.wait()
                        continue
                    wait = self._timer_queue[0][0] - time.monotonic()
                    if wait <= 0:
                        break
                    self._wakeup.wait(wait)
                expired = []
                now = time.monotonic()
                queue = self._timer_queue
                while queue and queue[0][0] <= now:
                    entry = heapq.heappop(queue)[2]
                    operation = entry.operation
                    if operation is None:
                        self._timer_dead -= 1
                        continue
                    entry.operation = None
                    operation._timer_entry = None  # out of the heap: _forget must not count it dead
                    expired.append(operation)
            for operation in expired:  # outside the lock: the callbacks may do anything
                try:
                    if operation.force_complete():
                        operation.on_expiration()
                except Exception:  # the reaper outlives any operation's failure
                    log.exception("Error expiring a delayed operation in purgatory %s", self.name)
