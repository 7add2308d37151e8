"""The ReplicaAlterLogDirsThread's work, one turn at a time (the thread not started): a future log
filled from the current one and swapped in, brought back into agreement after the current log
was truncated and rewritten in a new leader epoch, the copy throttled, the rate changed live."""

from __future__ import annotations

import uuid

import pytest

from kafkalite.common.errors import ConfigError
from kafkalite.server.replication.alter_log_dirs import RATE_SETTING, ReplicaAlterLogDirsThread
from kafkalite.server.replication.partition import Partition, PartitionState
from kafkalite.storage.log import FetchIsolation, Log
from kafkalite.storage.log_manager import LogManager
from tests.support.batches import batch


def append(log: Log, count: int, epoch: int) -> None:
    log.append_as_leader(batch(count, epoch=-1, value_size=100), epoch)
    log.update_high_watermark(log.log_end_offset)


def everything(log: Log) -> bytes:
    return bytes(log.read(log.log_start_offset, 1 << 24, FetchIsolation.LOG_END).read())


@pytest.fixture
def setup(tmp_path):
    manager = LogManager([tmp_path / "a", tmp_path / "b"])
    current = manager.get_or_create("t", 0)
    partition = Partition("t", 0, uuid.uuid4(), current, 1, PartitionState(1, 0, (1,), (1,), 0), None, 30000)
    thread = ReplicaAlterLogDirsThread(manager, {("t", 0): partition}.get, chunk_bytes=300)
    yield manager, partition, thread
    manager.shutdown()


def test_a_future_log_is_filled_and_swapped_in(setup, tmp_path):
    manager, partition, thread = setup
    for _ in range(10):
        append(partition.log, 2, 0)  # batches of ~270 bytes
    before = everything(partition.log)
    manager.get_or_create_future("t", 0, tmp_path / "b")
    thread.add_partitions([("t", 0)])
    turns = 0
    while thread.moving():
        assert thread._move_once(("t", 0))
        turns += 1
    assert turns > 1  # chunks of 300 bytes: several turns
    assert partition.log.dir == tmp_path / "b" / "t-0" and manager.get_log("t", 0) is partition.log
    assert everything(partition.log) == before and thread.swaps == 1
    assert thread.bytes_copied == len(before)


def test_the_future_log_follows_a_truncation_of_the_current_one(setup, tmp_path):
    manager, partition, thread = setup
    current = partition.log
    append(current, 3, 0)
    append(current, 3, 0)
    future = manager.get_or_create_future("t", 0, tmp_path / "b")
    thread._copy(current, future, 1 << 20)
    assert future.log_end_offset == 6
    # A new leader's log replaced the last batch (an unclean election, say): epoch 1 from 3.
    current.truncate_to(3)
    current.maybe_assign_epoch_start_offset(1, 3)
    append(current, 5, 1)
    thread._copy(current, future, 1 << 20)
    assert everything(future) == everything(current)
    assert future.end_offset_for_epoch(0) == current.end_offset_for_epoch(0) == (3, 0)
    # And a log start moved past the whole copy (retention, DeleteRecords): it starts over there.
    append(current, 2, 1)
    current.maybe_increment_log_start_offset(current.log_end_offset)
    stale = manager.get_or_create_future("t", 0, tmp_path / "a")  # another destination: a new future log
    assert stale.log_end_offset == 0 and manager.get_future_log("t", 0) is stale
    thread._copy(current, stale, 1 << 20)
    assert stale.log_start_offset == stale.log_end_offset == current.log_end_offset


def test_the_copy_rate_is_a_live_setting(setup):
    _, _, thread = setup
    with pytest.raises(ConfigError, match=RATE_SETTING):
        thread.validate_reconfiguration({RATE_SETTING: 0})
    thread.validate_reconfiguration({RATE_SETTING: 1000})
    thread.reconfigure({RATE_SETTING: 2**63 - 1}, {RATE_SETTING: 1000})
    assert thread.max_bytes_per_second == 1000
    assert thread._allowance() == 300  # a chunk at most
    thread.reconfigure({}, {RATE_SETTING: 100})
    assert thread._allowance() == 100  # a second's worth at most
