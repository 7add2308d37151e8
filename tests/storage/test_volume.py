"""The two volumes: MemoryVolume's own behaviour (names, renames, removal under open descriptors,
nothing on disk), and the same log manager on files and in memory driven by the same random
operations, whose files must be the same names with the same bytes after every step."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kafkalite.common.file_slice import FileSlice
from kafkalite.storage.config import LogConfig
from kafkalite.storage.log import FetchIsolation
from kafkalite.storage.log_manager import LogManager
from kafkalite.storage.volume import FILES, MemoryVolume, Volume, glob
from tests.support.batches import batch

ROOT = Path("/kafkalite-memory-test")  # never created: a memory volume's names only


def test_files_directories_renames_and_removal():
    v = MemoryVolume()
    with pytest.raises(FileNotFoundError):
        v.open_fd(ROOT / "a" / "x.log")  # no directory yet
    v.mkdir(ROOT / "a")
    fd = v.open_fd(ROOT / "a" / "x.log")
    os.pwrite(fd, b"records", 0)
    assert v.size(ROOT / "a" / "x.log") == 7 and v.read_bytes(ROOT / "a" / "x.log") == b"records"
    v.write_atomically(ROOT / "a" / "checkpoint", b"0\n0\n")
    assert sorted(p.name for p in v.children(ROOT / "a")) == ["checkpoint", "x.log"]
    assert glob(v, ROOT / "a", "*.log") == [ROOT / "a" / "x.log"]
    v.replace(ROOT / "a", ROOT / "a.1-delete")
    assert not v.exists(ROOT / "a") and v.read_bytes(ROOT / "a.1-delete" / "x.log") == b"records"
    v.rmtree(ROOT / "a.1-delete")
    assert not v.exists(ROOT / "a.1-delete" / "x.log")
    # An open descriptor (a Fetch response sending from the file) still reads the bytes.
    assert FileSlice(fd, 0, 7).read() == b"records"
    os.close(fd)
    v.close()
    assert not ROOT.exists()


def test_times_move_with_writes_and_may_be_set():
    v = MemoryVolume()
    v.mkdir(ROOT)
    fd = v.open_fd(ROOT / "s.log")
    os.close(fd)
    v.set_mtime_ms(ROOT / "s.log", 1_000)
    assert v.mtime_ms(ROOT / "s.log") == 1_000
    v.close()


def _tree(volume: Volume, root: Path) -> dict[str, bytes]:
    """Every file below ``root``: its path (a deleted log's unique name normalised) and bytes."""
    out = {}
    todo = [root]
    while todo:
        d = todo.pop()
        for child in volume.children(d):
            if volume.is_dir(child):
                todo.append(child)
            else:
                name = re.sub(r"\.[0-9a-f]{32}-delete", ".X-delete", str(child.relative_to(root)))
                out[name] = volume.read_bytes(child)
    return out


CONFIG = LogConfig(segment_bytes=3000, index_interval_bytes=200, file_delete_delay_ms=0)
PARTITIONS = [("orders", 0), ("orders", 1), ("events", 0)]


class TwinLogManagers(RuleBasedStateMachine):
    """The same operations on a LogManager on files and one in memory."""

    def __init__(self) -> None:
        super().__init__()
        self.disk = Path(tempfile.mkdtemp(prefix="kafkalite-twin-"))
        self.memory = MemoryVolume()
        self.roots = {"files": self.disk, "memory": ROOT}
        self.volumes: dict[str, Volume] = {"files": FILES, "memory": self.memory}
        self.managers = {k: self._open(k) for k in self.roots}
        self.epoch = 0

    def _open(self, kind: str) -> LogManager:
        return LogManager([self.roots[kind] / "d"], lambda topic: CONFIG, volume=self.volumes[kind])

    def teardown(self) -> None:
        for m in self.managers.values():
            m.shutdown()
        shutil.rmtree(self.disk, ignore_errors=True)
        self.memory.close()
        assert not ROOT.exists()

    def _both(self, fn):
        """``fn`` on each manager: the same result, or the same error."""
        results = {}
        for k, m in self.managers.items():
            try:
                results[k] = fn(m)
            except Exception as e:
                results[k] = (type(e).__name__, str(e))
        assert results["files"] == results["memory"]
        return results["files"]

    @rule(tp=st.sampled_from(PARTITIONS), counts=st.lists(st.integers(1, 5), min_size=1, max_size=3),
          size=st.integers(0, 60), new_epoch=st.booleans())
    def append(self, tp, counts, size, new_epoch):
        self.epoch += new_epoch
        data = bytes(bytearray().join(batch(c, timestamp=1000, value_size=size) for c in counts))
        self._both(lambda m: m.get_or_create(*tp).append_as_leader(bytearray(data), self.epoch).last_offset)

    @rule(tp=st.sampled_from(PARTITIONS))
    def roll(self, tp):
        self._both(lambda m: m.get_or_create(*tp).roll().base_offset)

    @rule(tp=st.sampled_from(PARTITIONS), data=st.data())
    def truncate(self, tp, data):
        end = self.managers["files"].get_or_create(*tp).log_end_offset
        target = data.draw(st.integers(0, end + 1))
        self._both(lambda m: m.get_or_create(*tp).truncate_to(target))

    @rule(tp=st.sampled_from(PARTITIONS), data=st.data())
    def read(self, tp, data):
        end = self.managers["files"].get_or_create(*tp).log_end_offset
        offset = data.draw(st.integers(0, end))
        self._both(lambda m: m.get_or_create(*tp).read(offset, 1000, FetchIsolation.LOG_END).read())

    @rule(tp=st.sampled_from(PARTITIONS), data=st.data())
    def delete_records(self, tp, data):
        end = self.managers["files"].get_or_create(*tp).log_end_offset
        target = data.draw(st.integers(0, end))

        def delete_records(m):
            partition_log = m.get_or_create(*tp)
            partition_log.update_high_watermark(partition_log.log_end_offset)
            return partition_log.maybe_increment_log_start_offset(target)
        self._both(delete_records)

    @rule()
    def checkpoint(self):
        self._both(lambda m: (m.checkpoint_recovery_offsets(), m.checkpoint_log_start_offsets(),
                              m.cleanup_logs()))

    @precondition(lambda self: self.managers["files"].all_logs())
    @rule(data=st.data())
    def delete(self, data):
        tp = data.draw(st.sampled_from(sorted(self.managers["files"].all_logs())))
        self._both(lambda m: (m.delete(*tp), m.delete_logs(force=data.draw(st.booleans()))))

    @rule(clean=st.booleans())
    def restart(self, clean):
        for kind, m in self.managers.items():
            if clean:
                m.shutdown()
            else:  # killed: the files as they are
                for partition_log in m.all_logs().values():
                    partition_log.close_handlers()
            self.managers[kind] = self._open(kind)

    @invariant()
    def same_files_same_bytes(self):
        assert _tree(FILES, self.disk) == _tree(self.memory, ROOT)
        offsets = {k: {tp: (g.log_start_offset, g.log_end_offset) for tp, g in m.all_logs().items()}
                   for k, m in self.managers.items()}
        assert offsets["files"] == offsets["memory"]


TwinLogManagers.TestCase.settings = settings(max_examples=30, stateful_step_count=25, deadline=None)
TestTwinLogManagers = TwinLogManagers.TestCase
