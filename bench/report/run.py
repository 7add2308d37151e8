"""``kafkalite bench report``: the Spark report against DuckDB computing the same tables over the
same request-log files, in one run (docs/benchmarks.md, "Report").

Spark's session (the JVM) is started before the clock; each round then times one whole
``report.run`` (read, cache, every table written as Parquet and collected, the HTML report) and
one whole DuckDB run (read with the same schema, every table written as Parquet and collected),
taking the two in turn. Spark's exact percentiles are set against DuckDB's ``quantile_cont``
(the same definition, so the answers are checked equal); DuckDB's ``approx_quantile`` is timed
too, for reference."""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from typing import Any

from kafkalite.jobs import report

from ..markdown import machine, write_section
from . import duck, logs

SECTION = "report"


def ensure_logs(directory: str, records: int, files: int = 16, log_format: str = "json") -> None:
    """Generate the logs unless ``directory`` already holds these (a manifest says which)."""
    manifest = os.path.join(directory, "MANIFEST.json")
    want = {"records": records, "files": files, "format": 2, "log_format": log_format}
    try:
        with open(manifest) as f:
            if json.load(f) == want:
                return
    except (OSError, ValueError):
        pass
    for name in os.listdir(directory) if os.path.isdir(directory) else []:
        if name.startswith("requests-"):
            os.unlink(os.path.join(directory, name))
    logs.write(directory, records, files, log_format=log_format)
    with open(manifest, "w") as f:
        json.dump(want, f)


def _same_answers(spark_rows: list[Any], duck_rows: list[tuple]) -> bool:
    """Spark's by_api against DuckDB's: same groups, counts and byte sums, percentiles equal to
    the float's precision."""
    if len(spark_rows) != len(duck_rows):
        return False
    for s, d in zip(spark_rows, duck_rows, strict=True):
        for a, b in zip(tuple(s), d, strict=True):
            if isinstance(a, float) or isinstance(b, float):
                if abs(a - b) > 1e-9 * max(1.0, abs(a)):
                    return False
            elif a != b:
                return False
    return True


ENGINES = ("spark", "spark_read", "quantile_cont", "approx_quantile")
NAMES = {"spark": "Spark (`kafkalite report`, exact percentiles)",
         "spark_read": "Spark, only reading the lines (no table)",
         "quantile_cont": "DuckDB, `quantile_cont` (the same percentiles)",
         "approx_quantile": "DuckDB, `approx_quantile`"}


def run(records: int = 10_000_000, logs_dir: str | None = None, repeat: int = 2, warmup: int = 1,
        driver_memory: str = "8g", write_md: str | None = None, progress: Any = print,
        spark: Any = None, log_format: str = "csv") -> str:
    """Run ``warmup`` untimed rounds (the JIT's) and ``repeat`` timed ones; return the markdown
    section. ``spark``: a session to use (and leave running) instead of starting one;
    ``log_format``: the request log's format (request.log.format) the logs are generated in."""
    logs_dir = logs_dir or os.path.join(tempfile.gettempdir(),
                                        f"kafkalite-bench-report-{records}-{log_format}")
    started = time.perf_counter()
    ensure_logs(logs_dir, records, log_format=log_format)
    size = sum(os.path.getsize(os.path.join(logs_dir, n)) for n in os.listdir(logs_dir)
               if n.startswith("requests-"))
    progress(f"logs: {records:,} records, {size / 1e9:.1f} GB in {logs_dir} "
             f"({time.perf_counter() - started:.0f} s)")
    t = time.perf_counter()
    own = spark is None
    if own:
        spark = report.session("local[*]", app="kafkalite-bench-report", driver_memory=driver_memory)
        spark.sparkContext.setLogLevel("ERROR")
    jvm_start = time.perf_counter() - t
    times: dict[str, list[float]] = {engine: [] for engine in ENGINES}
    by_api: dict[str, list[Any]] = {}
    same = True
    try:
        with tempfile.TemporaryDirectory() as out:
            for i in range(warmup + repeat):
                label = f"warm-up {i + 1}/{warmup}" if i < warmup else f"round {i - warmup + 1}/{repeat}"
                for engine in ENGINES:
                    t = time.perf_counter()
                    if engine == "spark":
                        by_api[engine] = report.run(spark, logs_dir, os.path.join(out, engine),
                                                    progress=lambda _: None)["by_api"]
                    elif engine == "spark_read":
                        report.flat(report.read_all(spark, logs_dir)).write.format("noop").mode(
                            "overwrite").save()
                    else:
                        by_api[engine] = duck.run(logs_dir, os.path.join(out, engine), engine,
                                                  log_format=log_format)["by_api"]
                    seconds = time.perf_counter() - t
                    progress(f"[{label}] {engine}: {seconds:.1f} s")
                    if i >= warmup:
                        times[engine].append(seconds)
                same = same and _same_answers(by_api["spark"], by_api["quantile_cont"])
    finally:
        if own:
            spark.stop()
    body = render(records, size, repeat, warmup, driver_memory, jvm_start, times, same, log_format)
    progress(body)
    if write_md:
        write_section(write_md, SECTION, body)
    return body


def render(records: int, size: int, repeat: int, warmup: int, driver_memory: str, jvm_start: float,
           times: dict[str, list[float]], same: bool, log_format: str = "csv") -> str:
    ref = statistics.median(times["quantile_cont"])
    lines = [
        f"## Report: Spark against DuckDB ({records:,} request records)", "",
        f"Command: `kafkalite bench report --records {records} --repeat {repeat} --warmup {warmup} "
        f"--driver-memory {driver_memory} --format {log_format} --write docs/benchmarks.md`", "",
        f"Machine: {machine()}. Files: {size / 1e9:.1f} GB of request-log "
        f"{'csv (request.log.format=csv)' if log_format == 'csv' else 'JSON'} lines in 16 files, "
        "generated in the broker's own line format (bench/report/logs.py). Both engines use every core; "
        f"Spark in local mode, its JVM started before the clock ({jvm_start:.1f} s); {warmup} untimed "
        "warm-up round(s) first, as the JIT compiles the job's code in its first round.", "",
        "| engine | wall time per round (s) | median (s) | / DuckDB quantile_cont |",
        "| --- | --- | ---: | ---: |",
    ]
    for engine, ts in times.items():
        med = statistics.median(ts)
        rounds = ", ".join(f"{t:.1f}" for t in ts)
        lines.append(f"| {NAMES[engine]} | {rounds} | {med:.1f} | {med / ref:.2f}x |")
    spark = statistics.median(times["spark"])
    verdict = "met" if spark <= 3 * ref else "NOT met"
    lines += ["", f"Goal \"report <= 3x DuckDB\": {spark / ref:.2f}x, {verdict} "
              f"({spark / statistics.median(times['approx_quantile']):.2f}x of DuckDB's approximate "
              "percentiles). by_api answers of Spark and DuckDB "
              + ("equal (counts, bytes, error rates, percentiles)." if same else "DIFFER: see the run."), ""]
    return "\n".join(lines)
