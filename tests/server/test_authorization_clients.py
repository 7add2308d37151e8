"""The checks seen by real clients (confluent-kafka, kafka-python) logged in with SASL/PLAIN: the
broker's authorizer is a small table (tests/server/test_authorization_checks.py's) judging the
principal User:bob only, so that User:alice produces and consumes in a group while bob gets
Kafka's authorization errors, raised by each client as its own exception."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from kafkalite.protocol.acl import CLUSTER_NAME, AclOperation, ResourceType
from kafkalite.server.authorizer import ALLOW_ALL
from tests.server.test_authorization_checks import TableAuthorizer
from tests.support.brokers import running_broker
from tests.support.real_clients import (
    confluent_sasl_plain,
    kafka_python_refused_everything,
    kafka_python_sasl_plain,
)
from tests.support.wait import wait_for

pytestmark = pytest.mark.integration

Op, RT = AclOperation, ResourceType
USERS = {"alice": "alice-secret", "bob": "bob-secret"}
TIMEOUT = 30.0


class PrincipalTable(TableAuthorizer):
    """The table, judging requests by their principal."""

    def __init__(self) -> None:
        super().__init__()
        self.subjects = {"User:bob"}

    def authorize(self, request, operation, resource_type, name, log_if_denied=True):  # type: ignore
        if request.principal not in self.subjects:
            return True
        return not ({(operation, resource_type, name), (operation, resource_type, "*")} & self.denied)


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    users = tmp_path_factory.mktemp("users") / "users.properties"
    users.write_text("".join(f"{u}={p}\n" for u, p in USERS.items()))
    with running_broker(tmp_path_factory.mktemp("clients"), sasl_plain_users_file=str(users),
                        listener_security_protocol_map="PLAINTEXT:SASL_PLAINTEXT,INTERNAL:PLAINTEXT",
                        group_initial_rebalance_delay_ms="0", offsets_topic_replication_factor="1") as b:
        b.apis.authorizer = table = PrincipalTable()
        table.denied |= {
            (Op.WRITE, RT.TOPIC, "orders"), (Op.READ, RT.TOPIC, "orders"),
            (Op.READ, RT.GROUP, "*"), (Op.DESCRIBE, RT.GROUP, "*"),
            (Op.DESCRIBE, RT.TOPIC, "hidden"),
            (Op.CREATE, RT.CLUSTER, CLUSTER_NAME), (Op.CREATE, RT.TOPIC, "*"),
            (Op.IDEMPOTENT_WRITE, RT.CLUSTER, CLUSTER_NAME), (Op.WRITE, RT.TOPIC, "*"),
        }
        try:
            yield b
        finally:
            b.apis.authorizer = ALLOW_ALL


@pytest.fixture(scope="module")
def bootstrap(broker) -> str:
    return f"127.0.0.1:{broker.bound_port('PLAINTEXT')}"


def confluent_conf(bootstrap: str, user: str) -> dict[str, str]:
    return confluent_sasl_plain(bootstrap, user, USERS[user])


def kafka_python_conf(bootstrap: str, user: str) -> dict[str, object]:
    return kafka_python_sasl_plain(bootstrap, user, USERS[user])


@pytest.fixture(scope="module")
def topics(bootstrap) -> Iterator[None]:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient(confluent_conf(bootstrap, "alice"))
    futures = admin.create_topics([NewTopic(t, 1, 1) for t in ("orders", "hidden", "kp-orders")])
    for f in futures.values():
        f.result(TIMEOUT)
    yield


def test_confluent_kafka_alice_produces_and_consumes_in_a_group(bootstrap, topics):
    from confluent_kafka import Consumer, Producer

    producer = Producer({**confluent_conf(bootstrap, "alice"), "enable.idempotence": True})
    errors: list[object] = []
    for i in range(5):
        producer.produce("orders", value=b"v%d" % i, on_delivery=lambda err, msg: errors.append(err))
    assert producer.flush(TIMEOUT) == 0
    assert errors == [None] * 5
    consumer = Consumer({**confluent_conf(bootstrap, "alice"), "group.id": "alice-group",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        consumer.subscribe(["orders"])
        got: list[bytes] = []
        deadline = time.monotonic() + TIMEOUT
        while len(got) < 5 and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None:
                assert msg.error() is None, msg.error()
                got.append(msg.value())
        assert got == [b"v%d" % i for i in range(5)]
        committed = consumer.commit(asynchronous=False)
        assert [tp.offset for tp in committed] == [5]
    finally:
        consumer.close()


def test_confluent_kafka_bob_is_refused(bootstrap, topics):
    from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    producer = Producer({**confluent_conf(bootstrap, "bob"), "message.timeout.ms": 10000})
    reports: list[object] = []
    producer.produce("orders", value=b"x", on_delivery=lambda err, msg: reports.append(err))
    producer.flush(TIMEOUT)
    assert len(reports) == 1 and reports[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED  # type: ignore[attr-defined]

    consumer = Consumer({**confluent_conf(bootstrap, "bob"), "group.id": "bob-group",
                         "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe(["kp-orders"])
        deadline = time.monotonic() + TIMEOUT
        error = None
        while error is None and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is not None:
                error = msg.error()
        assert error is not None and error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED, error
    finally:
        consumer.close()

    admin = AdminClient(confluent_conf(bootstrap, "bob"))
    (future,) = admin.create_topics([NewTopic("bobs-topic", 1, 1)]).values()
    with pytest.raises(KafkaException) as refused:
        future.result(TIMEOUT)
    assert refused.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    # Metadata of every topic hides what bob may not describe.
    listed = set(admin.list_topics(timeout=TIMEOUT).topics)
    assert "orders" in listed and "hidden" not in listed


def test_kafka_python_alice_produces_and_consumes_in_a_group(bootstrap, topics):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    producer = KafkaProducer(**kafka_python_conf(bootstrap, "alice"))  # idempotent by default
    try:
        for i in range(3):
            producer.send("kp-orders", value=b"k%d" % i).get(timeout=TIMEOUT)
    finally:
        producer.close(timeout=10)
    consumer = KafkaConsumer("kp-orders", group_id="alice-kp", auto_offset_reset="earliest",
                             enable_auto_commit=False, **kafka_python_conf(bootstrap, "alice"))
    try:
        got: list[bytes] = []
        deadline = time.monotonic() + TIMEOUT
        while len(got) < 3 and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=500).values():
                got += [r.value for r in records]
        assert got == [b"k0", b"k1", b"k2"]
        consumer.commit()
        assert consumer.committed(TopicPartition("kp-orders", 0)) == 3
    finally:
        consumer.close()


def test_kafka_python_bob_is_refused(bootstrap, topics):
    from kafka import KafkaProducer
    from kafka.admin import KafkaAdminClient
    from kafka.errors import (
        ClusterAuthorizationFailedError,
        KafkaError,
    )

    # Idempotent (kafka-python's default): InitProducerId needs IDEMPOTENT_WRITE or WRITE on a
    # topic; kafka-python reports the broker's error 31 inside its fatal KafkaError.
    producer = KafkaProducer(**kafka_python_conf(bootstrap, "bob"), max_block_ms=10000)
    try:
        with pytest.raises(KafkaError) as refused:
            producer.send("kp-orders", value=b"x").get(timeout=TIMEOUT)
    finally:
        producer.close(timeout=10)
    assert ClusterAuthorizationFailedError.__name__ in str(refused.value)
    kafka_python_refused_everything(kafka_python_conf(bootstrap, "bob"), "orders", "kp-orders", "bob-kp",
                                    "bobs-kp-topic")

    admin = KafkaAdminClient(**kafka_python_conf(bootstrap, "bob"))
    try:
        assert wait_for(lambda: "hidden" not in admin.list_topics() and "orders" in admin.list_topics(),
                        timeout=10)
    finally:
        admin.close()
