"""``kafkalite bench storage``: what an append and a read cost in a small log and in a large one.

One partition's Log (kafkalite.storage, Kafka's defaults: 1 GiB segments, an index entry every
4096 bytes) in a temporary directory, in this process. At each size on the way (10 MB, then
``--size``, 10 GB by default) it measures, with the log as it is then:

- append: ``append_as_leader`` of a 16 KiB batch (one record), one at a time; the log is the
  same file format the broker writes (base offset and leader epoch stamped in place);
- read: ``read`` of up to 1 MiB from an offset drawn at random over the whole log (the index
  lookup and the batch headers scanned; the answer is a file slice, as the broker sends it);
- memory: the Python heap the log holds (tracemalloc) and the process's RSS.

Before each measurement the log's dirty pages are written back (``fsync`` of its files): right
after 10 GB of writes the kernel throttles every write while it catches up, a cost of the disk,
not of the log.

Between sizes the log is filled with 1 MB batches. The issue's claim is that appends and reads
cost the same at 10 MB and at 10 GB and that memory does not grow with the log; the table gives
the ratios."""

from __future__ import annotations

import dataclasses
import os
import random
import shutil
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from kafkalite.protocol.records import Record, build_batch
from kafkalite.storage.config import LogConfig
from kafkalite.storage.log import Log

from .data.servers import rss_mb, write_back
from .markdown import machine, write_section

SMALL = 10_000_000
SAMPLES = 2000
APPEND_VALUE = 16384
FILL_VALUE = 1_000_000  # a batch under max.message.bytes (1 MiB + 12)
READ_MAX = 1 << 20

Say = Callable[[str], None]


@dataclasses.dataclass
class Point:
    size: int  # log bytes when measured
    segments: int
    append_us: tuple[float, float]  # p50, p99
    read_us: tuple[float, float]
    heap_mib: float  # what tracemalloc sees allocated since the log was opened
    rss_mib: float


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def _batch(value_bytes: int) -> bytearray:
    records = [Record(0, 0, None, b"v" * value_bytes)]
    return bytearray(build_batch(records, base_timestamp=int(time.time() * 1000)))


def _fill_to(log: Log, size: int) -> None:
    batch = _batch(FILL_VALUE)
    while log.size < size:
        log.append_as_leader(batch, 0)
    log.update_high_watermark(log.log_end_offset)


def _measure(log: Log, rng: random.Random, samples: int) -> Point:
    batch = _batch(APPEND_VALUE)
    appends = []
    for _ in range(samples):
        t = time.perf_counter_ns()
        log.append_as_leader(batch, 0)
        appends.append((time.perf_counter_ns() - t) / 1000)
    end = log.update_high_watermark(log.log_end_offset)
    reads = []
    for _ in range(samples):
        offset = rng.randrange(log.log_start_offset, end)
        t = time.perf_counter_ns()
        found = log.read(offset, READ_MAX)
        reads.append((time.perf_counter_ns() - t) / 1000)
        if not found.size:
            raise RuntimeError(f"nothing read at offset {offset} of {end}")
    heap, _ = tracemalloc.get_traced_memory()
    return Point(log.size, log.num_segments, _percentiles(appends), _percentiles(reads), heap / 2**20,
                 rss_mb(os.getpid()))


def run(size: int = 10_000_000_000, samples: int = SAMPLES, write_md: str | None = None,
        command: str = "kafkalite bench storage", say: Say = print, seed: int = 1) -> str:
    rng = random.Random(seed)
    work = Path(tempfile.mkdtemp(prefix="kafkalite-bench-storage-"))
    points: list[Point] = []
    tracemalloc.start()
    try:
        log = Log(work / "bench-0", LogConfig())
        try:
            for target in sorted({min(SMALL, size), size}):
                started = time.perf_counter()
                _fill_to(log, target)
                # The kernel's backlog of dirty pages written first: after 10 GB it throttles every
                # write while it catches up, which is the disk's cost, not the log's.
                write_back(str(work))
                say(f"log at {log.size / 1e9:,.2f} GB ({log.num_segments} segments, filled in "
                    f"{time.perf_counter() - started:,.0f} s); measuring")
                points.append(_measure(log, rng, samples))
                p = points[-1]
                say(f"  append p50 {p.append_us[0]:,.1f} us, read p50 {p.read_us[0]:,.1f} us, "
                    f"heap {p.heap_mib:,.2f} MiB, RSS {p.rss_mib:,.0f} MiB")
        finally:
            log.close()
    finally:
        tracemalloc.stop()
        shutil.rmtree(work, ignore_errors=True)
    body = _section(points, samples, command)
    if write_md:
        write_section(write_md, "storage", body)
        say(f"wrote {write_md}")
    return body


def _section(points: list[Point], samples: int, command: str) -> str:
    lines = [
        "## Storage: an append and a read in a small log and a large one",
        "",
        f"Command: `{command}`  ",
        f"Machine: {machine()}.  ",
        f"Measured: {time.strftime('%Y-%m-%d %H:%M')}. One partition's log with Kafka's defaults, in "
        f"the benchmark's process; at each size {samples:,} appends of a {APPEND_VALUE:,}-byte "
        f"batch one at a time, then {samples:,} reads of up to 1 MiB from offsets drawn at random "
        "over the whole log; filled with 1 MB batches between sizes, then written back (`fsync`).",
        "",
        "| log | segments | append p50 us | append p99 us | read p50 us | read p99 us | "
        "Python heap MiB | RSS MiB |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for p in points:
        lines.append(f"| {p.size / 1e9:,.2f} GB | {p.segments} | {p.append_us[0]:,.1f} | "
                     f"{p.append_us[1]:,.1f} | {p.read_us[0]:,.1f} | {p.read_us[1]:,.1f} | "
                     f"{p.heap_mib:,.2f} | {p.rss_mib:,.0f} |")
    if len(points) > 1:
        a, b = points[0], points[-1]
        append_ratio, read_ratio = b.append_us[0] / a.append_us[0], b.read_us[0] / a.read_us[0]
        flat = b.heap_mib - a.heap_mib <= 1.0
        same = max(append_ratio, read_ratio) <= 1.5
        lines += [
            "",
            "Goals:",
            "",
            f"- appends and reads cost the same at {a.size / 1e9:,.2f} GB and {b.size / 1e9:,.2f} GB "
            f"(medians within 1.5x): append {append_ratio:.2f}x, read {read_ratio:.2f}x, "
            f"{'met' if same else 'NOT met'}",
            f"- memory does not grow with the log: Python heap {a.heap_mib:,.2f} -> {b.heap_mib:,.2f} MiB "
            f"(within 1 MiB), {'met' if flat else 'NOT met'}; RSS {a.rss_mib:,.0f} -> {b.rss_mib:,.0f} MiB",
        ]
    return "\n".join(lines) + "\n"
