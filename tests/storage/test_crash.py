"""A broker killed with SIGKILL loses no appended batch: the batches are in the page cache, which
outlives the process; the restart recovers from the recovery point without the clean marker."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kafkalite.protocol.records import iter_batches, validate_batch
from kafkalite.storage.config import LogConfig
from kafkalite.storage.log import FetchIsolation, Log

pytestmark = pytest.mark.integration


ROOT = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from kafkalite.storage.config import LogConfig
    from kafkalite.storage.log import Log
    from tests.support.batches import batch

    config = LogConfig(segment_bytes=4000, index_interval_bytes=300)
    log = Log(Path(sys.argv[1]), config)
    for i in range(200):
        log.append_as_leader(batch(1 + i % 4, timestamp=i, value_size=i % 50, epoch=-1), i // 50)
    print(log.log_end_offset, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
    """
)


def test_sigkill_loses_no_appended_batch(tmp_path):
    directory = tmp_path / "t-0"
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(directory)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    log_end = int(child.stdout)
    assert log_end == sum(1 + i % 4 for i in range(200))
    log = Log(directory, LogConfig(segment_bytes=4000, index_interval_bytes=300), recovery_point=0)
    assert log.log_end_offset == log_end
    assert log.num_segments > 5
    epoch_1_start = sum(1 + i % 4 for i in range(50))
    entries = log.leader_epoch_cache.entries()
    assert [(e.epoch, e.start_offset) for e in entries][:2] == [(0, 0), (1, epoch_1_start)]
    offset, batches = 0, 0
    while offset < log_end:
        data = log.read(offset, 1 << 20, FetchIsolation.LOG_END).read()
        assert data
        for pos, header in iter_batches(data):
            assert validate_batch(data, pos).base_offset == offset == header.base_offset
            assert header.base_timestamp == batches
            offset = header.next_offset
            batches += 1
    assert batches == 200
