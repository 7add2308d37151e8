"""SASL authentication on SASL_PLAINTEXT and SASL_SSL listeners (Kafka's SaslServerAuthenticator
with its PLAIN server).

A new connection on such a listener may send ApiVersions (answered by the handlers, as any
request), then SaslHandshake naming a mechanism, then one token: in a SaslAuthenticate request
after a v1 handshake, or as a bare size-prefixed frame after a v0 one. Anything else before
authentication succeeds is Kafka's IllegalSaslStateException: the connection is closed. Each
connection's KafkaChannel carries one until authentication succeeds; the Processor decides what
is sent when. This module does no I/O.
"""

from __future__ import annotations

import enum
import hmac
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.error_codes import SASL_AUTHENTICATION_FAILED, UNSUPPORTED_SASL_MECHANISM
from kafkalite.protocol.messages import sasl_authenticate, sasl_handshake

API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE = (
    ApiKey.API_VERSIONS, ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE)
INVALID_CREDENTIALS = "Authentication failed: Invalid username or password"


class SaslState(enum.Enum):
    HANDSHAKE_OR_VERSIONS_REQUEST = "handshake or versions request"
    HANDSHAKE_REQUEST = "handshake request"
    AUTHENTICATE = "authenticate"
    COMPLETE = "complete"
    FAILED = "failed"


# (state, api key of the request) -> the state after it; a request not in the table is illegal.
TRANSITIONS: dict[tuple[SaslState, int], SaslState] = {
    (SaslState.HANDSHAKE_OR_VERSIONS_REQUEST, API_VERSIONS): SaslState.HANDSHAKE_REQUEST,
    (SaslState.HANDSHAKE_OR_VERSIONS_REQUEST, SASL_HANDSHAKE): SaslState.AUTHENTICATE,
    (SaslState.HANDSHAKE_REQUEST, SASL_HANDSHAKE): SaslState.AUTHENTICATE,
    (SaslState.AUTHENTICATE, SASL_AUTHENTICATE): SaslState.COMPLETE,
}


class IllegalSaslState(Exception):
    """A request that is not allowed in the connection's SASL state: the connection is closed."""


class SaslConfigError(ValueError):
    """The users file cannot be read or has a malformed line; the message says where."""


@dataclass(frozen=True)
class Step:
    """What to do with one request or token of an unauthenticated connection.

    ``handlers``: pass it on to the handlers (ApiVersions). Otherwise ``body`` is the response body
    (None for a bare v0 token: PLAIN answers it with an empty token). ``failed``: answer after
    connection.failed.authentication.delay.ms, then close.
    """

    handlers: bool = False
    body: Any = None
    failed: bool = False
    error_code: int = 0
    reason: str = ""


def load_users(path: str | os.PathLike[str]) -> dict[str, str]:
    """``username=password`` lines; blank lines and lines starting with # are skipped."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise SaslConfigError(f"cannot read sasl.plain.users.file {os.fspath(path)!r}: {e}") from None
    users: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        name, sep, password = text.partition("=")
        if not sep or not name.strip():
            raise SaslConfigError(
                f"sasl.plain.users.file {os.fspath(path)!r} line {number}: expected username=password")
        users[name.strip()] = password
    return users


def check_plain(token: bytes, users: Mapping[str, str]) -> str:
    """The authenticated username for a PLAIN token (RFC 4616: authzid NUL authcid NUL passwd).

    Raises ValueError with Kafka's message for the client when the token is malformed or the
    credentials are wrong.
    """
    parts = token.split(b"\x00")
    if len(parts) != 3:
        raise ValueError(f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(parts)}")
    try:
        authzid, username, password = (p.decode("utf-8") for p in parts)
    except UnicodeDecodeError:
        raise ValueError("Invalid SASL/PLAIN response: not UTF-8") from None
    if not username:
        raise ValueError("Authentication failed: username not specified")
    if not password:
        raise ValueError("Authentication failed: password not specified")
    expected = users.get(username)
    # compare_digest either way, so that an unknown user takes as long as a wrong password.
    matches = hmac.compare_digest(password.encode(), (expected if expected is not None else "\x00").encode())
    if expected is None or not matches:
        raise ValueError(INVALID_CREDENTIALS)
    if authzid and authzid != username:
        raise ValueError("Authentication failed: Client requested an authorization id that is "
                         "different from username")
    return username


class SaslAuthenticator:
    """One connection's way through SASL authentication."""

    __slots__ = ("_mechanisms", "_users", "principal", "raw_tokens", "state")

    def __init__(self, mechanisms: Sequence[str], users: Mapping[str, str]) -> None:
        self._mechanisms = list(mechanisms)
        self._users = users
        self.state = SaslState.HANDSHAKE_OR_VERSIONS_REQUEST
        self.raw_tokens = False  # after a v0 handshake the token comes as a bare frame
        self.principal: str | None = None

    @property
    def complete(self) -> bool:
        return self.state is SaslState.COMPLETE

    def on_request(self, api_key: int, version: int, body: object) -> Step:
        """The step for a Kafka request; IllegalSaslState if it may not come now."""
        after = TRANSITIONS.get((self.state, api_key))
        if after is None or (api_key == SASL_AUTHENTICATE and self.raw_tokens):
            raise IllegalSaslState(f"unexpected request with api key {api_key} in SASL state "
                                   f"{self.state.value}")
        if api_key == API_VERSIONS:
            self.state = after
            return Step(handlers=True)
        if api_key == SASL_HANDSHAKE:
            mechanism = body.mechanism  # type: ignore[attr-defined]
            if mechanism not in self._mechanisms:
                self.state = SaslState.FAILED
                body = sasl_handshake.RESPONSE(error_code=UNSUPPORTED_SASL_MECHANISM,
                                               mechanisms=self._mechanisms)
                return Step(body=body, failed=True, error_code=UNSUPPORTED_SASL_MECHANISM,
                            reason=f"unsupported SASL mechanism {mechanism}")
            self.state = after
            self.raw_tokens = version == 0
            return Step(body=sasl_handshake.RESPONSE(error_code=0, mechanisms=self._mechanisms))
        return self._authenticate(body.auth_bytes)  # type: ignore[attr-defined]

    def on_token(self, token: bytes) -> Step:
        """The step for a bare token (after a v0 handshake)."""
        if not (self.state is SaslState.AUTHENTICATE and self.raw_tokens):
            raise IllegalSaslState("unexpected SASL token")
        return self._authenticate(token)

    def _authenticate(self, token: bytes) -> Step:
        try:
            self.principal = "User:" + check_plain(token, self._users)
        except ValueError as e:
            self.state = SaslState.FAILED
            body = sasl_authenticate.RESPONSE(error_code=SASL_AUTHENTICATION_FAILED,
                                              error_message=str(e))
            return Step(body=body, failed=True, error_code=SASL_AUTHENTICATION_FAILED, reason=str(e))
        self.state = SaslState.COMPLETE
        return Step(body=sasl_authenticate.RESPONSE(error_code=0))
