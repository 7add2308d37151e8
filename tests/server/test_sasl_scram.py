"""SASL/SCRAM-SHA-256 and -512, OAUTHBEARER (unsecured) and re-authentication with real clients
on two in-process brokers (broker 1 runs the controller): users created and deleted through the
admin api of confluent-kafka and kafka-python (on broker 2: forwarded to the controller, which
stores the salted keys and pushes them to both brokers), then logging in on either broker with
confluent-kafka, kafka-python and aiokafka."""

from __future__ import annotations

import asyncio
import base64
import json
import time

import pytest

from kafkalite.controller import records
from kafkalite.protocol.error_codes import SASL_AUTHENTICATION_FAILED
from kafkalite.protocol.messages import sasl_authenticate, sasl_handshake
from tests.support.brokers import two_brokers
from tests.support.wait import wait_for
from tests.support.wire_client import Client

pytestmark = pytest.mark.integration

MECHANISMS = "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER"
SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    d = tmp_path_factory.mktemp("scram")
    users = d / "users.properties"
    users.write_text("admin=admin-secret\n")
    props = {
        "listeners": "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,"
                     "REAUTH://127.0.0.1:0",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,"
                                          "SASL_PLAINTEXT:SASL_PLAINTEXT,REAUTH:SASL_PLAINTEXT",
        "sasl.enabled.mechanisms": MECHANISMS,
        "sasl.plain.users.file": str(users),
        # One listener with sessions of 1.5 s and SCRAM-SHA-256 and OAUTHBEARER only.
        "listener.name.reauth.connections.max.reauth.ms": "1500",
        "listener.name.reauth.sasl.enabled.mechanisms": "SCRAM-SHA-256,OAUTHBEARER",
        "connection.failed.authentication.delay.ms": "50",
    }
    with two_brokers(d, **{k.replace(".", "_"): v for k, v in props.items()}) as brokers:
        yield brokers


def bootstrap(broker, listener: str = "SASL_PLAINTEXT") -> str:
    return f"127.0.0.1:{broker.bound_port(listener)}"


def kafka_python_admin(broker):
    from kafka import KafkaAdminClient

    return KafkaAdminClient(bootstrap_servers=bootstrap(broker, "PLAINTEXT"), request_timeout_ms=20000)


def confluent_admin(broker, **extra: str):
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": bootstrap(broker, "PLAINTEXT"), **extra})


def confluent_login(broker, mechanism: str, user: str, password: str, listener: str = "SASL_PLAINTEXT",
                    timeout: float = 10) -> list[int]:
    """The broker ids a confluent-kafka client sees once logged in; KafkaException if it cannot."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap(broker, listener),
                         "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism,
                         "sasl.username": user, "sasl.password": password})
    return sorted(admin.list_topics(timeout=timeout).brokers)


def kafka_python_login(broker, mechanism: str, user: str, password: str) -> list[int]:
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap(broker), security_protocol="SASL_PLAINTEXT",
                             sasl_mechanism=mechanism, sasl_plain_username=user, sasl_plain_password=password,
                             request_timeout_ms=10000)
    try:
        return sorted(b["broker_id"] for b in admin.describe_cluster()["brokers"])
    finally:
        admin.close()


def aiokafka_login(broker, mechanism: str, user: str, password: str) -> None:
    from aiokafka import AIOKafkaConsumer

    async def run() -> None:
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap(broker), security_protocol="SASL_PLAINTEXT",
                                    sasl_mechanism=mechanism, sasl_plain_username=user,
                                    sasl_plain_password=password, request_timeout_ms=10000)
        await asyncio.wait_for(consumer.start(), 20)
        try:
            assert isinstance(await asyncio.wait_for(consumer.topics(), 20), set)
        finally:
            await consumer.stop()

    asyncio.run(run())


def scram_users(broker) -> dict[str, dict[int, int]]:
    """user -> mechanism type -> iterations, as ``broker`` was pushed them."""
    creds = broker.socket_server.credentials
    return {u: {m: c.iterations for m, c in creds.user(u).items()} for u in creds.users()}


def test_kafka_python_admin_creates_users_who_log_in_with_every_client(cluster):
    from kafka.admin import ScramMechanism, UserScramCredentialUpsertion

    one, two = cluster
    admin = kafka_python_admin(two)
    try:
        result = admin.alter_user_scram_credentials([
            UserScramCredentialUpsertion("kp256", ScramMechanism.SCRAM_SHA_256, "pw-256"),
            UserScramCredentialUpsertion("kp512", ScramMechanism.SCRAM_SHA_512, "pw-512", iterations=8192),
        ])
        assert result == {"kp256": None, "kp512": None}
        assert wait_for(lambda: all({"kp256", "kp512"} <= set(scram_users(b)) for b in cluster), timeout=10)
        described = admin.describe_user_scram_credentials(["kp512", "kp256"])
    finally:
        admin.close()
    assert described["kp512"]["credential_infos"] == [{"mechanism": ScramMechanism.SCRAM_SHA_512,
                                                       "iterations": 8192}]
    assert described["kp256"]["error"] is None
    for broker in cluster:
        assert confluent_login(broker, "SCRAM-SHA-256", "kp256", "pw-256") == [1, 2]
        assert confluent_login(broker, "SCRAM-SHA-512", "kp512", "pw-512") == [1, 2]
    assert kafka_python_login(one, "SCRAM-SHA-256", "kp256", "pw-256") == [1, 2]
    assert kafka_python_login(two, "SCRAM-SHA-512", "kp512", "pw-512") == [1, 2]
    aiokafka_login(one, "SCRAM-SHA-256", "kp256", "pw-256")
    aiokafka_login(two, "SCRAM-SHA-512", "kp512", "pw-512")
    # The controller stored salted keys only: no password, no SaltedPassword.
    assert len(one.controller.store.load_scram_credentials()["kp256"]) == 1
    assert b"pw-256" not in records.encode_all(one.controller.store.image.to_records())


def test_confluent_admin_upserts_describes_and_deletes(cluster):
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import (
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialDeletion,
        UserScramCredentialUpsertion,
    )

    one, two = cluster
    admin = confluent_admin(two)
    futures = admin.alter_user_scram_credentials([
        UserScramCredentialUpsertion("ck", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), b"ck-pw"),
    ])
    assert futures["ck"].result(20) is None
    assert wait_for(lambda: "ck" in scram_users(one), timeout=10)
    description = admin.describe_user_scram_credentials(["ck"])["ck"].result(20)
    assert [(i.mechanism, i.iterations) for i in description.scram_credential_infos] == [
        (ScramMechanism.SCRAM_SHA_256, 4096)]
    assert confluent_login(one, "SCRAM-SHA-256", "ck", "ck-pw") == [1, 2]
    # A wrong password, and the right one with the other mechanism, are refused.
    with pytest.raises(KafkaException):
        confluent_login(one, "SCRAM-SHA-256", "ck", "wrong", timeout=3)
    with pytest.raises(KafkaException):
        confluent_login(two, "SCRAM-SHA-512", "ck", "ck-pw", timeout=3)
    # Deleted: new connections are refused, on both brokers.
    futures = admin.alter_user_scram_credentials(
        [UserScramCredentialDeletion("ck", ScramMechanism.SCRAM_SHA_256)])
    assert futures["ck"].result(20) is None
    assert wait_for(lambda: all("ck" not in scram_users(b) for b in cluster), timeout=10)
    for broker in cluster:
        with pytest.raises(KafkaException):
            confluent_login(broker, "SCRAM-SHA-256", "ck", "ck-pw", timeout=3)
    with pytest.raises(KafkaException, match=r"RESOURCE_NOT_FOUND|does not exist"):
        admin.describe_user_scram_credentials(["ck"])["ck"].result(20)


def test_alter_errors_as_kafka(cluster):
    """Kafka's ScramControlManager checks, seen through kafka-python (raw bytes, any values)."""
    from kafka.admin import ScramMechanism, UserScramCredentialDeletion, UserScramCredentialUpsertion

    one, two = cluster
    admin = kafka_python_admin(two)
    try:
        result = admin.alter_user_scram_credentials([
            UserScramCredentialUpsertion("few", ScramMechanism.SCRAM_SHA_256, "x", iterations=4095),
            UserScramCredentialUpsertion("many", ScramMechanism.SCRAM_SHA_512, "x", iterations=16385),
            UserScramCredentialUpsertion("", ScramMechanism.SCRAM_SHA_256, "x"),
            UserScramCredentialDeletion("ghost", ScramMechanism.SCRAM_SHA_256),
            UserScramCredentialUpsertion("twice", ScramMechanism.SCRAM_SHA_256, "x"),
            UserScramCredentialUpsertion("twice", ScramMechanism.SCRAM_SHA_512, "x"),
        ])
        described = admin.describe_user_scram_credentials(["nobody", "dup", "dup"])
    finally:
        admin.close()
    assert result == {"few": "Too few iterations", "many": "Too many iterations",
                      "": "Username must not be empty",
                      "ghost": "Attempt to delete a user credential that does not exist",
                      "twice": "A user credential cannot be altered twice in the same request"}
    assert described["nobody"]["error"] and described["dup"]["error"]
    assert not {"few", "many", "twice"} & set(scram_users(one))


def raw_scram(broker, listener: str, mechanism: str, user: str, password: str):
    """A SCRAM login on the wire: the client, and SaslAuthenticate's last answer."""
    from kafkalite.common.scram import MECHANISMS, ScramClient

    client = Client("127.0.0.1", broker.bound_port(listener))
    assert client.call(SASL_HANDSHAKE, 1, sasl_handshake.REQUEST(mechanism=mechanism)).error_code == 0
    scram = ScramClient(MECHANISMS[mechanism], user, password)
    first = client.call(SASL_AUTHENTICATE, 2, sasl_authenticate.REQUEST(auth_bytes=scram.first()))
    assert first.error_code == 0
    final = client.call(SASL_AUTHENTICATE, 2,
                        sasl_authenticate.REQUEST(auth_bytes=scram.final(first.auth_bytes)))
    if final.error_code == 0:
        scram.verify(final.auth_bytes)
    return client, final


@pytest.fixture(scope="module")
def raw_user(cluster) -> str:
    """User "raw" (password "raw-pw", SCRAM-SHA-256), known to both brokers."""
    from kafka.admin import ScramMechanism, UserScramCredentialUpsertion

    admin = kafka_python_admin(cluster[0])
    try:
        assert admin.alter_user_scram_credentials(
            [UserScramCredentialUpsertion("raw", ScramMechanism.SCRAM_SHA_256, "raw-pw")]) == {"raw": None}
    finally:
        admin.close()
    assert wait_for(lambda: all("raw" in scram_users(b) for b in cluster), timeout=10)
    return "raw"


def test_wrong_password_gets_kafkas_message(cluster, raw_user):
    one, _ = cluster
    client, final = raw_scram(one, "SASL_PLAINTEXT", "SCRAM-SHA-256", "raw", "nope")
    client.close()
    assert final.error_code == SASL_AUTHENTICATION_FAILED
    assert final.error_message == ("Authentication failed during authentication due to invalid credentials "
                                   "with SASL mechanism SCRAM-SHA-256")
    client, final = raw_scram(one, "SASL_PLAINTEXT", "SCRAM-SHA-256", "raw", "raw-pw")
    client.close()
    assert final.error_code == 0 and final.session_lifetime_ms == 0  # no reauth on this listener


def test_scram_after_a_v0_handshake_in_bare_frames(cluster, raw_user):
    from kafkalite.common.scram import SCRAM_SHA_256, ScramClient
    from kafkalite.protocol.messages import api_versions

    one, _ = cluster
    with Client("127.0.0.1", one.bound_port("SASL_PLAINTEXT")) as c:
        assert c.call(SASL_HANDSHAKE, 0, sasl_handshake.REQUEST(mechanism="SCRAM-SHA-256")).error_code == 0
        scram = ScramClient(SCRAM_SHA_256, "raw", "raw-pw")
        first = scram.first()
        c.send_raw(len(first).to_bytes(4, "big") + first)
        final = scram.final(c.receive_frame())
        c.send_raw(len(final).to_bytes(4, "big") + final)
        scram.verify(c.receive_frame())
        assert c.call(18, 0, api_versions.REQUEST()).error_code == 0


def test_per_listener_mechanisms(cluster):
    one, _ = cluster
    with Client("127.0.0.1", one.bound_port("REAUTH")) as c:
        r = c.call(SASL_HANDSHAKE, 1, sasl_handshake.REQUEST(mechanism="PLAIN"))
    assert r.error_code != 0 and r.mechanisms == ["SCRAM-SHA-256", "OAUTHBEARER"]
    with Client("127.0.0.1", one.bound_port("SASL_PLAINTEXT")) as c:
        r = c.call(SASL_HANDSHAKE, 1, sasl_handshake.REQUEST(mechanism="PLAIN"))
    assert r.error_code == 0 and r.mechanisms == MECHANISMS.split(",")


# --- OAUTHBEARER ---------------------------------------------------------------------------------

def unsecured_jws(claims: dict) -> str:
    def part(d: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none'})}.{part(claims)}."


def test_oauthbearer_unsecured_with_confluent_kafka(cluster):
    from confluent_kafka.admin import AdminClient

    one, _ = cluster
    admin = AdminClient({"bootstrap.servers": bootstrap(one), "security.protocol": "SASL_PLAINTEXT",
                         "sasl.mechanism": "OAUTHBEARER", "enable.sasl.oauthbearer.unsecure.jwt": True,
                         "sasl.oauthbearer.config": "principal=oauth-user"})
    assert sorted(admin.list_topics(timeout=20).brokers) == [1, 2]


def test_oauthbearer_unsecured_with_kafka_python(cluster):
    from kafka import KafkaAdminClient
    from kafka.net.sasl.oauth import AbstractTokenProvider

    class Provider(AbstractTokenProvider):
        def token(self):
            now = int(time.time())  # whole seconds, as issuers write them
            return unsecured_jws({"sub": "kp-oauth", "iat": now, "exp": now + 3600})

    one, _ = cluster
    admin = KafkaAdminClient(bootstrap_servers=bootstrap(one), security_protocol="SASL_PLAINTEXT",
                             sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=Provider(),
                             request_timeout_ms=10000)
    try:
        assert sorted(b["broker_id"] for b in admin.describe_cluster()["brokers"]) == [1, 2]
    finally:
        admin.close()


def oauth_token(token: str, authzid: str = "") -> bytes:
    return f"n,{'a=' + authzid if authzid else ''},\x01auth=Bearer {token}\x01\x01".encode()


def test_oauthbearer_refusals_as_kafka(cluster):
    one, _ = cluster
    now = time.time()
    refused = [
        unsecured_jws({"sub": "u", "exp": now - 10}),  # expired
        unsecured_jws({"exp": now + 60}),  # no sub
        unsecured_jws({"sub": "u"}),  # no exp
        unsecured_jws({"sub": "u", "iat": now + 3600, "exp": now + 7200}),  # issued in the future
        unsecured_jws({"sub": "u", "exp": now + 60})[:-1] + "c2ln",  # signed
    ]
    for token in refused:
        with Client("127.0.0.1", one.bound_port("SASL_PLAINTEXT")) as c:
            assert c.call(SASL_HANDSHAKE, 1, sasl_handshake.REQUEST(mechanism="OAUTHBEARER")).error_code == 0
            r = c.call(SASL_AUTHENTICATE, 2, sasl_authenticate.REQUEST(auth_bytes=oauth_token(token)))
            assert r.error_code == 0 and json.loads(r.auth_bytes) == {"status": "invalid_token"}, token
            r = c.call(SASL_AUTHENTICATE, 2, sasl_authenticate.REQUEST(auth_bytes=b"\x01"))
            assert r.error_code == SASL_AUTHENTICATION_FAILED
            assert r.error_message == '{"status":"invalid_token"}'
    with Client("127.0.0.1", one.bound_port("SASL_PLAINTEXT")) as c:
        c.call(SASL_HANDSHAKE, 1, sasl_handshake.REQUEST(mechanism="OAUTHBEARER"))
        good = unsecured_jws({"sub": "u", "exp": now + 60})
        r = c.call(SASL_AUTHENTICATE, 2, sasl_authenticate.REQUEST(auth_bytes=oauth_token(good, "other")))
        assert r.error_code == SASL_AUTHENTICATION_FAILED and "authorization id (other)" in r.error_message


# --- re-authentication (KIP-368) -----------------------------------------------------------------

def test_session_lifetime_and_an_expired_connection_is_closed(cluster, raw_user):
    from kafkalite.protocol.messages import metadata

    one, _ = cluster
    client, final = raw_scram(one, "REAUTH", "SCRAM-SHA-256", "raw", "raw-pw")
    with client:
        assert final.error_code == 0 and 0 < final.session_lifetime_ms <= 1500
        assert client.call(3, 12, metadata.REQUEST(topics=[])).brokers  # served within the session
        killed = sum(p.expired_connections_killed for p in one.socket_server.processors)
        deadline = time.monotonic() + final.session_lifetime_ms / 1000
        assert wait_for(lambda: time.monotonic() > deadline + 0.05, timeout=5)
        with pytest.raises((ConnectionError, OSError, EOFError)):
            client.call(3, 12, metadata.REQUEST(topics=[]))
    assert sum(p.expired_connections_killed for p in one.socket_server.processors) == killed + 1


def test_reauthentication_on_the_live_connection(cluster, raw_user):
    from kafkalite.common.scram import SCRAM_SHA_256, ScramClient
    from kafkalite.protocol.messages import metadata

    one, _ = cluster
    client, final = raw_scram(one, "REAUTH", "SCRAM-SHA-256", "raw", "raw-pw")
    with client:
        assert final.session_lifetime_ms > 0
        # Re-authenticate as the same user: the session is renewed, the connection goes on.
        handshake = client.call(SASL_HANDSHAKE, 1, sasl_handshake.REQUEST(mechanism="SCRAM-SHA-256"))
        assert handshake.error_code == 0
        scram = ScramClient(SCRAM_SHA_256, "raw", "raw-pw")
        first = client.call(SASL_AUTHENTICATE, 2, sasl_authenticate.REQUEST(auth_bytes=scram.first()))
        again = client.call(SASL_AUTHENTICATE, 2,
                            sasl_authenticate.REQUEST(auth_bytes=scram.final(first.auth_bytes)))
        assert again.error_code == 0 and again.session_lifetime_ms > 0
        assert client.call(3, 12, metadata.REQUEST(topics=[])).brokers
    assert sum(p.successful_reauthentications for p in one.socket_server.processors) >= 1


def test_confluent_kafka_reauthenticates_when_told_a_session_lifetime(cluster, raw_user):
    from confluent_kafka.admin import AdminClient

    def reauthentications() -> int:
        return sum(p.successful_reauthentications for b in cluster for p in b.socket_server.processors)

    def killed() -> int:
        return sum(p.expired_connections_killed for b in cluster for p in b.socket_server.processors)

    one, _ = cluster
    before, killed_before = reauthentications(), killed()
    admin = AdminClient({"bootstrap.servers": bootstrap(one, "REAUTH"),
                         "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256",
                         "sasl.username": "raw", "sasl.password": "raw-pw"})

    def used_and_reauthenticated() -> bool:
        # Kept in use (librdkafka may let an idle bootstrap connection go): it re-authenticates
        # before the 1.5 s lifetime ends and its requests keep being served.
        assert sorted(admin.list_topics(timeout=20).brokers) == [1, 2]
        return reauthentications() > before

    assert wait_for(used_and_reauthenticated, timeout=15)
    assert killed() == killed_before


# --- brokers that come later, a controller that restarts -----------------------------------------

def test_a_registering_broker_and_a_restarted_controller_get_the_credentials(tmp_path):
    from kafka.admin import ScramMechanism, UserScramCredentialUpsertion

    from tests.support.brokers import running_broker

    props = {"listeners": "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
             "listener_security_protocol_map":
                 "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
             "sasl_enabled_mechanisms": "SCRAM-SHA-512"}
    with running_broker(tmp_path / "1", **props) as one:
        admin = kafka_python_admin(one)
        try:
            assert admin.alter_user_scram_credentials([UserScramCredentialUpsertion(
                "late", ScramMechanism.SCRAM_SHA_512, "late-pw")]) == {"late": None}
        finally:
            admin.close()
        controller = f"127.0.0.1:{one.bound_port('INTERNAL')}"
        with running_broker(tmp_path / "2", node_id="2", controller_quorum_bootstrap_servers=controller,
                            **props) as two:
            assert wait_for(lambda: "late" in scram_users(two), timeout=10)  # the full state at registration
            assert confluent_login(two, "SCRAM-SHA-512", "late", "late-pw") == [1, 2]
    with running_broker(tmp_path / "1", **props) as again:  # the controller's store kept them
        assert wait_for(lambda: "late" in scram_users(again), timeout=10)
        # Broker 2 stays registered until its session ends (a new active controller gives every
        # registered broker a fresh session, as Kafka's does): the login is what matters here.
        assert 1 in confluent_login(again, "SCRAM-SHA-512", "late", "late-pw")


# --- authorization -------------------------------------------------------------------------------

def test_the_apis_need_describe_and_alter_on_the_cluster(tmp_path):
    from kafka import KafkaAdminClient
    from kafka.admin import ScramMechanism, UserScramCredentialUpsertion

    from tests.support.brokers import running_broker

    users = tmp_path / "users.properties"
    users.write_text("admin=admin-pw\nbob=bob-pw\n")
    props = {"listeners": "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
             "listener.security.protocol.map":
                 "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
             "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256", "sasl.plain.users.file": str(users),
             "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
             "super.users": "User:admin;User:ANONYMOUS"}  # ANONYMOUS: the controller's own connections

    def admin_as(broker, user: str) -> KafkaAdminClient:
        return KafkaAdminClient(bootstrap_servers=bootstrap(broker), security_protocol="SASL_PLAINTEXT",
                                sasl_mechanism="PLAIN", sasl_plain_username=user,
                                sasl_plain_password=f"{user}-pw", request_timeout_ms=10000)

    with running_broker(tmp_path / "logs", **{k.replace(".", "_"): v for k, v in props.items()}) as broker:
        upsert = [UserScramCredentialUpsertion("carol", ScramMechanism.SCRAM_SHA_256, "carol-pw")]
        bob = admin_as(broker, "bob")
        try:
            assert bob.alter_user_scram_credentials(upsert) == {"carol": "Cluster authorization failed."}
            with pytest.raises(Exception, match=r"CLUSTER_AUTHORIZATION_FAILED|Cluster authorization failed"):
                bob.describe_user_scram_credentials(["carol"])
        finally:
            bob.close()
        admin = admin_as(broker, "admin")
        try:
            assert admin.alter_user_scram_credentials(upsert) == {"carol": None}
            assert wait_for(lambda: "carol" in scram_users(broker), timeout=10)
            assert admin.describe_user_scram_credentials(["carol"])["carol"]["error"] is None
        finally:
            admin.close()
        assert confluent_login(broker, "SCRAM-SHA-256", "carol", "carol-pw") == [1]
