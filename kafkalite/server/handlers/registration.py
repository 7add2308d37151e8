"""BrokerRegistration and BrokerHeartbeat: brokers' membership, served by the controller on its
privileged listener and its controller.listener.names (NOT_CONTROLLER elsewhere)."""

from __future__ import annotations

from typing import Any

from kafkalite.network.request_channel import Request, SendResponse
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import broker_heartbeat, broker_registration

from ..responses import respond


class RegistrationApis:
    def __init__(self, controller: Any) -> None:
        self.controller = controller  # None on a broker without the controller role


    def broker_registration(self, request: Request) -> SendResponse:
        R = broker_registration.RESPONSE
        if self.controller is None:
            return respond(request, R(error_code=E.NOT_CONTROLLER))
        error, epoch = self.controller.register(request.body)
        return respond(request, R(throttle_time_ms=0, error_code=error, broker_epoch=epoch))

    def broker_heartbeat(self, request: Request) -> SendResponse:
        R = broker_heartbeat.RESPONSE
        if self.controller is None:
            return respond(request, R(error_code=E.NOT_CONTROLLER))
        error = self.controller.heartbeat(request.body.broker_id, request.body.broker_epoch)
        return respond(request, R(throttle_time_ms=0, error_code=error, is_caught_up=error == 0,
                                       is_fenced=error != 0))
