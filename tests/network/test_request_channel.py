"""The RequestChannel's batches: the bound counts requests, a batch is taken whole and in order,
handlers are woken only when none is busy, and responses go back grouped by Processor."""

from __future__ import annotations

import queue
import threading

import pytest

from kafkalite.network.request_channel import SHUTDOWN, NoOpResponse, RequestChannel
from tests.support.channel import add_processor, request
from tests.support.wait import wait_for


def corrs(batch) -> list[int]:
    return [r.correlation_id for r in batch]


def test_the_bound_counts_requests_not_batches():
    channel = RequestChannel(queue_size=4)
    assert channel.send_requests([request(i) for i in range(6)], timeout=0) == 4
    assert channel.request_queue_size == 4
    with pytest.raises(queue.Full):
        channel.send_requests([request(9)], timeout=0.05)
    assert corrs(channel.receive_requests(timeout=0, limit=2)) == [0, 1]
    assert channel.send_requests([request(4), request(5), request(6)], timeout=0) == 2
    assert corrs(channel.receive_requests(timeout=0)) == [2, 3, 4, 5]


def test_a_full_queue_blocks_the_sender_until_a_handler_takes_requests():
    channel = RequestChannel(queue_size=1)
    channel.send_request(request(0))
    taken = []
    sender = threading.Thread(target=lambda: taken.append(channel.send_requests([request(1)], timeout=5)))
    sender.start()
    assert wait_for(lambda: channel._blocked_senders == 1)
    assert corrs(channel.receive_requests(timeout=0)) == [0]
    sender.join(5)
    assert taken == [1] and corrs(channel.receive_requests(timeout=0)) == [1]


def test_a_handler_takes_up_to_and_including_one_shutdown_sentinel():
    channel = RequestChannel(queue_size=10)
    channel.send_requests([request(1), request(2)])
    channel.send_shutdown_request()
    channel.send_shutdown_request()
    first = channel.receive_requests(timeout=0)
    assert corrs(first[:2]) == [1, 2] and first[2] is SHUTDOWN and len(first) == 3
    assert channel.receive_requests(timeout=0) == [SHUTDOWN]
    assert channel.receive_requests(timeout=0) == []


def test_dequeue_time_is_stamped():
    channel = RequestChannel(queue_size=10)
    channel.send_request(request(1))
    (r,) = channel.receive_requests(timeout=0)
    assert r.dequeue_ns >= r.start_ns > 0


def _idle_handler(channel: RequestChannel, got: list) -> threading.Thread:
    t = threading.Thread(target=lambda: got.append(channel.receive_requests(timeout=5)))
    t.start()
    assert wait_for(lambda: channel._idle_handlers >= 1)
    return t


def test_an_idle_handler_is_woken_by_a_batch():
    channel = RequestChannel(queue_size=10)
    got: list = []
    t = _idle_handler(channel, got)
    channel.send_requests([request(1), request(2)])
    t.join(5)
    assert [corrs(b) for b in got] == [[1, 2]]


def test_without_wake_the_handler_is_woken_by_wake_handler():
    channel = RequestChannel(queue_size=10)
    got: list = []
    t = _idle_handler(channel, got)
    channel.send_requests([request(1)], wake=False)
    t.join(0.2)
    assert t.is_alive() and not got  # still waiting: nobody woke it
    channel.wake_handler()
    t.join(5)
    assert [corrs(b) for b in got] == [[1]]


def test_no_idle_handler_is_woken_while_one_is_busy_until_it_blocks(monkeypatch):
    # Not presumed blocked however slow this machine is (that rule has its own test).
    monkeypatch.setattr("kafkalite.network.request_channel.PRESUMED_BLOCKED_AFTER", 60.0)
    channel = RequestChannel(queue_size=10)
    channel.send_request(request(1))
    busy_batch = channel.receive_requests(timeout=0)  # this thread is now a busy handler
    got: list = []
    t = _idle_handler(channel, got)
    channel.send_requests([request(2), request(3)])
    t.join(0.2)
    assert t.is_alive() and not got  # the busy handler will take them
    # The busy handler stops (its shutdown sentinel): it gives back what it has not started, in order, ahead
    # of what is queued, and the idle handler takes over.
    channel.handler_stopping([request(10), request(11)])
    t.join(5)
    assert corrs(busy_batch) == [1]
    assert [corrs(b) for b in got] == [[10, 11, 2, 3]]


def test_responses_go_back_grouped_by_processor_in_order():
    channel = RequestChannel(queue_size=10)
    p0, p1 = add_processor(channel, 0), add_processor(channel, 1)
    try:
        responses = [NoOpResponse(request(c, processor=c % 2)) for c in range(6)]
        channel.send_responses(responses)
        assert [r.request.correlation_id for r in p0._responses] == [0, 2, 4]
        assert [r.request.correlation_id for r in p1._responses] == [1, 3, 5]
        assert all(r.request.api_local_complete_ns and r.request.response_enqueue_ns for r in responses)
    finally:
        for p in (p0, p1):
            p._close_all()


def test_a_handler_busy_for_too_long_is_presumed_blocked(monkeypatch):
    monkeypatch.setattr("kafkalite.network.request_channel.PRESUMED_BLOCKED_AFTER", 0.0)
    channel = RequestChannel(queue_size=10)
    channel.send_request(request(1))
    channel.receive_requests(timeout=0)  # busy, and at once presumed blocked
    got: list = []
    t = _idle_handler(channel, got)
    channel.send_requests([request(2)])
    t.join(5)
    assert [corrs(b) for b in got] == [[2]]
