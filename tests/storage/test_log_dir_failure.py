"""LogDirFailureChannel: a dir is reported offline once and queued once for the handler thread,
and a stopping broker wakes that thread's wait."""

from __future__ import annotations

import threading
from pathlib import Path

from kafkalite.storage.log_dir_failure import LogDirFailureChannel


def test_a_dir_goes_offline_once_and_is_taken_once():
    channel = LogDirFailureChannel()
    assert not channel.has_offline_log_dir("/data/a")
    assert channel.maybe_add_offline_log_dir(Path("/data/a"), "append", OSError("EIO"))
    assert not channel.maybe_add_offline_log_dir(Path("/data/a"), "flush", OSError("EIO"))
    assert channel.has_offline_log_dir("/data/a") and not channel.has_offline_log_dir("/data/b")
    assert channel.take_next_offline_log_dir(timeout=1) == Path("/data/a")
    assert channel.take_next_offline_log_dir(timeout=0) is None


def test_wake_ends_a_waiting_take():
    channel = LogDirFailureChannel()
    taken: list[Path | None] = []
    taker = threading.Thread(target=lambda: taken.append(channel.take_next_offline_log_dir(timeout=60)))
    taker.start()
    channel.wake()
    taker.join(10)  # without the wake-up it would wait its 60 s
    assert not taker.is_alive() and taken == [None]
