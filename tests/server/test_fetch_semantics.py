"""Fetch as Kafka answers it, with raw requests: the long poll (an empty answer after max_wait_ms,
an early one when a produce brings min_bytes), KIP-74 (a first batch larger than the limits still
comes whole), batches starting with the one holding the fetch offset and stored as received,
OFFSET_OUT_OF_RANGE past the log end, and full fetches listing every requested partition (unknown
ones with their error, empty ones with zero-length records, never null)."""

from __future__ import annotations

import time

import pytest

from kafkalite.protocol import error_codes as E
from kafkalite.protocol.records import iter_batches
from tests.support.brokers import running_broker
from tests.support.raw_requests import (
    FETCH,
    batch,
    create_topic,
    decode_batches,
    fetch_one,
    fetch_partitions,
    fetch_request,
    produce,
)
from tests.support.wait import wait_for
from tests.support.wire_client import Client

pytestmark = pytest.mark.integration


T0 = 1_700_000_000_000


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with running_broker(tmp_path_factory.mktemp("fetch")) as b:
        yield b


def connect(broker, timeout: float = 10.0) -> Client:
    return Client("127.0.0.1", broker.bound_port("PLAINTEXT"), timeout=timeout)


def waiting_fetches(broker) -> int:
    return broker.replica_manager.fetch_purgatory.delayed()


@pytest.mark.parametrize("version", [4, 11, 12])
def test_a_fetch_at_the_log_end_waits_and_is_answered_empty(broker, version):
    topic = f"long-poll-v{version}"
    with connect(broker) as c:
        create_topic(c, topic)
        assert produce(c, topic, batch([b"a", b"b"], timestamp=T0)).base_offset == 0
        started = time.monotonic()
        p = fetch_one(c, topic, 0, 2, version=version, max_wait_ms=300, min_bytes=1)
        waited = time.monotonic() - started
    assert (p.error_code, p.high_watermark) == (0, 2)
    assert p.records == b"" and p.records is not None
    assert waited >= 0.15, f"answered after {waited:.3f} s: it did not wait"
    assert waiting_fetches(broker) == 0


def test_a_produce_answers_a_waiting_fetch_early(broker):
    topic = "long-poll-woken"
    with connect(broker, timeout=20) as consumer, connect(broker) as producer:
        create_topic(producer, topic)
        before = waiting_fetches(broker)
        # 20 s of max wait and 200 bytes to wait for: only produces can answer it in time.
        started = time.monotonic()
        corr = consumer.send(FETCH, 12, fetch_request([(topic, 0, 0)], max_wait_ms=20000, min_bytes=200))
        assert wait_for(lambda: waiting_fetches(broker) == before + 1, timeout=10)
        small = batch([b"s"], timestamp=T0)
        assert len(small) < 200
        assert produce(producer, topic, small).error_code == 0
        # The produce tried it (its partition was appended to) and it still lacks bytes: it waits.
        assert waiting_fetches(broker) == before + 1
        big = batch([b"B" * 300], timestamp=T0 + 1)
        assert produce(producer, topic, big).base_offset == 1
        got, response = consumer.receive(FETCH, 12)
        answered = time.monotonic() - started
    assert got == corr
    ((name, p),) = fetch_partitions(response)
    assert (name, p.error_code, p.high_watermark) == (topic, 0, 2)
    records, _ = decode_batches(p.records, 0)
    assert [(r.offset, r.value) for r in records] == [(0, b"s"), (1, b"B" * 300)]
    assert answered < 15, "answered by the timeout, not by the produce"
    assert wait_for(lambda: waiting_fetches(broker) == before, timeout=5)


def test_kip_74_the_first_batch_comes_whole_beyond_the_limits(broker):
    topic = "kip-74"
    first = batch([bytes([i]) * 1000 for i in range(3)], timestamp=T0)
    second = batch([b"second" * 100], timestamp=T0 + 10)
    with connect(broker) as c:
        create_topic(c, topic)
        assert produce(c, topic, first).base_offset == 0
        assert produce(c, topic, second).base_offset == 3
        for limits in ({"partition_max_bytes": 100}, {"max_bytes": 100}, {"partition_max_bytes": 1},
                       {"partition_max_bytes": len(first)}):
            p = fetch_one(c, topic, 0, 0, **limits)
            assert p.error_code == 0
            # Exactly the first batch, as sent: the broker stamps only baseOffset (0 here) and the
            # partitionLeaderEpoch (bytes 12-15), both outside the CRC.
            assert len(p.records) == len(first), limits
            assert (p.records[:12], p.records[16:]) == (first[:12], first[16:])
        # A fetch offset inside a batch gets that whole batch (clients skip the records below it).
        p = fetch_one(c, topic, 0, 2, partition_max_bytes=1)
        assert [h.base_offset for _, h in iter_batches(p.records)] == [0]
        both = fetch_one(c, topic, 0, 1, partition_max_bytes=len(first) + len(second))
        assert [(h.base_offset, h.last_offset) for _, h in iter_batches(both.records)] == [(0, 2), (3, 3)]
        assert both.records[len(first) + 16:] == second[16:]
        # Limits below the second batch stop before it: whole batches only, never a part of one.
        one = fetch_one(c, topic, 0, 0, partition_max_bytes=len(first) + len(second) - 1)
        assert len(one.records) == len(first)


def test_offset_out_of_range_beyond_the_log_end(broker):
    topic = "out-of-range"
    with connect(broker) as c:
        create_topic(c, topic)
        produce(c, topic, batch([b"x", b"y", b"z"], timestamp=T0))
        at_end = fetch_one(c, topic, 0, 3)
        assert (at_end.error_code, at_end.records, at_end.high_watermark) == (0, b"", 3)
        for offset in (4, 1 << 40, -1):
            p = fetch_one(c, topic, 0, offset, max_wait_ms=5000)  # an error answers at once
            assert p.error_code == E.OFFSET_OUT_OF_RANGE, offset
            assert p.records == b""
        # The connection and the partition are fine afterwards.
        records, _ = decode_batches(fetch_one(c, topic, 0, 0).records, 0)
        assert [r.value for r in records] == [b"x", b"y", b"z"]


@pytest.mark.parametrize("version", [4, 7, 11, 12])
def test_a_full_fetch_lists_every_requested_partition(broker, version):
    topic = f"listed-v{version}"
    with connect(broker) as c:
        create_topic(c, topic, partitions=3)
        produce(c, topic, batch([b"only in 1"], timestamp=T0), partition=1)
        wanted = [(topic, 0, 0), (topic, 1, 0), (topic, 2, 0), (topic, 9, 0), ("never-created", 0, 0),
                  (topic, 1, 999)]
        started = time.monotonic()
        # A long max wait: the errors must answer it at once.
        response = c.call(FETCH, version, fetch_request(wanted, max_wait_ms=20000))
        assert time.monotonic() - started < 10
    assert response.error_code == 0 and response.session_id == 0
    got = fetch_partitions(response)
    assert [(name, p.partition_index) for name, p in got] == [(t, i) for t, i, _ in wanted]
    assert [p.error_code for _, p in got] == [0, 0, 0, E.UNKNOWN_TOPIC_OR_PARTITION,
                                              E.UNKNOWN_TOPIC_OR_PARTITION, E.OFFSET_OUT_OF_RANGE]
    assert [p.high_watermark for _, p in got[:3]] == [0, 1, 0]
    # Empty partitions carry zero-length records, not null (librdkafka rejects null records).
    assert [p.records for _, p in got if p.partition_index != 1 or p.error_code] == [b""] * 5
    records, _ = decode_batches(got[1][1].records, 1)
    assert [r.value for r in records] == [b"only in 1"]


def test_fetch_below_v4_closes_the_connection(broker):
    """Kafka 4.x removed Fetch v0-3 (KIP-896): such a request closes the connection unanswered,
    as Kafka's SocketServer does for any version it does not serve; other connections go on."""
    topic = "fetch-v3"
    with connect(broker) as c:
        create_topic(c, topic)
        produce(c, topic, batch([b"v2 batch"], timestamp=T0))
        c.send(FETCH, 3, fetch_request([(topic, 0, 0), ("never-created", 0, 0)]))
        assert c.closed_by_server(timeout=10)
    with connect(broker) as other:
        assert fetch_one(other, topic, 0, 0).error_code == 0


def test_a_fetch_session_is_never_found(broker):
    with connect(broker) as c:
        request = fetch_request([("any", 0, 0)])
        request.session_id, request.session_epoch = 123, 1
        response = c.call(FETCH, 12, request)
    assert (response.error_code, response.session_id, response.responses) == (
        E.FETCH_SESSION_ID_NOT_FOUND, 0, [])
