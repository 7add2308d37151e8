"""The request-log report on logs with known answers (written by the broker's own line format),
and on the logs of a real broker."""

from __future__ import annotations

import datetime
import os
import re
import sys
import types

import pytest
from confluent_kafka import Producer

from kafkalite.jobs import report
from kafkalite.metrics.request_log import (
    TopicTraffic,
    format_controller_csv_line,
    format_controller_line,
    format_csv_line,
    format_line,
)
from kafkalite.metrics.request_metrics import request_times_us
from kafkalite.protocol.messages import api_versions
from kafkalite.server.topic_metrics import NAMES
from tests.support.brokers import running_broker
from tests.support.raw_requests import create_topics_of, read_all
from tests.support.wait import wait_for
from tests.support.wire_client import Client

pytestmark = pytest.mark.spark


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


def test_more_groups_than_the_hash_aggregate_holds_give_the_same_tables(known_logs, known, tmp_path, spark):
    # The session lets a task's hash aggregate hold more groups than Spark's default before it
    # sorts its input instead (report.HASH_AGGREGATE_GROUPS): the answers are the same either way.
    assert spark.conf.get(report._FALLBACK) == str(report.HASH_AGGREGATE_GROUPS)
    spark.conf.set(report._FALLBACK, "1")  # every task past one group sorts
    try:
        sorting = report.run(spark, str(known_logs), str(tmp_path), progress=lambda _: None)
    finally:
        spark.conf.set(report._FALLBACK, str(report.HASH_AGGREGATE_GROUPS))
    for name in ("by_api", "per_minute", "by_client", "controller_queue"):
        assert [r.asDict() for r in sorting[name]] == [r.asDict() for r in known[0][name]], name


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
    assert page.count('src="data:image/png;base64,') == 3
    assert page.count("<small>(by_api)</small></h2>") == 2  # client requests, then internal ones
    assert "110 requests" in messages and any("ApiVersions" in m and "100" in m for m in messages)


@pytest.mark.integration
@pytest.mark.parametrize("log_format", ["json", "csv"])
def test_a_brokers_own_logs_are_counted_exactly(tmp_path, spark, log_format):
    logs = tmp_path / "requests"
    with running_broker(tmp_path / "data", request_log_dir=str(logs),
                        request_log_format=log_format) as broker:
        with Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as c:
            for _ in range(25):
                c.call(18, 3, api_versions.REQUEST(client_software_name="probe", client_software_version="1"))
    # The broker has shut down: its request log is flushed and closed.
    collected = report.run(spark, str(logs), str(tmp_path / "out"), progress=lambda _: None)
    assert {r["client_software"]: r["requests"] for r in collected["by_client"]}["probe"] == 25
    assert [r["broker_id"] for r in collected["controller_queue"]] == [1]  # it sent itself requests
    assert {p.suffix for p in logs.iterdir()} == {".jsonl" if log_format == "json" else ".csv"}


@pytest.mark.integration
def test_a_brokers_produce_and_fetch_make_the_per_topic_tables_its_counters_say(tmp_path, spark):
    logs = tmp_path / "requests"
    with running_broker(tmp_path / "data", request_log_dir=str(logs)) as broker:
        rm = broker.replica_manager
        with Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as c:
            create_topics_of(c, {"clicks": 2})
            assert wait_for(lambda: len(rm.partitions) == 2, timeout=10)
            producer = Producer({"bootstrap.servers": f"127.0.0.1:{broker.bound_port('PLAINTEXT')}",
                                 "linger.ms": 5})
            for i in range(120):
                producer.produce("clicks", value=b"c" * 40, partition=i % 2)
            assert producer.flush(30) == 0
            for p in (0, 1):
                read_all(c, "clicks", p, rm.partitions[("clicks", p)].log.log_end_offset)
        counts = dict(zip(NAMES, broker.topic_stats.snapshot()["clicks"], strict=True))
    # The broker has shut down: its request log is flushed and closed.
    collected = report.run(spark, str(logs), str(tmp_path / "out"), progress=lambda _: None)
    (produced,) = collected["produce_by_topic"]
    (fetched,) = collected["fetch_by_topic"]
    assert (produced["topic"], produced["messages_in"], produced["error_rate"]) == ("clicks", 120, 0.0)
    assert produced["bytes_in"] == counts["BytesInPerSec"] == sum(p.log.size for p in rm.partitions.values())
    assert produced["partitions"] == counts["TotalProduceRequestsPerSec"]
    assert (fetched["bytes_out"], fetched["partitions"]) == (counts["BytesOutPerSec"],
                                                              counts["TotalFetchRequestsPerSec"])


# --- several brokers' logs, errors inside responses, client and broker-internal traffic --------

def test_logs_below_the_directory_are_read_recursively(tmp_path, spark):
    logs = tmp_path / "cluster"
    for i, sub in enumerate(("broker-1/requests", "broker-2/requests", ".kafkalite/broker-3/requests")):
        (logs / sub).mkdir(parents=True)
        (logs / sub / f"requests-1-{i}.jsonl").write_text("".join(_line(18, 3, 1) for _ in range(i + 1)))
    (logs / "broker-1.log").write_text("not a request log\n")
    assert len(report.find_logs(str(logs))) == 3
    # Spark's own listing would skip .kafkalite: the job lists the files itself.
    assert report.read_all(spark, str(logs)).count() == 1 + 2 + 3
    one = report.find_logs(str(logs / "broker-2/requests"))
    assert report.read_all(spark, one[0]).count() == 2  # one file
    (tmp_path / "empty").mkdir()
    for where in (tmp_path / "empty", tmp_path / "missing"):
        with pytest.raises(report.NoLogs, match=r"request\.log\.dir"):
            report.read_all(spark, str(where))


@pytest.fixture(scope="module")
def cluster(cluster_logs, tmp_path_factory, spark):
    out = tmp_path_factory.mktemp("cluster-out")
    messages: list[str] = []
    collected = report.run(spark, str(cluster_logs), str(out), progress=messages.append)
    return collected, out, messages


def test_client_and_broker_internal_traffic_are_apart(cluster):
    from .conftest import CLIENT, INTERNAL, SENT

    collected, out, messages = cluster
    traffic = {(r["traffic"], r["api"], r["listener"]): r["requests"] for r in collected["by_api"]}
    assert traffic == {
        ("client", "ApiVersions", "PLAINTEXT"): 40, ("client", "Metadata", "PLAINTEXT"): 30,
        ("client", "CreateTopics", "PLAINTEXT"): 3, ("client", "Produce", "PLAINTEXT"): 6,
        ("client", "Fetch", "PLAINTEXT"): 3, ("internal", "Fetch", "INTERNAL"): 2,  # a follower's
        # by api, whatever the listener...
        ("internal", "BrokerHeartbeat", "INTERNAL"): 28, ("internal", "BrokerRegistration", "INTERNAL"): 1,
        ("internal", "UpdateMetadata", "INTERNAL"): 4, ("internal", "LeaderAndIsr", "INTERNAL"): 1,
        # ... and any api on the inter-broker listener
        ("internal", "ApiVersions", "INTERNAL"): 1,
    }
    assert [r["traffic"] for r in collected["by_api"]] == sorted(r["traffic"] for r in collected["by_api"])
    assert {(r["traffic"], r["api"]) for r in collected["per_minute"]} == {(t, a) for t, a, _ in traffic}
    text = next(m for m in messages if m.startswith("client requests"))
    assert (f"client requests: {CLIENT}\n" in text and f"broker-internal requests: {INTERNAL}\n" in text
            and text.endswith(f"control requests sent by controllers: {SENT}"))
    assert text.index("BrokerHeartbeat") > text.index("broker-internal requests") > text.index("CreateTopics")
    page = (out / "report.html").read_text()
    client, internal = page.split("<h2>Broker-internal requests")
    assert "BrokerHeartbeat" in internal.split("<h2>")[0] and "BrokerHeartbeat" not in client
    assert f"{CLIENT} client requests" in page and f"{INTERNAL} broker-internal requests" in page


def test_other_internal_listeners_are_named_by_the_caller(cluster_logs, tmp_path, spark):
    from .conftest import CLIENT

    lines = report.flat(report.read_all(spark, str(cluster_logs)), internal_listeners=("PLAINTEXT",))
    by = {r["traffic"]: r["count"] for r in report.requests(lines).groupBy("traffic").count().collect()}
    # The internal apis stay internal; the ApiVersions and the follower's Fetches on INTERNAL are
    # now a client's.
    assert by == {"internal": CLIENT + 34, "client": 3}


def test_errors_inside_responses_count(cluster, spark):
    collected, out, _ = cluster
    row = {r["api"]: r for r in collected["by_api"] if r["traffic"] == "client"}
    # CreateTopics: one response of three carries two TOPIC_ALREADY_EXISTS, with errorCode 0
    assert (row["CreateTopics"]["error_rate"], row["CreateTopics"]["errors"]) == (pytest.approx(1 / 3), 2)
    # Metadata: an older line without errorCounts, its errorCode nonzero: one error
    assert (row["Metadata"]["error_rate"], row["Metadata"]["errors"]) == (pytest.approx(1 / 30), 1)
    assert (row["ApiVersions"]["error_rate"], row["ApiVersions"]["errors"]) == (0.0, 0)
    # Produce: two of six responses say a partition's leader moved
    assert (row["Produce"]["error_rate"], row["Produce"]["errors"]) == (pytest.approx(1 / 3), 2)
    assert sum(r["error_rate"] * r["requests"] for r in collected["per_minute"]) == pytest.approx(4)
    assert "errors" in spark.read.parquet(str(out / "by_api")).columns
    field = report.schema()["errorCounts"].dataType
    assert (field.keyType.typeName(), field.valueType.typeName()) == ("string", "long")


def test_per_topic_tables_from_the_produce_and_fetch_lines(cluster, spark):
    from .conftest import AUDIT, ORDERS

    collected, out, _ = cluster
    columns = ("traffic", "topic", "requests", "error_rate", "errors", "partitions")
    produced = [tuple(r[c] for c in (*columns, "messages_in", "bytes_in"))
                for r in collected["produce_by_topic"]]
    # Busiest first; ORDERS: four requests of two partitions (20 records, 2400 bytes each), two of
    # one (5, 600); AUDIT: those two, its partition's leader moved.
    assert produced == [("client", ORDERS, 6, 0.0, 0, 10, 90, 10800), ("client", AUDIT, 2, 1.0, 2, 2, 0, 0)]
    fetched = [tuple(r[c] for c in (*columns, "bytes_out")) for r in collected["fetch_by_topic"]]
    # The follower's fetches are broker-internal (replication), apart from the consumers'.
    assert fetched == [("client", ORDERS, 3, 0.0, 0, 6, 9000), ("internal", ORDERS, 2, 0.0, 0, 2, 2400)]
    for name in report.TOPIC_TABLES:
        assert spark.read.parquet(str(out / name)).count() == len(collected[name])
    page = (out / "report.html").read_text()
    produce, fetch = page.index("<h2>Produce per topic"), page.index("<h2>Fetch per topic")
    assert page.index("<h2>Broker-internal requests") < produce < fetch
    assert ORDERS in page[produce:fetch] and AUDIT in page[produce:fetch]


def test_logs_without_topics_have_no_per_topic_tables(known):
    collected, out, _ = known
    assert not set(report.TOPIC_TABLES) & set(collected)
    assert not [name for name in report.TOPIC_TABLES if (out / name).exists()]
    assert "per topic" not in (out / "report.html").read_text()


def test_the_per_minute_axis_spans_the_data():
    import datetime

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    minute = datetime.datetime(2026, 5, 28, 20, 27)
    rows = [{"minute": minute, "traffic": t, "api": a, "requests": n}
            for t, a, n in (("client", "Metadata", 30), ("internal", "BrokerHeartbeat", 28))]
    fig, ax = plt.subplots()
    try:
        alt = report._minutes(ax, rows)
        fig.canvas.draw()
        lo, hi = ax.get_xlim()
        labels = [t.get_text() for t in ax.get_xticklabels()]
    finally:
        plt.close(fig)
    assert (hi - lo) * 24 * 60 == pytest.approx(3)  # the minute and one either side
    assert labels == ["20:26", "20:27", "20:28", "20:29"]
    assert alt.endswith("from 2026-05-28 20:26 to 2026-05-28 20:29")


# --- the command itself ----------------------------------------------------------------------

def test_the_command_prints_its_summary_and_nothing_else(cli_report):
    from .conftest import CLIENT, INTERNAL, MINUTE

    done, out = cli_report
    assert done.returncode == 0, done.stderr[-3000:]
    # No Spark log lines, no Java stack trace, no progress bar, no JVM warnings: nothing at all.
    assert done.stderr == ""
    assert f"client requests: {CLIENT}\n" in done.stdout
    assert f"broker-internal requests: {INTERNAL}\n" in done.stdout
    assert "[Stage" not in done.stdout and "WARN" not in done.stdout
    # The per-minute plot's time axis: the run's minute and one either side, not years.
    page = (out / "report.html").read_text()
    alt = re.search(r'alt="requests per minute; time axis from ([0-9: -]+) to ([0-9: -]+)"', page)
    assert alt, page[:2000]
    lo, hi = (datetime.datetime.strptime(t, "%Y-%m-%d %H:%M") for t in alt.groups())
    assert hi - lo == datetime.timedelta(minutes=3)
    assert lo == datetime.datetime.fromtimestamp(MINUTE) - datetime.timedelta(minutes=1)


def test_no_logs_is_one_line_that_says_what_to_do(tmp_path):
    from .conftest import run_cli

    (tmp_path / "empty").mkdir()
    done = run_cli("--logs", str(tmp_path / "empty"), "--out", str(tmp_path / "out"), timeout=60)
    assert done.returncode != 0 and done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert "no request logs (*.jsonl, *.csv)" in done.stderr and "--override request.log.dir=" in done.stderr
    assert not (tmp_path / "out").exists()


def test_without_pyspark_one_line_says_what_to_install(cluster_logs, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from kafkalite import cli

    monkeypatch.setitem(sys.modules, "pyspark", None)  # `import pyspark` fails, as when absent
    result = CliRunner().invoke(cli.main, ["report", "--logs", str(cluster_logs), "--out", str(tmp_path)])
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)  # not an ImportError
    assert result.stderr == ("kafkalite report: the report needs pyspark (and Java 17): "
                             "pip install 'kafkalite[spark]'\n")
    missing = CliRunner().invoke(cli.main, ["report", "--logs", str(tmp_path / "x"), "--out", str(tmp_path)])
    assert missing.exit_code == 2 and missing.stderr.startswith("kafkalite report: no such file or directory")


def _both_formats(root) -> None:
    """The same records, some of every kind a line can hold, in a JSON and a csv log."""
    ok, not_leader = types.SimpleNamespace(error_code=0), types.SimpleNamespace(error_code=6)
    cases = []
    for i in range(60):
        header = types.SimpleNamespace(request_api_key=(0, 1, 3, 18, 19)[i % 5], request_api_version=i % 4,
                                       correlation_id=i,
                                       client_id=('c,1 "quoted" 100%', "plain", None)[i % 3])
        start = 10**12 + i * 7_919_000
        software = i % 4 > 0
        request = types.SimpleNamespace(
            header=header, start_ns=start, dequeue_ns=start + 1_234,
            api_local_complete_ns=start + 1_234 + i * 91_000, response_enqueue_ns=start + 2_000 + i * 97_000,
            response_dequeue_ns=start + 9_000 + i * 99_000,
            connection_id=f"127.0.0.1:9092-10.0.0.{i % 7}:5{i:04d}-{i}", security_protocol="PLAINTEXT",
            listener=("PLAINTEXT", "INTERNAL")[i % 2 == 0 and i % 3 == 0], processor=i % 3, size=40 + i,
            client_software_name="librdkafka" if software else None,
            client_software_version="2.3.0" if software else None)
        traffic = None
        if header.request_api_key == 0:
            traffic = [TopicTraffic("orders", [ok, not_leader], 7 * i, 100 * i),
                       TopicTraffic("a%b", [ok], 1, 9)]
        elif header.request_api_key == 1:
            traffic = [TopicTraffic("orders", [ok] * (i % 3), -1, 50 * i)]
        counts = (None, {}, {0: 2, 36: 1}, {6: 1})[i % 4]
        times = request_times_us(request, start + 9_000 + i * 100_003)
        args = (request, times, 300 + i, (0, 0, 3)[i % 3], round((T0 + i) * 1000), None, counts, traffic)
        cases.append((args, (1 + i % 3, 6, 8, i * 1_000_317, T0 + i)))
    for suffix, line, control in (("jsonl", format_line, format_controller_line),
                                  ("csv", format_csv_line, format_controller_csv_line)):
        (root / suffix).mkdir()
        text = "".join(line(*args) + (control(*sent) if i % 10 == 0 else "")
                       for i, (args, sent) in enumerate(cases))
        (root / suffix / f"requests-1-1.{suffix}").write_text(text)


def test_the_csv_format_reads_as_the_json_one_field_for_field_and_answers_alike(tmp_path, spark):
    """request.log.format=csv: every field of every line the report reads equals the JSON line's
    of the same record, and so does every table; both formats in one directory are read together."""
    _both_formats(tmp_path)

    def lines(where):
        rows = [r.asDict(recursive=True) for r in report.read_all(spark, str(where)).collect()]
        return sorted(rows, key=lambda r: (r["type"] or "", r["timestamp"],
                                           r["requestHeader"]["correlationId"] or 0))

    assert lines(tmp_path / "csv") == lines(tmp_path / "jsonl")
    assert len(lines(tmp_path)) == 2 * 66  # 60 requests and 6 control requests a format
    answers = {fmt: report.run(spark, str(tmp_path / fmt), str(tmp_path / f"out-{fmt}"),
                               progress=lambda _: None) for fmt in ("jsonl", "csv")}
    assert answers["csv"] == answers["jsonl"]
    assert answers["csv"]["produce_by_topic"] and answers["csv"]["controller_queue"]
