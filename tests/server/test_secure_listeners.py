"""SSL, SASL_PLAINTEXT and SASL_SSL listeners on one in-process broker, reached by real clients
(kcat, confluent-kafka, kafka-python) and by raw frames: certificates from a throwaway CA (trustme),
PLAIN users from a file, and a second broker that requires client certificates."""

from __future__ import annotations

import logging
import shutil
import socket
import ssl
import subprocess
import time

import pytest
import trustme

from kafkalite.network.sasl import INVALID_CREDENTIALS
from kafkalite.protocol.error_codes import (
    ILLEGAL_SASL_STATE,
    SASL_AUTHENTICATION_FAILED,
    UNSUPPORTED_SASL_MECHANISM,
)
from kafkalite.protocol.messages import api_versions, metadata, sasl_authenticate, sasl_handshake
from tests.support.brokers import running_broker
from tests.support.wait import wait_for
from tests.support.wire_client import Client

pytestmark = pytest.mark.integration


LISTENERS = {"PLAINTEXT": "PLAINTEXT", "INTERNAL": "PLAINTEXT", "SSL": "SSL",
             "SASL_PLAINTEXT": "SASL_PLAINTEXT", "SASL_SSL": "SASL_SSL"}
DELAY_MS = 300
SASL_HANDSHAKE, SASL_AUTHENTICATE, METADATA, API_VERSIONS = 17, 36, 3, 18


def secure_props(pki, **extra: str) -> dict[str, str]:
    props = {
        "listeners": ",".join(f"{n}://127.0.0.1:0" for n in LISTENERS),
        "listener.security.protocol.map": ",".join(f"{n}:{p}" for n, p in LISTENERS.items()),
        "ssl.keystore.location": str(pki["server"]),
        "sasl.plain.users.file": str(pki["users"]),
        "connection.failed.authentication.delay.ms": str(DELAY_MS),
    }
    props.update(extra)
    return {k.replace(".", "_"): v for k, v in props.items()}


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1", "localhost")
    client = ca.issue_cert("client.example", common_name="client.example")
    paths = {name: d / f"{name}.pem" for name in ("ca", "server", "client_cert", "client_key")}
    ca.cert_pem.write_to_path(str(paths["ca"]))
    server.private_key_and_cert_chain_pem.write_to_path(str(paths["server"]))
    client.cert_chain_pems[0].write_to_path(str(paths["client_cert"]))
    client.private_key_pem.write_to_path(str(paths["client_key"]))
    users = d / "users.properties"
    users.write_text("# PLAIN users\nalice=alice-secret\nbob=b=ob\n")
    return {**paths, "users": users, "ca_obj": ca}


@pytest.fixture(scope="module")
def broker(pki, tmp_path_factory):
    with running_broker(tmp_path_factory.mktemp("secure"), **secure_props(pki)) as b:
        yield b


def tls_client(broker, pki, listener: str = "SSL", cert: bool = False) -> Client:
    context = ssl.create_default_context(cafile=str(pki["ca"]))
    if cert:
        context.load_cert_chain(str(pki["client_cert"]), str(pki["client_key"]))
    client = Client("127.0.0.1", broker.bound_port(listener))
    client.sock = context.wrap_socket(client.sock, server_hostname="127.0.0.1")
    return client


def processors(broker, listener: str):
    return [p for p in broker.socket_server.processors if p.listener == listener]


def failed_auths(broker, listener: str) -> int:
    return sum(p.failed_authentications for p in processors(broker, listener))


def sasl_plain(client: Client, username: str, password: str, version: int = 1) -> object:
    hs = client.call(SASL_HANDSHAKE, 1, sasl_handshake.REQUEST(mechanism="PLAIN"))
    assert (hs.error_code, hs.mechanisms) == (0, ["PLAIN"])
    token = f"\0{username}\0{password}".encode()
    return client.call(SASL_AUTHENTICATE, version, sasl_authenticate.REQUEST(auth_bytes=token))


# --- SSL ---------------------------------------------------------------------------------------

def test_python_tls_client_gets_api_versions_and_metadata(broker, pki):
    with tls_client(broker, pki) as c:
        assert c.sock.version() in ("TLSv1.2", "TLSv1.3")
        assert c.call(API_VERSIONS, 3, api_versions.REQUEST(client_software_name="t",
                                                            client_software_version="1")).error_code == 0
        md = c.call(METADATA, 9, metadata.REQUEST(topics=None, allow_auto_topic_creation=False))
        # Metadata names the endpoint of the listener the request came in on.
        assert [(b.node_id, b.port) for b in md.brokers] == [(1, broker.bound_port("SSL"))]


def test_kcat_lists_the_broker_over_ssl(broker, pki):
    kcat = shutil.which("kcat")
    assert kcat, "kcat is installed by .ci/system-deps.sh"
    out = subprocess.run([kcat, "-L", "-b", f"127.0.0.1:{broker.bound_port('SSL')}", "-m", "10",
                          "-X", "security.protocol=SSL", "-X", f"ssl.ca.location={pki['ca']}"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert f"broker 1 at 127.0.0.1:{broker.bound_port('SSL')} (controller)" in out.stdout


def test_confluent_kafka_lists_topics_over_ssl(broker, pki):
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{broker.bound_port('SSL')}",
                         "security.protocol": "SSL", "ssl.ca.location": str(pki["ca"])})
    md = admin.list_topics(timeout=20)
    assert [(b.id, b.port) for b in md.brokers.values()] == [(1, broker.bound_port("SSL"))]


def test_plaintext_bytes_on_the_ssl_listener_close_only_that_connection(broker, pki, caplog):
    before = failed_auths(broker, "SSL")
    with tls_client(broker, pki) as good, Client("127.0.0.1", broker.bound_port("SSL")) as bad:
        caplog.set_level(logging.INFO, logger="kafkalite.network")
        bad.send(API_VERSIONS, 0, api_versions.REQUEST())
        assert bad.closed_by_server()
        assert wait_for(lambda: failed_auths(broker, "SSL") == before + 1)
        assert good.call(API_VERSIONS, 0, api_versions.REQUEST()).error_code == 0
    closes = [r.getMessage() for r in caplog.records if "SSL handshake failed" in r.getMessage()]
    assert len(closes) == 1, closes


def test_a_client_that_does_not_trust_the_broker_fails_the_handshake(broker, pki):
    other_ca = trustme.CA()
    context = ssl.create_default_context()
    other_ca.configure_trust(context)
    with socket.create_connection(("127.0.0.1", broker.bound_port("SSL")), timeout=10) as raw:
        with pytest.raises(ssl.SSLCertVerificationError):
            context.wrap_socket(raw, server_hostname="127.0.0.1")


# --- SASL --------------------------------------------------------------------------------------

def test_sasl_plain_with_a_good_password_then_requests_are_served(broker):
    with Client("127.0.0.1", broker.bound_port("SASL_PLAINTEXT")) as c:
        # ApiVersions is allowed before the handshake, as clients send it first.
        assert c.call(API_VERSIONS, 3, api_versions.REQUEST(client_software_name="t",
                                                            client_software_version="1")).error_code == 0
        auth = sasl_plain(c, "bob", "b=ob", version=2)
        assert (auth.error_code, auth.error_message) == (0, None)
        md = c.call(METADATA, 9, metadata.REQUEST(topics=None, allow_auto_topic_creation=False))
        assert [b.port for b in md.brokers] == [broker.bound_port("SASL_PLAINTEXT")]


def test_a_wrong_password_is_answered_after_the_delay_logged_once_and_closed(broker, caplog):
    caplog.set_level(logging.INFO, logger="kafkalite.network")
    before = failed_auths(broker, "SASL_PLAINTEXT")
    with Client("127.0.0.1", broker.bound_port("SASL_PLAINTEXT")) as c:
        started = time.monotonic()
        auth = sasl_plain(c, "alice", "wrong")
        waited = time.monotonic() - started
        assert (auth.error_code, auth.error_message) == (SASL_AUTHENTICATION_FAILED, INVALID_CREDENTIALS)
        assert waited >= DELAY_MS / 1000
        assert c.closed_by_server()
    assert failed_auths(broker, "SASL_PLAINTEXT") == before + 1
    logged = [r.getMessage() for r in caplog.records if "Failed authentication" in r.getMessage()]
    assert logged == [f"Failed authentication with 127.0.0.1 on listener SASL_PLAINTEXT "
                      f"({INVALID_CREDENTIALS})"]


def test_an_unknown_mechanism_gets_the_enabled_ones_and_a_close(broker):
    with Client("127.0.0.1", broker.bound_port("SASL_PLAINTEXT")) as c:
        hs = c.call(SASL_HANDSHAKE, 1, sasl_handshake.REQUEST(mechanism="SCRAM-SHA-512"))
        assert (hs.error_code, hs.mechanisms) == (UNSUPPORTED_SASL_MECHANISM, ["PLAIN"])
        assert c.closed_by_server()


def test_a_request_before_authentication_closes_the_connection(broker):
    with Client("127.0.0.1", broker.bound_port("SASL_PLAINTEXT")) as c:
        c.send(METADATA, 9, metadata.REQUEST(topics=None, allow_auto_topic_creation=False))
        assert c.closed_by_server()


def test_a_v0_handshake_takes_the_token_as_a_bare_frame(broker):
    with Client("127.0.0.1", broker.bound_port("SASL_PLAINTEXT")) as c:
        hs = c.call(SASL_HANDSHAKE, 0, sasl_handshake.REQUEST(mechanism="PLAIN"))
        assert hs.error_code == 0
        token = b"\0alice\0alice-secret"
        c.send_raw(len(token).to_bytes(4, "big") + token)
        assert c.receive_frame() == b""  # PLAIN's (empty) challenge: authenticated
        assert c.call(API_VERSIONS, 0, api_versions.REQUEST()).error_code == 0


def test_sasl_authenticate_on_a_plaintext_listener_is_an_illegal_state(broker):
    with Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as c:
        auth = c.call(SASL_AUTHENTICATE, 1, sasl_authenticate.REQUEST(auth_bytes=b"\0a\0b"))
        assert auth.error_code == ILLEGAL_SASL_STATE


def test_confluent_kafka_sasl_plain_and_a_wrong_password(broker):
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    base = {"bootstrap.servers": f"127.0.0.1:{broker.bound_port('SASL_PLAINTEXT')}",
            "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
            "sasl.username": "alice"}
    md = AdminClient({**base, "sasl.password": "alice-secret"}).list_topics(timeout=20)
    assert list(md.brokers) == [1]
    with pytest.raises(KafkaException):
        AdminClient({**base, "sasl.password": "nope"}).list_topics(timeout=3)


def test_confluent_kafka_over_sasl_ssl(broker, pki):
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{broker.bound_port('SASL_SSL')}",
                         "security.protocol": "SASL_SSL", "ssl.ca.location": str(pki["ca"]),
                         "sasl.mechanism": "PLAIN", "sasl.username": "bob", "sasl.password": "b=ob"})
    md = admin.list_topics(timeout=20)
    assert [(b.id, b.port) for b in md.brokers.values()] == [(1, broker.bound_port("SASL_SSL"))]


def test_kafka_python_sasl_plain(broker):
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{broker.bound_port('SASL_PLAINTEXT')}",
                             security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
                             sasl_plain_username="alice", sasl_plain_password="alice-secret",
                             request_timeout_ms=20000)
    try:
        cluster = admin.describe_cluster()
    finally:
        admin.close()
    assert [(b["broker_id"], b["port"]) for b in cluster["brokers"]] == [
        (1, broker.bound_port("SASL_PLAINTEXT"))]


# --- client authentication required ------------------------------------------------------------

@pytest.fixture(scope="module")
def strict_broker(pki, tmp_path_factory):
    props = secure_props(pki, **{"ssl.client.auth": "required", "ssl.truststore.location": str(pki["ca"])})
    with running_broker(tmp_path_factory.mktemp("strict"), **props) as b:
        yield b


def test_with_client_auth_required_a_client_certificate_is_let_in(strict_broker, pki):
    with tls_client(strict_broker, pki, cert=True) as c:
        assert c.call(API_VERSIONS, 0, api_versions.REQUEST()).error_code == 0
    kcat = shutil.which("kcat")
    assert kcat
    out = subprocess.run([kcat, "-L", "-b", f"127.0.0.1:{strict_broker.bound_port('SSL')}", "-m", "10",
                          "-X", "security.protocol=SSL", "-X", f"ssl.ca.location={pki['ca']}",
                          "-X", f"ssl.certificate.location={pki['client_cert']}",
                          "-X", f"ssl.key.location={pki['client_key']}"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr


def test_with_client_auth_required_a_client_without_a_certificate_is_rejected(strict_broker, pki, caplog):
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    caplog.set_level(logging.INFO, logger="kafkalite.network")
    before = failed_auths(strict_broker, "SSL")
    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{strict_broker.bound_port('SSL')}",
                         "security.protocol": "SSL", "ssl.ca.location": str(pki["ca"])})
    with pytest.raises(KafkaException):
        admin.list_topics(timeout=3)
    assert failed_auths(strict_broker, "SSL") > before
    assert any("SSL handshake failed" in r.getMessage() for r in caplog.records)
    # The listener still serves clients that present a certificate.
    with tls_client(strict_broker, pki, cert=True) as c:
        assert c.call(API_VERSIONS, 0, api_versions.REQUEST()).error_code == 0
