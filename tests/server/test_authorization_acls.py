"""The checks end to end with real ACLs: one broker with the StandardAuthorizer, clients logged in
with SASL/PLAIN (User:admin a super user; User:ANONYMOUS too, the brokers' own principal on the
PLAINTEXT inter-broker listener, as a Kafka cluster needs), ACLs created by the admin with
confluent-kafka's AdminClient, then confluent-kafka and kafka-python clients allowed and refused
by them: PREFIXED and LITERAL patterns, DENY over ALLOW, super users, Metadata hiding topics."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from kafkalite.protocol.acl import ResourceType
from kafkalite.server.authorizer import OPERATIONS_OF
from tests.support.brokers import running_broker
from tests.support.real_clients import (
    confluent_sasl_plain,
    kafka_python_refused_everything,
    kafka_python_sasl_plain,
)
from tests.support.wait import wait_for

pytestmark = pytest.mark.integration

USERS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret", "carol": "carol-secret"}
STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
TIMEOUT = 30.0
TOPICS = ("orders-eu", "orders-us", "payments")


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    users = tmp_path_factory.mktemp("users") / "users.properties"
    users.write_text("".join(f"{u}={p}\n" for u, p in USERS.items()))
    with running_broker(tmp_path_factory.mktemp("acl-checks"), authorizer_class_name=STANDARD,
                        super_users="User:admin;User:ANONYMOUS", sasl_plain_users_file=str(users),
                        listener_security_protocol_map="PLAINTEXT:SASL_PLAINTEXT,INTERNAL:PLAINTEXT",
                        group_initial_rebalance_delay_ms="0", auto_create_topics_enable="true") as b:
        yield b


@pytest.fixture(scope="module")
def bootstrap(broker) -> str:
    return f"127.0.0.1:{broker.bound_port('PLAINTEXT')}"


def conf(bootstrap: str, user: str) -> dict[str, str]:
    return confluent_sasl_plain(bootstrap, user, USERS[user])


def kp_conf(bootstrap: str, user: str) -> dict[str, object]:
    return kafka_python_sasl_plain(bootstrap, user, USERS[user])


@pytest.fixture(scope="module")
def acls(broker, bootstrap) -> Iterator[None]:
    """The admin (a super user) creates the topics and the ACLs."""
    from confluent_kafka.admin import (
        AclBinding,
        AclOperation,
        AclPermissionType,
        AdminClient,
        NewTopic,
        ResourcePatternType,
        ResourceType,
    )

    admin = AdminClient(conf(bootstrap, "admin"))
    for f in admin.create_topics([NewTopic(t, 1, 1) for t in TOPICS]).values():
        f.result(TIMEOUT)
    TOPIC, GROUP, CLUSTER = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.BROKER
    PREFIXED, LITERAL = ResourcePatternType.PREFIXED, ResourcePatternType.LITERAL
    ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
    Op = AclOperation
    bindings = [
        # alice: every topic starting "orders" (PREFIXED), the group "billing" (LITERAL).
        AclBinding(TOPIC, "orders", PREFIXED, "User:alice", "*", Op.WRITE, ALLOW),
        AclBinding(TOPIC, "orders", PREFIXED, "User:alice", "*", Op.READ, ALLOW),
        AclBinding(GROUP, "billing", LITERAL, "User:alice", "*", Op.READ, ALLOW),
        # bob: everything on the "orders" topics, but DENY writing to orders-eu (DENY wins).
        AclBinding(TOPIC, "orders", PREFIXED, "User:bob", "*", Op.ALL, ALLOW),
        AclBinding(TOPIC, "orders-eu", LITERAL, "User:bob", "*", Op.WRITE, DENY),
        AclBinding(GROUP, "bob", PREFIXED, "User:bob", "*", Op.READ, ALLOW),
        AclBinding(CLUSTER, "kafka-cluster", LITERAL, "User:bob", "*", Op.IDEMPOTENT_WRITE, ALLOW),
        # carol: nothing at all.
    ]
    for f in admin.create_acls(bindings).values():
        f.result(TIMEOUT)
    assert wait_for(lambda: len(broker.standard_authorizer.acls) == len(bindings), timeout=10)
    yield


def confluent_consume(bootstrap: str, user: str, topic: str, group: str, count: int) -> list[bytes]:
    from confluent_kafka import Consumer

    consumer = Consumer({**conf(bootstrap, user), "group.id": group, "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    got: list[bytes] = []
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + TIMEOUT
        while len(got) < count and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None:
                assert msg.error() is None, msg.error()
                got.append(msg.value())
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    return got


def first_error(bootstrap: str, user: str, topic: str, group: str) -> object:
    from confluent_kafka import Consumer

    consumer = Consumer({**conf(bootstrap, user), "group.id": group, "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is not None:
                return msg.error()
    finally:
        consumer.close()
    return None


def confluent_produce(bootstrap: str, user: str, topic: str, values: list[bytes]) -> list[object]:
    from confluent_kafka import Producer

    producer = Producer({**conf(bootstrap, user), "message.timeout.ms": 10000})
    reports: list[object] = []
    for v in values:
        producer.produce(topic, value=v, on_delivery=lambda err, msg: reports.append(err))
    producer.flush(TIMEOUT)
    return reports


def test_alice_produces_and_consumes_in_her_group_by_prefixed_and_literal_acls(bootstrap, acls):
    from confluent_kafka import KafkaError

    assert confluent_produce(bootstrap, "alice", "orders-eu", [b"a", b"b"]) == [None, None]
    assert confluent_consume(bootstrap, "alice", "orders-eu", "billing", 2) == [b"a", b"b"]
    # Another group: no ACL. Another topic: no ACL.
    error = first_error(bootstrap, "alice", "orders-eu", "shipping")
    assert error is not None and error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED  # type: ignore[attr-defined]
    (report,) = confluent_produce(bootstrap, "alice", "payments", [b"x"])
    assert report is not None and report.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED  # type: ignore[attr-defined]


def test_metadata_shows_each_principal_what_it_may_describe(bootstrap, acls):
    from confluent_kafka.admin import AdminClient

    def listed(user: str) -> set[str]:
        return set(AdminClient(conf(bootstrap, user)).list_topics(timeout=TIMEOUT).topics) & set(TOPICS)
    assert listed("alice") == {"orders-eu", "orders-us"}  # READ / WRITE imply DESCRIBE
    assert listed("carol") == set()
    assert listed("admin") == set(TOPICS)  # a super user sees everything


def test_bob_is_denied_where_deny_overrides_allow(bootstrap, acls):
    from kafka import KafkaConsumer, KafkaProducer
    from kafka.errors import TopicAuthorizationFailedError

    producer = KafkaProducer(**kp_conf(bootstrap, "bob"), max_block_ms=10000)  # idempotent: IDEMPOTENT_WRITE
    try:
        assert producer.send("orders-us", value=b"us").get(timeout=TIMEOUT).offset == 0
        with pytest.raises(TopicAuthorizationFailedError):
            producer.send("orders-eu", value=b"eu").get(timeout=TIMEOUT)
    finally:
        producer.close(timeout=10)
    consumer = KafkaConsumer("orders-us", group_id="bob-readers", auto_offset_reset="earliest",
                             enable_auto_commit=False, **kp_conf(bootstrap, "bob"))
    try:
        got: list[bytes] = []
        deadline = time.monotonic() + TIMEOUT
        while not got and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=500).values():
                got += [r.value for r in records]
        assert got == [b"us"]
        consumer.commit()
    finally:
        consumer.close()


def test_carol_gets_each_authorization_error(bootstrap, acls):
    kafka_python_refused_everything(kp_conf(bootstrap, "carol"), "orders-us", "orders-us", "carols", "carols")


def test_authorized_operations_from_real_acls(bootstrap, acls):
    """confluent-kafka's describe_topics / describe_cluster with authorized operations: alice's
    ALLOW READ and WRITE imply DESCRIBE; the super user has every operation."""
    from confluent_kafka import TopicCollection
    from confluent_kafka.admin import AclOperation, AdminClient

    def topic_operations(user: str) -> set[str]:
        admin = AdminClient(conf(bootstrap, user))
        (future,) = admin.describe_topics(TopicCollection(["orders-eu"]),
                                          include_authorized_operations=True).values()
        return {op.name for op in future.result(TIMEOUT).authorized_operations}

    assert topic_operations("alice") == {"READ", "WRITE", "DESCRIBE"}
    everything = {AclOperation(int(op)).name for op in OPERATIONS_OF[ResourceType.TOPIC]}
    assert topic_operations("admin") == everything
    admin = AdminClient(conf(bootstrap, "alice"))  # kept while its future runs
    cluster = admin.describe_cluster(include_authorized_operations=True).result(TIMEOUT)
    assert not cluster.authorized_operations  # no DESCRIBE on the cluster: none told
