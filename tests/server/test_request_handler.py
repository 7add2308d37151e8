"""The handler pool over real RequestChannel batches: a request that waits is parked, holding
nothing up; a failing handler closes only its connection, and shutdown ends every thread."""

from __future__ import annotations

import threading

import pytest

from kafkalite.common.errors import ConfigError
from kafkalite.network.processor import Processor
from kafkalite.network.request_channel import (
    CloseConnectionResponse,
    NoOpResponse,
    Request,
    RequestChannel,
    Response,
)
from kafkalite.server.request_handler import RequestHandlerPool
from tests.support.channel import add_processor, request
from tests.support.wait import wait_for

WAITS, FAILING = 19, 20


def _pool(handle, threads: int = 2):
    channel = RequestChannel(queue_size=100)
    processor = add_processor(channel, 0)
    pool = RequestHandlerPool(channel, handle, threads, "test-handler")
    pool.start()
    return channel, processor, pool


def _answered(processor: Processor) -> list[int]:
    return [r.request.correlation_id for r in list(processor._responses)]


def test_a_request_that_waits_is_parked_and_answered_later_by_whoever_completes_it():
    parked: list[Request] = []

    def handle(r: Request) -> Response | None:
        if r.api_key == WAITS:
            parked.append(r)  # as a purgatory would keep it
            return None
        return NoOpResponse(r)

    channel, processor, pool = _pool(handle, threads=1)
    try:
        channel.send_requests([request(1), request(2, api_key=WAITS), request(3), request(4)])
        # One handler answers the rest of the batch at once; nothing holds a thread for 2.
        assert wait_for(lambda: sorted(_answered(processor)) == [1, 3, 4])
        assert [r.correlation_id for r in parked] == [2]
        channel.send_responses([NoOpResponse(parked[0])])  # completed by another thread
        assert wait_for(lambda: sorted(_answered(processor)) == [1, 2, 3, 4])
    finally:
        pool.shutdown()
        processor._close_all()
    assert not any(t.is_alive() for t in pool.threads)


def test_a_failing_handler_closes_its_connection_and_the_thread_lives_on():
    def handle(r: Request) -> Response:
        if r.api_key == FAILING:
            raise RuntimeError("boom")
        return NoOpResponse(r)

    channel, processor, pool = _pool(handle, threads=1)
    try:
        channel.send_requests([request(1, api_key=FAILING), request(2)])
        assert wait_for(lambda: len(processor._responses) == 2)
        kinds = {r.request.correlation_id: type(r) for r in processor._responses}
        assert kinds == {1: CloseConnectionResponse, 2: NoOpResponse}
        assert all(t.is_alive() for t in pool.threads)
    finally:
        pool.shutdown()
        processor._close_all()
    assert not any(t.is_alive() for t in pool.threads)


def test_shutdown_ends_every_thread_with_requests_still_queued():
    channel, processor, pool = _pool(lambda r: NoOpResponse(r), threads=3)
    try:
        channel.send_requests([request(i) for i in range(10)])
        assert wait_for(lambda: len(processor._responses) == 10)
    finally:
        pool.shutdown()
        processor._close_all()
    assert not any(t.is_alive() for t in pool.threads)


def test_a_handler_blocked_where_nobody_expected_it_stalls_nothing_else():
    """A handler that blocks where nobody expected it (a slow disk, say) holds its turn and counts as
    busy; both are presumed abandoned after a moment and the other handler answers the rest."""
    inside, release = threading.Event(), threading.Event()

    def handle(r: Request) -> Response:
        if r.correlation_id == 1:
            inside.set()
            release.wait(10)
        return NoOpResponse(r)

    channel, processor, pool = _pool(handle)
    try:
        channel.send_requests([request(1)])
        assert inside.wait(5)
        channel.send_requests([request(2), request(3)])
        assert wait_for(lambda: sorted(_answered(processor)) == [2, 3])
        release.set()
        assert wait_for(lambda: sorted(_answered(processor)) == [1, 2, 3])
    finally:
        release.set()
        pool.shutdown()
        processor._close_all()
    assert not any(t.is_alive() for t in pool.threads)


# --- num.io.threads live (resize) -------------------------------------------------------------------


def test_resize_grows_with_numbered_handlers_and_stops_the_highest_after_the_request_in_hand():
    """Kafka's resizeThreadPool: new handlers are numbered on from the current count; a shrink
    stops the highest-numbered, which finishes the request it holds and then ends, while the
    others go on answering."""
    entered = {1: threading.Event(), 2: threading.Event()}
    release = {1: threading.Event(), 2: threading.Event()}
    handled_by: dict[int, str] = {}

    def handle(r: Request) -> Response:
        handled_by[r.correlation_id] = threading.current_thread().name
        if r.correlation_id in entered:
            entered[r.correlation_id].set()
            release[r.correlation_id].wait(10)
        return NoOpResponse(r)

    channel, processor, pool = _pool(handle, threads=1)
    try:
        channel.send_requests([request(1)])
        assert entered[1].wait(5)  # handler 0 holds request 1
        pool.resize(2)
        assert [t.name for t in pool.threads] == ["test-handler-0", "test-handler-1"]
        assert pool.threads[1].is_alive()
        channel.send_requests([request(2)])
        assert entered[2].wait(5)
        assert handled_by[2] == "test-handler-1"
        pool.resize(1)  # handler 1 is told to stop while it holds request 2
        assert [t.name for t in pool.threads] == ["test-handler-0"]
        stopped = pool.stopped[0]
        assert stopped.is_alive()
        release[2].set()
        assert wait_for(lambda: 2 in _answered(processor))  # answered before it ended
        assert wait_for(lambda: not stopped.is_alive())
        release[1].set()
        channel.send_requests([request(3), request(4)])
        assert wait_for(lambda: sorted(_answered(processor)) == [1, 2, 3, 4])
        assert handled_by[3] == handled_by[4] == "test-handler-0"
        pool.resize(2)  # the number is given again, as in Kafka
        assert [t.name for t in pool.threads] == ["test-handler-0", "test-handler-1"]
        assert pool.threads[1] is not stopped
    finally:
        for e in release.values():
            e.set()
        pool.shutdown()
        processor._close_all()
    assert not any(t.is_alive() for t in [*pool.threads, *pool.stopped])


def test_num_io_threads_reconfigured_within_half_and_double():
    channel, processor, pool = _pool(lambda r: NoOpResponse(r), threads=4)
    try:
        assert pool.reconfigurable_configs == frozenset({"num.io.threads"})
        for refused in (1, 9, 0):
            with pytest.raises(ConfigError) as e:
                pool.validate_reconfiguration({"num.io.threads": refused})
            assert e.value.setting == "num.io.threads"
        pool.validate_reconfiguration({"num.io.threads": 8})
        pool.reconfigure({"num.io.threads": 4}, {"num.io.threads": 8})
        assert len(pool.threads) == 8 and all(t.is_alive() for t in pool.threads)
        pool.reconfigure({"num.io.threads": 8}, {"num.io.threads": 4})
        assert len(pool.threads) == 4
        assert wait_for(lambda: not any(t.is_alive() for t in pool.stopped))
        channel.send_requests([request(i) for i in range(20)])
        assert wait_for(lambda: len(_answered(processor)) == 20)
    finally:
        pool.shutdown()
        processor._close_all()
    assert not any(t.is_alive() for t in [*pool.threads, *pool.stopped])
