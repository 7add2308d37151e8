"""BrokerRegistration and BrokerHeartbeat: brokers' membership, served by the controller on its
privileged listener and its controller.listener.names (NOT_CONTROLLER elsewhere).

A registration is answered when the controller's event thread has handled it (as Kafka's
ControllerApis answers when the controller's future completes): no handler thread waits for it."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from typing import Any

from kafkalite.common.errors import ApiError
from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import broker_heartbeat, broker_registration

from ..controller_node import active
from ..responses import respond


class RegistrationApis:
    def __init__(self, controller: Any, send_response: Callable[[Response], None]) -> None:
        self.controller = controller  # None on a broker without the controller role
        self.send_response = send_response

    def broker_registration(self, request: Request) -> Response | None:
        R = broker_registration.RESPONSE
        controller = active(self.controller)
        if controller is None:
            return respond(request, R(error_code=E.NOT_CONTROLLER))

        def answer(future: concurrent.futures.Future) -> None:
            try:
                error, epoch = future.result()
            except ApiError as e:  # NOT_CONTROLLER: it stopped being active meanwhile
                error, epoch = e.code, -1
            except Exception:  # logged by the controller; the broker retries
                error, epoch = E.UNKNOWN_SERVER_ERROR, -1
            self.send_response(respond(request, R(throttle_time_ms=0, error_code=error, broker_epoch=epoch)))

        controller.register(request.body).add_done_callback(answer)
        return None

    def broker_heartbeat(self, request: Request) -> Response:
        R = broker_heartbeat.RESPONSE
        controller = active(self.controller)
        if controller is None:
            return respond(request, R(error_code=E.NOT_CONTROLLER))
        body = request.body
        try:
            error, shut_down = controller.heartbeat(body.broker_id, body.broker_epoch, body.want_shut_down,
                                                    body.offline_log_dirs or ())
        except ApiError as e:  # NOT_CONTROLLER: it stopped being active meanwhile
            return respond(request, R(error_code=e.code))
        return respond(request, R(throttle_time_ms=0, error_code=error, is_caught_up=error == 0,
                                  is_fenced=error != 0, should_shut_down=shut_down))
