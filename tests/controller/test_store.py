"""The controller's store over the metadata log: what each mutation writes (Kafka's records), the
image replayed from the log, broker epochs that are record offsets, and a snapshot plus the log
after it rebuilding exactly the live image after thousands of random changes."""

from __future__ import annotations

import random
import uuid

from kafkalite.common.endpoints import Endpoint
from kafkalite.common.scram import ScramCredential
from kafkalite.controller import records as R
from kafkalite.controller.acls import AclBinding
from kafkalite.controller.image import MetadataImage
from kafkalite.controller.store import ControllerStore, StoredPartition
from kafkalite.raft.messages import Entry
from tests.support.fake_raft import MetadataLog

ENDPOINTS = (Endpoint("INTERNAL", "127.0.0.1", 9093, "PLAINTEXT"), Endpoint("SSL", "h", 9094, "SSL"))


def test_broker_epochs_are_the_offsets_of_their_registrations_and_fencing_needs_the_epoch():
    log = MetadataLog()
    store = log.store()
    store.write([R.NO_OP_RECORD()])
    first = store.register_broker(1, uuid.uuid4(), ENDPOINTS, "r1")
    second = store.register_broker(2, uuid.uuid4(), ENDPOINTS[:1], None)
    again = store.register_broker(1, uuid.uuid4(), ENDPOINTS, "r1")
    assert (first, second, again) == (1, 2, 3)
    brokers = store.image.brokers
    assert brokers[1].epoch == 3 and brokers[1].endpoints == ENDPOINTS and brokers[1].rack == "r1"
    assert not brokers[1].fenced
    store.fence_broker(1, 1)  # an older incarnation: nothing written
    assert len(log.entries) == 4 and not brokers[1].fenced
    store.fence_broker(1, 3)
    assert log.records()[-1] == R.FENCE_BROKER_RECORD(id=1, epoch=3)
    assert log.store().image.brokers[1].fenced
    # A snapshot's RegisterBrokerRecord carries the epoch.
    image = MetadataImage()
    image.load(log.store().image.to_records())
    assert image.brokers == log.store().image.brokers


def test_topics_partitions_and_deletion():
    log = MetadataLog()
    store = log.store()
    tid = uuid.uuid4()
    parts = [StoredPartition("t", p, (1, 2), 1, 0, (1, 2), 0) for p in range(3)]
    store.create_topic("t", tid, parts, {"segment.bytes": "1024"})
    assert [type(r).__name__ for r in log.records()] == [
        "TopicRecord", "ConfigRecord", "PartitionRecord", "PartitionRecord", "PartitionRecord"]
    # An ISR change (same leader epoch) and a leader change (leader epoch + 1): PartitionChangeRecords.
    store.update_partitions([StoredPartition("t", 1, (1, 2), 1, 0, (1,), 1)])
    store.update_partitions([StoredPartition("t", 1, (1, 2), 2, 1, (2,), 2)])
    assert log.records()[-2:] == [
        R.PARTITION_CHANGE_RECORD(partition_id=1, topic_id=tid, isr=[1]),
        R.PARTITION_CHANGE_RECORD(partition_id=1, topic_id=tid, isr=[2], leader=2)]
    # Epochs that do not follow Kafka's merge: a whole PartitionRecord.
    store.update_partitions([StoredPartition("t", 2, (1, 2), 2, 5, (2,), 9)])
    assert type(log.records()[-1]).__name__ == "PartitionRecord"
    store.update_partitions([StoredPartition("t", 2, (1, 2), 2, 5, (2,), 9)])  # no change: no record
    assert len(log.entries) == 8
    topics, loaded = log.store().load()
    assert topics == {"t": tid}
    assert loaded == [parts[0], StoredPartition("t", 1, (1, 2), 2, 1, (2,), 2),
                      StoredPartition("t", 2, (1, 2), 2, 5, (2,), 9)]
    store.begin_topic_deletion("t")
    assert log.store().deleting_topics() == ["t"]
    store.delete_topic("t")
    again = log.store()
    assert again.load() == ({}, []) and again.load_topic_configs() == {} and again.deleting_topics() == []


def test_reassignments_live_in_the_partitions():
    log = MetadataLog()
    store = log.store()
    tid = uuid.uuid4()
    store.create_topic("t", tid, [StoredPartition("t", 0, (1, 2), 1, 0, (1, 2), 0)])
    store.update_reassignments([StoredPartition("t", 0, (3, 1, 2), 1, 1, (1, 2), 1)],
                               {("t", 0): ((3,), (2,))}, [])
    assert log.records()[-1] == R.PARTITION_CHANGE_RECORD(
        partition_id=0, topic_id=tid, leader=1, replicas=[3, 1, 2], removing_replicas=[2],
        adding_replicas=[3])
    assert log.store().load_reassignments() == {("t", 0): ((3,), (2,))}
    # A leadership change meanwhile keeps the reassignment.
    store.update_partitions([StoredPartition("t", 0, (3, 1, 2), 1, 1, (1, 2, 3), 2)])
    assert log.store().load_reassignments() == {("t", 0): ((3,), (2,))}
    store.update_reassignments([StoredPartition("t", 0, (3, 1), 1, 2, (1, 3), 3)], {}, [("t", 0)])
    assert log.store().load_reassignments() == {}
    assert log.store().load()[1] == [StoredPartition("t", 0, (3, 1), 1, 2, (1, 3), 3)]


def test_configs_quotas_scram_and_acls_are_written_as_differences():
    log = MetadataLog()
    store = log.store()
    store.set_broker_configs("", {"a": "1", "b": "2"})
    store.set_broker_configs("", {"b": "3"})
    assert log.records()[-2:] == [
        R.CONFIG_RECORD(resource_type=R.CONFIG_BROKER, resource_name="", name="a", value=None),
        R.CONFIG_RECORD(resource_type=R.CONFIG_BROKER, resource_name="", name="b", value="3")]
    entity = (("client-id", None), ("user", "alice"))
    store.set_client_quotas(entity, {"producer_byte_rate": 5.0})
    store.set_client_quotas(entity, {})
    cred = ScramCredential(b"salt", b"stored", b"server", 4096)
    store.set_scram_credentials("u", {1: cred, 2: cred})
    store.set_scram_credentials("u", {2: cred})
    b1 = AclBinding.of(2, "t", 3, "User:a", "*", 3, 3)
    b2 = AclBinding.of(2, "t", 4, "User:b", "*", 2, 2)
    store.add_acls([b1, b2])
    store.add_acls([b1])  # already there: nothing written
    n = len(log.entries)
    store.delete_acls([b1])
    assert len(log.entries) == n + 1
    again = log.store()
    assert again.load_broker_configs() == {"": {"b": "3"}}
    assert again.load_client_quotas() == {}
    assert again.load_scram_credentials() == {"u": {2: cred}}
    assert again.load_acls() == [b2]


# --- snapshot + replay ------------------------------------------------------------------------------


class RandomChanges:
    """Controller-level changes chosen at random against the store's image."""

    def __init__(self, store: ControllerStore, rng: random.Random) -> None:
        self.store = store
        self.rng = rng
        self.n = 0

    def step(self) -> None:
        rng, store, image = self.rng, self.store, self.store.image
        self.n += 1
        topics = sorted(image.topic_ids)
        kind = rng.randrange(12)
        if kind == 0 or not image.brokers:
            host = rng.choice(["a", "b"])
            store.register_broker(rng.randrange(1, 6), uuid.uuid4(),
                                  (Endpoint("INTERNAL", host, 9000 + self.n % 1000, "PLAINTEXT"),),
                                  rng.choice([None, "r1", "r2"]))
        elif kind == 1:
            b = rng.choice(sorted(image.brokers.values(), key=lambda b: b.id))
            store.fence_broker(b.id, b.epoch)
        elif kind == 2 or not topics:
            name = f"t{self.n}"
            replicas = tuple(rng.sample(range(1, 6), rng.randrange(1, 4)))
            parts = [StoredPartition(name, p, replicas, replicas[0], 0, replicas, 0)
                     for p in range(rng.randrange(1, 4))]
            configs = {"retention.ms": str(rng.randrange(1000))} if rng.random() < 0.3 else {}
            store.create_topic(name, uuid.uuid4(), parts, configs)
        elif kind in (3, 4, 5):
            name = rng.choice(topics)
            topic = image.topic(name)
            assert topic is not None
            if not topic.partitions:
                return
            index = rng.choice(sorted(topic.partitions))
            p = topic.partitions[index]
            replicas = p.replicas if rng.random() < 0.8 else tuple(rng.sample(range(1, 6), 2))
            isr = tuple(r for r in replicas if rng.random() < 0.7) or replicas[:1]
            if rng.random() < 0.5:
                leader, leader_epoch = p.leader, p.leader_epoch  # an ISR change
            else:
                leader, leader_epoch = rng.choice([*isr, -1]), p.leader_epoch + 1
            if rng.random() < 0.05:
                leader_epoch += rng.randrange(2, 5)  # not Kafka's merge: a whole record
            new = StoredPartition(name, index, replicas, leader, leader_epoch, isr, p.partition_epoch + 1,
                                  rng.choice([0, 0, 1]))
            if kind == 5:
                adding = tuple(r for r in replicas if rng.random() < 0.3)
                removing = tuple(r for r in replicas if r not in adding and rng.random() < 0.3)
                started = {(name, index): (adding, removing)} if adding or removing else {}
                store.update_reassignments([new], started, [] if started else [(name, index)])
            else:
                store.update_partitions([new])
        elif kind == 6:
            name = rng.choice(topics)
            topic = image.topic(name)
            assert topic is not None
            count = len(topic.partitions)
            store.add_partitions([StoredPartition(name, count, (1,), 1, 0, (1,), 0)])
        elif kind == 7:
            name = rng.choice(topics)
            if rng.random() < 0.5:
                store.begin_topic_deletion(name)
            else:
                store.delete_topic(name)
        elif kind == 8:
            values = {k: str(rng.randrange(3)) for k in rng.sample(["x", "y", "z"], rng.randrange(3))}
            if rng.random() < 0.5 and topics:
                store.set_topic_configs(rng.choice(topics), values)
            else:
                store.set_broker_configs(rng.choice(["", "1", "2"]), values)
        elif kind == 9:
            entity = rng.choice([(("user", "a"),), (("client-id", None),), (("ip", "1.2.3.4"),)])
            keys = rng.sample(["producer_byte_rate", "consumer_byte_rate"], rng.randrange(3))
            store.set_client_quotas(entity, {k: float(rng.randrange(1, 100)) for k in keys})
        elif kind == 10:
            creds = {m: ScramCredential(rng.randbytes(4), rng.randbytes(8), rng.randbytes(8), 4096)
                     for m in rng.sample([1, 2], rng.randrange(3))}
            store.set_scram_credentials(rng.choice(["u", "v"]), creds)
        else:
            binding = AclBinding.of(2, rng.choice(["t", "u"]), 3, rng.choice(["User:a", "User:b"]), "*",
                                    rng.choice([2, 3, 4]), 3)
            if rng.random() < 0.6:
                store.add_acls([binding])
            else:
                store.delete_acls([binding])
            if rng.random() < 0.2:
                store.allocate_producer_ids(1000, 1, self.n)


def test_a_snapshot_plus_the_log_after_it_rebuilds_the_live_image():
    rng = random.Random(30)
    log = MetadataLog()
    live = log.store()
    changes = RandomChanges(live, rng)
    snapshots: list[tuple[int, int, bytes]] = []
    for i in range(3000):
        changes.step()
        if i % 700 == 350:
            snapshots.append(live.snapshot())
    assert len(log.entries) > 3000 and live.image.topics and live.image.brokers and live.image.acls
    for end, epoch, payload in snapshots:
        rebuilt = ControllerStore(lambda records: -1)
        rebuilt.load_snapshot(end, epoch, payload)
        rebuilt.apply_entries(log.entries[end:])
        assert rebuilt.image == live.image
        assert rebuilt.load() == live.load() and rebuilt.load_reassignments() == live.load_reassignments()
    # The snapshot of the end alone, and replaying the whole log, give the same image too.
    final = MetadataImage()
    final.load(R.decode_all(live.snapshot()[2]))
    assert final == live.image == log.store().image


def test_an_entry_applies_once_in_order_and_control_entries_are_skipped():
    store = ControllerStore(lambda records: -1)
    tid = uuid.uuid4()
    store.apply_entries([Entry(0, 1, b"", control=True),
                         Entry(1, 1, R.encode(R.TOPIC_RECORD(name="t", topic_id=tid))),
                         Entry(2, 2, R.encode(R.REMOVE_TOPIC_RECORD(topic_id=tid)))])
    assert store.image.topics == {} and store.image.offset == 2 and store.last_epoch == 2
    end, epoch, _ = store.snapshot()
    assert (end, epoch) == (3, 2)
