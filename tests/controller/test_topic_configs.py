"""Topic configs and new partitions in the controller: CreateTopics' configs are checked as Kafka's
LogConfig does, kept in the metadata log with the topic (through restarts, away with a deletion); and
CreatePartitions' checks, placement and persistence (Kafka's createPartitions)."""

from __future__ import annotations

import uuid

import pytest

from kafkalite.common.errors import ApiError
from kafkalite.controller.store import StoredPartition
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import delete_topics as dt
from tests.support.brokers import running_broker
from tests.support.fake_raft import MetadataLog
from tests.support.wait import wait_for
from tests.support.wire_client import Client


def refused(future) -> ApiError:
    with pytest.raises(ApiError) as info:
        future.result(10)
    return info.value


# --- the store ------------------------------------------------------------------------------------


def test_store_keeps_configs_with_the_topic_and_drops_them_with_it():
    log = MetadataLog()
    store = log.store()
    parts = [StoredPartition("t", 0, (1,), 1, 0, (1,), 0)]
    store.create_topic("t", uuid.uuid4(), parts, {"segment.bytes": "1024", "cleanup.policy": "delete"})
    store.create_topic("plain", uuid.uuid4(), [StoredPartition("plain", 0, (1,), 1, 0, (1,), 0)])
    store.add_partitions([StoredPartition("t", 1, (1,), 1, 0, (1,), 0)])
    store = log.store()  # a new active controller
    assert store.load_topic_configs() == {"t": {"segment.bytes": "1024", "cleanup.policy": "delete"}}
    assert [p.partition for p in store.load()[1] if p.topic == "t"] == [0, 1]
    store.delete_topic("t")
    assert store.load_topic_configs() == {}
    assert set(log.store().load()[0]) == {"plain"}


# --- CreateTopics' configs -------------------------------------------------------------------------


@pytest.mark.integration
def test_configs_are_checked_stored_and_survive_a_restart_until_deletion(tmp_path):
    with running_broker(tmp_path) as broker:
        c = broker.controller
        assert c.create_topic("t", 1, 1, None, False, {"segment.bytes": "1024"}).result(10)
        assert c.topic_configs("t") == {"segment.bytes": "1024"}
        assert c.create_topic("plain", 1, 1, None, False).result(10)
        assert c.topic_configs("plain") == {} and c.topic_configs("nope") is None
        assert c.store.load_topic_configs() == {"t": {"segment.bytes": "1024"}}
    with running_broker(tmp_path) as broker:
        c = broker.controller
        assert c.topic_configs("t") == {"segment.bytes": "1024"}
        with Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as client:
            gone = client.call(20, 6, dt.REQUEST(timeout_ms=10000, topics=[dt.REQUEST["topics"](name="t")]))
        assert gone.responses[0].error_code == E.NONE
        assert wait_for(lambda: c.deleting() == [], timeout=10)
        assert c.topic_configs("t") is None and c.store.load_topic_configs() == {}
        # The name is free again, without the old overrides.
        assert c.create_topic("t", 1, 1, None, False).result(10)
        assert c.topic_configs("t") == {}


@pytest.mark.parametrize(("configs", "code", "words"), [
    ({"segment.bytes": "ten"}, E.INVALID_CONFIG,
     "Invalid value ten for configuration segment.bytes: Not a number of type"),
    ({"segment.bytes": "10"}, E.INVALID_CONFIG, "Value must be at least 14"),
    ({"no.such.config": "1"}, E.INVALID_CONFIG, "Unknown topic config name: no.such.config"),
    ({"cleanup.policy": "shred"}, E.INVALID_CONFIG, "String must be one of: compact, delete"),
    ({"retention.ms": None, "segment.ms": None}, E.INVALID_REQUEST,
     "Null value not supported for topic configs : retention.ms,segment.ms"),
])
@pytest.mark.integration
def test_bad_configs_are_refused_and_nothing_is_created(tmp_path, configs, code, words):
    with running_broker(tmp_path) as broker:
        c = broker.controller
        for validate_only in (True, False):
            error = refused(c.create_topic("t", 1, 1, None, validate_only, configs))
            assert error.code == code and words in error.message, error.message
        assert "t" not in c.context.topic_ids and c.store.load() == ({}, [])


@pytest.mark.integration
def test_validate_only_checks_configs_and_keeps_nothing(tmp_path):
    with running_broker(tmp_path) as broker:
        c = broker.controller
        assert c.create_topic("t", 1, 1, None, True, {"max.message.bytes": "2000"}).result(10)
        assert c.topic_configs("t") is None and c.store.load_topic_configs() == {}


# --- CreatePartitions ------------------------------------------------------------------------------


@pytest.mark.integration
def test_partitions_are_added_led_and_stored(tmp_path):
    with running_broker(tmp_path) as broker:
        c = broker.controller
        c.create_topic("t", 2, 1, None, False).result(10)
        assert c.create_partitions("t", 5, None, True).result(10) == {2: [1], 3: [1], 4: [1]}
        assert len(c.context.partition_assignments["t"]) == 2  # validate only
        assert c.create_partitions("t", 4, [[1], [1]], False).result(10) == {2: [1], 3: [1]}
        assert sorted(c.context.partition_assignments["t"]) == [0, 1, 2, 3]
        # The broker hears of them: led by broker 1, in its metadata and hosted.
        def partitions() -> int:
            topic = broker.metadata_cache.snapshot.topics.get("t")
            return len(topic.partitions) if topic else 0

        assert wait_for(lambda: partitions() == 4, timeout=10)
        assert wait_for(lambda: ("t", 3) in broker.replica_manager.partitions, timeout=10)
        assert broker.metadata_cache.snapshot.topics["t"].partitions[3].leader == 1
    with running_broker(tmp_path) as broker:
        assert sorted(broker.controller.context.partition_assignments["t"]) == [0, 1, 2, 3]


@pytest.mark.parametrize(("name", "count", "assignment", "code", "message"), [
    ("nope", 3, None, E.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'nope' does not exist."),
    ("t", 1, None, E.INVALID_PARTITIONS, "Topic currently has 2 partitions, which is higher than the "
                                         "requested 1."),
    ("t", 2, None, E.INVALID_PARTITIONS, "Topic already has 2 partitions."),
    ("t", 4, [[1]], E.INVALID_REPLICA_ASSIGNMENT, "Increasing the number of partitions by 2 but 1 "
                                                  "assignments provided."),
    ("t", 3, [[7, 1]], E.INVALID_REPLICA_ASSIGNMENT, "Unknown broker(s) in replica assignment: 7."),
    ("t", 3, [[]], E.INVALID_REPLICA_ASSIGNMENT, "Cannot have replication factor of 0 for partition id 2."),
    ("t", 3, [[1, 1]], E.INVALID_REPLICA_ASSIGNMENT, "Duplicate brokers not allowed in replica "
                                                     "assignment: 1, 1 for partition id 2."),
])
@pytest.mark.integration
def test_create_partitions_refusals(tmp_path, name, count, assignment, code, message):
    with running_broker(tmp_path) as broker:
        c = broker.controller
        c.create_topic("t", 2, 1, None, False).result(10)
        error = refused(c.create_partitions(name, count, assignment, False))
        assert (error.code, error.message) == (code, message)
        assert sorted(c.context.partition_assignments["t"]) == [0, 1]
        assert len([p for p in c.store.load()[1] if p.topic == "t"]) == 2
