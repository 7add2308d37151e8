"""Three consumer processes (confluent-kafka) share six partitions in a group; one is SIGKILLed.
The two left take its partitions once its session expires and, with the offsets it committed,
nothing goes unread (at-least-once: what the killed one read but did not commit is read again)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from tests.support.brokers import running_broker
from tests.support.wait import wait_for

pytestmark = pytest.mark.integration


PARTITIONS, PER_PARTITION = 6, 100
SETTINGS = {"group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "3",
            "group.min.session.timeout.ms": "500"}

CONSUMER = textwrap.dedent("""
    import json, sys
    from confluent_kafka import Consumer
    bootstrap, topic, group, out = sys.argv[1:5]
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False, "session.timeout.ms": 2000, "heartbeat.interval.ms": 300})
    c.subscribe([topic])
    with open(out, "a", buffering=1) as f:
        while True:
            msg = c.poll(0.2)
            if msg is None or msg.error():
                continue
            f.write(json.dumps([msg.partition(), msg.offset()]) + "\\n")
            c.commit(message=msg, asynchronous=False)  # each record committed once read
""")


def read_lines(path) -> list[tuple[int, int]]:
    try:
        with open(path) as f:
            return [tuple(json.loads(line)) for line in f if line.endswith("\n")]
    except FileNotFoundError:
        return []


def test_a_killed_members_partitions_go_to_the_others_and_nothing_is_left_unread(tmp_path):
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    with running_broker(tmp_path / "broker", **SETTINGS) as broker:
        bootstrap = f"127.0.0.1:{broker.bound_port('PLAINTEXT')}"
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic("shared", PARTITIONS, 1)])["shared"].result(30)
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})

        def produce_half(start: int) -> None:
            for p in range(PARTITIONS):
                for i in range(start, start + PER_PARTITION // 2):
                    producer.produce("shared", b"%d-%d" % (p, i), partition=p)
            assert producer.flush(30) == 0

        script = tmp_path / "consumer.py"
        script.write_text(CONSUMER)
        outs = [tmp_path / f"member-{i}.jsonl" for i in range(3)]
        procs = [subprocess.Popen([sys.executable, str(script), bootstrap, "shared", "sharers", str(out)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for out in outs]
        try:
            produce_half(0)
            # Each member reads a share of the first half (two partitions each once the group is stable).
            first_half = PARTITIONS * PER_PARTITION // 2
            assert wait_for(lambda: len({r for o in outs for r in read_lines(o)}) == first_half, timeout=60)
            owners = [{p for p, _ in read_lines(o)} for o in outs]
            victim = max(range(3), key=lambda i: len(owners[i]))
            assert owners[victim], owners
            procs[victim].send_signal(signal.SIGKILL)
            procs[victim].wait(10)
            produce_half(PER_PARTITION // 2)
            survivors = [o for i, o in enumerate(outs) if i != victim]
            everything = {(p, o) for p in range(PARTITIONS) for o in range(PER_PARTITION)}
            assert wait_for(lambda: {r for o in outs for r in read_lines(o)} >= everything, timeout=60)
            # The victim's partitions were read by the others after it died.
            taken_over = {p for o in survivors for p, off in read_lines(o) if off >= PER_PARTITION // 2}
            assert owners[victim] <= taken_over
        finally:
            for proc in procs:
                if proc.poll() is None:
                    os.kill(proc.pid, signal.SIGKILL)
                proc.wait(10)
