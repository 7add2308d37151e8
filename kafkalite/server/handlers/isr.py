"""AlterPartition: a partition leader's ISR change, served by the controller on its privileged
listener and its controller.listener.names (NOT_CONTROLLER elsewhere), answered when the
controller's event thread has applied or refused it: no handler thread waits."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from typing import Any

from kafkalite.common.errors import ApiError
from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import alter_partition

from ..controller_node import active
from ..responses import respond


class IsrApis:
    def __init__(self, controller: Any, send_response: Callable[[Response], None]) -> None:
        self.controller = controller  # None on a broker without the controller role
        self.send_response = send_response

    def alter_partition(self, request: Request) -> Response | None:
        R = alter_partition.RESPONSE
        controller = active(self.controller)
        if controller is None:
            return respond(request, R(throttle_time_ms=0, error_code=E.NOT_CONTROLLER, topics=[]))

        def answer(future: concurrent.futures.Future) -> None:
            try:
                body = future.result()
            except ApiError as e:  # NOT_CONTROLLER: it stopped being active meanwhile
                body = R(throttle_time_ms=0, error_code=e.code, topics=[])
            except Exception:  # logged by the controller; the leader proposes again
                body = R(throttle_time_ms=0, error_code=E.UNKNOWN_SERVER_ERROR, topics=[])
            self.send_response(respond(request, body))

        controller.alter_partition(request.body, request.api_version).add_done_callback(answer)
        return None
