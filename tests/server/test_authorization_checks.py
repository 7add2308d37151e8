"""What each api checks (server/checks.py), on the wire against a real broker whose authorizer
is a small table: every api's denied path answers Kafka's error in Kafka's shape, its allowed
path works.

The table judges the requests of client id "mallory" only (the test's own setup and the broker's
own connections are allowed): a denial is ``(operation, resource type, name)``, ``"*"`` denying
every name of the type.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from kafkalite.protocol import APIS_BY_KEY, ApiKey
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.acl import CLUSTER_NAME, AclOperation, ResourceType
from kafkalite.server.authorizer import ALLOW_ALL, OPERATIONS_OF, operations_bits
from tests.support.brokers import running_broker
from tests.support.raw_requests import batch, create_topic, fetch_request, produce_request
from tests.support.wait import wait_for
from tests.support.wire_client import Client

Op, RT = AclOperation, ResourceType
OMITTED = -2147483648
ZERO = uuid.UUID(int=0)


class TableAuthorizer:
    """The Authorizer protocol, deciding by a table of denials for the judged client ids."""

    def __init__(self) -> None:
        self.subjects = {"mallory"}
        self.denied: set[tuple[AclOperation, ResourceType, str]] = set()

    def authorize(self, request: Any, operation: AclOperation, resource_type: ResourceType, name: str,
                  log_if_denied: bool = True) -> bool:
        if request.header.client_id not in self.subjects:
            return True
        return not ({(operation, resource_type, name), (operation, resource_type, "*")} & self.denied)

    def authorized(self, request: Any, operation: AclOperation, resource_type: ResourceType,
                   names: Iterable[str], log_if_denied: bool = True) -> set[str]:
        return {n for n in names if self.authorize(request, operation, resource_type, n)}

    def authorized_operations(self, request: Any, resource_type: ResourceType, name: str) -> int:
        return operations_bits(op for op in OPERATIONS_OF[resource_type]
                               if self.authorize(request, op, resource_type, name))

    def authorize_by_resource_type(self, request: Any, operation: AclOperation,
                                   resource_type: ResourceType) -> bool:
        return self.authorize(request, operation, resource_type, "*")


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with running_broker(tmp_path_factory.mktemp("checks"), auto_create_topics_enable="true") as b:
        with Client("127.0.0.1", b.bound_port("PLAINTEXT")) as admin:
            for name in ("open", "secret"):
                create_topic(admin, name, partitions=2)
        yield b


@pytest.fixture
def table(broker) -> Iterator[TableAuthorizer]:
    authorizer = TableAuthorizer()
    broker.apis.authorizer = authorizer
    try:
        yield authorizer
    finally:
        broker.apis.authorizer = ALLOW_ALL


@pytest.fixture
def mallory(broker) -> Iterator[Client]:
    with Client("127.0.0.1", broker.bound_port("PLAINTEXT"), client_id="mallory") as c:
        yield c


def all_but(resource_type: ResourceType, operation: AclOperation) -> int:
    """The bit field of every operation of the type but ``operation``."""
    return operations_bits(op for op in OPERATIONS_OF[resource_type] if op != operation)


def request(key: ApiKey, /, **fields: Any) -> Any:
    return APIS_BY_KEY[key].request(**fields)


def struct(key: ApiKey, *path: str) -> Any:
    s = APIS_BY_KEY[key].request
    for p in path:
        s = s[p]
    return s


def call(c: Client, key: ApiKey, version: int, /, **fields: Any) -> Any:
    return c.call(key, version, request(key, **fields))


# --- the data path ---------------------------------------------------------------------------


def test_produce_writes_the_allowed_topic_and_refuses_the_other(table, mallory):
    table.denied.add((Op.WRITE, RT.TOPIC, "secret"))
    r = mallory.call(ApiKey.PRODUCE, 9, produce_request({("open", 0): batch([b"a"]),
                                                         ("secret", 0): batch([b"b"])}))
    codes = {t.name: [(p.index, p.error_code) for p in t.partition_responses] for t in r.responses}
    assert codes == {"open": [(0, E.NONE)], "secret": [(0, E.TOPIC_AUTHORIZATION_FAILED)]}
    (refused,) = [t.partition_responses[0] for t in r.responses if t.name == "secret"]
    assert refused.base_offset == -1


def test_produce_of_a_transactional_id_without_write_on_it(table, mallory):
    table.denied.add((Op.WRITE, RT.TRANSACTIONAL_ID, "tx"))
    body = produce_request({("open", 0): batch([b"a"])})
    body.transactional_id = "tx"
    r = mallory.call(ApiKey.PRODUCE, 9, body)
    assert [(t.name, [p.error_code for p in t.partition_responses]) for t in r.responses] == [
        ("open", [E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED])]


def test_fetch_reads_the_allowed_topic_only(table, mallory):
    table.denied.add((Op.READ, RT.TOPIC, "secret"))
    r = mallory.call(ApiKey.FETCH, 12, fetch_request([("open", 0, 0), ("secret", 0, 0)]))
    codes = {t.topic: [p.error_code for p in t.partitions] for t in r.responses}
    assert codes == {"open": [E.NONE], "secret": [E.TOPIC_AUTHORIZATION_FAILED]}


def test_produce_and_fetch_by_topic_id(broker, table, mallory):
    """Produce v13 and Fetch v13+ name topics by id: judged by the topic's name, answered by id."""
    table.denied |= {(Op.WRITE, RT.TOPIC, "secret"), (Op.READ, RT.TOPIC, "secret")}
    ids = {n: broker.metadata_cache.snapshot.topics[n].topic_id for n in ("open", "secret")}
    body = produce_request({("open", 1): batch([b"a"]), ("secret", 1): batch([b"b"])})
    for t in body.topic_data:
        t.topic_id, t.name = ids[t.name], None
    r = mallory.call(ApiKey.PRODUCE, 13, body)
    assert {t.topic_id: t.partition_responses[0].error_code for t in r.responses} == {
        ids["open"]: E.NONE, ids["secret"]: E.TOPIC_AUTHORIZATION_FAILED}
    body = fetch_request([("open", 1, 0), ("secret", 1, 0)])
    for t in body.topics:
        t.topic_id, t.topic = ids[t.topic], None
    r = mallory.call(ApiKey.FETCH, 17, body)
    assert {t.topic_id: t.partitions[0].error_code for t in r.responses} == {
        ids["open"]: E.NONE, ids["secret"]: E.TOPIC_AUTHORIZATION_FAILED}


def test_a_followers_fetch_needs_cluster_action(table, mallory):
    r = mallory.call(ApiKey.FETCH, 12, fetch_request([("open", 0, 0)], replica_id=1))
    assert [p.error_code for t in r.responses for p in t.partitions] != [E.TOPIC_AUTHORIZATION_FAILED]
    table.denied.add((Op.CLUSTER_ACTION, RT.CLUSTER, CLUSTER_NAME))
    r = mallory.call(ApiKey.FETCH, 12, fetch_request([("open", 0, 0), ("open", 1, 0)], replica_id=1))
    assert [p.error_code for t in r.responses for p in t.partitions] == [E.TOPIC_AUTHORIZATION_FAILED] * 2


def test_list_offsets_and_offset_for_leader_epoch_need_describe(table, mallory):
    table.denied.add((Op.DESCRIBE, RT.TOPIC, "secret"))
    P = struct(ApiKey.LIST_OFFSETS, "topics", "partitions")
    r = call(mallory, ApiKey.LIST_OFFSETS, 7, replica_id=-1, topics=[
        struct(ApiKey.LIST_OFFSETS, "topics")(name=n, partitions=[P(partition_index=0, timestamp=-1)])
        for n in ("open", "secret")])
    by_name = {t.name: t.partitions[0] for t in r.topics}
    assert by_name["open"].error_code == E.NONE and by_name["open"].offset >= 0
    assert (by_name["secret"].error_code, by_name["secret"].offset) == (E.TOPIC_AUTHORIZATION_FAILED, -1)
    T = struct(ApiKey.OFFSET_FOR_LEADER_EPOCH, "topics")

    def epochs(replica_id: int) -> dict[str, int]:
        r = call(mallory, ApiKey.OFFSET_FOR_LEADER_EPOCH, 4, replica_id=replica_id, topics=[
            T(topic=n, partitions=[T["partitions"](partition=0, current_leader_epoch=-1, leader_epoch=0)])
            for n in ("open", "secret")])
        return {t.topic: t.partitions[0].error_code for t in r.topics}
    # CLUSTER_ACTION covers every topic, DESCRIBE denied or not (a follower's right)...
    assert epochs(1) == epochs(-1) == {"open": E.NONE, "secret": E.NONE}
    # ... without it DESCRIBE on each topic, whoever asks (Kafka's KIP-320 rule).
    table.denied.add((Op.CLUSTER_ACTION, RT.CLUSTER, CLUSTER_NAME))
    assert epochs(1) == epochs(-1) == {"open": E.NONE, "secret": E.TOPIC_AUTHORIZATION_FAILED}


def test_delete_records_needs_delete_and_describe_producers_read(table, mallory):
    table.denied |= {(Op.DELETE, RT.TOPIC, "secret"), (Op.READ, RT.TOPIC, "secret")}
    T = struct(ApiKey.DELETE_RECORDS, "topics")
    r = call(mallory, ApiKey.DELETE_RECORDS, 2, timeout_ms=5000, topics=[
        T(name="secret", partitions=[T["partitions"](partition_index=0, offset=0)])])
    assert [(t.name, p.error_code, p.low_watermark) for t in r.topics for p in t.partitions] == [
        ("secret", E.TOPIC_AUTHORIZATION_FAILED, -1)]
    T = struct(ApiKey.DESCRIBE_PRODUCERS, "topics")
    r = call(mallory, ApiKey.DESCRIBE_PRODUCERS, 0, topics=[T(name="open", partition_indexes=[0]),
                                                             T(name="secret", partition_indexes=[0, 1])])
    assert {t.name: [p.error_code for p in t.partitions] for t in r.topics} == {
        "open": [E.NONE], "secret": [E.TOPIC_AUTHORIZATION_FAILED] * 2}


# --- Metadata, DescribeTopicPartitions, DescribeCluster ------------------------------------------


def test_metadata_hides_what_may_not_be_described(broker, table, mallory):
    table.denied.add((Op.DESCRIBE, RT.TOPIC, "secret"))
    r = call(mallory, ApiKey.METADATA, 12, topics=None)
    names = {t.name for t in r.topics}
    assert "open" in names and "secret" not in names
    T = struct(ApiKey.METADATA, "topics")
    r = call(mallory, ApiKey.METADATA, 12, topics=[T(name="open"), T(name="secret")],
             allow_auto_topic_creation=False)
    by_name = {t.name: t for t in r.topics}
    assert by_name["open"].error_code == E.NONE and by_name["open"].topic_id != ZERO
    secret = by_name["secret"]
    assert (secret.error_code, secret.topic_id, secret.partitions) == (E.TOPIC_AUTHORIZATION_FAILED, ZERO, [])
    # Asked by id (v12+): the id is no secret, the name is not told.
    secret_id = broker.metadata_cache.snapshot.topics["secret"].topic_id
    r = call(mallory, ApiKey.METADATA, 12, topics=[T(name=None, topic_id=secret_id)])
    assert [(t.error_code, t.name, t.topic_id) for t in r.topics] == [
        (E.TOPIC_AUTHORIZATION_FAILED, None, secret_id)]


def test_metadata_auto_creation_needs_create(broker, table, mallory):
    table.denied |= {(Op.CREATE, RT.CLUSTER, CLUSTER_NAME), (Op.CREATE, RT.TOPIC, "*")}
    T = struct(ApiKey.METADATA, "topics")
    r = call(mallory, ApiKey.METADATA, 12, topics=[T(name="made-by-mallory")], allow_auto_topic_creation=True)
    assert [(t.name, t.error_code) for t in r.topics] == [("made-by-mallory", E.TOPIC_AUTHORIZATION_FAILED)]
    assert "made-by-mallory" not in broker.metadata_cache.snapshot.topics
    table.denied = {(Op.CREATE, RT.CLUSTER, CLUSTER_NAME)}  # CREATE on the topic will do
    r = call(mallory, ApiKey.METADATA, 12, topics=[T(name="made-by-mallory")], allow_auto_topic_creation=True)
    assert r.topics[0].error_code in (E.NONE, E.LEADER_NOT_AVAILABLE, E.UNKNOWN_TOPIC_OR_PARTITION)
    assert wait_for(lambda: "made-by-mallory" in broker.metadata_cache.snapshot.topics, timeout=10)


def test_metadata_authorized_operations(table, mallory):
    table.denied |= {(Op.ALTER, RT.TOPIC, "open"), (Op.ALTER, RT.CLUSTER, CLUSTER_NAME)}
    T = struct(ApiKey.METADATA, "topics")
    r = call(mallory, ApiKey.METADATA, 10, topics=[T(name="open")], include_topic_authorized_operations=True,
             include_cluster_authorized_operations=True)
    assert r.topics[0].topic_authorized_operations == all_but(RT.TOPIC, Op.ALTER)
    assert r.cluster_authorized_operations == all_but(RT.CLUSTER, Op.ALTER)
    r = call(mallory, ApiKey.METADATA, 10, topics=[T(name="open")])
    assert (r.topics[0].topic_authorized_operations, r.cluster_authorized_operations) == (OMITTED, OMITTED)
    table.denied.add((Op.DESCRIBE, RT.CLUSTER, CLUSTER_NAME))
    r = call(mallory, ApiKey.METADATA, 10, topics=[], include_cluster_authorized_operations=True)
    assert r.cluster_authorized_operations == 0  # without DESCRIBE on the cluster: none told


def test_describe_cluster_authorized_operations(table, mallory):
    table.denied.add((Op.ALTER_CONFIGS, RT.CLUSTER, CLUSTER_NAME))
    r = call(mallory, ApiKey.DESCRIBE_CLUSTER, 1, include_cluster_authorized_operations=True)
    assert r.error_code == E.NONE
    assert r.cluster_authorized_operations == all_but(RT.CLUSTER, Op.ALTER_CONFIGS)
    table.denied.add((Op.DESCRIBE, RT.CLUSTER, CLUSTER_NAME))
    r = call(mallory, ApiKey.DESCRIBE_CLUSTER, 1, include_cluster_authorized_operations=True)
    assert (r.error_code, r.cluster_authorized_operations) == (E.NONE, 0)
    r = call(mallory, ApiKey.DESCRIBE_CLUSTER, 1, include_cluster_authorized_operations=False)
    assert r.cluster_authorized_operations == OMITTED


def test_describe_topic_partitions(table, mallory):
    table.denied |= {(Op.DESCRIBE, RT.TOPIC, "secret"), (Op.DELETE, RT.TOPIC, "open")}
    r = call(mallory, ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, topics=[], response_partition_limit=100)
    by_name = {t.name: t for t in r.topics}
    assert "secret" not in by_name
    assert by_name["open"].topic_authorized_operations == all_but(RT.TOPIC, Op.DELETE)
    T = struct(ApiKey.DESCRIBE_TOPIC_PARTITIONS, "topics")
    r = call(mallory, ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, topics=[T(name="open"), T(name="secret")],
             response_partition_limit=100)
    by_name = {t.name: t for t in r.topics}
    assert by_name["open"].error_code == E.NONE and len(by_name["open"].partitions) == 2
    assert (by_name["secret"].error_code, by_name["secret"].topic_id) == (E.TOPIC_AUTHORIZATION_FAILED, ZERO)


# --- topics and configs ------------------------------------------------------------------------


def test_create_topics_needs_create_on_the_cluster_or_the_topic(broker, table, mallory):
    table.denied |= {(Op.CREATE, RT.CLUSTER, CLUSTER_NAME), (Op.CREATE, RT.TOPIC, "nope"),
                     (Op.DESCRIBE_CONFIGS, RT.TOPIC, "yes")}
    T = struct(ApiKey.CREATE_TOPICS, "topics")
    r = call(mallory, ApiKey.CREATE_TOPICS, 7, timeout_ms=10000, topics=[
        T(name=n, num_partitions=1, replication_factor=1) for n in ("nope", "yes")])
    by_name = {t.name: t for t in r.topics}
    assert by_name["nope"].error_code == E.TOPIC_AUTHORIZATION_FAILED
    assert by_name["yes"].error_code == E.NONE
    # Created, but its configs may not be described: not told (Kafka's TopicConfigErrorCode).
    yes = by_name["yes"]
    assert (yes.topic_config_error_code, yes.configs) == (E.TOPIC_AUTHORIZATION_FAILED, None)
    assert "nope" not in broker.metadata_cache.snapshot.topics


def test_delete_topics_and_create_partitions(broker, table, mallory):
    table.denied |= {(Op.DELETE, RT.TOPIC, "secret"), (Op.ALTER, RT.TOPIC, "secret")}
    secret_id = broker.metadata_cache.snapshot.topics["secret"].topic_id
    T = struct(ApiKey.DELETE_TOPICS, "topics")
    r = call(mallory, ApiKey.DELETE_TOPICS, 6, timeout_ms=5000, topics=[T(name=None, topic_id=secret_id)])
    assert [(t.error_code, t.topic_id) for t in r.responses] == [(E.TOPIC_AUTHORIZATION_FAILED, secret_id)]
    r = call(mallory, ApiKey.DELETE_TOPICS, 5, timeout_ms=5000, topic_names=["secret"])
    assert [(t.name, t.error_code) for t in r.responses] == [("secret", E.TOPIC_AUTHORIZATION_FAILED)]
    T = struct(ApiKey.CREATE_PARTITIONS, "topics")
    r = call(mallory, ApiKey.CREATE_PARTITIONS, 3, timeout_ms=5000, topics=[T(name="secret", count=5)])
    assert [(t.name, t.error_code) for t in r.results] == [("secret", E.TOPIC_AUTHORIZATION_FAILED)]
    assert "secret" in broker.metadata_cache.snapshot.topics
    assert len(broker.metadata_cache.snapshot.topics["secret"].partitions) == 2


def test_configs_are_guarded_by_their_resource(table, mallory):
    table.denied |= {(Op.DESCRIBE_CONFIGS, RT.CLUSTER, CLUSTER_NAME),
                     (Op.DESCRIBE_CONFIGS, RT.TOPIC, "secret"),
                     (Op.ALTER_CONFIGS, RT.TOPIC, "secret"), (Op.ALTER_CONFIGS, RT.CLUSTER, CLUSTER_NAME)}
    R = struct(ApiKey.DESCRIBE_CONFIGS, "resources")
    r = call(mallory, ApiKey.DESCRIBE_CONFIGS, 4, resources=[
        R(resource_type=2, resource_name="open", configuration_keys=["cleanup.policy"]),
        R(resource_type=2, resource_name="secret", configuration_keys=None),
        R(resource_type=4, resource_name="1", configuration_keys=None)])
    codes = {(x.resource_type, x.resource_name): x.error_code for x in r.results}
    assert codes == {(2, "open"): E.NONE, (2, "secret"): E.TOPIC_AUTHORIZATION_FAILED,
                     (4, "1"): E.CLUSTER_AUTHORIZATION_FAILED}
    R = struct(ApiKey.INCREMENTAL_ALTER_CONFIGS, "resources")
    C = R["configs"]
    r = call(mallory, ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, resources=[
        R(resource_type=2, resource_name="secret",
          configs=[C(name="retention.ms", config_operation=0, value="1")]),
        R(resource_type=4, resource_name="",
          configs=[C(name="log.cleaner.threads", config_operation=0, value="2")])])
    assert {(x.resource_type, x.error_code) for x in r.responses} == {
        (2, E.TOPIC_AUTHORIZATION_FAILED), (4, E.CLUSTER_AUTHORIZATION_FAILED)}
    R = struct(ApiKey.ALTER_CONFIGS, "resources")
    r = call(mallory, ApiKey.ALTER_CONFIGS, 2,
             resources=[R(resource_type=2, resource_name="secret", configs=[])])
    assert [x.error_code for x in r.responses] == [E.TOPIC_AUTHORIZATION_FAILED]
    r = call(mallory, ApiKey.LIST_CONFIG_RESOURCES, 1, resource_types=[])
    assert r.error_code == E.CLUSTER_AUTHORIZATION_FAILED


def test_the_controllers_config_push_needs_cluster_action(broker, table):
    """AlterConfigs from the controller's client id on the privileged listener is a push: it
    needs CLUSTER_ACTION (the broker's own principal has it)."""
    table.subjects = {"controller-1"}
    table.denied.add((Op.CLUSTER_ACTION, RT.CLUSTER, CLUSTER_NAME))
    R = struct(ApiKey.ALTER_CONFIGS, "resources")
    with Client("127.0.0.1", broker.bound_port("INTERNAL"), client_id="controller-1") as c:
        r = call(c, ApiKey.ALTER_CONFIGS, 2, resources=[R(resource_type=2, resource_name="open", configs=[])])
    assert [(x.resource_name, x.error_code) for x in r.responses] == [
        ("open", E.CLUSTER_AUTHORIZATION_FAILED)]


# --- cluster administration --------------------------------------------------------------------


def test_cluster_administration_needs_alter_or_describe_on_the_cluster(table, mallory):
    table.denied |= {(Op.ALTER, RT.CLUSTER, CLUSTER_NAME), (Op.DESCRIBE, RT.CLUSTER, CLUSTER_NAME)}
    D = struct(ApiKey.ALTER_REPLICA_LOG_DIRS, "dirs")
    r = call(mallory, ApiKey.ALTER_REPLICA_LOG_DIRS, 2, dirs=[
        D(path="/elsewhere", topics=[D["topics"](name="open", partitions=[0, 1])])])
    assert [(t.topic_name, [p.error_code for p in t.partitions]) for t in r.results] == [
        ("open", [E.CLUSTER_AUTHORIZATION_FAILED] * 2)]
    r = call(mallory, ApiKey.DESCRIBE_LOG_DIRS, 4, topics=None)
    assert (r.error_code, r.results) == (E.CLUSTER_AUTHORIZATION_FAILED, [])
    T = struct(ApiKey.ELECT_LEADERS, "topic_partitions")
    r = call(mallory, ApiKey.ELECT_LEADERS, 2, election_type=0, timeout_ms=5000,
             topic_partitions=[T(topic="open", partitions=[0])])
    assert r.error_code == E.CLUSTER_AUTHORIZATION_FAILED
    assert [p.error_code for t in r.replica_election_results for p in t.partition_result] == [
        E.CLUSTER_AUTHORIZATION_FAILED]
    r = call(mallory, ApiKey.ALTER_PARTITION_REASSIGNMENTS, 0, topics=[])
    assert r.error_code == E.CLUSTER_AUTHORIZATION_FAILED
    r = call(mallory, ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, topics=None)
    assert r.error_code == E.CLUSTER_AUTHORIZATION_FAILED


def test_client_quotas_need_describe_or_alter_configs_on_the_cluster(table, mallory):
    table.denied |= {(Op.DESCRIBE_CONFIGS, RT.CLUSTER, CLUSTER_NAME),
                     (Op.ALTER_CONFIGS, RT.CLUSTER, CLUSTER_NAME)}
    r = call(mallory, ApiKey.DESCRIBE_CLIENT_QUOTAS, 1, components=[], strict=False)
    assert r.error_code == E.CLUSTER_AUTHORIZATION_FAILED
    Q = struct(ApiKey.ALTER_CLIENT_QUOTAS, "entries")
    r = call(mallory, ApiKey.ALTER_CLIENT_QUOTAS, 1, validate_only=False, entries=[
        Q(entity=[Q["entity"](entity_type="user", entity_name="bob")],
          ops=[Q["ops"](key="producer_byte_rate", value=1024.0, remove=False)])])
    assert [(e.error_code, [(x.entity_type, x.entity_name) for x in e.entity]) for e in r.entries] == [
        (E.CLUSTER_AUTHORIZATION_FAILED, [("user", "bob")])]
    table.denied.clear()
    r = call(mallory, ApiKey.DESCRIBE_CLIENT_QUOTAS, 1, components=[], strict=False)
    assert r.error_code == E.NONE


def test_cluster_administration_allowed(table, mallory):
    table.denied.add((Op.ALTER, RT.TOPIC, "*"))  # not what these ask
    r = call(mallory, ApiKey.DESCRIBE_LOG_DIRS, 4, topics=None)
    assert r.error_code == E.NONE and r.results
    r = call(mallory, ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, topics=None)
    assert r.error_code == E.NONE


@pytest.mark.parametrize(("key", "version"), [
    (ApiKey.LEADER_AND_ISR, 7), (ApiKey.STOP_REPLICA, 4), (ApiKey.UPDATE_METADATA, 8),
    (ApiKey.BROKER_REGISTRATION, 4), (ApiKey.BROKER_HEARTBEAT, 1), (ApiKey.ALTER_PARTITION, 3),
    (ApiKey.ALLOCATE_PRODUCER_IDS, 0)])
def test_the_apis_of_other_nodes_need_cluster_action(broker, table, key, version):
    table.denied.add((Op.CLUSTER_ACTION, RT.CLUSTER, CLUSTER_NAME))
    with Client("127.0.0.1", broker.bound_port("INTERNAL"), client_id="mallory") as c:
        r = call(c, key, version)
    assert r.error_code == E.CLUSTER_AUTHORIZATION_FAILED


# --- groups ----------------------------------------------------------------------------------------


def _coordinator(c: Client, key: str, key_type: int = 0) -> Any:
    return call(c, ApiKey.FIND_COORDINATOR, 3, key=key, key_type=key_type)


def test_find_coordinator(table, mallory):
    table.denied |= {(Op.DESCRIBE, RT.GROUP, "g-secret"), (Op.DESCRIBE, RT.TRANSACTIONAL_ID, "tx-secret")}
    r = _coordinator(mallory, "g-secret")
    assert (r.error_code, r.node_id, r.host, r.port) == (E.GROUP_AUTHORIZATION_FAILED, -1, "", -1)
    assert _coordinator(mallory, "tx-secret", 1).error_code == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    assert wait_for(lambda: _coordinator(mallory, "g-open").error_code == E.NONE, timeout=10)
    r = call(mallory, ApiKey.FIND_COORDINATOR, 4, key_type=0, coordinator_keys=["g-open", "g-secret"])
    assert {x.key: x.error_code for x in r.coordinators} == {"g-open": E.NONE,
                                                             "g-secret": E.GROUP_AUTHORIZATION_FAILED}


def test_the_group_apis_need_read_on_the_group(broker, table, mallory):
    table.denied.add((Op.READ, RT.GROUP, "g-secret"))
    P = struct(ApiKey.JOIN_GROUP, "protocols")
    r = call(mallory, ApiKey.JOIN_GROUP, 7, group_id="g-secret", session_timeout_ms=10000,
             rebalance_timeout_ms=10000, member_id="", protocol_type="consumer",
             protocols=[P(name="range", metadata=b"")])
    assert (r.error_code, r.generation_id, r.member_id, r.members) == (
        E.GROUP_AUTHORIZATION_FAILED, -1, "", [])
    r = call(mallory, ApiKey.SYNC_GROUP, 5, group_id="g-secret", generation_id=1, member_id="m",
             protocol_type="consumer", protocol_name="range", assignments=[])
    assert r.error_code == E.GROUP_AUTHORIZATION_FAILED
    r = call(mallory, ApiKey.HEARTBEAT, 4, group_id="g-secret", generation_id=1, member_id="m")
    assert r.error_code == E.GROUP_AUTHORIZATION_FAILED
    r = call(mallory, ApiKey.LEAVE_GROUP, 4, group_id="g-secret",
             members=[struct(ApiKey.LEAVE_GROUP, "members")(member_id="m")])
    assert r.error_code == E.GROUP_AUTHORIZATION_FAILED
    r = call(mallory, ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, group_id="g-secret", member_id="m", member_epoch=0,
             rebalance_timeout_ms=1000, subscribed_topic_names=["open"], topic_partitions=[])
    assert r.error_code == E.GROUP_AUTHORIZATION_FAILED
    table.denied.add((Op.DESCRIBE, RT.GROUP, "g-secret"))  # ConsumerGroupDescribe needs DESCRIBE
    r = call(mallory, ApiKey.CONSUMER_GROUP_DESCRIBE, 1, group_ids=["g-secret", "g-open"])
    assert {g.group_id: g.error_code for g in r.groups} == {
        "g-secret": E.GROUP_AUTHORIZATION_FAILED, "g-open": E.GROUP_ID_NOT_FOUND}
    T = struct(ApiKey.OFFSET_COMMIT, "topics")
    r = call(mallory, ApiKey.OFFSET_COMMIT, 8, group_id="g-secret", generation_id_or_member_epoch=-1,
             member_id="",
             topics=[T(name="open", partitions=[T["partitions"](partition_index=0, committed_offset=1)])])
    assert [p.error_code for t in r.topics for p in t.partitions] == [E.GROUP_AUTHORIZATION_FAILED]
    # The allowed group joins (a member id first, as Kafka 2.2+ answers v4+).
    r = call(mallory, ApiKey.JOIN_GROUP, 7, group_id="g-open", session_timeout_ms=10000,
             rebalance_timeout_ms=10000, member_id="", protocol_type="consumer",
             protocols=[P(name="range", metadata=b"")])
    assert r.error_code == E.MEMBER_ID_REQUIRED


def test_offsets_need_read_on_the_topic_and_describe_to_fetch(table, mallory):
    table.denied |= {(Op.READ, RT.TOPIC, "secret"), (Op.DESCRIBE, RT.TOPIC, "secret"),
                     (Op.DESCRIBE, RT.GROUP, "g-hidden")}
    assert wait_for(lambda: _coordinator(mallory, "g-offsets").error_code == E.NONE, timeout=10)
    T = struct(ApiKey.OFFSET_COMMIT, "topics")
    r = call(mallory, ApiKey.OFFSET_COMMIT, 8, group_id="g-offsets", generation_id_or_member_epoch=-1,
             member_id="", topics=[
                 T(name=n, partitions=[T["partitions"](partition_index=0, committed_offset=1)])
                 for n in ("open", "secret")])
    assert {t.name: t.partitions[0].error_code for t in r.topics} == {
        "open": E.NONE, "secret": E.TOPIC_AUTHORIZATION_FAILED}
    F = struct(ApiKey.OFFSET_FETCH, "topics")
    r = call(mallory, ApiKey.OFFSET_FETCH, 7, group_id="g-offsets",
             topics=[F(name=n, partition_indexes=[0]) for n in ("open", "secret")])
    assert {t.name: (t.partitions[0].error_code, t.partitions[0].committed_offset) for t in r.topics} == {
        "open": (E.NONE, 1), "secret": (E.TOPIC_AUTHORIZATION_FAILED, -1)}
    r = call(mallory, ApiKey.OFFSET_FETCH, 7, group_id="g-offsets", topics=None)
    assert [t.name for t in r.topics] == ["open"]
    r = call(mallory, ApiKey.OFFSET_FETCH, 7, group_id="g-hidden", topics=None)
    assert r.error_code == E.GROUP_AUTHORIZATION_FAILED
    G = struct(ApiKey.OFFSET_FETCH, "groups")
    r = call(mallory, ApiKey.OFFSET_FETCH, 8, groups=[G(group_id="g-offsets", topics=None),
                                                      G(group_id="g-hidden", topics=None)])
    by_group = {g.group_id: g for g in r.groups}
    assert by_group["g-hidden"].error_code == E.GROUP_AUTHORIZATION_FAILED
    offsets = by_group["g-offsets"]
    assert (offsets.error_code, [t.name for t in offsets.topics]) == (E.NONE, ["open"])
    # OffsetDelete: DELETE on the group, READ on each topic.
    T = struct(ApiKey.OFFSET_DELETE, "topics")
    r = call(mallory, ApiKey.OFFSET_DELETE, 0, group_id="g-offsets", topics=[
        T(name="secret", partitions=[T["partitions"](partition_index=0)])])
    assert [p.error_code for t in r.topics for p in t.partitions] == [E.TOPIC_AUTHORIZATION_FAILED]
    table.denied.add((Op.DELETE, RT.GROUP, "g-offsets"))
    r = call(mallory, ApiKey.OFFSET_DELETE, 0, group_id="g-offsets", topics=[])
    assert r.error_code == E.GROUP_AUTHORIZATION_FAILED


def test_describe_list_and_delete_groups(table, mallory):
    assert wait_for(lambda: _coordinator(mallory, "g-listed").error_code == E.NONE, timeout=10)
    T = struct(ApiKey.OFFSET_COMMIT, "topics")
    for g in ("g-listed", "g-unlisted"):
        r = call(mallory, ApiKey.OFFSET_COMMIT, 8, group_id=g, generation_id_or_member_epoch=-1, member_id="",
                 topics=[T(name="open", partitions=[T["partitions"](partition_index=0, committed_offset=1)])])
        assert r.topics[0].partitions[0].error_code == E.NONE
    table.denied |= {(Op.DESCRIBE, RT.GROUP, "g-unlisted"), (Op.DELETE, RT.GROUP, "g-unlisted"),
                     (Op.DELETE, RT.GROUP, "g-listed")}
    r = call(mallory, ApiKey.DESCRIBE_GROUPS, 5, groups=["g-listed", "g-unlisted"],
             include_authorized_operations=True)
    by_id = {g.group_id: g for g in r.groups}
    assert by_id["g-unlisted"].error_code == E.GROUP_AUTHORIZATION_FAILED
    assert by_id["g-listed"].error_code == E.NONE
    assert by_id["g-listed"].authorized_operations == all_but(RT.GROUP, Op.DELETE)
    # ListGroups: DESCRIBE on the cluster shows every group; without it, those that may be described.
    assert {"g-listed", "g-unlisted"} <= {g.group_id for g in call(mallory, ApiKey.LIST_GROUPS, 4).groups}
    table.denied.add((Op.DESCRIBE, RT.CLUSTER, CLUSTER_NAME))
    listed = {g.group_id for g in call(mallory, ApiKey.LIST_GROUPS, 4).groups}
    assert "g-listed" in listed and "g-unlisted" not in listed
    r = call(mallory, ApiKey.DELETE_GROUPS, 2, groups_names=["g-unlisted"])
    assert [(x.group_id, x.error_code) for x in r.results] == [("g-unlisted", E.GROUP_AUTHORIZATION_FAILED)]


# --- producers and transactions --------------------------------------------------------------------


def test_init_producer_id(table, mallory):
    r = call(mallory, ApiKey.INIT_PRODUCER_ID, 4, transactional_id=None, transaction_timeout_ms=60000)
    assert r.error_code == E.NONE and r.producer_id >= 0
    # No IDEMPOTENT_WRITE, but WRITE on some topic: allowed (Kafka 3.0+).
    table.denied.add((Op.IDEMPOTENT_WRITE, RT.CLUSTER, CLUSTER_NAME))
    r = call(mallory, ApiKey.INIT_PRODUCER_ID, 4, transactional_id=None, transaction_timeout_ms=60000)
    assert r.error_code == E.NONE
    table.denied.add((Op.WRITE, RT.TOPIC, "*"))
    r = call(mallory, ApiKey.INIT_PRODUCER_ID, 4, transactional_id=None, transaction_timeout_ms=60000)
    assert (r.error_code, r.producer_id) == (E.CLUSTER_AUTHORIZATION_FAILED, -1)
    table.denied.add((Op.WRITE, RT.TRANSACTIONAL_ID, "tx"))
    r = call(mallory, ApiKey.INIT_PRODUCER_ID, 4, transactional_id="tx", transaction_timeout_ms=60000)
    assert r.error_code == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def test_the_transaction_apis_need_write_on_the_transactional_id(table, mallory):
    table.denied |= {(Op.WRITE, RT.TRANSACTIONAL_ID, "tx"), (Op.READ, RT.GROUP, "g-secret"),
                     (Op.WRITE, RT.TOPIC, "secret"), (Op.READ, RT.TOPIC, "secret")}
    T = struct(ApiKey.ADD_PARTITIONS_TO_TXN, "v3_and_below_topics")
    r = call(mallory, ApiKey.ADD_PARTITIONS_TO_TXN, 3, v3_and_below_transactional_id="tx",
             v3_and_below_producer_id=1, v3_and_below_producer_epoch=0,
             v3_and_below_topics=[T(name="open", partitions=[0])])
    results = r.results_by_topic_v3_and_below
    assert [p.partition_error_code for t in results for p in t.results_by_partition] == [
        E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED]
    r = call(mallory, ApiKey.ADD_PARTITIONS_TO_TXN, 3, v3_and_below_transactional_id="tx-open",
             v3_and_below_producer_id=1, v3_and_below_producer_epoch=0,
             v3_and_below_topics=[T(name="open", partitions=[0]), T(name="secret", partitions=[0])])
    results = r.results_by_topic_v3_and_below
    assert {t.name: t.results_by_partition[0].partition_error_code for t in results} == {
        "open": E.OPERATION_NOT_ATTEMPTED, "secret": E.TOPIC_AUTHORIZATION_FAILED}
    r = call(mallory, ApiKey.ADD_PARTITIONS_TO_TXN, 4, transactions=[])
    assert r.error_code == E.NONE
    table.denied.add((Op.CLUSTER_ACTION, RT.CLUSTER, CLUSTER_NAME))
    r = call(mallory, ApiKey.ADD_PARTITIONS_TO_TXN, 4, transactions=[])
    assert r.error_code == E.CLUSTER_AUTHORIZATION_FAILED
    r = call(mallory, ApiKey.ADD_OFFSETS_TO_TXN, 3, transactional_id="tx", producer_id=1, producer_epoch=0,
             group_id="g")
    assert r.error_code == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    r = call(mallory, ApiKey.ADD_OFFSETS_TO_TXN, 3, transactional_id="tx-open", producer_id=1,
             producer_epoch=0, group_id="g-secret")
    assert r.error_code == E.GROUP_AUTHORIZATION_FAILED
    r = call(mallory, ApiKey.END_TXN, 3, transactional_id="tx", producer_id=1, producer_epoch=0,
             committed=True)
    assert r.error_code == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    T = struct(ApiKey.TXN_OFFSET_COMMIT, "topics")
    topics = [T(name="open", partitions=[T["partitions"](partition_index=0, committed_offset=1)])]
    r = call(mallory, ApiKey.TXN_OFFSET_COMMIT, 3, transactional_id="tx", group_id="g", producer_id=1,
             producer_epoch=0, topics=topics)
    assert [p.error_code for t in r.topics for p in t.partitions] == [E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED]
    r = call(mallory, ApiKey.TXN_OFFSET_COMMIT, 3, transactional_id="tx-open", group_id="g-secret",
             producer_id=1, producer_epoch=0, topics=topics)
    assert [p.error_code for t in r.topics for p in t.partitions] == [E.GROUP_AUTHORIZATION_FAILED]
    M = struct(ApiKey.WRITE_TXN_MARKERS, "markers")
    table.denied.add((Op.ALTER, RT.CLUSTER, CLUSTER_NAME))
    r = call(mallory, ApiKey.WRITE_TXN_MARKERS, 1, markers=[M(
        producer_id=5, producer_epoch=0, transaction_result=True, coordinator_epoch=0,
        topics=[M["topics"](name="open", partition_indexes=[0, 1])])])
    assert [(m.producer_id, [p.error_code for t in m.topics for p in t.partitions]) for m in r.markers] == [
        (5, [E.CLUSTER_AUTHORIZATION_FAILED] * 2)]


def test_describe_and_list_transactions(table, mallory):
    table.denied.add((Op.DESCRIBE, RT.TRANSACTIONAL_ID, "tx-secret"))
    r = call(mallory, ApiKey.DESCRIBE_TRANSACTIONS, 0, transactional_ids=["tx-secret", "tx-unknown"])
    codes = {s.transactional_id: s.error_code for s in r.transaction_states}
    assert codes["tx-secret"] == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    assert codes["tx-unknown"] != E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    r = call(mallory, ApiKey.LIST_TRANSACTIONS, 1)
    assert r.error_code == E.NONE
    assert "tx-secret" not in {s.transactional_id for s in r.transaction_states}


def test_without_an_authorizer_everything_is_allowed(broker, mallory):
    assert broker.apis.authorizer is ALLOW_ALL
    r = call(mallory, ApiKey.DESCRIBE_CLUSTER, 1, include_cluster_authorized_operations=True)
    assert r.cluster_authorized_operations == operations_bits(OPERATIONS_OF[RT.CLUSTER])
    r = call(mallory, ApiKey.METADATA, 12, topics=None)
    assert {"open", "secret"} <= {t.name for t in r.topics}


# --- share groups ------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", [ApiKey.INITIALIZE_SHARE_GROUP_STATE, ApiKey.READ_SHARE_GROUP_STATE,
                                 ApiKey.WRITE_SHARE_GROUP_STATE, ApiKey.DELETE_SHARE_GROUP_STATE,
                                 ApiKey.READ_SHARE_GROUP_STATE_SUMMARY])
def test_the_share_coordinators_apis_need_cluster_action(broker, table, key):
    table.denied.add((Op.CLUSTER_ACTION, RT.CLUSTER, CLUSTER_NAME))
    T = struct(key, "topics")
    tid = uuid.uuid4()
    with Client("127.0.0.1", broker.bound_port("INTERNAL"), client_id="mallory") as c:
        r = call(c, key, 0, group_id="g", topics=[T(topic_id=tid, partitions=[T["partitions"](partition=3)])])
    assert [(t.topic_id, p.partition, p.error_code) for t in r.results for p in t.partitions] == [
        (tid, 3, E.CLUSTER_AUTHORIZATION_FAILED)]


def test_share_group_offsets_need_group_and_topic_rights(table, mallory):
    table.denied |= {(Op.DESCRIBE, RT.GROUP, "g-secret"), (Op.DESCRIBE, RT.TOPIC, "secret"),
                     (Op.READ, RT.GROUP, "g-secret"), (Op.READ, RT.TOPIC, "secret"),
                     (Op.DELETE, RT.GROUP, "g-secret")}
    G = struct(ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, "groups")
    r = call(mallory, ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, 0, groups=[
        G(group_id="g-secret", topics=None),
        G(group_id="g-open", topics=[G["topics"](topic_name="secret", partitions=[0, 1])])])
    by_group = {g.group_id: g for g in r.groups}
    assert by_group["g-secret"].error_code == E.GROUP_AUTHORIZATION_FAILED
    # g-open is not a share group (none exist before the merge), its denied topic still put back
    assert [(t.topic_name, [p.error_code for p in t.partitions]) for t in by_group["g-open"].topics] == [
        ("secret", [E.TOPIC_AUTHORIZATION_FAILED] * 2)]
    T = struct(ApiKey.ALTER_SHARE_GROUP_OFFSETS, "topics")
    r = call(mallory, ApiKey.ALTER_SHARE_GROUP_OFFSETS, 0, group_id="g-secret", topics=[])
    assert r.error_code == E.GROUP_AUTHORIZATION_FAILED
    r = call(mallory, ApiKey.ALTER_SHARE_GROUP_OFFSETS, 0, group_id="g-open", topics=[
        T(topic_name="secret", partitions=[T["partitions"](partition_index=0, start_offset=1)])])
    assert [(t.topic_name, t.partitions[0].error_code) for t in r.responses] == [
        ("secret", E.TOPIC_AUTHORIZATION_FAILED)]
    D = struct(ApiKey.DELETE_SHARE_GROUP_OFFSETS, "topics")
    r = call(mallory, ApiKey.DELETE_SHARE_GROUP_OFFSETS, 0, group_id="g-secret",
             topics=[D(topic_name="open")])
    assert r.error_code == E.GROUP_AUTHORIZATION_FAILED
    r = call(mallory, ApiKey.DELETE_SHARE_GROUP_OFFSETS, 0, group_id="g-open",
             topics=[D(topic_name="secret")])
    assert [(t.topic_name, t.error_code) for t in r.responses] == [("secret", E.TOPIC_AUTHORIZATION_FAILED)]
