"""The request handler pool (Kafka's KafkaRequestHandlerPool): threads that take requests from a
RequestChannel, run the handler and give the responses back to the channel.

A handler takes what is queued in one go and gives the answers back in one go per Processor (see
RequestChannel). No handler waits: a request that cannot be answered yet (CreateTopics until its
topics show, a broker's registration until the controller has handled it) is parked (the
purgatory, or a callback) and its handler returns None; whichever thread completes it answers
it through the channel.

num.io.threads changes live (``resize``, Kafka's resizeThreadPool; the broker's
DynamicBrokerConfig calls ``reconfigure``): new handlers start, or the highest-numbered ones are
told to stop and leave at their next poll of the channel (0.3 s at most when idle), after the
batch in hand.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from kafkalite.network.request_channel import (
    CloseConnectionResponse,
    Request,
    RequestChannel,
    Response,
)
from kafkalite.network.socket_server import check_thread_count
from kafkalite.network.turns import Turns

log = logging.getLogger("kafkalite.server.request_handler")


NUM_IO_THREADS = "num.io.threads"


class RequestHandlerPool:
    # The data plane's pool takes num.io.threads live (the control plane's has one thread).
    reconfigurable_configs = frozenset({NUM_IO_THREADS})

    def __init__(self, channel: RequestChannel, handle: Callable[[Request], Response | None], threads: int,
                 name_prefix: str = "data-plane-kafka-request-handler", turns: Turns | None = None) -> None:
        self.channel = channel
        self.handle = handle
        self.turns = turns or Turns()  # held per batch, shared with the Processors (turns.py)
        self.name_prefix = name_prefix
        self._lock = threading.Lock()
        self._started = False
        # The handlers running, by number (resize stops the last ones).
        self.threads: list[_Handler] = [_Handler(self, i, name_prefix) for i in range(threads)]
        self.stopped: list[_Handler] = []  # told to stop by a resize (joined at shutdown)
        self.idle_ns_total = 0

    def start(self) -> None:
        with self._lock:
            self._started = True
            for t in self.threads:
                t.start()

    # --- num.io.threads live (common/reconfigurable.py) ----------------------------------------

    def validate_reconfiguration(self, new: Mapping[str, Any]) -> None:
        check_thread_count(NUM_IO_THREADS, len(self.threads), new[NUM_IO_THREADS])

    def reconfigure(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        self.resize(new[NUM_IO_THREADS])

    def resize(self, count: int) -> None:
        """Kafka's resizeThreadPool: start handlers numbered from the current count, or stop the
        highest-numbered ones (each leaves at its next poll, after the batch in hand)."""
        if count < 1:
            raise ValueError(f"a handler pool needs at least one thread, not {count}")
        with self._lock:
            current = len(self.threads)
            if count == current:
                return
            log.info("Resizing request handler thread pool size from %d to %d", current, count)
            if count > current:
                for number in range(current, count):
                    handler = _Handler(self, number, self.name_prefix)
                    self.threads.append(handler)
                    if self._started:
                        handler.start()
                return
            for _ in range(current - count):
                handler = self.threads.pop()
                handler.stopping.set()
                self.stopped.append(handler)

    def run_handler(self, stop: threading.Event) -> None:
        """A handler thread's loop, until ``stop`` is set or it takes a shutdown sentinel."""
        channel = self.channel
        busy = False
        while True:
            if stop.is_set():
                if busy:  # counted busy since its last take: stop counting (and wake one)
                    channel.handler_stopping([])
                return
            start = time.monotonic_ns()
            batch = channel.receive_requests(timeout=0.3, done=busy)
            self.idle_ns_total += time.monotonic_ns() - start
            if not batch:
                busy = False
                continue
            try:
                busy = self._handle_batch(batch)
            except Exception:  # nor of anything else in a batch (idle handlers wait 0.3 s at most)
                log.exception("Unexpected error in a request handler")
                busy = False
            if not isinstance(batch[-1], Request):
                return  # the shutdown sentinel

    def _handle_batch(self, batch: list) -> bool:
        """Answer a batch, holding the turn. False if the handler stopped counting as busy on the
        way (at the shutdown sentinel; see ``RequestChannel.handler_stopping``)."""
        channel = self.channel
        handle = self.handle
        clock = time.monotonic_ns
        responses: list[Response] = []
        busy = True
        held = self.turns.acquire()  # False: presumed blocked holder, go on without (turns.py)
        try:
            for i, request in enumerate(batch):
                if not isinstance(request, Request):  # the shutdown sentinel: stop here
                    channel.send_responses(responses)
                    responses = []
                    channel.handler_stopping(batch[i + 1:])
                    del batch[i + 1:]
                    busy = False
                    break
                try:
                    response = handle(request)
                except Exception:  # a handler thread never dies of a request
                    log.exception("Unexpected error handling a request; closing its connection")
                    response = CloseConnectionResponse(request)
                request.api_local_complete_ns = clock()
                if response is not None:  # None: it waits, answered by whoever completes it
                    responses.append(response)
            if responses:
                channel.send_responses(responses)
        finally:
            if held:
                self.turns.release()
        return busy

    def shutdown(self, timeout: float = 5.0) -> None:
        with self._lock:
            threads = [t for t in [*self.threads, *self.stopped] if t.is_alive()]
        # One sentinel per live thread: one told to stop may still be polling and take one.
        for _ in threads:
            self.channel.send_shutdown_request()
        deadline = time.monotonic() + timeout
        for t in threads:
            if t.is_alive():
                t.join(max(0.0, deadline - time.monotonic()))


class _Handler(threading.Thread):
    """One handler thread of the pool (Kafka's KafkaRequestHandler), with its number and its own
    stop flag."""

    def __init__(self, pool: RequestHandlerPool, number: int, name_prefix: str) -> None:
        super().__init__(name=f"{name_prefix}-{number}", daemon=True)
        self.pool = pool
        self.number = number
        self.stopping = threading.Event()

    def run(self) -> None:
        self.pool.run_handler(self.stopping)
