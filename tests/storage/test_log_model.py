"""A state machine (append / roll / truncate / read / reopen, clean or after a crash) against a model
of the log: the list of batches it holds, by offsets and bytes."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kafkalite.protocol.records import iter_batches
from kafkalite.storage.config import LogConfig
from kafkalite.storage.log import FetchIsolation, Log
from kafkalite.storage.volume import FILES, MemoryVolume, Volume
from tests.support.batches import batch

CONFIG = LogConfig(segment_bytes=1500, index_interval_bytes=120, file_delete_delay_ms=0)


class LogMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="kafkalite-log-model-"))
        self.dir = self.root / "model-0"
        self.volume = self.make_volume()
        self.log = Log(self.dir, CONFIG, volume=self.volume)
        self.batches: list[tuple[int, int, bytes]] = []  # (base offset, last offset, bytes)
        self.end = 0
        self.epoch = 0

    def make_volume(self) -> Volume:
        return FILES

    def teardown(self) -> None:
        self.log.close()
        shutil.rmtree(self.root, ignore_errors=True)

    @rule(counts=st.lists(st.integers(1, 6), min_size=1, max_size=3), sizes=st.integers(0, 60),
          new_epoch=st.booleans())
    def append(self, counts: list[int], sizes: int, new_epoch: bool) -> None:
        self.epoch += new_epoch
        buf = bytearray().join(batch(c, timestamp=self.end, value_size=sizes) for c in counts)
        info = self.log.append_as_leader(buf, self.epoch)
        assert info.first_offset == self.end
        for pos, header in iter_batches(buf):
            self.batches.append((header.base_offset, header.last_offset, bytes(buf[pos : pos + header.size])))
        self.end = info.last_offset + 1

    @rule()
    def roll(self) -> None:
        self.log.roll()

    @rule(data=st.data())
    def truncate(self, data: st.DataObject) -> None:
        target = data.draw(st.integers(0, self.end + 2))
        removed = self.log.truncate_to(target)
        assert removed == (target < self.end)
        if removed:
            self.batches = [b for b in self.batches if b[1] < target]
            # a batch holding the target goes whole, and the log ends where what is left ends
            self.end = self.batches[-1][1] + 1 if self.batches else 0

    @precondition(lambda self: self.end > 0)
    @rule(data=st.data(), max_bytes=st.integers(1, 1200))
    def read(self, data: st.DataObject, max_bytes: int) -> None:
        offset = data.draw(st.integers(0, self.end))
        got = self.log.read(offset, max_bytes, FetchIsolation.LOG_END).read()
        expected = [b for b in self.batches if b[1] >= offset]
        if not expected:
            assert got == b""
            return
        bases = {s.base_offset for s in self.log.segments()}
        taken = [expected[0]]
        for b in expected[1:]:
            if b[0] in bases or sum(len(t[2]) for t in taken) + len(b[2]) > max_bytes:
                break  # a read ends at a segment's end or at max_bytes, on a batch boundary
            taken.append(b)
        assert got == b"".join(t[2] for t in taken)

    @rule(clean=st.booleans())
    def reopen(self, clean: bool) -> None:
        recovery_point = self.log.recovery_point
        if clean:
            self.log.flush()
            self.log.close()
        else:
            self.log.close_handlers()  # killed: nothing more is written
        self.log = Log(self.dir, CONFIG, had_clean_shutdown=clean, recovery_point=recovery_point,
                       volume=self.volume)

    @invariant()
    def offsets_agree(self) -> None:
        assert self.log.log_end_offset == self.end
        assert sum(len(b[2]) for b in self.batches) == self.log.size
        epochs = self.log.leader_epoch_cache.entries()
        assert all(e.start_offset <= self.end for e in epochs)
        assert [e.epoch for e in epochs] == sorted({e.epoch for e in epochs})


LogMachine.TestCase.settings = settings(max_examples=40, stateful_step_count=30, deadline=None)
TestLogModel = LogMachine.TestCase


class MemoryLogMachine(LogMachine):
    """The same machine on a log in memory (log.storage=memory): the same model holds."""

    def make_volume(self) -> Volume:
        return MemoryVolume()

    def teardown(self) -> None:
        super().teardown()
        assert not self.dir.exists()  # nothing was written to disk


MemoryLogMachine.TestCase.settings = settings(max_examples=40, stateful_step_count=30, deadline=None)
TestMemoryLogModel = MemoryLogMachine.TestCase
