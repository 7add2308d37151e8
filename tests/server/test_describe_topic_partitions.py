"""DescribeTopicPartitions (KIP-966) over the wire against a real broker: every topic, named
ones, unknown ones, a cursor walk page by page, internal topics flagged, the broker's
max.request.partition.size.limit; against a three-broker kafkalite.testing.Cluster,
confluent-kafka's AdminClient.describe_topics() (librdkafka asks with Metadata) and kafka-python's
describe_topic_partitions() (DescribeTopicPartitions, with its cursor)."""

from __future__ import annotations

import pytest

from kafkalite.protocol import error_codes as E
from kafkalite.protocol.acl import ResourceType
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import create_topics as ct
from kafkalite.protocol.messages import describe_topic_partitions as dtp
from kafkalite.protocol.messages import find_coordinator, metadata
from kafkalite.server.authorizer import OPERATIONS_OF, operations_bits
from tests.support.brokers import connect, running_broker
from tests.support.wait import wait_for

DTP = ApiKey.DESCRIBE_TOPIC_PARTITIONS
METADATA = ApiKey.METADATA
TOPICS = {"alpha": 3, "beta": 1, "gamma": 4}
INTERNAL = {"__consumer_offsets": 2, "__transaction_state": 2}


def describe(client, names=(), limit=2000, cursor=None):
    return client.call(DTP, 0, dtp.REQUEST(
        topics=[dtp.TOPIC_REQUEST(name=n) for n in names], response_partition_limit=limit,
        cursor=None if cursor is None else dtp.CURSOR(topic_name=cursor[0], partition_index=cursor[1])))


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with running_broker(tmp_path_factory.mktemp("dtp"), offsets_topic_num_partitions="2",
                        offsets_topic_replication_factor="1", transaction_state_log_num_partitions="2",
                        transaction_state_log_replication_factor="1",
                        max_request_partition_size_limit="5") as b:
        R = ct.REQUEST
        with connect(b) as c:
            created = c.call(19, 7, R(timeout_ms=10000, topics=[
                R["topics"](name=n, num_partitions=p, replication_factor=1) for n, p in TOPICS.items()]))
            assert [t.error_code for t in created.topics] == [E.NONE] * len(TOPICS)
            # FindCoordinator creates the two internal topics.
            for key_type in (0, 1):
                c.call(10, 4, find_coordinator.REQUEST(key_type=key_type, coordinator_keys=["k"]))
        wanted = {**TOPICS, **INTERNAL}

        def led() -> bool:
            topics = b.metadata_cache.snapshot.topics
            return all(n in topics and len(topics[n].partitions) == p
                       and all(q.leader == 1 for q in topics[n].partitions.values())
                       for n, p in wanted.items())

        assert wait_for(led, timeout=30)
        yield b


def everything(client, limit):
    """Walk every topic's partitions page by page: [(topic, partition)], the pages' sizes."""
    seen, sizes, cursor = [], [], None
    while True:
        page = describe(client, limit=limit, cursor=cursor)
        sizes.append(sum(len(t.partitions) for t in page.topics))
        seen += [(t.name, p.partition_index) for t in page.topics for p in t.partitions]
        if page.next_cursor is None:
            return seen, sizes
        cursor = (page.next_cursor.topic_name, page.next_cursor.partition_index)


def test_every_topic_in_name_order_matching_metadata(broker):
    with connect(broker) as c:
        page = describe(c, limit=100)  # capped by the broker's limit of 5
        md = {t.name: t for t in c.call(3, 12, metadata.REQUEST(topics=None)).topics}
    # The broker's max.request.partition.size.limit (5) caps the request's 100.
    assert sum(len(t.partitions) for t in page.topics) == 5
    assert [t.name for t in page.topics] == ["__consumer_offsets", "__transaction_state", "alpha"]
    assert page.next_cursor.topic_name == "alpha" and page.next_cursor.partition_index == 1
    for t in page.topics:
        m = md[t.name]
        assert t.error_code == E.NONE and t.topic_id == m.topic_id
        # No authorizer: every operation a topic supports.
        assert t.topic_authorized_operations == operations_bits(OPERATIONS_OF[ResourceType.TOPIC])
        for p in t.partitions:
            q = m.partitions[p.partition_index]
            assert (p.error_code, p.leader_id, p.leader_epoch, p.replica_nodes, p.isr_nodes,
                    p.offline_replicas) == (E.NONE, q.leader_id, q.leader_epoch, q.replica_nodes,
                                            q.isr_nodes, q.offline_replicas)
            assert p.eligible_leader_replicas == [] and p.last_known_elr == []


def test_internal_topics_are_flagged(broker):
    with connect(broker) as c:
        page = describe(c, names=[*INTERNAL, "alpha"])
    assert {t.name: t.is_internal for t in page.topics} == {
        "__consumer_offsets": True, "__transaction_state": True, "alpha": False}


def test_named_topics_and_unknown_ones(broker):
    with connect(broker) as c:
        page = describe(c, names=["alpha", "nope", "beta", "bad/name"])
        # After a page's last partition, even an unknown topic waits for the next page.
        full = describe(c, names=["gamma", "beta", "nope"])
    assert [(t.name, t.error_code) for t in page.topics] == [
        ("alpha", E.NONE), ("bad/name", E.INVALID_TOPIC_EXCEPTION), ("beta", E.NONE),
        ("nope", E.UNKNOWN_TOPIC_OR_PARTITION)]
    by_name = {t.name: t for t in page.topics}
    assert [p.partition_index for p in by_name["alpha"].partitions] == [0, 1, 2]
    assert by_name["nope"].partitions == [] and by_name["nope"].topic_id.int == 0
    assert page.next_cursor is None
    assert [t.name for t in full.topics] == ["beta", "gamma"]
    assert (full.next_cursor.topic_name, full.next_cursor.partition_index) == ("nope", 0)


@pytest.mark.parametrize("limit", [1, 2, 3, 4])
def test_a_cursor_walk_visits_every_partition_once_in_order(broker, limit):
    expected = [(n, i) for n in sorted({**TOPICS, **INTERNAL}) for i in range({**TOPICS, **INTERNAL}[n])]
    with connect(broker) as c:
        seen, sizes = everything(c, limit)
    assert seen == expected
    assert all(s <= limit for s in sizes)


def test_a_cursor_within_named_topics(broker):
    with connect(broker) as c:
        page = describe(c, names=["alpha", "gamma"], limit=2, cursor=("alpha", 2))
        assert [(t.name, [p.partition_index for p in t.partitions]) for t in page.topics] == [
            ("alpha", [2]), ("gamma", [0])]
        assert (page.next_cursor.topic_name, page.next_cursor.partition_index) == ("gamma", 1)
        # A page that ends exactly at a topic's end points at the next topic's partition 0.
        page = describe(c, names=["alpha", "beta", "gamma"], limit=3)
        assert [t.name for t in page.topics] == ["alpha"]
        assert (page.next_cursor.topic_name, page.next_cursor.partition_index) == ("beta", 0)


def test_a_bad_cursor_is_an_invalid_request(broker):
    with connect(broker) as c:
        outside = describe(c, names=["alpha"], cursor=("gamma", 0))
        negative = describe(c, names=["alpha"], cursor=("alpha", -1))
        unknown = describe(c, cursor=("zzz", 0))
    for page in (outside, negative):
        assert [(t.name, t.error_code) for t in page.topics] == [("alpha", E.INVALID_REQUEST)]
        assert page.next_cursor is None
    assert unknown.topics == [] and unknown.next_cursor is None


@pytest.fixture(scope="module")
def cluster():
    from kafkalite.testing import Cluster

    with Cluster(3) as c:
        c.create_topic("orders", partitions=4, replication_factor=3)
        c.create_topic("single", partitions=1, replication_factor=2)
        yield c


def _check(cluster, name, partitions):
    """[(index, leader, replicas, isr)] against the controller's broker's metadata."""
    info = cluster.controller.metadata_cache.snapshot.topics[name]
    assert partitions == [(i, p.leader, list(p.replicas), list(p.isr))
                          for i, p in sorted(info.partitions.items())]


@pytest.mark.integration
def test_kafka_python_describe_topic_partitions(cluster):
    """kafka-python (3.x) sends DescribeTopicPartitions itself, cursor included."""
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=20000)
    try:
        with cluster.capture() as seen:
            first = admin.describe_topic_partitions(["orders", "single"], response_partition_limit=3)
            rest = admin.describe_topic_partitions(["orders", "single"], cursor=first["next_cursor"])
    finally:
        admin.close()
    assert first["next_cursor"] == {"topic_name": "orders", "partition_index": 3}
    assert rest["next_cursor"] is None
    topics = first["topics"] + rest["topics"]
    assert [t["name"] for t in topics] == ["orders", "orders", "single"]
    for name in ("orders", "single"):
        parts = [p for t in topics if t["name"] == name for p in t["partitions"]]
        assert all(p["error_code"] == 0 and not p["offline_replicas"] for p in parts)
        _check(cluster, name, [(p["partition_index"], p["leader_id"], p["replica_nodes"], p["isr_nodes"])
                               for p in parts])
    assert (DTP, 0) in {(r.api_key, r.api_version) for r in seen}


@pytest.mark.integration
def test_confluent_kafka_describe_topics(cluster):
    from confluent_kafka import TopicCollection
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    with cluster.capture() as seen:
        found = admin.describe_topics(TopicCollection(["orders", "single"]), request_timeout=20)
        described = {name: f.result(timeout=30) for name, f in found.items()}
    for name, d in described.items():
        assert d.name == name and not d.is_internal
        _check(cluster, name, [(p.id, p.leader.id, [r.id for r in p.replicas], [r.id for r in p.isr])
                               for p in d.partitions])
    # librdkafka (2.16) answers describe_topics from a Metadata request even though the brokers
    # advertise DescribeTopicPartitions: this checks the two agree; kafka-python's (above) sends
    # DescribeTopicPartitions itself.
    assert METADATA in {r.api_key for r in seen}
