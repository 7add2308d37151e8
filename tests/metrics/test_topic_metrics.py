"""Kafka's BrokerTopicMetrics and Log metrics on the Prometheus endpoint, and the topic fields of
Produce and Fetch request log lines: a real broker, a real producer (confluent-kafka), raw
requests for the cases a client does not make on purpose (a batch over max.message.bytes, two
batches in one partition, an unknown topic, a follower's fetch), and the counts checked against
what was sent, what the logs hold and what the request log says."""

from __future__ import annotations

import threading
import time
import types

import pytest
from confluent_kafka import Producer

from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import delete_records, delete_topics
from kafkalite.protocol.messages import produce as pm
from kafkalite.protocol.records import Record, build_batch
from kafkalite.server.topic_metrics import NAMES, BrokerTopicStats
from tests.support.brokers import running_broker
from tests.support.channel import request
from tests.support.prometheus import found, scrape, value
from tests.support.raw_requests import create_topics_of, fetch_raw, read_all
from tests.support.wait import wait_for
from tests.support.wire_client import Client

from .test_request_log import request_log_lines

pytestmark = pytest.mark.integration


PRODUCE, FETCH, DELETE_RECORDS, CREATE_TOPICS, DELETE_TOPICS = 0, 1, 21, 19, 20
NOW = int(time.time() * 1000)  # record timestamps: retention must not take them mid-test
TOPIC = "kafka_server_brokertopicmetrics_"


def _batch(values: list[bytes]) -> bytes:
    return build_batch([Record(offset_delta=i, timestamp_delta=0, key=None, value=v, headers=())
                        for i, v in enumerate(values)], base_timestamp=NOW)


def _produce(c: Client, topic: str, partition: int, records: bytes) -> int:
    R = pm.REQUEST
    req = R(transactional_id=None, acks=1, timeout_ms=5000, topic_data=[R["topic_data"](
        name=topic, partition_data=[R["topic_data"]["partition_data"](index=partition, records=records)])])
    (t,) = c.call(PRODUCE, 9, req).responses
    (p,) = t.partition_responses
    return int(p.error_code)


def _api(lines: list[dict], name: str) -> list[dict]:
    return [x for x in lines if x.get("requestHeader", {}).get("requestApiKeyName") == name]


def _of(lines: list[dict], topic: str) -> list[dict]:
    """Each line's entry for ``topic`` in its ``topics``."""
    return [t for x in lines for t in x["topics"] if t["topic"] == topic]


def test_counters_and_log_gauges_match_what_was_produced_and_fetched(tmp_path):
    logs = tmp_path / "requests"
    # Small segments (several per partition) and a small max.message.bytes to refuse a batch.
    with running_broker(tmp_path / "data", metrics_port="0", request_log_dir=str(logs),
                        message_max_bytes="2000", log_segment_bytes="8192") as broker:
        port, rm = broker.metrics_server.port, broker.replica_manager
        with Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as c:
            create_topics_of(c, {"orders": 2, "audit": 1})
            assert wait_for(lambda: len(rm.partitions) == 3, timeout=10)
            producer = Producer({"bootstrap.servers": f"127.0.0.1:{broker.bound_port('PLAINTEXT')}",
                                 "linger.ms": 5, "batch.size": 1000})
            failed = []
            for i in range(300):
                producer.produce("orders", value=b"o" * 60, partition=i % 2,
                                 on_delivery=lambda e, _: e and failed.append(e))
            for _ in range(40):
                producer.produce("audit", value=b"a" * 30, partition=0,
                                 on_delivery=lambda e, _: e and failed.append(e))
            assert producer.flush(30) == 0 and not failed
            big = _batch([b"x" * 4000])  # over max.message.bytes, under segment.bytes
            assert _produce(c, "orders", 0, big) == E.MESSAGE_TOO_LARGE
            assert _produce(c, "audit", 0, _batch([b"1"]) + _batch([b"2"])) == E.INVALID_RECORD
            assert _produce(c, "nope", 0, _batch([b"?"])) == E.UNKNOWN_TOPIC_OR_PARTITION
            received = {(t, p): read_all(c, t, p, rm.partitions[(t, p)].log.log_end_offset)
                        for t, p in (("orders", 0), ("orders", 1), ("audit", 0))}
            code, replicated = fetch_raw(c, "audit", 0, 0, replica_id=2)  # a follower's fetch
            assert code == E.NONE and replicated
            R = delete_records.REQUEST
            trim = R(timeout_ms=5000, topics=[R["topics"](name="orders", partitions=[
                R["topics"]["partitions"](partition_index=0, offset=5)])])
            assert c.call(DELETE_RECORDS, 2, trim).topics[0].partitions[0].error_code == E.NONE
        m = scrape(port)

        def counter(name: str, topic: str | None = None) -> float:
            family = m[TOPIC + name]
            if topic is None:  # Kafka's all-topics meter: the sample without a topic label
                (total,) = [s.value for s in family if s.name == f"{TOPIC}{name}_total" and not s.labels]
                return total
            return value(family, f"{TOPIC}{name}_total", topic=topic)

        sizes = {k: p.log.size for k, p in rm.partitions.items()}
        assert counter("messagesin", "orders") == 300 and counter("messagesin", "audit") == 40
        assert counter("bytesin", "orders") == sizes[("orders", 0)] + sizes[("orders", 1)]
        assert counter("bytesin", "audit") == sizes[("audit", 0)]
        assert counter("bytesrejected", "orders") == len(big) and counter("bytesrejected", "audit") == 0
        assert counter("failedproducerequests", "audit") == 1  # INVALID_RECORD is not expected
        assert counter("failedproducerequests", "orders") == 0  # MESSAGE_TOO_LARGE is
        # A consumer's bytes out are what it received; the follower's are not counted.
        assert counter("bytesout", "orders") == received[("orders", 0)] + received[("orders", 1)]
        assert counter("bytesout", "audit") == received[("audit", 0)] == counter("bytesin", "audit")
        assert counter("totalfetchrequests", "audit") == 2  # the consumer's one and the follower's
        assert counter("failedfetchrequests", "orders") == 0
        # The unknown topic counts nowhere; the all-topics counters are the sums of the topics'.
        assert not found(m[TOPIC + "messagesin"], f"{TOPIC}messagesin_total", topic="nope")
        for name in NAMES:
            short = name.removesuffix("PerSec").lower()
            assert counter(short) == counter(short, "orders") + counter(short, "audit"), name

        # The Log gauges are the logs' own values, read at the scrape.
        for (topic, index), p in rm.partitions.items():
            labels = {"topic": topic, "partition": str(index)}
            assert value(m["kafka_log_log_size"], "kafka_log_log_size", **labels) == sizes[(topic, index)]
            assert value(m["kafka_log_log_numlogsegments"], "kafka_log_log_numlogsegments",
                         **labels) == p.log.num_segments
            assert value(m["kafka_log_log_logendoffset"], "kafka_log_log_logendoffset",
                         **labels) == p.log.log_end_offset
        assert rm.partitions[("orders", 0)].log.num_segments > 1  # 8 KiB segments rolled
        ends = found(m["kafka_log_log_logendoffset"], "kafka_log_log_logendoffset", topic="orders")
        assert sum(ends) == 300
        assert value(m["kafka_log_log_logstartoffset"], "kafka_log_log_logstartoffset", topic="orders",
                     partition="0") == 5  # DeleteRecords moved it

        # The request log's topic fields say the same, request by request.
        assert wait_for(lambda: len(_api(request_log_lines(logs), "DeleteRecords")) == 1)
        lines = request_log_lines(logs)
        produced, fetched = _api(lines, "Produce"), _api(lines, "Fetch")
        orders = _of(produced, "orders")
        assert sum(t["records"] for t in orders) == 300
        assert sum(t["recordBytes"] for t in orders) == counter("bytesin", "orders")
        assert sum(t["partitions"] for t in orders) == counter("totalproducerequests", "orders")
        assert {"topic": "orders", "partitions": 1, "records": 0, "recordBytes": 0,
                "errorCounts": {"10": 1}} in orders  # MESSAGE_TOO_LARGE
        assert {"topic": "audit", "partitions": 1, "records": 0, "recordBytes": 0,
                "errorCounts": {"87": 1}} in _of(produced, "audit")  # INVALID_RECORD
        assert [t["errorCounts"] for t in _of(produced, "nope")] == [{"3": 1}]  # logged, not counted
        for x in produced:
            assert x["partitions"] == sum(t["partitions"] for t in x["topics"])
            assert x["records"] == sum(t["records"] for t in x["topics"])
            assert x["recordBytes"] == sum(t["recordBytes"] for t in x["topics"]) <= x["requestBytes"]
        assert all("records" not in t for t in _of(fetched, "orders"))  # not counted for Fetch
        assert sum(t["recordBytes"] for t in _of(fetched, "orders")) == counter("bytesout", "orders")
        assert all(x["recordBytes"] <= x["responseBytes"] for x in fetched)


def test_a_deleted_topics_counters_go_and_the_all_topics_ones_stay(tmp_path):
    with running_broker(tmp_path, metrics_port="0") as broker:
        port = broker.metrics_server.port
        with Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as c:
            create_topics_of(c, {"doomed": 1, "kept": 1})
            assert wait_for(lambda: len(broker.replica_manager.partitions) == 2, timeout=10)
            assert _produce(c, "doomed", 0, _batch([b"a", b"b", b"c"])) == E.NONE
            assert _produce(c, "kept", 0, _batch([b"d"])) == E.NONE

            def messages() -> dict[str, float]:
                return {s.labels.get("topic", "*"): s.value for s in scrape(port)[TOPIC + "messagesin"]}

            assert messages() == {"*": 4, "doomed": 3, "kept": 1}
            R = delete_topics.REQUEST
            deleted = c.call(DELETE_TOPICS, 6, R(timeout_ms=10000, topics=[R["topics"](name="doomed")]))
            assert [t.error_code for t in deleted.responses] == [E.NONE]
            assert wait_for(lambda: messages() == {"*": 4, "kept": 1})
            assert wait_for(lambda: not found(scrape(port)["kafka_log_log_size"], "kafka_log_log_size",
                                              topic="doomed"))


# --- the counting itself, without a broker ---------------------------------------------------

def _fetched(topic: str | None, code: int = 0, records: bytes = b"") -> tuple:
    return types.SimpleNamespace(topic=topic), types.SimpleNamespace(error_code=code, records=records)


def test_fetch_failures_count_only_the_unexpected_and_followers_bytes_are_not_out():
    stats = BrokerTopicStats()
    reads = [_fetched("t", E.OFFSET_OUT_OF_RANGE), _fetched("t", E.NOT_LEADER_OR_FOLLOWER),
             _fetched("t", E.UNKNOWN_SERVER_ERROR), _fetched("t", 0, b"x" * 70),
             _fetched("u", E.UNKNOWN_TOPIC_OR_PARTITION), _fetched(None, E.UNKNOWN_TOPIC_ID)]
    infos, datas = [i for i, _ in reads], [d for _, d in reads]
    stats.fetch_read(infos, datas)
    consumer, follower = request(1), request(2)
    stats.fetch_answered(consumer, False, infos, datas)
    stats.fetch_answered(follower, True, infos, datas)
    counts = stats.snapshot()
    index = {name: i for i, name in enumerate(NAMES)}
    assert set(counts) == {None, "t"}  # neither an unknown topic nor an unknown topic id
    t = counts["t"]
    assert (t[index["TotalFetchRequestsPerSec"]], t[index["FailedFetchRequestsPerSec"]]) == (4, 1)
    assert t[index["BytesOutPerSec"]] == 70  # the consumer's response only
    assert counts[None] == t
    # Both responses' lines list what was sent, the unknown topic's partition too.
    for r in (consumer, follower):
        assert [(x.topic, len(x.partitions), x.records, x.record_bytes) for x in r.topic_traffic] == [
            ("t", 4, -1, 70), ("u", 1, -1, 0)]


def test_threads_count_into_shards_that_lose_nothing():
    stats = BrokerTopicStats()
    infos, datas = zip(*[_fetched("t", 0, b"x" * 10), _fetched("v", 0, b"y" * 5)], strict=True)
    start = threading.Barrier(8)

    def fetch_many() -> None:
        start.wait()
        for _ in range(2000):
            stats.fetch_answered(request(0), False, infos, datas)

    threads = [threading.Thread(target=fetch_many) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    counts = stats.snapshot()
    out = NAMES.index("BytesOutPerSec")
    assert (counts["t"][out], counts["v"][out], counts[None][out]) == (160_000, 80_000, 240_000)
    assert len(stats._shards) == 8
