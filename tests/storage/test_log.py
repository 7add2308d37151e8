from __future__ import annotations

import logging
import tracemalloc

import pytest

from kafkalite.protocol.records import TimestampType, iter_batches, set_max_timestamp, validate_batch
from kafkalite.storage import segment as segment_module
from kafkalite.storage.config import LogConfig
from kafkalite.storage.errors import (
    OffsetOutOfRangeError,
    RecordBatchTooLargeError,
    RecordTooLargeError,
    UnexpectedAppendOffsetError,
)
from kafkalite.storage.log import EMPTY, FetchIsolation, Log
from tests.support.batches import batch


class Clock:
    def __init__(self, now: int = 1_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def open_log(tmp_path, clock: Clock | None = None, name: str = "events-3", **config: int | str) -> Log:
    return Log(tmp_path / name, LogConfig(**config), now_ms=clock or Clock())  # type: ignore[arg-type]


def epochs(log: Log) -> list[tuple[int, int]]:
    return [(e.epoch, e.start_offset) for e in log.leader_epoch_cache.entries()]


def produce(log: Log, counts: list[int], epoch: int = 0, timestamp: int = 1_000,
            key: bytes | None = None) -> tuple[int, int]:
    """One leader append of a batch per count (offsets unset in the buffer)."""
    buf = bytearray().join(batch(c, timestamp=timestamp, base_offset=0, epoch=-1, key=key) for c in counts)
    info = log.append_as_leader(buf, epoch)
    return info.first_offset, info.last_offset


def offsets_read(log: Log, offset: int, max_bytes: int = 1 << 20, **kw) -> list[tuple[int, int]]:
    got = log.read(offset, max_bytes, **kw)
    data = got.read()
    return [(h.base_offset, h.last_offset) for _, h in iter_batches(data)]


def test_leader_append_stamps_offsets_and_epoch_in_place(tmp_path):
    log = open_log(tmp_path)
    assert produce(log, [3, 2], epoch=7) == (0, 4)
    assert produce(log, [1]) == (5, 5)
    assert log.log_end_offset == 6
    data = log.read(0, 1 << 20, FetchIsolation.LOG_END).read()
    headers = [validate_batch(data, pos) for pos, _ in iter_batches(data)]  # CRCs still hold
    assert [(h.base_offset, h.partition_leader_epoch) for h in headers] == [(0, 7), (3, 7), (5, 0)]
    assert (tmp_path / "events-3" / "00000000000000000000.log").read_bytes() == data


def test_consumers_read_below_the_high_watermark(tmp_path):
    log = open_log(tmp_path)
    produce(log, [2])
    produce(log, [2])
    produce(log, [2])
    assert log.read(0, 1 << 20) is EMPTY  # the high watermark is still 0
    log.update_high_watermark(4)
    assert offsets_read(log, 0) == [(0, 1), (2, 3)]
    assert offsets_read(log, 3) == [(2, 3)]
    assert log.read(4, 1 << 20) is EMPTY
    assert offsets_read(log, 4, isolation=FetchIsolation.LOG_END) == [(4, 5)]
    assert log.update_high_watermark(100) == 6  # never past the log end


def test_reads_outside_the_log_are_out_of_range(tmp_path):
    log = open_log(tmp_path)
    produce(log, [2])
    log.update_high_watermark(2)
    assert log.read(2, 100) is EMPTY  # at the log end: nothing yet, not an error
    with pytest.raises(OffsetOutOfRangeError) as e:
        log.read(3, 100)
    assert e.value.code == 1


def test_roll_by_segment_bytes_and_read_across_segments(tmp_path):
    size = len(batch(1))
    log = open_log(tmp_path, segment_bytes=3 * size)
    for _ in range(10):
        produce(log, [1])
    names = sorted(p.name for p in (tmp_path / "events-3").glob("*.log"))
    assert names == [f"{o:020d}.log" for o in (0, 3, 6, 9)]
    log.update_high_watermark(10)
    assert offsets_read(log, 4) == [(4, 4), (5, 5)]  # one read stays within one segment
    assert offsets_read(log, 9) == [(9, 9)]
    with pytest.raises(RecordBatchTooLargeError):
        produce(log, [1, 1, 1, 1])


def test_roll_by_segment_ms(tmp_path):
    clock = Clock()
    log = open_log(tmp_path, clock, segment_ms=1000)
    produce(log, [1], timestamp=50_000)
    produce(log, [1], timestamp=51_000)  # exactly segment.ms after the first batch: same segment
    produce(log, [1], timestamp=51_001)
    assert [s.base_offset for s in log.segments()] == [0, 2]


def test_max_message_bytes(tmp_path):
    log = open_log(tmp_path, max_message_bytes=200)
    with pytest.raises(RecordTooLargeError) as e:
        produce(log, [1, 30])
    assert e.value.code == 10
    assert log.log_end_offset == 0 and log.size == 0  # nothing of the refused append was written


def test_follower_append_keeps_offsets_and_epochs(tmp_path):
    log = open_log(tmp_path)
    buf = batch(3, base_offset=0, epoch=1) + batch(2, base_offset=3, epoch=4)
    info = log.append_as_follower(buf)
    assert (info.first_offset, info.last_offset, log.log_end_offset) == (0, 4, 5)
    assert epochs(log) == [(1, 0), (4, 3)]
    with pytest.raises(UnexpectedAppendOffsetError):
        log.append_as_follower(batch(1, base_offset=4, epoch=4))
    assert log.log_end_offset == 5


def test_leader_epochs_and_offset_for_leader_epoch(tmp_path):
    log = open_log(tmp_path)
    produce(log, [5], epoch=1)
    produce(log, [5], epoch=1)
    produce(log, [3], epoch=3)
    assert log.end_offset_for_epoch(1) == (10, 1)
    assert log.end_offset_for_epoch(2) == (10, 1)
    assert log.end_offset_for_epoch(3) == (13, 3)
    assert log.end_offset_for_epoch(4) is None
    log.maybe_assign_epoch_start_offset(5, log.log_end_offset)  # a new leader, nothing appended yet
    assert log.latest_epoch == 5 and log.end_offset_for_epoch(3) == (13, 3)


def test_truncate_to_for_a_follower(tmp_path):
    size = len(batch(2))
    log = open_log(tmp_path, segment_bytes=2 * size, file_delete_delay_ms=0)
    for epoch in (0, 0, 1, 1, 2, 2):
        produce(log, [2], epoch=epoch)
    log.update_high_watermark(12)
    assert log.truncate_to(5)  # mid-batch: that batch goes too
    assert log.log_end_offset == 4 and log.high_watermark == 4
    assert [s.base_offset for s in log.segments()] == [0, 4]
    # epoch 1 began at offset 4, now the log end: none of its batches is left
    assert epochs(log) == [(0, 0)]
    log.delete_expired_files()
    names = sorted(p.name for p in (tmp_path / "events-3").glob("*.log*"))
    assert names == [f"{0:020d}.log", f"{4:020d}.log"]
    assert not log.truncate_to(50)
    assert produce(log, [1], epoch=3) == (4, 4)
    assert epochs(log) == [(0, 0), (3, 4)]
    log.update_high_watermark(5)
    assert offsets_read(log, 4) == [(4, 4)]


def test_truncate_below_every_segment_starts_over(tmp_path):
    log = open_log(tmp_path)
    produce(log, [3])
    log.truncate_fully_and_start_at(100)
    assert (log.log_start_offset, log.log_end_offset, log.num_segments) == (100, 100, 1)
    assert produce(log, [1]) == (100, 100)


def test_reopen_after_close_keeps_everything(tmp_path):
    size = len(batch(2))
    log = open_log(tmp_path, segment_bytes=3 * size, index_interval_bytes=50)
    for epoch in range(8):
        produce(log, [2], epoch=epoch // 3)
    log.update_high_watermark(16)
    before = offsets_read(log, 0), offsets_read(log, 7)
    log.close()
    again = Log(tmp_path / "events-3", LogConfig(segment_bytes=3 * size, index_interval_bytes=50),
                had_clean_shutdown=True)
    again.update_high_watermark(16)
    assert again.log_end_offset == 16 and again.num_segments == 3
    assert (offsets_read(again, 0), offsets_read(again, 7)) == before
    assert epochs(again) == [(0, 0), (1, 6), (2, 12)]
    assert produce(again, [1]) == (16, 16)


def test_find_by_timestamp_and_max_timestamp(tmp_path):
    size = len(batch(2))
    log = open_log(tmp_path, segment_bytes=2 * size)
    for ts in (100, 200, 900, 300, 400):
        produce(log, [2], timestamp=ts)  # records at ts and ts + 1
    found = log.find_batch_by_timestamp(250)
    assert found is not None and found.header.base_offset == 4  # the batch at 900 has records >= 250
    found = log.find_batch_by_timestamp(150)
    assert found is not None and found.header.base_offset == 2
    assert found.records.read() == log.read(2, 1, FetchIsolation.LOG_END).read()
    assert log.find_batch_by_timestamp(1000) is None
    top = log.max_timestamp_batch()
    assert top is not None and (top.header.base_offset, top.header.max_timestamp) == (4, 901)


def test_retention_ms_deletes_old_segments_below_the_high_watermark(tmp_path):
    clock = Clock(10_000_000)
    size = len(batch(1))
    log = open_log(tmp_path, clock, segment_bytes=size, retention_ms=60_000, file_delete_delay_ms=1000)
    for ts in (1_000, 2_000, 9_990_000, 9_995_000):
        produce(log, [1], timestamp=ts)
    assert log.num_segments == 4
    log.update_high_watermark(1)
    assert log.delete_old_segments() == 1  # the second old segment reaches the high watermark
    log.update_high_watermark(4)
    assert log.delete_old_segments() == 1
    assert [s.base_offset for s in log.segments()] == [2, 3]
    assert log.log_start_offset == 2
    directory = tmp_path / "events-3"
    # renamed first, removed after file.delete.delay.ms
    assert sorted(p.name for p in directory.glob("*.deleted")) == [
        f"{o:020d}{s}.deleted" for o in (0, 1) for s in (".index", ".log", ".timeindex")
    ]
    clock.now += 1000
    log.delete_old_segments()
    assert not list(directory.glob("*.deleted"))
    with pytest.raises(OffsetOutOfRangeError):
        log.read(1, 100)
    assert offsets_read(log, 2) == [(2, 2)]


def test_retention_keeps_one_segment_rolling_if_all_expire(tmp_path):
    clock = Clock(10_000_000)
    log = open_log(tmp_path, clock, retention_ms=1000, file_delete_delay_ms=0)
    produce(log, [3], timestamp=5)
    log.update_high_watermark(3)
    assert log.delete_old_segments() == 1
    assert [s.base_offset for s in log.segments()] == [3]
    assert (log.log_start_offset, log.log_end_offset, log.size) == (3, 3, 0)
    assert log.delete_old_segments() == 0  # an empty active segment is never deleted
    assert sorted(p.name for p in (tmp_path / "events-3").iterdir()) == [
        f"{3:020d}.index", f"{3:020d}.log", f"{3:020d}.snapshot", f"{3:020d}.timeindex",
        "leader-epoch-checkpoint",
    ]  # the roll's producer snapshot, as Kafka's


def test_retention_bytes_deletes_oldest_whole_segments(tmp_path):
    size = len(batch(1))
    log = open_log(tmp_path, segment_bytes=2 * size, retention_bytes=3 * size, file_delete_delay_ms=0)
    for _ in range(7):
        produce(log, [1])
    log.update_high_watermark(7)
    assert log.size == 7 * size
    assert log.delete_old_segments() == 2  # 7 -> 3: two segments of 2; the next would leave 1 < 3
    assert [s.base_offset for s in log.segments()] == [4, 6]
    assert log.size == 3 * size and log.log_start_offset == 4


def test_retention_below_the_log_start_offset(tmp_path):
    size = len(batch(1, key=b"k"))
    log = open_log(tmp_path, segment_bytes=2 * size, file_delete_delay_ms=0, cleanup_policy="compact")
    for _ in range(6):
        produce(log, [1], key=b"k")  # a compacted log takes keyed records only
    log.update_high_watermark(3)
    with pytest.raises(OffsetOutOfRangeError):
        log.maybe_increment_log_start_offset(4)  # never past the high watermark
    assert log.maybe_increment_log_start_offset(3)  # DeleteRecords
    assert log.delete_old_segments() == 1  # segment 0-1; segment 2-3 still holds offset 3
    assert [s.base_offset for s in log.segments()] == [2, 4]
    with pytest.raises(OffsetOutOfRangeError):
        log.read(2, 100)


def test_unclean_reopen_cuts_a_torn_tail_and_logs_it_once(tmp_path, caplog):
    size = len(batch(2))
    config = {"segment_bytes": 3 * size, "index_interval_bytes": 100}
    log = open_log(tmp_path, **config)
    for epoch in range(5):
        produce(log, [2], epoch=epoch)
    directory = tmp_path / "events-3"
    last = directory / f"{6:020d}.log"
    with open(last, "r+b") as f:
        f.truncate(size + 10)  # the last batch (epoch 4, offsets 8-9) is torn
    with caplog.at_level(logging.WARNING, logger="kafkalite.storage"):
        again = Log(directory, LogConfig(**config), recovery_point=6)  # type: ignore[arg-type]
    assert again.log_end_offset == 8
    assert last.stat().st_size == size
    assert epochs(again) == [
        (0, 0), (1, 2), (2, 4), (3, 6),
    ]
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "offset 8" in warnings[0]
    assert produce(again, [1], epoch=5) == (8, 8)


def test_unclean_reopen_cuts_a_corrupted_segment_and_drops_later_ones(tmp_path):
    size = len(batch(2))
    config = {"segment_bytes": 3 * size, "index_interval_bytes": 100}
    log = open_log(tmp_path, **config)
    for epoch in range(8):
        produce(log, [2], epoch=epoch)  # segments 0, 6, 12
    log.close()
    directory = tmp_path / "events-3"
    middle = directory / f"{6:020d}.log"
    data = bytearray(middle.read_bytes())
    data[size + 40] ^= 0x01  # the second batch of the middle segment (offsets 8-9)
    middle.write_bytes(data)
    (directory / "leader-epoch-checkpoint").unlink()  # lost too: rebuilt from the batches
    again = Log(directory, LogConfig(**config), recovery_point=0)  # type: ignore[arg-type]
    assert again.log_end_offset == 8
    assert [s.base_offset for s in again.segments()] == [0, 6]
    assert not (directory / f"{12:020d}.log").exists()
    assert epochs(again) == [
        (0, 0), (1, 2), (2, 4), (3, 6),
    ]
    again.update_high_watermark(8)
    assert offsets_read(again, 0)[-1] == (4, 5) and offsets_read(again, 6) == [(6, 7)]
    # the rebuilt indexes agree with the log: every offset reads from the batch holding it
    for offset in range(8):
        assert offsets_read(again, offset, max_bytes=1)[0][0] == offset - offset % 2


def test_a_clean_reopen_does_not_scan(tmp_path, monkeypatch):
    log = open_log(tmp_path)
    produce(log, [2])
    log.close()
    path = tmp_path / "events-3" / f"{0:020d}.log"
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF  # a corruption only a scan would find
    path.write_bytes(data)
    def no_scan(self, cache=None):
        raise AssertionError("recovered after a clean shutdown")

    monkeypatch.setattr(segment_module.LogSegment, "recover", no_scan)
    again = Log(tmp_path / "events-3", LogConfig(), had_clean_shutdown=True)
    assert again.log_end_offset == 2 and path.read_bytes() == data


@pytest.mark.parametrize("damage", ["torn", "missing"])
def test_a_damaged_index_is_rebuilt_even_after_a_clean_shutdown(tmp_path, damage):
    size = len(batch(1))
    config = LogConfig(segment_bytes=20 * size, index_interval_bytes=size)
    log = Log(tmp_path / "t-0", config)
    for _ in range(30):
        produce(log, [1])
    log.close()
    index = tmp_path / "t-0" / f"{0:020d}.index"
    good = index.read_bytes()
    assert len(good) > 8
    if damage == "torn":
        index.write_bytes(good[:-3])
    else:
        index.unlink()
    again = Log(tmp_path / "t-0", config, had_clean_shutdown=True)
    again.close()
    assert index.read_bytes() == good
    again = Log(tmp_path / "t-0", config, had_clean_shutdown=True)
    again.update_high_watermark(30)
    assert offsets_read(again, 13, max_bytes=1) == [(13, 13)]


def test_no_python_object_is_kept_per_batch(tmp_path):
    """Memory follows the segments, not the batches: 10,000 appends keep only the active
    segment's index entries (8 + 12 bytes per 4096 log bytes), far below one object per batch."""
    log = open_log(tmp_path, segment_bytes=1 << 30)
    one = batch(2, value_size=50, epoch=-1)
    for _ in range(100):
        log.append_as_leader(bytearray(one), 0)
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for _ in range(10_000):
            log.append_as_leader(bytearray(one), 0)
        log.update_high_watermark(log.log_end_offset)
        assert log.read(15_000, 1 << 20).size > 0
        grown = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(before, "filename"))
    finally:
        tracemalloc.stop()
    index_bytes = 10_000 * len(one) // 4096 * 20
    assert grown < index_bytes + 16_384, grown  # 10,000 objects of even 56 bytes would be 560 kB


def test_opening_a_log_maps_no_index_until_a_read_needs_it(tmp_path):
    size = len(batch(1))
    config = LogConfig(segment_bytes=4 * size, index_interval_bytes=size)
    log = Log(tmp_path / "t-0", config)
    for _ in range(20):
        produce(log, [1])
    log.close()
    again = Log(tmp_path / "t-0", config, had_clean_shutdown=True)

    def mapped() -> set[str]:
        with open("/proc/self/maps") as f:
            return {line.split()[-1].rsplit("/", 1)[-1] for line in f if str(tmp_path) in line}

    assert mapped() == set()
    again.update_high_watermark(20)
    assert offsets_read(again, 6, max_bytes=1) == [(6, 6)]
    assert mapped() == {f"{4:020d}.index"}  # only the segment read from
    again.close()


def test_offsets_by_timestamp_are_found_record_by_record(tmp_path):
    """ListOffsets by time: the first record (not batch) at or after the target, compressed
    batches decoded, LogAppendTime batches taking the batch's time for every record."""
    size = len(batch(3))
    log = open_log(tmp_path, segment_bytes=3 * size)
    # out-of-order timestamps inside batches; the gzip batch must be decompressed to look inside
    for timestamps, codec in [([10, 30, 20], 0), ([25, 26, 90], 1), ([40, 41, 42], 0)]:
        log.append_as_leader(batch(3, timestamps=timestamps, compression=codec, epoch=-1), 2)
    appended = batch(2, timestamps=[5, 6], epoch=-1)
    set_max_timestamp(appended, 0, TimestampType.LOG_APPEND_TIME, 95)
    log.append_as_leader(appended, 3)
    found = {ts: log.fetch_offset_by_timestamp(ts) for ts in (0, 11, 21, 27, 43, 91, 96)}
    assert {ts: f and (f.timestamp, f.offset, f.leader_epoch) for ts, f in found.items()} == {
        0: (10, 0, 2), 11: (30, 1, 2), 21: (30, 1, 2), 27: (30, 1, 2),
        43: (90, 5, 2), 91: (95, 9, 3), 96: None,
    }
    top = log.fetch_max_timestamp()
    assert top is not None and (top.timestamp, top.offset) == (95, 9)
    log.update_high_watermark(11)
    log.maybe_increment_log_start_offset(4)
    hit = log.fetch_offset_by_timestamp(21)  # records below the log start offset no longer count
    assert hit is not None and (hit.timestamp, hit.offset) == (26, 4)
