"""KafkaApis: a request's handler, looked up in the served-apis table (``apis.py``) and bound to
the area object that holds it (``handlers/``). Anything that goes wrong in a handler closes that
connection only."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from kafkalite.network.request_channel import CloseConnectionResponse, Request, Response
from kafkalite.protocol import api_name

from .apis import SERVED, ServedApi
from .authorizer import Authorizer
from .checks import Checks
from .faults.injector import FaultInjector

log = logging.getLogger("kafkalite.server.kafka_apis")


class KafkaApis:
    def __init__(self, *areas: object, served: Iterable[ServedApi] = SERVED,
                 checks: Checks | None = None) -> None:
        """``areas``: one object of each handler class ``served`` names (the broker wires them:
        broker.py); a benchmark that answers a few apis passes those apis only. ``checks``: the
        authorization every request passes before its handler (checks.py), asking ``authorizer``."""
        self.areas = areas
        self.checks = checks if checks is not None else Checks()
        self.faults: FaultInjector | None = None  # a test's faults (faults.py), set by the broker
        self.quotas: Any = None  # client_quotas.QuotaManagers, set by the broker
        self.handlers: dict[int, Callable[[Request], Response | None]] = {}
        for s in served:
            owner = next((a for a in areas if getattr(type(a), s.handler.__name__, None) is s.handler), None)
            if owner is None:
                raise ValueError(f"no area object for {s.name}'s handler {s.handler.__qualname__}")
            self.handlers[s.key] = getattr(owner, s.handler.__name__)

    @property
    def authorizer(self) -> Authorizer:
        return self.checks.authorizer

    @authorizer.setter
    def authorizer(self, authorizer: Authorizer) -> None:
        self.checks.authorizer = authorizer

    def area(self, cls: type[Any]) -> Any:
        return next(a for a in self.areas if isinstance(a, cls))

    def handle(self, request: Request) -> Response | None:
        """The response, or None when the request waits (it is answered later, by whichever
        thread completes it)."""
        handler = self.handlers.get(request.api_key)
        if handler is None:
            log.warning("No handler for %s from %s; closing it", api_name(request.api_key),
                        request.connection_id)
            return CloseConnectionResponse(request)
        faults = self.faults
        if self.quotas is not None:
            request.quotas = self.quotas
        if faults is not None and faults.active:
            return self._handle_with_faults(faults, handler, request)
        try:
            start = time.monotonic_ns()
            response = self.checks.check(request) or handler(request)
            request.thread_ns = time.monotonic_ns() - start
            return response
        except Exception:  # one bad request closes its connection, nothing more
            log.exception("Error handling %s from %s; closing it", request.header, request.connection_id)
            return CloseConnectionResponse(request)

    def handle_here(self, request: Request) -> Response | None:
        """``handle`` for a request the Processor answers itself (network.processor.ANSWERED_HERE),
        or None when it must go to the handlers after all: while a test's faults are active, which
        may delay or drop an answer (answered later, from another thread)."""
        faults = self.faults
        if faults is not None and faults.active:
            return None
        return self.handle(request)

    def _handle_with_faults(self, faults: FaultInjector, handler: Callable[[Request], Response | None],
                            request: Request) -> Response | None:
        try:
            response = faults.before(request)
            if response is None:
                response = self.checks.check(request) or handler(request)
        except Exception:
            log.exception("Error handling %s from %s; closing it", request.header, request.connection_id)
            response = CloseConnectionResponse(request)
        if response is not None and faults.delays(request):
            faults.later(response)
            return None
        return response
