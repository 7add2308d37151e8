"""The client side of a listener's security protocol, for every connection a broker opens to
another broker or to the controller (Kafka's ChannelBuilders.clientChannelBuilder with its
SslFactory in client mode and SaslClientAuthenticator).

``connect`` gives a socket that is ready for requests: TCP, then for SSL and SASL_SSL a TLS
handshake that checks the server's certificate against the broker's trust store (and its host
name unless ``ssl.endpoint.identification.algorithm`` is empty), presenting the broker's own key
store as the client certificate; then for SASL_PLAINTEXT and SASL_SSL a SaslHandshake (v1) naming
the mechanism and the SaslAuthenticate (v2) exchange: PLAIN's one token (RFC 4616), SCRAM's two
(RFC 5802). A refused authentication raises ``AuthenticationError`` with the server's message; a
failed TLS handshake raises ssl.SSLError (an OSError, as a refused connection).
"""

from __future__ import annotations

import functools
import os
import socket
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kafkalite.common.endpoints import SASL_PROTOCOLS, TLS_PROTOCOLS
from kafkalite.common.errors import ConfigError
from kafkalite.common.jaas import JaasConfigError, parse_jaas_config
from kafkalite.common.scram import MECHANISMS, ScramClient, ScramError
from kafkalite.network.settings import TlsSettings
from kafkalite.network.tls import PROTOCOLS, _load_inline_chain, normalise_pem
from kafkalite.protocol import UNLIMITED_FRAME_SIZE, FrameDecoder, decode_response, encode_request
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.error_codes import UNSUPPORTED_SASL_MECHANISM
from kafkalite.protocol.messages import sasl_authenticate, sasl_handshake

__all__ = ["CLIENT_MECHANISMS", "PLAINTEXT", "AuthenticationError", "ClientSecurity", "connect", "exchange"]

# The SASL mechanisms this client side speaks.
CLIENT_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
SASL_HANDSHAKE_VERSION = 1  # tokens travel in SaslAuthenticate requests
SASL_AUTHENTICATE_VERSION = 2


class AuthenticationError(ConnectionError):
    """The server refused this client's SASL authentication (wrong credentials, a mechanism it does
    not enable); the message says where and why."""


@dataclass(frozen=True)
class ClientSecurity:
    """How to connect to one listener: its security protocol and, as the protocol needs, the TLS
    settings (trust store, key store) and the SASL mechanism with this client's credentials."""

    protocol: str = "PLAINTEXT"
    listener: str = field(default="", compare=False)  # the listener's name, for messages
    tls: TlsSettings | None = None
    endpoint_identification: str = "https"  # ssl.endpoint.identification.algorithm; "" = none
    mechanism: str | None = None
    username: str | None = None
    password: str | None = None

    @property
    def uses_tls(self) -> bool:
        return self.protocol in TLS_PROTOCOLS

    @property
    def uses_sasl(self) -> bool:
        return self.protocol in SASL_PROTOCOLS

    def describe(self) -> str:
        what = f"{self.listener} ({self.protocol}" if self.listener else f"({self.protocol}"
        return what + (f", SASL mechanism {self.mechanism})" if self.uses_sasl else ")")

    def __repr__(self) -> str:  # never the password
        return f"ClientSecurity({self.describe()}, user={self.username!r})"


PLAINTEXT = ClientSecurity()


def client_context(tls: TlsSettings, check_hostname: bool) -> ssl.SSLContext:
    """The client side SSLContext from the broker's ssl.* settings: trust the trust store (the
    system's CAs without one, as Java's default trust manager), present the key store if any.
    Built once per settings and store files: a key or trust store file replaced in place (its
    modification time, size or inode changed) gives a new context for the next connection."""
    stamps = tuple(_stamp(path) for path in (tls.truststore_location, tls.keystore_location))
    return _client_context(tls, check_hostname, stamps)


def _stamp(path: str | None) -> tuple[int, int, int] | None:
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None  # loading it says what is wrong
    return st.st_mtime_ns, st.st_size, st.st_ino


@functools.lru_cache(maxsize=8)
def _client_context(tls: TlsSettings, check_hostname: bool, _stamps: tuple[object, ...]) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    versions = sorted(PROTOCOLS[p] for p in tls.enabled_protocols)
    context.minimum_version, context.maximum_version = versions[0], versions[-1]
    context.check_hostname = check_hostname
    context.verify_mode = ssl.CERT_REQUIRED
    if tls.truststore_location is None and tls.truststore_certificates is None:
        context.load_default_certs()
    if tls.truststore_location is not None:
        context.load_verify_locations(cafile=tls.truststore_location)
    if tls.truststore_certificates is not None:
        context.load_verify_locations(cadata=normalise_pem(tls.truststore_certificates))
    if tls.keystore_location is not None:
        context.load_cert_chain(tls.keystore_location, password=tls.key_password)
    elif tls.keystore_key is not None and tls.keystore_certificate_chain is not None:
        _load_inline_chain(context, tls.keystore_certificate_chain, tls.keystore_key, tls.key_password)
    return context


def exchange(sock: socket.socket, decoder: FrameDecoder, correlation_id: int, client_id: str,
             api_key: int, version: int, body: Any, strict: bool = True,
             where: str = "the peer") -> Any:
    """Send one request on a blocking socket and read its response."""
    sock.sendall(encode_request(api_key, version, correlation_id, client_id, body))
    while True:
        for payload in decoder.frames():
            got, response = decode_response(payload, api_key, version, strict)
            if got != correlation_id:
                raise ConnectionError(f"correlation id {got} does not match {correlation_id}")
            return response
        # The rest of a large response (a replica fetcher's records) is read straight into its
        # own buffer, as much as the socket has per call: one copy and a few system calls per MB
        # instead of 16 reads of 64 kB each copied twice.
        view = decoder.body_view()
        if view is not None:
            with view:
                n = sock.recv_into(view)
            if not n:
                raise ConnectionError(f"{where} closed the connection")
            decoder.body_received(n)
            continue
        data = sock.recv(65536)
        if not data:
            raise ConnectionError(f"{where} closed the connection")
        decoder.feed(data)


def connect(host: str, port: int, timeout: float, security: ClientSecurity = PLAINTEXT,
            client_id: str = "kafkalite") -> socket.socket:
    """A connected socket to ``host:port``, its TLS handshake and SASL authentication done."""
    sock: socket.socket = socket.create_connection((host, port), timeout=timeout)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if security.uses_tls:
            assert security.tls is not None, "a TLS protocol needs the TLS settings"
            check = security.endpoint_identification.lower() == "https"
            sock = client_context(security.tls, check).wrap_socket(sock, server_hostname=host)
        if security.uses_sasl:
            _authenticate(sock, host, port, security, client_id)
    except BaseException:
        sock.close()
        raise
    return sock


def _authenticate(sock: socket.socket, host: str, port: int, security: ClientSecurity,
                  client_id: str) -> None:
    where = f"{host}:{port} ({security.describe()})"
    mechanism = security.mechanism or ""
    decoder = FrameDecoder(UNLIMITED_FRAME_SIZE)
    corr = 0

    def send(api_key: int, version: int, body: Any) -> Any:
        nonlocal corr
        corr += 1
        return exchange(sock, decoder, corr, client_id, api_key, version, body, where=where)

    handshake = send(ApiKey.SASL_HANDSHAKE, SASL_HANDSHAKE_VERSION,
                     sasl_handshake.REQUEST(mechanism=mechanism))
    if handshake.error_code == UNSUPPORTED_SASL_MECHANISM:
        raise AuthenticationError(
            f"SASL authentication with {where} failed: the server does not enable mechanism "
            f"{mechanism} (it enables {', '.join(handshake.mechanisms) or 'none'})")
    if handshake.error_code:
        raise AuthenticationError(f"SASL handshake with {where} failed: error {handshake.error_code}")
    step = _mechanism_client(security)
    token: bytes | None = step(None)
    while token is not None:
        response = send(ApiKey.SASL_AUTHENTICATE, SASL_AUTHENTICATE_VERSION,
                        sasl_authenticate.REQUEST(auth_bytes=token))
        if response.error_code:
            raise AuthenticationError(
                f"SASL authentication with {where} as {security.username!r} failed: "
                f"{response.error_message or 'error ' + str(response.error_code)}")
        token = step(bytes(response.auth_bytes or b""))


def _mechanism_client(security: ClientSecurity) -> Callable[[bytes | None], bytes | None]:
    """A step function: given the server's last token (None at first), this client's next token,
    or None when the exchange is complete."""
    mechanism = security.mechanism
    username, password = security.username or "", security.password or ""
    if mechanism == "PLAIN":
        sent = False

        def plain(_challenge: bytes | None) -> bytes | None:
            nonlocal sent
            if sent:
                return None
            sent = True
            # RFC 4616: authzid NUL authcid NUL passwd; Kafka's PlainSaslClient sends no authzid.
            return b"\x00" + username.encode() + b"\x00" + password.encode()

        return plain
    scram_mechanism = MECHANISMS.get(mechanism or "")
    if scram_mechanism is not None:
        # Kafka's ScramSaslClient: client-first, client-final (the proof), then the server's
        # signature checked, so a server that does not know the password is not trusted either.
        client = ScramClient(scram_mechanism, username, password)
        steps = 0

        def scram(challenge: bytes | None) -> bytes | None:
            nonlocal steps
            steps += 1
            try:
                if steps == 1:
                    return client.first()
                if steps == 2:
                    return client.final(challenge or b"")
                client.verify(challenge or b"")
                return None
            except ScramError as e:
                raise AuthenticationError(f"SCRAM authentication as {username!r} failed: {e}") from None

        return scram
    raise AuthenticationError(f"SASL mechanism {mechanism} is not supported by kafkalite's client")


def client_security_from_properties(props: Mapping[str, str]) -> ClientSecurity:
    """A Kafka client's security settings (what kafka-topics.sh and the other tools read from
    ``--command-config``): ``security.protocol``, ``sasl.mechanism`` (default GSSAPI, as Kafka's,
    refused: kafkalite speaks PLAIN and SCRAM), ``sasl.jaas.config`` (the login module's username
    and password), ``ssl.truststore.location`` / ``ssl.keystore.location`` (PEM),
    ``ssl.key.password`` and ``ssl.endpoint.identification.algorithm`` (default https).
    ConfigError names the setting that is missing or wrong."""
    protocol = props.get("security.protocol", "PLAINTEXT").strip().upper()
    if protocol not in ("PLAINTEXT", *TLS_PROTOCOLS, *SASL_PROTOCOLS):
        raise ConfigError(f"security.protocol {protocol!r} is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, "
                          "SASL_SSL", "security.protocol")
    tls = None
    if protocol in TLS_PROTOCOLS:
        tls = TlsSettings(enabled_protocols=tuple(PROTOCOLS), key_password=props.get("ssl.key.password"),
                          keystore_location=props.get("ssl.keystore.location"),
                          keystore_certificate_chain=None, keystore_key=None, client_auth="none",
                          truststore_location=props.get("ssl.truststore.location"),
                          truststore_certificates=None)
    identification = props.get("ssl.endpoint.identification.algorithm", "https").strip()
    if protocol not in SASL_PROTOCOLS:
        return ClientSecurity(protocol, "", tls, identification)
    mechanism = props.get("sasl.mechanism", "GSSAPI").strip()
    if mechanism not in CLIENT_MECHANISMS:
        raise ConfigError(f"sasl.mechanism {mechanism} is not supported "
                          f"(one of {', '.join(CLIENT_MECHANISMS)})", "sasl.mechanism")
    text = props.get("sasl.jaas.config")
    if not text:
        raise ConfigError("sasl.jaas.config is needed with SASL: a login module with username and "
                          "password", "sasl.jaas.config")
    try:
        module = parse_jaas_config(text)
    except JaasConfigError as e:
        raise ConfigError(f"sasl.jaas.config: {e}", "sasl.jaas.config") from None
    if module.username is None or module.password is None:
        raise ConfigError("sasl.jaas.config needs username and password options", "sasl.jaas.config")
    return ClientSecurity(protocol, "", tls, identification, mechanism, module.username, module.password)
