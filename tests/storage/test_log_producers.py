"""Idempotent producers in the Log: duplicates, refused batches, and the producer state kept
identical across a clean close, a crash, truncation and retention (snapshots and replay)."""

from __future__ import annotations

import json
import logging
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kafkalite.storage.config import LogConfig
from kafkalite.storage.errors import InvalidProducerEpochError, OutOfOrderSequenceError
from kafkalite.storage.log import Log, LogAppendInfo
from kafkalite.storage.log_manager import LogManager
from kafkalite.storage.producer_state import ProducerStateEntry, decode_snapshot
from tests.support.batches import batch, idempotent

ROOT = Path(__file__).resolve().parents[2]
NOW = 10_000_000
SIZE = len(idempotent(1, 0, 0, count=2))
CONFIG = LogConfig(segment_bytes=3 * SIZE, index_interval_bytes=SIZE, file_delete_delay_ms=0)


class Clock:
    def __init__(self, now: int = NOW) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def open_log(tmp_path: Path, clock: Clock | None = None, config: LogConfig = CONFIG, **kw: object) -> Log:
    return Log(tmp_path / "p-0", config, now_ms=clock or Clock(), **kw)  # type: ignore[arg-type]


def send(log: Log, pid: int, epoch: int, seq: int, count: int = 2, leader_epoch: int = 0) -> LogAppendInfo:
    return log.append_as_leader(idempotent(pid, epoch, seq, count=count, timestamp=NOW), leader_epoch)


def state(log: Log) -> dict[int, ProducerStateEntry]:
    return log.producer_state.active_producers()


def snapshots(log: Log) -> list[int]:
    return sorted(int(p.name[:20]) for p in log.dir.glob("[0-9]*.snapshot"))


def log_bytes(log: Log) -> bytes:
    return b"".join(s.log_path.read_bytes() for s in log.segments())


def produce_many(log: Log, rounds: int = 7) -> dict[int, dict[int, ProducerStateEntry]]:
    """Three producers taking turns, batches of two, with a plain batch now and then; the state
    after each append, by the log end offset it left."""
    states = {log.log_end_offset: state(log)}
    seqs = {1: 0, 2: 100, 3: 0}
    for i in range(rounds):
        for pid in (1, 2, 3):
            send(log, pid, 0 if pid != 3 else 4, seqs[pid])
            seqs[pid] += 2
            states[log.log_end_offset] = state(log)
        if i % 3 == 0:
            log.append_as_leader(batch(1, timestamp=NOW, epoch=-1), 0)
            states[log.log_end_offset] = state(log)
    return states


def test_a_retry_gets_the_original_offsets_and_appends_nothing(tmp_path):
    log = open_log(tmp_path)
    assert send(log, 1, 0, 0) == LogAppendInfo(0, 1, NOW + 1, 1, SIZE)
    send(log, 2, 0, 0)
    send(log, 1, 0, 2, count=3)
    before = log_bytes(log), log.log_end_offset, log.leader_epoch_cache.entries()
    retry = send(log, 1, 0, 0, leader_epoch=5)
    assert retry.duplicate and (retry.first_offset, retry.last_offset) == (0, 1)
    assert retry.max_timestamp == NOW + 1  # the original batch's
    again = send(log, 1, 0, 2, count=3)
    assert again.duplicate and (again.first_offset, again.last_offset) == (4, 6)
    assert (log_bytes(log), log.log_end_offset, log.leader_epoch_cache.entries()) == before
    assert not send(log, 1, 0, 5).duplicate


@pytest.mark.parametrize(
    ("epoch", "seq", "error", "code"),
    [
        (3, 4, OutOfOrderSequenceError, 45),  # a gap
        (3, 0, OutOfOrderSequenceError, 45),  # a restart without a new epoch
        (2, 2, InvalidProducerEpochError, 47),  # a fenced producer
        (4, 2, OutOfOrderSequenceError, 45),  # a new epoch not at 0
    ],
)
def test_refused_batches_leave_the_log_and_the_state_as_they_were(tmp_path, epoch, seq, error, code):
    log = open_log(tmp_path)
    send(log, 1, 3, 0)
    before = log_bytes(log), log.log_end_offset, state(log), log.leader_epoch_cache.entries()
    buf = idempotent(1, epoch, seq, count=3, timestamp=NOW)  # no retry of the first batch (0-1)
    sent = bytes(buf)
    with pytest.raises(error) as e:
        log.append_as_leader(buf, 7)
    assert e.value.code == code
    assert bytes(buf) == sent  # refused before its offset and leader epoch were stamped
    assert (log_bytes(log), log.log_end_offset, state(log), log.leader_epoch_cache.entries()) == before
    assert send(log, 1, 3, 2).first_offset == 2


def test_unknown_producers_start_at_any_sequence_and_new_epochs_at_zero(tmp_path):
    log = open_log(tmp_path)
    assert send(log, 1, 0, 2**31 - 1, count=3).first_offset == 0  # wraps to 0, 1
    assert send(log, 1, 0, 2).first_offset == 3
    assert send(log, 1, 1, 0).first_offset == 5
    assert state(log)[1].producer_epoch == 1


def test_follower_appends_take_the_leaders_word(tmp_path):
    log = open_log(tmp_path)
    send(log, 1, 5, 0)
    # A replica copies what its leader accepted: an older epoch, a gap, all taken as they are.
    copied = batch(2, timestamp=NOW, base_offset=2, producer_id=1, producer_epoch=4, base_sequence=9)
    log.append_as_follower(copied)
    assert state(log)[1].producer_epoch == 4 and state(log)[1].last_seq == 10
    retry = send(log, 1, 4, 9)
    assert retry.duplicate and (retry.first_offset, retry.last_offset) == (2, 3)
    assert send(log, 1, 4, 11).first_offset == 4


def test_each_roll_snapshots_the_state_below_the_new_segment(tmp_path):
    log = open_log(tmp_path)
    states = produce_many(log)
    bases = [s.base_offset for s in log.segments()]
    assert len(bases) > 4 and snapshots(log) == bases[1:]
    for base in bases[1:]:
        name = f"{base:020d}.snapshot"
        assert decode_snapshot((log.dir / name).read_bytes()) == states[base]


def test_a_clean_reopen_loads_the_snapshot_and_replays_nothing(tmp_path, monkeypatch):
    log = open_log(tmp_path)
    produce_many(log)
    before, end = state(log), log.log_end_offset
    log.close()
    assert snapshots(log)[-1] == end

    def no_replay(self, start):
        raise AssertionError(f"replayed from {start} after a clean shutdown")

    monkeypatch.setattr(Log, "_replay_producers", no_replay)
    again = open_log(tmp_path, had_clean_shutdown=True)
    assert state(again) == before
    # all five cached batches of each producer are still recognised
    for pid, entry in before.items():
        assert len(entry.batches) == 5
        for cached in entry.batches:
            retry = send(again, pid, entry.producer_epoch, cached.first_seq)
            assert retry.duplicate and (retry.first_offset, retry.last_offset) == (
                cached.first_offset, cached.last_offset,
            )
    assert again.log_end_offset == end


def test_an_unclean_reopen_replays_from_the_last_roll(tmp_path, monkeypatch):
    log = open_log(tmp_path)
    produce_many(log)
    before, recovery_point = state(log), log.recovery_point
    active = log.active_segment.base_offset
    log.close_handlers()  # killed: no snapshot at the log end
    assert snapshots(log)[-1] == active
    starts = []
    replay = Log._replay_producers

    def spy(self, producers, start, end=None):
        starts.append((start, end))
        replay(self, producers, start, end)

    monkeypatch.setattr(Log, "_replay_producers", spy)
    again = open_log(tmp_path, recovery_point=recovery_point)
    assert state(again) == before
    # Each recovered segment starts from the snapshot at its base (the roll's, or the recovery of
    # the one before): nothing is replayed twice; the active one's end is snapshotted, from which
    # the log's own state loads without a replay.
    assert starts[-1] == (active, active)
    assert all(start == end for start, end in starts)
    assert snapshots(again)[-1] == again.log_end_offset  # the next load replays nothing


CHILD = textwrap.dedent(
    """
    import json, os, signal, sys, time
    from pathlib import Path
    from kafkalite.storage.config import LogConfig
    from kafkalite.storage.log import Log
    from tests.support.batches import idempotent

    log = Log(Path(sys.argv[1]), LogConfig(segment_bytes=2000, index_interval_bytes=300))
    now = time.time_ns() // 1_000_000
    seqs = {}
    for i in range(300):
        pid = i % 7
        count = 1 + i % 3
        log.append_as_leader(idempotent(pid, pid % 2, seqs.get(pid, 0), count=count, timestamp=now), 0)
        seqs[pid] = seqs.get(pid, 0) + count
    state = {pid: [e.producer_epoch, [list(b) for b in e.batches], e.last_timestamp]
             for pid, e in log.producer_state.active_producers().items()}
    print(json.dumps([log.log_end_offset, log.num_segments, state]), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
    """
)


@pytest.mark.integration
def test_a_killed_broker_gets_its_producers_back(tmp_path):
    directory = tmp_path / "p-0"
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(directory)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    end, segments, expected = json.loads(child.stdout)
    assert segments > 5
    log = Log(directory, LogConfig(segment_bytes=2000, index_interval_bytes=300), recovery_point=0)
    assert log.log_end_offset == end
    got = {
        str(pid): [e.producer_epoch, [list(b) for b in e.batches], e.last_timestamp]
        for pid, e in state(log).items()
    }
    assert got == expected and len(got) == 7


def test_truncation_brings_back_the_state_of_what_is_left(tmp_path):
    log = open_log(tmp_path)
    states = produce_many(log)
    ends = sorted(states)
    for target in (ends[-3], ends[-3] - 1, ends[len(ends) // 2] + 1, ends[4]):
        assert log.truncate_to(target)
        end = log.log_end_offset
        assert end <= target and state(log) == states[end]
        assert all(s <= end for s in snapshots(log))
    # the batches cut off are no longer retries: the next in sequence is appended
    entry = state(log)[1]
    info = send(log, 1, entry.producer_epoch, entry.last_seq + 1)
    assert not info.duplicate and info.first_offset == end
    log.truncate_fully_and_start_at(500)
    assert state(log) == {} and snapshots(log) == []
    assert send(log, 1, 0, 77).first_offset == 500  # an unknown producer again


def test_retention_keeps_the_state_and_the_snapshots_of_the_segments_left(tmp_path):
    clock = Clock()
    log = open_log(tmp_path, clock)
    produce_many(log)
    before = state(log)
    log.update_high_watermark(log.log_end_offset)
    bases = [s.base_offset for s in log.segments()]
    assert log.maybe_increment_log_start_offset(bases[3] + 1)  # DeleteRecords into the 4th segment
    assert log.delete_old_segments() == 3
    assert snapshots(log) == bases[3:]
    assert state(log) == before  # producers are forgotten by expiry only
    log.close()
    again = open_log(tmp_path, clock, had_clean_shutdown=True, log_start_offset=bases[3] + 1)
    assert state(again) == before
    again.close_handlers()
    again = open_log(tmp_path, clock, log_start_offset=bases[3] + 1)
    assert state(again) == before


def test_a_crash_after_delete_records_replays_the_batches_below_the_log_start(tmp_path):
    """No roll, so no snapshot but the clean shutdown's: the replay starts at the segment's start,
    where the producers' batches still are, not at the log start offset."""
    log = open_log(tmp_path, config=LogConfig())
    send(log, 1, 0, 0)
    send(log, 2, 0, 0)
    send(log, 1, 0, 2)
    before = state(log)
    log.update_high_watermark(6)
    log.maybe_increment_log_start_offset(5)
    log.close_handlers()
    again = open_log(tmp_path, config=LogConfig(), log_start_offset=5)
    assert again.log_start_offset == 5 and state(again) == before


def test_a_corrupted_snapshot_is_ignored_with_one_warning(tmp_path, caplog):
    log = open_log(tmp_path)
    produce_many(log)
    before, end = state(log), log.log_end_offset
    log.close()
    path = log.dir / f"{end:020d}.snapshot"
    data = bytearray(path.read_bytes())
    data[20] ^= 0x10
    path.write_bytes(data)
    with caplog.at_level(logging.INFO, logger="kafkalite.storage"):
        again = open_log(tmp_path, had_clean_shutdown=True)
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and path.name in warnings[0] and "CRC" in warnings[0]
    assert state(again) == before
    assert decode_snapshot(path.read_bytes()) == before  # rewritten after the replay


def test_expiry_from_the_log_manager(tmp_path):
    clock = Clock()
    manager = LogManager([tmp_path], now_ms=clock, producer_id_expiration_ms=60_000)
    log = manager.get_or_create("p", 0, CONFIG)
    send(log, 1, 0, 0)  # timestamp NOW + 1
    clock.now = NOW + 60_000
    assert manager.remove_expired_producers() == 0
    assert list(state(log)) == [1]
    clock.now += 1
    manager.remove_expired_producers()
    assert state(log) == {}
    assert send(log, 1, 0, 40).first_offset == 2  # forgotten: any sequence starts it again
    clock.now += 60_001
    assert manager.remove_expired_producers() == 1
    manager.shutdown()
    again = LogManager([tmp_path], now_ms=clock, producer_id_expiration_ms=60_000)
    reopened = again.get_log("p", 0)
    assert reopened is not None and state(reopened) == {}



def test_superseded_snapshots_are_removed_at_load(tmp_path):
    """Each clean close leaves a snapshot inside the active segment; the next load keeps only the
    latest of those besides the segments' own (Kafka's removeStraySnapshots)."""
    log = open_log(tmp_path)
    produce_many(log, rounds=2)
    bases = [s.base_offset for s in log.segments()]
    log.close()
    first_close = log.log_end_offset
    log = open_log(tmp_path, had_clean_shutdown=True)
    send(log, 1, 0, 4)
    log.close()
    assert snapshots(log) == [*bases[1:], first_close, log.log_end_offset]
    (log.dir / "garbage.snapshot").write_bytes(b"")  # not a snapshot's name: left alone
    again = open_log(tmp_path, had_clean_shutdown=True)
    assert [s.base_offset for s in again.segments()] == bases
    assert snapshots(again) == [*bases[1:], log.log_end_offset]
    assert (log.dir / "garbage.snapshot").exists()
