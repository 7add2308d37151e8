"""Request header v0-v2 and response header v0-v1, declared like any message."""

from __future__ import annotations

from .api_keys import ApiKey
from .schema import INT16, INT32, STRING, F, Struct, Versions

REQUEST_HEADER = Struct(
    "RequestHeader",
    F("request_api_key", INT16),
    F("request_api_version", INT16),
    F("correlation_id", INT32),
    # The client id keeps its int16 length even in header v2 ("flexibleVersions": "none").
    F("client_id", STRING, "1+", nullable="1+", default=None, flexible="none"),
)
REQUEST_HEADER_VERSIONS = Versions.parse("0-2")
REQUEST_HEADER_FLEXIBLE = Versions.parse("2+")

RESPONSE_HEADER = Struct("ResponseHeader", F("correlation_id", INT32))
RESPONSE_HEADER_VERSIONS = Versions.parse("0-1")
RESPONSE_HEADER_FLEXIBLE = Versions.parse("1+")



def request_header_version(flexible: bool) -> int:
    return 2 if flexible else 1


def response_header_version(api_key: int, flexible: bool) -> int:
    # ApiVersions answers with header v0 always, so that a client that sent a version the broker
    # does not know can still read the correlation id and the error (KIP-511).
    if api_key == ApiKey.API_VERSIONS:
        return 0
    return 1 if flexible else 0
