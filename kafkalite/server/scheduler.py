"""The broker's background schedule (Kafka's KafkaScheduler as the LogManager and ReplicaManager
use it): named tasks run every ``interval_ms`` on one thread, ``kafka-scheduler-0``.

One thread is enough: every task is short file work (a retention check, a checkpoint). A task
that raises is logged and runs again at its next time; it never stops the others.
"""

from __future__ import annotations

import heapq
import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger("kafkalite.server.scheduler")


class Scheduler:
    def __init__(self, thread_name: str = "kafka-scheduler-0") -> None:
        self._tasks: list[tuple[float, int, str, float, Callable[[], object]]] = []
        self._cond = threading.Condition()
        self._stopping = False
        self._count = 0
        self._thread = threading.Thread(target=self._run, name=thread_name, daemon=True)

    def schedule(self, name: str, fn: Callable[[], object], interval_ms: float,
                 delay_ms: float | None = None) -> None:
        """Run ``fn`` every ``interval_ms``, first after ``delay_ms`` (default: one interval)."""
        first = time.monotonic() + (interval_ms if delay_ms is None else delay_ms) / 1000
        with self._cond:
            self._count += 1
            heapq.heappush(self._tasks, (first, self._count, name, interval_ms / 1000, fn))
            self._cond.notify()

    def start(self) -> None:
        self._thread.start()

    def shutdown(self, timeout: float = 5.0) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._stopping and (not self._tasks or self._tasks[0][0] > time.monotonic()):
                    self._cond.wait(self._tasks[0][0] - time.monotonic() if self._tasks else None)
                if self._stopping:
                    return
                due, n, name, interval, fn = heapq.heappop(self._tasks)
            try:
                fn()
            except Exception:
                log.exception("Scheduled task %s failed; it runs again in %.0f ms", name, interval * 1000)
            with self._cond:
                heapq.heappush(self._tasks, (max(due + interval, time.monotonic()), n, name, interval, fn))
