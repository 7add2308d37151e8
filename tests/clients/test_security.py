"""clients/security.py's connect against a real broker's SSL, SASL_PLAINTEXT and SASL_SSL
listeners (TLS with host name checks and client certificates, SASL/PLAIN's handshake and its
refusals), and two in-process brokers whose inter-broker listener is SSL or SASL_PLAINTEXT."""

from __future__ import annotations

import os
import ssl

import pytest
import trustme

from kafkalite.clients import AuthenticationError, BlockingClient, ClientSecurity
from kafkalite.clients.security import connect
from kafkalite.network.settings import TlsSettings
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import api_versions, metadata
from tests.support.brokers import create, running_broker, two_brokers
from tests.support.wait import wait_for

pytestmark = pytest.mark.integration

PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    ca = trustme.CA()
    paths = {name: d / f"{name}.pem" for name in ("ca", "server", "elsewhere", "client")}
    ca.cert_pem.write_to_path(str(paths["ca"]))
    ca.issue_cert("127.0.0.1", "localhost").private_key_and_cert_chain_pem.write_to_path(str(paths["server"]))
    ca.issue_cert("elsewhere.example").private_key_and_cert_chain_pem.write_to_path(str(paths["elsewhere"]))
    ca.issue_cert("client.example").private_key_and_cert_chain_pem.write_to_path(str(paths["client"]))
    users = d / "users.properties"
    users.write_text("broker=broker-secret\n")
    return {**paths, "users": users}


LISTENERS = {"PLAINTEXT": "PLAINTEXT", "INTERNAL": "PLAINTEXT", "SSL": "SSL",
             "SASL_PLAINTEXT": "SASL_PLAINTEXT", "SASL_SSL": "SASL_SSL"}


def underscored(props: dict[str, str]) -> dict[str, str]:
    return {k.replace(".", "_"): v for k, v in props.items()}


@pytest.fixture(scope="module")
def broker(pki, tmp_path_factory):
    props = {
        "listeners": ",".join(f"{n}://127.0.0.1:0" for n in LISTENERS),
        "listener.security.protocol.map": ",".join(f"{n}:{p}" for n, p in LISTENERS.items()),
        "ssl.keystore.location": str(pki["server"]), "ssl.truststore.location": str(pki["ca"]),
        "ssl.client.auth": "requested",
        "sasl.plain.users.file": str(pki["users"]), "connection.failed.authentication.delay.ms": "0",
    }
    with running_broker(tmp_path_factory.mktemp("secure"), **underscored(props)) as b:
        yield b


def security(pki, protocol: str, password: str = "broker-secret", mechanism: str = "PLAIN",
             identification: str = "https", keystore: str | None = None) -> ClientSecurity:
    tls = TlsSettings(truststore_location=str(pki["ca"]), keystore_location=keystore)
    return ClientSecurity(protocol, protocol, tls, identification, mechanism, "broker", password)


def api_versions_over(broker, listener: str, sec: ClientSecurity) -> int:
    client = BlockingClient("127.0.0.1", broker.bound_port(listener), "test", 5.0, security=sec)
    try:
        return client.send_and_receive(ApiKey.API_VERSIONS, 3, api_versions.REQUEST(
            client_software_name="kafkalite-test", client_software_version="1")).error_code
    finally:
        client.close()


@pytest.mark.parametrize("listener", ["SSL", "SASL_PLAINTEXT", "SASL_SSL"])
def test_each_protocol_gives_a_socket_ready_for_requests(broker, pki, listener):
    assert api_versions_over(broker, listener, security(pki, listener)) == 0


def test_a_wrong_password_raises_authentication_error_with_the_servers_message(broker, pki):
    with pytest.raises(AuthenticationError) as info:
        api_versions_over(broker, "SASL_SSL", security(pki, "SASL_SSL", password="nope-123"))
    text = str(info.value)
    assert "Invalid username or password" in text and "'broker'" in text and "nope-123" not in text
    assert f"127.0.0.1:{broker.bound_port('SASL_SSL')}" in text


def test_a_mechanism_the_server_does_not_enable_is_named_with_the_enabled_ones(broker, pki):
    sec = security(pki, "SASL_PLAINTEXT", mechanism="SCRAM-SHA-256")
    enabled = r"does not enable mechanism SCRAM-SHA-256 \(it enables PLAIN\)"
    with pytest.raises(AuthenticationError, match=enabled):
        connect("127.0.0.1", broker.bound_port("SASL_PLAINTEXT"), 5.0, sec).close()


def test_host_names_are_checked_unless_identification_is_off(tmp_path, pki):
    props = {"listeners": "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0,SSL://127.0.0.1:0",
             "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,SSL:SSL",
             "ssl.keystore.location": str(pki["elsewhere"])}
    with running_broker(tmp_path, **underscored(props)) as b:
        port = b.bound_port("SSL")
        with pytest.raises(ssl.SSLCertVerificationError, match=r"127\.0\.0\.1"):
            connect("127.0.0.1", port, 5.0, security(pki, "SSL"))
        connect("127.0.0.1", port, 5.0, security(pki, "SSL", identification="")).close()


def test_the_key_store_is_the_client_certificate(tmp_path, pki):
    props = {"listeners": "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0,SSL://127.0.0.1:0",
             "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,SSL:SSL",
             "ssl.keystore.location": str(pki["server"]), "ssl.truststore.location": str(pki["ca"]),
             "ssl.client.auth": "required"}
    with running_broker(tmp_path, **underscored(props)) as b:
        assert api_versions_over(b, "SSL", security(pki, "SSL", keystore=str(pki["client"]))) == 0
        with pytest.raises(OSError):  # no client certificate: the handshake (or first read) fails
            api_versions_over(b, "SSL", security(pki, "SSL"))


@pytest.mark.parametrize("protocol", ["SSL", "SASL_PLAINTEXT"])
def test_two_brokers_replicate_over_a_secured_inter_broker_listener(tmp_path, pki, protocol):
    props = {"listener.security.protocol.map": f"PLAINTEXT:PLAINTEXT,INTERNAL:{protocol}",
             "ssl.keystore.location": str(pki["server"]), "ssl.truststore.location": str(pki["ca"]),
             "sasl.plain.users.file": str(pki["users"]),
             "sasl.mechanism.inter.broker.protocol": "PLAIN",
             "listener.name.internal.plain.sasl.jaas.config":
                 f'{PLAIN_MODULE} required username="broker" password="broker-secret";'}
    with two_brokers(tmp_path, **underscored(props)) as (one, _two):
        assert one.config.inter_broker_security.protocol == protocol
        assert create(one, "secured", [2, 1]).error_code == 0  # leader 2: broker 1 fetches from it

        def isr() -> list[int]:
            client = BlockingClient("127.0.0.1", one.bound_port("PLAINTEXT"), "test", 5.0)
            try:
                md = client.send_and_receive(ApiKey.METADATA, 12, metadata.REQUEST(
                    topics=[metadata.REQUEST["topics"](name="secured")]))
            finally:
                client.close()
            parts = md.topics[0].partitions if md.topics else []
            return sorted(parts[0].isr_nodes) if parts else []

        assert wait_for(lambda: isr() == [1, 2], timeout=20)
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": f"127.0.0.1:{one.bound_port('PLAINTEXT')}", "acks": "all"})
        for i in range(20):
            producer.produce("secured", f"m{i}".encode())
        assert producer.flush(20) == 0
        follower = one.replica_manager.partitions  # broker 1 follows broker 2 over INTERNAL
        assert wait_for(lambda: ("secured", 0) in follower
                        and follower[("secured", 0)].log.log_end_offset == 20, timeout=20)


def test_a_trust_store_replaced_in_place_is_read_for_the_next_connection(tmp_path, pki):
    from kafkalite.clients.security import client_context

    trust = tmp_path / "trust.pem"
    trust.write_bytes(pki["ca"].read_bytes())
    tls = TlsSettings(truststore_location=str(trust))
    first = client_context(tls, True)
    assert client_context(tls, True) is first  # built once
    other = trustme.CA()
    other.cert_pem.write_to_path(str(trust), append=True)
    os.utime(trust, ns=(trust.stat().st_atime_ns, trust.stat().st_mtime_ns + 10**9))
    second = client_context(tls, True)
    assert second is not first and len(second.get_ca_certs()) == 2


def test_a_broker_that_does_not_trust_the_controller_says_so_and_does_not_register(tmp_path, pki, caplog):
    from kafkalite.server.broker import Broker
    from kafkalite.server.config import BrokerConfig

    secured = {"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:SSL",
               "ssl.keystore.location": str(pki["server"]), "ssl.truststore.location": str(pki["ca"])}
    stranger = tmp_path / "stranger-ca.pem"
    trustme.CA().cert_pem.write_to_path(str(stranger))
    with running_broker(tmp_path / "1", **underscored(secured)) as one:
        props = {"node.id": "2", "listeners": "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
                 "inter.broker.listener.name": "INTERNAL", "log.dirs": str(tmp_path / "2"),
                 "controller.quorum.bootstrap.servers": f"127.0.0.1:{one.bound_port('INTERNAL')}",
                 **secured, "ssl.truststore.location": str(stranger)}
        two = Broker(BrokerConfig(props))
        with caplog.at_level("ERROR", logger="kafkalite.server.lifecycle"):
            two.startup()
            try:
                assert wait_for(lambda: any("Broker 2 cannot register with the controller" in r.message
                                            and "CERTIFICATE_VERIFY_FAILED" in r.message
                                            for r in caplog.records), timeout=10)
                assert two.lifecycle is not None and not two.lifecycle.registered.is_set()
            finally:
                two.shutdown()
        assert sum("cannot register" in r.message for r in caplog.records) == 1  # once per reason


def test_a_control_plane_listener_apart_leaders_are_still_found_on_the_inter_broker_listener(tmp_path, pki):
    """Control plane on SSL, inter-broker on SASL_PLAINTEXT, the controller on SASL_PLAINTEXT: the
    followers fetch from the leader's inter-broker endpoint (LeaderAndIsr's live leaders), not
    from its control plane one."""
    from confluent_kafka import Producer

    from kafkalite.server.broker import Broker
    from kafkalite.server.config import BrokerConfig
    from kafkalite_bench.ports import free_port

    ctl = free_port()

    def props(node: int, listeners: str) -> dict[str, str]:
        return {"node.id": str(node), "log.dirs": str(tmp_path / str(node)), "listeners": listeners,
                "listener.security.protocol.map":
                    "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT,CONTROL:SSL,CONTROLLER:SASL_PLAINTEXT",
                "inter.broker.listener.name": "INTERNAL", "control.plane.listener.name": "CONTROL",
                "controller.listener.names": "CONTROLLER",
                "controller.quorum.bootstrap.servers": f"127.0.0.1:{ctl}",
                "ssl.keystore.location": str(pki["server"]), "ssl.truststore.location": str(pki["ca"]),
                "sasl.plain.users.file": str(pki["users"]),
                "sasl.mechanism.inter.broker.protocol": "PLAIN",
                "sasl.mechanism.controller.protocol": "PLAIN",
                "sasl.jaas.config": f'{PLAIN_MODULE} required username="broker" password="broker-secret";'}

    base = "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0,CONTROL://127.0.0.1:0"
    one = Broker(BrokerConfig(props(1, f"{base},CONTROLLER://127.0.0.1:{ctl}")))
    two = Broker(BrokerConfig({**props(2, base), "process.roles": "broker"}))
    one.startup()
    try:
        two.startup()
        try:
            assert one.lifecycle is not None and two.lifecycle is not None
            assert one.lifecycle.registered.wait(10) and two.lifecycle.registered.wait(10)
            assert wait_for(lambda: all(set(b.metadata_cache.snapshot.brokers) == {1, 2} for b in (one, two)),
                            timeout=10)
            assert create(one, "apart", [2, 1]).error_code == 0
            bootstrap = f"127.0.0.1:{two.bound_port('PLAINTEXT')}"
            producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
            for _ in range(10):
                producer.produce("apart", b"x")
            assert producer.flush(20) == 0  # acks=all: broker 1 followed broker 2 over INTERNAL
            follower = one.replica_manager.partitions
            assert wait_for(lambda: follower[("apart", 0)].log.log_end_offset == 10, timeout=10)
        finally:
            two.shutdown()
    finally:
        one.shutdown()
