"""The log manager with several log dirs (JBOD): placement over online dirs with future logs
counted, future logs created, loaded again after a restart and swapped in, and dirs going offline
(at load, and when a checkpoint cannot be written): the failure channel hears of each once."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalite.storage.checkpoint import TopicPartition
from kafkalite.storage.log import FetchIsolation, Log
from kafkalite.storage.log_dir_failure import KafkaStorageError
from kafkalite.storage.log_manager import LogManager
from tests.support.batches import batch
from tests.support.failed_dir import replace_with_a_file


def append(log: Log, count: int = 3, epoch: int = 0) -> None:
    log.append_as_leader(batch(count, epoch=-1), epoch)
    log.update_high_watermark(log.log_end_offset)


def copy(current: Log, future: Log) -> None:
    while future.log_end_offset < current.log_end_offset:
        future.append_as_follower(current.read(future.log_end_offset, 1 << 20, FetchIsolation.LOG_END).read())


def test_placement_counts_future_logs_and_skips_offline_dirs(tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    manager = LogManager([a, b])
    assert manager.get_or_create("t", 0).dir.parent == a
    manager.get_or_create_future("t", 0, b)  # b holds a future log: as loaded as a
    assert manager.get_or_create("t", 1).dir.parent == a
    assert manager.get_or_create("t", 2).dir.parent == b
    manager.preferred_dirs[TopicPartition("t", 3)] = a  # AlterReplicaLogDirs before the partition came
    assert manager.get_or_create("t", 3).dir.parent == a
    manager.shutdown()
    replace_with_a_file(b)
    again = LogManager([a, b, c])
    assert again.offline_dirs == [b] and again.online_dirs == [a, c]
    assert again.failure_channel.take_next_offline_log_dir(0) == b
    assert again.get_log("t", 2) is None and again.get_future_log("t", 0) is None
    assert again.get_or_create("u", 0).dir.parent == c  # the fewest among the online dirs
    with pytest.raises(KafkaStorageError, match="are offline"):
        again.get_or_create("t", 2, is_new=False)  # its log may be on the offline dir
    again.shutdown()


def test_every_dir_offline_at_load_is_refused(tmp_path):
    only = tmp_path / "only"
    only.parent.mkdir(exist_ok=True)
    only.write_text("not a dir")
    with pytest.raises(KafkaStorageError, match="all log dirs"):
        LogManager([only])


def test_a_future_log_is_loaded_again_and_swapped_in(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    manager = LogManager([a, b])
    current = manager.get_or_create("t", 0)
    append(current, 5)
    future = manager.get_or_create_future("t", 0, b)
    assert future.dir.parent == b
    assert future.dir.name.startswith("t-0.") and future.dir.name.endswith("-future")
    copy(current, future)
    manager.shutdown()
    # After a restart: both logs, the future one where it was, its records kept.
    again = LogManager([a, b])
    current, future = again.get_log("t", 0), again.get_future_log("t", 0)
    assert current is not None and future is not None
    assert (again.dir_of("t", 0), again.dir_of("t", 0, future=True)) == (a, b)
    assert future.log_end_offset == current.log_end_offset == 5
    current.maybe_assign_epoch_start_offset(3, current.log_end_offset)  # a leadership with no batch yet
    append(current, 2, epoch=3)
    copy(current, future)
    swapped = again.replace_current_with_future("t", 0)
    assert swapped.dir == b / "t-0" and again.get_log("t", 0) is swapped
    assert again.get_future_log("t", 0) is None and again.dir_of("t", 0) == b
    assert swapped.log_end_offset == 7 and swapped.high_watermark == 7
    assert swapped.latest_epoch == 3
    assert not (a / "t-0").exists()  # renamed -delete at once
    (deleted,) = [p.name for p in a.iterdir() if p.name.startswith("t-0.")]
    assert deleted.endswith("-delete")
    assert again.delete_logs(force=True) == 1
    assert not [p for p in a.iterdir() if p.name.startswith("t-0")]
    read = swapped.read(0, 1 << 20, FetchIsolation.LOG_END).read()
    assert len(read) == current.size
    again.shutdown()
    third = LogManager([a, b])
    assert third.dir_of("t", 0) == b and third.get_future_log("t", 0) is None
    assert third.get_log("t", 0).log_end_offset == 7
    third.shutdown()


def test_a_checkpoint_that_cannot_be_written_takes_its_dir_offline(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    manager = LogManager([a, b])
    append(manager.get_or_create("t", 0))
    append(manager.get_or_create("t", 1))
    replace_with_a_file(Path(manager.dir_of("t", 1)))
    manager.checkpoint_high_watermarks()  # no exception: the dir goes offline, the other is written
    assert manager.offline_dirs == [b]
    assert manager.failure_channel.take_next_offline_log_dir(0) == b
    manager.checkpoint_recovery_offsets()
    assert manager.failure_channel.take_next_offline_log_dir(0) is None  # reported once
    current, future = manager.handle_log_dir_failure(b)
    assert (current, future) == ([TopicPartition("t", 1)], [])
    assert manager.get_log("t", 1) is None and manager.get_log("t", 0) is not None
    assert (a / "replication-offset-checkpoint").read_text().splitlines()[2:] == ["t 0 3"]
    manager.shutdown()
    assert (a / ".kafka_cleanshutdown").exists()


def test_io_takes_its_dir_offline_on_an_os_error_and_refuses_work_there_after(tmp_path):
    # LogManager.io is a class (it wraps every append and read): what its generator did, it does.
    a, b = tmp_path / "a", tmp_path / "b"
    manager = LogManager([a, b])
    with manager.io(a, "appending to t-0"):
        pass  # online: nothing happens
    with pytest.raises(ValueError), manager.io(a, "appending to t-0"):
        raise ValueError("not an I/O error")  # passes through, the dir stays online
    with pytest.raises(KafkaStorageError, match="Error while appending to t-0 in dir") as raised, \
            manager.io(a, "appending to t-0"):
        raise OSError(5, "Input/output error")
    assert isinstance(raised.value.__cause__, OSError)
    assert manager.offline_dirs == [a] and manager.failure_channel.take_next_offline_log_dir(0) == a
    with pytest.raises(KafkaStorageError, match=r"reading from t-0: log dir .* is offline"), \
            manager.io(a, "reading from t-0"):
        pytest.fail("entered an offline dir")
    with pytest.raises(KafkaStorageError, match="already"), manager.io(b, "writing"):
        raise KafkaStorageError("already a storage error")  # passes through as it is
    assert manager.offline_dirs == [a] and manager.is_online(b) and manager.is_online(str(b))
    manager.shutdown()
