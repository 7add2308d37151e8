"""The Waker ends another thread's blocking poll, once per drain, and is harmless once closed."""

from __future__ import annotations

import selectors
import threading

from kafkalite.network.waker import Waker


def test_wake_ends_a_blocking_poll_from_another_thread():
    waker = Waker()
    sel = selectors.DefaultSelector()
    sel.register(waker, selectors.EVENT_READ)
    try:
        assert sel.select(0) == []
        t = threading.Thread(target=waker.wake)
        t.start()
        assert len(sel.select(10)) == 1  # bounded: returns as soon as the wake-up lands
        t.join(10)
        assert not t.is_alive()
    finally:
        sel.close()
        waker.close()


def test_wakeups_coalesce_until_drained():
    waker = Waker()
    sel = selectors.DefaultSelector()
    sel.register(waker, selectors.EVENT_READ)
    try:
        for _ in range(1000):
            waker.wake()
        assert len(sel.select(0)) == 1
        waker.drain()
        assert sel.select(0) == []  # one drain takes every wake-up before it
        waker.drain()  # nothing to drain: no error
        assert sel.select(0) == []
    finally:
        sel.close()
        waker.close()


def test_closed_waker_ignores_wakeups():
    waker = Waker()
    waker.close()
    waker.wake()  # a handler answering after its Processor stopped: nothing happens
    waker.close()
