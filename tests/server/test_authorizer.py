"""The StandardAuthorizer (server/authorizer/standard.py) against Kafka's rules: unit cases, and a
Hypothesis property test comparing it with a plain model of StandardAuthorizerData's rules (a scan
of every binding) over random ACL sets and actions; the ACL filters (controller/acls.py)."""

from __future__ import annotations

import dataclasses
import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalite.common.errors import ApiError
from kafkalite.controller.acls import AclBinding, AclBindingFilter, AclControl, validate_new_acl
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.acl import AclOperation as Op
from kafkalite.protocol.acl import AclPermissionType as Perm
from kafkalite.protocol.acl import PatternType as Pat
from kafkalite.protocol.acl import ResourceType as Res
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.server.authorizer import OPERATIONS_OF, operations_bits
from kafkalite.server.authorizer.settings import STANDARD_AUTHORIZER, AuthorizerSettings
from kafkalite.server.authorizer.standard import StandardAuthorizer
from kafkalite.server.config import BrokerConfig
from tests.support.fake_raft import MetadataLog

LIT, PRE = Pat.LITERAL, Pat.PREFIXED
ALLOW, DENY = Perm.ALLOW, Perm.DENY


@dataclasses.dataclass
class Req:
    principal: str = "User:alice"
    client_address: str = "10.0.0.1"
    api_key: int = ApiKey.FETCH


def acl(
    name: str,
    op: Op = Op.READ,
    perm: Perm = ALLOW,
    principal: str = "User:alice",
    host: str = "*",
    pattern: Pat = LIT,
    res: Res = Res.TOPIC,
) -> AclBinding:
    return AclBinding(res, name, pattern, principal, host, op, perm)


def authorizer(*acls: AclBinding, super_users: str = "", allow_if_none: bool = False) -> StandardAuthorizer:
    supers = frozenset(s for s in super_users.split(";") if s)
    a = StandardAuthorizer(AuthorizerSettings(STANDARD_AUTHORIZER, supers, allow_if_none))
    a.load(acls)
    return a


def test_literal_prefixed_and_wildcard_names():
    a = authorizer(acl("orders"), acl("pay", pattern=PRE), acl("*", Op.WRITE))
    r = Req()
    assert a.authorize(r, Op.READ, Res.TOPIC, "orders")
    assert not a.authorize(r, Op.READ, Res.TOPIC, "orders2")  # literal is not a prefix
    assert a.authorize(r, Op.READ, Res.TOPIC, "payments")
    assert a.authorize(r, Op.READ, Res.TOPIC, "pay")
    assert not a.authorize(r, Op.READ, Res.TOPIC, "pa")
    assert a.authorize(r, Op.WRITE, Res.TOPIC, "anything")  # literal '*'
    assert not a.authorize(r, Op.READ, Res.GROUP, "orders")  # another resource type


def test_principal_and_host_matching():
    a = authorizer(acl("t", principal="User:*", host="10.0.0.1"), acl("u", principal="User:bob"))
    assert a.authorize(Req("User:carol"), Op.READ, Res.TOPIC, "t")
    assert not a.authorize(Req("User:carol", "10.0.0.2"), Op.READ, Res.TOPIC, "t")
    assert a.authorize(Req("User:bob"), Op.READ, Res.TOPIC, "u")
    assert not a.authorize(Req("User:alice"), Op.READ, Res.TOPIC, "u")


def test_deny_wins_and_deny_matches_only_its_own_operation():
    a = authorizer(acl("t", Op.ALL), acl("t", Op.WRITE, DENY), acl("p", Op.READ, DENY, pattern=PRE))
    r = Req()
    assert a.authorize(r, Op.READ, Res.TOPIC, "t")
    assert not a.authorize(r, Op.WRITE, Res.TOPIC, "t")
    # A DENY of READ does not deny DESCRIBE (only ALLOWs imply DESCRIBE).
    b = authorizer(acl("t", Op.DESCRIBE), acl("t", Op.READ, DENY))
    assert b.authorize(r, Op.DESCRIBE, Res.TOPIC, "t")
    assert not b.authorize(r, Op.READ, Res.TOPIC, "t")
    assert not a.authorize(r, Op.READ, Res.TOPIC, "p1")


@pytest.mark.parametrize(
    ("granted", "implied"),
    [
        (Op.READ, Op.DESCRIBE),
        (Op.WRITE, Op.DESCRIBE),
        (Op.DELETE, Op.DESCRIBE),
        (Op.ALTER, Op.DESCRIBE),
        (Op.ALTER_CONFIGS, Op.DESCRIBE_CONFIGS),
    ],
)
def test_implied_operations(granted, implied):
    a = authorizer(acl("t", granted))
    assert a.authorize(Req(), implied, Res.TOPIC, "t")
    assert not a.authorize(Req(), Op.CREATE, Res.TOPIC, "t")


def test_super_users_no_acls_and_not_loaded():
    a = authorizer(acl("t", principal="User:bob"), super_users="User:admin;User:ops")
    assert a.authorize(Req("User:ops"), Op.ALTER, Res.CLUSTER, "kafka-cluster")
    # The resource has ACLs, none for alice: denied even with allow.everyone.if.no.acl.found.
    b = authorizer(acl("t", principal="User:bob"), allow_if_none=True)
    assert not b.authorize(Req(), Op.READ, Res.TOPIC, "t")
    assert b.authorize(Req(), Op.READ, Res.TOPIC, "other")  # no ACL at all
    assert not a.authorize(Req(), Op.READ, Res.TOPIC, "other")
    fresh = StandardAuthorizer(AuthorizerSettings("x", frozenset({"User:admin"}), True))
    assert not fresh.authorize(Req(), Op.READ, Res.TOPIC, "t")  # not loaded: Kafka's not ready
    assert fresh.authorize(Req("User:admin"), Op.READ, Res.TOPIC, "t")


def test_authorized_and_authorized_operations():
    a = authorizer(acl("t", Op.WRITE), acl("g", Op.READ, res=Res.GROUP))
    assert a.authorized(Req(), Op.WRITE, Res.TOPIC, ["t", "u", "t"]) == {"t"}
    assert a.authorized_operations(Req(), Res.TOPIC, "t") == operations_bits([Op.WRITE, Op.DESCRIBE])
    assert a.authorized_operations(Req(), Res.GROUP, "g") == operations_bits([Op.READ, Op.DESCRIBE])
    su = authorizer(super_users="User:alice")
    assert su.authorized_operations(Req(), Res.CLUSTER, "kafka-cluster") == operations_bits(
        OPERATIONS_OF[Res.CLUSTER]
    )


def test_logged_as_kafkas_authorizer_logger_and_counted(caplog):
    a = authorizer(acl("t"))
    with caplog.at_level(logging.DEBUG, logger="kafka.authorizer.logger"):
        assert a.authorize(Req(), Op.READ, Res.TOPIC, "t")
        assert not a.authorize(Req("User:bob", "10.1.2.3"), Op.WRITE, Res.TOPIC, "t")
        assert not a.authorize(Req("User:bob"), Op.READ, Res.TOPIC, "quiet", log_if_denied=False)
    records = [r for r in caplog.records if r.name == "kafka.authorizer.logger"]
    assert [r.levelno for r in records] == [logging.DEBUG, logging.INFO]
    assert (
        records[1]
        .getMessage()
        .startswith(
            "Principal = User:bob is Denied operation = WRITE from host = 10.1.2.3 "
            "on resource = Topic:LITERAL:t for request = Fetch"
        )
    )
    assert "Principal = User:alice is Allowed operation = READ" in records[0].getMessage()
    assert (a.allowed_count, a.denied_count) == (1, 2)
    families = {m.name: m for m in a.metrics()}
    assert families["kafka_server_authorizer_metrics_authorization_denied"].samples[0].value == 2
    assert families["kafka_server_authorizer_metrics_acls_total_count"].samples[0].value == 1


def test_settings_from_the_broker_config():
    cfg = BrokerConfig(
        {
            "node.id": "1",
            "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
            "super.users": "User:admin; User:ops",
            "allow.everyone.if.no.acl.found": "true",
        }
    )
    s = cfg.authorizer_settings()
    assert s.enabled and s.super_users == {"User:admin", "User:ops"} and s.allow_everyone_if_no_acl_found
    assert not BrokerConfig({"node.id": "1"}).authorizer_settings().enabled
    with pytest.raises(Exception, match=r"authorizer\.class\.name"):
        BrokerConfig({"node.id": "1", "authorizer.class.name": "com.example.Mine"})


# --- the model: Kafka's rules as a plain scan -----------------------------------------------------


def model(
    acls: list[AclBinding],
    super_users: set[str],
    allow_if_none: bool,
    principal: str,
    host: str,
    op: Op,
    res: Res,
    name: str,
) -> bool:
    if principal in super_users:
        return True

    def applies(b: AclBinding) -> bool:
        if b.resource_type != res:
            return False
        if b.pattern_type == LIT:
            return b.resource_name in (name, "*")
        return name.startswith(b.resource_name)

    def op_matches(b: AclBinding) -> bool:
        if b.operation in (Op.ALL, op):
            return True
        if b.permission_type == DENY:
            return False
        return (op == Op.DESCRIBE and b.operation in (Op.READ, Op.WRITE, Op.DELETE, Op.ALTER)) or (
            op == Op.DESCRIBE_CONFIGS and b.operation == Op.ALTER_CONFIGS
        )

    relevant = [b for b in acls if applies(b)]
    matching = [
        b
        for b in relevant
        if b.principal in (principal, "User:*") and b.host in (host, "*") and op_matches(b)
    ]
    if any(b.permission_type == DENY for b in matching):
        return False
    if matching:
        return True
    return not relevant and allow_if_none


NAMES = st.text("ab*", min_size=1, max_size=3)
PRINCIPALS = st.sampled_from(["User:alice", "User:bob", "User:*"])
HOSTS = st.sampled_from(["10.0.0.1", "10.0.0.2", "*"])
OPS = st.sampled_from([o for o in Op if o not in (Op.UNKNOWN, Op.ANY)])
RESOURCES = st.sampled_from([Res.TOPIC, Res.GROUP])
BINDINGS = st.builds(
    AclBinding,
    RESOURCES,
    NAMES,
    st.sampled_from([LIT, PRE]),
    PRINCIPALS,
    HOSTS,
    OPS,
    st.sampled_from([ALLOW, DENY]),
)


@settings(max_examples=400, deadline=None)
@given(
    acls=st.lists(BINDINGS, max_size=12),
    super_user=st.booleans(),
    allow_if_none=st.booleans(),
    principal=st.sampled_from(["User:alice", "User:bob"]),
    host=st.sampled_from(["10.0.0.1", "10.0.0.2"]),
    op=OPS,
    res=RESOURCES,
    name=st.text("ab", min_size=1, max_size=4),
)
def test_the_authorizer_agrees_with_a_model_of_kafkas_rules(
    acls, super_user, allow_if_none, principal, host, op, res, name
):
    supers = {"User:bob"} if super_user else set()
    a = authorizer(*acls, super_users=";".join(supers), allow_if_none=allow_if_none)
    expected = model(acls, supers, allow_if_none, principal, host, op, res, name)
    assert a.authorize(Req(principal, host), op, res, name) == expected


# --- filters and the controller's set -----------------------------------------------------------


def test_filters_as_kafkas_acl_binding_filter():
    lit, pre, star = acl("orders"), acl("ord", pattern=PRE), acl("*")

    def f(res=Res.ANY, name=None, pat=Pat.ANY, principal=None, host=None, op=Op.ANY, perm=Perm.ANY):
        return AclBindingFilter(res, name, pat, principal, host, op, perm)

    assert all(f().matches(b) for b in (lit, pre, star))
    assert [b for b in (lit, pre, star) if f(name="orders").matches(b)] == [lit]  # ANY: exact names
    assert [b for b in (lit, pre, star) if f(name="orders", pat=Pat.MATCH).matches(b)] == [lit, pre, star]
    assert [b for b in (lit, pre, star) if f(pat=PRE).matches(b)] == [pre]
    assert not f(res=Res.GROUP).matches(lit)
    assert not f(principal="User:bob").matches(lit) and f(principal="User:alice").matches(lit)
    assert not f(op=Op.WRITE).matches(lit) and not f(perm=DENY).matches(lit)
    with pytest.raises(ApiError) as e:
        f(pat=Pat.UNKNOWN).validate()
    assert e.value.code == E.INVALID_REQUEST
    with pytest.raises(ApiError):
        f(op=Op.UNKNOWN).validate()


@pytest.mark.parametrize(
    ("binding", "message"),
    [
        (acl("t", res=Res.ANY), "Invalid resourceType ANY"),
        (acl("t", pattern=Pat.MATCH), "Invalid patternType MATCH"),
        (acl("t", op=Op.ANY), "Invalid operation ANY"),
        (acl("t", perm=Perm.ANY), "Invalid permissionType ANY"),
        (
            acl(
                "",
            ),
            "Invalid empty resource name",
        ),
        (acl("other", res=Res.CLUSTER), "The only valid name for the CLUSTER resource is kafka-cluster"),
        (acl("t", principal="alice"), "Could not parse principal from `alice`"),
        (acl("t", op=Op.UNKNOWN), "UNKNOWN"),
    ],
)
def test_bad_bindings_are_invalid_requests(binding, message):
    with pytest.raises(ApiError) as e:
        validate_new_acl(binding)
    assert e.value.code == E.INVALID_REQUEST and message in e.value.message


def test_the_controllers_set_is_stored():
    log = MetadataLog()
    control = AclControl(log.store())
    results, changed = control.create(
        [
            acl("a"),
            acl("a"),
            acl("b", pattern=PRE),
            acl(
                "",
            ),
        ]
    )
    assert changed and [c for c, _ in results] == [E.NONE, E.NONE, E.NONE, E.INVALID_REQUEST]
    assert control.create([acl("a")]) == ([(E.NONE, None)], False)
    outcomes, changed = control.delete(
        [
            AclBindingFilter.of(Res.ANY, "b", Pat.ANY, None, None, Op.ANY, Perm.ANY),
            AclBindingFilter.of(Res.TOPIC, None, Pat.UNKNOWN, None, None, Op.ANY, Perm.ANY),
        ]
    )
    assert changed and outcomes[0][2] == [acl("b", pattern=PRE)] and outcomes[1][0] == E.INVALID_REQUEST
    again = AclControl(log.store())  # a new active controller replays the metadata log
    again.load()
    assert again.acls == {acl("a")}


def test_a_push_replaces_the_acls_and_the_decisions_kept():
    a = authorizer(acl("t"))
    assert a.authorize(Req(), Op.READ, Res.TOPIC, "t")
    a.load([acl("t", Op.READ, DENY)])
    assert not a.authorize(Req(), Op.READ, Res.TOPIC, "t")
    a.load([])
    assert not a.authorize(Req(), Op.READ, Res.TOPIC, "t")  # no ACL, allow.everyone false


def test_the_authorizer_logger_is_a_broker_logger():
    from kafkalite.controller.configs import Op as ConfigOp
    from kafkalite.protocol.messages import incremental_alter_configs as iac
    from kafkalite.server.dynamic_config import BrokerLoggers

    logger = logging.getLogger("kafka.authorizer.logger")
    before = logger.level
    try:
        loggers = BrokerLoggers()
        assert "kafka.authorizer.logger" in loggers.levels()
        loggers.alter([ConfigOp("kafka.authorizer.logger", iac.OP_SET, "DEBUG")], validate_only=False)
        assert logger.level == logging.DEBUG
    finally:
        logger.setLevel(before)


def test_authorize_by_resource_type_as_kafkas_default():
    r = Req()
    assert not authorizer().authorize_by_resource_type(r, Op.WRITE, Res.TOPIC)
    assert authorizer(super_users="User:alice").authorize_by_resource_type(r, Op.WRITE, Res.TOPIC)
    assert authorizer(allow_if_none=True).authorize_by_resource_type(r, Op.WRITE, Res.TOPIC)
    assert authorizer(acl("t", Op.WRITE)).authorize_by_resource_type(r, Op.WRITE, Res.TOPIC)
    assert authorizer(acl("t", Op.ALL)).authorize_by_resource_type(r, Op.WRITE, Res.TOPIC)
    assert not authorizer(acl("t", Op.READ)).authorize_by_resource_type(r, Op.WRITE, Res.TOPIC)
    assert not authorizer(acl("t", Op.WRITE, host="10.9.9.9")).authorize_by_resource_type(
        r, Op.WRITE, Res.TOPIC
    )
    # A DENY of the same literal name, a PREFIXED DENY of a prefix, a LITERAL '*' DENY: denied.
    assert not authorizer(acl("t", Op.WRITE), acl("t", Op.WRITE, DENY)).authorize_by_resource_type(
        r, Op.WRITE, Res.TOPIC
    )
    assert not authorizer(
        acl("orders", Op.WRITE), acl("ord", Op.WRITE, DENY, pattern=PRE)
    ).authorize_by_resource_type(r, Op.WRITE, Res.TOPIC)
    assert not authorizer(acl("*", Op.WRITE), acl("*", Op.WRITE, DENY)).authorize_by_resource_type(
        r, Op.WRITE, Res.TOPIC
    )
    # A literal '*' ALLOW wins over other DENYs; an ALLOW not dominated by a DENY is enough.
    assert authorizer(acl("*", Op.WRITE), acl("t", Op.WRITE, DENY)).authorize_by_resource_type(
        r, Op.WRITE, Res.TOPIC
    )
    assert authorizer(
        acl("a", Op.WRITE), acl("b", Op.WRITE), acl("a", Op.WRITE, DENY)
    ).authorize_by_resource_type(r, Op.WRITE, Res.TOPIC)
    assert authorizer(acl("t", Op.WRITE, principal="User:*")).authorize_by_resource_type(
        r, Op.WRITE, Res.TOPIC
    )
    assert not authorizer(acl("t", Op.WRITE, res=Res.GROUP)).authorize_by_resource_type(
        r, Op.WRITE, Res.TOPIC
    )
