"""Controller fan-out: how long the controller takes to bring 3 brokers' metadata up to date with
one UpdateMetadata for N partitions, end to end: batch built, encoded once per broker, sent by
each broker's RequestSendThread, decoded and applied by each broker (real broker processes over
loopback), answered. Times are from send_requests_to_brokers until the last broker answered."""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid

from kafkalite.common.endpoints import Endpoint
from kafkalite.controller.channel_manager import ControllerChannelManager
from kafkalite.controller.context import (
    ControllerBroker,
    ControllerContext,
    LeaderIsrAndControllerEpoch,
    TopicPartition,
)
from kafkalite.controller.request_batch import ControllerBrokerRequestBatch
from kafkalite.controller.settings import ControllerSettings
from kafkalite.local.settings import HOST, registered_brokers

from .markdown import machine, write_section
from .ports import free_port

PER_TOPIC = 100


def _start_brokers(directory: str) -> list[tuple[subprocess.Popen, int, int]]:
    brokers = []
    nowhere = free_port()
    for node in (1, 2, 3):
        client, internal = free_port(), free_port()
        args = [sys.executable, "-m", "kafkalite", "broker", "--log-level", "WARNING"]
        # Broker-only: this benchmark is their controller (it sends them UpdateMetadata); the
        # address they would register with is a free port where nothing answers.
        for o in (f"node.id={node}", "process.roles=broker",
                  f"controller.quorum.bootstrap.servers={HOST}:{nowhere}",
                  f"listeners=PLAINTEXT://{HOST}:{client},INTERNAL://{HOST}:{internal}",
                  "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
                  "inter.broker.listener.name=INTERNAL", f"log.dirs={directory}/b{node}"):
            args += ["--override", o]
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        brokers.append((proc, client, internal))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not all(registered_brokers(c) for _, c, _ in brokers):
        time.sleep(0.1)
    return brokers


def _context(brokers: list[tuple[subprocess.Popen, int, int]], partitions: int) -> ControllerContext:
    ctx = ControllerContext()
    ctx.epoch = 1
    ctx.add_live_brokers([
        ControllerBroker(i + 1, 1, (Endpoint("PLAINTEXT", HOST, c, "PLAINTEXT"),
                                    Endpoint("INTERNAL", HOST, n, "PLAINTEXT")))
        for i, (_, c, n) in enumerate(brokers)])
    for t in range(max(1, partitions // PER_TOPIC)):
        name = f"topic-{t:05d}"
        ctx.add_topic(name, uuid.uuid4(), {p: [(p + k) % 3 + 1 for k in range(3)] for p in range(PER_TOPIC)})
        for p in range(PER_TOPIC):
            leader = p % 3 + 1
            ctx.put_partition_leadership(TopicPartition(name, p), LeaderIsrAndControllerEpoch(
                leader, 0, (leader, leader % 3 + 1, (leader + 1) % 3 + 1), 0, 1))
    return ctx


def measure(brokers: list[tuple[subprocess.Popen, int, int]], partitions: int,
            repeat: int) -> tuple[list[float], list[float]]:
    ctx = _context(brokers, partitions)
    channel = ControllerChannelManager(0, ControllerSettings(0, "INTERNAL").socket_timeout_ms)
    channel.startup({i + 1: (HOST, n) for i, (_, _, n) in enumerate(brokers)})
    answered = threading.Semaphore(0)
    batch = ControllerBrokerRequestBatch(
        ctx, channel.send_request, "3.9", 0, inter_broker_listener="INTERNAL",
        on_update_metadata_response=lambda r, b: answered.release())
    totals, builds = [], []
    try:
        for i in range(repeat + 1):  # the first round warms up connections and code paths
            ctx.epoch = i + 1
            start = time.perf_counter()
            batch.new_batch()
            batch.add_update_metadata_request_for_brokers([1, 2, 3], list(ctx.all_partitions))
            batch.send_requests_to_brokers(ctx.epoch)
            built = time.perf_counter()
            for _ in range(3):
                if not answered.acquire(timeout=300):
                    raise RuntimeError("a broker did not answer")
            if i:
                totals.append(time.perf_counter() - start)
                builds.append(built - start)
    finally:
        channel.shutdown()
    return totals, builds


def run(sizes: tuple[int, ...] = (1000, 10000, 100000), repeat: int = 3, write_md: str | None = None) -> None:
    with tempfile.TemporaryDirectory() as directory:
        brokers = _start_brokers(directory)
        rows = []
        try:
            for n in sizes:
                print(f"UpdateMetadata fan-out, {n} partitions to 3 brokers ...", flush=True)
                totals, builds = measure(brokers, n, repeat)
                rows.append((n, min(totals), statistics.median(totals), statistics.median(builds)))
        finally:
            for proc, _, _ in brokers:
                proc.terminate()
            for proc, _, _ in brokers:
                proc.wait(30)
    lines = ["| partitions | best ms | median ms | of which building the batch, median ms "
             "| ms per 1k partitions |",
             "| ---: | ---: | ---: | ---: | ---: |"]
    for n, best, med, build in rows:
        lines.append(f"| {n:,} | {best * 1000:,.1f} | {med * 1000:,.1f} | {build * 1000:,.1f} | "
                     f"{med * 1000 / (n / 1000):,.1f} |")
    table = "\n".join(lines)
    print(table)
    if write_md:
        growth = rows[-1][2] / rows[0][2] if len(rows) > 1 else 1.0
        per_k = [med * 1000 / (n / 1000) for n, _, med, _ in rows]
        body = (
            "## Controller: UpdateMetadata fan-out to 3 brokers\n\n"
            f"Command: `kafkalite bench controller --repeat {repeat} --write docs/benchmarks.md`  \n"
            f"Machine: {machine()}; 3 broker processes on the same machine.  \n"
            f"Measured: {time.strftime('%Y-%m-%d')}. From `send_requests_to_brokers` until all three "
            "brokers answered (batch built, encoded per broker, sent, decoded and applied by each "
            f"broker); {repeat} runs after a warm-up.\n\n{table}\n\n"
            f"From {rows[0][0]:,} to {rows[-1][0]:,} partitions the median grows {growth:,.0f}x for "
            f"{rows[-1][0] // rows[0][0]}x the partitions: roughly linear, {min(per_k):,.0f} to "
            f"{max(per_k):,.0f} ms per 1k partitions.\n")
        write_section(write_md, "controller", body)
        print(f"wrote {write_md}")
