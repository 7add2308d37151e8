"""A SharePartition driven by Hypothesis through acquisitions, acknowledgements of every type,
member releases, lock expiries (a fake clock) and log growth, checked step by step against a
model of Kafka's rules (per offset: state, delivery count, holder, lock deadline), and always:
a record is ACQUIRED by at most one member and only with its lock running, ACKNOWLEDGED and
ARCHIVED never change, a delivery count never passes the limit, nothing below the start offset
is in flight and the record just at it is not terminal."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from kafkalite.protocol import error_codes as E
from kafkalite.server.share.share_partition import AckBatch, AckType, RecordState, SharePartition

S = RecordState
LIMIT = 3
LOCKS = 12
LOCK_MS = 100
MEMBERS = ("a", "b", "c")


@dataclass
class Model:
    state: RecordState = S.AVAILABLE
    count: int = 0
    member: str | None = None
    deadline: int = 0


class SharePartitionMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.now = 0
        self.sp = SharePartition(lambda: LOCK_MS, LIMIT, LOCKS, lambda: self.now)
        self.log_end = 0  # the log: one record per offset, batches of any size
        self.model: dict[int, Model] = {}  # every offset ever in flight
        self.seen_terminal: dict[int, RecordState] = {}

    def _back(self, m: Model) -> None:
        m.state = S.ARCHIVED if m.count >= LIMIT else S.AVAILABLE
        m.member, m.deadline = None, 0

    def _start(self) -> int:
        start = 0
        while start in self.model and self.model[start].state in (S.ACKNOWLEDGED, S.ARCHIVED):
            start += 1
        return start

    @rule(n=st.integers(1, 8))
    def produce(self, n: int) -> None:
        self.log_end += n

    @rule(member=st.sampled_from(MEMBERS), max_records=st.integers(1, 10), batch=st.integers(1, 4))
    def acquire(self, member: str, max_records: int, batch: int) -> None:
        start = self.sp.next_fetch_offset()
        end = self.log_end
        batches = [(o, min(o + batch - 1, end - 1), False) for o in range(start, end, batch)]
        got = self.sp.acquire(member, batches, max_records)
        # The model: from the first AVAILABLE (or new) record on, in offset order, up to max_records,
        # new records only while the window (start offset .. end) has room.
        expected: list[int] = []
        window_start = self._start()
        for offset in range(start, self.log_end):
            if len(expected) >= max_records:
                break
            m = self.model.get(offset)
            if m is None:
                if offset - window_start >= LOCKS:
                    break
                m = self.model[offset] = Model()
            if m.state is S.AVAILABLE:
                m.state, m.count, m.member, m.deadline = S.ACQUIRED, m.count + 1, member, self.now + LOCK_MS
                expected.append(offset)
        acquired = [o for r in got for o in range(r.first_offset, r.last_offset + 1)]
        assert acquired == expected
        for r in got:
            offsets = range(r.first_offset, r.last_offset + 1)
            assert all(self.model[o].count == r.delivery_count for o in offsets)

    @rule(member=st.sampled_from(MEMBERS), first=st.integers(0, 40), length=st.integers(1, 5),
          types=st.lists(st.sampled_from(list(AckType)), min_size=1, max_size=5), single=st.booleans())
    def acknowledge(self, member: str, first: int, length: int, types: list[AckType], single: bool) -> None:
        last = first + length - 1
        per_offset = [types[0]] * length if single else (types * length)[:length]
        sent = (int(per_offset[0]),) if single else tuple(int(t) for t in per_offset)
        error, changed = self.sp.acknowledge(member, [AckBatch(first, last, sent)])
        start = self._start()
        relevant = []
        for offset, t in zip(range(first, last + 1), per_offset, strict=True):
            m = self.model.get(offset)
            if offset < start:
                continue
            if t is AckType.GAP and (m is None or m.state in (S.ACKNOWLEDGED, S.ARCHIVED)):
                continue
            relevant.append((offset, t))
        held = all(self.model.get(o) is not None and self.model[o].state is S.ACQUIRED
                   and self.model[o].member == member for o, _ in relevant)
        if not held:
            assert (error, changed) == (E.INVALID_RECORD_STATE, [])
            return
        assert error == E.NONE and changed == [o for o, _ in relevant]
        for offset, t in relevant:
            m = self.model[offset]
            if t is AckType.ACCEPT:
                m.state, m.member, m.deadline = S.ACKNOWLEDGED, None, 0
            elif t is AckType.RELEASE:
                self._back(m)
            else:
                m.state, m.member, m.deadline = S.ARCHIVED, None, 0

    @rule(member=st.sampled_from(MEMBERS))
    def release_member(self, member: str) -> None:
        changed = self.sp.release_member(member)
        expected = sorted(o for o, m in self.model.items() if m.state is S.ACQUIRED and m.member == member)
        assert sorted(changed) == expected
        for o in expected:
            self._back(self.model[o])

    @rule(ms=st.integers(1, 150))
    def time_passes(self, ms: int) -> None:
        self.now += ms
        changed = self.sp.expire_locks()
        expected = sorted(o for o, m in self.model.items()
                          if m.state is S.ACQUIRED and m.deadline <= self.now)
        assert sorted(changed) == expected
        for o in expected:
            self._back(self.model[o])

    @invariant()
    def matches_the_model(self) -> None:
        start = self._start()
        assert self.sp.start_offset == start
        for offset, record in self.sp.records.items():
            m = self.model[offset]
            assert (record.state, record.delivery_count, record.member_id) == (m.state, m.count, m.member)

    @invariant()
    def rules_hold(self) -> None:
        sp = self.sp
        assert all(o >= sp.start_offset for o in sp.records)
        assert sp.end_offset - sp.start_offset <= LOCKS
        if sp.start_offset < sp.end_offset:
            assert sp.records[sp.start_offset].state not in (S.ACKNOWLEDGED, S.ARCHIVED)
        for offset, m in self.model.items():
            assert m.count <= LIMIT
            if m.state is S.ACQUIRED:
                assert m.member is not None and m.deadline > self.now
            if offset in self.seen_terminal:
                assert m.state is self.seen_terminal[offset]
            elif m.state in (S.ACKNOWLEDGED, S.ARCHIVED):
                self.seen_terminal[offset] = m.state


TestSharePartitionMachine = SharePartitionMachine.TestCase
TestSharePartitionMachine.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
