"""TLS key stores from files and inline PEM, their errors, and a handshake through TlsTransport's
memory BIOs against Python's own client, with no socket."""

from __future__ import annotations

import re
import ssl

import pytest
import trustme
from hypothesis import given
from hypothesis import strategies as st

from kafkalite.network.settings import TlsSettings
from kafkalite.network.tls import TlsConfigError, TlsTransport, normalise_pem, server_context


@pytest.fixture(scope="module")
def ca():
    return trustme.CA()


@pytest.fixture(scope="module")
def cert(ca):
    return ca.issue_cert("127.0.0.1")


def settings(**values):
    """TlsSettings from ssl_* keyword values (Kafka's names with dots as underscores)."""
    return TlsSettings(**{k.removeprefix("ssl_"): tuple(v) if isinstance(v, list) else v
                          for k, v in values.items()})


@given(st.sampled_from([" ", "\n", "\r\n", "\t"]), st.integers(1, 80))
def test_normalise_pem_undoes_any_line_breaking(ca, sep, width):
    pem = ca.cert_pem.bytes().decode()
    body = "".join(pem.split("-----")[2].split())
    broken = "-----BEGIN CERTIFICATE-----" + sep.join(
        body[i:i + width] for i in range(0, len(body), width)) + "-----END CERTIFICATE-----"
    assert normalise_pem(broken) == pem


def handshake(context: ssl.SSLContext, client_context: ssl.SSLContext):
    """Drive both ends through memory until both are done: (server, client, client in, client out)."""
    server = TlsTransport(context)
    c_in, c_out = ssl.MemoryBIO(), ssl.MemoryBIO()
    client = client_context.wrap_bio(c_in, c_out, server_hostname="127.0.0.1")
    for _ in range(10):
        try:
            client.do_handshake()
            done = True
        except ssl.SSLWantReadError:
            done = False
        assert server.unwrap(c_out.read()) == b""
        c_in.write(server.output())
        if done and server.ready:
            break
    assert server.ready
    return server, client, c_in, c_out


def test_inline_pem_key_store_on_one_line_handshakes(ca, cert):
    key = cert.private_key_pem.bytes().decode().replace("\n", " ")
    chain = "".join(b.bytes().decode() for b in cert.cert_chain_pems).replace("\n", " ")
    context = server_context(settings(ssl_keystore_key=key, ssl_keystore_certificate_chain=chain))
    client_context = ssl.create_default_context()
    ca.configure_trust(client_context)
    server, client, c_in, c_out = handshake(context, client_context)
    assert server.version == client.version()
    client.write(b"ping")
    assert server.unwrap(c_out.read()) == b"ping"
    c_in.write(server.wrap(b"pong"))
    assert client.read() == b"pong"


def test_location_key_store_and_client_certificate_subject(ca, cert, tmp_path):
    keystore = tmp_path / "server.pem"
    cert.private_key_and_cert_chain_pem.write_to_path(str(keystore))
    context = server_context(settings(ssl_keystore_location=str(keystore), ssl_client_auth="required",
                                      ssl_truststore_certificates=ca.cert_pem.bytes().decode()))
    client_cert = ca.issue_cert("client.example", common_name="client.example")
    client_context = ssl.create_default_context()
    ca.configure_trust(client_context)
    client_cert.configure_cert(client_context)
    server, *_ = handshake(context, client_context)
    # RFC 2253 order, most specific first, as Kafka's X500Principal.getName() gives it.
    subject = server.peer_subject()
    assert subject.startswith("CN=client.example,OU=Testing cert #") and ",O=trustme v" in subject


@pytest.mark.parametrize("values, setting", [
    ({"ssl_keystore_location": "/nonexistent/server.pem"}, "ssl.keystore.location"),
    ({"ssl_keystore_key": "-----BEGIN PRIVATE KEY-----AAAA-----END PRIVATE KEY-----",
      "ssl_keystore_certificate_chain": "x"}, "ssl.keystore.key"),
])
def test_unloadable_key_stores_name_their_setting(values, setting):
    with pytest.raises(TlsConfigError, match=re.escape(setting)):
        server_context(settings(**values))


def test_unloadable_trust_store_names_its_setting(cert, tmp_path):
    keystore = tmp_path / "server.pem"
    cert.private_key_and_cert_chain_pem.write_to_path(str(keystore))
    with pytest.raises(TlsConfigError, match=re.escape("ssl.truststore.location")):
        server_context(settings(ssl_keystore_location=str(keystore),
                                ssl_truststore_location=str(tmp_path / "absent.pem")))
