"""TLS for SSL and SASL_SSL listeners (Kafka's SslTransportLayer and SslFactory).

The Processor keeps doing its own non-blocking socket reads and writes; a connection's TLS state
(its KafkaChannel's transport) sits between them and the frames as an ``ssl.SSLObject`` over two
memory BIOs. Every read feeds
all the ciphertext it got and drains all the plaintext it yields, so nothing waits inside the TLS
object where the selector cannot see it.
"""

from __future__ import annotations

import _ssl
import os
import re
import ssl
import tempfile

from .settings import TlsSettings

CLIENT_AUTH = {"required": ssl.CERT_REQUIRED, "requested": ssl.CERT_OPTIONAL, "none": ssl.CERT_NONE}
PROTOCOLS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
_READ = 65536

# A PEM block whose line breaks a properties file may have turned into spaces (Kafka accepts
# ssl.keystore.key and friends written on one line).
_PEM_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \1-----", re.S)


class TlsConfigError(ValueError):
    """A key store or trust store that cannot be loaded; the message names the setting (also kept
    in ``setting``)."""

    def __init__(self, message: str, setting: str) -> None:
        super().__init__(message)
        self.setting = setting


def check_key_store(tls: TlsSettings) -> None:
    """TlsConfigError unless the key store is given one way: ssl.keystore.location, or
    ssl.keystore.key with ssl.keystore.certificate.chain (the broker's configuration checks the
    same at startup; this is for settings changed live)."""
    inline = tls.keystore_certificate_chain is not None or tls.keystore_key is not None
    if tls.keystore_location is not None and inline:
        raise TlsConfigError("set either ssl.keystore.location or ssl.keystore.key with "
                             "ssl.keystore.certificate.chain, not both", "ssl.keystore.location")
    if inline and (tls.keystore_certificate_chain is None or tls.keystore_key is None):
        raise TlsConfigError("ssl.keystore.key and ssl.keystore.certificate.chain must be set "
                             "together", "ssl.keystore.key")
    if tls.keystore_location is None and not inline:
        raise TlsConfigError("an SSL listener needs a key store: set ssl.keystore.location or "
                             "ssl.keystore.key and ssl.keystore.certificate.chain",
                             "ssl.keystore.location")


def normalise_pem(text: str) -> str:
    """PEM text with each block's base64 on lines of 64, whatever whitespace it came with."""
    blocks = []
    for label, body in _PEM_BLOCK.findall(text):
        data = "".join(body.split())
        lines = [data[i:i + 64] for i in range(0, len(data), 64)]
        blocks.append("\n".join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"]))
    return "\n".join(blocks) + "\n"


def server_context(tls: TlsSettings) -> ssl.SSLContext:
    """The server side SSLContext from the broker's ssl.* settings."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    versions = sorted(PROTOCOLS[p] for p in tls.enabled_protocols)
    context.minimum_version, context.maximum_version = versions[0], versions[-1]
    password = tls.key_password
    location = tls.keystore_location
    try:
        if location is not None:
            context.load_cert_chain(location, password=password)
        else:
            # The configuration checks that both are set when there is no keystore_location.
            _load_inline_chain(context, tls.keystore_certificate_chain or "", tls.keystore_key or "",
                               password)
    except (OSError, ssl.SSLError) as e:
        setting = "ssl.keystore.location" if location is not None else "ssl.keystore.key"
        raise TlsConfigError(f"cannot load the key store ({setting}): {e}", setting) from None
    context.verify_mode = CLIENT_AUTH[tls.client_auth]
    trust_file, trust_text = tls.truststore_location, tls.truststore_certificates
    try:
        if trust_file is not None:
            context.load_verify_locations(cafile=trust_file)
        if trust_text is not None:
            context.load_verify_locations(cadata=normalise_pem(trust_text))
    except (OSError, ssl.SSLError) as e:
        setting = "ssl.truststore.location" if trust_file is not None else "ssl.truststore.certificates"
        raise TlsConfigError(f"cannot load the trust store ({setting}): {e}", setting) from None
    return context


def _load_inline_chain(context: ssl.SSLContext, chain: str, key: str, password: str | None) -> None:
    # The ssl module loads certificates and keys from files only: a private file, removed at once.
    fd, path = tempfile.mkstemp(prefix="kafkalite-keystore-", suffix=".pem")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(normalise_pem(key) + normalise_pem(chain))
        context.load_cert_chain(path, password=password)
    finally:
        os.unlink(path)


def key_store_identity(tls: TlsSettings) -> tuple[str, frozenset[tuple[str, str]]] | None:
    """The subject of the key store's certificate (the first of its chain), written as Kafka's
    X500Principal prints it (``CN=broker, OU=..., O=...``), and its subject alternative names:
    what Kafka's SslFactory requires a key store replaced live to keep (ssl.allow.dn.changes,
    ssl.allow.san.changes). None if the store cannot be read here (it is loaded elsewhere)."""
    decode = getattr(_ssl, "_test_decode_cert", None)  # the ssl module's own certificate parser
    if decode is None:
        return None
    try:
        if tls.keystore_location is not None:
            cert = decode(tls.keystore_location)
        else:
            fd, path = tempfile.mkstemp(prefix="kafkalite-keystore-", suffix=".pem")
            try:
                with os.fdopen(fd, "w") as f:
                    f.write(normalise_pem(tls.keystore_certificate_chain or ""))
                cert = decode(path)
            finally:
                os.unlink(path)
    except (OSError, ssl.SSLError):
        return None
    subject = ", ".join(f"{_SHORT_NAMES.get(k, k)}={v}"
                        for rdn in reversed(cert.get("subject", ())) for k, v in rdn)
    return subject, frozenset(cert.get("subjectAltName", ()))


class TlsTransport:
    """One connection's TLS state: ciphertext in from the socket, plaintext out, and back."""

    __slots__ = ("_in", "_out", "_tls", "closed", "ready")

    def __init__(self, context: ssl.SSLContext) -> None:
        self._in = ssl.MemoryBIO()
        self._out = ssl.MemoryBIO()
        self._tls = context.wrap_bio(self._in, self._out, server_side=True)
        self.ready = False  # the handshake is done
        self.closed = False  # the peer ended the TLS stream

    def unwrap(self, ciphertext: bytes) -> bytes:
        """Take ciphertext read from the socket; return the plaintext it completes (maybe b"").

        Raises ssl.SSLError for a failed handshake or a corrupt record; sets ``closed`` when the
        peer ends the stream (close_notify).
        """
        self._in.write(ciphertext)
        if not self.ready:
            try:
                self._tls.do_handshake()
            except ssl.SSLWantReadError:
                return b""
            self.ready = True
        chunks = []
        while True:
            try:
                chunk = self._tls.read(_READ)
            except ssl.SSLWantReadError:
                break
            except ssl.SSLZeroReturnError:
                self.closed = True
                break
            if not chunk:
                self.closed = True
                break
            chunks.append(chunk)
        return b"".join(chunks)

    def wrap(self, plaintext: bytes | memoryview) -> bytes:
        """The ciphertext for ``plaintext``, after any TLS output still waiting to be written."""
        self._tls.write(plaintext)
        return self._out.read()

    def output(self) -> bytes:
        """TLS's own bytes to write (handshake messages, alerts, session tickets)."""
        return self._out.read()

    @property
    def version(self) -> str | None:
        return self._tls.version()

    def peer_subject(self) -> str | None:
        """The client certificate's subject as ``CN=...,O=...`` (Kafka's SSL principal), if one was sent."""
        cert = self._tls.getpeercert()
        if not cert:
            return None
        return ",".join(f"{_SHORT_NAMES.get(k, k)}={v}"
                        for rdn in reversed(cert.get("subject", ())) for k, v in rdn)


_SHORT_NAMES = {"commonName": "CN", "organizationName": "O", "organizationalUnitName": "OU",
                "countryName": "C", "localityName": "L", "stateOrProvinceName": "ST"}
