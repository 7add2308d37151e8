"""A real 3-broker cluster (processes) with SASL_SSL on every listener: clients (CLIENT), the
brokers between themselves (INTERNAL: replica fetchers, transaction markers, the controller's
requests to the brokers) and the brokers to the controller (CONTROLLER on broker 1: registration,
heartbeats, AlterPartition, producer ids, forwarded admin requests). confluent-kafka produces,
consumes in a group and commits a transaction over SASL_SSL; no listening socket of any broker
process speaks plaintext; a broker with wrong inter-broker credentials does not register and says
why. Certificates from a throwaway CA (trustme), as the TLS listener tests make them."""

from __future__ import annotations

import os
import signal
import subprocess
import uuid

import pytest
import trustme

from kafkalite.clients import BlockingClient, ClientSecurity
from kafkalite.clients.security import AuthenticationError
from kafkalite.local import processes as C
from kafkalite.local.settings import free_base_port
from kafkalite.network.settings import TlsSettings
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import api_versions, metadata
from kafkalite_bench.ports import free_port
from tests.support.wait import wait_for

pytestmark = pytest.mark.integration

PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
FAST = ("broker.heartbeat.interval.ms=200", "broker.session.timeout.ms=1500")
USERS = {"broker": "broker-secret", "ctl": "ctl-secret", "alice": "alice-secret"}


def jaas(user: str, password: str) -> str:
    return f'{PLAIN_MODULE} required username="{user}" password="{password}";'


def secure_settings(pki: dict, controller_port: int, broker_password: str = USERS["broker"]) -> list[str]:
    return [
        "listener.security.protocol.map=CLIENT:SASL_SSL,INTERNAL:SASL_SSL,CONTROLLER:SASL_SSL",
        "inter.broker.listener.name=INTERNAL",
        "controller.listener.names=CONTROLLER",
        f"controller.quorum.bootstrap.servers=127.0.0.1:{controller_port}",
        f"ssl.keystore.location={pki['server']}",
        f"ssl.truststore.location={pki['ca']}",
        f"sasl.plain.users.file={pki['users']}",
        "sasl.enabled.mechanisms=PLAIN",
        # Clients may also log in with SCRAM users made through the admin api.
        "listener.name.client.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "sasl.mechanism.inter.broker.protocol=PLAIN",
        "sasl.mechanism.controller.protocol=PLAIN",
        f"listener.name.internal.plain.sasl.jaas.config={jaas('broker', broker_password)}",
        f"listener.name.controller.plain.sasl.jaas.config={jaas('ctl', USERS['ctl'])}",
        *FAST,
    ]


def listeners(client: int, internal: int, controller: int | None = None) -> str:
    text = f"listeners=CLIENT://127.0.0.1:{client},INTERNAL://127.0.0.1:{internal}"
    return text + (f",CONTROLLER://127.0.0.1:{controller}" if controller else "")


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1", "localhost")
    paths = {"ca": d / "ca.pem", "server": d / "server.pem", "users": d / "users.properties"}
    ca.cert_pem.write_to_path(str(paths["ca"]))
    server.private_key_and_cert_chain_pem.write_to_path(str(paths["server"]))
    paths["users"].write_text("".join(f"{u}={p}\n" for u, p in USERS.items()))
    return paths


def alice(pki: dict) -> ClientSecurity:
    return ClientSecurity("SASL_SSL", "CLIENT", TlsSettings(truststore_location=str(pki["ca"])),
                          mechanism="PLAIN", username="alice", password=USERS["alice"])


def client_conf(cluster: dict, **extra: object) -> dict:
    return {"bootstrap.servers": ",".join(f"127.0.0.1:{n.client_port}" for n in cluster["nodes"]),
            "security.protocol": "SASL_SSL", "sasl.mechanisms": "PLAIN", "sasl.username": "alice",
            "sasl.password": USERS["alice"], "ssl.ca.location": str(cluster["pki"]["ca"]), **extra}


def known_brokers(port: int, security: ClientSecurity) -> set[int]:
    client = BlockingClient("127.0.0.1", port, "test", 5.0, security=security)
    try:
        response = client.send_and_receive(ApiKey.METADATA, 12, metadata.REQUEST(topics=[]))
        return {b.node_id for b in response.brokers}
    except OSError:
        return set()
    finally:
        client.close()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, pki):
    directory = str(tmp_path_factory.mktemp("secure-cluster"))
    base = free_base_port()
    controller_port = free_port()
    extra = secure_settings(pki, controller_port)
    node_extra = {i: (listeners(base + 2 * (i - 1), base + 2 * (i - 1) + 1,
                                controller_port if i == 1 else None),) for i in (1, 2, 3)}
    nodes = C.start(3, directory, base, extra, node_extra=node_extra)
    try:
        up = wait_for(lambda: all(n.process.poll() is None for n in nodes)
                      and all(known_brokers(n.client_port, alice(pki)) == {1, 2, 3} for n in nodes),
                      timeout=60, interval=0.2)
        assert up, "cluster did not come up:\n" + "\n".join(open(n.log_path or "").read()[-3000:]
                                                            for n in nodes)
        yield {"nodes": nodes, "dir": directory, "base": base, "pki": pki, "controller_port": controller_port}
    finally:
        C.stop(nodes)


def listening_ports(pid: int) -> set[int]:
    """The TCP ports process ``pid`` listens on (its socket inodes in /proc/net/tcp and tcp6)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                    ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def test_no_listening_socket_speaks_plaintext(cluster):
    checked = 0
    for node in cluster["nodes"]:
        ports = listening_ports(node.process.pid)
        expected = {node.client_port, node.internal_port}
        if node.node_id == 1:
            expected.add(cluster["controller_port"])
        assert ports == expected, f"broker {node.node_id} listens on {ports}"
        for port in ports:
            client = BlockingClient("127.0.0.1", port, "plaintext-probe", 5.0)
            with pytest.raises(Exception):  # noqa: B017 - closed, a TLS alert, anything but an answer
                client.send_and_receive(ApiKey.API_VERSIONS, 0, api_versions.REQUEST())
            client.close()
            # The same port answers over SASL_SSL with a broker's credentials.
            secured = BlockingClient("127.0.0.1", port, "probe", 5.0, security=alice(cluster["pki"]))
            try:
                answer = secured.send_and_receive(ApiKey.API_VERSIONS, 0, api_versions.REQUEST())
                assert answer.error_code == 0
            finally:
                secured.close()
            checked += 1
    assert checked == 7


def wait_isr(admin, topic: str, partitions: int, isr: int, timeout: float = 30) -> dict[int, int]:
    """{partition: leader} once every partition of ``topic`` has ``isr`` in-sync replicas."""
    leaders: dict[int, int] = {}

    def check() -> bool:
        md = admin.list_topics(topic, timeout=10).topics.get(topic)
        if md is None or md.error is not None or len(md.partitions) != partitions:
            return False
        if any(len(p.isrs) != isr or p.leader < 0 for p in md.partitions.values()):
            return False
        leaders.clear()
        leaders.update({i: p.leader for i, p in md.partitions.items()})
        return True

    assert wait_for(check, timeout=timeout, interval=0.2), f"{topic} did not reach ISR {isr}"
    return leaders


def produce(cluster, topic: str, values: list[bytes], **extra: object) -> None:
    from confluent_kafka import Producer

    producer = Producer(client_conf(cluster, acks="all", **extra))
    errors: list = []
    for i, v in enumerate(values):
        producer.produce(topic, v, partition=i % 3, on_delivery=lambda e, m: errors.append(e) if e else None)
    assert producer.flush(30) == 0 and errors == []


def consume(cluster, topic: str, count: int, group: str, **extra: object) -> list[bytes]:
    from confluent_kafka import Consumer

    consumer = Consumer(client_conf(cluster, **{"group.id": group, "auto.offset.reset": "earliest",
                                                "enable.auto.commit": False, **extra}))
    got: list[bytes] = []
    try:
        consumer.subscribe([topic])

        def more() -> bool:
            m = consumer.poll(0.5)
            if m is not None and m.error() is None:
                got.append(m.value())
            return len(got) >= count

        assert wait_for(more, timeout=60, interval=0), f"consumed {len(got)} of {count}"
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    return got


def test_replication_acks_all_a_group_and_leader_failover(cluster):
    from confluent_kafka import ConsumerGroupTopicPartitions
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient(client_conf(cluster))
    for f in admin.create_topics([NewTopic("secured", 3, 3)], operation_timeout=20).values():
        f.result(30)  # forwarded over SASL_SSL to the controller, which drives the brokers
    leaders = wait_isr(admin, "secured", 3, 3)  # every follower fetches over SASL_SSL
    values = [f"v{i}".encode() for i in range(60)]
    produce(cluster, "secured", values)
    assert sorted(consume(cluster, "secured", 60, "g1")) == sorted(values)
    committed = admin.list_consumer_group_offsets(
        [ConsumerGroupTopicPartitions("g1")])["g1"].result(30)
    assert sum(tp.offset for tp in committed.topic_partitions) == 60

    # Kill a leader that is not the controller: the controller elects another over SASL_SSL.
    victim = next(n for n in cluster["nodes"] if n.node_id != 1 and n.node_id in leaders.values())
    victim.process.send_signal(signal.SIGKILL)
    victim.process.wait(10)
    try:
        def moved() -> bool:
            md = admin.list_topics("secured", timeout=10).topics["secured"]
            return all(p.leader not in (-1, victim.node_id) and victim.node_id not in p.isrs
                       for p in md.partitions.values())

        assert wait_for(moved, timeout=30, interval=0.2)
        more = [f"w{i}".encode() for i in range(30)]
        produce(cluster, "secured", more)
    finally:
        # Back again: it registers over SASL_SSL and catches up until the ISR is whole.
        with open(victim.log_path or os.devnull, "ab") as out:
            victim.process = subprocess.Popen(victim.args, stdout=out, stderr=subprocess.STDOUT,
                                              start_new_session=True)
    wait_isr(admin, "secured", 3, 3, timeout=60)
    got = consume(cluster, "secured", 90, "g2")
    assert sorted(got) == sorted(values + more)


def test_a_transaction_commits_across_leaders(cluster):
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient(client_conf(cluster))
    for f in admin.create_topics([NewTopic("txn-secured", 3, 3)], operation_timeout=20).values():
        f.result(30)
    wait_isr(admin, "txn-secured", 3, 3)
    producer = Producer(client_conf(cluster, **{"transactional.id": f"tx-{uuid.uuid4()}"}))
    producer.init_transactions(30)  # a producer id block from the controller over SASL_SSL
    producer.begin_transaction()
    for i in range(30):
        producer.produce("txn-secured", f"t{i}".encode(), partition=i % 3)
    producer.commit_transaction(30)  # markers to every partition's leader over SASL_SSL
    producer.flush(10)
    got = consume(cluster, "txn-secured", 30, "g-txn", **{"isolation.level": "read_committed"})
    assert sorted(got) == sorted(f"t{i}".encode() for i in range(30))


def test_scram_users_made_through_the_admin_api_log_in_on_every_broker_process(cluster):
    """AlterUserScramCredentials (forwarded to the controller, pushed to every broker process as
    salted keys), then SCRAM-SHA-256 and -512 logins over SASL_SSL on each broker; a wrong password
    and, once deleted, the credential refused."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import (
        AdminClient,
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialDeletion,
        UserScramCredentialUpsertion,
    )

    admin = AdminClient(client_conf(cluster))
    for mechanism in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512):
        futures = admin.alter_user_scram_credentials([UserScramCredentialUpsertion(
            "carol", ScramCredentialInfo(mechanism, 4096), b"carol-secret")])
        futures["carol"].result(30)

    def logs_in(port: int, mechanism: str, password: str) -> bool:
        """confluent-kafka logs in and reads metadata (a refusal only shows as its timeout)."""
        conf = {**client_conf(cluster), "bootstrap.servers": f"127.0.0.1:{port}",
                "sasl.mechanisms": mechanism, "sasl.username": "carol", "sasl.password": password}
        try:
            AdminClient(conf).list_topics(timeout=10)
            return True
        except KafkaException:
            return False

    def refused(port: int, mechanism: str, password: str) -> bool:
        """kafkalite's own client: the broker's SaslAuthenticate refusal at once."""
        tls = TlsSettings(truststore_location=str(cluster["pki"]["ca"]))
        security = ClientSecurity("SASL_SSL", "CLIENT", tls, mechanism=mechanism, username="carol",
                                  password=password)
        client = BlockingClient("127.0.0.1", port, "test", 5.0, security=security)
        try:
            client.connect()
            return False
        except AuthenticationError:
            return True
        finally:
            client.close()

    ports = [n.client_port for n in cluster["nodes"]]
    for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        assert wait_for(lambda m=mechanism: all(logs_in(p, m, "carol-secret") for p in ports), timeout=30)
        assert refused(ports[1], mechanism, "wrong")
    for mechanism in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512):
        deletion = UserScramCredentialDeletion("carol", mechanism)
        admin.alter_user_scram_credentials([deletion])["carol"].result(30)
    assert wait_for(lambda: all(refused(p, m, "carol-secret") for p in ports
                                for m in ("SCRAM-SHA-256", "SCRAM-SHA-512")), timeout=30)


def test_wrong_inter_broker_credentials_refuse_registration_with_a_clear_line(cluster, tmp_path):
    client, internal = free_port(), free_port()
    bad = "not-the-secret-7f3a"
    extra = [*secure_settings(cluster["pki"], cluster["controller_port"], broker_password=bad),
             f"listener.name.controller.plain.sasl.jaas.config={jaas('ctl', bad)}"]
    cluster_id = open(os.path.join(cluster["dir"], "cluster.id")).read().strip()
    args = C.broker_args(4, str(tmp_path), cluster["base"], cluster_id, [*extra, listeners(client, internal)])
    log_path = tmp_path / "broker-4.log"
    with open(log_path, "ab") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        line = f"Broker 4 cannot register with the controller at 127.0.0.1:{cluster['controller_port']}"
        assert wait_for(lambda: line in log_path.read_text(), timeout=30, interval=0.1), log_path.read_text()
        text = log_path.read_text()
        assert "Invalid username or password" in text and "'ctl'" in text and bad not in text
        assert "ERROR" in next(t for t in text.splitlines() if line in t)
        assert 4 not in known_brokers(cluster["nodes"][0].client_port, alice(cluster["pki"]))
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
