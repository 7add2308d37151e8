from __future__ import annotations

from kafkalite.storage.checkpoint import EpochEntry, LeaderEpochCheckpointFile
from kafkalite.storage.leader_epoch import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, LeaderEpochFileCache

UNDEFINED = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)


def cache(tmp_path) -> LeaderEpochFileCache:
    return LeaderEpochFileCache(LeaderEpochCheckpointFile(tmp_path / "leader-epoch-checkpoint"))


def test_assign_is_written_at_once_and_read_back(tmp_path):
    c = cache(tmp_path)
    c.assign(2, 6)
    c.assign(2, 9)  # the same epoch later on: nothing new
    c.assign(4, 11)
    assert (tmp_path / "leader-epoch-checkpoint").read_text() == "0\n2\n2 6\n4 11\n"
    assert cache(tmp_path).entries() == [EpochEntry(2, 6), EpochEntry(4, 11)]
    assert c.latest_epoch == 4 and c.earliest_entry == EpochEntry(2, 6)


def test_end_offset_for_an_epoch(tmp_path):
    """OffsetForLeaderEpoch's answers (LeaderEpochFileCache.endOffsetFor)."""
    c = cache(tmp_path)
    assert c.end_offset_for(0, 0) == UNDEFINED
    c.assign(5, 10)
    c.assign(7, 20)
    c.assign(9, 35)
    log_end = 50
    assert c.end_offset_for(9, log_end) == (9, 50)  # the latest epoch ends at the log end
    assert c.end_offset_for(7, log_end) == (7, 35)
    assert c.end_offset_for(8, log_end) == (7, 35)  # unknown epoch: the one below, ended by the next
    assert c.end_offset_for(3, log_end) == (3, 10)  # older than all: the first known start
    assert c.end_offset_for(10, log_end) == UNDEFINED
    assert c.end_offset_for(UNDEFINED_EPOCH, log_end) == UNDEFINED


def test_assign_removes_entries_it_contradicts(tmp_path):
    c = cache(tmp_path)
    c.assign(2, 6)
    c.assign(3, 8)
    c.assign(4, 7)  # starts before epoch 3 did: epoch 3 is gone
    assert c.entries() == [EpochEntry(2, 6), EpochEntry(4, 7)]
    c.assign(1, 20)  # an older epoch later in the log replaces everything at or above it
    assert c.entries() == [EpochEntry(1, 20)]
    c.assign(1, 15)  # the same epoch starting earlier moves its start
    assert c.entries() == [EpochEntry(1, 15)]


def test_truncation_from_either_end(tmp_path):
    c = cache(tmp_path)
    for epoch, start in [(0, 0), (1, 10), (2, 20), (3, 30)]:
        c.assign(epoch, start)
    c.truncate_from_end(20)
    assert c.entries() == [EpochEntry(0, 0), EpochEntry(1, 10)]
    c.truncate_from_end(100)  # nothing starts at or past it
    assert c.entries() == [EpochEntry(0, 0), EpochEntry(1, 10)]
    c.truncate_from_start(12)
    assert c.entries() == [EpochEntry(1, 12)]
    assert cache(tmp_path).entries() == [EpochEntry(1, 12)]
    c.truncate_from_start(5)  # below the first entry: nothing changes
    assert c.entries() == [EpochEntry(1, 12)]


def test_epoch_for_offset(tmp_path):
    c = cache(tmp_path)
    c.assign(1, 10)
    c.assign(4, 30)
    assert [c.epoch_for_offset(o) for o in (5, 10, 29, 30, 1000)] == [None, 1, 1, 4, 4]
