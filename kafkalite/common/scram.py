"""SCRAM (RFC 5802, with RFC 7677's SHA-256) as Kafka does it: the key derivations of its
ScramFormatter, the four messages of its ScramMessages (their grammar, including the
``m=`` reserved part and ``,key=value`` extensions of which Kafka knows ``tokenauth``), and both
ends of the exchange: :class:`ScramServer` (Kafka's ScramSaslServer, used by network/sasl.py)
and :class:`ScramClient` (Kafka's ScramSaslClient, for a broker's own connections).

Mechanisms: SCRAM-SHA-256 and SCRAM-SHA-512 (ScramMechanism: ids 1 and 2 in the admin apis,
iterations 4096..16384). Only the gs2 header ``n`` (no channel binding) is accepted, as Kafka.
No I/O here.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass


class ScramError(Exception):
    """A failed SCRAM step; the message is Kafka's SaslException message."""


class ScramAuthenticationError(ScramError):
    """A failure whose message Kafka sends to the client as is (its SaslAuthenticationException)."""


@dataclass(frozen=True)
class ScramMechanism:
    name: str
    hash_name: str
    mechanism_type: int  # the admin apis' ScramMechanism id
    min_iterations: int = 4096
    max_iterations: int = 16384

    def hash(self, data: bytes) -> bytes:
        return hashlib.new(self.hash_name, data).digest()

    def hmac(self, key: bytes, data: bytes) -> bytes:
        return hmac.new(key, data, self.hash_name).digest()

    def hi(self, password: bytes, salt: bytes, iterations: int) -> bytes:
        """RFC 5802's Hi(): PBKDF2 with HMAC-H, one block."""
        return hashlib.pbkdf2_hmac(self.hash_name, password, salt, iterations)

    def salted_password(self, password: str, salt: bytes, iterations: int) -> bytes:
        return self.hi(password.encode("utf-8"), salt, iterations)

    def client_key(self, salted_password: bytes) -> bytes:
        return self.hmac(salted_password, b"Client Key")

    def server_key(self, salted_password: bytes) -> bytes:
        return self.hmac(salted_password, b"Server Key")

    def stored_key(self, client_key: bytes) -> bytes:
        return self.hash(client_key)

    def credential(self, password: str, salt: bytes, iterations: int) -> ScramCredential:
        return self.credential_from_salted(self.salted_password(password, salt, iterations), salt, iterations)

    def credential_from_salted(self, salted_password: bytes, salt: bytes, iterations: int) -> ScramCredential:
        """What a server keeps (never the password): from the SaltedPassword that
        AlterUserScramCredentials carries."""
        return ScramCredential(salt, self.stored_key(self.client_key(salted_password)),
                               self.server_key(salted_password), iterations)


SCRAM_SHA_256 = ScramMechanism("SCRAM-SHA-256", "sha256", 1)
SCRAM_SHA_512 = ScramMechanism("SCRAM-SHA-512", "sha512", 2)
MECHANISMS: dict[str, ScramMechanism] = {m.name: m for m in (SCRAM_SHA_256, SCRAM_SHA_512)}
MECHANISMS_BY_TYPE: dict[int, ScramMechanism] = {m.mechanism_type: m for m in MECHANISMS.values()}
DEFAULT_ITERATIONS = 4096
TOKEN_AUTH = "tokenauth"  # ScramLoginModule.TOKEN_AUTH_CONFIG: the one extension Kafka knows


@dataclass(frozen=True)
class ScramCredential:
    """Kafka's ScramCredential: what the controller stores and pushes for a user and mechanism."""

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def to_text(self) -> str:
        """ScramCredentialUtils.credentialToString."""
        b64 = base64.b64encode
        return (f"salt={b64(self.salt).decode()},stored_key={b64(self.stored_key).decode()},"
                f"server_key={b64(self.server_key).decode()},iterations={self.iterations}")

    @classmethod
    def from_text(cls, text: str) -> ScramCredential:
        """ScramCredentialUtils.credentialFromString."""
        fields = dict(p.split("=", 1) for p in text.split(",") if "=" in p)
        if set(fields) != {"salt", "stored_key", "server_key", "iterations"}:
            raise ValueError(f"Credentials not valid: {text}")
        b64d = base64.b64decode
        return cls(b64d(fields["salt"]), b64d(fields["stored_key"]), b64d(fields["server_key"]),
                   int(fields["iterations"]))


def xor(a: bytes, b: bytes) -> bytes:
    if len(a) != len(b):
        raise ScramError("Argument arrays must be of the same length")
    return bytes(x ^ y for x, y in zip(a, b, strict=True))


def secure_random_string() -> str:
    """ScramFormatter.secureRandomString: a 130-bit random number in base 36."""
    n = secrets.randbits(130)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if not n:
            return out


def sasl_name(username: str) -> str:
    """ScramFormatter.saslName: ``=`` -> ``=3D``, ``,`` -> ``=2C``."""
    return username.replace("=", "=3D").replace(",", "=2C")


def username(saslname: str) -> str:
    """ScramFormatter.username: the inverse of :func:`sasl_name`; a stray ``=`` is invalid."""
    name = saslname.replace("=2C", ",")
    if name.replace("=3D", "").find("=") >= 0:
        raise ScramError("Invalid username: " + saslname)
    return name.replace("=3D", "=")


# --- the messages (ScramMessages' grammar) ----------------------------------------------------------

_ALPHA = r"[A-Za-z]+"
_VALUE_SAFE = r"[\x01-\x2B\x2D-\x3C\x3E-\x7F]+"  # \x01-\x7F but , and =
_VALUE = r"[\x01-\x2B\x2D-\x7F]+"  # \x01-\x7F but ,
_PRINTABLE = r"[\x21-\x2B\x2D-\x7E]+"  # \x21-\x7E but ,
_SASLNAME = r"(?:[\x01-\x2B\x2D-\x3C\x3E-\x7F]|=2C|=3D)+"
_B64C = r"[a-zA-Z0-9/+]"
_BASE64 = rf"(?:{_B64C}{{4}})*(?:{_B64C}{{3}}=|{_B64C}{{2}}==)?"
_RESERVED = rf"(?:m={_VALUE},)?"
_EXTENSIONS = rf"(?:,{_ALPHA}={_VALUE})*"

_CLIENT_FIRST = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,{_RESERVED}n=(?P<saslname>{_SASLNAME}),"
    rf"r=(?P<nonce>{_PRINTABLE})(?P<extensions>{_EXTENSIONS})")
_SERVER_FIRST = re.compile(
    rf"{_RESERVED}r=(?P<nonce>{_PRINTABLE}),s=(?P<salt>{_BASE64}),i=(?P<iterations>[0-9]+){_EXTENSIONS}")
_CLIENT_FINAL = re.compile(
    rf"c=(?P<channel>{_BASE64}),r=(?P<nonce>{_PRINTABLE}){_EXTENSIONS},p=(?P<proof>{_BASE64})")
_SERVER_FINAL = re.compile(
    rf"(?:e=(?P<error>{_VALUE_SAFE}))|(?:v=(?P<signature>{_BASE64}){_EXTENSIONS})")


def _text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error as e:
        raise ScramError(f"Invalid base64: {text}") from e


def parse_extensions(text: str) -> dict[str, str]:
    """``k=v,k=v`` (Utils.parseMap): in the order given."""
    out: dict[str, str] = {}
    for part in text.split(","):
        if part:
            key, _, value = part.partition("=")
            out[key] = value
    return out


@dataclass(frozen=True)
class ClientFirstMessage:
    saslname: str
    nonce: str
    authorization_id: str = ""
    extensions: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, data: bytes) -> ClientFirstMessage:
        message = _text(data)
        m = _CLIENT_FIRST.fullmatch(message)
        if m is None:
            raise ScramError("Invalid SCRAM client first message format: " + message)
        ext = m.group("extensions")
        return cls(m.group("saslname"), m.group("nonce"), m.group("authzid") or "",
                   tuple(parse_extensions(ext[1:]).items()) if ext else ())

    @property
    def gs2_header(self) -> str:
        return f"n,{self.authorization_id},"

    @property
    def bare(self) -> str:
        """client-first-message-bare as Kafka rebuilds it (extensions included)."""
        ext = ",".join(f"{k}={v}" for k, v in self.extensions)
        return f"n={self.saslname},r={self.nonce}" + (f",{ext}" if ext else "")

    def to_bytes(self) -> bytes:
        return (self.gs2_header + self.bare).encode("utf-8")


@dataclass(frozen=True)
class ServerFirstMessage:
    nonce: str  # the client's nonce followed by the server's
    salt: bytes
    iterations: int

    @classmethod
    def parse(cls, data: bytes) -> ServerFirstMessage:
        message = _text(data)
        m = _SERVER_FIRST.fullmatch(message)
        if m is None:
            raise ScramError("Invalid SCRAM server first message format: " + message)
        try:
            iterations = int(m.group("iterations"))
        except ValueError:
            raise ScramError("Invalid SCRAM server first message format: invalid iterations") from None
        if iterations <= 0 or iterations > 2**31 - 1:
            raise ScramError(f"Invalid SCRAM server first message format: invalid iterations {iterations}")
        return cls(m.group("nonce"), _unb64(m.group("salt")), iterations)

    def to_message(self) -> str:
        return f"r={self.nonce},s={_b64(self.salt)},i={self.iterations}"

    def to_bytes(self) -> bytes:
        return self.to_message().encode("utf-8")


@dataclass(frozen=True)
class ClientFinalMessage:
    channel_binding: bytes
    nonce: str
    proof: bytes = b""

    @classmethod
    def parse(cls, data: bytes) -> ClientFinalMessage:
        message = _text(data)
        m = _CLIENT_FINAL.fullmatch(message)
        if m is None:
            raise ScramError("Invalid SCRAM client final message format: " + message)
        return cls(_unb64(m.group("channel")), m.group("nonce"), _unb64(m.group("proof")))

    @property
    def without_proof(self) -> str:
        return f"c={_b64(self.channel_binding)},r={self.nonce}"

    def to_bytes(self) -> bytes:
        return f"{self.without_proof},p={_b64(self.proof)}".encode()


@dataclass(frozen=True)
class ServerFinalMessage:
    error: str | None = None
    server_signature: bytes | None = None

    @classmethod
    def parse(cls, data: bytes) -> ServerFinalMessage:
        message = _text(data)
        m = _SERVER_FINAL.fullmatch(message)
        if m is None:
            raise ScramError("Invalid SCRAM server final message format: " + message)
        if m.group("error") is not None:
            return cls(error=m.group("error"))
        return cls(server_signature=_unb64(m.group("signature")))

    def to_bytes(self) -> bytes:
        if self.error is not None:
            return f"e={self.error}".encode()
        assert self.server_signature is not None
        return f"v={_b64(self.server_signature)}".encode()


def auth_message(first: ClientFirstMessage, server_first: ServerFirstMessage,
                 final: ClientFinalMessage) -> bytes:
    """AuthMessage = client-first-message-bare "," server-first-message ","
    client-final-message-without-proof."""
    return f"{first.bare},{server_first.to_message()},{final.without_proof}".encode()


def client_proof(mechanism: ScramMechanism, salted_password: bytes, message: bytes) -> bytes:
    """ClientProof = ClientKey XOR HMAC(StoredKey, AuthMessage)."""
    client_key = mechanism.client_key(salted_password)
    signature = mechanism.hmac(mechanism.stored_key(client_key), message)
    return xor(client_key, signature)


def server_signature(mechanism: ScramMechanism, server_key: bytes, message: bytes) -> bytes:
    return mechanism.hmac(server_key, message)


# --- the two ends ---------------------------------------------------------------------------------

class ScramServer:
    """Kafka's ScramSaslServer for one exchange: ``evaluate(token)`` returns the challenge or
    raises ScramError (Kafka's message). ``lookup(username)`` gives the user's credential for this
    mechanism or None."""

    def __init__(self, mechanism: ScramMechanism, lookup: Callable[[str], ScramCredential | None],
                 nonce: str | None = None) -> None:
        self.mechanism = mechanism
        self._lookup = lookup
        self._server_nonce = nonce
        self._first: ClientFirstMessage | None = None
        self._server_first: ServerFirstMessage | None = None
        self._credential: ScramCredential | None = None
        self.authorization_id: str | None = None
        self.token_auth = False
        self.complete = False
        self.failed = False

    def evaluate(self, token: bytes) -> bytes:
        if self.complete or self.failed:
            raise ScramError(f"Unexpected challenge in Sasl server state "
                             f"{'COMPLETE' if self.complete else 'FAILED'}")
        try:
            if self._first is None:
                return self._client_first(token)
            return self._client_final(token)
        except ScramError:
            self.failed = True
            self._credential = None
            raise

    def _client_first(self, token: bytes) -> bytes:
        first = ClientFirstMessage.parse(token)
        extensions = dict(first.extensions)
        nonce = self._server_nonce or secure_random_string()
        name = username(first.saslname)
        if extensions.get(TOKEN_AUTH, "").lower() == "true":
            # Delegation tokens are not served: no token has an owner.
            raise ScramError("Token Authentication failed: Invalid tokenId : " + name)
        credential = self._lookup(name)
        if credential is None:
            raise ScramError("Authentication failed: Invalid user credentials")
        if first.authorization_id and first.authorization_id != name:
            raise ScramAuthenticationError("Authentication failed: Client requested an authorization id "
                                           "that is different from username")
        if credential.iterations < self.mechanism.min_iterations:
            raise ScramError(f"Iterations {credential.iterations} is less than the minimum "
                             f"{self.mechanism.min_iterations} for {self.mechanism.name}")
        self._first = first
        self._credential = credential
        self.authorization_id = name
        self._server_first = ServerFirstMessage(first.nonce + nonce, credential.salt, credential.iterations)
        return self._server_first.to_bytes()

    def _client_final(self, token: bytes) -> bytes:
        assert self._first is not None and self._server_first is not None and self._credential is not None
        final = ClientFinalMessage.parse(token)
        if final.nonce != self._server_first.nonce:
            raise ScramError("Invalid client nonce in the final client message.")
        message = auth_message(self._first, self._server_first, final)
        mechanism = self.mechanism
        expected = self._credential.stored_key
        signature = mechanism.hmac(expected, message)
        if len(final.proof) != len(signature):
            raise ScramError("Invalid client credentials")
        computed = mechanism.hash(xor(signature, final.proof))
        if not hmac.compare_digest(computed, expected):
            raise ScramError("Invalid client credentials")
        server_final = ServerFinalMessage(server_signature=server_signature(
            mechanism, self._credential.server_key, message))
        self._credential = None
        self.complete = True
        return server_final.to_bytes()


class ScramClient:
    """Kafka's ScramSaslClient: ``first()``, then ``final(server_first)``, then
    ``verify(server_final)``; raises ScramError."""

    def __init__(self, mechanism: ScramMechanism, user: str, password: str,
                 nonce: str | None = None, extensions: dict[str, str] | None = None) -> None:
        self.mechanism = mechanism
        self._password = password
        self._first = ClientFirstMessage(sasl_name(user), nonce or secure_random_string(),
                                         extensions=tuple((extensions or {}).items()))
        self._server_signature: bytes | None = None

    def first(self) -> bytes:
        return self._first.to_bytes()

    def final(self, server_first: bytes) -> bytes:
        sf = ServerFirstMessage.parse(server_first)
        if not sf.nonce.startswith(self._first.nonce):
            raise ScramError("Invalid server nonce: does not start with client nonce")
        if sf.iterations < self.mechanism.min_iterations:
            raise ScramError(f"Requested iterations {sf.iterations} is less than the minimum "
                             f"{self.mechanism.min_iterations} for {self.mechanism.name}")
        salted = self.mechanism.salted_password(self._password, sf.salt, sf.iterations)
        unsigned = ClientFinalMessage(self._first.gs2_header.encode("utf-8"), sf.nonce)
        message = auth_message(self._first, sf, unsigned)
        proof = client_proof(self.mechanism, salted, message)
        self._server_signature = server_signature(self.mechanism, self.mechanism.server_key(salted), message)
        return ClientFinalMessage(unsigned.channel_binding, sf.nonce, proof).to_bytes()

    def verify(self, server_final: bytes) -> None:
        sf = ServerFinalMessage.parse(server_final)
        if sf.error is not None:
            raise ScramError("Sasl authentication using " + self.mechanism.name +
                             " failed with error: " + sf.error)
        assert self._server_signature is not None
        if not hmac.compare_digest(sf.server_signature or b"", self._server_signature):
            raise ScramError("Invalid server signature in server final message")
