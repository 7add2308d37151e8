"""Turns: one holder at a time, handed over in arrival order."""

from __future__ import annotations

import threading

from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalite.network.turns import Turns
from tests.support.wait import wait_for


def test_turns_are_handed_over_in_arrival_order(monkeypatch):
    monkeypatch.setattr("kafkalite.network.turns.PRESUMED_BLOCKED_AFTER", 60.0)
    turns = Turns()
    turns.acquire()
    order: list[int] = []

    def take(i: int) -> None:
        assert turns.acquire()
        order.append(i)
        turns.release()

    threads = []
    for i in range(4):
        t = threading.Thread(target=take, args=(i,))
        t.start()
        threads.append(t)
        assert wait_for(lambda n=i + 1: len(turns._waiting) == n)  # queued in this order
    assert order == []  # nobody runs while the turn is held
    turns.release()
    for t in threads:
        t.join(5)
    assert order == [0, 1, 2, 3]
    assert not turns._held and not turns._waiting


def test_a_turn_held_too_long_is_presumed_abandoned():
    """A holder that blocks (a handler on a slow disk) does not stall the others: they go on
    without a turn, and the holder's release still works afterwards."""
    turns = Turns()
    assert turns.acquire() is True
    got: list[bool] = []
    t = threading.Thread(target=lambda: got.append(turns.acquire()))
    t.start()
    t.join(5)
    assert got == [False]  # waited at most PRESUMED_BLOCKED_AFTER, then went on
    assert turns.acquire() is False  # and at once now
    assert not turns._waiting
    turns.release()
    assert turns.acquire() is True  # the turn is free again
    turns.release()


@settings(max_examples=20, deadline=None)
@given(threads=st.integers(2, 6), rounds=st.integers(1, 30))
def test_never_two_holders(threads, rounds):
    # Holders that do not block are never presumed blocked: the machine may be slow, so the
    # presumption is set far out here.
    import kafkalite.network.turns as module

    saved, module.PRESUMED_BLOCKED_AFTER = module.PRESUMED_BLOCKED_AFTER, 60.0
    try:
        _never_two_holders(threads, rounds)
    finally:
        module.PRESUMED_BLOCKED_AFTER = saved


def _never_two_holders(threads: int, rounds: int) -> None:
    turns = Turns()
    inside = [0]
    overlaps = [0]
    entered = [0]

    def work() -> None:
        for _ in range(rounds):
            assert turns.acquire()
            inside[0] += 1
            if inside[0] > 1:
                overlaps[0] += 1
            entered[0] += 1
            # A system call while holding the turn: the GIL goes to any other thread.
            threading.Event().wait(0)
            inside[0] -= 1
            turns.release()

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(30)
    assert not any(w.is_alive() for w in workers)
    assert overlaps[0] == 0 and entered[0] == threads * rounds
    assert not turns._held
