"""DescribeLogDirs on the wire: a real broker with two log dirs at each version, every partition
(null topics) against named ones, partition sizes that are exactly the batches produced, each
partition in the dir that holds it, the volume's bytes on disk and in memory, a dir that cannot
be asked; then kafka-python's KafkaAdminClient.describe_log_dirs() against a kafkalite.testing
Cluster with its logs on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import describe_log_dirs as dld
from kafkalite.server.handlers import log_dirs
from tests.support.brokers import connect, running_broker
from tests.support.raw_requests import batch, create_topic, produce

DESCRIBE_LOG_DIRS = 35
VERSIONS = (1, 2, 3, 4)  # v0 removed in Kafka 4.0 (KIP-896): not served
T = dld.DESCRIBABLE_LOG_DIR_TOPIC


def _every(version: int = 4):
    return dld.REQUEST(topics=None)


def _named(**topics: list[int]):
    return dld.REQUEST(topics=[T(topic=name, partitions=ps) for name, ps in topics.items()])


def _partitions(response) -> dict[tuple[str, str, int], tuple[int, int, bool]]:
    """{(dir, topic, partition): (size, lag, future)}."""
    return {(r.log_dir, t.name, p.partition_index): (p.partition_size, p.offset_lag, p.is_future_key)
            for r in response.results for t in r.topics for p in t.partitions}


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    base = tmp_path_factory.mktemp("describe-log-dirs")
    return [base / "a", base / "b"]


@pytest.fixture(scope="module")
def broker(dirs):
    with running_broker(dirs[0].parent, log_dirs=",".join(str(d) for d in dirs)) as b:
        with connect(b) as c:
            create_topic(c, "spread", partitions=2)
        yield b


def _dir_of(dirs: list[Path], topic: str, partition: int) -> str:
    (holder,) = [d for d in dirs if (d / f"{topic}-{partition}").is_dir()]
    return str(holder.absolute())


@pytest.mark.parametrize("version", VERSIONS)
def test_each_version_lists_both_dirs_and_every_partition(broker, dirs, version):
    with connect(broker) as c:
        r = c.call(DESCRIBE_LOG_DIRS, version, _every())
    assert r.throttle_time_ms == 0 and r.error_code == E.NONE
    assert [(x.log_dir, x.error_code) for x in r.results] == [(str(d.absolute()), E.NONE) for d in dirs]
    found = _partitions(r)
    for p in (0, 1):
        assert found[(_dir_of(dirs, "spread", p), "spread", p)][1:] == (0, False)
    # The fewest-logs placement put the two partitions in different dirs.
    assert {_dir_of(dirs, "spread", p) for p in (0, 1)} == {str(d.absolute()) for d in dirs}
    for result in r.results:
        if version >= 4:
            assert result.total_bytes > 0 and 0 < result.usable_bytes <= result.total_bytes
        else:
            assert (result.total_bytes, result.usable_bytes) == (-1, -1)  # not on the wire


def test_named_partitions_only_and_unknown_ones_absent(broker, dirs):
    with connect(broker) as c:
        r = c.call(DESCRIBE_LOG_DIRS, 4, _named(spread=[1, 7], nowhere=[0]))
    assert _partitions(r).keys() == {(_dir_of(dirs, "spread", 1), "spread", 1)}
    # As Kafka answers: a topic with a log in the dir is listed there, with the partitions asked.
    by_dir = {x.log_dir: {t.name: [p.partition_index for p in t.partitions] for t in x.topics}
              for x in r.results}
    assert by_dir[_dir_of(dirs, "spread", 0)]["spread"] == []
    assert by_dir[_dir_of(dirs, "spread", 1)]["spread"] == [1]
    assert all("nowhere" not in topics for topics in by_dir.values())
    with connect(broker) as c:
        none = c.call(DESCRIBE_LOG_DIRS, 1, _named())
    assert _partitions(none) == {} and len(none.results) == 2


@pytest.mark.parametrize("version", [1, 4])
def test_sizes_are_the_bytes_produced(broker, dirs, version):
    topic = f"grow-v{version}"
    with connect(broker) as c:
        create_topic(c, topic, partitions=1)
        key = (_dir_of(dirs, topic, 0), topic, 0)
        assert _partitions(c.call(DESCRIBE_LOG_DIRS, version, _named(**{topic: [0]})))[key] == (0, 0, False)
        written = 0
        for values in ([b"one"], [b"two", b"three" * 40], [None]):
            records = batch(values)
            assert produce(c, topic, records).error_code == E.NONE
            written += len(records)
            got = _partitions(c.call(DESCRIBE_LOG_DIRS, version, _named(**{topic: [0]})))
            assert got == {key: (written, 0, False)}
        every = _partitions(c.call(DESCRIBE_LOG_DIRS, version, _every()))
    assert every[key] == (written, 0, False)
    log = broker.log_manager.get_log(topic, 0)
    assert log is not None and log.size == written


def test_a_dir_whose_file_system_cannot_be_asked_is_a_storage_error(broker, dirs, monkeypatch):
    broken = dirs[1]
    real = log_dirs.volume_bytes

    def volume_bytes(path):
        if Path(path) == broken:
            raise OSError("no such volume")
        return real(path)

    monkeypatch.setattr(log_dirs, "volume_bytes", volume_bytes)
    with connect(broker) as c:
        r = c.call(DESCRIBE_LOG_DIRS, 4, _every())
    good, bad = r.results
    assert (good.error_code, bad.error_code) == (E.NONE, E.KAFKA_STORAGE_ERROR)
    assert bad.log_dir == str(broken.absolute()) and bad.topics == []
    assert (bad.total_bytes, bad.usable_bytes) == (-1, -1)
    assert good.total_bytes > 0


def test_memory_storage_reports_unknown_volume_bytes(tmp_path):
    with running_broker(tmp_path, log_storage="memory") as b, connect(b) as c:
        create_topic(c, "m", partitions=1)
        records = batch([b"x" * 100])
        assert produce(c, "m", records).error_code == E.NONE
        r = c.call(DESCRIBE_LOG_DIRS, 4, _every())
    (result,) = r.results
    assert (result.error_code, result.log_dir) == (E.NONE, str(tmp_path.absolute()))
    assert (result.total_bytes, result.usable_bytes) == (-1, -1)
    assert _partitions(r)[(result.log_dir, "m", 0)] == (len(records), 0, False)


# --- a real admin client --------------------------------------------------------------------------

@pytest.mark.integration
def test_kafka_python_describe_log_dirs():
    from kafka import KafkaAdminClient

    from kafkalite.testing import Cluster

    with Cluster(1, storage="files") as cluster:
        cluster.create_topic("admin-dirs", partitions=3)
        admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=20000)
        try:
            with cluster.capture() as seen:
                every = admin.describe_log_dirs()
                named = admin.describe_log_dirs({"admin-dirs": [2]})
        finally:
            admin.close()
        (broker_id,) = cluster.nodes
        broker = cluster.broker(broker_id)
        expected_dirs = [str(Path(d).absolute()) for d in broker.config.log_dirs]
    (answer,) = every
    assert answer["broker"] == broker_id
    assert [d["log_dir"] for d in answer["log_dirs"]] == expected_dirs
    for d in answer["log_dirs"]:
        assert d["error_code"] == 0
        assert d["total_bytes"] > 0 and 0 < d["usable_bytes"] <= d["total_bytes"]  # v4, on disk
    partitions = {(t["name"], p["partition_index"]) for d in answer["log_dirs"] for t in d["topics"]
                  for p in t["partitions"]}
    assert {("admin-dirs", i) for i in range(3)} <= partitions
    (answer,) = named
    assert {(t["name"], p["partition_index"]) for d in answer["log_dirs"] for t in d["topics"]
            for p in t["partitions"]} == {("admin-dirs", 2)}
    versions = {r.api_version for r in seen if r.api_key == DESCRIBE_LOG_DIRS}
    assert versions == {4}  # min(kafka-python's newest, ours)
