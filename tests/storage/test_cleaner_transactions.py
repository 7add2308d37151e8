"""The cleaner and transactions (issue 27, Kafka's LogCleaner with CleanedTransactionMetadata):
aborted records go and hide no committed record, markers stay while their transaction has data and
go past the delete horizon after, an aborted producer's last batch keeps its .txnindex entry, and
nothing at or past the last stable offset is cleaned."""

from __future__ import annotations

from kafkalite.protocol.records import iter_batches
from kafkalite.protocol.records.control import EndTransactionMarker, build_marker_batch
from kafkalite.protocol.records.records import Record, build_batch, decode_records
from kafkalite.storage.cleaner import cleanable_range
from kafkalite.storage.log import AbortedTxn, AppendOrigin, FetchIsolation, Log
from tests.storage.test_cleaner import Clock, clean, open_log, put


def txn(log: Log, pid: int, seq: int, items: list[tuple[bytes, bytes]]) -> None:
    records = [Record(i, 0, k, v) for i, (k, v) in enumerate(items)]
    log.append_as_leader(
        bytearray(
            build_batch(
                records,
                0,
                base_timestamp=1000,
                producer_id=pid,
                producer_epoch=0,
                base_sequence=seq,
                is_transactional=True,
            )
        ),
        0,
    )
    log.update_high_watermark(log.log_end_offset)


def end(log: Log, pid: int, commit: bool) -> None:
    marker = EndTransactionMarker.commit(0) if commit else EndTransactionMarker.abort(0)
    log.append_as_leader(
        bytearray(build_marker_batch(marker, pid, 0, timestamp=1000)), 0, AppendOrigin.COORDINATOR
    )
    log.update_high_watermark(log.log_end_offset)


def batches(log: Log) -> list[tuple[int, bool, int, list[tuple[bytes | None, bytes | None]]]]:
    """(base offset, control, producer id, records) of every batch."""
    out = []
    offset = log.log_start_offset
    while offset < log.log_end_offset:
        data = log.read(offset, 1 << 30, FetchIsolation.LOG_END).read()
        for pos, header in iter_batches(data):
            records = [(r.key, r.value) for r in decode_records(data, pos, header)]
            out.append((header.base_offset, header.is_control, header.producer_id, records))
            offset = header.next_offset
    return out


def test_aborted_records_go_hiding_nothing_and_markers_stay_while_their_transaction_has_data(tmp_path):
    clock = Clock()
    log = open_log(tmp_path / "t-0", clock, delete_retention_ms=0)
    put(log, [(b"a", b"1")])  # 0
    txn(log, 5, 0, [(b"a", b"x"), (b"b", b"x")])  # 1-2, aborted: must not hide a=1
    end(log, 5, commit=False)  # 3
    txn(log, 6, 0, [(b"c", b"1")])  # 4
    end(log, 6, commit=True)  # 5
    txn(log, 5, 2, [(b"d", b"1")])  # 6: producer 5's last batch
    end(log, 5, commit=True)  # 7
    assert log.collect_aborted_transactions(0, 8) == [AbortedTxn(5, 1, 3, 4)]
    log.roll()
    put(log, [(b"z", b"1")])
    first_round = clean(log, clock=clock)
    kept = batches(log)
    assert [(o, c, p) for o, c, p, _ in kept] == [
        (0, False, -1),
        (3, True, 5),
        (4, False, 6),
        (5, True, 6),
        (6, False, 5),
        (7, True, 5),
        (8, False, -1),
    ]
    assert kept[0][3] == [(b"a", b"1")]
    # The aborted data is gone; this round saw it, so the marker and its index entry stay (Kafka's
    # lastObservedBatchOffset): the next round, finding no batch of it, lets them go.
    assert log.collect_aborted_transactions(0, 9) == [AbortedTxn(5, 1, 3, 4)]
    log.roll()
    put(log, [(b"y", b"1")])
    clean(log, first_round, clock)
    assert [(o, c, p) for o, c, p, _ in batches(log)] == [
        (0, False, -1),
        (4, False, 6),
        (5, True, 6),
        (6, False, 5),
        (7, True, 5),
        (8, False, -1),
        (9, False, -1),
    ]
    assert log.collect_aborted_transactions(0, 10) == []
    log.close()


def test_an_aborted_producers_last_batch_stays_with_its_index_entry_and_marker(tmp_path):
    clock = Clock()
    log = open_log(tmp_path / "t-0", clock, delete_retention_ms=0)
    put(log, [(b"a", b"1")])  # 0
    txn(log, 5, 0, [(b"a", b"x")])  # 1: producer 5's last batch
    end(log, 5, commit=False)  # 2
    log.roll()
    put(log, [(b"z", b"1")])
    first_round = clean(log, clock=clock)
    log.roll()
    put(log, [(b"y", b"1")])
    clean(log, first_round, clock)
    assert [(o, c, p) for o, c, p, _ in batches(log)][:3] == [(0, False, -1), (1, False, 5), (2, True, 5)]
    assert log.collect_aborted_transactions(0, 3) == [AbortedTxn(5, 1, 2, 3)]
    assert log.segments()[0].txn_index.all_aborted_txns() == [AbortedTxn(5, 1, 2, 3)]
    log.close()
    again = open_log(tmp_path / "t-0", clock)  # the cleaned segment's .txnindex is the segment's
    assert again.collect_aborted_transactions(0, 3) == [AbortedTxn(5, 1, 2, 3)]
    again.close()


def test_nothing_at_or_past_the_last_stable_offset_is_cleaned(tmp_path):
    log = open_log(tmp_path / "t-0")
    put(log, [(b"a", b"1")])
    log.roll()
    txn(log, 5, 0, [(b"a", b"2")])  # 1: open
    log.roll()
    put(log, [(b"a", b"3")])
    log.roll()
    put(log, [(b"a", b"4")])
    assert log.high_watermark == log.log_end_offset and log.last_stable_offset == 1
    target = cleanable_range(log, None, Clock()())
    assert target is not None and target.first_uncleanable_offset == 1
    clean(log)
    assert [r for _, _, _, r in batches(log)] == [
        [(b"a", b"1")],
        [(b"a", b"2")],
        [(b"a", b"3")],
        [(b"a", b"4")],
    ]
    log.close()


def test_a_swap_completed_at_load_brings_its_txnindex_and_drops_the_old_segments(tmp_path):
    log = open_log(tmp_path / "t-0", segment_bytes=8000)
    txn(log, 5, 0, [(b"a", b"x")])  # 0: aborted, the producer's last batch: stays with its entry
    end(log, 5, commit=False)  # 1
    put(log, [(b"a", b"1")])  # 2
    log.roll()
    put(log, [(b"tail", b"x")])
    log.close()
    stale = AbortedTxn(9, 0, 1, 2)  # what the old segment's index says, replaced by the swap's
    (tmp_path / "t-0" / "00000000000000000000.txnindex").write_bytes(stale.encode())
    swap = AbortedTxn(5, 0, 1, 2).encode()
    (tmp_path / "t-0" / "00000000000000000000.txnindex.swap").write_bytes(swap)
    log_file = tmp_path / "t-0" / "00000000000000000000.log"
    (tmp_path / "t-0" / "00000000000000000000.log.swap").write_bytes(log_file.read_bytes())
    resumed = open_log(tmp_path / "t-0", segment_bytes=8000)
    assert resumed.collect_aborted_transactions(0, 3) == [AbortedTxn(5, 0, 1, 2)]
    assert not list((tmp_path / "t-0").glob("*.swap"))
    resumed.close()
