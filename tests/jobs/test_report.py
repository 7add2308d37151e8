"""The request-log report on logs with known answers (written by the broker's own line format),
and on the logs of a real broker."""

from __future__ import annotations

import os
import types

import pytest

from kafkalite.jobs import report
from kafkalite.metrics.request_log import format_controller_line, format_line
from kafkalite.metrics.request_metrics import request_times_us
from kafkalite.protocol.messages import api_versions

from ..kafka_client import Client
from ..server.conftest import running_broker

MS = 1_000_000
T0 = 1_780_000_000.0  # wall clock seconds of the first request


def _line(api_key: int, version: int, total_ms: int, *, listener="PLAINTEXT", processor=0, error=0,
          client="librdkafka", size=50, response=200, at: float = T0) -> str:
    header = types.SimpleNamespace(request_api_key=api_key, request_api_version=version, correlation_id=1,
                                   client_id="c")
    start = 10**12
    request = types.SimpleNamespace(
        header=header, start_ns=start, dequeue_ns=start, api_local_complete_ns=start + total_ms * MS,
        response_enqueue_ns=start + total_ms * MS, response_dequeue_ns=start + total_ms * MS,
        connection_id="a-b-0-1", security_protocol="PLAINTEXT", listener=listener,
        client_software_name=client, client_software_version="2.3", processor=processor, size=size)
    return format_line(request, request_times_us(request, start + total_ms * MS), response, error,
                       round(at * 1000))


@pytest.fixture(scope="module")
def known_logs(tmp_path_factory):
    logs = tmp_path_factory.mktemp("logs")
    lines = [_line(18, 3, ms, processor=ms % 2, at=T0 + (60 if ms > 50 else 0)) for ms in range(1, 101)]
    lines += [_line(3, 12, 7, error=3 if i < 5 else 0, client="kafka-python", listener="INTERNAL",
                    processor=2, size=80, response=4000) for i in range(10)]
    lines += [format_controller_line(1, 6, 8, ms * MS, T0) for ms in (1, 2, 3, 4)]
    lines += [format_controller_line(2, 4, 7, ms * MS, T0) for ms in (10, 20)]
    half = len(lines) // 2
    (logs / "requests-1-1.jsonl").write_text("".join(lines[:half]))
    (logs / "requests-1-2.jsonl").write_text("".join(lines[half:]))
    return logs


@pytest.fixture(scope="module")
def known(known_logs, tmp_path_factory, spark):
    logs = known_logs
    out = tmp_path_factory.mktemp("out")
    messages: list[str] = []
    collected = report.run(spark, str(logs), str(out), progress=messages.append)
    return collected, out, messages


def _row(rows, **match):
    (row,) = [r for r in rows if all(r[k] == v for k, v in match.items())]
    return row


def test_counts_errors_and_bytes_are_exact(known):
    collected, _, _ = known
    av = _row(collected["by_api"], api="ApiVersions", version=3, listener="PLAINTEXT")
    md = _row(collected["by_api"], api="Metadata", version=12, listener="INTERNAL")
    fields = ("requests", "error_rate", "request_bytes", "response_bytes")
    assert tuple(av[f] for f in fields) == (100, 0.0, 5000, 20000)
    assert tuple(md[f] for f in fields) == (10, 0.5, 800, 40000)
    assert av["totalTimeMs_max"] == 100.0 and md["totalTimeMs_max"] == 7.0


def test_percentiles_are_exact_by_default(known):
    collected, _, _ = known
    av = _row(collected["by_api"], api="ApiVersions")
    # 1..100 ms, interpolated between the nearest ranks (rank (n - 1) * p, counted from 0).
    assert av["totalTimeMs_p50"] == pytest.approx(50.5)
    assert av["totalTimeMs_p95"] == pytest.approx(95.05)
    assert av["totalTimeMs_p99"] == pytest.approx(99.01)
    assert av["localTimeMs_p99"] == av["totalTimeMs_p99"]  # all of it was local time
    assert av["requestQueueTimeMs_max"] == 0.0


def test_approximate_percentiles_are_within_one_rank(known_logs, tmp_path, spark):
    collected = report.run(spark, str(known_logs), str(tmp_path), progress=lambda _: None,
                           percentiles="approx")
    av = _row(collected["by_api"], api="ApiVersions")
    for name, exact in (("p50", 50.5), ("p95", 95.05), ("p99", 99.01)):
        assert abs(av[f"totalTimeMs_{name}"] - exact) <= 1, name
    assert av["requests"] == 100
    with pytest.raises(ValueError, match="percentiles"):
        report.tables(report.requests(report.flat(report.read_all(spark, str(known_logs)))), "median")


def test_series_clients_processors_and_slowest(known):
    collected, _, _ = known
    minutes = [(r["api"], r["requests"]) for r in collected["per_minute"]]
    assert sorted(minutes) == sorted([("ApiVersions", 50), ("ApiVersions", 50), ("Metadata", 10)])
    clients = {r["client_software"]: r["requests"] for r in collected["by_client"]}
    assert clients == {"librdkafka": 100, "kafka-python": 10}
    shares = {(r["listener"], r["processor"]): (r["requests"], r["share"]) for r in collected["by_processor"]}
    assert shares == {("PLAINTEXT", 0): (50, 0.5), ("PLAINTEXT", 1): (50, 0.5), ("INTERNAL", 2): (10, 1.0)}
    slowest = [r["totalTimeMs"] for r in collected["slowest"]]
    assert slowest[:3] == [100.0, 99.0, 98.0] and len(slowest) == report.SLOWEST


def test_controller_queue_times_per_broker(known):
    collected, _, _ = known
    rows = {r["broker_id"]: r for r in collected["controller_queue"]}
    assert (rows[1]["requests"], rows[1]["queueTimeMs_max"]) == (4, 4.0)
    assert (rows[2]["requests"], rows[2]["queueTimeMs_max"]) == (2, 20.0)
    assert abs(rows[1]["queueTimeMs_p50"] - 2.0) <= 1.0


def test_parquet_tables_html_report_and_summary(known, spark):
    collected, out, messages = known
    for name in collected:
        assert spark.read.parquet(os.path.join(str(out), name)).count() == len(collected[name])
    page = (out / "report.html").read_text()
    assert page.count('src="data:image/png;base64,') == 3 and "<h2>by_api</h2>" in page
    assert "110 requests" in messages and any("ApiVersions" in m and "100" in m for m in messages)


def test_a_brokers_own_logs_are_counted_exactly(tmp_path, spark):
    logs = tmp_path / "requests"
    with running_broker(tmp_path / "data", request_log_dir=str(logs)) as broker:
        with Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as c:
            for _ in range(25):
                c.call(18, 3, api_versions.REQUEST(client_software_name="probe", client_software_version="1"))
    # The broker has shut down: its request log is flushed and closed.
    collected = report.run(spark, str(logs), str(tmp_path / "out"), progress=lambda _: None)
    assert {r["client_software"]: r["requests"] for r in collected["by_client"]}["probe"] == 25
    assert [r["broker_id"] for r in collected["controller_queue"]] == [1]  # it sent itself requests
