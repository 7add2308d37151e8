"""The request handler pool (Kafka's KafkaRequestHandlerPool): threads that take requests from a
RequestChannel, run the handler and give the responses back to the channel.

A handler takes what is queued in one go and gives the answers back in one go per Processor (see
RequestChannel). No handler waits: a request that cannot be answered yet (CreateTopics until its
topics show, a broker's registration until the controller has handled it) is parked (the
purgatory, or a callback) and its handler returns None; whichever thread completes it answers
it through the channel.
"""

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
from kafkalite.network.turns import Turns

log = logging.getLogger("kafkalite.server.request_handler")


class RequestHandlerPool:
    def __init__(self, channel: RequestChannel, handle: Callable[[Request], Response | None], threads: int,
                 name_prefix: str = "data-plane-kafka-request-handler", turns: Turns | None = None) -> None:
        self.channel = channel
        self.handle = handle
        self.turns = turns or Turns()  # held per batch, shared with the Processors (turns.py)
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
        busy = False
        while True:
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
        for _ in self.threads:
            self.channel.send_shutdown_request()
        deadline = time.monotonic() + timeout
        for t in self.threads:
            if t.is_alive():
                t.join(max(0.0, deadline - time.monotonic()))
