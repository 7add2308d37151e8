"""Hostile input against a running broker (bench/fuzz): random and mutated frames, odd writes and
endings, while a well-behaved client on its own connection sees no error. The long run (a
million frames) is ``kafkalite bench fuzz``."""

from __future__ import annotations

import random
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalite_bench.fuzz.frames import MUTATIONS, VALID, connection_plan
from kafkalite_bench.fuzz.run import Canary, fuzz, send_plan
from tests.support.brokers import running_broker
from tests.support.wait import wait_for


def _broker_threads(broker) -> list[threading.Thread]:
    ss = broker.socket_server
    return [*ss.acceptors.values(), *ss.processors, *(t for pool in broker.pools for t in pool.threads)]


def _fuzzer_leftovers(broker) -> int:
    """Connections, buffered frames and in-flight answers the broker still holds on the
    fuzzed listener."""
    held = 0
    for p in broker.socket_server.processors:
        if p.listener == "PLAINTEXT":
            held += len(p.connections) + sum(len(c.pending) for c in p.connections.values())
            held += p.inflight_responses + p.new_connections.qsize()
    return held


def _check(broker, canary: Canary) -> None:
    canary.stop()
    assert not canary.is_alive()
    assert canary.failures == [] and canary.ok > 0
    assert all(t.is_alive() for t in _broker_threads(broker))
    assert wait_for(lambda: _fuzzer_leftovers(broker) == 0, timeout=10)
    # Every accepted socket was counted in the quotas and given back: what is left is exactly
    # the broker's own connections on its other listener.
    ss = broker.socket_server
    assert wait_for(lambda: ss.quotas.total == sum(len(p.connections) for p in ss.processors))


def test_every_mutation_makes_a_frame():
    rng = random.Random(3)
    for name, make in MUTATIONS.items():
        assert all(isinstance(make(rng), bytes) for _ in range(20)), name
    assert len(VALID) >= 60  # every api and version kafkalite knows


@pytest.mark.integration
def test_a_seeded_run_of_hostile_connections_hurts_no_one(tmp_path):
    with running_broker(tmp_path) as broker:
        port = broker.bound_port("PLAINTEXT")
        canary = Canary("127.0.0.1", port)
        canary.start()
        out = fuzz("127.0.0.1", port, frames=1500, seed=11)
        _check(broker, canary)
        created = sum(p.connections_created for p in broker.socket_server.processors
                      if p.listener == "PLAINTEXT")
        # Most hostile connections were registered; the others were reset before their
        # Processor could name them, and were closed and uncounted at once.
        assert out.connections // 2 < created <= out.connections + 1
    assert out.frames >= 1500 and set(out.kinds) == set(MUTATIONS)


@pytest.mark.integration
def test_hypothesis_drawn_connections_hurt_no_one(tmp_path):
    with running_broker(tmp_path) as broker:
        port = broker.bound_port("PLAINTEXT")
        canary = Canary("127.0.0.1", port)
        canary.start()

        @settings(max_examples=150, deadline=None, database=None)
        @given(st.randoms(use_true_random=False))
        def one_connection(rng: random.Random) -> None:
            plan, write, ending = connection_plan(rng)
            send_plan("127.0.0.1", port, [f for _, f in plan], write, ending, rng)

        one_connection()
        _check(broker, canary)
