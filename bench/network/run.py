"""Runs the network benchmark: each server in turn (pinned to core 0), the same load generator
(pinned to core 1), a warm-up run, then the measured run; server CPU time and peak RSS from
/proc. Ratios are against kafkalite in the same run."""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time

from ..ports import free_port
from . import loadgen
from .workload import request_frames

SERVERS = ("kafkalite", "asyncio", "uvloop", "threaded", "selectors")
CLK = os.sysconf("SC_CLK_TCK")


@dataclasses.dataclass
class Result:
    server: str
    requests: int
    seconds: float
    p50_us: float
    p99_us: float
    p999_us: float
    cpu_us_per_request: float
    peak_rss_mb: float

    @property
    def throughput(self) -> float:
        return self.requests / self.seconds


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK  # utime + stime


def _peak_rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _start(server: str, port: int, topics: int, network_threads: int, io_threads: int) -> subprocess.Popen:
    if server == "kafkalite":
        args = [sys.executable, "-m", "bench.network.kafkalite_server", str(port), str(topics),
                str(network_threads), str(io_threads)]
    else:
        args = [sys.executable, "-m", "bench.network.peers.servers", server, str(port), str(topics)]
    if shutil.which("taskset") and os.cpu_count() and os.cpu_count() > 1:  # type: ignore[operator]
        args = ["taskset", "-c", "0", *args]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"{server} did not start")


def _load(port: int, connections: int, depth: int, frames: list[bytes], seconds: float) -> tuple:
    core = 1 if (os.cpu_count() or 1) > 1 else None
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(loadgen.run, (port, connections, depth, frames, seconds, core))


def measure(server: str, connections: int, depth: int, mix: str, topics: int, seconds: float,
            warmup: float, network_threads: int = 3, io_threads: int = 8) -> Result:
    port = free_port()
    proc = _start(server, port, topics, network_threads, io_threads)
    try:
        frames = request_frames(mix, 64)
        _load(port, connections, depth, frames, warmup)
        cpu0 = _cpu_seconds(proc.pid)
        t0 = time.perf_counter()
        done, lat = _load(port, connections, depth, frames, seconds)
        elapsed = time.perf_counter() - t0
        cpu = _cpu_seconds(proc.pid) - cpu0
        rss = _peak_rss_mb(proc.pid)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    q = statistics.quantiles(sorted(lat), n=1000, method="inclusive") if len(lat) > 1 else [0] * 999
    return Result(server, done, min(elapsed, seconds + 1), q[499] / 1000, q[989] / 1000, q[998] / 1000,
                  cpu / max(done, 1) * 1e6, rss)


def table(results: list[Result]) -> str:
    base = next((r for r in results if r.server == "kafkalite"), results[0])
    lines = ["| server | req/s | p50 us | p99 us | p99.9 us | server CPU us/req | peak RSS MB "
             "| kafkalite throughput / peer | kafkalite CPU per req / peer |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in results:
        lines.append(
            f"| {r.server} | {r.throughput:,.0f} | {r.p50_us:,.0f} | {r.p99_us:,.0f} | {r.p999_us:,.0f} | "
            f"{r.cpu_us_per_request:,.1f} | {r.peak_rss_mb:,.0f} | {base.throughput / r.throughput:.2f}x | "
            f"{base.cpu_us_per_request / r.cpu_us_per_request:.2f}x |")
    return "\n".join(lines)


def run(servers: tuple[str, ...], connections: int, depth: int, mix: str, topics: int, seconds: float,
        warmup: float, network_threads: int, io_threads: int, write_md: str | None = None) -> list[Result]:
    results = []
    for server in servers:
        print(f"{server}: {connections} connections x {depth} in flight, {mix}, {seconds:g} s "
              f"(after {warmup:g} s warm-up) ...", flush=True)
        results.append(measure(server, connections, depth, mix, topics, seconds, warmup,
                               network_threads, io_threads))
    text = table(results)
    print(text)
    if write_md:
        from ..codec import _write_section, machine

        command = (f"kafkalite bench network --connections {connections} --depth {depth} --mix {mix} "
                   f"--topics {topics} --seconds {seconds:g} --warmup {warmup:g} --network-threads "
                   f"{network_threads} --io-threads {io_threads} --write {write_md}")
        _write_section(write_md, f"network-{connections}-{depth}-{mix}-{network_threads}-{io_threads}", (
            f"## Network: {connections} connections, {depth} in flight, {mix}, "
            f"{network_threads} network + {io_threads} io threads\n\n"
            f"Command: `{command}`  \n"
            f"Machine: {machine()}; server pinned to core 0, load generator to core 1.  \n"
            f"Measured: {time.strftime('%Y-%m-%d')}, after a warm-up run per server. Ratios: kafkalite's "
            "throughput over the peer's (above 1 is better), kafkalite's CPU per request over the "
            "peer's (below 1 is better).\n\n" + text + "\n"))
        print(f"wrote {write_md}")
    return results
