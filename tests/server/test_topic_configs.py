"""Topic configs end to end, two brokers in-process (broker 1 runs the controller): CreateTopics'
configs reach the logs of a leader on another broker (which asks the controller for them when
LeaderAndIsr brings the topic), DescribeConfigs from any broker (raw, confluent-kafka and
kafka-python), and what a broker does when the controller cannot be asked."""

from __future__ import annotations

import os
import socket

import pytest

from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import delete_topics as dt
from kafkalite.protocol.messages import describe_configs as dc
from kafkalite.protocol.messages import produce as pm
from kafkalite.protocol.records import Record, build_batch
from kafkalite.server.broker import Broker
from kafkalite.server.config import SETTINGS_BY_NAME
from kafkalite.server.topic_configs import ControllerLink, TopicConfigCache
from kafkalite.storage.config import TOPIC_SETTINGS, LogConfig
from tests.support.brokers import connect, create, running_broker, two_brokers
from tests.support.wait import wait_for

PRODUCE, DESCRIBE_CONFIGS, DELETE_TOPICS = 0, 32, 20


def hosted(broker: Broker, topic: str, partition: int = 0) -> bool:
    return (topic, partition) in broker.replica_manager.partitions


def produce(broker: Broker, topic: str, value: bytes) -> int:
    R = pm.REQUEST
    records = build_batch([Record(offset_delta=0, timestamp_delta=0, key=None, value=value)])
    body = R(transactional_id=None, acks=1, timeout_ms=10000, topic_data=[R["topic_data"](
        name=topic, partition_data=[R["topic_data"]["partition_data"](index=0, records=records)])])
    with connect(broker) as c:
        return int(c.call(PRODUCE, 9, body).responses[0].partition_responses[0].error_code)


def describe(broker: Broker, topic: str, version: int = 4, keys: list[str] | None = None) -> dict:
    R = dc.REQUEST
    body = R(resources=[R["resources"](resource_type=dc.RESOURCE_TOPIC, resource_name=topic,
                                       configuration_keys=keys)], include_synonyms=True,
             include_documentation=True)
    with connect(broker) as c:
        (result,) = c.call(DESCRIBE_CONFIGS, version, body).results
    return {"error": result.error_code, "configs": {e.name: e for e in result.configs}}


@pytest.mark.integration
def test_a_leader_on_another_broker_rolls_and_refuses_by_the_topics_configs(tmp_path):
    from confluent_kafka import Producer

    with two_brokers(tmp_path) as (one, two):
        result = create(one, "sized", [2], segment_bytes="1024", max_message_bytes="2000")
        assert result.error_code == E.NONE, result.error_message
        shown = {c.name: (c.value, c.config_source) for c in result.configs}
        assert shown["segment.bytes"] == ("1024", dc.SOURCE_DYNAMIC_TOPIC_CONFIG)
        assert shown["max.message.bytes"] == ("2000", dc.SOURCE_DYNAMIC_TOPIC_CONFIG)
        assert shown["retention.ms"] == ("604800000", dc.SOURCE_DEFAULT_CONFIG)
        assert wait_for(lambda: hosted(two, "sized"), timeout=10)
        # Learned from the controller before the log was made: its first segment is already sized.
        assert two.topic_configs.overrides("sized") == {"segment.bytes": "1024", "max.message.bytes": "2000"}
        log = two.log_manager.get_log("sized", 0)
        assert (log.config.segment_bytes, log.config.max_message_bytes) == (1024, 2000)

        producer = Producer({"bootstrap.servers": f"127.0.0.1:{two.bound_port('PLAINTEXT')}", "linger.ms": 0})
        delivered = []
        for i in range(12):  # one ~330-byte batch each: three fit in a segment
            producer.produce("sized", value=bytes([i]) * 300, partition=0,
                             on_delivery=lambda err, msg: delivered.append((err, msg.offset())))
            producer.flush(10)
        assert [err for err, _ in delivered] == [None] * 12
        assert [offset for _, offset in delivered] == list(range(12))
        segments = sorted(f for f in os.listdir(log.dir) if f.endswith(".log"))
        assert len(segments) >= 4, segments
        assert all(os.path.getsize(os.path.join(log.dir, f)) <= 1024 for f in segments)

        # A batch above max.message.bytes (and within segment.bytes) is refused by the override.
        assert create(one, "small", [2], max_message_bytes="500").error_code == E.NONE
        assert wait_for(lambda: hosted(two, "small"), timeout=10)
        assert produce(two, "small", b"x" * 600) == E.MESSAGE_TOO_LARGE
        assert produce(two, "small", b"x" * 400) == E.NONE


@pytest.mark.integration
def test_a_batch_above_both_limits_is_message_too_large(tmp_path):
    with two_brokers(tmp_path) as (one, two):
        assert create(one, "sized", [2], segment_bytes="1024", max_message_bytes="2000").error_code == E.NONE
        assert wait_for(lambda: hosted(two, "sized"), timeout=10)
        assert produce(two, "sized", b"x" * 2500) == E.MESSAGE_TOO_LARGE


@pytest.mark.integration
def test_a_restarted_broker_gives_its_loaded_logs_their_topics_configs(tmp_path):
    with running_broker(tmp_path / "1") as one:
        controller = f"127.0.0.1:{one.bound_port('INTERNAL')}"
        for time in range(2):
            with running_broker(tmp_path / "2", node_id="2",
                                controller_quorum_bootstrap_servers=controller) as two:
                if time == 0:
                    assert create(one, "kept", [2], segment_bytes="2048").error_code == E.NONE
                else:
                    # Loaded from disk at startup, before the broker could ask: the defaults.
                    assert two.log_manager.get_log("kept", 0) is not None
                assert wait_for(lambda: hosted(two, "kept"), timeout=10)
                # LeaderAndIsr brings the topic, and its settings with it.
                assert two.log_manager.get_log("kept", 0).config.segment_bytes == 2048


@pytest.mark.integration
def test_a_topic_created_again_gets_its_new_configs(tmp_path):
    with two_brokers(tmp_path) as (one, two):
        assert create(one, "again", [2], retention_ms="1000").error_code == E.NONE
        assert wait_for(lambda: hosted(two, "again"), timeout=10)
        assert two.log_manager.get_log("again", 0).config.retention_ms == 1000
        with connect(one) as c:
            topics = [dt.REQUEST["topics"](name="again")]
            gone = c.call(DELETE_TOPICS, 6, dt.REQUEST(timeout_ms=10000, topics=topics))
        assert gone.responses[0].error_code == E.NONE
        # Gone from broker 2's metadata: its overrides are forgotten.
        assert wait_for(lambda: one.controller.deleting() == [], timeout=10)
        assert wait_for(lambda: two.topic_configs.overrides("again") is None, timeout=10)
        assert create(one, "again", [2]).error_code == E.NONE
        assert wait_for(lambda: hosted(two, "again"), timeout=10)
        assert two.log_manager.get_log("again", 0).config.retention_ms == one.log_config.retention_ms


@pytest.mark.integration
def test_describe_configs_from_any_broker(tmp_path):
    with two_brokers(tmp_path, log_retention_hours="1") as (one, two):
        assert create(one, "described", [1], segment_bytes="4096").error_code == E.NONE
        assert wait_for(lambda: "described" in two.metadata_cache.snapshot.topics, timeout=10)
        for broker in (one, two):  # broker 2 hosts none of it: it asks the controller
            got = describe(broker, "described")
            assert got["error"] == E.NONE
            configs = got["configs"]
            assert set(configs) == {s.name for s in TOPIC_SETTINGS}
            segment, retention = configs["segment.bytes"], configs["retention.ms"]
            policy = configs["cleanup.policy"]
            assert (segment.value, segment.config_source, segment.read_only) == ("4096", 1, False)
            assert [(s.name, s.value, s.source) for s in segment.synonyms] == [
                ("segment.bytes", "4096", 1), ("log.segment.bytes", "1073741824", 5)]
            # log.retention.hours set in the broker's configuration: a static broker config.
            assert (retention.value, retention.config_source) == ("3600000", dc.SOURCE_STATIC_BROKER_CONFIG)
            assert [(s.name, s.source) for s in retention.synonyms] == [
                ("log.retention.hours", 4), ("log.retention.hours", 5)]
            assert (policy.value, policy.config_source, policy.config_type) == ("delete", 5, dc.TYPE_LIST)
            assert segment.config_type == dc.TYPE_INT and retention.config_type == dc.TYPE_LONG
            assert "segment" in segment.documentation
        assert describe(two, "nope")["error"] == E.UNKNOWN_TOPIC_OR_PARTITION
        assert describe(one, "nope")["error"] == E.UNKNOWN_TOPIC_OR_PARTITION
        assert describe(two, "bad/name")["error"] == E.INVALID_TOPIC_EXCEPTION
        # v0 (is_default instead of config_source) was removed in Kafka 4.0 (KIP-896).
        v1 = describe(two, "described", version=1, keys=["segment.bytes", "retention.bytes"])["configs"]
        assert {n: (e.value, e.config_source) for n, e in v1.items()} == {
            "segment.bytes": ("4096", 1), "retention.bytes": ("-1", 5)}
        assert describe(two, "described", keys=[])["configs"] == {}


@pytest.mark.integration
def test_confluent_kafka_describe_configs(tmp_path):
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, ResourceType

    with two_brokers(tmp_path, ssl_key_password="secret") as (one, two):
        assert create(one, "t", [1], max_message_bytes="5000").error_code == E.NONE
        admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{two.bound_port('PLAINTEXT')}"})
        topic = ConfigResource(ResourceType.TOPIC, "t")
        broker = ConfigResource(ResourceType.BROKER, "2")
        assert wait_for(lambda: "t" in two.metadata_cache.snapshot.topics, timeout=10)
        futures = admin.describe_configs([topic, broker], request_timeout=20)
        topic_configs = futures[topic].result(20)
        broker_configs = futures[broker].result(20)
        assert topic_configs["max.message.bytes"].value == "5000"
        assert topic_configs["max.message.bytes"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
        assert topic_configs["segment.ms"].source == ConfigSource.DEFAULT_CONFIG.value
        assert topic_configs["segment.ms"].value == "604800000"
        assert broker_configs["node.id"].value == "2"
        assert broker_configs["node.id"].source == ConfigSource.STATIC_BROKER_CONFIG.value
        assert broker_configs["num.io.threads"].source == ConfigSource.DEFAULT_CONFIG.value
        assert not broker_configs["num.io.threads"].is_read_only  # dynamic (cluster-wide), as Kafka's
        assert broker_configs["node.id"].is_read_only
        password = broker_configs["ssl.key.password"]
        assert password.is_sensitive and password.value is None
        missing = ConfigResource(ResourceType.TOPIC, "missing")
        with pytest.raises(KafkaException) as info:
            admin.describe_configs([missing], request_timeout=20)[missing].result(20)
        assert info.value.args[0].code() == E.UNKNOWN_TOPIC_OR_PARTITION


@pytest.mark.integration
def test_kafka_python_describe_configs(tmp_path):
    from kafka import KafkaAdminClient
    from kafka.admin import ConfigResource, ConfigResourceType

    with two_brokers(tmp_path) as (one, two):
        assert create(one, "t", [2], cleanup_policy="compact,delete").error_code == E.NONE
        # kafka-python asks whichever broker it likes: both must know the topic by then.
        assert wait_for(lambda: all("t" in b.metadata_cache.snapshot.topics for b in (one, two)), timeout=10)
        admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{one.bound_port('PLAINTEXT')}",
                                 request_timeout_ms=20000)
        try:
            # Its default filter keeps what was changed at runtime (here: the topic's overrides).
            modified = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "t")])
            everything = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "1")],
                                                include_synonyms=True, config_filter="all")
        finally:
            admin.close()
    topic = modified["topic"]["t"]
    assert {name: c["value"] for name, c in topic.items()} == {"cleanup.policy": "compact,delete"}
    assert topic["cleanup.policy"]["config_source"] == "DYNAMIC_TOPIC_CONFIG"
    broker = everything["broker"]["1"]
    assert (broker["node.id"]["value"], broker["node.id"]["config_source"]) == ("1", "STATIC_BROKER_CONFIG")
    threads = broker["num.io.threads"]
    assert (threads["value"], threads["config_source"]) == ("8", "DEFAULT_CONFIG")
    assert threads["read_only"] is False  # dynamic (cluster-wide), as Kafka's
    assert broker["node.id"]["read_only"] is True
    assert threads["synonyms"] == [{"name": "num.io.threads", "value": "8", "source": "DEFAULT_CONFIG"}]


@pytest.mark.integration
def test_a_broker_that_cannot_reach_the_controller_answers_without_waiting_longer(tmp_path):
    """The config fetch is bounded: a controller address nobody listens on fails at once and the
    caller is told (no answer for the topic), with nothing learned."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    link = ControllerLink(9, ("127.0.0.1", port), timeout=2.0)
    cache = TopicConfigCache(LogConfig(segment_bytes=5000), None, link)
    try:
        answers: list[dict] = []
        assert cache.missing(["t"]) == ["t"]
        cache.fetch(["t"], answers.append)
        assert wait_for(lambda: answers, timeout=10)
        assert answers == [{}]
        assert cache.overrides("t") is None and cache.log_config("t").segment_bytes == 5000
    finally:
        link.shutdown()


def test_every_topic_setting_names_broker_settings_as_its_synonyms():
    assert [n for t in TOPIC_SETTINGS for n in t.synonym_names if n not in SETTINGS_BY_NAME] == []
