"""Consumer groups with real clients against one broker in-process: confluent-kafka, kafka-python
and aiokafka each consume a topic completely in a group and commit; committed offsets survive a
restart of the broker (loaded back from __consumer_offsets)."""

from __future__ import annotations

import asyncio
import contextlib
import uuid

import pytest

from tests.support.brokers import running_broker
from tests.support.wait import wait_for

pytestmark = pytest.mark.integration


GROUP_SETTINGS = {"group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "3",
                  "group.min.session.timeout.ms": "500"}
COUNT = 200


def produce(bootstrap: str, topic: str, count: int = COUNT, partitions: int = 3) -> list[bytes]:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept until the result is in
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    values = [b"%s-%04d" % (topic.encode(), i) for i in range(count)]
    for i, v in enumerate(values):
        producer.produce(topic, v, key=b"k%d" % i)
    assert producer.flush(30) == 0
    return values


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with running_broker(tmp_path_factory.mktemp("groups"), **GROUP_SETTINGS) as b:
        yield b


def bootstrap_of(broker) -> str:
    return f"127.0.0.1:{broker.bound_port('PLAINTEXT')}"


def test_confluent_kafka_consumer_reads_everything_in_a_group_and_commits(broker):
    from confluent_kafka import Consumer, TopicPartition

    bootstrap, topic, group = bootstrap_of(broker), f"ck-{uuid.uuid4().hex[:6]}", f"g-{uuid.uuid4().hex[:6]}"
    values = produce(bootstrap, topic)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                         "enable.auto.commit": False, "session.timeout.ms": 6000})
    try:
        consumer.subscribe([topic])
        seen: list[bytes] = []
        assert wait_for(lambda: _poll_into(consumer, seen) and len(seen) >= COUNT, timeout=60)
        assert sorted(seen) == sorted(values)
        consumer.commit(asynchronous=False)
        committed = consumer.committed([TopicPartition(topic, p) for p in range(3)], timeout=10)
        assert sum(tp.offset for tp in committed) == COUNT
    finally:
        consumer.close()


def _poll_into(consumer, seen: list[bytes]) -> bool:
    msg = consumer.poll(0.5)
    if msg is not None and msg.error() is None:
        seen.append(msg.value())
    return True


def test_kafka_python_consumer_reads_everything_in_a_group_and_commits(broker):
    from kafka import KafkaConsumer, TopicPartition

    bootstrap, topic, group = bootstrap_of(broker), f"kp-{uuid.uuid4().hex[:6]}", f"g-{uuid.uuid4().hex[:6]}"
    values = produce(bootstrap, topic)
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                             enable_auto_commit=False, consumer_timeout_ms=20000)
    try:
        seen = []
        for msg in consumer:
            seen.append(msg.value)
            if len(seen) == COUNT:
                break
        assert sorted(seen) == sorted(values)
        consumer.commit()
        assert sum(consumer.committed(TopicPartition(topic, p)) or 0 for p in range(3)) == COUNT
    finally:
        consumer.close()


def test_aiokafka_consumer_reads_everything_in_a_group_and_commits(broker):
    from aiokafka import AIOKafkaConsumer, TopicPartition

    bootstrap, topic, group = bootstrap_of(broker), f"ak-{uuid.uuid4().hex[:6]}", f"g-{uuid.uuid4().hex[:6]}"
    values = produce(bootstrap, topic)

    async def run() -> list[bytes]:
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                    auto_offset_reset="earliest", enable_auto_commit=False)
        await consumer.start()
        try:
            seen: list[bytes] = []
            async with asyncio.timeout(60):
                async for msg in consumer:
                    seen.append(msg.value)
                    if len(seen) == COUNT:
                        break
            await consumer.commit()
            offsets = [await consumer.committed(TopicPartition(topic, p)) for p in range(3)]
            assert sum(o or 0 for o in offsets) == COUNT
            return seen
        finally:
            await consumer.stop()

    assert sorted(asyncio.run(run())) == sorted(values)


def test_committed_offsets_survive_a_restart_of_the_coordinators_broker(tmp_path):
    from confluent_kafka import Consumer, TopicPartition

    group, topic = "durable", "restarted"
    with running_broker(tmp_path, **GROUP_SETTINGS) as b:
        bootstrap = bootstrap_of(b)
        produce(bootstrap, topic, 30, partitions=1)
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
        try:
            consumer.commit(offsets=[TopicPartition(topic, 0, 17)], asynchronous=False)
        finally:
            consumer.close()
    with running_broker(tmp_path, **GROUP_SETTINGS) as b:
        consumer = Consumer({"bootstrap.servers": bootstrap_of(b), "group.id": group})
        try:
            def committed() -> int:
                with contextlib.suppress(Exception):
                    return consumer.committed([TopicPartition(topic, 0)], timeout=5)[0].offset
                return -1

            assert wait_for(lambda: committed() == 17, timeout=30)
        finally:
            consumer.close()


def test_kcat_balanced_consumer_reads_everything_in_a_group(broker):
    import shutil
    import subprocess

    kcat = shutil.which("kcat")
    assert kcat, "kcat is installed by .ci/system-deps.sh"
    bootstrap, topic, group = bootstrap_of(broker), f"kc-{uuid.uuid4().hex[:6]}", f"g-{uuid.uuid4().hex[:6]}"
    values = produce(bootstrap, topic)
    # -G: librdkafka's balanced consumer (FindCoordinator, JoinGroup, SyncGroup, heartbeats,
    # OffsetFetch, commits); -c: exit after that many messages.
    out = subprocess.run([kcat, "-b", bootstrap, "-G", group, "-X", "auto.offset.reset=earliest",
                          "-c", str(COUNT), "-f", "%s\n", "-q", topic],
                         capture_output=True, timeout=90)
    assert out.returncode == 0, out.stderr.decode(errors="replace")[-2000:]
    assert sorted(out.stdout.split()) == sorted(values)


def test_a_commit_for_a_partition_nobody_has_is_refused_alone(broker):
    from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

    bootstrap, topic = bootstrap_of(broker), f"known-{uuid.uuid4().hex[:6]}"
    produce(bootstrap, topic, 1, partitions=1)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"g-{uuid.uuid4().hex[:6]}"})
    try:
        with pytest.raises(KafkaException) as refused:
            consumer.commit(offsets=[TopicPartition(topic, 0, 1), TopicPartition("nowhere", 0, 5)],
                            asynchronous=False)
        assert refused.value.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART
        done = consumer.committed([TopicPartition(topic, 0)], timeout=10)
        assert done[0].offset == 1  # the known partition's commit went through
    finally:
        consumer.close()


def test_the_internal_topics_are_internal_in_metadata(broker):
    """__consumer_offsets and __transaction_state (Kafka's Topic.INTERNAL_TOPICS), no other."""
    from kafkalite.protocol.messages import find_coordinator, metadata
    from tests.support.wire_client import Client

    produce(bootstrap_of(broker), f"any-{uuid.uuid4().hex[:6]}", 1, partitions=1)
    internal = {"__consumer_offsets", "__transaction_state"}
    with Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as c:
        # FindCoordinator creates each (or it is there already): a group's, a transactional id's.
        c.call(10, 2, find_coordinator.REQUEST(key="any-group", key_type=0))
        c.call(10, 2, find_coordinator.REQUEST(key="any-txn", key_type=1))

        def topics() -> dict:
            return {t.name: t for t in c.call(3, 12, metadata.REQUEST(topics=None)).topics}

        assert wait_for(lambda: internal <= set(topics()), timeout=30)
        found = topics()
    assert {name for name, t in found.items() if t.is_internal} == internal


def test_a_static_member_comes_back_under_its_instance_id_and_goes_on_from_its_commit(broker):
    from confluent_kafka import Consumer

    bootstrap, topic, group = bootstrap_of(broker), f"st-{uuid.uuid4().hex[:6]}", f"g-{uuid.uuid4().hex[:6]}"
    values = produce(bootstrap, topic, 40, partitions=1)
    conf = {"bootstrap.servers": bootstrap, "group.id": group, "group.instance.id": "worker-1",
            "auto.offset.reset": "earliest", "enable.auto.commit": False, "session.timeout.ms": 30000}
    seen: list[bytes] = []
    for _ in range(2):  # the same static member twice: the second one takes the first one's place
        consumer = Consumer(conf)
        try:
            consumer.subscribe([topic])
            target = len(seen) + 20
            assert wait_for(lambda c=consumer, t=target: _poll_into(c, seen) and len(seen) >= t, timeout=60)
            consumer.commit(asynchronous=False)
        finally:
            consumer.close()  # a static member does not leave: its session would keep its place
    assert seen == values  # in order, none twice: the second went on from the first one's commit
    group_state = broker.group_coordinator.groups[group]
    assert list(group_state.static_members) == ["worker-1"] and len(group_state.members) <= 1


def test_admin_clients_list_describe_read_alter_and_delete_groups(broker):
    from confluent_kafka import ConsumerGroupState, ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient

    bootstrap, topic = bootstrap_of(broker), f"adm-{uuid.uuid4().hex[:6]}"
    group, idle = f"busy-{uuid.uuid4().hex[:6]}", f"idle-{uuid.uuid4().hex[:6]}"
    produce(bootstrap, topic, 10, partitions=2)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    # An idle group with offsets (AlterConsumerGroupOffsets is an OffsetCommit without a member).
    admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(
        idle, [TopicPartition(topic, 0, 3), TopicPartition(topic, 1, 4)])])[idle].result(30)
    from confluent_kafka import Consumer

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([topic])
        seen: list[bytes] = []
        assert wait_for(lambda: _poll_into(consumer, seen) and len(seen) >= 1, timeout=60)
        listed = admin.list_consumer_groups().result(30)
        states = {g.group_id: g.state for g in listed.valid}
        assert states[group] == ConsumerGroupState.STABLE and states[idle] == ConsumerGroupState.EMPTY
        (described,) = admin.describe_consumer_groups([group])[group].result(30),
        assert described.state == ConsumerGroupState.STABLE and len(described.members) == 1
        assert {tp.partition for tp in described.members[0].assignment.topic_partitions} == {0, 1}
        offsets = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(idle)])[idle].result(30)
        assert sorted((tp.partition, tp.offset) for tp in offsets.topic_partitions) == [(0, 3), (1, 4)]
        # A group with a member cannot be deleted; an idle one can, offsets and all.
        results = admin.delete_consumer_groups([group, idle])
        with pytest.raises(Exception, match="NON_EMPTY_GROUP"):
            results[group].result(30)
        results[idle].result(30)
        after = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(idle)])[idle].result(30)
        assert all(tp.offset < 0 for tp in after.topic_partitions)
    finally:
        consumer.close()


def test_offset_delete_removes_a_groups_offsets_and_knows_no_unknown_group(broker):
    from kafkalite.protocol import error_codes as E
    from kafkalite.protocol.messages import find_coordinator, offset_commit, offset_delete, offset_fetch
    from tests.support.wire_client import Client

    bootstrap, group = bootstrap_of(broker), f"od-{uuid.uuid4().hex[:6]}"
    topic = f"od-{uuid.uuid4().hex[:6]}"
    produce(bootstrap, topic, 1, partitions=1)
    with Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as c:
        found = find_coordinator.REQUEST(key=group, key_type=0)
        assert wait_for(lambda: c.call(10, 2, found).error_code == 0, timeout=30)
        C = offset_commit.REQUEST
        body = C(group_id=group, generation_id_or_member_epoch=-1, member_id="", topics=[C["topics"](
            name=topic, partitions=[C["topics"]["partitions"](partition_index=0, committed_offset=1,
                                                             committed_metadata="")])])
        assert c.call(8, 7, body).topics[0].partitions[0].error_code == 0
        D = offset_delete.REQUEST
        answer = c.call(47, 0, D(group_id=group, topics=[D["topics"](
            name=topic, partitions=[D["topics"]["partitions"](partition_index=0)])]))
        assert answer.error_code == 0 and answer.topics[0].partitions[0].error_code == 0
        F = offset_fetch.REQUEST
        fetched = c.call(9, 7, F(group_id=group, topics=None))
        assert fetched.topics == []  # nothing committed any more
        missing = c.call(47, 0, D(group_id="never-seen", topics=[]))
        assert missing.error_code == E.GROUP_ID_NOT_FOUND


def test_batched_find_coordinator_and_multi_group_offset_fetch(broker):
    from kafkalite.protocol.messages import find_coordinator, offset_commit, offset_fetch
    from tests.support.wire_client import Client

    topic = f"batch-{uuid.uuid4().hex[:6]}"
    produce(bootstrap_of(broker), topic, 1, partitions=1)
    groups = [f"b1-{uuid.uuid4().hex[:6]}", f"b2-{uuid.uuid4().hex[:6]}"]
    with Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as c:
        # v4: several keys in one request (KIP-699), each answered on its own.
        request = find_coordinator.REQUEST(key_type=0, coordinator_keys=[*groups, ""])
        assert wait_for(lambda: all(x.error_code == 0 for x in c.call(10, 4, request).coordinators[:2]),
                        timeout=30)
        answer = c.call(10, 4, request)
        assert [x.key for x in answer.coordinators] == [*groups, ""]
        assert {x.node_id for x in answer.coordinators[:2]} == {1} and answer.coordinators[2].error_code != 0
        C = offset_commit.REQUEST
        for i, group in enumerate(groups):
            body = C(group_id=group, generation_id_or_member_epoch=-1, member_id="", topics=[C["topics"](
                name=topic, partitions=[C["topics"]["partitions"](partition_index=0, committed_offset=i + 1,
                                                                 committed_metadata="m")])])
            assert c.call(8, 8, body).topics[0].partitions[0].error_code == 0
        # v8: several groups in one OffsetFetch.
        F = offset_fetch.REQUEST
        fetched = c.call(9, 8, F(groups=[F["groups"](group_id=g, topics=None) for g in groups]))
    got = [(g.group_id, g.error_code, [(p.partition_index, p.committed_offset, p.metadata)
                                       for t in g.topics for p in t.partitions]) for g in fetched.groups]
    assert got == [(groups[0], 0, [(0, 1, "m")]), (groups[1], 0, [(0, 2, "m")])]


def test_a_metadata_request_naming_the_offsets_topic_creates_it_as_the_coordinator_would(tmp_path):
    from kafkalite.protocol.messages import metadata
    from tests.support.wire_client import Client

    with running_broker(tmp_path, **GROUP_SETTINGS) as b, Client("127.0.0.1", b.bound_port("PLAINTEXT")) as c:
        R = metadata.REQUEST
        ask = R(topics=[R["topics"](name="__consumer_offsets")], allow_auto_topic_creation=True)

        def partitions() -> int:
            (topic,) = c.call(3, 12, ask).topics
            return len(topic.partitions) if topic.error_code == 0 else 0

        # offsets.topic.num.partitions, not num.partitions
        assert wait_for(lambda: partitions() == 3, timeout=30)
        assert wait_for(lambda: b.log_manager.get_log("__consumer_offsets", 0) is not None, timeout=30)
        assert b.log_manager.get_log("__consumer_offsets", 0).config.compact
