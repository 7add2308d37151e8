"""What a broker process acknowledged survives it: small segments (log.segment.bytes=16384) so a few
hundred messages span many segment files named by their base offsets, then a graceful stop or a
SIGKILL in the middle of a produce, a restart on the same log dir, and every acknowledged message
read back byte for byte; the log goes on at the right offset afterwards."""

from __future__ import annotations

import random
import re
import signal
import time
from pathlib import Path

import pytest

from tests.support.broker_process import BrokerProcess
from tests.support.raw_requests import create_topic, log_end, read_log
from tests.support.real_clients import (
    Msg,
    assert_read_back,
    confluent_consume,
    confluent_produce,
    kafka_python_consume,
)
from tests.support.wait import wait_for
from tests.support.wire_client import Client

pytestmark = pytest.mark.integration


SMALL_SEGMENTS = "log.segment.bytes=16384"
T0 = int(time.time() * 1000) - 600_000
NOT_CLEAN = "No clean shutdown marker"


def sized_messages(n: int, partitions: int, seed: int, first: int = 0) -> list[Msg]:
    """Incompressible values of 150-300 bytes: a few hundred fill many 16 KiB segments."""
    rnd = random.Random(seed)
    return [Msg(i % partitions, b"key-%05d" % (first + i), rnd.randbytes(rnd.randrange(150, 300)),
                (("n", b"%d" % (first + i)),), T0 + first + i) for i in range(n)]


def segments(log_dir: Path, topic: str, partition: int) -> list[str]:
    names = sorted(p.name for p in (log_dir / f"{topic}-{partition}").glob("*.log"))
    assert all(re.fullmatch(r"\d{20}\.log", n) for n in names), names
    return names


def assert_segments_named_by_base_offset(log_dir: Path, topic: str, partition: int) -> list[str]:
    """Many segments; each file's name is the base offset of its first batch."""
    names = segments(log_dir, topic, partition)
    assert len(names) >= 4, names
    assert names[0] == "0" * 20 + ".log"
    for name in names:
        first = (log_dir / f"{topic}-{partition}" / name).read_bytes()[:8]
        if first:  # the active segment may be empty right after a roll
            assert int.from_bytes(first, "big") == int(name[:20]), name
    return names


def per_partition_log(port: int, topic: str, partitions: int):
    with Client("127.0.0.1", port, timeout=30) as c:
        return [r for p in range(partitions) for r in read_log(c, topic, p)[0]]


def wait_led(broker: BrokerProcess, topic: str, ends: dict[int, int]) -> None:
    """After a restart: every partition is led again and ends where it did."""
    with Client("127.0.0.1", broker.port, timeout=30) as c:
        def ready() -> bool:
            try:
                return all(log_end(c, topic, p) == end for p, end in ends.items())
            except AssertionError:
                return False
        assert wait_for(ready, timeout=30, interval=0.05), ends


def test_segment_rolls_and_a_graceful_restart(tmp_path):
    topic = "rolled"
    sent = sized_messages(600, 2, seed=1)
    with BrokerProcess(tmp_path, SMALL_SEGMENTS) as broker:
        with Client("127.0.0.1", broker.port, timeout=30) as c:
            create_topic(c, topic, partitions=2)
        offsets = confluent_produce(broker.bootstrap, topic, sent, acks="all", **{"batch.size": 4096})
        assert offsets == [(m.partition, i // 2) for i, m in enumerate(sent)]
        before = {p: assert_segments_named_by_base_offset(tmp_path, topic, p) for p in (0, 1)}
        assert_read_back(sent, per_partition_log(broker.port, topic, 2))
        assert broker.stop() == 0
    assert any("Shut down the logs" in line and "cleanly" in line for line in broker.lines)

    with BrokerProcess(tmp_path, SMALL_SEGMENTS) as again:
        wait_led(again, topic, {0: 300, 1: 300})
        assert not [line for line in again.lines if NOT_CLEAN in line]  # a clean start: no recovery
        assert {p: segments(tmp_path, topic, p) for p in (0, 1)} == before
        assert_read_back(sent, per_partition_log(again.port, topic, 2))
        assert_read_back(sent, confluent_consume(again.bootstrap, topic, [0, 1], len(sent)))
        more = sized_messages(100, 2, seed=2, first=600)
        assert confluent_produce(again.bootstrap, topic, more)[:2] == [(0, 300), (1, 300)]
        assert_read_back(sent + more, kafka_python_consume(again.bootstrap, topic, [0, 1], 700))


def test_sigkill_in_the_middle_of_a_produce_loses_nothing_acknowledged(tmp_path):
    from confluent_kafka import Producer

    topic = "killed"
    acked_first = sized_messages(400, 2, seed=3)
    in_flight = sized_messages(400, 2, seed=4, first=400)
    with BrokerProcess(tmp_path, SMALL_SEGMENTS) as broker:
        with Client("127.0.0.1", broker.port, timeout=30) as c:
            create_topic(c, topic, partitions=2)
        confluent_produce(broker.bootstrap, topic, acked_first, acks="all", **{"batch.size": 4096})
        assert_segments_named_by_base_offset(tmp_path, topic, 0)
        # More messages queued, and the broker killed while they are being sent.
        reports: dict[int, tuple[object, int]] = {}
        producer = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all", "batch.size": 4096,
                             "linger.ms": 0, "message.timeout.ms": 4000, "retries": 0})
        try:
            for i, m in enumerate(in_flight):
                producer.produce(topic, value=m.value, key=m.key, partition=m.partition,
                                 headers=list(m.headers), timestamp=m.timestamp,
                                 on_delivery=lambda err, msg, i=i: reports.__setitem__(
                                     i, (err, msg.offset())))
            # Until some of them are acknowledged, but not all: the kill lands in the middle.
            assert wait_for(lambda: producer.poll(0) >= 0 and len(reports) > 0, timeout=20, interval=0.001)
            broker.signal(signal.SIGKILL)
            assert broker.proc.wait(10) == -signal.SIGKILL
            producer.flush(15)  # the rest fail (message.timeout.ms) or were acknowledged
        finally:
            producer.close()
        broker.stop()
    assert len(reports) == len(in_flight)
    acked = {i for i, (err, _) in reports.items() if err is None}
    print(f"{len(acked)} of {len(in_flight)} in-flight messages acknowledged before the kill")

    with BrokerProcess(tmp_path, SMALL_SEGMENTS) as again:
        assert [line for line in again.lines if NOT_CLEAN in line]  # recovered after the kill
        with Client("127.0.0.1", again.port, timeout=30) as c:
            assert wait_for(lambda: _led(c, topic, 2), timeout=30, interval=0.05)
        log = per_partition_log(again.port, topic, 2)
        for p in (0, 1):
            sent_p = [m for m in acked_first + in_flight if m.partition == p]
            got = [r for r in log if r.partition == p]
            # The log is a prefix of what was sent to the partition, in order and intact...
            assert_read_back(sent_p[:len(got)], got)
            # ...holding everything acknowledged (a message acknowledged but lost fails here).
            last_acked = max([200 + i // 2 for i in acked if in_flight[i].partition == p], default=199)
            assert len(got) >= last_acked + 1, (p, len(got), last_acked)
            for i in acked:
                if in_flight[i].partition == p:
                    assert reports[i][1] == 200 + i // 2
        # The log goes on after the recovered end.
        ends = {p: len([r for r in log if r.partition == p]) for p in (0, 1)}
        more = sized_messages(10, 2, seed=5, first=800)
        assert confluent_produce(again.bootstrap, topic, more)[:2] == [(0, ends[0]), (1, ends[1])]


def _led(c: Client, topic: str, partitions: int) -> bool:
    try:
        return all(log_end(c, topic, p) >= 0 for p in range(partitions))
    except AssertionError:
        return False
