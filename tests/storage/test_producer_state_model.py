"""A state machine of idempotent producers on a Log (leader and follower appends, plain batches,
rolls, truncation, retention, clean and unclean reopens) against a model: the producer state is
a fold of the batches left in the log (retention's included: it forgets no producer), and the
outcome of a leader's append follows from it by Kafka's rules, with sequences modulo 2**31."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import NamedTuple

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kafkalite.storage.config import LogConfig
from kafkalite.storage.errors import InvalidProducerEpochError, OutOfOrderSequenceError
from kafkalite.storage.log import Log
from tests.support.batches import batch, idempotent

CONFIG = LogConfig(segment_bytes=400, index_interval_bytes=100, file_delete_delay_ms=0)
NOW = 50_000_000
WRAP = 2**31


class Batch(NamedTuple):
    producer_id: int  # -1: a plain batch
    epoch: int
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    timestamp: int


Model = dict[int, tuple[int, tuple[tuple[int, int, int, int, int], ...], int]]


def fold(batches: list[Batch]) -> Model:
    """Each producer's epoch, last five batches of that epoch and last timestamp."""
    state: Model = {}
    for b in batches:
        if b.producer_id < 0:
            continue
        epoch, cached, _ = state.get(b.producer_id, (b.epoch, (), 0))
        if epoch != b.epoch:
            cached = ()
        entry = (b.first_seq, b.last_seq, b.first_offset, b.last_offset, b.timestamp)
        state[b.producer_id] = (b.epoch, (*cached, entry)[-5:], b.timestamp)
    return state


def observed(log: Log) -> Model:
    return {
        pid: (
            e.producer_epoch,
            tuple((b.first_seq, b.last_seq, b.first_offset, b.last_offset, b.timestamp) for b in e.batches),
            e.last_timestamp,
        )
        for pid, e in log.producer_state.active_producers().items()
    }


class ProducerMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="kafkalite-producers-"))
        self.dir = self.root / "model-0"
        self.log = Log(self.dir, CONFIG, now_ms=lambda: NOW)
        self.batches: list[Batch] = []
        self.end = 0
        self.clock = NOW - 10_000  # batch timestamps, never old enough to expire

    def teardown(self) -> None:
        self.log.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def tick(self) -> int:
        self.clock += 10
        return self.clock

    @rule(data=st.data(), pid=st.integers(1, 3))
    def produce(self, data: st.DataObject, pid: int) -> None:
        entry = fold(self.batches).get(pid)
        # Unknown producers may start anywhere: near the int32 maximum too, to wrap within a batch
        # (MAX - 1, MAX, 0) or just after one (MAX - 1, MAX).
        options = [(0, 0, 1), (1, WRAP - 2, 2), (2, WRAP - 2, 3)]
        if entry is not None:
            epoch, cached, _ = entry
            following = (cached[-1][1] + 1) % WRAP
            kind = data.draw(st.sampled_from(["next", "retry", "other"]))
            if kind == "next":
                options = [(epoch, following, 1), (epoch, following, 3), (epoch + 1, 0, 2)]
            elif kind == "retry":
                options = [(epoch, c[0], c[3] - c[2] + 1) for c in cached]
            else:
                options = [
                    (epoch, (following + 1) % WRAP, 1), (epoch, 0, 2), (epoch + 1, 3, 1),
                    (max(epoch - 1, 0), following, 1),
                ]
                options += [(epoch, c[0], c[3] - c[2] + 2) for c in cached]  # not quite retries
        epoch, seq, count = data.draw(st.sampled_from(options))
        last_seq = (seq + count - 1) % WRAP
        expected: str | tuple[int, int] = "append"
        if entry is not None:
            known_epoch, cached, _ = entry
            retried = [c for c in cached if (c[0], c[1]) == (seq, last_seq)]
            if epoch == known_epoch and retried:
                expected = (retried[0][2], retried[0][3])
            elif epoch < known_epoch:
                expected = "fenced"
            elif epoch != known_epoch and seq != 0:
                expected = "out of order"
            elif epoch == known_epoch and seq != (cached[-1][1] + 1) % WRAP:
                expected = "out of order"
        ts = self.tick()
        try:
            info = self.log.append_as_leader(idempotent(pid, epoch, seq, count=count, timestamp=ts), 0)
        except InvalidProducerEpochError:
            assert expected == "fenced"
            return
        except OutOfOrderSequenceError:
            assert expected == "out of order"
            return
        if isinstance(expected, tuple):
            assert info.duplicate and (info.first_offset, info.last_offset) == expected
            return
        assert expected == "append" and not info.duplicate
        assert (info.first_offset, info.last_offset) == (self.end, self.end + count - 1)
        self.batches.append(Batch(pid, epoch, seq, last_seq, self.end, self.end + count - 1, ts + count - 1))
        self.end += count

    @rule(count=st.integers(1, 3))
    def plain(self, count: int) -> None:
        ts = self.tick()
        info = self.log.append_as_leader(batch(count, timestamp=ts, epoch=-1), 0)
        assert info.first_offset == self.end
        self.batches.append(Batch(-1, -1, -1, -1, self.end, self.end + count - 1, ts + count - 1))
        self.end += count

    @rule(pid=st.integers(1, 4), epoch=st.integers(0, 3), seq=st.integers(0, 40), count=st.integers(1, 3))
    def replicate(self, pid: int, epoch: int, seq: int, count: int) -> None:
        """A follower's append: whatever the leader accepted, unchecked."""
        ts = self.tick()
        copied = batch(count, timestamp=ts, base_offset=self.end, producer_id=pid, producer_epoch=epoch,
                       base_sequence=seq)
        self.log.append_as_follower(copied)
        last = self.end + count - 1
        self.batches.append(Batch(pid, epoch, seq, seq + count - 1, self.end, last, ts + count - 1))
        self.end += count

    @rule()
    def roll(self) -> None:
        self.log.roll()

    @precondition(lambda self: self.end > 0)
    @rule(data=st.data())
    def truncate(self, data: st.DataObject) -> None:
        target = data.draw(st.integers(0, self.end))
        first_base = self.log.segments()[0].base_offset
        removed = self.log.truncate_to(target)
        assert removed == (target < self.end)
        if not removed:
            return
        if target < first_base:  # below every segment: the log starts over at the target
            self.batches, self.end = [], target
            return
        self.batches = [b for b in self.batches if b.last_offset < target]
        self.end = self.batches[-1].last_offset + 1 if self.batches else first_base

    @precondition(lambda self: self.end > 0)
    @rule(data=st.data())
    def retention(self, data: st.DataObject) -> None:
        """DeleteRecords up to a drawn offset, then the retention check deleting the segments
        below it: no producer is forgotten."""
        self.log.update_high_watermark(self.end)
        self.log.maybe_increment_log_start_offset(data.draw(st.integers(self.log.log_start_offset, self.end)))
        self.log.delete_old_segments()
        first_base = self.log.segments()[0].base_offset
        assert all(int(p.name[:20]) >= first_base for p in self.dir.glob("*.snapshot"))

    @rule(clean=st.booleans())
    def reopen(self, clean: bool) -> None:
        recovery_point, log_start = self.log.recovery_point, self.log.log_start_offset
        if clean:
            self.log.flush()
            self.log.close()
        else:
            self.log.close_handlers()  # killed: no snapshot at the log end
        self.log = Log(self.dir, CONFIG, had_clean_shutdown=clean, recovery_point=recovery_point,
                       log_start_offset=log_start, now_ms=lambda: NOW)

    @invariant()
    def state_is_the_fold_of_the_batches(self) -> None:
        assert self.log.log_end_offset == self.end
        assert observed(self.log) == fold(self.batches)
        assert all(int(p.name[:20]) <= self.end for p in self.dir.glob("*.snapshot"))


ProducerMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)
TestProducerModel = ProducerMachine.TestCase
