"""Log compaction on real logs: what stays, what goes, and a cleaner stopped half-way."""

from __future__ import annotations

import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkalite.protocol.records import Compression, iter_batches
from kafkalite.protocol.records.records import Record, build_batch, decode_records
from kafkalite.storage.checkpoint import TopicPartition
from kafkalite.storage.cleaner import (
    CLEANER_OFFSET_CHECKPOINT_FILENAME,
    Cleaner,
    LogCleaner,
    OffsetMap,
    cleanable_range,
)
from kafkalite.storage.config import CleanerConfig, LogConfig
from kafkalite.storage.errors import InvalidRecordError
from kafkalite.storage.log import FetchIsolation, Log
from tests.support.wait import wait_for

COMPACT = {"cleanup_policy": "compact", "segment_bytes": 600, "file_delete_delay_ms": 0}


class Clock:
    def __init__(self, now: int = 1_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def open_log(path, clock=None, **config) -> Log:
    return Log(path, LogConfig(**{**COMPACT, **config}), now_ms=clock or Clock())


def put(log: Log, items: list[tuple[bytes | None, bytes | None]], codec: Compression = Compression.NONE,
        producer_id: int = -1, base_sequence: int = -1) -> None:
    """One batch of (key, value) records, committed (the high watermark moved past it)."""
    records = [Record(i, 0, k, v) for i, (k, v) in enumerate(items)]
    data = build_batch(records, 0, codec, base_timestamp=1000, producer_id=producer_id,
                       producer_epoch=0 if producer_id >= 0 else -1, base_sequence=base_sequence)
    log.append_as_leader(bytearray(data), 0)
    log.update_high_watermark(log.log_end_offset)


def contents(log: Log) -> dict[int, tuple[bytes | None, bytes | None]]:
    """offset -> (key, value) of every record in the log."""
    out = {}
    offset = log.log_start_offset
    while offset < log.log_end_offset:  # a read stays within one segment
        data = log.read(offset, 1 << 30, FetchIsolation.LOG_END).read()
        for pos, header in iter_batches(data):
            for r in decode_records(data, pos, header):
                out[header.base_offset + r.offset_delta] = (r.key, r.value)
            offset = header.next_offset
    return out


def clean(log: Log, first_dirty: int | None = None, clock=None) -> int:
    target = cleanable_range(log, first_dirty, (clock or Clock())())
    assert target is not None
    return Cleaner(1 << 20).clean(target).end_offset


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.tuples(st.integers(0, 7), st.none() | st.binary(min_size=1, max_size=20)),
                         min_size=1, max_size=6), min_size=2, max_size=30),
       st.sampled_from([Compression.NONE, Compression.GZIP]))
def test_after_cleaning_every_key_keeps_its_last_record_at_its_offset_and_nothing_else_changes(
        tmp_path_factory, batches, codec):
    log = open_log(tmp_path_factory.mktemp("c") / "t-0", delete_retention_ms=10**12)
    try:
        for items in batches:
            put(log, [(b"k%d" % k, v) for k, v in items], codec)
        log.roll()
        put(log, [(b"tail", b"x")])  # the active segment: never cleaned
        before = contents(log)
        end = clean(log)
        after = contents(log)
        # Every record left is the one written at that offset.
        assert all(before[o] == kv for o, kv in after.items())
        last = {}
        for offset, (key, _) in sorted(before.items()):
            last[key] = offset
        for offset, (key, _) in before.items():
            if offset >= end or last[key] == offset:
                assert offset in after  # the last of each key (tombstones too, within the horizon)
            else:
                assert offset not in after  # superseded below the cleaned end
        assert log.log_end_offset == max(before) + 1
    finally:
        log.close()


def test_tombstones_go_once_their_segment_is_past_the_delete_horizon(tmp_path):
    clock = Clock()
    log = open_log(tmp_path / "t-0", clock, delete_retention_ms=0)
    put(log, [(b"a", b"1"), (b"b", b"1")])
    put(log, [(b"a", None)])
    log.roll()
    put(log, [(b"c", b"1")])
    end = clean(log, clock=clock)
    assert contents(log)[2] == (b"a", None)  # the first round keeps it: consumers may still need it
    log.roll()
    put(log, [(b"d", b"1")])
    clean(log, end, clock)
    assert {kv for kv in contents(log).values()} == {(b"b", b"1"), (b"c", b"1"), (b"d", b"1")}
    log.close()


def test_a_batch_keeps_its_offsets_codec_and_producer_fields_and_a_producers_last_batch_stays(tmp_path):
    log = open_log(tmp_path / "t-0")
    put(log, [(b"a", b"1"), (b"b", b"1"), (b"c", b"1")], Compression.GZIP, producer_id=7, base_sequence=0)
    put(log, [(b"a", b"2"), (b"b", b"2")], producer_id=9, base_sequence=0)
    put(log, [(b"a", b"3"), (b"b", b"3")], producer_id=9, base_sequence=2)  # 9's last batch
    log.roll()
    put(log, [(b"z", b"1")])
    clean(log)
    data = log.read(0, 1 << 20, FetchIsolation.LOG_END).read()
    headers = [h for _, h in iter_batches(data)]
    first = headers[0]  # c stays: rebuilt with the same base, last offset, codec and producer
    assert (first.base_offset, first.last_offset, first.compression, first.producer_id, first.base_sequence,
            first.records_count) == (0, 2, Compression.GZIP, 7, 0, 1)
    # Producer 9's first batch had only superseded records: gone. Its last one stays whole.
    assert [(h.base_offset, h.producer_id, h.records_count) for h in headers[1:]] == [(5, 9, 2)]
    assert contents(log) == {2: (b"c", b"1"), 5: (b"a", b"3"), 6: (b"b", b"3"), 7: (b"z", b"1")}
    log.close()
    again = open_log(tmp_path / "t-0")  # the producer state rebuilt from the cleaned log
    assert again.producer_state.last_entry(9).last_seq == 3
    again.close()


def test_nothing_at_or_past_the_high_watermark_or_in_the_active_segment_is_cleaned(tmp_path):
    log = open_log(tmp_path / "t-0")
    put(log, [(b"a", b"1")])
    log.roll()
    log.append_as_leader(bytearray(build_batch([Record(0, 0, b"a", b"2")], 0)), 0)  # not committed
    log.roll()
    put(log, [(b"a", b"3")])
    log.update_high_watermark(1)
    target = cleanable_range(log, None, Clock()())
    assert target is not None and target.first_uncleanable_offset == 1
    clean(log)
    assert contents(log) == {0: (b"a", b"1"), 1: (b"a", b"2"), 2: (b"a", b"3")}
    log.close()


def test_cleaned_segments_are_merged_up_to_segment_bytes_and_the_log_stays_small(tmp_path):
    log = open_log(tmp_path / "t-0", segment_bytes=2000)
    for i in range(400):  # many commits of the same 5 keys, as a group's offsets
        put(log, [(b"group-%d" % (i % 5), b"offset-%d" % i)])
    log.roll()
    put(log, [(b"tail", b"x")])
    size_before, segments_before = log.size, log.num_segments
    end = clean(log)
    # Kafka groups segments by their size before cleaning: the next round merges the cleaned ones.
    put(log, [(b"group-0", b"offset-400")])
    log.roll()
    put(log, [(b"tail", b"y")])
    clean(log, end)
    assert log.num_segments == 2 and segments_before > 15
    assert log.size < size_before / 20
    kept = sorted(v for k, v in contents(log).values() if k != b"tail")
    assert kept == [b"offset-%d" % i for i in range(396, 401)]
    log.close()


def test_a_cleaner_stopped_after_its_swap_rename_is_completed_at_the_next_load(tmp_path):
    log = open_log(tmp_path / "t-0", segment_bytes=8000)  # one segment to clean, one group
    for i in range(30):
        put(log, [(b"k%d" % (i % 3), b"v%d" % i)])
    log.roll()
    put(log, [(b"tail", b"x")])
    log.close()
    shutil.copytree(tmp_path / "t-0", tmp_path / "before-0")
    cleaned_log = open_log(tmp_path / "t-0", segment_bytes=8000)
    cleaned_log.update_high_watermark(cleaned_log.log_end_offset)  # as the replica manager sets it
    clean(cleaned_log)
    expected = contents(cleaned_log)
    assert len(expected) == 4  # k0, k1, k2 and the tail: the swap below has something to do
    first = cleaned_log.segments()[0].log_path
    cleaned_log.close()
    # The state a stop leaves between the rename to .swap and the old segments' removal.
    shutil.copy(first, tmp_path / "before-0" / (first.name + ".swap"))
    (tmp_path / "before-0" / "00000000000000000000.index.swap").write_bytes(b"")
    (tmp_path / "before-0" / "00000000000000000099.log.cleaned").write_bytes(b"junk")
    resumed = open_log(tmp_path / "before-0", segment_bytes=8000)
    assert contents(resumed) == expected
    names = sorted(p.name for p in (tmp_path / "before-0").iterdir())
    assert not [n for n in names if n.endswith((".swap", ".cleaned"))]
    resumed.close()


def test_a_full_offset_map_stops_the_round_at_a_segment_boundary():
    m = OffsetMap(24 * 4)
    assert m.slots == 3
    assert m.put(b"a", 0) and m.put(b"b", 1) and m.put(b"c", 2) and m.put(b"a", 3)
    assert not m.put(b"d", 4) and m.get(b"d") == -1 and m.get(b"a") == 3


def test_the_log_cleaner_picks_dirty_compacted_logs_checkpoints_and_runs_in_its_thread(tmp_path):
    logs = {}
    for name, policy in (("compacted-0", "compact"), ("deleted-0", "delete")):
        log = open_log(tmp_path / name, cleanup_policy=policy)
        for i in range(40):
            put(log, [(b"k%d" % (i % 2), b"v%d" % i)])
        log.roll()
        put(log, [(b"tail", b"x")])
        logs[TopicPartition(name.rsplit("-", 1)[0], 0)] = log
    cleaner = LogCleaner(CleanerConfig(backoff_ms=10), lambda: {tmp_path: logs})
    cleaner.startup()
    try:
        compacted = logs[TopicPartition("compacted", 0)]
        assert wait_for(lambda: cleaner.rounds >= 1 and len(contents(compacted)) == 3, timeout=10)
    finally:
        cleaner.shutdown()
    assert len(contents(logs[TopicPartition("deleted", 0)])) == 41  # delete policy: not compacted
    text = (tmp_path / CLEANER_OFFSET_CHECKPOINT_FILENAME).read_text().split("\n")
    assert "compacted 0 40" in text
    # Nothing dirty left below the active segment: no round is due.
    assert cleaner.grab_filthiest_log() is None
    for log in logs.values():
        log.close()


def test_a_log_truncated_during_a_round_keeps_its_segments(tmp_path):
    log = open_log(tmp_path / "t-0", segment_bytes=8000)
    for i in range(10):
        put(log, [(b"k", b"v%d" % i)])
    log.roll()
    put(log, [(b"tail", b"x")])
    target = cleanable_range(log, None, Clock()())

    class Interrupted(Cleaner):
        def _clean_group(self, log_, group, *args):
            log_.truncate_to(5)  # a follower's truncation while the copy is being written
            super()._clean_group(log_, group, *args)

    Interrupted(1 << 20).clean(target)
    assert sorted(contents(log)) == [0, 1, 2, 3, 4]  # nothing the truncation removed came back
    assert not [p for p in (tmp_path / "t-0").iterdir() if p.name.endswith((".cleaned", ".swap"))]
    log.close()


def test_a_compacted_log_refuses_a_record_without_a_key(tmp_path):
    log = open_log(tmp_path / "t-0")
    with pytest.raises(InvalidRecordError, match="without key"):
        put(log, [(b"a", b"1"), (None, b"2")])
    assert log.log_end_offset == 0
    put(log, [(b"a", None)])  # a tombstone has a key
    log.close()
    other = Log(tmp_path / "d-0", LogConfig(cleanup_policy="delete"), now_ms=Clock())
    put(other, [(None, b"1")])  # any record in a deleted-by-retention log
    assert other.log_end_offset == 1
    other.close()
