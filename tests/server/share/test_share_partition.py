"""SharePartition's rules one by one (Kafka's SharePartition): acquisition and delivery counts,
the acknowledgement types, INVALID_RECORD_STATE, lock expiry, the delivery count limit, the
start offset moving past terminal records, the in-flight window, and what is persisted."""

from __future__ import annotations

from kafkalite.protocol import error_codes as E
from kafkalite.server.share.persister import StateBatch
from kafkalite.server.share.share_partition import (
    AckBatch,
    AckType,
    AcquiredRange,
    RecordState,
    SharePartition,
)

LOCK_MS = 1000


class Clock:
    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now


def make(limit: int = 5, locks: int = 200) -> tuple[SharePartition, Clock]:
    clock = Clock()
    return SharePartition(lambda: LOCK_MS, limit, locks, clock), clock


def batches(*ranges: tuple[int, int]) -> list[tuple[int, int, bool]]:
    return [(first, last, False) for first, last in ranges]


def ack(first: int, last: int, *types: AckType) -> AckBatch:
    return AckBatch(first, last, tuple(int(t) for t in types))


def test_acquire_takes_available_records_and_counts_a_delivery():
    sp, _ = make()
    assert sp.acquire("a", batches((0, 4)), 100) == [AcquiredRange(0, 4, 1)]
    assert sp.end_offset == 5
    assert {r.state for r in sp.records.values()} == {RecordState.ACQUIRED}
    # Nothing left to acquire for anyone until something comes back.
    assert sp.acquire("b", batches((0, 4)), 100) == []
    assert sp.next_fetch_offset() == 5


def test_acquire_stops_at_max_records_and_the_window():
    sp, _ = make(locks=100)
    assert sp.acquire("a", batches((0, 9)), 3) == [AcquiredRange(0, 2, 1)]
    assert sp.acquire("b", batches((0, 199)), 1000) == [AcquiredRange(3, 99, 1)]
    assert not sp.can_acquire()


def test_accept_acknowledges_and_moves_the_start_offset():
    sp, _ = make()
    sp.acquire("a", batches((0, 4)), 100)
    assert sp.acknowledge("a", [ack(0, 2, AckType.ACCEPT)]) == (E.NONE, [0, 1, 2])
    assert sp.start_offset == 3
    assert sp.acknowledge("a", [ack(3, 4, AckType.ACCEPT)]) == (E.NONE, [3, 4])
    assert sp.start_offset == 5 and not sp.records


def test_release_makes_records_available_again_with_their_count():
    sp, _ = make()
    sp.acquire("a", batches((0, 1)), 100)
    sp.acknowledge("a", [ack(0, 1, AckType.RELEASE)])
    assert sp.records[0].state is RecordState.AVAILABLE
    assert sp.acquire("b", batches((0, 1)), 100) == [AcquiredRange(0, 1, 2)]


def test_reject_and_gap_archive():
    sp, _ = make()
    sp.acquire("a", batches((0, 3)), 100)
    error, _ = sp.acknowledge("a", [ack(0, 3, AckType.ACCEPT, AckType.REJECT, AckType.GAP, AckType.RELEASE)])
    assert error == E.NONE
    assert sp.start_offset == 3  # 0 acknowledged, 1 and 2 archived: all terminal
    assert sp.records[3].state is RecordState.AVAILABLE
    assert sp.acquire("a", batches((0, 3)), 100) == [AcquiredRange(3, 3, 2)]  # only the released one


def test_acknowledging_records_one_does_not_hold_is_invalid_record_state():
    sp, _ = make()
    sp.acquire("a", batches((0, 1)), 100)
    assert sp.acknowledge("b", [ack(0, 1, AckType.ACCEPT)]) == (E.INVALID_RECORD_STATE, [])
    assert sp.acknowledge("a", [ack(5, 6, AckType.ACCEPT)]) == (E.INVALID_RECORD_STATE, [])
    # A batch is all or nothing: 0-1 are a's, 2 is nobody's.
    sp.acquire("a", batches((2, 2)), 100)
    sp.acknowledge("a", [ack(2, 2, AckType.ACCEPT)])
    assert sp.acknowledge("a", [ack(0, 2, AckType.ACCEPT)]) == (E.INVALID_RECORD_STATE, [])
    assert sp.records[0].state is RecordState.ACQUIRED
    # A terminal record cannot be acknowledged again.
    assert sp.acknowledge("a", [ack(0, 0, AckType.REJECT)]) == (E.NONE, [0])
    assert sp.acknowledge("a", [ack(0, 0, AckType.ACCEPT)]) == (E.NONE, [])  # below the start: ignored
    assert sp.start_offset == 1


def test_malformed_acknowledgement_batches_are_invalid_request():
    sp, _ = make()
    sp.acquire("a", batches((0, 3)), 100)
    assert sp.acknowledge("a", [AckBatch(0, 3, (1, 1))])[0] == E.INVALID_REQUEST  # 2 types for 4 offsets
    assert sp.acknowledge("a", [AckBatch(0, 3, (9,))])[0] == E.INVALID_REQUEST  # no such type
    assert sp.acknowledge("a", [AckBatch(3, 0, (1,))])[0] == E.INVALID_REQUEST  # backwards


def test_an_expired_lock_makes_records_available_and_the_late_ack_fails():
    sp, clock = make()
    sp.acquire("a", batches((0, 1)), 100)
    clock.now = LOCK_MS - 1
    assert sp.expire_locks() == []
    clock.now = LOCK_MS
    assert sp.expire_locks() == [0, 1]
    assert sp.records[0].state is RecordState.AVAILABLE
    assert sp.acknowledge("a", [ack(0, 1, AckType.ACCEPT)]) == (E.INVALID_RECORD_STATE, [])


def test_the_delivery_count_limit_archives_instead_of_releasing():
    sp, clock = make(limit=3)
    for delivery in range(1, 4):
        assert sp.acquire("a", batches((0, 0)), 100) == [AcquiredRange(0, 0, delivery)]
        if delivery % 2:
            sp.acknowledge("a", [ack(0, 0, AckType.RELEASE)])
        else:
            clock.now += LOCK_MS
            sp.expire_locks()
    assert sp.start_offset == 1 and not sp.records  # archived at the third delivery
    assert sp.acquire("a", batches((0, 0)), 100) == []


def test_release_member_gives_back_only_its_records():
    sp, _ = make()
    sp.acquire("a", batches((0, 1)), 100)
    sp.acquire("b", batches((2, 3)), 100)
    assert sp.release_member("a") == [0, 1]
    assert sp.records[2].member_id == "b"
    assert sp.next_fetch_offset() == 0


def test_control_batches_are_archived_not_delivered():
    sp, _ = make()
    assert sp.acquire("a", [(0, 1, False), (2, 2, True), (3, 3, False)], 100) == [
        AcquiredRange(0, 1, 1), AcquiredRange(3, 3, 1)]
    acks = ack(0, 3, AckType.ACCEPT, AckType.ACCEPT, AckType.GAP, AckType.ACCEPT)
    assert sp.acknowledge("a", [acks])[0] == E.NONE
    assert sp.start_offset == 4


def test_a_gap_in_the_log_is_archived():
    sp, _ = make()
    assert sp.acquire("a", batches((0, 0), (5, 5)), 100) == [AcquiredRange(0, 0, 1), AcquiredRange(5, 5, 1)]
    assert [sp.records[o].state for o in range(1, 5)] == [RecordState.ARCHIVED] * 4


def test_state_batches_and_load_round_trip():
    sp, _ = make()
    sp.load(1, 10, [])
    sp.acquire("a", batches((10, 14)), 100)
    sp.acknowledge("a", [ack(11, 11, AckType.ACCEPT), ack(12, 12, AckType.RELEASE)])
    written = sp.state_batches(range(10, 15))
    assert written == [StateBatch(10, 10, 0, 1), StateBatch(11, 11, 2, 1), StateBatch(12, 14, 0, 1)]
    again, _ = make()
    again.load(1, 10, written)
    assert again.start_offset == 10 and again.end_offset == 15
    assert again.records[11].state is RecordState.ACKNOWLEDGED
    assert again.acquire("b", batches((10, 14)), 100) == [AcquiredRange(10, 10, 2), AcquiredRange(12, 14, 2)]


def test_the_log_start_moving_past_the_window_drops_records():
    sp, _ = make()
    sp.acquire("a", batches((0, 4)), 100)
    sp.move_start_to(3)
    assert sp.start_offset == 3 and sorted(sp.records) == [3, 4]
