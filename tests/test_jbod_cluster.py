"""JBOD in a cluster of 3 broker processes, each with two log dirs, through real admin clients
(kafka-python's KafkaAdminClient: describe_log_dirs, alter_replica_log_dirs; confluent-kafka's
AdminClient has neither) and confluent-kafka producers and consumers:

- placement: each broker's partitions spread over its dirs, DescribeLogDirs per dir per broker;
- a replica moved between dirs under an idempotent acks=all producer: every acknowledged record
  read back from the moved replica (the leader), the old dir's files gone;
- a move stopped by a broker restart resumes from the future log left on disk;
- a dir replaced by a file (Kafka's LogDirFailureTest) takes only its partitions offline: their
  leadership moves to another broker, KAFKA_STORAGE_ERROR on that broker for them, its other dir
  and the other brokers serve on, AlterReplicaLogDirs to it is refused;
- a broker whose every dir failed stops cleanly, saying why.
The copy is throttled (replica.alter.log.dirs.io.max.bytes.per.second=500000) so that moves take
seconds, not milliseconds."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pytest

from kafkalite.local import processes as C
from kafkalite.local.settings import free_base_port
from kafkalite.protocol import error_codes as E
from tests.support.broker_process import BrokerProcess, wait_exit
from tests.support.failed_dir import replace_with_a_file
from tests.support.raw_requests import EARLIEST, batch, create_topic, list_offset, produce
from tests.support.wait import wait_for, wait_for_value
from tests.support.wire_client import Client

pytestmark = pytest.mark.integration

RATE = 500_000
SETTINGS = ("broker.heartbeat.interval.ms=200", "broker.session.timeout.ms=3000",
            "replica.fetch.wait.max.ms=100", "replica.fetch.backoff.ms=100",
            "log.segment.delete.delay.ms=200", f"replica.alter.log.dirs.io.max.bytes.per.second={RATE}")


def dirs_of(directory: str, node_id: int) -> list[Path]:
    return [Path(directory) / f"broker-{node_id}" / f"d{i}" for i in (0, 1)]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("jbod-cluster"))
    base = free_base_port()
    extra = {n: (f"log.dirs={','.join(str(d) for d in dirs_of(directory, n))}",) for n in (1, 2, 3)}
    nodes = C.start(3, directory, base, SETTINGS, node_extra=extra)
    try:
        assert C.wait_registered(nodes, 60), "cluster did not come up"
        yield {"nodes": nodes, "dir": directory, "bootstrap": f"127.0.0.1:{nodes[0].client_port}"}
    finally:  # the controller's node last: the others' controlled shutdowns need it
        C.stop(nodes[1:])
        C.stop(nodes[:1])


@pytest.fixture(scope="module")
def admin(cluster):
    from kafka import KafkaAdminClient

    client = KafkaAdminClient(bootstrap_servers=cluster["bootstrap"], request_timeout_ms=20000)
    yield client
    client.close()


def create(admin, name: str, partitions: int = 1, rf: int = 3, assignment: dict | None = None,
           **configs: str) -> None:
    from kafka.admin import NewTopic

    topic = (NewTopic(name, replica_assignments=assignment, topic_configs=configs) if assignment
             else NewTopic(name, partitions, rf, topic_configs=configs))
    admin.create_topics([topic])


def metadata(cluster, topic: str) -> dict[int, tuple[int, list[int]]]:
    """{partition: (leader, isr)} as broker 1 answers."""
    from confluent_kafka.admin import AdminClient

    md = AdminClient({"bootstrap.servers": cluster["bootstrap"]}).list_topics(topic, timeout=10)
    return {p.id: (p.leader, list(p.isrs)) for p in md.topics[topic].partitions.values()}


def log_dirs(admin, broker: int, asked: dict[str, list[int]] | None = None
             ) -> dict[str, tuple[int, dict[tuple[str, int], tuple[bool, int]]]]:
    """{dir: (error, {(topic, partition): (future, lag)})} of one broker, by kafka-python. Without
    ``asked``, kafka-python asks for the partitions of the topics in its metadata cache (not null,
    every log): a topic created since its last refresh is left out (seen in CI)."""
    (answer,) = admin.describe_log_dirs(asked, brokers=[broker])
    assert answer["broker"] == broker
    return {d["log_dir"]: (d["error_code"], {(t["name"], p["partition_index"]):
                                             (p["is_future_key"], p["offset_lag"])
                                             for t in d["topics"] for p in t["partitions"]})
            for d in answer["log_dirs"]}


def dir_holding(cluster, node: int, topic: str, partition: int) -> Path:
    """The dir of ``node`` holding the partition's log (once it has created it: the metadata may
    name the replica a little before its LeaderAndIsr is applied)."""
    def found() -> list[Path]:
        return [d for d in dirs_of(cluster["dir"], node) if (d / f"{topic}-{partition}").is_dir()]

    (holder,) = wait_for_value(lambda: found() or None, timeout=10) or []
    return holder


def other_dir(cluster, node: int, d: Path) -> Path:
    (other,) = [x for x in dirs_of(cluster["dir"], node) if x != d]
    return other


def alter(admin, topic: str, partition: int, broker: int, path: Path) -> int:
    from kafka import TopicPartitionReplica

    replica = TopicPartitionReplica(topic, partition, broker)
    (error,) = admin.alter_replica_log_dirs({replica: str(path)}).values()
    return int(error.errno)


def consume_all(cluster, topic: str, partition: int, count: int) -> list[bytes]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": cluster["bootstrap"], "group.id": f"jbod-{topic}",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    try:
        consumer.assign([TopicPartition(topic, partition, 0)])
        values: list[bytes] = []

        def more() -> bool:
            for m in consumer.consume(500, timeout=0.2):
                assert m.error() is None, m.error()
                values.append(m.value())
            return len(values) >= count

        assert wait_for(more, timeout=60, interval=0), f"read {len(values)} of {count}"
        return values
    finally:
        consumer.close()


class Producing:
    """An idempotent acks=all producer writing numbered values to one partition in a thread until
    stopped; ``acked`` are the values the cluster acknowledged, in order."""

    def __init__(self, cluster, topic: str, partition: int, size: int = 200) -> None:
        from confluent_kafka import Producer

        self.producer = Producer({"bootstrap.servers": cluster["bootstrap"], "acks": "all",
                                  "enable.idempotence": True, "linger.ms": 5})
        self.topic, self.partition, self.size = topic, partition, size
        self.acked: list[bytes] = []
        self.failed: list[str] = []
        self.sent = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _delivered(self, err, msg) -> None:
        if err is None:
            self.acked.append(msg.value())
        else:
            self.failed.append(str(err))

    def _run(self) -> None:
        while not self._stop.is_set():
            value = b"%08d" % self.sent + b"." * (self.size - 8)
            try:
                self.producer.produce(self.topic, value, partition=self.partition,
                                      on_delivery=self._delivered)
                self.sent += 1
            except BufferError:
                self.producer.poll(0.05)
            self.producer.poll(0)
            if self.sent % 200 == 0:
                self.producer.flush(10)  # paced by the acknowledgements

    def __enter__(self) -> Producing:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)
        assert self.producer.flush(30) == 0

    def __exit__(self, *exc: object) -> None:
        if not self._stop.is_set():
            self.stop()


def fill(cluster, topic: str, partition: int, count: int, size: int = 1000) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": cluster["bootstrap"], "acks": "all", "linger.ms": 20})
    for i in range(count):
        producer.produce(topic, b"%08d" % i + b"f" * (size - 8), partition=partition)
        producer.poll(0)
    assert producer.flush(30) == 0


# --- placement and DescribeLogDirs ---------------------------------------------------------------

SPREAD = {"spread": list(range(6))}


def test_partitions_spread_over_each_brokers_dirs(cluster, admin):
    create(admin, "spread", partitions=6, rf=3)
    assert wait_for(lambda: all(ld >= 0 for ld, _ in metadata(cluster, "spread").values()), timeout=20)
    for node in (1, 2, 3):
        dirs = dirs_of(cluster["dir"], node)

        def spread_held(node: int = node) -> bool:  # every replica created (LeaderAndIsr applied)
            return sum(t == "spread" for _, parts in log_dirs(admin, node, SPREAD).values()
                       for t, _ in parts) == 6

        assert wait_for(spread_held, timeout=20)
        answer = log_dirs(admin, node, SPREAD)
        assert list(answer) == [str(d.absolute()) for d in dirs]
        assert {error for error, _ in answer.values()} == {E.NONE}
        held = [sorted(p for (t, p) in parts if t == "spread") for _, parts in answer.values()]
        assert sorted(held[0] + held[1]) == list(range(6))  # each replica once, in one dir
        assert abs(len(held[0]) - len(held[1])) <= 1, held  # the dir with fewest logs first
        for d, partitions in zip(dirs, held, strict=True):
            assert sorted(int(x.name.rsplit("-", 1)[1]) for x in d.glob("spread-*")) == partitions


def test_describe_log_dirs_sizes_and_volume_bytes(cluster, admin):
    (answer,) = admin.describe_log_dirs({"spread": [0]}, brokers=[1])
    for d in answer["log_dirs"]:
        assert d["total_bytes"] > 0 and 0 < d["usable_bytes"] <= d["total_bytes"]
    sizes = [p["partition_size"] for d in answer["log_dirs"] for t in d["topics"] for p in t["partitions"]]
    assert sizes == [0]  # only spread-0, asked for, empty


# --- moving replicas -----------------------------------------------------------------------------

def test_move_a_leader_replica_under_an_acks_all_producer(cluster, admin):
    topic = "move"
    create(admin, topic, rf=3, **{"min.insync.replicas": "2"})
    leader = wait_for_value(
        lambda: next((ld for ld, _ in metadata(cluster, topic).values() if ld >= 0), None), timeout=20)
    assert leader is not None
    fill(cluster, topic, 0, 1500)  # 1.5 MB: 3 s of copying at 500 KB/s
    source = dir_holding(cluster, leader, topic, 0)
    dest = other_dir(cluster, leader, source)
    with Producing(cluster, topic, 0) as producing:
        assert wait_for(lambda: len(producing.acked) > 100, timeout=20)
        assert alter(admin, topic, 0, leader, dest) == E.NONE
        future_seen = wait_for(
            lambda: log_dirs(admin, leader)[str(dest.absolute())][1].get((topic, 0), (False,))[0], timeout=10)
        acked_during = len(producing.acked)
        assert wait_for(lambda: len(producing.acked) > acked_during + 200, timeout=20)
        producing.stop()
    assert future_seen
    assert not producing.failed, producing.failed[:3]
    # The move completes once it catches up; then the leader's log is the moved one.
    assert wait_for(
        lambda: log_dirs(admin, leader)[str(dest.absolute())][1].get((topic, 0)) == (False, 0), timeout=30)
    assert (topic, 0) not in log_dirs(admin, leader)[str(source.absolute())][1]
    assert metadata(cluster, topic)[0][0] == leader
    values = consume_all(cluster, topic, 0, 1500 + len(producing.acked))
    assert values[1500:] == producing.acked  # every acknowledged record, once, in order
    assert len(values) == 1500 + len(producing.acked)
    assert wait_for(lambda: not list(source.glob(f"{topic}-0*")), timeout=10)  # the old files are gone
    assert not list(dest.glob("*-future"))


def test_a_move_resumes_after_a_restart(cluster, admin):
    topic, node = "resume", 3
    create(admin, topic, assignment={0: [node]})
    assert wait_for(lambda: metadata(cluster, topic).get(0, (-1,))[0] == node, timeout=20)
    fill(cluster, topic, 0, 2000)  # 2 MB: 4 s at 500 KB/s
    source = dir_holding(cluster, node, topic, 0)
    dest = other_dir(cluster, node, source)
    assert alter(admin, topic, 0, node, dest) == E.NONE
    assert wait_for(lambda: any(p.name.endswith("-future") for p in dest.iterdir()), timeout=10)
    nodes = cluster["nodes"]
    proc = nodes[node - 1].process
    proc.terminate()  # a clean stop in the middle of the copy
    assert wait_exit(proc, 20) == 0
    futures = [p for p in dest.iterdir() if p.name.startswith(f"{topic}-0.") and p.name.endswith("-future")]
    assert len(futures) == 1, "the future log stays on disk"
    assert (source / f"{topic}-0").is_dir()
    with open(nodes[node - 1].log_path or os.devnull, "ab") as out:
        nodes[node - 1].process = subprocess.Popen(nodes[node - 1].args, stdout=out, stderr=subprocess.STDOUT)
    assert C.wait_registered(nodes, 60)
    # Loaded with the logs, the future log's copy goes on from where it stopped, then is swapped in.
    assert wait_for(lambda: (dest / f"{topic}-0").is_dir() and not futures[0].exists(), timeout=30)
    assert wait_for(lambda: not list(source.glob(f"{topic}-0*")), timeout=10)
    values = consume_all(cluster, topic, 0, 2000)
    assert values == [b"%08d" % i + b"f" * 992 for i in range(2000)]


# --- a failed log dir -------------------------------------------------------------------------

def test_a_failed_dir_takes_only_its_partitions_offline(cluster, admin):
    node = 2
    create(admin, "shared", partitions=6, rf=2, **{"segment.bytes": "2048"})
    create(admin, "solo", assignment={p: [node] for p in range(4)}, **{"segment.bytes": "2048"})
    assert wait_for(lambda: all(ld >= 0 for ld, _ in metadata(cluster, "shared").values())
                    and all(ld >= 0 for ld, _ in metadata(cluster, "solo").values()), timeout=20)
    solo_dirs = {p: dir_holding(cluster, node, "solo", p) for p in range(4)}
    failing = solo_dirs[0]
    healthy = other_dir(cluster, node, failing)
    # The fewest-logs placement put some in each dir (they differed by 2 at most before).
    ok = next(p for p, d in solo_dirs.items() if d == healthy)
    before = metadata(cluster, "shared")
    on_failing = [p for p, (_, isr) in before.items()
                  if node in isr and dir_holding(cluster, node, "shared", p) == failing]
    assert on_failing
    # Kafka's LogDirFailureTest: the dir is removed and a file takes its place.
    replace_with_a_file(failing)
    port = cluster["nodes"][node - 1].client_port
    with Client("127.0.0.1", port) as c:
        # An append that rolls a segment meets the missing dir: the dir goes offline.
        codes = [produce(c, "solo", batch([b"x" * 1500])).error_code for _ in range(3)]
        assert E.KAFKA_STORAGE_ERROR in codes, codes
        assert wait_for(lambda: log_dirs(admin, node)[str(failing.absolute())][0] == E.KAFKA_STORAGE_ERROR,
                        timeout=10)
        assert list_offset(c, "solo", 0, EARLIEST).error_code == E.KAFKA_STORAGE_ERROR
        # The healthy dir of the same broker serves on.
        for _ in range(3):
            assert produce(c, "solo", batch([b"y" * 1500]), partition=ok).error_code == E.NONE
    answer = log_dirs(admin, node)
    assert answer[str(failing.absolute())] == (E.KAFKA_STORAGE_ERROR, {})
    assert answer[str(healthy.absolute())][0] == E.NONE
    assert ("solo", ok) in answer[str(healthy.absolute())][1]
    # The controller moved the failed replicas' leadership away and took them out of the ISR.
    assert wait_for(lambda: all(metadata(cluster, "shared")[p][0] not in (node, -1)
                                and node not in metadata(cluster, "shared")[p][1] for p in on_failing),
                    timeout=20), metadata(cluster, "shared")
    assert metadata(cluster, "solo")[0][0] == -1  # its only replica is offline
    assert metadata(cluster, "solo")[ok][0] == node
    # Produce and consume on every partition of the replicated topic (other brokers lead the
    # failed ones now) and on the healthy dir's partition of broker 2.
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": cluster["bootstrap"], "acks": "all"})
    for p in range(6):
        producer.produce("shared", b"after-%d" % p, partition=p)
    producer.produce("solo", b"after", partition=ok)
    assert producer.flush(30) == 0
    for p in range(6):
        assert consume_all(cluster, "shared", p, 1) == [b"after-%d" % p]
    assert consume_all(cluster, "solo", ok, 4)[-1] == b"after"
    assert cluster["nodes"][node - 1].process.poll() is None  # the broker stays up
    assert alter(admin, "solo", ok, node, failing) == E.KAFKA_STORAGE_ERROR
    assert alter(admin, "solo", ok, node, "/no/such/dir") == E.BY_NAME["LOG_DIR_NOT_FOUND"].code


def test_a_broker_whose_every_dir_failed_stops_cleanly(tmp_path):
    d = tmp_path / "only"
    with BrokerProcess(d, "log.segment.bytes=1024") as broker:
        with Client("127.0.0.1", broker.port) as c:
            create_topic(c, "t", partitions=1)
            replace_with_a_file(d)
            for _ in range(3):
                if produce(c, "t", batch([b"z" * 800])).error_code == E.KAFKA_STORAGE_ERROR:
                    break
        assert wait_exit(broker.proc, 20) is not None
        said = [line for line in broker.lines if "Shutdown broker because all log dirs in" in line]
        assert said, broker.lines[-20:]
        assert any("shut down" in line for line in broker.lines)
