"""Runs the network benchmark: for each scenario (connections x requests in flight), each server in
turn pinned to core 0 with the same load generator pinned to core 1, a warm-up run, then the
measured run; server CPU time and peak RSS from /proc. With ``repeat`` the servers are taken in
turn that many times and each figure is the median, so that a noisy moment hits all servers alike.
Ratios are kafkalite's over each peer's, within one scenario of one run."""

from __future__ import annotations

import dataclasses
import itertools
import multiprocessing
import os
import selectors
import shutil
import socket
import statistics
import subprocess
import sys
import time

from kafkalite.protocol import UNLIMITED_FRAME_SIZE, FrameDecoder

from ..markdown import machine, write_section
from ..ports import free_port
from . import loadgen
from .workload import request_frames

SERVERS = ("kafkalite", "asyncio", "asyncio-bytes", "uvloop", "threaded", "selectors")
DEFAULT_THREADS = (3, 8)  # Kafka's num.network.threads, num.io.threads


@dataclasses.dataclass(frozen=True)
class Scenario:
    connections: int
    depth: int
    mix: str = "apiversions"
    topics: int = 10

    @property
    def label(self) -> str:
        return f"{self.connections} conn x {self.depth} in flight"


@dataclasses.dataclass
class Result:
    server: str
    threads: tuple[int, int] | None  # kafkalite's (network, io) threads; None for a peer
    scenario: Scenario
    requests: int
    seconds: float
    p50_us: float
    p99_us: float
    p999_us: float
    cpu_us_per_request: float
    peak_rss_mb: float
    observability: str = "metrics"  # kafkalite's: off, metrics (the default), log or log-csv

    @property
    def throughput(self) -> float:
        return self.requests / self.seconds

    @property
    def name(self) -> str:
        return display_name(self.server, self.threads, self.observability)


def display_name(server: str, threads: tuple[int, int] | None, observability: str = "metrics") -> str:
    """A table row's name: the peer's, or kafkalite's with its threads and observability."""
    if not threads:
        return server
    mode = "" if observability == "metrics" else f" ({observability})"
    return f"kafkalite {threads[0]}+{threads[1]}{mode}"


def _status_mb(pid: int, field: str) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def _start(server: str, port: int, topics: int, network_threads: int, io_threads: int,
           source: str | None = None, observability: str = "metrics") -> subprocess.Popen:
    """Start a server pinned to core 0; ``source``: a checkout to run kafkalite from, with that
    checkout's own bench/ folder, imported as ``bench`` from its root (the installed
    kafkalite_bench is today's)."""
    if server == "kafkalite":
        module = "bench" if source else "kafkalite_bench"
        args = [sys.executable, "-m", f"{module}.network.kafkalite_server", str(port), str(topics),
                str(network_threads), str(io_threads)]
        if observability != "metrics":
            args.append(observability)
    else:
        args = [sys.executable, "-m", "kafkalite_bench.network.peers.servers", server, str(port), str(topics)]
    if shutil.which("taskset") and os.cpu_count() and os.cpu_count() > 1:  # type: ignore[operator]
        args = ["taskset", "-c", "0", *args]
    # kafkalite's port opens before its metadata and partition are set up: it says "ready" once
    # they are (a peer builds its answers before it listens: its open port is enough).
    says_ready = server == "kafkalite"
    proc = subprocess.Popen(args, stdout=subprocess.PIPE if says_ready else subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd=source)
    deadline = time.monotonic() + 30
    if says_ready and _said_ready(proc, deadline):
        return proc
    while not says_ready and time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.05)
    proc.kill()
    proc.wait(5)
    raise RuntimeError(f"{server} did not start")


def _said_ready(proc: subprocess.Popen, deadline: float) -> bool:
    """Whether the server wrote its "ready" line before ``deadline`` (False: it exited first)."""
    assert proc.stdout is not None
    out = b""
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while b"ready" not in out.split() and sel.select(max(0.0, deadline - time.monotonic())):
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                break
            out += chunk
    return b"ready" in out.split()


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


def _load(port: int, connections: int, depth: int, frames: list[bytes], seconds: float,
          server_pid: int) -> tuple:
    core = 1 if (os.cpu_count() or 1) > 1 else None
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(loadgen.run, (port, connections, depth, frames, seconds, core, server_pid))


def measure(server: str, scenario: Scenario, seconds: float, warmup: float,
            threads: tuple[int, int] = DEFAULT_THREADS, source: str | None = None,
            observability: str = "metrics") -> Result:
    port = free_port()
    proc = _start(server, port, scenario.topics, *threads, source=source, observability=observability)
    try:
        frames = request_frames(scenario.mix, 64)
        _load(port, scenario.connections, scenario.depth, frames, warmup, proc.pid)
        done, lat, elapsed, cpu = _load(port, scenario.connections, scenario.depth, frames, seconds,
                                        proc.pid)
        rss = _status_mb(proc.pid, "VmHWM")
    finally:
        _stop(proc)
    q = statistics.quantiles(lat, n=1000, method="inclusive") if len(lat) > 1 else [0] * 999
    return Result(server, threads if server == "kafkalite" else None, scenario, done,
                  elapsed, q[499] / 1000, q[989] / 1000, q[998] / 1000,
                  cpu / max(done, 1) * 1e6, rss, observability if server == "kafkalite" else "metrics")


def _median(results: list[Result]) -> Result:
    first = results[0]
    med = statistics.median
    return dataclasses.replace(
        first, requests=int(med(r.throughput for r in results) * first.seconds),
        p50_us=med(r.p50_us for r in results), p99_us=med(r.p99_us for r in results),
        p999_us=med(r.p999_us for r in results),
        cpu_us_per_request=med(r.cpu_us_per_request for r in results),
        peak_rss_mb=med(r.peak_rss_mb for r in results))


def table(results: list[Result]) -> str:
    base = _reference(results)
    lines = ["| server | req/s | p50 us | p99 us | p99.9 us | server CPU us/req | peak RSS MB "
             "| kafkalite throughput / this | kafkalite CPU per req / this | kafkalite p99 / this |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in results:
        lines.append(
            f"| {r.name} | {r.throughput:,.0f} | {r.p50_us:,.0f} | {r.p99_us:,.0f} | {r.p999_us:,.0f} | "
            f"{r.cpu_us_per_request:,.1f} | {r.peak_rss_mb:,.0f} | {base.throughput / r.throughput:.2f}x | "
            f"{base.cpu_us_per_request / r.cpu_us_per_request:.2f}x | "
            f"{base.p99_us / max(r.p99_us, 1):.2f}x |")
    return "\n".join(lines)


def _reference(results: list[Result]) -> Result:
    """The row ratios are taken against: kafkalite at the default threads, else the first."""
    return next((r for r in results if r.threads == DEFAULT_THREADS and r.observability == "metrics"),
                next((r for r in results if r.threads), results[0]))


# Issue 5's goals, as (description, test over one scenario's rows); a test returns None when the
# rows it needs were not measured.
def _ratio(rows: dict[str, Result], a: str, b: str, attr: str) -> float | None:
    if a not in rows or b not in rows:
        return None
    x, y = getattr(rows[a], attr), getattr(rows[b], attr)
    return x / y if y else None


GOALS = (
    # Issue 32: against asyncio answering precomputed bytes (no codec), both mixes.
    ("CPU/req <= 1.0x asyncio-bytes", lambda r: _ratio(r, "kafkalite 3+8", "asyncio-bytes",
                                                       "cpu_us_per_request"), lambda x: x <= 1.0),
    ("throughput >= 1.0x asyncio-bytes", lambda r: _ratio(r, "kafkalite 3+8", "asyncio-bytes", "throughput"),
     lambda x: x >= 1.0),
    ("CPU/req <= 1.0x asyncio", lambda r: _ratio(r, "kafkalite 3+8", "asyncio", "cpu_us_per_request"),
     lambda x: x <= 1.0),
    ("throughput >= 1.0x asyncio", lambda r: _ratio(r, "kafkalite 3+8", "asyncio", "throughput"),
     lambda x: x >= 1.0),
    ("throughput >= 0.8x uvloop", lambda r: _ratio(r, "kafkalite 3+8", "uvloop", "throughput"),
     lambda x: x >= 0.8),
    ("throughput >= 2x threaded", lambda r: _ratio(r, "kafkalite 3+8", "threaded", "throughput"),
     lambda x: x >= 2.0),
    ("p99 <= 1.5x asyncio", lambda r: _ratio(r, "kafkalite 3+8", "asyncio", "p99_us"),
     lambda x: x <= 1.5),
    ("CPU/req at 3+8 <= 1.1x 1+1", lambda r: _ratio(r, "kafkalite 3+8", "kafkalite 1+1",
                                                    "cpu_us_per_request"), lambda x: x <= 1.1),
    # Issue 6: metrics and the request log on, against both off.
    ("throughput with metrics + request log >= 0.95x off",
     lambda r: _ratio(r, "kafkalite 3+8 (log)", "kafkalite 3+8 (off)", "throughput"), lambda x: x >= 0.95),
    ("throughput with metrics >= 0.95x off",
     lambda r: _ratio(r, "kafkalite 3+8", "kafkalite 3+8 (off)", "throughput"), lambda x: x >= 0.95),
)


def goals(results: list[Result]) -> str:
    lines = []
    for name, ratio, ok in GOALS:
        x = ratio({r.name: r for r in results})
        if x is not None:
            lines.append(f"- {name}: {x:.2f}x, {'met' if ok(x) else 'NOT met'}")
    return "\n".join(lines)


def idle_memory(server: str, connections: int, threads: tuple[int, int] = DEFAULT_THREADS) -> tuple:
    """(RSS MB before, RSS MB with ``connections`` idle connections that each had one answer, KiB
    per connection)."""
    port = free_port()
    proc = _start(server, port, 10, *threads)
    frame = request_frames("apiversions", 1)[0]
    socks: list[socket.socket] = []
    try:
        _answer_all(port, [frame], 1, socks)  # a warm server: first request's allocations done
        before = _status_mb(proc.pid, "VmRSS")
        _answer_all(port, [frame], connections, socks)
        after = _status_mb(proc.pid, "VmRSS")
    finally:
        for s in socks:
            s.close()
        _stop(proc)
    return before, after, (after - before) * 1024 / connections


def _answer_all(port: int, frames: list[bytes], connections: int, socks: list[socket.socket]) -> None:
    new = [socket.create_connection(("127.0.0.1", port), timeout=60) for _ in range(connections)]
    socks.extend(new)
    for s in new:
        s.sendall(frames[0])
    for s in new:
        decoder = FrameDecoder(UNLIMITED_FRAME_SIZE)
        while not list(decoder.frames()):
            data = s.recv(65536)
            if not data:
                raise ConnectionError("the server closed an idle connection")
            decoder.feed(data)


def run(servers: tuple[str, ...], scenarios: list[Scenario], threads: list[tuple[int, int]],
        seconds: float, warmup: float, repeat: int = 1, write_md: str | None = None,
        section: str | None = None, command: str = "", plot: str | None = None,
        observability: tuple[str, ...] = ("metrics",)) -> list[Result]:
    """Every scenario: kafkalite at each thread setting (and observability) and each peer,
    ``repeat`` times in turn."""
    runs = [(s, t, o) for s in servers
            for t, o in ([(t, o) for t in threads for o in observability] if s == "kafkalite"
                         else [(None, "metrics")])]
    total = len(scenarios) * repeat * len(runs)
    step = itertools.count(1)
    results: list[Result] = []
    texts = []
    for scenario in scenarios:
        samples: dict[tuple[str, tuple[int, int] | None, str], list[Result]] = {}
        failed: dict[str, str] = {}
        for round_ in range(repeat):
            for server, t, o in runs:
                try:
                    r = measure(server, scenario, seconds, warmup, t or DEFAULT_THREADS, observability=o)
                except Exception as e:  # a server that cannot take the scenario is a result too
                    name = display_name(server, t, o)
                    failed[name] = f"{type(e).__name__}: {e}".splitlines()[0][:100]
                    print(f"[{next(step)}/{total}] {scenario.label}, {name}: failed ({failed[name]})",
                          flush=True)
                    continue
                samples.setdefault((server, t, o), []).append(r)
                print(f"[{next(step)}/{total}] {scenario.label}, {r.name} (round {round_ + 1}): "
                      f"{r.throughput:,.0f} req/s, {r.cpu_us_per_request:.1f} us CPU/req, "
                      f"p99 {r.p99_us:,.0f} us", flush=True)
        rows = [_median(v) for v in samples.values()]
        results.extend(rows)
        text = f"### {scenario.label}, {scenario.mix}\n\n{table(rows)}\n" if rows else ""
        text += "".join(f"| {name} | failed: {why} |\n" for name, why in failed.items()
                        if not any(r.name == name for r in rows))
        met = goals(rows)
        if met:
            text += f"\nGoals (issues 5, 6, 32):\n{met}\n"
        print(text, flush=True)
        texts.append(text)
    if plot:
        # matplotlib, only when a plot is asked for
        from .plot import plot_results

        plot_results(results, plot)
        print(f"wrote {plot}")
    if write_md:
        body = (f"## Network: {section}\n\nCommand: `{command}`  \n"
                f"Machine: {machine()}; server pinned to core 0, load generator to core 1.  \n"
                f"Measured: {time.strftime('%Y-%m-%d')}; {seconds:g} s per run after a {warmup:g} s "
                f"warm-up, servers taken in turn, median of {repeat} round(s). Ratio columns: "
                "kafkalite (3 network + 8 io threads) over the row's server; throughput above 1 is "
                "better, CPU and p99 below 1.\n\n" + "\n".join(texts))
        if plot:
            body += f"\n![{section}]({os.path.relpath(plot, os.path.dirname(write_md) or '.')})\n"
        write_section(write_md, f"network-{section}", body)
        print(f"wrote {write_md}")
    return results


def run_idle(servers: tuple[str, ...], connections: int, write_md: str | None = None,
             command: str = "") -> list[tuple]:
    rows = []
    for server in servers:
        print(f"{server}: opening {connections} connections, one request each, then idle ...", flush=True)
        before, after, per = idle_memory(server, connections)
        rows.append((server, before, after, per))
        print(f"  {before:.0f} MB -> {after:.0f} MB: {per:.1f} KiB per idle connection", flush=True)
    text = "\n".join(
        ["| server | RSS before MB | RSS with connections MB | KiB per idle connection |",
         "| --- | ---: | ---: | ---: |"]
        + [f"| {s} | {b:,.1f} | {a:,.1f} | {p:,.1f} |" for s, b, a, p in rows])
    print(text)
    if write_md:
        write_section(write_md, "network-idle", (
            f"## Network: memory per idle connection ({connections} connections)\n\n"
            f"Command: `{command}`  \nMachine: {machine()}.  \n"
            f"Measured: {time.strftime('%Y-%m-%d')}. Server RSS after one answered request on one "
            f"connection, then after {connections} connections each had one answer and went "
            "idle; the difference over the count.\n\n" + text + "\n"))
        print(f"wrote {write_md}")
    return rows
