"""auto.create.topics.enable: a Metadata request naming an unknown topic has it created (Kafka's
AutoTopicCreationManager) with num.partitions and default.replication.factor, the topic
answering LEADER_NOT_AVAILABLE meanwhile; producers of kcat and confluent-kafka just work, and
with the setting off they get UNKNOWN_TOPIC_OR_PARTITION."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import metadata
from tests.support.brokers import connect, running_broker, two_brokers
from tests.support.wait import wait_for
from tests.support.wire_client import Client

pytestmark = pytest.mark.integration


METADATA = 3


def ask(broker, *names: str, version: int = 12, allow: bool = True) -> dict[str, tuple[int, int]]:
    """{topic: (error code, partitions)} of a Metadata request naming ``names``."""
    T = metadata.REQUEST["topics"]
    body = metadata.REQUEST(topics=[T(name=n) for n in names], allow_auto_topic_creation=allow)
    with Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as c:
        topics = c.call(METADATA, version, body).topics
    return {t.name: (t.error_code, len(t.partitions)) for t in topics}


def test_kcat_produces_to_a_topic_that_does_not_exist(tmp_path):
    kcat = shutil.which("kcat")
    assert kcat, "kcat is installed by .ci/system-deps.sh"
    with running_broker(tmp_path, num_partitions="3") as broker:
        out = subprocess.run([kcat, "-P", "-b", f"127.0.0.1:{broker.bound_port('PLAINTEXT')}", "-t", "fresh",
                              "-p", "1"], input="hello\nworld\n", capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert sorted(broker.controller.context.partition_assignments["fresh"]) == [0, 1, 2]
        assert broker.replica_manager.get_partition("fresh", 1).log.log_end_offset == 2


def test_metadata_creates_with_the_brokers_defaults_and_answers_leader_not_available(tmp_path):
    with running_broker(tmp_path, num_partitions="2") as broker:
        assert ask(broker, "made") == {"made": (E.LEADER_NOT_AVAILABLE, 0)}
        assert wait_for(lambda: ask(broker, "made") == {"made": (E.NONE, 2)}, timeout=10)
        # v0-3 have no flag: they always may create; v4+ may say no.
        assert ask(broker, "old", version=3)["old"][0] == E.LEADER_NOT_AVAILABLE
        assert ask(broker, "refused", allow=False) == {"refused": (E.UNKNOWN_TOPIC_OR_PARTITION, 0)}
        assert ask(broker, "bad name!", "..") == {"bad name!": (E.INVALID_TOPIC_EXCEPTION, 0),
                                                  "..": (E.INVALID_TOPIC_EXCEPTION, 0)}
        assert wait_for(lambda: "old" in broker.metadata_cache.snapshot.topics, timeout=10)
        assert set(broker.controller.context.topic_ids) == {"made", "old"}


def test_a_replication_factor_above_the_live_brokers_is_refused(tmp_path):
    with running_broker(tmp_path, default_replication_factor="2") as broker:
        assert ask(broker, "wide") == {"wide": (E.INVALID_REPLICATION_FACTOR, 0)}
        assert broker.controller.context.topic_ids == {}


def test_a_broker_without_the_controller_sends_the_creation_to_it(tmp_path):
    with two_brokers(tmp_path) as (one, two):
        assert ask(two, "forwarded") == {"forwarded": (E.LEADER_NOT_AVAILABLE, 0)}
        assert wait_for(lambda: ask(two, "forwarded") == {"forwarded": (E.NONE, 1)}, timeout=10)
        assert "forwarded" in one.controller.context.topic_ids
        with connect(two) as c:  # and Metadata v1 (no flag) does it too
            T = metadata.REQUEST["topics"]
            first = c.call(METADATA, 1, metadata.REQUEST(topics=[T(name="v1")])).topics[0]
        assert first.error_code == E.LEADER_NOT_AVAILABLE
        assert wait_for(lambda: "v1" in one.controller.context.topic_ids, timeout=10)


def test_with_auto_creation_off_producers_get_unknown_topic(tmp_path):
    from confluent_kafka import KafkaError, Producer

    with running_broker(tmp_path, auto_create_topics_enable="false") as broker:
        assert ask(broker, "absent") == {"absent": (E.UNKNOWN_TOPIC_OR_PARTITION, 0)}
        assert ask(broker, "bad name!") == {"bad name!": (E.INVALID_TOPIC_EXCEPTION, 0)}
        # librdkafka waits topic.metadata.propagation.max.ms for a topic to appear, then fails
        # the message with the broker's error.
        producer = Producer({"bootstrap.servers": f"127.0.0.1:{broker.bound_port('PLAINTEXT')}",
                             "message.timeout.ms": 20000, "topic.metadata.propagation.max.ms": 500})
        errors = []
        producer.produce("absent", value=b"x", on_delivery=lambda err, msg: errors.append(err))
        producer.flush(20)
        assert [e.code() for e in errors] == [KafkaError.UNKNOWN_TOPIC_OR_PART]
        assert broker.controller.context.topic_ids == {}
