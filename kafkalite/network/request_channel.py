"""The RequestChannel: Processors put completed requests in one bounded queue, handler threads
take them, and responses go back to the Processor that owns the connection.

The queue's bound (queued.max.requests) is the back-pressure: a Processor blocks on a full queue
and stops reading its sockets meanwhile, as in Kafka.
"""

from __future__ import annotations

import dataclasses
import queue
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .processor import Processor


@dataclasses.dataclass(eq=False)
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
    start_ns: int = dataclasses.field(default_factory=time.monotonic_ns)
    dequeue_ns: int = 0
    api_local_complete_ns: int = 0
    response_enqueue_ns: int = 0
    response_dequeue_ns: int = 0

    @property
    def api_key(self) -> int:
        return int(self.header.request_api_key)

    @property
    def api_version(self) -> int:
        return int(self.header.request_api_version)

    @property
    def correlation_id(self) -> int:
        return int(self.header.correlation_id)


# --- the closed family of responses (Kafka's RequestChannel.Response subclasses) --------------


@dataclasses.dataclass(eq=False)
class Response:
    request: Request


@dataclasses.dataclass(eq=False)
class SendResponse(Response):
    """Bytes to write to the connection (a whole frame, size prefix included)."""

    payload: bytes
    error_code: int = 0


@dataclasses.dataclass(eq=False)
class NoOpResponse(Response):
    """Nothing to send (e.g. a request that wants no answer); the connection is unmuted."""


@dataclasses.dataclass(eq=False)
class CloseConnectionResponse(Response):
    """Close the connection (a request that cannot be served)."""


@dataclasses.dataclass(eq=False)
class StartThrottlingResponse(Response):
    """The connection stays muted after its response until EndThrottlingResponse."""


@dataclasses.dataclass(eq=False)
class EndThrottlingResponse(Response):
    """Throttling is over; the connection may be unmuted."""


class _Shutdown:
    """Sentinel telling one handler thread to stop."""


SHUTDOWN = _Shutdown()


class RequestChannel:
    """One per plane (data, control). ``queue_size`` is queued.max.requests (20 for control)."""

    def __init__(self, queue_size: int, name: str = "data-plane") -> None:
        self.name = name
        self.queue_size = queue_size
        self._requests: queue.Queue[Request | _Shutdown] = queue.Queue(maxsize=queue_size)
        self._processors: dict[int, Processor] = {}

    def add_processor(self, processor: Processor) -> None:
        if processor.id in self._processors:
            raise ValueError(f"processor {processor.id} already registered")
        self._processors[processor.id] = processor

    def remove_processor(self, processor_id: int) -> None:
        self._processors.pop(processor_id, None)

    @property
    def processors(self) -> dict[int, Processor]:
        return self._processors

    def send_request(self, request: Request, timeout: float | None = None) -> None:
        """Blocks while the queue is full: that is the back-pressure on the Processor."""
        self._requests.put(request, timeout=timeout)

    def receive_request(self, timeout: float | None = 0.3) -> Request | _Shutdown | None:
        try:
            item = self._requests.get(timeout=timeout)
        except queue.Empty:
            return None
        if isinstance(item, Request):
            item.dequeue_ns = time.monotonic_ns()
        return item

    def send_response(self, response: Response) -> None:
        """Route a response to the Processor that owns its connection."""
        request = response.request
        request.api_local_complete_ns = request.api_local_complete_ns or time.monotonic_ns()
        processor = self._processors.get(request.processor)
        # A processor that is gone (shut down) has closed its connections: nothing to do.
        if processor is not None:
            processor.enqueue_response(response)

    def send_shutdown_request(self) -> None:
        self._requests.put(SHUTDOWN)

    @property
    def request_queue_size(self) -> int:
        return self._requests.qsize()

    @property
    def response_queue_size(self) -> int:
        return sum(p.response_queue_size for p in self._processors.values())

    def clear(self) -> None:
        while True:
            try:
                self._requests.get_nowait()
            except queue.Empty:
                return
