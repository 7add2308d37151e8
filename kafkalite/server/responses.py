"""The one way handlers turn a response body into what the Processor sends."""

from __future__ import annotations

from typing import Any

from kafkalite.network.request_channel import Request, SendResponse
from kafkalite.protocol import encode_response


def respond(request: Request, api_key: int, body: Any, error_code: int = 0) -> SendResponse:
    """The whole response frame for ``request`` (same api version and correlation id)."""
    frame = encode_response(api_key, request.api_version, request.correlation_id, body)
    return SendResponse(request, frame, error_code)
