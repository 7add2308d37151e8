"""``kafkalite bench startup``: how long a test waits for its Kafka, on kafkalite.testing and on
librdkafka's mock cluster, each in a fresh Python process per round (what a test run pays):

- import: the library's import (``import kafkalite.testing``, which every pytest run pays through
  the plugin; confluent_kafka for the mock);
- the cluster's modules: the first use of ``kafkalite.testing.Cluster``, which imports the broker
  and everything it runs (kafkalite.testing loads it then, PEP 562), paid once by a test process
  that starts a cluster (none for the mock: its cluster is in confluent_kafka's library);
- ready: from nothing to 3 brokers registered and a topic led (kafkalite: ``Cluster.start`` with
  the topic; mock: a client with ``test.mock.num.brokers=3`` until its Metadata lists the 3
  brokers and the topic, which the mock creates on that request);
- the same test: ready, one record produced (acks=all) and consumed back, everything closed.

Each round runs with bytecode caches, as an installed package has them: its processes write them
to a directory of this run (PYTHONPYCACHEPREFIX, PYTHONDONTWRITEBYTECODE unset), filled by one
warm-up round of each kind that is not counted.

Run one round as ``python -m kafkalite_bench.startup KIND`` (it prints one JSON line).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

from .markdown import machine, write_section

Say = Callable[[str], None]
KINDS = ("kafkalite", "mock")
TOPIC = "startup"
# Issue 32's goals, in milliseconds.
GOAL_IMPORT_MS = 100
GOAL_READY_MS = 50


def _kafkalite() -> dict:
    t0 = time.monotonic()
    # Imported here: the import is part of what a test pays, and is timed.
    import kafkalite.testing
    t1 = time.monotonic()
    cluster_class = kafkalite.testing.Cluster  # its first use imports the broker's modules
    t2 = time.monotonic()
    cluster = cluster_class(3, topics=[TOPIC])
    cluster.start()
    t3 = time.monotonic()
    _produce_and_consume(cluster.bootstrap_servers)
    t4 = time.monotonic()
    cluster.stop()
    t5 = time.monotonic()
    return {"import": t1 - t0, "modules": t2 - t1, "ready": t3 - t2, "use": t4 - t3, "stop": t5 - t4,
            "test": t5 - t2}


def _mock() -> dict:
    t0 = time.monotonic()
    from confluent_kafka import Producer
    t1 = time.monotonic()
    # The mock cluster lives in this client; the test's own clients connect to its brokers.
    host = Producer({"test.mock.num.brokers": 3, "bootstrap.servers": "unused:9092"})
    while True:
        md = host.list_topics(TOPIC, timeout=30)
        topic = md.topics.get(TOPIC)
        if len(md.brokers) == 3 and topic is not None and topic.error is None and topic.partitions \
                and all(p.leader >= 0 for p in topic.partitions.values()):
            break
    servers = ",".join(f"{b.host}:{b.port}" for b in md.brokers.values())
    t2 = time.monotonic()
    _produce_and_consume(servers)
    t3 = time.monotonic()
    host.flush(5)
    del host  # the mock cluster stops with its client
    t4 = time.monotonic()
    return {"import": t1 - t0, "modules": 0.0, "ready": t2 - t1, "use": t3 - t2, "stop": t4 - t3,
            "test": t4 - t1}


def _produce_and_consume(servers: str) -> None:
    from confluent_kafka import Consumer, Producer, TopicPartition

    producer = Producer({"bootstrap.servers": servers, "acks": "all"})
    got = []
    producer.produce(TOPIC, b"hello", partition=0, on_delivery=lambda err, msg: got.append(err))
    if producer.flush(30) != 0 or got != [None]:
        raise RuntimeError(f"not delivered: {got}")
    consumer = Consumer({"bootstrap.servers": servers, "group.id": "startup", "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(TOPIC, 0, 0)])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            message = consumer.poll(0.1)
            if message is not None and message.error() is None:
                if message.value() != b"hello":
                    raise RuntimeError(f"read {message.value()!r}")
                return
        raise RuntimeError("the record was not read back within 30 s")
    finally:
        consumer.close()


def one_round(kind: str, env: dict[str, str] | None = None) -> dict:
    """One round of ``kind`` in a fresh Python process: seconds for import, ready and the test."""
    done = subprocess.run([sys.executable, "-m", "kafkalite_bench.startup", kind], capture_output=True,
                          text=True, timeout=300, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"the {kind} round failed: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(rounds: int, write_md: str | None, command: str, say: Say = print) -> str:
    results: dict[str, list[dict]] = {k: [] for k in KINDS}
    with tempfile.TemporaryDirectory(prefix="kafkalite-bench-pycache-") as pycache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = pycache
        for kind in KINDS:  # the warm-up: it writes the bytecode caches
            one_round(kind, env)
        for r in range(rounds):
            for kind in KINDS if r % 2 == 0 else tuple(reversed(KINDS)):
                got = one_round(kind, env)
                results[kind].append(got)
                say(f"round {r + 1}/{rounds} {kind}: import {got['import'] * 1000:,.0f} ms, the cluster's "
                    f"modules {got['modules'] * 1000:,.0f} ms, ready {got['ready'] * 1000:,.0f} ms, produce "
                    f"and consume {got['use'] * 1000:,.0f} ms, stop {got['stop'] * 1000:,.0f} ms")
    body = _section(results, rounds, command)
    if write_md:
        write_section(write_md, "startup", body)
        say(f"wrote {write_md}")
    return body


def _median_ms(values: list[dict], key: str) -> float:
    return statistics.median(v[key] for v in values) * 1000


def _section(results: dict[str, list[dict]], rounds: int, command: str) -> str:
    text = (f"## Startup: a 3-broker cluster for a test\n\nCommand: `{command}`  \nMachine: {machine()}.  \n"
            f"Measured: {time.strftime('%Y-%m-%d %H:%M')}. {rounds} rounds, each in a fresh Python process "
            "with bytecode caches (after one warm-up round of each kind), kinds in turn (order reversed "
            "every other round), medians. Import: `import kafkalite.testing` (what every pytest run "
            "pays, through the plugin; the mock: `confluent_kafka`). The cluster's modules: the first "
            "use of `kafkalite.testing.Cluster`, which imports the broker (paid once per test process "
            "that starts a cluster). Ready: 3 brokers registered and "
            f"topic `{TOPIC}` led and fetched by its followers, `__consumer_offsets` too "
            "(kafkalite.testing.Cluster in memory; librdkafka's mock cluster in a "
            "confluent-kafka client, until its Metadata lists the 3 brokers and the topic). The test: "
            "ready, one record produced with acks=all and consumed back by confluent-kafka clients, "
            "everything closed.\n\n")
    text += ("| | import, ms | the cluster's modules, ms | ready, ms | produce and consume, ms | stop, ms "
             "| the test, ms |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
    for kind in KINDS:
        text += f"| {kind} | " + " | ".join(f"{_median_ms(results[kind], k):,.0f}" for k in
                                             ("import", "modules", "ready", "use", "stop", "test")) + " |\n"
    k_import = _median_ms(results["kafkalite"], "import")
    k_modules = _median_ms(results["kafkalite"], "modules")
    k_ready, m_ready = _median_ms(results["kafkalite"], "ready"), _median_ms(results["mock"], "ready")
    k_test, m_test = _median_ms(results["kafkalite"], "test"), _median_ms(results["mock"], "test")
    best_ready = min(v["ready"] for v in results["kafkalite"]) * 1000
    worst = max(v["ready"] for v in results["kafkalite"]) * 1000
    text += (f"\nGoals (issue 32): `import kafkalite.testing` under {GOAL_IMPORT_MS} ms: {k_import:,.0f} ms "
             f"({_met(k_import < GOAL_IMPORT_MS)}); a 3-broker cluster ready under {GOAL_READY_MS} ms: "
             f"{k_ready:,.0f} ms ({_met(k_ready < GOAL_READY_MS)}; fastest round {best_ready:,.0f} ms, "
             f"slowest {worst:,.0f} ms), {k_ready / m_ready:.1f}x the mock's. The cluster's modules: "
             f"{k_modules:,.0f} ms, once per test process that starts a cluster. The same test "
             f"{k_test / m_test:.2f}x the mock's time; the test's time is its three parts, each a median "
             "of its own.\n")
    return text


def _met(met: bool) -> str:
    return "met" if met else "not met"


if __name__ == "__main__":
    kind = sys.argv[1]
    print(json.dumps(_kafkalite() if kind == "kafkalite" else _mock()), flush=True)
