"""Transactions in the Log (issue 27): open and ended transactions, the last stable offset, the
aborted-transaction index against a model of the log, through rolls, clean and unclean restarts,
truncation and retention; the checks on markers (origin, epochs, coordinator epoch)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkalite.protocol.records.control import EndTransactionMarker, build_marker_batch
from kafkalite.protocol.records.records import Record, build_batch
from kafkalite.storage.config import LogConfig
from kafkalite.storage.errors import (
    InvalidProducerEpochError,
    InvalidRecordError,
    InvalidTxnStateError,
    TransactionCoordinatorFencedError,
)
from kafkalite.storage.files import transaction_index_file
from kafkalite.storage.log import AbortedTxn, AppendOrigin, FetchIsolation, Log
from kafkalite.storage.producer_state import decode_snapshot
from tests.support.batches import idempotent

NOW = 10_000_000
COORDINATOR = AppendOrigin.COORDINATOR


class Clock:
    def __init__(self, now: int = NOW) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def config(**kw: object) -> LogConfig:
    defaults: dict[str, object] = {
        "segment_bytes": 700,
        "index_interval_bytes": 100,
        "file_delete_delay_ms": 0,
    }
    return LogConfig(**{**defaults, **kw})  # type: ignore[arg-type]


def open_log(path: Path, cfg: LogConfig | None = None, **kw: object) -> Log:
    return Log(path / "t-0", cfg or config(), now_ms=Clock(), **kw)  # type: ignore[arg-type]


def txn_batch(pid: int, seq: int, epoch: int = 0, count: int = 1, key: bytes | None = None) -> bytearray:
    records = [Record(i, 0, key, b"v%d" % i) for i in range(count)]
    return bytearray(
        build_batch(
            records,
            0,
            base_timestamp=NOW,
            producer_id=pid,
            producer_epoch=epoch,
            base_sequence=seq,
            is_transactional=True,
        )
    )


def marker(pid: int, commit: bool, epoch: int = 0, coordinator_epoch: int = 0) -> bytearray:
    end = (
        EndTransactionMarker.commit(coordinator_epoch)
        if commit
        else EndTransactionMarker.abort(coordinator_epoch)
    )
    return bytearray(build_marker_batch(end, pid, epoch, timestamp=NOW))


def plain(count: int = 1) -> bytearray:
    return bytearray(build_batch([Record(i, 0, None, b"p") for i in range(count)], 0, base_timestamp=NOW))


# -- the model -------------------------------------------------------------------------------------


@dataclass
class Model:
    """A log's transactions as a function of what was appended: for each producer its open
    transaction's first offset; the ended ones (first, marker, aborted); the aborted ones with
    Kafka's last stable offset at their abort.

    A producer state snapshot (taken at each roll) does not hold the ended transactions whose
    marker the high watermark has not passed (Kafka's unreplicatedTxns): a truncation that reloads
    from a snapshot forgets those ended before it, which then no longer hold the last stable offset
    back, as in Kafka's truncateAndReload."""

    forgotten_below: int = 0  # markers below it were reloaded from a snapshot, not replayed
    ongoing: dict[int, int] = field(default_factory=dict)  # pid -> first offset
    ended: list[tuple[int, int, int, bool]] = field(default_factory=list)  # pid, first, marker, aborted
    aborted: list[AbortedTxn] = field(default_factory=list)
    appended: list[tuple[str, int, int]] = field(default_factory=list)  # kind, pid, offset

    def append(self, kind: str, pid: int, offset: int) -> None:
        self.appended.append((kind, pid, offset))
        if kind == "txn":
            self.ongoing.setdefault(pid, offset)
        elif kind in ("commit", "abort") and pid in self.ongoing:
            first = self.ongoing.pop(pid)
            self.ended.append((pid, first, offset, kind == "abort"))
            if kind == "abort":
                others = sorted(f for p, f in self.ongoing.items() if p != pid)
                lso = others[0] if others else offset + 1
                self.aborted.append(AbortedTxn(pid, first, offset, lso))

    def truncated(self, end: int, snapshots: list[int]) -> Model:
        """What is left after truncating to ``end`` a log with producer state ``snapshots``: the
        reload starts at the latest snapshot at or below ``end`` and replays the batches after it."""
        model = Model(forgotten_below=max((s for s in snapshots if s <= end), default=0))
        for kind, pid, offset in self.appended:
            if offset < end:
                model.append(kind, pid, offset)
        return model

    def last_stable_offset(self, hw: int) -> int:
        unstable = list(self.ongoing.values()) + [first for _, first, last, _ in self.ended
                                                  if last >= hw and last >= self.forgotten_below]
        first = min(unstable, default=None)
        return first if first is not None and first < hw else hw

    def collect(self, start: int, upper: int) -> list[AbortedTxn]:
        return [t for t in self.aborted if t.last_offset >= start and t.first_offset < upper]


def check(log: Log, model: Model) -> None:
    hw = log.high_watermark
    assert log.last_stable_offset == model.last_stable_offset(hw)
    assert {t.producer_id: t.first_offset for t in log.producer_state.ongoing_transactions()} == model.ongoing
    for pid, entry in log.producer_state.active_producers().items():
        assert entry.current_txn_first_offset == model.ongoing.get(pid, -1)
    end = log.log_end_offset
    points = sorted(
        {
            0,
            end,
            *(t.first_offset for t in model.aborted),
            *(t.last_offset for t in model.aborted),
            *(t.last_offset + 1 for t in model.aborted),
        }
    )
    for start in points:
        for upper in points:
            if start <= upper:
                assert log.collect_aborted_transactions(start, upper) == model.collect(start, upper), (
                    start,
                    upper,
                )
        # the fetch path's shortcut: "none from here on" must mean that no bound finds one
        if not log.has_aborted_transactions_from(start):
            assert model.collect(start, end + 1) == [], start
    assert [t for s in log.segments() for t in s.txn_index.all_aborted_txns()] == model.aborted


OPS = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["txn", "commit", "abort"]), st.integers(1, 3)),
        st.tuples(st.sampled_from(["plain", "hw", "roll"]), st.just(0)),
    ),
    min_size=1,
    max_size=40,
)


def run(log: Log, ops: list[tuple[str, int]], model: Model | None = None) -> Model:
    model = model or Model()
    for kind, pid in ops:
        offset = log.log_end_offset
        if kind == "txn":
            entry = log.producer_state.last_entry(pid)
            log.append_as_leader(txn_batch(pid, entry.last_seq + 1 if entry else 0), 0)
        elif kind in ("commit", "abort"):
            log.append_as_leader(marker(pid, kind == "commit"), 0, COORDINATOR)
        elif kind == "plain":
            log.append_as_leader(plain(), 0)
        elif kind == "hw":
            log.update_high_watermark(log.log_end_offset)
            continue
        else:
            log.roll()
            continue
        model.append(kind, pid, offset)
        assert log.last_stable_offset == model.last_stable_offset(log.high_watermark)
    return model


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_the_last_stable_offset_and_the_aborted_index_follow_a_model(tmp_path_factory, ops):
    log = open_log(tmp_path_factory.mktemp("log"))
    model = run(log, ops)
    check(log, model)
    log.update_high_watermark(log.log_end_offset)
    check(log, model)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS, clean=st.booleans(), lose_index=st.booleans())
def test_a_restart_keeps_the_open_transactions_and_the_aborted_index(
    tmp_path_factory, ops, clean, lose_index
):
    path = tmp_path_factory.mktemp("log")
    log = open_log(path)
    model = run(log, ops)
    hw = log.log_end_offset
    log.update_high_watermark(hw)
    if clean:
        log.close()
    else:
        log.close_handlers()  # killed
        if lose_index:  # torn away: recovery rebuilds it from the batches
            for base in log._local.base_offsets():
                transaction_index_file(log.dir, base).unlink(missing_ok=True)
    again = open_log(path, had_clean_shutdown=clean, recovery_point=0)
    again.update_high_watermark(hw)
    check(again, model)
    again.close()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS, data=st.data())
def test_truncation_reloads_the_open_transactions_and_cuts_the_aborted_index(tmp_path_factory, ops, data):
    log = open_log(tmp_path_factory.mktemp("log"))
    model = run(log, ops)
    boundaries = sorted({0} | {offset for _, _, offset in model.appended})
    target = data.draw(st.sampled_from(boundaries))
    truncated = model.truncated(target, log.producer_state.snapshot_offsets)
    log.truncate_to(target)
    check(log, truncated)
    # The log goes on from there as the model does.
    run(log, [("txn", 1), ("abort", 1), ("txn", 2), ("hw", 0)], truncated)
    check(log, truncated)


def test_a_truncation_reloaded_from_a_snapshot_forgets_the_unreplicated_ended_transactions(tmp_path):
    # Hypothesis' find: a transaction committed at 3 (the high watermark) and a roll at 4 that
    # snapshots the producers; truncating to 4 reloads that snapshot, which (as Kafka's) does not
    # hold the ended transactions above the high watermark: the LSO is the high watermark, not 1.
    log = open_log(tmp_path)
    ops = [("plain", 0), ("txn", 1), ("plain", 0), ("hw", 0), ("commit", 1), ("roll", 0), ("txn", 1)]
    model = run(log, ops)
    assert log.last_stable_offset == 1 and log.producer_state.snapshot_offsets == [4]
    truncated = model.truncated(4, log.producer_state.snapshot_offsets)
    log.truncate_to(4)
    assert log.last_stable_offset == 3
    check(log, truncated)


def test_read_committed_stops_at_the_first_open_transaction_below_the_high_watermark(tmp_path):
    log = open_log(tmp_path)
    log.append_as_leader(plain(), 0)  # 0
    log.append_as_leader(txn_batch(7, 0), 0)  # 1: opens
    log.append_as_leader(plain(), 0)  # 2
    assert log.first_unstable_offset == 1
    log.update_high_watermark(3)
    assert log.last_stable_offset == 1
    committed = log.read(0, 1 << 20, FetchIsolation.TXN_COMMITTED)
    assert log.fetch_upper_bound_offset(committed) == 1
    assert log.read(1, 1 << 20, FetchIsolation.TXN_COMMITTED).size == 0
    assert log.read(1, 1 << 20, FetchIsolation.HIGH_WATERMARK).size > 0
    assert not log.has_aborted_transactions_from(0)
    log.append_as_leader(marker(7, commit=False), 0, COORDINATOR)  # 3
    # Ended, but above the high watermark: still unstable.
    assert log.first_unstable_offset == 1 and log.last_stable_offset == 1
    log.update_high_watermark(4)
    assert log.first_unstable_offset is None and log.last_stable_offset == 4
    assert log.collect_aborted_transactions(0, 4) == [AbortedTxn(7, 1, 3, 4)]
    assert log.collect_aborted_transactions(0, 1) == []
    assert log.collect_aborted_transactions(4, 5) == []
    # the transaction ends at its marker (3): a fetch from after it needs no lookup
    assert log.has_aborted_transactions_from(0) and log.has_aborted_transactions_from(3)
    assert not log.has_aborted_transactions_from(4)


def test_marker_checks_follow_the_origin_and_the_epochs(tmp_path):
    log = open_log(tmp_path)
    with pytest.raises(InvalidRecordError):
        log.append_as_leader(marker(1, commit=True), 0)  # a client's control batch
    log.append_as_leader(txn_batch(1, 0, epoch=2), 0)
    with pytest.raises(InvalidTxnStateError):
        log.append_as_leader(idempotent(1, 2, 1), 0)  # not transactional inside a transaction
    with pytest.raises(InvalidProducerEpochError):
        log.append_as_leader(marker(1, commit=True, epoch=1), 0, COORDINATOR)
    log.append_as_leader(marker(1, commit=True, epoch=2, coordinator_epoch=5), 0, COORDINATOR)
    with pytest.raises(TransactionCoordinatorFencedError):
        log.append_as_leader(marker(1, commit=False, epoch=2, coordinator_epoch=4), 0, COORDINATOR)
    # A marker of nothing open is fine and ends nothing; a newer epoch is taken.
    end = log.log_end_offset
    log.append_as_leader(marker(1, commit=False, epoch=3, coordinator_epoch=5), 0, COORDINATOR)
    entry = log.producer_state.last_entry(1)
    assert entry is not None and entry.producer_epoch == 3 and entry.coordinator_epoch == 5
    assert log.collect_aborted_transactions(0, log.log_end_offset) == []
    assert log.log_end_offset == end + 1
    # A replica takes what the leader wrote without checks, markers of older coordinators too.
    follower = Log(tmp_path / "f-0", config(), now_ms=Clock())
    data = bytearray(
        build_batch(
            [Record(0, 0, None, b"x")],
            0,
            base_timestamp=NOW,
            producer_id=1,
            producer_epoch=3,
            base_sequence=0,
            is_transactional=True,
        )
    )
    follower.append_as_follower(data)
    stale = bytearray(build_marker_batch(EndTransactionMarker.abort(1), 1, 3, 1, timestamp=NOW))
    follower.append_as_follower(stale)
    assert follower.collect_aborted_transactions(0, 2) == [AbortedTxn(1, 0, 1, 2)]


def test_the_snapshot_keeps_an_open_transactions_first_offset(tmp_path):
    log = open_log(tmp_path)
    log.append_as_leader(plain(), 0)
    log.append_as_leader(txn_batch(4, 0, count=2), 0)
    log.close()
    snapshot = max(log.dir.glob("*.snapshot"))
    assert decode_snapshot(snapshot.read_bytes())[4].current_txn_first_offset == 1
    again = open_log(tmp_path, had_clean_shutdown=True)
    again.update_high_watermark(again.log_end_offset)
    assert again.first_unstable_offset == 1 and again.last_stable_offset == 1
    again.append_as_leader(marker(4, commit=True), 0, COORDINATOR)
    again.update_high_watermark(again.log_end_offset)
    assert again.last_stable_offset == again.log_end_offset


def test_an_open_transaction_keeps_its_producer_from_expiring(tmp_path):
    log = open_log(tmp_path)
    log.append_as_leader(txn_batch(1, 0), 0)
    log.append_as_leader(idempotent(2, 0, 0, timestamp=NOW), 0)
    assert log.remove_expired_producers(NOW + 10**12) == 1
    assert set(log.producer_state.active_producers()) == {1}


def test_retention_deletes_segments_with_their_txnindex(tmp_path):
    clock = Clock()
    log = Log(tmp_path / "t-0", config(retention_ms=1000), now_ms=clock)
    for pid in (1, 2, 3):
        log.append_as_leader(txn_batch(pid, 0), 0)
        log.append_as_leader(marker(pid, commit=False), 0, COORDINATOR)
        log.roll()
    files = [transaction_index_file(log.dir, s.base_offset) for s in log.segments()[:3]]
    assert all(f.exists() for f in files)
    log.update_high_watermark(log.log_end_offset)
    clock.now += 10**9
    assert log.delete_old_segments() == 3
    assert not any(f.exists() for f in files)
    assert not list(log.dir.glob("*.deleted"))
    assert log.collect_aborted_transactions(log.log_start_offset, log.log_end_offset) == []


def test_a_leftover_txnindex_of_a_rolled_offset_is_removed(tmp_path):
    log = open_log(tmp_path)
    log.append_as_leader(plain(), 0)
    stale = transaction_index_file(log.dir, 1)
    stale.write_bytes(AbortedTxn(9, 0, 5, 6).encode())
    log.roll()
    assert not stale.exists()
    assert log.collect_aborted_transactions(0, 10) == []
