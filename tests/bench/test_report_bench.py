"""The report benchmark on a small run: generated logs in the broker's format, DuckDB's tables,
and Spark's and DuckDB's answers checked equal."""

from __future__ import annotations

import csv
import json
import os

import pytest

from kafkalite.jobs import report
from kafkalite.metrics.request_log import CSV_COLUMNS
from kafkalite_bench.report import duck, logs, run

pytestmark = pytest.mark.spark


def test_generated_logs_are_the_brokers_lines_and_reproducible(tmp_path):
    a = logs.write(str(tmp_path / "a"), 3000, files=3)
    b = logs.write(str(tmp_path / "b"), 3000, files=3)
    assert [open(p).read() for p in a] == [open(p).read() for p in b]
    lines = [json.loads(line) for p in a for line in open(p)]
    requests = [x for x in lines if x.get("type") is None]
    assert len(requests) == 3000
    assert len(lines) - len(requests) == 3000 // logs.CONTROLLER_EVERY
    assert {x["requestHeader"]["requestApiKeyName"] for x in requests} >= {"Metadata", "ApiVersions"}
    assert all(abs(x["requestQueueTimeMs"] + x["localTimeMs"] + x["responseQueueTimeMs"] + x["sendTimeMs"]
                   - x["totalTimeMs"]) < 1e-6 for x in requests)


def test_generated_csv_logs_hold_the_same_records(tmp_path):
    a = logs.write(str(tmp_path / "a"), 3000, files=3, log_format="csv")
    assert all(p.endswith(".csv") for p in a)
    rows = [row for p in a for row in csv.reader(open(p))]
    assert len(rows) == 3000 + 3000 // logs.CONTROLLER_EVERY
    assert {len(row) for row in rows} == {len(CSV_COLUMNS)}


@pytest.mark.parametrize("log_format", ["json", "csv"])
def test_spark_and_duckdb_give_the_same_tables(tmp_path, spark, log_format):
    logs.write(str(tmp_path / "logs"), 5000, files=2, log_format=log_format)
    ours = report.run(spark, str(tmp_path / "logs"), str(tmp_path / "spark"), progress=lambda _: None)
    theirs = duck.run(str(tmp_path / "logs"), str(tmp_path / "duck"), "quantile_cont", log_format=log_format)
    assert run._same_answers(ours["by_api"], theirs["by_api"])
    for name in ("by_client", "by_processor", "controller_queue", "per_minute"):
        assert len(ours[name]) == len(theirs[name]), name
        assert [r[0] for r in ours[name]] == [r[0] for r in theirs[name]], name
    assert [r["requests"] for r in ours["controller_queue"]] == [r[1] for r in theirs["controller_queue"]]
    assert sorted(os.listdir(tmp_path / "duck")) == sorted(f"{n}.parquet" for n in ours)


def test_a_small_round_renders_the_section(tmp_path, spark):
    out = tmp_path / "benchmarks.md"
    body = run.run(4000, str(tmp_path / "logs"), repeat=1, warmup=0, write_md=str(out),
                   progress=lambda _: None, spark=spark)
    assert "| Spark (`kafkalite report`, exact percentiles) |" in body
    assert "answers of Spark and DuckDB equal" in body
    assert "<!-- bench:report:begin -->" in out.read_text()
    # Generated once: a second run with the same arguments reuses the files.
    mtimes = {p: os.path.getmtime(tmp_path / "logs" / p) for p in os.listdir(tmp_path / "logs")}
    run.ensure_logs(str(tmp_path / "logs"), 4000, log_format="csv")
    assert mtimes == {p: os.path.getmtime(tmp_path / "logs" / p) for p in os.listdir(tmp_path / "logs")}
