from __future__ import annotations

import os
import re

import pytest

from kafkalite.storage.checkpoint import (
    CheckpointError,
    CleanShutdownFile,
    EpochEntry,
    LeaderEpochCheckpointFile,
    OffsetCheckpointFile,
    TopicPartition,
)


def test_offset_checkpoint_is_kafkas_text_format(tmp_path):
    path = tmp_path / "recovery-point-offset-checkpoint"
    OffsetCheckpointFile(path).write({TopicPartition("tp1", 0): 1, TopicPartition("my-topic", 12): 42})
    # OffsetCheckpointFile's javadoc: version, count, then "TOPIC PARTITION OFFSET" lines
    assert path.read_bytes() == b"0\n2\ntp1 0 1\nmy-topic 12 42\n"


def test_offset_checkpoint_round_trips_and_reads_kafka_written_files(tmp_path):
    path = tmp_path / "replication-offset-checkpoint"
    offsets = {TopicPartition(f"t-{i}", i): i * 1000 for i in range(50)}
    OffsetCheckpointFile(path).write(offsets)
    assert OffsetCheckpointFile(path).read() == offsets
    # Kafka splits entries on any whitespace
    path.write_text("0\n1\nfoo  3\t17\n")
    assert OffsetCheckpointFile(path).read() == {TopicPartition("foo", 3): 17}


def test_absent_or_empty_checkpoint_has_no_entries(tmp_path):
    assert OffsetCheckpointFile(tmp_path / "absent").read() == {}
    (tmp_path / "empty").write_text("")
    assert OffsetCheckpointFile(tmp_path / "empty").read() == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1\n0\n", "Unrecognised version"),
        ("0\n2\nt 0 1\n", "Expected [2] entries"),
        ("0\n1\nt 0\n", "Malformed line"),
        ("0\nx\n", "Malformed line"),
        ("0\n1\nt zero 1\n", "Malformed line"),
    ],
)
def test_bad_checkpoints_are_refused(tmp_path, text, message):
    path = tmp_path / "cp"
    path.write_text(text)
    with pytest.raises(CheckpointError, match=re.escape(message)):
        OffsetCheckpointFile(path).read()


def test_leader_epoch_checkpoint_format(tmp_path):
    path = tmp_path / "leader-epoch-checkpoint"
    LeaderEpochCheckpointFile(path).write([EpochEntry(0, 0), EpochEntry(3, 120)])
    assert path.read_bytes() == b"0\n2\n0 0\n3 120\n"
    assert LeaderEpochCheckpointFile(path).read() == [EpochEntry(0, 0), EpochEntry(3, 120)]


def test_write_goes_through_a_tmp_file_and_a_rename(tmp_path, monkeypatch):
    """A crash before the rename leaves the old file whole: the new content is written to .tmp,
    fsynced, and only then renamed over the old file."""
    path = tmp_path / "log-start-offset-checkpoint"
    cp = OffsetCheckpointFile(path)
    cp.write({TopicPartition("a", 0): 1})
    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def replace(src, dst) -> None:
        events.append(("replace", f"{src}->{dst}"))
        raise OSError("crash before the rename")

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="crash"):
        cp.write({TopicPartition("a", 0): 2})
    assert events == [("fsync", f"{path}.tmp"), ("replace", f"{path}.tmp->{path}")]
    assert cp.read() == {TopicPartition("a", 0): 1}  # the old content survives
    monkeypatch.setattr(os, "replace", real_replace)
    cp.write({TopicPartition("a", 0): 3})
    assert cp.read() == {TopicPartition("a", 0): 3}
    assert not (tmp_path / "log-start-offset-checkpoint.tmp").exists()


def test_clean_shutdown_marker(tmp_path):
    marker = CleanShutdownFile(tmp_path)
    assert not marker.exists() and marker.read() is None
    marker.write(broker_epoch=7)
    assert (tmp_path / ".kafka_cleanshutdown").read_text() == '{"version":0,"brokerEpoch":7}'
    assert marker.read() == 7
    marker.delete()
    assert not marker.exists()
    marker.delete()  # absent: nothing to do
