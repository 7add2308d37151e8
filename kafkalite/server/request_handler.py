"""The request handler pool (Kafka's KafkaRequestHandlerPool): threads that take requests from a
RequestChannel, run the handler and give the response back to the channel."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from kafkalite.network.request_channel import (
    CloseConnectionResponse,
    Request,
    RequestChannel,
    Response,
)

log = logging.getLogger("kafkalite.server.request_handler")


class RequestHandlerPool:
    def __init__(self, channel: RequestChannel, handle: Callable[[Request], Response], threads: int,
                 name_prefix: str = "data-plane-kafka-request-handler") -> None:
        self.channel = channel
        self.handle = handle
        self.threads = [
            threading.Thread(target=self._run, name=f"{name_prefix}-{i}", daemon=True)
            for i in range(threads)
        ]
        self.idle_ns_total = 0

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def _run(self) -> None:
        channel = self.channel
        while True:
            start = time.monotonic_ns()
            request = channel.receive_request(timeout=0.3)
            self.idle_ns_total += time.monotonic_ns() - start
            if request is None:
                continue
            if not isinstance(request, Request):
                return  # the shutdown sentinel
            try:
                response = self.handle(request)
            except Exception:  # a handler thread never dies of a request
                log.exception("Unexpected error handling a request; closing its connection")
                response = CloseConnectionResponse(request)
            channel.send_response(response)

    def shutdown(self, timeout: float = 5.0) -> None:
        for _ in self.threads:
            self.channel.send_shutdown_request()
        deadline = time.monotonic() + timeout
        for t in self.threads:
            if t.is_alive():
                t.join(max(0.0, deadline - time.monotonic()))
