"""The one way handlers turn a response body into what the Processor sends."""

from __future__ import annotations

from typing import Any

from kafkalite.network.request_channel import Request, SendResponse
from kafkalite.protocol import encode_response
from kafkalite.protocol.error_counts import error_counts, top_level_error_code


def respond(request: Request, body: Any) -> SendResponse:
    """The whole response frame for ``request`` (same api version and correlation id), with the
    error codes the body carries for the metrics and the request log: its own, and all of them
    (per topic, per partition), counted here on the handler's thread rather than in the Processor."""
    api_key, version = request.api_key, request.api_version
    if request.injected is not None:
        request.injected.overlay(request, body)
    if request.quotas is not None:
        request.quotas.on_response(request, body)
    frame = encode_response(api_key, version, request.correlation_id, body)
    return SendResponse(request, frame, top_level_error_code(api_key, version, body),
                        error_counts(api_key, version, body))
