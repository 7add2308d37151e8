"""ApiVersions is one Kafka release's (issue 28): the ranges a Kafka 4.1.1 broker advertises, for
every api served, so that a client inferring the broker's version from them (kafka-python) infers
4.1; the versions new to that release served with their semantics; the versions it removed
(KIP-896) refused as Kafka 4.x refuses them, by closing the connection."""

from __future__ import annotations

import uuid

import pytest

from kafkalite.protocol import ApiKey
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import (
    create_topics,
    delete_topics,
    describe_configs,
    describe_groups,
    describe_log_dirs,
    fetch,
    find_coordinator,
    list_offsets,
    metadata,
    offset_commit,
    offset_fetch,
    offset_for_leader_epoch,
    produce,
    write_txn_markers,
)
from kafkalite.server.apis import KAFKA_RELEASE, SERVED, apis_for, render_markdown
from tests.support.brokers import connect, running_broker
from tests.support.raw_requests import batch, create_topic, fetch_request, produce_request
from tests.support.wait import wait_for

# What Apache Kafka 4.1.1's brokers advertise (validVersions of its message specs at tag 4.1.1,
# less a last version marked latestVersionUnstable; Produce from 0, KAFKA-18659), for the apis
# kafkalite serves and those being added (AlterConfigs, AlterReplicaLogDirs,
# IncrementalAlterConfigs, Alter/ListPartitionReassignments, ListConfigResources).
KAFKA_4_1_1 = {
    0: (0, 13), 1: (4, 18), 2: (1, 10), 3: (0, 13), 8: (2, 9), 9: (1, 9), 10: (0, 6), 11: (0, 9),
    12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 6), 16: (0, 5), 17: (0, 1), 18: (0, 4), 19: (2, 7),
    20: (1, 6), 21: (0, 2), 22: (0, 5), 23: (2, 4), 24: (0, 5), 25: (0, 4), 26: (0, 5), 27: (1, 1),
    28: (0, 5), 29: (1, 3), 30: (1, 3), 31: (1, 3), 32: (1, 4), 33: (0, 2), 34: (1, 2), 35: (1, 4),
    36: (0, 2), 37: (0, 3), 42: (0, 2),
    43: (0, 2), 44: (0, 1), 45: (0, 1), 46: (0, 0), 47: (0, 0), 48: (0, 1), 49: (0, 1), 50: (0, 0),
    51: (0, 0), 52: (0, 2), 53: (0, 1), 54: (0, 1), 55: (0, 2), 56: (2, 3), 59: (0, 1), 60: (0, 2),
    61: (0, 0),
    62: (0, 4), 63: (0, 1), 65: (0, 0), 66: (0, 2), 67: (0, 0), 68: (0, 1), 69: (0, 1), 74: (0, 1),
    75: (0, 0),
    # Share groups (KIP-932): the client apis at v1 in 4.1.1 (v0 was 4.0's early access).
    76: (1, 1), 77: (1, 1), 78: (1, 1), 79: (1, 1),
    # The share coordinator's and the share groups' offsets apis (KIP-932), v0 in 4.1.1.
    83: (0, 0), 84: (0, 0), 85: (0, 0), 86: (0, 0), 87: (0, 0), 90: (0, 0), 91: (0, 0), 92: (0, 0),
}
# ZooKeeper mode's controller requests: not Kafka 4.x apis, kafkalite's controller still sends them.
NOT_IN_4_X = {ApiKey.LEADER_AND_ISR, ApiKey.STOP_REPLICA, ApiKey.UPDATE_METADATA}


def test_every_api_served_advertises_the_release_range():
    assert KAFKA_RELEASE == "4.1.1"
    for s in SERVED:
        if s.key in NOT_IN_4_X:
            continue
        assert (s.advertised.low, s.advertised.high) == KAFKA_4_1_1[s.key], s.name
        # Served = advertised, but for Produce v0-2 (advertised, not served, as Kafka 4.x).
        expected_low = 3 if s.key == ApiKey.PRODUCE else s.advertised.low
        assert (s.versions.low, s.versions.high) == (expected_low, s.advertised.high), s.name


def test_the_docs_say_the_release():
    assert render_markdown().startswith("ApiVersions advertises Apache Kafka 4.1.1's version ranges")


@pytest.mark.parametrize(("privileged", "controller"), [(False, False), (True, False), (True, True)])
def test_kafka_python_infers_the_release_from_every_listener(privileged, controller):
    from kafka.protocol.broker_version_data import infer_broker_version_from_api_versions

    table = apis_for("PLAINTEXT", privileged, controller, frozenset(), advertised=True)
    assert infer_broker_version_from_api_versions({k: (v.low, v.high) for k, v in table.items()}) == (4, 1)


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with running_broker(tmp_path_factory.mktemp("release"), offsets_topic_num_partitions="1") as b:
        with connect(b) as c:
            create_topic(c, "r", 1)
            R = find_coordinator.REQUEST

            def group_coordinator_ready() -> bool:
                r = c.call(10, 4, R(key_type=0, coordinator_keys=["warm-up"]))
                return r.coordinators[0].error_code == E.NONE

            assert wait_for(group_coordinator_ready, timeout=20, interval=0.05)
        yield b


@pytest.mark.integration
def test_kafka_python_clients_infer_the_release(broker):
    from kafka import KafkaAdminClient
    from kafka.net.compat import KafkaNetClient  # kafka-python 3's KafkaClient

    bootstrap = f"127.0.0.1:{broker.bound_port('PLAINTEXT')}"
    client = KafkaNetClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
    try:
        assert client.check_version(timeout_ms=10000) == (4, 1)
        assert client.check_version(node_id=1, timeout_ms=10000) == (4, 1)
    finally:
        client.close()
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
    try:
        data = admin.get_broker_version_data(1)
        assert data.broker_version == (4, 1)
        assert {k: tuple(v) for k, v in data.api_versions.items()} == {
            k: v for k, v in KAFKA_4_1_1.items() if k in apis_for("PLAINTEXT", False)}
    finally:
        admin.close()


def _topic_id(broker, name):
    return broker.metadata_cache.snapshot.topics[name].topic_id


@pytest.mark.integration
def test_produce_v13_names_topics_by_id(broker):
    R = produce.REQUEST
    known, unknown = _topic_id(broker, "r"), uuid.uuid4()

    def request(topic_id):
        partition = R["topic_data"]["partition_data"](index=0, records=batch([b"v13"]))
        return R(transactional_id=None, acks=1, timeout_ms=10000,
                 topic_data=[R["topic_data"](topic_id=topic_id, partition_data=[partition])])

    with connect(broker) as c:
        ok = c.call(0, 13, request(known))
        refused = c.call(0, 13, request(unknown))
        v12 = c.call(0, 12, produce_request({("r", 0): batch([b"v12"])}))
    [t] = ok.responses
    assert t.topic_id == known and [(p.index, p.error_code) for p in t.partition_responses] == [(0, E.NONE)]
    [t] = refused.responses
    assert t.topic_id == unknown
    assert [(p.index, p.error_code) for p in t.partition_responses] == [(0, E.UNKNOWN_TOPIC_ID)]
    [t] = v12.responses
    assert (t.name, t.partition_responses[0].error_code) == ("r", E.NONE)
    assert t.partition_responses[0].base_offset == ok.responses[0].partition_responses[0].base_offset + 1


@pytest.mark.integration
def test_fetch_v18_list_offsets_v10_and_metadata_v13(broker):
    with connect(broker) as c:
        c.call(0, 9, produce_request({("r", 0): batch([b"x"])}))
        req = fetch_request([("r", 0, 0)])
        topic_id = _topic_id(broker, "r")
        req.topics[0].topic_id = topic_id
        req.topics[0].partitions[0].high_watermark = 1  # the follower's (KIP-1166): read, not used
        got = c.call(1, 18, req)
        [t] = got.responses
        assert t.topic_id == topic_id and t.partitions[0].error_code == E.NONE and t.partitions[0].records
        R = list_offsets.REQUEST
        lo = c.call(2, 10, R(replica_id=-1, isolation_level=0, timeout_ms=1000, topics=[R["topics"](
            name="r", partitions=[R["topics"]["partitions"](partition_index=0, timestamp=-1)])]))
        assert lo.topics[0].partitions[0].error_code == E.NONE
        assert lo.topics[0].partitions[0].offset == t.partitions[0].high_watermark
        md = c.call(3, 13, metadata.REQUEST(topics=None))
        assert md.error_code == E.NONE and "r" in {x.name for x in md.topics}


@pytest.mark.integration
def test_describe_groups_v6_says_a_group_is_not_found(broker):
    with connect(broker) as c:
        v6 = c.call(15, 6, describe_groups.REQUEST(groups=["no-such-group"]))
        v5 = c.call(15, 5, describe_groups.REQUEST(groups=["no-such-group"]))
    [g] = v6.groups
    assert (g.error_code, g.error_message, g.group_state) == (
        E.GROUP_ID_NOT_FOUND, "Group no-such-group not found.", "Dead")
    [g] = v5.groups
    assert (g.error_code, g.group_state) == (E.NONE, "Dead")


@pytest.mark.integration
def test_offset_commit_v9_and_offset_fetch_v9(broker):
    R = offset_commit.REQUEST

    def commit(version, generation, group):
        return c.call(8, version, R(group_id=group, generation_id_or_member_epoch=generation,
                                    member_id="m" if generation >= 0 else "", group_instance_id=None,
                                    topics=[R["topics"](name="r", partitions=[R["topics"]["partitions"](
                                        partition_index=0, committed_offset=1, committed_metadata="")])]))

    with connect(broker) as c:
        # A generation of a group not known: GROUP_ID_NOT_FOUND from v9 on (Kafka 4.x).
        assert commit(9, 3, "v9-unknown").topics[0].partitions[0].error_code == E.GROUP_ID_NOT_FOUND
        assert commit(8, 3, "v9-unknown").topics[0].partitions[0].error_code == E.UNKNOWN_MEMBER_ID
        assert commit(9, -1, "v9-simple").topics[0].partitions[0].error_code == E.NONE
        F = offset_fetch.REQUEST
        topics = [F["groups"]["topics"](name="r", partition_indexes=[0])]
        got = c.call(9, 9, F(groups=[F["groups"](group_id="v9-simple", member_id=None, member_epoch=-1,
                                                 topics=topics)], require_stable=False))
    [g] = got.groups
    assert g.error_code == E.NONE
    assert [(p.partition_index, p.committed_offset) for p in g.topics[0].partitions] == [(0, 1)]


@pytest.mark.integration
def test_find_coordinator_share_keys(broker):
    R = find_coordinator.REQUEST
    share_key = f"group:{'AAAAAAAAAAAAAAAAAAAAAA'}:0"
    with connect(broker) as c:
        v6 = c.call(10, 6, R(key_type=2, coordinator_keys=[share_key, "bad-key", "g::0"]))
        v5 = c.call(10, 5, R(key_type=2, coordinator_keys=[share_key]))
        group = c.call(10, 6, R(key_type=0, coordinator_keys=["g"]))
    # The first ask creates __share_group_state (COORDINATOR_NOT_AVAILABLE meanwhile), then the
    # leader of the key's partition answers.
    assert [x.error_code for x in v6.coordinators] == [E.COORDINATOR_NOT_AVAILABLE, E.INVALID_REQUEST,
                                                       E.INVALID_REQUEST]
    assert [x.error_code for x in v5.coordinators] == [E.INVALID_REQUEST]
    assert group.coordinators[0].error_code == E.NONE
    with connect(broker) as c:
        def found() -> bool:
            (x,) = c.call(10, 6, R(key_type=2, coordinator_keys=[share_key])).coordinators
            return x.error_code == E.NONE and x.node_id == broker.node_id
        assert wait_for(found, 10)


REMOVED = [  # KIP-896: versions Kafka 4.0 removed
    (ApiKey.LIST_OFFSETS, 0, list_offsets.REQUEST(replica_id=-1, topics=[])),
    (ApiKey.OFFSET_COMMIT, 1, offset_commit.REQUEST(group_id="g", generation_id_or_member_epoch=-1,
                                                    member_id="", topics=[])),
    (ApiKey.OFFSET_FETCH, 0, offset_fetch.REQUEST(group_id="g", topics=[])),
    (ApiKey.CREATE_TOPICS, 1, create_topics.REQUEST(topics=[], timeout_ms=1000)),
    (ApiKey.DELETE_TOPICS, 0, delete_topics.REQUEST(topic_names=[], timeout_ms=1000)),
    (ApiKey.OFFSET_FOR_LEADER_EPOCH, 1, offset_for_leader_epoch.REQUEST(topics=[])),
    (ApiKey.WRITE_TXN_MARKERS, 0, write_txn_markers.REQUEST(markers=[])),
    (ApiKey.DESCRIBE_CONFIGS, 0, describe_configs.REQUEST(resources=[])),
    (ApiKey.DESCRIBE_LOG_DIRS, 0, describe_log_dirs.REQUEST(topics=None)),
    (ApiKey.FETCH, 3, fetch.REQUEST(replica_id=-1, topics=[])),
    (ApiKey.PRODUCE, 2, produce.REQUEST(acks=1, timeout_ms=1000, topic_data=[])),
]


@pytest.mark.integration
@pytest.mark.parametrize(("key", "version", "body"), REMOVED,
                         ids=[f"{k.api_name}-v{v}" for k, v, _ in REMOVED])
def test_a_removed_version_closes_the_connection(broker, key, version, body):
    with connect(broker) as c:
        c.send(key, version, body)
        assert c.closed_by_server(timeout=10)
    with connect(broker) as c:  # the broker serves on
        assert c.call(3, 12, metadata.REQUEST(topics=None)).brokers


def test_kafkalites_own_requests_use_versions_it_serves():
    """The broker's and controller's own clients (kafkalite's codec) send versions the release
    serves: the replica fetcher, the controller link, the coordinators' senders, registration."""
    from kafkalite.controller.request_batch import (
        leader_and_isr_version,
        stop_replica_version,
        update_metadata_version,
    )
    from kafkalite.server import lifecycle, topic_configs
    from kafkalite.server.coordinator import producer_id_manager
    from kafkalite.server.coordinator.transaction import markers, verification
    from kafkalite.server.handlers import metadata as metadata_handlers
    from kafkalite.server.replication import alter_partition_manager, replica_fetcher

    served = apis_for("INTERNAL", True, True, frozenset())
    sent = {
        ApiKey.FETCH: replica_fetcher.FETCH_VERSION,
        ApiKey.LIST_OFFSETS: replica_fetcher.LIST_OFFSETS_VERSION,
        ApiKey.ALTER_PARTITION: alter_partition_manager.ALTER_PARTITION_VERSION,
        ApiKey.METADATA: lifecycle.METADATA_VERSION,
        ApiKey.BROKER_REGISTRATION: lifecycle.REGISTRATION_VERSION,
        ApiKey.BROKER_HEARTBEAT: lifecycle.HEARTBEAT_VERSION,
        ApiKey.DESCRIBE_CONFIGS: topic_configs.DESCRIBE_CONFIGS_VERSION,
        ApiKey.CREATE_TOPICS: metadata_handlers.CREATE_TOPICS_VERSION,
        ApiKey.ALLOCATE_PRODUCER_IDS: producer_id_manager.ALLOCATE_VERSION,
        ApiKey.WRITE_TXN_MARKERS: markers.WRITE_TXN_MARKERS_VERSION,
        ApiKey.ADD_PARTITIONS_TO_TXN: verification.ADD_PARTITIONS_VERSION,
        ApiKey.LEADER_AND_ISR: leader_and_isr_version("3.9"),
        ApiKey.STOP_REPLICA: stop_replica_version("3.9"),
        ApiKey.UPDATE_METADATA: update_metadata_version("3.9"),
    }
    for key, version in sent.items():
        assert version in served[key], (key.api_name, version)
