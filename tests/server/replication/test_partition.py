"""A leader's Partition on a real log, with a clock and an AlterPartition channel the test answers:
the maximal ISR while a proposal is out, and acks=all's answer when the ISR shrank after the
append."""

from __future__ import annotations

import uuid

import pytest

from kafkalite.common.errors import ApiError
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.records.control import EndTransactionMarker, build_marker_batch
from kafkalite.protocol.records.records import Record, build_batch
from kafkalite.server.replication.partition import Partition, PartitionState
from kafkalite.storage.config import LogConfig
from kafkalite.storage.errors import InvalidRecordError
from kafkalite.storage.log import AppendOrigin, FetchIsolation, Log
from tests.support.batches import batch


class Clock:
    def __init__(self) -> None:
        self.ms = 1_000_000

    def __call__(self) -> int:
        return self.ms


def leader(tmp_path, isr: tuple[int, ...], min_isr: int = 1) -> tuple[Partition, list, Clock]:
    """Broker 1 leads t-0 (replicas 1, 2, 3); proposals are recorded, answered by the test."""
    proposals: list[tuple[int, ...]] = []
    clock = Clock()
    log = Log(tmp_path / "t-0", LogConfig(min_insync_replicas=min_isr))
    partition = Partition("t", 0, uuid.uuid4(), log, 1, PartitionState(1, 5, isr, (1, 2, 3), 7),
                          lambda _p, new_isr: proposals.append(new_isr), replica_lag_time_max_ms=30_000,
                          now_ms=clock)
    return partition, proposals, clock


def test_a_follower_proposed_into_the_isr_counts_for_the_high_watermark_before_the_answer(tmp_path):
    p, proposals, _ = leader(tmp_path, isr=(1,))
    p.append_records_to_leader(batch(3))
    assert p.log.high_watermark == 3  # the leader alone is the ISR
    # Follower 2 caught up: proposed back, not yet answered.
    p.update_follower_fetch_state(2, 3)
    assert proposals == [(1, 2)] and p.isr == (1,) and p.maximal_isr == {1, 2}
    # Until the controller answers, the high watermark waits for 2 as well (Kafka's maximal ISR):
    # a record acknowledged now is on both, whichever way the answer goes.
    p.append_records_to_leader(batch(2))
    assert p.log.high_watermark == 3
    p.update_follower_fetch_state(2, 5)
    assert p.log.high_watermark == 5
    # Follower 3 is not in it: its position does not matter.
    assert p.followers[3].log_end_offset < 5
    p.on_alter_partition_answer(E.NONE, 5, (1, 2), 8)
    assert p.isr == (1, 2) and p.pending_isr is None and p.state.partition_epoch == 8
    p.log.close()


def test_a_refused_proposal_leaves_the_isr_and_drops_the_follower_from_the_maximal_isr(tmp_path):
    p, proposals, _ = leader(tmp_path, isr=(1,))
    p.append_records_to_leader(batch(1))
    p.update_follower_fetch_state(2, 1)
    assert proposals == [(1, 2)] and p.maximal_isr == {1, 2}
    p.on_alter_partition_answer(E.INVALID_UPDATE_VERSION, 5, (), -1)
    assert p.isr == (1,) and p.maximal_isr == {1}
    p.log.close()


def test_acks_all_gets_not_enough_replicas_after_append_when_the_isr_shrank_below_min(tmp_path):
    p, proposals, clock = leader(tmp_path, isr=(1, 2, 3), min_isr=2)
    for r in (2, 3):
        p.update_follower_fetch_state(r, 0)
    info = p.append_records_to_leader(batch(4), required_acks=-1)
    required = info.last_offset + 1
    assert p.required_offset_reached(required) == (False, E.NONE)
    # Both followers fetch the batch: the high watermark covers it...
    for r in (2, 3):
        p.update_follower_fetch_state(r, required)
    assert p.log.high_watermark == required
    # ...and then both fall behind for replica.lag.time.max.ms and leave the ISR: the waiting
    # produce learns that its records are committed with fewer replicas than min.insync.replicas.
    p.append_records_to_leader(batch(1), required_acks=-1)
    clock.ms += 30_001
    assert p.maybe_shrink_isr() and proposals[-1] == (1,)
    p.on_alter_partition_answer(E.NONE, 5, (1,), 8)
    assert p.required_offset_reached(required) == (True, E.NOT_ENOUGH_REPLICAS_AFTER_APPEND)
    # A new acks=all produce is refused before the append.
    end = p.log.log_end_offset
    with pytest.raises(ApiError) as refused:
        p.append_records_to_leader(batch(1), required_acks=-1)
    assert refused.value.code == E.NOT_ENOUGH_REPLICAS
    assert p.log.log_end_offset == end
    p.log.close()


def test_a_read_carries_the_last_stable_offset_which_a_replicated_marker_moves(tmp_path):
    """Only a coordinator appends markers; the last stable offset passes an ended transaction once
    the high watermark passes its marker."""
    p, _, _ = leader(tmp_path, isr=(1, 2))
    p.update_follower_fetch_state(2, 0)
    p.append_records_to_leader(batch(1))  # 0
    txn = build_batch([Record(0, 0, None, b"t")], 0, base_timestamp=1, producer_id=4, producer_epoch=0,
                      base_sequence=0, is_transactional=True)
    p.append_records_to_leader(bytearray(txn))  # 1
    p.update_follower_fetch_state(2, 2)
    result = p.read(0, 1 << 20, FetchIsolation.TXN_COMMITTED, True)
    assert (result.high_watermark, result.last_stable_offset) == (2, 1)
    marker = bytearray(build_marker_batch(EndTransactionMarker.commit(0), 4, 0, timestamp=1))
    with pytest.raises(InvalidRecordError):
        p.append_records_to_leader(bytearray(marker))  # a client's
    p.append_records_to_leader(marker, -1, AppendOrigin.COORDINATOR)  # 2
    # Not replicated yet: the transaction is still unstable.
    assert p.read(0, 1 << 20, FetchIsolation.TXN_COMMITTED, True).last_stable_offset == 1
    assert p.update_follower_fetch_state(2, 3)
    assert p.read(0, 1 << 20, FetchIsolation.TXN_COMMITTED, True).last_stable_offset == 3
    p.log.close()
