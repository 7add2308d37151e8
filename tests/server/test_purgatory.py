"""The purgatory with real threads: completion by check_and_complete, by timeout and by force,
exactly once under races, and memory that follows the pending operations only."""

from __future__ import annotations

import functools
import gc
import logging
import random
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator

import pytest

from kafkalite.server.purgatory import DelayedOperation, DelayedOperationPurgatory

BOUND = 5.0  # seconds: the longest any wait here may take before the test fails
LONG_MS = 60_000  # a delay no test waits for


class Op(DelayedOperation):
    """Completable once ``ready``; records who completed it and who expired it."""

    def __init__(self, delay_ms: float, ready: bool = False) -> None:
        super().__init__(delay_ms)
        self.ready = ready
        self.tries = 0
        self.calls: list[tuple[str, str]] = []  # (callback, thread name), in order
        self.done = threading.Event()
        self.expired = threading.Event()

    def try_complete(self) -> bool:
        self.tries += 1
        return self.ready and self.force_complete()

    def on_complete(self) -> None:
        self.calls.append(("on_complete", threading.current_thread().name))
        self.done.set()

    def on_expiration(self) -> None:
        self.calls.append(("on_expiration", threading.current_thread().name))
        self.expired.set()

    def completions(self) -> list[str]:
        return [thread for callback, thread in self.calls if callback == "on_complete"]

    def expirations(self) -> list[str]:
        return [thread for callback, thread in self.calls if callback == "on_expiration"]


class Key:
    """A key that can be weakly referenced, to see that the purgatory lets go of it."""


@pytest.fixture
def purgatory() -> Iterator[DelayedOperationPurgatory]:
    p = DelayedOperationPurgatory("test", broker_id=1)
    try:
        yield p
    finally:
        p.shutdown(timeout=BOUND)
        assert not p.expiration_reaper.is_alive()


def run(target: Callable[[], object], name: str) -> threading.Thread:
    t = threading.Thread(target=target, name=name, daemon=True)
    t.start()
    return t


def test_the_reaper_is_one_daemon_named_as_in_kafka(purgatory: DelayedOperationPurgatory) -> None:
    reaper = purgatory.expiration_reaper
    assert reaper.name == "ExpirationReaper-1-test"
    assert reaper.daemon and reaper.is_alive()
    assert [t for t in threading.enumerate() if t.name == reaper.name] == [reaper]


def test_an_operation_that_can_complete_at_once_is_neither_watched_nor_timed(
    purgatory: DelayedOperationPurgatory,
) -> None:
    op = Op(LONG_MS, ready=True)
    assert purgatory.try_complete_else_watch(op, ["a", "b"]) is True
    assert op.completions() == [threading.current_thread().name]
    assert op.tries == 1 and op.is_completed
    assert (purgatory.watched(), purgatory.delayed()) == (0, 0)


def test_watch_keys_must_not_be_empty(purgatory: DelayedOperationPurgatory) -> None:
    with pytest.raises(ValueError, match="can't be empty"):
        purgatory.try_complete_else_watch(Op(LONG_MS), [])


def test_an_operation_is_watched_once(purgatory: DelayedOperationPurgatory) -> None:
    op = Op(LONG_MS)
    purgatory.try_complete_else_watch(op, ["k"])
    with pytest.raises(ValueError, match="watched once"):
        purgatory.try_complete_else_watch(op, ["other"])
    assert (purgatory.watched(), purgatory.delayed()) == (1, 1)


def test_check_and_complete_from_another_thread_completes_a_watched_operation(
    purgatory: DelayedOperationPurgatory,
) -> None:
    op = Op(LONG_MS)
    assert purgatory.try_complete_else_watch(op, ["topic-a"]) is False
    assert op.tries == 2  # before and after watching
    assert (purgatory.watched(), purgatory.delayed()) == (1, 1)
    assert purgatory.check_and_complete("topic-a") == 0  # not ready: stays
    assert not op.is_completed and purgatory.watched() == 1

    counted: list[int] = []

    def metadata_change() -> None:
        op.ready = True
        counted.append(purgatory.check_and_complete("topic-a"))

    run(metadata_change, "handler").join(BOUND)
    assert counted == [1]
    assert op.completions() == ["handler"] and op.expirations() == []
    assert (purgatory.watched(), purgatory.delayed()) == (0, 0)
    assert purgatory.check_and_complete("topic-a") == 0  # once only


def test_an_operation_times_out_after_its_delay_on_the_reaper(purgatory: DelayedOperationPurgatory) -> None:
    op = Op(50)
    start = time.monotonic()
    assert purgatory.try_complete_else_watch(op, ["k"]) is False
    assert op.expired.wait(BOUND)
    assert time.monotonic() - start >= 0.05
    reaper = purgatory.expiration_reaper.name
    assert op.calls == [("on_complete", reaper), ("on_expiration", reaper)]
    assert (purgatory.watched(), purgatory.delayed()) == (0, 0)
    op.ready = True
    assert purgatory.check_and_complete("k") == 0 and not op.force_complete()
    assert len(op.calls) == 2


def test_an_earlier_deadline_wakes_the_reaper(purgatory: DelayedOperationPurgatory) -> None:
    far, near = Op(LONG_MS), Op(20)
    purgatory.try_complete_else_watch(far, ["k"])
    purgatory.try_complete_else_watch(near, ["k"])
    # The reaper was waiting for far's deadline, a minute away.
    assert near.expired.wait(BOUND)
    assert not far.is_completed
    assert (purgatory.watched(), purgatory.delayed()) == (1, 1)


def test_a_change_between_the_first_try_and_the_watch_is_not_missed(
    purgatory: DelayedOperationPurgatory,
) -> None:
    """The change and its check_and_complete both happen after the first try and before the
    operation is watched: check_and_complete finds nothing, and only the try after watching can
    complete it."""
    counted: list[int] = []

    class Racing(Op):
        def try_complete(self) -> bool:
            if self.tries == 0:
                def change() -> None:
                    self.ready = True
                    counted.append(purgatory.check_and_complete("k"))

                run(change, "appender").join(BOUND)
                self.tries += 1
                return False
            return super().try_complete()

    op = Racing(LONG_MS)
    assert purgatory.try_complete_else_watch(op, ["k"]) is True
    assert counted == [0]
    assert op.completions() == [threading.current_thread().name]
    assert (purgatory.watched(), purgatory.delayed()) == (0, 0)


@pytest.mark.parametrize("on_try", [1, 2], ids=["between-first-try-and-watch", "between-watch-and-timer"])
def test_a_completion_by_another_thread_meanwhile_leaves_no_watch_and_no_timer(
    purgatory: DelayedOperationPurgatory, on_try: int,
) -> None:
    """Completed by another thread during the first try (before the watch) or the second (before
    the timer is armed): the caller did not complete it, and it leaves neither a watch nor a timer
    entry behind."""

    class CompletedMeanwhile(Op):
        def try_complete(self) -> bool:
            self.tries += 1
            if self.tries == on_try:
                run(self.force_complete, "other").join(BOUND)
            return False

    op = CompletedMeanwhile(LONG_MS)
    assert purgatory.try_complete_else_watch(op, ["k"]) is False
    assert op.completions() == ["other"]
    assert (purgatory.watched(), purgatory.delayed()) == (0, 0)


def test_keys_watched_by_several_operations(purgatory: DelayedOperationPurgatory) -> None:
    one, two, three = Op(LONG_MS), Op(LONG_MS), Op(LONG_MS)
    purgatory.try_complete_else_watch(one, ["a", "b", "a"])  # a key given twice is watched once
    purgatory.try_complete_else_watch(two, ["b", "c"])
    purgatory.try_complete_else_watch(three, ["c"])
    assert (purgatory.watched(), purgatory.delayed()) == (5, 3)

    one.ready = True
    assert purgatory.check_and_complete("b") == 1
    assert not two.is_completed
    assert purgatory.watched() == 3  # one has left "a" as well
    assert purgatory.check_and_complete("a") == 0

    two.ready = three.ready = True
    assert purgatory.check_and_complete("c") == 2
    assert purgatory.check_and_complete("b") == 0
    assert [len(op.completions()) for op in (one, two, three)] == [1, 1, 1]
    assert (purgatory.watched(), purgatory.delayed()) == (0, 0)


def test_exactly_once_when_every_path_races(purgatory: DelayedOperationPurgatory) -> None:
    """Watching, readiness with check_and_complete, repeated check_and_complete, direct
    force_complete and expiry, all at once: each operation is answered once, expired at most once
    and only by the reaper, and exactly one caller is told it completed it."""
    rng = random.Random(15)
    keys = [f"topic-{i}" for i in range(8)]
    ops = [Op(rng.uniform(0, 15)) for _ in range(400)]
    key_of = {id(op): keys[i % len(keys)] for i, op in enumerate(ops)}
    wins: list[int] = []  # one entry per True/count returned to a caller
    stop = threading.Event()
    start = threading.Barrier(5)

    def watcher() -> None:
        start.wait(BOUND)
        for op in ops:
            if purgatory.try_complete_else_watch(op, [key_of[id(op)], "all"]):
                wins.append(1)

    def appender() -> None:
        start.wait(BOUND)
        for op in rng.sample(ops, len(ops)):
            op.ready = True
            wins.append(purgatory.check_and_complete(key_of[id(op)]))

    def checker() -> None:
        start.wait(BOUND)
        while not stop.is_set():
            wins.append(purgatory.check_and_complete("all"))

    def forcer() -> None:
        start.wait(BOUND)
        for op in ops[::3]:
            if op.force_complete():
                wins.append(1)

    # Switching threads every microsecond instead of every 5 ms puts a switch inside each
    # check-then-act that is not atomic.
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [run(f, f.__name__) for f in (watcher, appender, checker, checker, forcer)]
        try:
            assert all(op.done.wait(BOUND) for op in ops)
        finally:
            stop.set()
            for t in threads:
                t.join(BOUND)
    finally:
        sys.setswitchinterval(switch_interval)
    assert not [t.name for t in threads if t.is_alive()]

    reaper = purgatory.expiration_reaper.name
    expired = 0
    for op in ops:
        assert len(op.completions()) == 1
        assert op.expirations() == ([reaper] if op.completions() == [reaper] else [])
        expired += len(op.expirations())
    assert sum(wins) + expired == len(ops)
    assert (purgatory.watched(), purgatory.delayed()) == (0, 0)


def test_force_complete_is_won_by_one_thread_only() -> None:
    """Threads in step over the same operations, each forcing every one: a check-then-set flag
    would let two of them through (see the switch interval in the test above)."""
    ops = [Op(LONG_MS) for _ in range(5000)]
    wins: list[list[int]] = [[] for _ in range(4)]
    start = threading.Barrier(len(wins))

    def forcer(won: list[int]) -> None:
        start.wait(BOUND)
        for i, op in enumerate(ops):
            if op.force_complete():
                won.append(i)

    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [run(functools.partial(forcer, won), f"forcer-{i}") for i, won in enumerate(wins)]
        for t in threads:
            t.join(BOUND)
    finally:
        sys.setswitchinterval(switch_interval)
    assert not [t.name for t in threads if t.is_alive()]
    assert sorted(i for won in wins for i in won) == list(range(len(ops)))
    assert all(len(op.completions()) == 1 for op in ops)


def test_memory_follows_pending_operations_not_completed_ones(purgatory: DelayedOperationPurgatory) -> None:
    keys = [Key() for _ in range(1000)]
    ops = [Op(LONG_MS) for _ in keys]
    for op, key in zip(ops, keys):
        purgatory.try_complete_else_watch(op, [key, "shared"])
    assert (purgatory.watched(), purgatory.delayed()) == (2000, 1000)

    # Every tenth stays pending, among the completed ones in deadline order (the earliest
    # included), so that popping dead entries off the top of the heap cannot be all it does.
    pending = ops[::10]
    completed = [(op, key) for i, (op, key) in enumerate(zip(ops, keys)) if i % 10]
    for op, key in completed[::2]:  # through the purgatory
        op.ready = True
        assert purgatory.check_and_complete(key) == 1
    for op in [o for o, _ in completed[1::2]]:  # around it, as a handler aborting a request would
        assert op.force_complete()
    assert (purgatory.watched(), purgatory.delayed()) == (200, 100)
    # The heap, whatever lazy deletion leaves in it, stays under twice the pending operations.
    assert len(purgatory._timer_queue) <= 2 * len(pending)

    op_refs = [weakref.ref(o) for o, _ in completed]
    key_refs = [weakref.ref(k) for _, k in completed]
    del ops, keys, completed, op, key
    gc.collect()
    assert [r for r in op_refs if r() is not None] == []
    assert [r for r in key_refs if r() is not None] == []

    for op in pending:
        op.force_complete()
    assert (purgatory.watched(), purgatory.delayed()) == (0, 0)
    assert purgatory._timer_queue == []


def test_shutdown_stops_the_reaper_and_leaves_pending_operations_pending() -> None:
    p = DelayedOperationPurgatory("shutdown", broker_id=2)
    op = Op(LONG_MS)
    assert p.try_complete_else_watch(op, ["k"]) is False
    start = time.monotonic()
    p.shutdown(timeout=BOUND)
    assert not p.expiration_reaper.is_alive()
    assert time.monotonic() - start < BOUND
    assert op.calls == []  # neither completed nor expired
    with pytest.raises(RuntimeError, match="shut down"):
        p.try_complete_else_watch(Op(LONG_MS), ["k"])
    op.ready = True  # what is watched can still be completed
    assert p.check_and_complete("k") == 1
    assert op.completions() == [threading.current_thread().name]
    p.shutdown(timeout=BOUND)  # twice is harmless


def test_a_slow_on_complete_does_not_hold_the_purgatory(purgatory: DelayedOperationPurgatory) -> None:
    entered, release = threading.Event(), threading.Event()
    released: list[bool] = []

    class Slow(Op):
        def on_complete(self) -> None:
            super().on_complete()
            entered.set()
            released.append(release.wait(BOUND))

    slow = Slow(LONG_MS)
    purgatory.try_complete_else_watch(slow, ["slow"])
    slow.ready = True
    counted: list[int] = []
    handler = run(lambda: counted.append(purgatory.check_and_complete("slow")), "handler")
    try:
        assert entered.wait(BOUND)
        # While slow's response is being sent: watch, count, complete and expire others.
        other, expiring = Op(LONG_MS), Op(1)
        assert purgatory.try_complete_else_watch(other, ["other"]) is False
        assert purgatory.try_complete_else_watch(expiring, ["other"]) is False
        assert expiring.expired.wait(BOUND)
        assert (purgatory.watched(), purgatory.delayed()) == (1, 1)
        other.ready = True
        assert purgatory.check_and_complete("other") == 1
        assert handler.is_alive() and released == []  # slow is still in on_complete
    finally:
        release.set()
        handler.join(BOUND)
    assert not handler.is_alive()
    assert counted == [1] and released == [True]


def test_callbacks_may_call_back_into_the_purgatory(purgatory: DelayedOperationPurgatory) -> None:
    second = Op(LONG_MS)

    class Chained(Op):
        def on_complete(self) -> None:
            super().on_complete()
            second.ready = True
            purgatory.check_and_complete("second")  # would deadlock under the purgatory's lock

    first = Chained(LONG_MS)
    purgatory.try_complete_else_watch(first, ["first"])
    purgatory.try_complete_else_watch(second, ["second"])
    first.ready = True
    assert purgatory.check_and_complete("first") == 1
    assert second.completions() == [threading.current_thread().name]
    assert (purgatory.watched(), purgatory.delayed()) == (0, 0)


def test_a_failing_callback_neither_stops_the_reaper_nor_the_other_operations(
    purgatory: DelayedOperationPurgatory, caplog: pytest.LogCaptureFixture,
) -> None:
    class Failing(Op):
        def on_complete(self) -> None:
            super().on_complete()
            raise RuntimeError("send failed")

    caplog.set_level(logging.ERROR, logger="kafkalite.server.purgatory")
    failing, after = Failing(1), Op(30)
    purgatory.try_complete_else_watch(failing, ["k"])
    assert failing.done.wait(BOUND)
    purgatory.try_complete_else_watch(after, ["k"])
    assert after.expired.wait(BOUND)  # the reaper lived on
    assert failing.expirations() == []  # on_complete raised before it

    failing_again, waiting = Failing(LONG_MS, ready=False), Op(LONG_MS)
    purgatory.try_complete_else_watch(failing_again, ["k"])
    purgatory.try_complete_else_watch(waiting, ["k"])
    failing_again.ready = waiting.ready = True
    assert purgatory.check_and_complete("k") == 1  # waiting, after failing_again raised
    assert waiting.is_completed and failing_again.is_completed
    assert (purgatory.watched(), purgatory.delayed()) == (0, 0)
    assert [r.getMessage() for r in caplog.records] == [
        "Error expiring a delayed operation in purgatory test",
        "Error completing a delayed operation in purgatory test",
    ]
