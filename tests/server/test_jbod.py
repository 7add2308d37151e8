"""JBOD on one broker with two log dirs (in-process, on disk): meta.properties in each dir, new
partitions on the dir with the fewest logs, AlterReplicaLogDirs on the wire (every error code
Kafka gives, a move with appends going on, the future log seen by DescribeLogDirs), and a log dir
that fails for real (the dir removed and a file put in its place, as Kafka's LogDirFailureTest
does): its partitions answer KAFKA_STORAGE_ERROR, the other dir's serve, DescribeLogDirs says so.
Broker processes with real admin clients: tests/test_jbod_cluster.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalite.common.properties import parse_properties
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import alter_replica_log_dirs as arld
from kafkalite.protocol.messages import describe_log_dirs as dld
from tests.support.brokers import connect, running_broker
from tests.support.failed_dir import replace_with_a_file
from tests.support.raw_requests import (
    EARLIEST,
    batch,
    create_topic,
    fetch_one,
    list_offset,
    produce,
    read_log,
)
from tests.support.wait import wait_for

ALTER_REPLICA_LOG_DIRS, DESCRIBE_LOG_DIRS = 34, 35
LOG_DIR_NOT_FOUND = E.BY_NAME["LOG_DIR_NOT_FOUND"].code


def alter(c, moves: dict[tuple[str, int], Path | str], version: int = 2) -> dict[tuple[str, int], int]:
    by_dir: dict[str, dict[str, list[int]]] = {}
    for (topic, index), path in moves.items():
        by_dir.setdefault(str(path), {}).setdefault(topic, []).append(index)
    request = arld.REQUEST(dirs=[arld.ALTER_REPLICA_LOG_DIR(path=p, topics=[
        arld.ALTER_REPLICA_LOG_DIR_TOPIC(name=t, partitions=ps) for t, ps in topics.items()])
        for p, topics in by_dir.items()])
    response = c.call(ALTER_REPLICA_LOG_DIRS, version, request)
    assert response.throttle_time_ms == 0
    return {(r.topic_name, p.partition_index): p.error_code for r in response.results for p in r.partitions}


def describe(c) -> dict[str, tuple[int, dict[tuple[str, int, bool], int]]]:
    """{dir: (error, {(topic, partition, future): offset lag})}."""
    r = c.call(DESCRIBE_LOG_DIRS, 4, dld.REQUEST(topics=None))
    return {x.log_dir: (x.error_code, {(t.name, p.partition_index, p.is_future_key): p.offset_lag
                                       for t in x.topics for p in t.partitions}) for x in r.results}


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    base = tmp_path_factory.mktemp("jbod")
    return [base / "d0", base / "d1"]


@pytest.fixture(scope="module")
def broker(dirs):
    with running_broker(dirs[0].parent, log_dirs=",".join(str(d) for d in dirs),
                        log_segment_delete_delay_ms="200", replica_fetch_max_bytes="4096",
                        replica_alter_log_dirs_io_max_bytes_per_second="200000") as b:
        yield b


def holder(dirs: list[Path], topic: str, partition: int) -> Path:
    (found,) = [d for d in dirs if (d / f"{topic}-{partition}").is_dir()]
    return found


def test_each_dir_has_its_meta_properties(broker, dirs):
    props = [parse_properties((d / "meta.properties").read_text()) for d in dirs]
    assert {p["cluster.id"] for p in props} == {broker.cluster_id}
    assert {p["node.id"] for p in props} == {"1"}
    assert all(p["version"] == "1" for p in props)
    assert props[0]["directory.id"] != props[1]["directory.id"]  # one per dir


def test_new_partitions_go_to_the_dir_with_fewest_logs(broker, dirs):
    with connect(broker) as c:
        create_topic(c, "place", partitions=6)
    counts = {d: len([x for x in d.iterdir() if x.is_dir()]) for d in dirs}
    assert abs(counts[dirs[0]] - counts[dirs[1]]) <= 1, counts
    assert sorted(p for d in dirs for p in range(6) if (d / f"place-{p}").is_dir()) == list(range(6))


def test_alter_replica_log_dirs_errors(broker, dirs):
    with connect(broker) as c:
        create_topic(c, "errs", partitions=1)
        here = holder(dirs, "errs", 0)
        other = dirs[1] if here == dirs[0] else dirs[0]
        long_name = "x" * 249
        codes = alter(c, {("errs", 0): here}, version=1)
        assert codes == {("errs", 0): E.NONE}  # already there: nothing to move
        assert alter(c, {("errs", 0): dirs[0].parent / "nowhere"}) == {("errs", 0): LOG_DIR_NOT_FOUND}
        assert alter(c, {(long_name, 0): other}) == {(long_name, 0): E.INVALID_TOPIC_EXCEPTION}
        # Not hosted here: REPLICA_NOT_AVAILABLE, and the dir is remembered for its creation.
        assert alter(c, {("later", 0): other}) == {("later", 0): E.REPLICA_NOT_AVAILABLE}
        create_topic(c, "later", partitions=1)
    assert holder(dirs, "later", 0) == other


def test_a_replica_moves_while_records_are_appended(broker, dirs):
    topic = "moving"
    with connect(broker) as c:
        create_topic(c, topic, partitions=1)
        source = holder(dirs, topic, 0)
        dest = dirs[1] if source == dirs[0] else dirs[0]
        for i in range(200):  # ~100 KB in 200 batches: turns of 4 KB (replica.fetch.max.bytes)
            assert produce(c, topic, batch([b"%04d" % i + b"." * 500])).error_code == E.NONE
        assert alter(c, {(topic, 0): dest}) == {(topic, 0): E.NONE}
        seen_future = False
        i = 200
        # Appends while it moves (faster than its 200 KB/s: it catches up once they stop).
        while broker.log_manager.get_future_log(topic, 0) is not None and i < 400:
            seen_future |= any(k == (topic, 0, True) for k in describe(c)[str(dest.absolute())][1])
            assert produce(c, topic, batch([b"%04d" % i + b"." * 500])).error_code == E.NONE
            i += 1
        assert wait_for(lambda: broker.log_manager.get_future_log(topic, 0) is None, timeout=20), \
            "the move did not finish"
        assert seen_future and i > 200  # moved in turns (200 KB/s), appends going on meanwhile
        assert produce(c, topic, batch([b"%04d" % i])).error_code == E.NONE
        records, _ = read_log(c, topic)
        assert [r.value[:4] for r in records] == [b"%04d" % n for n in range(i + 1)]
        assert [r.offset for r in records] == list(range(i + 1))
        assert describe(c)[str(dest.absolute())][1][(topic, 0, False)] == 0
    assert broker.log_manager.dir_of(topic, 0) == dest
    assert (dest / f"{topic}-0").is_dir()
    assert not [p for p in dest.iterdir() if p.name.endswith("-future")]
    # The old log's directory is renamed -delete at once and removed after file.delete.delay.ms.
    assert not (source / f"{topic}-0").exists()
    assert wait_for(lambda: not [p for p in source.iterdir() if p.name.startswith(f"{topic}-0.")], timeout=10)


def test_a_failed_dir_takes_only_its_partitions_offline(broker, dirs):
    with connect(broker) as c:
        create_topic(c, "fails", partitions=4, segment_bytes="1024")
        failing = holder(dirs, "fails", 0)
        ok = dirs[1] if failing == dirs[0] else dirs[0]
        on_failing = [p for p in range(4) if (failing / f"fails-{p}").is_dir()]
        on_ok = [p for p in range(4) if (ok / f"fails-{p}").is_dir()]
        assert on_failing and on_ok
        # Kafka's LogDirFailureTest: the dir is removed and a file takes its place; the next roll fails.
        replace_with_a_file(failing)
        p = on_failing[0]
        codes = [produce(c, "fails", batch([b"y" * 600]), partition=p).error_code for _ in range(3)]
        assert E.KAFKA_STORAGE_ERROR in codes
        assert wait_for(lambda: describe(c)[str(failing.absolute())][0] == E.KAFKA_STORAGE_ERROR, timeout=10)
        assert describe(c)[str(failing.absolute())][1] == {}
        assert describe(c)[str(ok.absolute())][0] == E.NONE
        assert produce(c, "fails", batch([b"z"]), partition=p).error_code == E.KAFKA_STORAGE_ERROR
        assert fetch_one(c, "fails", p, 0).error_code == E.KAFKA_STORAGE_ERROR
        assert list_offset(c, "fails", p, EARLIEST).error_code == E.KAFKA_STORAGE_ERROR
        # The other dir serves on: appends, rolls, reads.
        for q in on_ok:
            for _ in range(3):
                assert produce(c, "fails", batch([b"w" * 600]), partition=q).error_code == E.NONE
            assert len(read_log(c, "fails", q)[0]) == 3
        # No move to, nor any future log while, a dir is offline.
        assert alter(c, {("fails", on_ok[0]): failing}) == {("fails", on_ok[0]): E.KAFKA_STORAGE_ERROR}
        assert alter(c, {("fails", p): ok}) == {("fails", p): E.KAFKA_STORAGE_ERROR}
    assert broker.log_manager.offline_dirs == [failing]
    assert broker.fatal is None  # the broker stays up
