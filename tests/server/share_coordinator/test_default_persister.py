"""The DefaultStatePersister without a cluster: no __share_group_state yet means asking for its
creation and retrying until share.coordinator.write.timeout.ms, then COORDINATOR_NOT_AVAILABLE;
a callback that raises is logged, not answered twice; shutdown answers what waits."""

from __future__ import annotations

import threading
import time

from kafkalite.protocol import error_codes as E
from kafkalite.server.metadata_cache import MetadataCache
from kafkalite.server.share.persister import ShareStateKey
from kafkalite.server.share_coordinator.default_persister import DefaultStatePersister

KEY = ShareStateKey("g", bytes(16), 0)


def persister(timeout_ms: int, creations: list[int]) -> DefaultStatePersister:
    p = DefaultStatePersister(1, MetadataCache("c", -1, {}), "INTERNAL", timeout_ms,
                              create_topic=lambda: creations.append(1))
    p.start()
    return p


def test_a_missing_topic_is_created_and_retried_until_the_timeout():
    creations: list[int] = []
    p = persister(300, creations)
    try:
        answered = threading.Event()
        got: list[int] = []
        started = time.monotonic()
        p.write_state(KEY, 0, 0, 0, [], lambda e: (got.append(e), answered.set()))
        assert answered.wait(5)
        assert got == [E.COORDINATOR_NOT_AVAILABLE]
        assert time.monotonic() - started >= 0.3
        assert len(creations) >= 2  # asked again at each retry
    finally:
        p.shutdown()


def test_a_raising_callback_is_answered_once_and_shutdown_answers_what_waits():
    creations: list[int] = []
    p = persister(60_000, creations)
    calls: list[object] = []

    def raising(result: object) -> None:
        calls.append(result)
        raise RuntimeError("the caller's bug")
    p.read_summary(KEY, 0, raising)
    waiting: list[object] = []
    p.read_state(KEY, 0, waiting.append)
    p.shutdown()
    assert [c.error for c in calls] == [E.COORDINATOR_NOT_AVAILABLE]  # type: ignore[attr-defined]
    assert [w.error for w in waiting] == [E.COORDINATOR_NOT_AVAILABLE]  # type: ignore[attr-defined]
    after: list[int] = []
    p.delete_state(KEY, after.append)  # after shutdown: answered at once
    assert after == [E.COORDINATOR_NOT_AVAILABLE]
