"""Turns: one holder at a time, handed over in arrival order."""

from __future__ import annotations

import threading

from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalite.network.turns import Turns

from ..kafka_client import wait_for


def test_turns_are_handed_over_in_arrival_order():
    turns = Turns()
    turns.acquire()
    order: list[int] = []

    def take(i: int) -> None:
        with turns:
            order.append(i)

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


@settings(max_examples=20, deadline=None)
@given(threads=st.integers(2, 6), rounds=st.integers(1, 30))
def test_never_two_holders(threads, rounds):
    turns = Turns()
    inside = [0]
    overlaps = [0]
    entered = [0]

    def work() -> None:
        for _ in range(rounds):
            with turns:
                inside[0] += 1
                if inside[0] > 1:
                    overlaps[0] += 1
                entered[0] += 1
                # A system call while holding the turn: the GIL goes to any other thread.
                threading.Event().wait(0)
                inside[0] -= 1

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(30)
    assert not any(w.is_alive() for w in workers)
    assert overlaps[0] == 0 and entered[0] == threads * rounds
    assert not turns._held
