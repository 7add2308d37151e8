from __future__ import annotations

import pytest

from kafkalite.storage import segment as segment_module
from kafkalite.storage.checkpoint import OffsetCheckpointFile, TopicPartition
from kafkalite.storage.config import LogConfig
from kafkalite.storage.log import FetchIsolation
from kafkalite.storage.log_manager import LogManager
from tests.support.batches import batch


class Clock:
    def __init__(self, now: int = 10_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def produce(manager: LogManager, topic: str, partition: int, count: int = 2, timestamp: int = 1_000) -> None:
    log = manager.get_or_create(topic, partition)
    log.append_as_leader(batch(count, timestamp=timestamp, epoch=-1), 0)
    log.update_high_watermark(log.log_end_offset)


def test_layout_under_the_log_dirs(tmp_path):
    dirs = [tmp_path / "a", tmp_path / "b"]
    manager = LogManager(dirs)
    for partition in range(4):
        produce(manager, "orders", partition)
    manager.shutdown(broker_epoch=12)
    # new logs go to the dir with the fewest
    assert sorted(p.name for p in dirs[0].iterdir()) == [
        ".kafka_cleanshutdown", "log-start-offset-checkpoint", "orders-0", "orders-2",
        "recovery-point-offset-checkpoint", "replication-offset-checkpoint",
    ]
    assert sorted(p.name for p in (dirs[0] / "orders-0").iterdir()) == [
        "00000000000000000000.index", "00000000000000000000.log", "00000000000000000000.timeindex",
        "00000000000000000002.snapshot", "leader-epoch-checkpoint",
    ]  # the producer snapshot at the log end offset, written by a clean shutdown
    assert (dirs[1] / "recovery-point-offset-checkpoint").read_text() == "0\n2\norders 1 2\norders 3 2\n"
    assert (dirs[1] / "replication-offset-checkpoint").read_text() == "0\n2\norders 1 2\norders 3 2\n"
    assert (dirs[1] / "log-start-offset-checkpoint").read_text() == "0\n2\norders 1 0\norders 3 0\n"
    assert (dirs[0] / "orders-0" / "leader-epoch-checkpoint").read_text() == "0\n1\n0 0\n"


def test_restart_after_a_clean_shutdown_skips_recovery(tmp_path, monkeypatch):
    manager = LogManager([tmp_path])
    produce(manager, "t", 0, count=3)
    produce(manager, "t", 0, count=3)
    manager.shutdown()

    def no_scan(self, cache=None):
        raise AssertionError("recovered after a clean shutdown")

    monkeypatch.setattr(segment_module.LogSegment, "recover", no_scan)
    again = LogManager([tmp_path])
    log = again.get_log("t", 0)
    assert log is not None
    assert (log.log_end_offset, log.high_watermark, log.recovery_point) == (6, 6, 6)
    assert not (tmp_path / ".kafka_cleanshutdown").exists()  # a crash from now on is unclean


def test_restart_without_the_marker_recovers_from_the_recovery_point(tmp_path):
    config = LogConfig(segment_bytes=2 * len(batch(2)))
    manager = LogManager([tmp_path], lambda topic: config)
    for _ in range(5):
        produce(manager, "t", 0)
    log = manager.get_log("t", 0)
    assert log is not None and log.num_segments == 3
    manager.flush_rolled()  # the rolled segments are on disk: the recovery point moves to 8
    recovery_points = OffsetCheckpointFile(tmp_path / "recovery-point-offset-checkpoint").read()
    assert recovery_points == {TopicPartition("t", 0): 8}
    manager.checkpoint_high_watermarks()
    log.close_handlers()  # killed
    tail = tmp_path / "t-0" / f"{8:020d}.log"
    tail.write_bytes(tail.read_bytes()[:-3])
    again = LogManager([tmp_path], lambda topic: config)
    recovered = again.get_log("t", 0)
    assert recovered is not None
    assert (recovered.log_end_offset, recovered.high_watermark) == (8, 8)  # hw kept within the log


def test_topic_configs_and_retention_check(tmp_path):
    clock = Clock()
    short = LogConfig(segment_bytes=len(batch(2)), retention_ms=1000, file_delete_delay_ms=0)
    manager = LogManager([tmp_path], now_ms=clock)
    manager.get_or_create("short", 0, short)
    for _ in range(3):
        produce(manager, "short", 0, timestamp=clock.now - 5000)
        produce(manager, "long", 0, timestamp=clock.now - 5000)
    assert manager.cleanup_logs() == 3  # all of short's (it rolls to keep one), none of long's
    short_log, long_log = manager.get_log("short", 0), manager.get_log("long", 0)
    assert short_log is not None and long_log is not None
    assert (short_log.log_start_offset, short_log.num_segments) == (6, 1)
    assert long_log.log_start_offset == 0
    manager.update_config("long", short)
    assert manager.cleanup_logs() == 1
    manager.checkpoint_log_start_offsets()
    assert OffsetCheckpointFile(tmp_path / "log-start-offset-checkpoint").read() == {
        TopicPartition("short", 0): 6, TopicPartition("long", 0): 6,
    }


def test_delete_removes_the_directory_and_the_checkpoint_entries(tmp_path):
    clock = Clock()
    manager = LogManager([tmp_path], lambda _: LogConfig(file_delete_delay_ms=60_000), now_ms=clock)
    produce(manager, "gone", 0)
    produce(manager, "kept", 0)
    manager.checkpoint_recovery_offsets()
    sending = manager.get_log("gone", 0).read(0, 1 << 20)  # a response still sending from it
    assert manager.delete("gone", 0)
    assert not (tmp_path / "gone-0").exists()
    (renamed,) = tmp_path.glob("gone-0.*-delete")
    # Until file.delete.delay.ms its files stay open: a slice being sent still reads right.
    assert manager.delete_logs() == 0 and len(sending.read()) == sending.size > 0
    clock.now += 60_000
    assert manager.delete_logs() == 1 and not renamed.exists()
    assert manager.get_log("gone", 0) is None and not manager.delete("gone", 0)
    assert set(OffsetCheckpointFile(tmp_path / "recovery-point-offset-checkpoint").read()) == {
        TopicPartition("kept", 0)
    }
    fresh = manager.get_or_create("gone", 0)  # the name can be used again
    assert fresh.log_end_offset == 0


def test_other_entries_of_a_log_dir_are_left_alone(tmp_path):
    (tmp_path / "meta.properties").write_text("node.id=1\n")
    (tmp_path / "controller.db").write_bytes(b"")
    (tmp_path / "t-0.abc123-delete").mkdir()
    manager = LogManager([tmp_path])
    assert manager.all_logs() == {}
    assert (tmp_path / "meta.properties").exists() and (tmp_path / "controller.db").exists()
    # A directory deleted before the last stop is removed at the start, as Kafka does.
    assert not (tmp_path / "t-0.abc123-delete").exists()


def test_reads_after_a_restart_return_the_same_bytes(tmp_path):
    manager = LogManager([tmp_path])
    for i in range(20):
        produce(manager, "t", 1, count=1 + i % 3)
    log = manager.get_log("t", 1)
    assert log is not None
    before = log.read(0, 1 << 20).read()
    manager.shutdown()
    again = LogManager([tmp_path]).get_log("t", 1)
    assert again is not None
    assert again.read(0, 1 << 20).read() == before
    assert again.read(0, 1 << 20, FetchIsolation.LOG_END).read() == before


def test_no_log_dirs(tmp_path):
    with pytest.raises(ValueError):
        LogManager([])
