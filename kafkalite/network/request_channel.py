"""The RequestChannel: Processors put completed requests in one bounded queue, handler threads
take them, and responses go back to the Processor that owns the connection.

The queue's bound (queued.max.requests) is the back-pressure: a Processor blocks on a full queue
and stops reading its sockets meanwhile, as in Kafka. Requests and responses cross between threads
in batches (see RequestChannel).
"""

from __future__ import annotations

import collections
import dataclasses
import queue
import threading
import time
import types
from collections.abc import Mapping
from typing import Any, Protocol

from kafkalite.metrics.components import request_channel_metrics
from kafkalite.metrics.registry import MetricsRegistry
from kafkalite.protocol import SplicedFrame

from .turns import PRESUMED_BLOCKED_AFTER


@dataclasses.dataclass(eq=False, slots=True)
class Request:
    """One request read from a connection, with what the handlers and the metrics need."""

    processor: int
    connection_id: str
    listener: str
    security_protocol: str
    header: Any  # kafkalite.protocol RequestHeader value
    body: Any  # decoded body; None for an ApiVersions request of an unsupported version
    size: int  # bytes of the request payload
    client_address: str
    client_software_name: str
    client_software_version: str
    privileged: bool
    # Who sent it (Kafka's KafkaPrincipal as "type:name"): the SASL user, the TLS client
    # certificate's subject, else User:ANONYMOUS; what the authorizer decides on.
    principal: str = "User:ANONYMOUS"
    start_ns: int = dataclasses.field(default_factory=time.monotonic_ns)
    dequeue_ns: int = 0
    api_local_complete_ns: int = 0
    response_enqueue_ns: int = 0
    response_dequeue_ns: int = 0
    # Produce and Fetch: what the request did to each topic (metrics.request_log.TopicTraffic),
    # set by the handler before it answers, read by the request log when the response completes.
    topic_traffic: list[Any] | None = None
    # Errors a test injected into this request's answer (server/faults/injector.py), put in by ``respond``.
    injected: Any = None
    # Client quotas (server/client_quotas.QuotaManagers), set by KafkaApis: ``respond`` applies the
    # request quota and the throttle; ``thread_ns`` is the handler thread's time on it.
    quotas: Any = None
    thread_ns: int = 0

    @property
    def api_key(self) -> int:
        return int(self.header.request_api_key)

    @property
    def api_version(self) -> int:
        return int(self.header.request_api_version)

    @property
    def correlation_id(self) -> int:
        return int(self.header.correlation_id)


class ResponseQueue(Protocol):
    """What the channel needs of a Processor: its id and its response queue."""

    id: int

    def enqueue_responses(self, responses: list[Response]) -> None: ...

    @property
    def response_queue_size(self) -> int: ...


# --- the closed family of responses (Kafka's RequestChannel.Response subclasses) --------------


@dataclasses.dataclass(eq=False, slots=True)
class Response:
    request: Request


# The error counts of a request answered without a response (NoOp, CloseConnection): none.
NO_ERROR_COUNTS: Mapping[int, int] = types.MappingProxyType({})


@dataclasses.dataclass(eq=False, slots=True)
class SendResponse(Response):
    """Bytes to write to the connection (a whole frame, size prefix included), or a SplicedFrame
    whose records the Processor sends from their files (``len()`` is the frame's size either
    way). ``error_code`` is the response's own (top-level) code; ``error_counts`` every code it
    carries, NONE included, at any depth (Kafka's ``errorCounts()``, see
    protocol/error_counts.py), counted where the response is built; None when ``error_code`` is
    the only one."""

    payload: bytes | SplicedFrame
    error_code: int = 0
    error_counts: Mapping[int, int] | None = None


@dataclasses.dataclass(eq=False, slots=True)
class NoOpResponse(Response):
    """Nothing to send (e.g. a request that wants no answer); the connection is unmuted."""


@dataclasses.dataclass(eq=False, slots=True)
class CloseConnectionResponse(Response):
    """Close the connection (a request that cannot be served)."""


@dataclasses.dataclass(eq=False, slots=True)
class StartThrottlingResponse(Response):
    """The connection stays muted after its response until EndThrottlingResponse."""


@dataclasses.dataclass(eq=False, slots=True)
class EndThrottlingResponse(Response):
    """Throttling is over; the connection may be unmuted."""


class _Shutdown:
    """Sentinel telling one handler thread to stop."""


SHUTDOWN = _Shutdown()


class RequestChannel:
    """One per plane (data, control). ``queue_size`` is queued.max.requests (20 for control).

    Requests travel in batches: a Processor hands over everything one poll completed with one
    call, a handler takes what is queued with one call and gives the responses back grouped by
    Processor, one wake-up each. A thread hop costs the same for one request as for fifty, so
    batching is what keeps more threads from costing more per request. The bound still counts
    requests, as Kafka's ArrayBlockingQueue does.

    A new batch wakes an idle handler only when no handler is busy: under the GIL a second
    handler cannot run beside a busy one, so waking it would only cost a thread switch; the busy
    one takes the batch when it comes back. A handler that stops (``handler_stopping``) stops
    counting as busy and wakes one for what is queued; and when no handler has taken a batch for
    longer than turns.PRESUMED_BLOCKED_AFTER, the busy ones are presumed blocked and an idle one
    is woken anyway.
    """

    def __init__(self, queue_size: int, name: str = "data-plane",
                 metrics: MetricsRegistry | None = None) -> None:
        """``metrics``: the broker's registry, where the channel reports its queue sizes
        (``plane=<name>``) until ``close_metrics``."""
        self.name = name
        self.queue_size = queue_size
        self._requests: collections.deque[Request | _Shutdown] = collections.deque()
        self._lock = threading.Lock()
        self._not_empty = threading.Condition(self._lock)
        self._not_full = threading.Condition(self._lock)
        self._idle_handlers = 0
        self._busy_handlers = 0
        self._last_take = 0.0  # monotonic seconds when a handler last took a batch
        self._blocked_senders = 0
        self._processors: dict[int, ResponseQueue] = {}
        self._metrics = (metrics or MetricsRegistry()).register(f"request-channel:{name}",
                                                                request_channel_metrics(self))

    def close_metrics(self) -> None:
        self._metrics.close()

    def add_processor(self, processor: ResponseQueue) -> None:
        if processor.id in self._processors:
            raise ValueError(f"processor {processor.id} already registered")
        self._processors[processor.id] = processor

    def remove_processor(self, processor_id: int) -> None:
        self._processors.pop(processor_id, None)

    @property
    def processors(self) -> dict[int, ResponseQueue]:
        return self._processors

    # --- Processors -> handlers -----------------------------------------------------------

    def send_requests(self, batch: list[Request], timeout: float | None = None, wake: bool = True) -> int:
        """Queue the first requests of ``batch`` that fit; returns how many. Blocks while the
        queue is full (the back-pressure on the Processor); ``queue.Full`` after ``timeout``.
        With ``wake`` false no handler is woken yet: the caller calls ``wake_handler`` later."""
        requests = self._requests
        with self._lock:
            if len(requests) >= self.queue_size:
                deadline = None if timeout is None else time.monotonic() + timeout
                self._blocked_senders += 1
                try:
                    while len(requests) >= self.queue_size:
                        left = None if deadline is None else deadline - time.monotonic()
                        if left is not None and left <= 0:
                            raise queue.Full
                        self._not_full.wait(left)
                finally:
                    self._blocked_senders -= 1
            room = self.queue_size - len(requests)
            if room < len(batch):
                batch = batch[:room]
            requests.extend(batch)
            if wake:
                self._wake_one()
        return len(batch)

    def wake_handler(self) -> None:
        """Wake an idle handler for what is queued, unless one is busy (it will take it)."""
        with self._lock:
            if self._requests:
                self._wake_one()

    def _wake_one(self) -> None:
        # With the lock held.
        if self._idle_handlers and (not self._busy_handlers or
                                    time.monotonic() - self._last_take > PRESUMED_BLOCKED_AFTER):
            self._not_empty.notify()

    def send_request(self, request: Request, timeout: float | None = None) -> None:
        self.send_requests([request], timeout)

    def receive_requests(self, timeout: float | None = 0.3, limit: int = 256,
                         done: bool = False, busy: bool = True) -> list[Request | _Shutdown]:
        """What is queued, up to ``limit`` and the first shutdown sentinel; [] after ``timeout``.
        A handler (``busy``) counts as busy until its next call; ``done``: it was busy until now."""
        requests = self._requests
        with self._lock:
            if done:
                self._busy_handlers -= 1
            if not requests:
                deadline = None if timeout is None else time.monotonic() + timeout
                self._idle_handlers += 1
                try:
                    while not requests:
                        left = None if deadline is None else deadline - time.monotonic()
                        if left is not None and left <= 0:
                            return []
                        self._not_empty.wait(left)
                finally:
                    self._idle_handlers -= 1
            batch: list[Request | _Shutdown] = []
            for _ in range(min(limit, len(requests))):
                item = requests.popleft()
                batch.append(item)
                if item is SHUTDOWN:
                    break  # one sentinel per handler thread
            if busy:
                self._busy_handlers += 1
                self._last_take = time.monotonic()
            if self._blocked_senders:
                self._not_full.notify_all()
        now = time.monotonic_ns()
        for item in batch:
            if item is not SHUTDOWN:
                item.dequeue_ns = now  # type: ignore[union-attr]
        return batch

    def receive_request(self, timeout: float | None = 0.3) -> Request | _Shutdown | None:
        batch = self.receive_requests(timeout, limit=1, busy=False)
        return batch[0] if batch else None

    def handler_stopping(self, rest: list[Request | _Shutdown]) -> None:
        """A handler stops (its shutdown sentinel): it puts the requests it has not started back
        at the head of the queue, in order, stops counting as busy (its next
        ``receive_requests`` is not ``done``) and an idle handler takes over."""
        with self._lock:
            self._busy_handlers -= 1
            self._requests.extendleft(reversed(rest))
            if self._requests and self._idle_handlers:
                self._not_empty.notify()

    def send_shutdown_request(self) -> None:
        with self._lock:
            self._requests.append(SHUTDOWN)  # past the bound: shutdown must not wait
            self._not_empty.notify()

    # --- handlers -> Processors -----------------------------------------------------------

    def send_response(self, response: Response) -> None:
        """Route a response to the Processor that owns its connection."""
        self.send_responses([response])

    def send_responses(self, responses: list[Response]) -> None:
        """Route responses to their Processors: one hand-off and one wake-up per Processor."""
        now = time.monotonic_ns()
        by_processor: dict[int, list[Response]] = {}
        for response in responses:
            request = response.request
            if not request.api_local_complete_ns:
                request.api_local_complete_ns = now
            group = by_processor.get(request.processor)
            if group is None:
                by_processor[request.processor] = [response]
            else:
                group.append(response)
        for processor_id, group in by_processor.items():
            processor = self._processors.get(processor_id)
            # A processor that is gone (shut down) has closed its connections: nothing to do.
            if processor is not None:
                processor.enqueue_responses(group)

    @property
    def request_queue_size(self) -> int:
        return len(self._requests)

    @property
    def response_queue_size(self) -> int:
        return sum(p.response_queue_size for p in self._processors.values())

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()
            self._not_full.notify_all()
