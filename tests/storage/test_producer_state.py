"""ProducerStateManager on its own: Kafka's sequence rules, the duplicate cache, expiry, and the
snapshot file's bytes (an open transaction's first offset included)."""

from __future__ import annotations

import struct

import pytest
from crc32c import crc32c
from hypothesis import given
from hypothesis import strategies as st

from kafkalite.protocol.records import BatchHeader, read_header
from kafkalite.storage.errors import CorruptSnapshotError, InvalidProducerEpochError, OutOfOrderSequenceError
from kafkalite.storage.producer_state import (
    INT32_MAX,
    AppendOrigin,
    BatchMetadata,
    ProducerStateEntry,
    ProducerStateManager,
    decode_snapshot,
    decrement_sequence,
    encode_snapshot,
    increment_sequence,
)
from tests.support.batches import idempotent


def header(pid: int, epoch: int, seq: int, count: int = 1, offset: int = 0,
           timestamp: int = 1_000) -> BatchHeader:
    buf = idempotent(pid, epoch, seq, count=count, timestamp=timestamp)
    buf[0:8] = offset.to_bytes(8, "big")
    return read_header(buf)


class Appender:
    """A leader's appends to a manager, offsets following each other."""

    def __init__(self, manager: ProducerStateManager) -> None:
        self.manager = manager
        self.end = 0

    def __call__(self, pid: int, epoch: int, seq: int, count: int = 1) -> tuple[int, int]:
        h = header(pid, epoch, seq, count, offset=self.end, timestamp=1_000 + self.end)
        duplicate = self.manager.find_duplicate(h)
        if duplicate is not None:
            return duplicate.first_offset, duplicate.last_offset
        info = self.manager.prepare_update(AppendOrigin.CLIENT)
        info.append(h, self.end)
        self.manager.update(info)
        self.end += count
        return self.end - count, self.end - 1


@pytest.fixture
def append(tmp_path) -> Appender:
    return Appender(ProducerStateManager(tmp_path, "t-0"))


def test_sequences_wrap_around_the_int32_maximum():
    assert increment_sequence(INT32_MAX, 1) == 0
    assert increment_sequence(INT32_MAX - 1, 3) == 1
    assert increment_sequence(5, 3) == 8
    assert decrement_sequence(1, 3) == INT32_MAX - 1
    assert decrement_sequence(8, 3) == 5
    assert BatchMetadata(last_seq=1, last_offset=10, offset_delta=3, timestamp=0).first_seq == INT32_MAX - 1


def test_a_batch_must_follow_the_last_sequence(append):
    assert append(1, 0, 0, count=3) == (0, 2)
    assert append(1, 0, 3) == (3, 3)
    for seq in (5, 2, 0):
        with pytest.raises(OutOfOrderSequenceError) as e:
            append(1, 0, seq, count=2)  # a gap, an overlap, a restart: no cached range either
        assert e.value.code == 45
    assert append.manager.last_entry(1) == ProducerStateEntry(
        1, 0, [BatchMetadata(2, 2, 2, 1_002), BatchMetadata(3, 3, 0, 1_003)], 1_003
    )


def test_the_sequence_wraps_to_zero(append):
    append(1, 0, INT32_MAX - 1, count=2)  # an unknown producer may start anywhere
    assert append(1, 0, 0) == (2, 2)
    append(2, 0, INT32_MAX - 1, count=4)  # the batch itself wraps: sequences MAX-1, MAX, 0, 1
    assert append.manager.producers[2].last_seq == 1
    assert append(2, 0, 2) == (7, 7)


def test_epochs_fence_and_a_new_epoch_starts_at_zero(append):
    append(1, 3, 0)
    with pytest.raises(InvalidProducerEpochError) as e:
        append(1, 2, 1)
    assert e.value.code == 47
    with pytest.raises(OutOfOrderSequenceError):
        append(1, 4, 1)
    assert append(1, 4, 0) == (1, 1)
    assert append.manager.last_entry(1) == ProducerStateEntry(1, 4, [BatchMetadata(0, 1, 0, 1_001)], 1_001)


def test_retries_of_the_last_five_batches_get_their_offsets(append):
    offsets = [append(1, 0, 2 * i, count=2) for i in range(7)]
    for i in range(2, 7):
        assert append(1, 0, 2 * i, count=2) == offsets[i]
    with pytest.raises(OutOfOrderSequenceError):
        append(1, 0, 2, count=2)  # the sixth batch back is no longer cached
    with pytest.raises(OutOfOrderSequenceError):
        append(1, 0, 12, count=1)  # same first sequence, other range: not the batch sent before
    assert append.end == 14


def test_one_append_checks_its_batches_against_each_other(append):
    """Several batches of one producer in one append: each follows the one before it."""
    manager = append.manager
    append(1, 0, 0)
    info = manager.prepare_update(AppendOrigin.CLIENT)
    info.append(header(1, 0, 1, count=2), 1)
    info.append(header(1, 0, 3), 3)
    with pytest.raises(OutOfOrderSequenceError):
        info.append(header(1, 0, 5), 4)
    assert manager.producers[1].last_seq == 0  # applied by update only
    manager.update(info)
    assert manager.producers[1].last_seq == 3


def test_replicas_and_replays_are_not_checked(append):
    append(1, 5, 0)
    info = append.manager.prepare_update(AppendOrigin.REPLICATION)
    info.append(header(1, 2, 7), 1)  # an older epoch and a gap: the leader's word is taken
    append.manager.update(info)
    assert append.manager.last_entry(1) == ProducerStateEntry(1, 2, [BatchMetadata(7, 1, 0, 1_000)], 1_000)


def test_expired_producers_are_forgotten_and_may_start_anywhere(tmp_path):
    manager = ProducerStateManager(tmp_path, "t-0", producer_id_expiration_ms=1_000)
    append = Appender(manager)
    append(1, 0, 0)  # timestamp 1_000
    append(2, 0, 0)  # timestamp 1_001
    assert manager.remove_expired_producers(1_999) == 0
    assert manager.remove_expired_producers(2_000) == 1
    assert list(manager.producers) == [2]
    assert append(1, 0, 42) == (2, 2)


def entry_bytes(pid: int, epoch: int, last_seq: int, last_offset: int, delta: int, ts: int,
                coordinator_epoch: int = -1, txn_first: int = -1) -> bytes:
    """One entry as Kafka's PRODUCER_SNAPSHOT_ENTRY_SCHEMA writes it, field by field."""
    return b"".join((
        pid.to_bytes(8, "big", signed=True),  # producer_id INT64
        epoch.to_bytes(2, "big", signed=True),  # epoch INT16
        last_seq.to_bytes(4, "big", signed=True),  # last_sequence INT32
        last_offset.to_bytes(8, "big", signed=True),  # last_offset INT64
        delta.to_bytes(4, "big", signed=True),  # offset_delta INT32
        ts.to_bytes(8, "big", signed=True),  # timestamp INT64
        coordinator_epoch.to_bytes(4, "big", signed=True),  # coordinator_epoch INT32
        txn_first.to_bytes(8, "big", signed=True),  # current_txn_first_offset INT64
    ))


def test_snapshot_bytes_in_kafkas_layout():
    producers = [
        ProducerStateEntry(9, 0, [BatchMetadata(4, 7, 4, 2_000)], 2_000),
        ProducerStateEntry(5, 2, [BatchMetadata(1, 1, 1, 1_500), BatchMetadata(2, 2, 0, 1_600)], 1_700),
    ]
    data = encode_snapshot(producers)
    entries = (
        entry_bytes(5, 2, 1, 1, 1, 1_500)
        + entry_bytes(5, 2, 2, 2, 0, 1_700)  # the last batch carries the producer's last timestamp
        + entry_bytes(9, 0, 4, 7, 4, 2_000)
    )
    body = (3).to_bytes(4, "big") + entries  # ArrayOf: an INT32 count, then the entries
    assert data == (1).to_bytes(2, "big") + crc32c(body).to_bytes(4, "big") + body
    assert len(entries) == 3 * 46


def test_kafka_reading_a_snapshot_keeps_what_it_would_have_written():
    """Kafka's readSnapshot puts each entry in a map by producer id: the last entry wins, which is
    the producer's last batch with its last timestamp, Kafka's own single entry."""
    entry = ProducerStateEntry(5, 2, [BatchMetadata(s, s, 0, 1_000 + s) for s in range(5)], 1_004)
    data = encode_snapshot([entry])
    kafka_view = {}
    for values in struct.iter_unpack(">qhiqiqiq", data[10:]):
        kafka_view[values[0]] = values[1:6]
    assert kafka_view == {5: (2, 4, 4, 0, 1_004)}
    assert decode_snapshot(data) == {5: entry}


def test_a_kafka_written_snapshot_loads_its_single_batch():
    body = (2).to_bytes(4, "big") + entry_bytes(3, 1, 9, 40, 4, 5_000) + entry_bytes(4, 0, -1, -1, 0, 6_000)
    data = (1).to_bytes(2, "big") + crc32c(body).to_bytes(4, "big") + body
    assert decode_snapshot(data) == {
        3: ProducerStateEntry(3, 1, [BatchMetadata(9, 40, 4, 5_000)], 5_000),
        4: ProducerStateEntry(4, 0, [], 6_000),  # an entry without a batch (after a marker)
    }
    assert encode_snapshot(decode_snapshot(data).values()) == data


def test_a_snapshot_keeps_the_open_transactions_first_offset_and_the_coordinator_epoch(tmp_path):
    """Kafka's entry of a producer in a transaction: its current_txn_first_offset loads back, and
    the manager loading it has the transaction open again (ongoing transactions survive restarts)."""
    in_txn, idle = entry_bytes(3, 1, 9, 40, 4, 5_000, 7, 36), entry_bytes(4, 0, 2, 41, 0, 6_000, 7)
    body = (2).to_bytes(4, "big") + in_txn + idle
    data = (1).to_bytes(2, "big") + crc32c(body).to_bytes(4, "big") + body
    loaded = decode_snapshot(data)
    assert loaded[3] == ProducerStateEntry(3, 1, [BatchMetadata(9, 40, 4, 5_000)], 5_000, 7, 36)
    assert loaded[4].current_txn_first_offset == -1
    assert encode_snapshot(loaded.values()) == data
    manager = ProducerStateManager(tmp_path, "t-0")
    manager.producers.update(loaded)
    manager.take_snapshot(42)
    again = ProducerStateManager(tmp_path, "t-0")
    assert again.load_latest_snapshot() == 42
    assert again.producers == loaded
    assert [(t.producer_id, t.first_offset) for t in again.ongoing_transactions()] == [(3, 36)]
    assert again.first_unstable_offset() == 36


@given(st.lists(st.tuples(st.integers(0, 2**40), st.integers(0, 32766),
                          st.lists(st.integers(0, 2**30), max_size=5), st.integers(-1, 2**31 - 1),
                          st.one_of(st.just(-1), st.integers(0, 2**40))),
                unique_by=lambda t: t[0], max_size=6))
def test_snapshots_round_trip_with_transactions(producers):
    entries = []
    for pid, epoch, offsets, coordinator_epoch, txn_first in producers:
        batches = [BatchMetadata(i, offset, 0, 1_000 + i) for i, offset in enumerate(sorted(offsets))]
        last_ts = batches[-1].timestamp if batches else 1_000
        entries.append(ProducerStateEntry(pid, epoch, batches, last_ts, coordinator_epoch, txn_first))
    assert decode_snapshot(encode_snapshot(entries)) == {e.producer_id: e for e in entries}


@pytest.mark.parametrize("damage", ["version", "crc", "short", "count", "trailing"])
def test_unreadable_snapshots_are_refused(damage):
    data = bytearray(encode_snapshot([ProducerStateEntry(1, 0, [BatchMetadata(0, 0, 0, 1)], 1)]))
    if damage == "version":
        data[1] = 2
    elif damage == "crc":
        data[30] ^= 0x40
    elif damage == "short":
        del data[8:]
    else:
        if damage == "count":
            data[9] = 2
        else:
            data += b"\x00"
        data[2:6] = crc32c(bytes(data[6:])).to_bytes(4, "big")  # a valid CRC over bad contents
    with pytest.raises(CorruptSnapshotError):
        decode_snapshot(bytes(data))
