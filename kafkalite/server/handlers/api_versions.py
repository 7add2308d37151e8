"""ApiVersions (KIP-511), and the SASL requests that reach the handlers: after a connection has
authenticated, or on a listener without SASL (the Processor answers them while authenticating)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kafkalite.network.request_channel import Request, Response, SendResponse
from kafkalite.protocol import ApiKey, encode_body, encode_response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import api_versions, sasl_authenticate, sasl_handshake
from kafkalite.protocol.schema import Versions

from ..responses import respond

# (listener, privileged) -> {api key: versions served there}
ApiTable = Callable[[str, bool], dict[int, Versions]]


class ApiVersionsApis:
    def __init__(self, apis_for: ApiTable) -> None:
        self.apis_for = apis_for
        self._bodies: dict[tuple[str, bool, int], bytes] = {}
        # Lower maximum versions to advertise (privileged listener -> api key -> version): an older
        # Kafka, as a test sets it (server/faults/injector.py). An api whose limit is below its lowest
        # version is left out.
        self.max_versions: Callable[[bool], Mapping[int, int]] = lambda privileged: {}

    def forget(self) -> None:
        """Drop the answers built so far (the limits changed)."""
        self._bodies = {}

    def handle_api_versions(self, request: Request) -> Response:
        if request.body is None:
            # A version we do not know: Kafka answers in v0 with UNSUPPORTED_VERSION and only its
            # own ApiVersions range, so that the client can retry with a version we support.
            own = self.apis_for(request.listener, request.privileged)[ApiKey.API_VERSIONS]
            body = api_versions.RESPONSE(
                error_code=E.UNSUPPORTED_VERSION,
                api_keys=[api_versions.RESPONSE["api_keys"](ApiKey.API_VERSIONS, own.low, own.high)],
            )
            frame = encode_response(ApiKey.API_VERSIONS, 0, request.correlation_id, body)
            return SendResponse(request, frame, E.UNSUPPORTED_VERSION)
        return SendResponse(request, self._frame(request))

    def _frame(self, request: Request) -> bytes:
        key = (request.listener, request.privileged, request.api_version)
        body = self._bodies.get(key)
        if body is None:
            # The answer only depends on the listener and the version: built once.
            item = api_versions.RESPONSE["api_keys"]
            table = self.apis_for(request.listener, request.privileged)
            limits = self.max_versions(request.privileged)
            value = api_versions.RESPONSE(
                error_code=0, throttle_time_ms=0,
                api_keys=[item(k, v.low, min(v.high, limits.get(k, v.high))) for k, v in table.items()
                          if limits.get(k, v.high) >= v.low],
            )
            # ApiVersions' response header is always v0: the body follows the correlation id.
            body = encode_body(ApiKey.API_VERSIONS, request.api_version, value, response=True)
            self._bodies[key] = body
        frame = bytearray((len(body) + 4).to_bytes(4, "big"))
        frame += request.correlation_id.to_bytes(4, "big", signed=True)
        frame += body
        return bytes(frame)

    def handle_sasl_handshake(self, request: Request) -> Response:
        # Kafka's KafkaApis: the network layer answers these while a connection authenticates;
        # one reaching the handlers comes too late (or on a listener without SASL).
        return respond(request, sasl_handshake.RESPONSE(error_code=E.ILLEGAL_SASL_STATE, mechanisms=[]))

    def handle_sasl_authenticate(self, request: Request) -> Response:
        return respond(request, sasl_authenticate.RESPONSE(
            error_code=E.ILLEGAL_SASL_STATE,
            error_message="SaslAuthenticate request received after successful authentication"))
