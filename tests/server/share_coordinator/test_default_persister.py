"""The DefaultStatePersister without a cluster: no __share_group_state yet means asking for its
creation and retrying until share.coordinator.write.timeout.ms, then COORDINATOR_NOT_AVAILABLE;
a callback that raises is logged, not answered twice; shutdown answers what waits; the calls of
one key keep their order through retries."""

from __future__ import annotations

import dataclasses
import threading
import time
import uuid

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


class FlakyStore:
    """__share_group_state's records in a list; the first appends fail as a partition whose ISR
    shrank does (NOT_ENOUGH_REPLICAS: COORDINATOR_NOT_AVAILABLE to the persister, retried)."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.records: list[tuple[bytes, bytes | None]] = []

    def append(self, index: int, records: list[tuple[bytes, bytes | None]], done) -> None:
        if self.failures:
            self.failures -= 1
            done(E.NOT_ENOUGH_REPLICAS)
            return
        self.records.extend(records)
        done(E.NONE)


def test_a_retried_write_is_not_overtaken_by_a_later_write_of_the_same_key():
    # Found with the failover test's reasoning: a write retried while its coordinator moves was
    # sent after a later write of the same offset, so offset 5, released and then accepted, was
    # persisted as released (AVAILABLE) and delivered again by the next leader.
    from kafkalite.server.metadata_cache import BrokerInfo, PartitionInfo, TopicInfo
    from kafkalite.server.share.persister import StateBatch
    from kafkalite.server.share_coordinator.coordinator import SHARE_GROUP_STATE_TOPIC, ShareCoordinator
    from kafkalite.server.share_coordinator.settings import ShareCoordinatorConfig

    store = FlakyStore(failures=0)
    coordinator = ShareCoordinator(ShareCoordinatorConfig(num_partitions=1), store)
    coordinator.begin_loading(0)
    coordinator.load(0, [])
    cache = MetadataCache("c", -1, {1: BrokerInfo(1, ())})
    cache.update(lambda snap: dataclasses.replace(snap, topics={SHARE_GROUP_STATE_TOPIC: TopicInfo(
        SHARE_GROUP_STATE_TOPIC, uuid.uuid4(), {0: PartitionInfo(0, 1, 0, (1,), (1,))})}))
    p = DefaultStatePersister(1, cache, "INTERNAL", 10_000, local=coordinator)
    p.start()
    try:
        answers: list[tuple[str, int]] = []
        answered = threading.Semaphore(0)

        def done(name: str):
            return lambda error: (answers.append((name, error)), answered.release())
        p.initialize_state(KEY, 1, 0, done("init"))
        assert answered.acquire(timeout=5)
        store.failures = 1  # the release's first try fails: retried after a backoff
        p.write_state(KEY, 1, 1, 0, [StateBatch(5, 5, 0, 1)], done("release"))  # AVAILABLE
        p.write_state(KEY, 1, 1, 0, [StateBatch(5, 5, 2, 1)], done("accept"))  # ACKNOWLEDGED
        assert answered.acquire(timeout=5) and answered.acquire(timeout=5)
        assert answers == [("init", E.NONE), ("release", E.NONE), ("accept", E.NONE)]
        read: list = []
        p.read_state(KEY, 1, lambda r: (read.append(r), answered.release()))
        assert answered.acquire(timeout=5)
        assert read[0].batches == (StateBatch(5, 5, 2, 1),)
    finally:
        p.shutdown()
