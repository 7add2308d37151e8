"""SASL authentication on SASL_PLAINTEXT and SASL_SSL listeners (Kafka's SaslServerAuthenticator
with its PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER servers, and KIP-368's
re-authentication).

A new connection on such a listener may send ApiVersions (answered by the handlers, as any
request), then SaslHandshake naming a mechanism, then one token: in a SaslAuthenticate request
after a v1 handshake, or as a bare size-prefixed frame after a v0 one. Anything else before
authentication succeeds is Kafka's IllegalSaslStateException: the connection is closed. Each
connection's KafkaChannel carries one until authentication succeeds; the Processor decides what
is sent when. This module does no I/O.

SCRAM takes two tokens (client-first, client-final), OAUTHBEARER one (or two when the token is
refused: the server's JSON error, the client's ``\x01``, then the failure), PLAIN one. SCRAM
users come from the :class:`CredentialCache` the controller's pushes fill (salted keys only).
With ``connections.max.reauth.ms`` (or an OAUTHBEARER token's expiry) SaslAuthenticate v1+ tells
the client its session lifetime; it re-authenticates on the live connection by sending
SaslHandshake again, and a connection whose session is over is closed at its next other request.
"""

from __future__ import annotations

import base64
import binascii
import enum
import hmac
import json
import os
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafkalite.common.scram import (
    MECHANISMS as SCRAM_MECHANISMS,
)
from kafkalite.common.scram import (
    ScramAuthenticationError,
    ScramCredential,
    ScramError,
    ScramServer,
)
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
    (SaslState.AUTHENTICATE, SASL_AUTHENTICATE): SaslState.COMPLETE,  # or again AUTHENTICATE: SCRAM
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
    token: bytes = b""  # after a v0 handshake: the bare token to send back


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


PLAIN, OAUTHBEARER = "PLAIN", "OAUTHBEARER"
SUPPORTED_MECHANISMS = (PLAIN, *SCRAM_MECHANISMS, OAUTHBEARER)


class SaslFailure(Exception):
    """A failed SASL step. ``client_message``: what the client is told (Kafka's
    SaslAuthenticationException message); None for Kafka's SaslException, whose text is not sent."""

    def __init__(self, reason: str, client_message: str | None = None) -> None:
        super().__init__(reason)
        self.client_message = client_message


class CredentialCache:
    """The SCRAM credentials this broker authenticates with (Kafka's CredentialCache): user ->
    mechanism type -> salted keys, filled by the controller's pushes. Each user's dict is replaced
    whole, so Processors read it without a lock."""

    def __init__(self) -> None:
        self._users: dict[str, dict[int, ScramCredential]] = {}
        self._lock = threading.Lock()  # writers only

    def get(self, mechanism: str, user: str) -> ScramCredential | None:
        return self._users.get(user, {}).get(SCRAM_MECHANISMS[mechanism].mechanism_type)

    def user(self, user: str) -> dict[int, ScramCredential]:
        return self._users.get(user, {})

    def users(self) -> list[str]:
        return sorted(self._users)

    def set(self, user: str, mechanism_type: int, credential: ScramCredential | None) -> None:
        with self._lock:
            mine = dict(self._users.get(user, {}))
            if credential is None:
                mine.pop(mechanism_type, None)
            else:
                mine[mechanism_type] = credential
            if mine:
                self._users[user] = mine
            else:
                self._users.pop(user, None)

    def clear(self) -> None:
        with self._lock:
            self._users = {}


class PlainServer:
    """Kafka's PlainSaslServer: one token."""

    def __init__(self, users: Mapping[str, str]) -> None:
        self._users = users
        self.complete = False
        self.authorization_id: str | None = None
        self.expiry_ms: int | None = None

    def evaluate(self, token: bytes) -> bytes:
        try:
            self.authorization_id = check_plain(token, self._users)
        except ValueError as e:
            raise SaslFailure(str(e), str(e)) from None
        self.complete = True
        return b""


class ScramMechanismServer:
    """Kafka's ScramSaslServer over the credential cache: two tokens."""

    def __init__(self, mechanism: str, credentials: CredentialCache | None) -> None:
        def lookup(user: str) -> ScramCredential | None:
            return credentials.get(mechanism, user) if credentials is not None else None

        self._server = ScramServer(SCRAM_MECHANISMS[mechanism], lookup)
        self.expiry_ms: int | None = None

    @property
    def complete(self) -> bool:
        return self._server.complete

    @property
    def authorization_id(self) -> str | None:
        return self._server.authorization_id

    def evaluate(self, token: bytes) -> bytes:
        try:
            return self._server.evaluate(token)
        except ScramAuthenticationError as e:
            raise SaslFailure(str(e), str(e)) from None
        except ScramError as e:
            raise SaslFailure(str(e)) from None


# --- OAUTHBEARER (RFC 7628) with Kafka's unsecured JWS validator ---------------------------------

SEPARATOR = "\x01"
_O_SASLNAME = r"(?:[\x01-\x2B\x2D-\x3C\x3E-\x7F]|=2C|=3D)+"
_O_KVPAIRS = r"(?:[A-Za-z]+=[\x21-\x7E \t\r\n]+\x01)*"
_O_INITIAL = re.compile(rf"n,(?:a=(?P<authzid>{_O_SASLNAME}))?,\x01(?P<kvpairs>{_O_KVPAIRS})\x01")
_O_AUTH = re.compile(r"(?P<scheme>\w+) +(?P<token>[-_.a-zA-Z0-9]+)")


@dataclass(frozen=True)
class UnsecuredValidatorOptions:
    """OAuthBearerUnsecuredValidatorCallbackHandler's options (Kafka's JAAS options
    unsecuredValidatorPrincipalClaimName, ...ScopeClaimName, ...RequiredScope,
    ...AllowableClockSkewMs)."""

    principal_claim: str = "sub"
    scope_claim: str = "scope"
    required_scope: tuple[str, ...] = ()
    allowable_clock_skew_ms: int = 0


def _b64url(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def _json_part(part: str) -> dict[str, Any]:
    try:
        value = json.loads(_b64url(part))
    except (binascii.Error, ValueError):
        raise ValueError("malformed Base64 URL encoded value") from None
    if not isinstance(value, dict):
        raise ValueError("malformed JSON")
    return value


def validate_unsecured_jws(token: str, options: UnsecuredValidatorOptions, now_ms: int
                           ) -> tuple[str, int, tuple[str, ...]]:
    """(principal, expiry ms, scope) of an unsecured JWS (OAuthBearerUnsecuredJws with
    OAuthBearerValidationUtils' checks); ValueError with Kafka's failure description, whose
    ``args[1]`` is the failing scope for insufficient_scope."""
    if ".." in token:
        raise ValueError("Malformed compact serialization contains '..'")
    splits = token.split(".")
    if len(splits) != 3:
        raise ValueError("Unsecured JWS compact serializations must have 3 dot-separated "
                         "Base64URL-encoded values")
    header, claims = _json_part(splits[0]), _json_part(splits[1])
    if header.get("alg") != "none":
        raise ValueError("Unsecured JWS must have 'none' for an algorithm")
    if splits[2]:
        raise ValueError("Unsecured JWS must not contain a digital signature")
    exp = claims.get("exp")
    if exp is None:
        raise ValueError("No expiration time in JWT")
    if not isinstance(exp, (int, float)) or isinstance(exp, bool):
        raise ValueError(f"The 'exp' claim was not of type Number: {exp}")
    principal = claims.get(options.principal_claim)
    if not isinstance(principal, str) or not principal.strip():
        raise ValueError("No principal name in JWT claim: " + options.principal_claim)
    iat = claims.get("iat")
    if iat is not None and (not isinstance(iat, (int, float)) or isinstance(iat, bool)):
        raise ValueError(f"The iat claim had the incorrect type: {type(iat).__name__}")
    skew = options.allowable_clock_skew_ms
    if iat is not None and iat * 1000 > now_ms + skew:
        raise ValueError(f"The Issued At value ({float(iat):f} seconds) was after the indicated time "
                         f"({now_ms} ms) plus allowable clock skew ({skew} ms)")
    if now_ms - skew >= exp * 1000:
        raise ValueError(f"The indicated time ({now_ms} ms) minus allowable clock skew ({skew} ms) was on "
                         f"or after the Expiration Time value ({float(exp):f} seconds)")
    if iat is not None and exp <= iat:
        raise ValueError(f"The Expiration Time time ({float(exp):f} seconds) was not after the Issued At "
                         f"time ({float(iat):f} seconds)")
    raw_scope = claims.get(options.scope_claim)
    if isinstance(raw_scope, str):
        scope = tuple(raw_scope.split())
    elif isinstance(raw_scope, list):
        scope = tuple(str(s) for s in raw_scope)
    else:
        scope = ()
    for required in options.required_scope:
        if required not in scope:
            raise ValueError(f"The provided scope ({list(scope)}) was missing a required scope "
                             f"({required}).  All required scope elements: {list(options.required_scope)}",
                             " ".join(options.required_scope))
    return principal, int(exp * 1000), scope


class OAuthBearerServer:
    """Kafka's OAuthBearerSaslServer with the unsecured validator."""

    def __init__(self, options: UnsecuredValidatorOptions) -> None:
        self._options = options
        self._error: str | None = None
        self.complete = False
        self.authorization_id: str | None = None
        self.expiry_ms: int | None = None

    def evaluate(self, token: bytes) -> bytes:
        if token == SEPARATOR.encode() and self._error is not None:
            raise SaslFailure("the client acknowledged the token's refusal", self._error)
        self._error = None
        text = token.decode("utf-8", "replace")
        m = _O_INITIAL.fullmatch(text)
        if m is None:
            raise SaslFailure("Invalid OAUTHBEARER client first message")
        props: dict[str, str] = {}
        for pair in m.group("kvpairs").split(SEPARATOR):
            if pair:
                key, _, value = pair.partition("=")
                props[key] = value
        auth = props.pop("auth", None)
        if auth is None:
            raise SaslFailure("Invalid OAUTHBEARER client first message: 'auth' not specified")
        am = _O_AUTH.fullmatch(auth)
        if am is None:
            raise SaslFailure("Invalid OAUTHBEARER client first message: invalid 'auth' format")
        if am.group("scheme").lower() != "bearer":
            raise SaslFailure(f"Invalid scheme in OAUTHBEARER client first message: {am.group('scheme')}")
        try:
            principal, expiry_ms, _ = validate_unsecured_jws(am.group("token"), self._options,
                                                             int(time.time() * 1000))
        except ValueError as e:
            scope = e.args[1] if len(e.args) > 1 else None
            status = "insufficient_scope" if scope is not None else "invalid_token"
            self._error = f'{{"status":"{status}"' + (f', "scope":"{scope}"' if scope else "") + "}"
            return self._error.encode()
        authzid = m.group("authzid") or ""
        if authzid and authzid != principal:
            message = (f"Authentication failed: Client requested an authorization id ({authzid}) that is "
                       f"different from the token's principal name ({principal})")
            raise SaslFailure(message, message)
        self.authorization_id = principal
        self.expiry_ms = expiry_ms
        self.complete = True
        return b""


@dataclass(frozen=True)
class SaslSettings:
    """What a listener's authenticators are made with."""

    mechanisms: tuple[str, ...]
    plain_users: Mapping[str, str]
    credentials: CredentialCache | None = None
    reauth_ms: int = 0  # connections.max.reauth.ms (0: off)
    oauth: UnsecuredValidatorOptions = UnsecuredValidatorOptions()


def session_lifetime_ms(reauth_ms: int, expiry_ms: int | None, now_ms: int) -> int:
    """SaslServerAuthenticator.calcCompletionTimesAndReturnSessionLifetimeMs: the lesser of
    connections.max.reauth.ms and the credential's remaining life, either alone if only one is
    set; 0 when neither."""
    left = None if expiry_ms is None else max(expiry_ms - now_ms, 0)
    if reauth_ms > 0 and left is not None:
        return min(reauth_ms, left)
    if reauth_ms > 0:
        return reauth_ms
    return left if left is not None else 0


class SaslAuthenticator:
    """One connection's way through SASL authentication (or one re-authentication)."""

    __slots__ = ("_mechanisms", "_server", "_settings", "authenticate_version", "mechanism",
                 "previous", "principal", "raw_tokens", "session_lifetime_ms", "state")

    def __init__(self, mechanisms: Sequence[str] | SaslSettings, users: Mapping[str, str] | None = None,
                 previous: tuple[str, str] | None = None) -> None:
        """``previous``: (principal, mechanism) of the session being re-authenticated."""
        if isinstance(mechanisms, SaslSettings):
            self._settings = mechanisms
        else:
            self._settings = SaslSettings(tuple(mechanisms), users or {})
        self._mechanisms = list(self._settings.mechanisms)
        self.previous = previous
        self.state = SaslState.HANDSHAKE_REQUEST if previous else SaslState.HANDSHAKE_OR_VERSIONS_REQUEST
        self.raw_tokens = False  # after a v0 handshake the token comes as a bare frame
        self.principal: str | None = None
        self.mechanism: str | None = None
        self._server: Any = None
        self.session_lifetime_ms = 0
        self.authenticate_version = 0

    @property
    def complete(self) -> bool:
        return self.state is SaslState.COMPLETE

    @property
    def reauthenticating(self) -> bool:
        return self.previous is not None

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
            previous = self.previous
            if mechanism not in self._mechanisms or (previous is not None and mechanism != previous[1]):
                self.state = SaslState.FAILED
                body = sasl_handshake.RESPONSE(error_code=UNSUPPORTED_SASL_MECHANISM,
                                               mechanisms=self._mechanisms)
                why = (f"unsupported SASL mechanism {mechanism}" if previous is None or mechanism not in
                       self._mechanisms else f"SASL mechanism '{mechanism}' requested by client is not "
                       f"supported for re-authentication of mechanism '{previous[1]}'")
                return Step(body=body, failed=True, error_code=UNSUPPORTED_SASL_MECHANISM, reason=why)
            self.state = after
            self.raw_tokens = version == 0
            self.mechanism = mechanism
            self._server = self._new_server(mechanism)
            return Step(body=sasl_handshake.RESPONSE(error_code=0, mechanisms=self._mechanisms))
        self.authenticate_version = version
        return self._authenticate(body.auth_bytes)  # type: ignore[attr-defined]

    def _new_server(self, mechanism: str) -> Any:
        s = self._settings
        if mechanism == PLAIN:
            return PlainServer(s.plain_users)
        if mechanism == OAUTHBEARER:
            return OAuthBearerServer(s.oauth)
        return ScramMechanismServer(mechanism, s.credentials)

    def on_token(self, token: bytes) -> Step:
        """The step for a bare token (after a v0 handshake)."""
        if not (self.state is SaslState.AUTHENTICATE and self.raw_tokens):
            raise IllegalSaslState("unexpected SASL token")
        return self._authenticate(token)

    def _fail(self, reason: str, client_message: str) -> Step:
        self.state = SaslState.FAILED
        body = sasl_authenticate.RESPONSE(error_code=SASL_AUTHENTICATION_FAILED, error_message=client_message)
        return Step(body=body, failed=True, error_code=SASL_AUTHENTICATION_FAILED, reason=reason)

    def _authenticate(self, token: bytes) -> Step:
        server = self._server
        what = "re-authentication" if self.previous else "authentication"
        try:
            challenge = server.evaluate(token)
        except SaslFailure as e:
            message = e.client_message
            if message is None:
                # Kafka does not tell the client why (it may say whether the user exists).
                message = (f"Authentication failed during {what} due to invalid credentials with SASL "
                           f"mechanism {self.mechanism}")
            return self._fail(str(e), message)
        if not server.complete:
            return Step(body=sasl_authenticate.RESPONSE(error_code=0, auth_bytes=challenge), token=challenge)
        principal = "User:" + server.authorization_id
        if self.previous is not None and principal != self.previous[0]:
            message = (f"Cannot change principals during re-authentication from {self.previous[0]}: "
                       f"{principal}")
            return self._fail(message, message)
        self.principal = principal
        self.state = SaslState.COMPLETE
        lifetime = 0
        if self.authenticate_version >= 1:
            lifetime = session_lifetime_ms(self._settings.reauth_ms, server.expiry_ms,
                                           int(time.time() * 1000))
        self.session_lifetime_ms = lifetime
        return Step(body=sasl_authenticate.RESPONSE(error_code=0, auth_bytes=challenge,
                                                    session_lifetime_ms=lifetime), token=challenge)
