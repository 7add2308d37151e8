"""The ACL apis end to end on one 3-broker cluster with the StandardAuthorizer (broker 1 runs the
controller; storage on files so that its store survives the restart at the end). Clients log in
with SASL/PLAIN on the client listener so that principals differ: User:admin is a super user,
User:alice is not. CreateAcls / DescribeAcls / DeleteAcls by hand-built requests, by
confluent-kafka's AdminClient and by kafka-python's KafkaAdminClient; the ACLs read back from
every broker (the controller's push) and after a restart of the whole cluster; Kafka's errors
(CLUSTER_AUTHORIZATION_FAILED, INVALID_REQUEST, SECURITY_DISABLED without an authorizer)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kafkalite.protocol import error_codes as E
from kafkalite.protocol.acl import AclOperation as Op
from kafkalite.protocol.acl import AclPermissionType as Perm
from kafkalite.protocol.acl import PatternType as Pat
from kafkalite.protocol.acl import ResourceType as Res
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import create_acls as ca
from kafkalite.protocol.messages import delete_acls as da
from kafkalite.protocol.messages import describe_acls as dea
from kafkalite.protocol.messages import sasl_authenticate, sasl_handshake
from kafkalite.server.authorizer import ALLOW_ALL
from kafkalite.testing import Cluster
from tests.support.real_clients import confluent_sasl_plain, kafka_python_sasl_plain
from tests.support.wait import wait_for
from tests.support.wire_client import Client

pytestmark = pytest.mark.integration

BROKERS = (1, 2, 3)
USERS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}
STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[Cluster]:
    users = tmp_path_factory.mktemp("users") / "users.properties"
    users.write_text("".join(f"{u}={p}\n" for u, p in USERS.items()))
    settings = {
        "authorizer.class.name": STANDARD,
        # The nodes talk over INTERNAL (PLAINTEXT) as User:ANONYMOUS: registration, LeaderAndIsr and
        # follower fetches need CLUSTER_ACTION (server/checks.py), so it is a super user, as in Kafka.
        "super.users": "User:admin;User:ANONYMOUS",
        "listener.security.protocol.map": "PLAINTEXT:SASL_PLAINTEXT,INTERNAL:PLAINTEXT",
        "sasl.plain.users.file": str(users),
    }
    with Cluster(3, settings=settings, storage="files", offsets_topic=False) as c:
        yield c


def login(cluster: Cluster, broker: int, user: str) -> Client:
    c = Client("127.0.0.1", cluster.broker(broker).bound_port("PLAINTEXT"))
    hs = c.call(ApiKey.SASL_HANDSHAKE, 1, sasl_handshake.REQUEST(mechanism="PLAIN"))
    assert hs.error_code == E.NONE
    token = f"\0{user}\0{USERS[user]}".encode()
    auth = c.call(ApiKey.SASL_AUTHENTICATE, 2, sasl_authenticate.REQUEST(auth_bytes=token))
    assert auth.error_code == E.NONE
    return c


def creation(
    res: Res, name: str, pat: Pat, principal: str, op: Op, perm: Perm = Perm.ALLOW, host: str = "*"
) -> Any:
    return ca.REQUEST["creations"](
        resource_type=res,
        resource_name=name,
        resource_pattern_type=pat,
        principal=principal,
        host=host,
        operation=op,
        permission_type=perm,
    )


def create(cluster: Cluster, broker: int, user: str, *creations: Any, version: int = 3) -> list[tuple]:
    with login(cluster, broker, user) as c:
        r = c.call(ApiKey.CREATE_ACLS, version, ca.REQUEST(creations=list(creations)))
    return [(x.error_code, x.error_message) for x in r.results]


def describe(
    cluster: Cluster,
    broker: int,
    user: str = "admin",
    res: Res = Res.ANY,
    name: str | None = None,
    pat: Pat = Pat.ANY,
    principal: str | None = None,
    op: Op = Op.ANY,
    perm: Perm = Perm.ANY,
    version: int = 3,
) -> tuple[int, set[tuple]]:
    body = dea.REQUEST(
        resource_type_filter=res,
        resource_name_filter=name,
        pattern_type_filter=pat,
        principal_filter=principal,
        host_filter=None,
        operation=op,
        permission_type=perm,
    )
    with login(cluster, broker, user) as c:
        r = c.call(ApiKey.DESCRIBE_ACLS, version, body)
    return r.error_code, {
        (
            x.resource_type,
            x.resource_name,
            x.pattern_type,
            a.principal,
            a.host,
            a.operation,
            a.permission_type,
        )
        for x in r.resources
        for a in x.acls
    }


def delete_filter(
    res: Res = Res.ANY,
    name: str | None = None,
    pat: Pat = Pat.ANY,
    principal: str | None = None,
    op: Op = Op.ANY,
    perm: Perm = Perm.ANY,
) -> Any:
    return da.REQUEST["filters"](
        resource_type_filter=res,
        resource_name_filter=name,
        pattern_type_filter=pat,
        principal_filter=principal,
        host_filter=None,
        operation=op,
        permission_type=perm,
    )


def on_every_broker(cluster: Cluster, expected: set[tuple], **filters: Any) -> None:
    for b in BROKERS:
        assert wait_for(lambda b=b: describe(cluster, b, **filters) == (E.NONE, expected), timeout=10), (
            f"broker {b} does not show {expected}: {describe(cluster, b, **filters)}"
        )


def row(res: Res, name: str, pat: Pat, principal: str, op: Op, perm: Perm = Perm.ALLOW) -> tuple:
    return (res, name, pat, principal, "*", op, perm)


def clear(cluster: Cluster) -> None:
    with login(cluster, 1, "admin") as c:
        c.call(ApiKey.DELETE_ACLS, 3, da.REQUEST(filters=[delete_filter()]))
    on_every_broker(cluster, set())


def test_wire_create_describe_delete_forwarded_and_pushed_to_every_broker(cluster):
    clear(cluster)
    # Created through broker 2: forwarded to the controller, pushed to every broker.
    assert (
        create(
            cluster,
            2,
            "admin",
            creation(Res.TOPIC, "orders", Pat.LITERAL, "User:alice", Op.READ),
            creation(Res.TOPIC, "pay", Pat.PREFIXED, "User:alice", Op.WRITE),
            creation(Res.TOPIC, "pay", Pat.PREFIXED, "User:bob", Op.ALL, Perm.DENY),
            creation(Res.GROUP, "*", Pat.LITERAL, "User:*", Op.READ),
        )
        == [(E.NONE, None)] * 4
    )
    everything = {
        row(Res.TOPIC, "orders", Pat.LITERAL, "User:alice", Op.READ),
        row(Res.TOPIC, "pay", Pat.PREFIXED, "User:alice", Op.WRITE),
        row(Res.TOPIC, "pay", Pat.PREFIXED, "User:bob", Op.ALL, Perm.DENY),
        row(Res.GROUP, "*", Pat.LITERAL, "User:*", Op.READ),
    }
    on_every_broker(cluster, everything)
    # Filters: MATCH finds the bindings that apply to a resource; exact names otherwise.
    assert describe(cluster, 3, res=Res.TOPIC, name="payments", pat=Pat.MATCH)[1] == {
        row(Res.TOPIC, "pay", Pat.PREFIXED, "User:alice", Op.WRITE),
        row(Res.TOPIC, "pay", Pat.PREFIXED, "User:bob", Op.ALL, Perm.DENY),
    }
    assert describe(cluster, 3, res=Res.GROUP, name="g1", pat=Pat.MATCH)[1] == {
        row(Res.GROUP, "*", Pat.LITERAL, "User:*", Op.READ)
    }
    assert describe(cluster, 2, name="pay", pat=Pat.PREFIXED, perm=Perm.DENY)[1] == {
        row(Res.TOPIC, "pay", Pat.PREFIXED, "User:bob", Op.ALL, Perm.DENY)
    }
    assert describe(cluster, 1, principal="User:alice", op=Op.READ, version=1)[1] == {
        row(Res.TOPIC, "orders", Pat.LITERAL, "User:alice", Op.READ)
    }
    # Created twice: a success that adds nothing.
    assert create(cluster, 1, "admin", creation(Res.TOPIC, "orders", Pat.LITERAL, "User:alice", Op.READ)) == [
        (E.NONE, None)
    ]
    # Deleted through broker 3 (forwarded): each filter's result lists what it removed.
    with login(cluster, 3, "admin") as c:
        r = c.call(
            ApiKey.DELETE_ACLS,
            3,
            da.REQUEST(
                filters=[
                    delete_filter(Res.TOPIC, "pay", Pat.PREFIXED),
                    delete_filter(name="nothing"),
                    delete_filter(pat=Pat.UNKNOWN),
                ]
            ),
        )
    first, second, third = r.filter_results
    assert first.error_code == E.NONE and {(m.principal, m.operation) for m in first.matching_acls} == {
        ("User:alice", Op.WRITE),
        ("User:bob", Op.ALL),
    }
    assert (second.error_code, second.matching_acls) == (E.NONE, [])
    assert third.error_code == E.INVALID_REQUEST
    on_every_broker(
        cluster,
        everything
        - {
            row(Res.TOPIC, "pay", Pat.PREFIXED, "User:alice", Op.WRITE),
            row(Res.TOPIC, "pay", Pat.PREFIXED, "User:bob", Op.ALL, Perm.DENY),
        },
    )


def test_bad_bindings_and_filters_are_invalid_requests(cluster):
    results = create(
        cluster,
        2,
        "admin",
        creation(Res.CLUSTER, "my-cluster", Pat.LITERAL, "User:alice", Op.ALTER),
        creation(Res.TOPIC, "", Pat.LITERAL, "User:alice", Op.READ),
        creation(Res.TOPIC, "t", Pat.MATCH, "User:alice", Op.READ),
        creation(Res.TOPIC, "t", Pat.LITERAL, "alice", Op.READ),
        creation(Res.TOPIC, "t", Pat.LITERAL, "User:alice", Op.ANY),
        creation(Res.TOPIC, "t", Pat.LITERAL, "User:alice", Op.READ, 99),
    )
    assert [code for code, _ in results] == [E.INVALID_REQUEST] * 6
    assert "The only valid name for the CLUSTER resource is kafka-cluster" in results[0][1]
    assert "Could not parse principal from `alice`" in results[3][1]
    assert describe(cluster, 1, pat=Pat.UNKNOWN)[0] == E.INVALID_REQUEST
    assert describe(cluster, 1, res=Res.UNKNOWN)[0] == E.INVALID_REQUEST


def test_the_acl_apis_need_alter_and_describe_on_the_cluster(cluster):
    clear(cluster)
    denied = (E.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.")
    broker2 = cluster.broker(2)
    assert broker2.authorizer is broker2.standard_authorizer is not None  # what every handler asks
    denials = broker2.standard_authorizer.denied_count
    assert create(cluster, 2, "alice", creation(Res.TOPIC, "t", Pat.LITERAL, "User:alice", Op.READ)) == [
        denied
    ]
    assert broker2.standard_authorizer.denied_count == denials + 1  # counted (the denial metric)
    assert describe(cluster, 2, "alice")[0] == E.CLUSTER_AUTHORIZATION_FAILED
    with login(cluster, 1, "alice") as c:
        r = c.call(ApiKey.DELETE_ACLS, 3, da.REQUEST(filters=[delete_filter()]))
    assert r.filter_results[0].error_code == E.CLUSTER_AUTHORIZATION_FAILED
    # DESCRIBE on the cluster lets alice describe, not create; ALTER implies DESCRIBE.
    assert create(
        cluster, 1, "admin", creation(Res.CLUSTER, "kafka-cluster", Pat.LITERAL, "User:alice", Op.DESCRIBE)
    ) == [(E.NONE, None)]
    assert wait_for(lambda: describe(cluster, 3, "alice")[0] == E.NONE, timeout=10)
    assert create(cluster, 3, "alice", creation(Res.TOPIC, "t", Pat.LITERAL, "User:alice", Op.READ)) == [
        denied
    ]
    assert create(
        cluster, 1, "admin", creation(Res.CLUSTER, "kafka-cluster", Pat.LITERAL, "User:bob", Op.ALTER)
    ) == [(E.NONE, None)]
    assert wait_for(lambda: describe(cluster, 2, "bob")[0] == E.NONE, timeout=10)
    assert create(cluster, 2, "bob", creation(Res.TOPIC, "t", Pat.LITERAL, "User:bob", Op.READ)) == [
        (E.NONE, None)
    ]
    # A DENY for bob on the cluster wins over his ALLOW.
    assert create(
        cluster,
        1,
        "admin",
        creation(Res.CLUSTER, "kafka-cluster", Pat.LITERAL, "User:bob", Op.ALTER, Perm.DENY),
    ) == [(E.NONE, None)]
    assert wait_for(
        lambda: (
            create(cluster, 2, "bob", creation(Res.TOPIC, "u", Pat.LITERAL, "User:bob", Op.READ)) == [denied]
        ),
        timeout=10,
    )


def _confluent(cluster: Cluster, user: str = "admin") -> Any:
    from confluent_kafka.admin import AdminClient

    return AdminClient(confluent_sasl_plain(cluster.bootstrap_servers, user, USERS[user]))


def test_confluent_kafka_admin_client(cluster):
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import (
        AclBinding,
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        ResourcePatternType,
        ResourceType,
    )

    clear(cluster)
    admin = _confluent(cluster)
    bindings = [
        AclBinding(
            ResourceType.TOPIC,
            "ck-orders",
            ResourcePatternType.LITERAL,
            "User:alice",
            "*",
            AclOperation.READ,
            AclPermissionType.ALLOW,
        ),
        AclBinding(
            ResourceType.GROUP,
            "ck-",
            ResourcePatternType.PREFIXED,
            "User:alice",
            "*",
            AclOperation.READ,
            AclPermissionType.ALLOW,
        ),
    ]
    for future in admin.create_acls(bindings, request_timeout=20).values():
        assert future.result() is None
    any_filter = AclBindingFilter(
        ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY, AclPermissionType.ANY
    )
    assert wait_for(
        lambda: (
            sorted(map(str, admin.describe_acls(any_filter, request_timeout=20).result()))
            == sorted(map(str, bindings))
        ),
        timeout=10,
    )
    on_every_broker(
        cluster,
        {
            row(Res.TOPIC, "ck-orders", Pat.LITERAL, "User:alice", Op.READ),
            row(Res.GROUP, "ck-", Pat.PREFIXED, "User:alice", Op.READ),
        },
    )
    group_filter = AclBindingFilter(
        ResourceType.GROUP,
        "ck-group",
        ResourcePatternType.MATCH,
        None,
        None,
        AclOperation.ANY,
        AclPermissionType.ANY,
    )
    (deleted,) = admin.delete_acls([group_filter], request_timeout=20).values()
    assert [str(b) for b in deleted.result()] == [str(bindings[1])]
    on_every_broker(cluster, {row(Res.TOPIC, "ck-orders", Pat.LITERAL, "User:alice", Op.READ)})
    # alice may not: CreateAcls' CLUSTER_AUTHORIZATION_FAILED reaches the client as such.
    # (librdkafka drops DescribeAcls' top-level error code: her listing comes back empty.)
    alice = _confluent(cluster, "alice")
    (refused,) = alice.create_acls(bindings[:1], request_timeout=20).values()
    with pytest.raises(KafkaException) as e:
        refused.result()
    assert e.value.args[0].code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED
    assert alice.describe_acls(any_filter, request_timeout=20).result() == []


def test_kafka_python_admin_client(cluster):
    from kafka.admin import (
        ACL,
        ACLFilter,
        ACLOperation,
        ACLPermissionType,
        ACLResourcePatternType,
        KafkaAdminClient,
        ResourcePattern,
        ResourcePatternFilter,
        ResourceType,
    )

    clear(cluster)
    admin = KafkaAdminClient(**kafka_python_sasl_plain(cluster.bootstrap_servers, "admin", USERS["admin"]))
    try:
        acls = [
            ACL(
                "User:bob",
                "*",
                ACLOperation.WRITE,
                ACLPermissionType.ALLOW,
                ResourcePattern(ResourceType.TOPIC, "kp-events", ACLResourcePatternType.LITERAL),
            ),
            ACL(
                "User:bob",
                "*",
                ACLOperation.DESCRIBE,
                ACLPermissionType.DENY,
                ResourcePattern(ResourceType.TRANSACTIONAL_ID, "kp-", ACLResourcePatternType.PREFIXED),
            ),
        ]
        result = admin.create_acls(acls)
        assert len(result["succeeded"]) == 2 and not result["failed"]
        bob = ACLFilter(
            "User:bob",
            None,
            ACLOperation.ANY,
            ACLPermissionType.ANY,
            ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY),
        )

        def described() -> set:
            found, error = admin.describe_acls(bob)
            assert error.errno == 0
            return {
                (
                    a.resource_pattern.resource_type,
                    a.resource_pattern.resource_name,
                    a.resource_pattern.pattern_type,
                    a.operation,
                    a.permission_type,
                )
                for a in found
            }

        assert wait_for(
            lambda: (
                described()
                == {
                    (
                        ResourceType.TOPIC,
                        "kp-events",
                        ACLResourcePatternType.LITERAL,
                        ACLOperation.WRITE,
                        ACLPermissionType.ALLOW,
                    ),
                    (
                        ResourceType.TRANSACTIONAL_ID,
                        "kp-",
                        ACLResourcePatternType.PREFIXED,
                        ACLOperation.DESCRIBE,
                        ACLPermissionType.DENY,
                    ),
                }
            ),
            timeout=10,
        )
        on_every_broker(
            cluster,
            {
                row(Res.TOPIC, "kp-events", Pat.LITERAL, "User:bob", Op.WRITE),
                row(Res.TRANSACTIONAL_ID, "kp-", Pat.PREFIXED, "User:bob", Op.DESCRIBE, Perm.DENY),
            },
        )
        deny_only = ACLFilter(
            "User:bob",
            None,
            ACLOperation.ANY,
            ACLPermissionType.DENY,
            ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY),
        )
        ((_, matches, error),) = admin.delete_acls([deny_only])
        assert error.errno == 0 and [m.resource_pattern.resource_name for m in matches] == ["kp-"]
        on_every_broker(cluster, {row(Res.TOPIC, "kp-events", Pat.LITERAL, "User:bob", Op.WRITE)})
    finally:
        admin.close()


def test_acls_survive_a_restart_of_the_whole_cluster(cluster):
    clear(cluster)
    assert (
        create(
            cluster,
            2,
            "admin",
            creation(Res.TOPIC, "kept", Pat.PREFIXED, "User:alice", Op.READ),
            creation(Res.CLUSTER, "kafka-cluster", Pat.LITERAL, "User:alice", Op.DESCRIBE),
        )
        == [(E.NONE, None)] * 2
    )
    expected = {
        row(Res.TOPIC, "kept", Pat.PREFIXED, "User:alice", Op.READ),
        row(Res.CLUSTER, "kafka-cluster", Pat.LITERAL, "User:alice", Op.DESCRIBE),
    }
    on_every_broker(cluster, expected)
    cluster.restart_all()
    on_every_broker(cluster, expected)
    on_every_broker(cluster, expected, user="alice")  # her ACL is in force again too


def test_without_an_authorizer_the_acl_apis_are_security_disabled():
    with Cluster(1, offsets_topic=False) as c:
        assert c.broker(1).authorizer is ALLOW_ALL
        with Client("127.0.0.1", c.broker(1).bound_port("PLAINTEXT")) as client:
            r = client.call(
                ApiKey.CREATE_ACLS,
                3,
                ca.REQUEST(creations=[creation(Res.TOPIC, "t", Pat.LITERAL, "User:alice", Op.READ)]),
            )
            assert [(x.error_code, x.error_message) for x in r.results] == [
                (E.SECURITY_DISABLED, "No Authorizer is configured.")
            ]
            d = client.call(
                ApiKey.DESCRIBE_ACLS,
                3,
                dea.REQUEST(
                    resource_type_filter=Res.ANY,
                    resource_name_filter=None,
                    pattern_type_filter=Pat.ANY,
                    principal_filter=None,
                    host_filter=None,
                    operation=Op.ANY,
                    permission_type=Perm.ANY,
                ),
            )
            assert d.error_code == E.SECURITY_DISABLED
            x = client.call(ApiKey.DELETE_ACLS, 3, da.REQUEST(filters=[delete_filter()]))
            assert x.filter_results[0].error_code == E.SECURITY_DISABLED
