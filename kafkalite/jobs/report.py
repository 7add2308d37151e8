"""The request-log report: a PySpark job over the brokers' request logs (docs/metrics.md).

``kafkalite report --logs DIR --out DIR [--master URL]``, or the same module through
``spark-submit kafkalite/jobs/report.py --logs DIR --out DIR``. It reads every ``*.jsonl`` and
``*.csv`` (request.log.format json and csv) in DIR and the directories below it (one per broker,
say) with an explicit schema, computes the tables
below, writes each as Parquet under OUT, writes OUT/report.html with its plots, and prints a
summary. ``local[*]`` unless a master is given; the same code runs unchanged on a Spark cluster.

Every request is client or broker-internal traffic (``traffic``): internal are the apis brokers
and controllers send each other (:data:`INTERNAL_API_KEYS`: heartbeats, registration, control
requests) and every request on an internal listener (the inter-broker or control plane listener:
``--internal-listeners``, by default :data:`INTERNAL_LISTENERS`). A request failed when its
``errorCode`` is nonzero or its ``errorCounts`` (the error codes inside the response, per topic
and partition) is not empty; ``errors`` counts the error codes.

Tables: ``by_api`` (per traffic, api, version and listener: count, error rate, errors, bytes,
p50/p95/p99/max of each timing), ``per_minute`` (per minute, traffic and api: count and
total-time percentiles), ``slowest``
(the slowest requests), ``by_client`` (per client software and version), ``by_processor``
(requests per listener and Processor, and each one's share of its listener), ``controller_queue``
(per broker: the control requests this broker's controller sent it and their time in its queue),
and, when the logs have Produce or Fetch lines with their topics, ``produce_by_topic`` and
``fetch_by_topic`` (per traffic and topic: requests, error rate, failed partitions, partitions,
and messages and bytes in, or bytes out).
"""

from __future__ import annotations

import argparse
import atexit
import base64
import html
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

from kafkalite.metrics.request_log import CSV_COLUMNS

TIMINGS = ("totalTimeMs", "requestQueueTimeMs", "localTimeMs", "responseQueueTimeMs", "sendTimeMs")
PERCENTILES = (0.5, 0.95, 0.99)
ACCURACY = 10000  # percentile_approx's accuracy: relative error about 1/ACCURACY of the rank
# "exact": Spark's percentile (linear interpolation between the two nearest ranks, as DuckDB's
# quantile_cont): keeps a count per distinct value and group, which the request log bounds by
# writing times in whole microseconds; and faster than the sketch here. "approx": percentile_approx,
# fixed memory per group whatever the values.
PERCENTILE_MODES = ("exact", "approx")
SLOWEST = 20
# Spark's exact percentile keeps a hash map of values per group in an object hash aggregate, which
# goes over to sorting its input once a task holds more than 128 groups (Spark's default). An
# hour's per_minute table has some 840 (minute, traffic, api) groups, over 200 per reduce task on
# 2 cores: sorting them cost about a fifth of the percentile tables' time (4M records, three
# interleaved rounds: 11.6 and 13.3 s against 8.9 and 10.5 s). Memory per task stays bounded, as
# Spark's own bound does: a map per group, at most this many groups.
_FALLBACK = "spark.sql.objectHashAggregate.sortBased.fallbackThreshold"
HASH_AGGREGATE_GROUPS = 4096

# Apis that brokers and controllers send each other, never clients: the control requests
# (LeaderAndIsr, StopReplica, UpdateMetadata, ControlledShutdown), the KRaft quorum's (Vote,
# BeginQuorumEpoch, EndQuorumEpoch, FetchSnapshot), AlterPartition, BrokerRegistration,
# BrokerHeartbeat and AllocateProducerIds. By key: the log names apis kafkalite does not know by
# their number.
INTERNAL_API_KEYS = (4, 5, 6, 7, 52, 53, 54, 56, 59, 62, 63, 67)
# Listeners whose every request counts as broker-internal: the request log does not say which
# listener is the inter-broker or control plane one, so the report is told. INTERNAL is the
# inter-broker listener of ``kafkalite cluster``, CONTROLLER the usual name of Kafka's controller
# and control plane listener.
INTERNAL_LISTENERS = ("INTERNAL", "CONTROLLER")
TRAFFIC = ("client", "internal")
# Written only when the logs have Produce or Fetch lines with topics (brokers before the request
# log had them wrote none): logs without them get no empty tables.
TOPIC_TABLES = ("produce_by_topic", "fetch_by_topic")
PYSPARK_MISSING = "the report needs pyspark (and Java 17): pip install 'kafkalite[spark]'"
JAVA_MISSING = ("the report needs Java 17: install it (Debian: apt-get install openjdk-17-jre-headless) "
                "or set JAVA_HOME")


class NoLogs(ValueError):
    """No request log under the directory given."""

    def __init__(self, logs: str) -> None:
        what = "no such file or directory" if not os.path.exists(logs) else "no request logs (*.jsonl, *.csv)"
        super().__init__(
            f"{what}: {logs}; start brokers with --override request.log.dir=DIR (DIR at or below "
            f"{logs}, one per broker), send them requests, then run the report")


def schema() -> Any:
    """The JSON lines' schema (request.log.format=json)."""
    from pyspark.sql import types as T

    header = T.StructType([
        T.StructField("requestApiKeyName", T.StringType()),
        T.StructField("requestApiKey", T.IntegerType()),
        T.StructField("requestApiVersion", T.IntegerType()),
        T.StructField("correlationId", T.IntegerType()),
        T.StructField("clientId", T.StringType()),
    ])
    client = T.StructType([T.StructField("softwareName", T.StringType()),
                           T.StructField("softwareVersion", T.StringType())])
    codes = T.MapType(T.StringType(), T.LongType())
    # Produce and Fetch: what the request did to each topic (records: Produce only)
    topic = T.StructType([
        T.StructField("topic", T.StringType()),
        T.StructField("partitions", T.IntegerType()),
        T.StructField("records", T.LongType()),
        T.StructField("recordBytes", T.LongType()),
        T.StructField("errorCounts", codes),
    ])
    return T.StructType([
        T.StructField("type", T.StringType()),  # null for a request, "controller" for a sent one
        T.StructField("timestamp", T.LongType()),
        T.StructField("requestHeader", header),
        T.StructField("connection", T.StringType()),
        *(T.StructField(t, T.DoubleType()) for t in TIMINGS),
        T.StructField("remoteTimeMs", T.DoubleType()),
        T.StructField("throttleTimeMs", T.LongType()),
        T.StructField("securityProtocol", T.StringType()),
        T.StructField("principal", T.StringType()),
        T.StructField("listener", T.StringType()),
        T.StructField("clientInformation", client),
        T.StructField("processor", T.IntegerType()),
        T.StructField("requestBytes", T.LongType()),
        T.StructField("responseBytes", T.LongType()),
        T.StructField("errorCode", T.IntegerType()),
        # error code (a string: JSON keys are) -> how many times the response carries it, nonzero
        # codes only; absent from older logs
        T.StructField("errorCounts", codes),
        T.StructField("topics", T.ArrayType(topic)),
        T.StructField("partitions", T.IntegerType()),
        T.StructField("records", T.LongType()),
        T.StructField("recordBytes", T.LongType()),
        T.StructField("brokerId", T.IntegerType()),
        T.StructField("queueTimeMs", T.DoubleType()),
    ])


def csv_schema() -> Any:
    """The csv lines' schema (request.log.format=csv): :data:`CSV_COLUMNS`, integers but for the
    strings, ``errorCounts`` and ``topics`` (parsed by :func:`_from_csv`)."""
    from pyspark.sql import types as T

    strings = {"type", "requestApiKeyName", "clientId", "connection", "securityProtocol", "principal",
               "listener", "softwareName", "softwareVersion", "errorCounts", "topics"}
    longs = {"timestamp", "requestBytes", "responseBytes", "records", "recordBytes", "queueTimeNs"}
    return T.StructType([
        T.StructField(c, T.StringType() if c in strings else T.LongType() if c in longs or c.endswith("Us")
                      else T.IntegerType()) for c in CSV_COLUMNS])


def _from_csv(raw: Any) -> Any:
    """csv lines in the JSON lines' shape (:func:`schema`: what :func:`flat` reads), equal value
    for value: times in ms are the microseconds / 1000 (as the JSON line's ``90e-3``), the queue
    time the nanoseconds / 1e6, ``errorCounts`` a map, ``topics`` parsed from its JSON array."""
    from pyspark.sql import functions as F

    json_schema = {f.name: f.dataType for f in schema().fields}
    ms = {t: F.col(t[:-2] + "Us") / 1000 for t in (*TIMINGS, "remoteTimeMs")}
    request = F.col("type").isNull()  # else a controller line, which has neither of the two below
    codes = json_schema["errorCounts"]
    return raw.select(
        "type", "timestamp",
        F.struct(*(F.col(c) for c in ("requestApiKeyName", "requestApiKey", "requestApiVersion",
                                      "correlationId", "clientId"))).alias("requestHeader"),
        "connection", *(v.alias(k) for k, v in ms.items()), "throttleTimeMs", "securityProtocol",
        "principal", "listener",
        F.when(request, F.struct(*(F.col(c) for c in ("softwareName", "softwareVersion")))).alias(
            "clientInformation"),
        "processor", "requestBytes", "responseBytes", "errorCode",
        F.when(request, F.coalesce(F.expr("str_to_map(errorCounts, ';', ':')").cast(codes),
                                   F.create_map().cast(codes))).alias("errorCounts"),
        F.from_json("topics", json_schema["topics"]).alias("topics"),
        "partitions", "records", "recordBytes", "brokerId", (F.col("queueTimeNs") / 1e6).alias("queueTimeMs"),
    )


LOG_SUFFIXES = (".jsonl", ".csv")  # request.log.format json and csv


def find_logs(logs: str) -> list[str]:
    """The request log files at ``logs``: the file itself, or every ``*.jsonl`` and ``*.csv`` in
    the directory and the directories below it (hidden ones too, which Spark's own listing skips)."""
    if os.path.isfile(logs):
        return [logs]
    found = []
    for root, dirs, files in os.walk(logs):
        dirs.sort()
        found += [os.path.join(root, f) for f in sorted(files) if f.endswith(LOG_SUFFIXES)]
    return found


def _csv_reader(spark: Any) -> Any:
    # Quotes doubled inside quoted fields (RFC 4180), as the broker writes them.
    return spark.read.schema(csv_schema()).option("escape", '"').option("mode", "PERMISSIVE")


def read_all(spark: Any, logs: str) -> Any:
    """The lines of every request log at or below ``logs`` (:func:`find_logs`; a URL such as
    ``hdfs://...`` is listed by Spark, recursively), in the JSON lines' shape whatever their
    format (both may be there: brokers with either setting). :class:`NoLogs` if there is none."""
    if "://" in logs:
        def listed(reader: Any, suffix: str) -> Any:
            return reader.option("recursiveFileLookup", "true").option("pathGlobFilter", f"*{suffix}")
        jsons = listed(spark.read.schema(schema()), ".jsonl").json(logs)
        csvs = _from_csv(listed(_csv_reader(spark), ".csv").csv(logs))
        return jsons.unionByName(csvs)
    files = find_logs(logs)
    if not files:
        raise NoLogs(logs)
    jsonl = [f for f in files if not f.endswith(".csv")]
    csv = [f for f in files if f.endswith(".csv")]
    parts = ([spark.read.schema(schema()).json(jsonl)] if jsonl else []) + (
        [_from_csv(_csv_reader(spark).csv(csv))] if csv else [])
    return parts[0] if len(parts) == 1 else parts[0].unionByName(parts[1])


def controller_queue(lines: Any, percentiles: str = "exact") -> Any:
    """Per broker: control requests the controller sent it and how long they waited in its queue
    (from :func:`flat` lines)."""
    from pyspark.sql import functions as F

    return _spread(lines.where(F.col("type") == "controller").groupBy("broker_id").agg(
        F.count("*").alias("requests"), *_pcts("queueTimeMs", percentiles))).orderBy("broker_id")


def flat(raw: Any, internal_listeners: Any = INTERNAL_LISTENERS) -> Any:
    """Every line as the flat columns the tables read: a request's, and a controller line's
    (``type``, ``broker_id``, ``queueTimeMs``). What the job caches: only what it needs.

    ``traffic``: "internal" for the controller's lines, internal apis and requests on
    ``internal_listeners``, else "client". ``failed``: 1.0 if the response carries an error code,
    top-level or inside; ``errors``: how many (the sum of ``errorCounts``, or 1 for a nonzero
    ``errorCode`` without them). ``topics``: a Produce's or Fetch's, else null."""
    from pyspark.sql import functions as F

    counts = F.col("errorCounts")
    inner = F.when(counts.isNotNull() & (F.size(counts) > 0), _code_count(counts))
    top = F.when(F.coalesce(F.col("errorCode"), F.lit(0)) != 0, F.lit(1).cast("long"))
    errors = F.coalesce(inner, top, F.lit(0).cast("long"))
    internal = (F.col("type") == "controller") | F.col("requestHeader.requestApiKey").isin(
        list(INTERNAL_API_KEYS))
    if internal_listeners:
        internal = internal | F.col("listener").isin(list(internal_listeners))
    return raw.select(
        "type", F.col("brokerId").alias("broker_id"), "queueTimeMs",
        F.when(F.coalesce(internal, F.lit(False)), "internal").otherwise("client").alias("traffic"),
        F.col("requestHeader.requestApiKeyName").alias("api"),
        F.col("requestHeader.requestApiVersion").alias("version"),
        F.col("requestHeader.correlationId").alias("correlation_id"),
        F.col("requestHeader.clientId").alias("client_id"),
        F.col("clientInformation.softwareName").alias("client_software"),
        F.col("clientInformation.softwareVersion").alias("client_software_version"),
        (F.col("timestamp") / 1000).cast("timestamp").alias("time"),
        "connection", "listener", "processor", "requestBytes", "responseBytes", "errorCode",
        errors.alias("errors"), (errors > 0).cast("double").alias("failed"), *TIMINGS, "topics",
    )


def _code_count(codes: Any) -> Any:
    """How many error codes an ``errorCounts`` map holds (null for a null map)."""
    from pyspark.sql import functions as F

    return F.aggregate(F.map_values(codes), F.lit(0).cast("long"), lambda a, b: a + b)


def requests(lines: Any) -> Any:
    """The requests among :func:`flat` lines."""
    from pyspark.sql import functions as F

    return lines.where(F.col("type").isNull()).drop("type", "broker_id", "queueTimeMs")


def _percentile(column: str, percentages: Any, mode: str) -> Any:
    from pyspark.sql import functions as F

    if mode == "exact":
        return F.percentile(column, percentages)
    if mode == "approx":
        return F.percentile_approx(column, percentages, ACCURACY)
    raise ValueError(f"percentiles must be one of {PERCENTILE_MODES}, not {mode!r}")


def _pcts(column: str, mode: str) -> list[Any]:
    """The percentiles of ``column`` as one aggregate (one state for all of them, not one each),
    and its max. :func:`_spread` turns the list into a column per percentile."""
    from pyspark.sql import functions as F

    return [_percentile(column, list(PERCENTILES), mode).alias(f"{column}{_LIST}"),
            F.max(column).alias(f"{column}_max")]


_LIST = "__percentiles"


def _spread(df: Any) -> Any:
    """Each ``<column>__percentiles`` list as ``<column>_p50``, ``_p95``, ``_p99``, in place."""
    from pyspark.sql import functions as F

    out = []
    for name in df.columns:
        if name.endswith(_LIST):
            base = name[:-len(_LIST)]
            out += [F.col(name)[i].alias(f"{base}_p{round(p * 100)}") for i, p in enumerate(PERCENTILES)]
        else:
            out.append(F.col(name))
    return df.select(*out)


def tables(df: Any, percentiles: str = "exact") -> dict[str, Any]:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    errors = F.col("failed")
    by_api = _spread(df.groupBy("traffic", "api", "version", "listener").agg(
        F.count("*").alias("requests"), F.avg(errors).alias("error_rate"), F.sum("errors").alias("errors"),
        F.sum("requestBytes").alias("request_bytes"), F.sum("responseBytes").alias("response_bytes"),
        *(c for t in TIMINGS for c in _pcts(t, percentiles)),
    )).orderBy("traffic", "api", "version", "listener")
    per_minute = _spread(df.groupBy(F.date_trunc("minute", "time").alias("minute"), "traffic", "api").agg(
        F.count("*").alias("requests"), F.avg(errors).alias("error_rate"), *_pcts("totalTimeMs", percentiles),
    )).orderBy("minute", "traffic", "api")
    slowest = df.orderBy(F.desc("totalTimeMs")).limit(SLOWEST).select(
        "time", "api", "version", "listener", "connection", "client_id", "correlation_id", *TIMINGS)
    by_client = df.groupBy("client_software", "client_software_version").agg(
        F.count("*").alias("requests"), F.avg(errors).alias("error_rate"),
        _percentile("totalTimeMs", 0.99, percentiles).alias("totalTimeMs_p99"),
    ).orderBy(F.desc("requests"))
    by_processor = df.groupBy("listener", "processor").agg(F.count("*").alias("requests")).withColumn(
        "share", F.col("requests") / F.sum("requests").over(Window.partitionBy("listener")),
    ).orderBy("listener", "processor")
    return {"by_api": by_api, "per_minute": per_minute, "slowest": slowest, "by_client": by_client,
            "by_processor": by_processor}


def topic_tables(df: Any) -> dict[str, Any]:
    """Per traffic and topic, from the ``topics`` of Produce and Fetch lines (:func:`requests`):
    the requests that named the topic, the share of them in which one of its partitions was
    answered with an error (``error_rate``), those partitions (``errors``), the partitions asked
    for, and what the records weighed: ``messages_in`` and ``bytes_in`` appended (Kafka's
    MessagesInPerSec and BytesInPerSec), ``bytes_out`` sent (BytesOutPerSec for client
    traffic; followers' fetches are broker-internal traffic: replication)."""
    from pyspark.sql import functions as F

    t = F.col("t")
    per_topic = df.where(F.col("topics").isNotNull()).select(
        "traffic", "api", F.explode("topics").alias("t")).select(
        "traffic", "api", t["topic"].alias("topic"), t["partitions"].alias("partitions"),
        t["records"].alias("records"), t["recordBytes"].alias("record_bytes"),
        F.coalesce(_code_count(t["errorCounts"]), F.lit(0).cast("long")).alias("errors"))

    def by_topic(api: str, *measures: Any) -> Any:
        return per_topic.where(F.col("api") == api).groupBy("traffic", "topic").agg(
            F.count("*").alias("requests"), F.avg((F.col("errors") > 0).cast("double")).alias("error_rate"),
            F.sum("errors").alias("errors"), F.sum("partitions").alias("partitions"), *measures)

    produce = by_topic("Produce", F.sum("records").alias("messages_in"),
                       F.sum("record_bytes").alias("bytes_in"))
    fetch = by_topic("Fetch", F.sum("record_bytes").alias("bytes_out"))
    # The busiest topics first.
    return {"produce_by_topic": produce.orderBy("traffic", F.desc("bytes_in"), "topic"),
            "fetch_by_topic": fetch.orderBy("traffic", F.desc("bytes_out"), "topic")}


def _plot_png(draw: Any, height: float = 3.5) -> tuple[str, str]:
    """The figure ``draw(ax)`` draws, as a base64 PNG, and what ``draw`` returns: its
    description (the image's alt text)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, height))
    alt = draw(ax)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode(), alt


_STATS = ("p50", "p95", "p99", "max")


def _breakable(name: str) -> str:
    """A column name that may wrap after an underscore and between words of camelCase."""
    return re.sub(r"(?<=_)|(?<=[a-z])(?=[A-Z])", "<wbr>", html.escape(name))


def _stat_group(cols: list[str], i: int) -> int:
    """How many columns from ``cols[i]`` are statistics of one measure (``x_p50``, ``x_p95``, ...)."""
    base, _, stat = cols[i].rpartition("_")
    j = i
    while j < len(cols) and base and stat in _STATS and cols[j].rpartition("_")[0] == base and (
            cols[j].rpartition("_")[2] in _STATS):
        j += 1
    return j - i


def _html_table(rows: list[Any], limit: int = 200, drop: tuple[str, ...] = ()) -> str:
    """Rows as a table in a container that scrolls sideways if the page is narrower than the
    table; a measure's p50/p95/p99/max sit under one heading."""
    if not rows:
        return "<p>(none)</p>"
    cols = [c for c in rows[0].asDict() if c not in drop]
    top, sub, i = [], [], 0
    while i < len(cols):
        n = _stat_group(cols, i)
        if n > 1:
            top.append(f'<th colspan="{n}">{_breakable(cols[i].rpartition("_")[0])}</th>')
            sub += [f"<th>{c.rpartition('_')[2]}</th>" for c in cols[i:i + n]]
            i += n
        else:
            top.append(f"<th{' rowspan=2' if sub or _stat_groups_follow(cols, i) else ''}>"
                       f"{_breakable(cols[i])}</th>")
            i += 1
    head = f"<tr>{''.join(top)}</tr>" + (f"<tr>{''.join(sub)}</tr>" if sub else "")
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_fmt(r[c]))}</td>" for c in cols) + "</tr>"
                   for r in rows[:limit])
    more = f"<p>({len(rows) - limit:,} more rows in the Parquet table)</p>" if len(rows) > limit else ""
    return f'<div class="table"><table><thead>{head}</thead><tbody>{body}</tbody></table></div>{more}'


def _stat_groups_follow(cols: list[str], i: int) -> bool:
    return any(_stat_group(cols, j) > 1 for j in range(i + 1, len(cols)))


def _fmt(v: Any) -> str:
    if v is None:
        return ""
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def _bars(ax: Any, rows: list[Any], value: str, title: str) -> str:
    from matplotlib.patches import Patch

    colors = {"client": "tab:blue", "internal": "tab:gray"}
    labels = [f"{r['api']} v{r['version']} {r['listener']}" for r in rows]
    ax.barh(range(len(rows)), [r[value] or 0 for r in rows], color=[colors[r["traffic"]] for r in rows])
    ax.set_yticks(range(len(rows)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_title(title)
    ax.legend(handles=[Patch(color=c, label=t if t == "client" else "broker-internal")
                       for t, c in colors.items()], fontsize=7, loc="lower right")
    return f"{title}, per api, version and listener: client and broker-internal"


def _minutes(ax: Any, per_minute: list[Any]) -> str:
    """Requests per minute: a bar per minute, from its start to its end, stacked by api
    (broker-internal ones hatched), on a time axis that spans the data and a minute either side.
    Left to itself, matplotlib widens the axis of a single minute to four years (its date axis
    pads a range of zero width by two years each way)."""
    import datetime

    import matplotlib.dates as mdates

    ax.set_title("requests per minute")
    if not per_minute:
        ax.text(0.5, 0.5, "no requests", ha="center", va="center", transform=ax.transAxes)
        return "requests per minute: no requests"
    minutes = sorted({r["minute"] for r in per_minute})
    column = {m: i for i, m in enumerate(minutes)}
    series: dict[tuple[str, str], list[int]] = {}
    for r in per_minute:
        series.setdefault((r["traffic"], r["api"]), [0] * len(minutes))[column[r["minute"]]] += r["requests"]
    few = len(minutes) <= 120  # bars wide enough to be drawn apart
    gap = datetime.timedelta(seconds=3 if few else 0)  # between neighbouring minutes' bars
    x = [mdates.date2num(m + gap) for m in minutes]
    width = (datetime.timedelta(minutes=1) - 2 * gap) / datetime.timedelta(days=1)  # in days, as dates are
    bottom = [0] * len(minutes)
    colors = iter(_colors(len(series)))
    for (traffic, api), counts in sorted(series.items()):
        internal = traffic == "internal"
        ax.bar(x, counts, width=width, bottom=bottom, align="edge", color=next(colors),
               hatch="///" if internal else None, edgecolor="white", linewidth=0.5 if few else 0,
               label=f"{api} (internal)" if internal else api)
        bottom = [b + c for b, c in zip(bottom, counts, strict=True)]
    first, last = minutes[0], minutes[-1] + datetime.timedelta(minutes=1)
    pad = max((last - first) / 20, datetime.timedelta(minutes=1))
    ax.set_xlim(first - pad, last + pad)
    span = (last - first + 2 * pad) / datetime.timedelta(minutes=1)
    if span <= 15:
        locator: Any = mdates.MinuteLocator(byminute=range(0, 60, 1 if span <= 8 else 2))
    else:
        locator = mdates.AutoDateLocator(minticks=3, maxticks=8)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    ax.set_ylabel("requests")
    ax.set_xlabel("minute (local time)")
    ax.legend(fontsize=7, ncol=1 + len(series) // 14, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    lo, hi = (mdates.num2date(v).replace(tzinfo=None) for v in ax.get_xlim())
    return f"requests per minute; time axis from {lo:%Y-%m-%d %H:%M} to {hi:%Y-%m-%d %H:%M}"


def _colors(n: int) -> list[Any]:
    """``n`` colours: matplotlib's tab10, then tab20's light ones, then around again."""
    import matplotlib

    tab10, tab20 = matplotlib.colormaps["tab10"], matplotlib.colormaps["tab20"]
    palette = [tab10(i) for i in range(10)] + [tab20(i) for i in range(1, 20, 2)]
    return [palette[i % len(palette)] for i in range(n)]


_CSS = (
    # The page is at most 1400 px wide (1360 and the scroll bar): plots wrap, wide tables get
    # small type, headings that wrap, and a scroll bar of their own rather than the page's.
    "body{font-family:sans-serif;max-width:1360px;margin:0 auto;padding:0 8px;box-sizing:border-box;"
    "overflow-wrap:anywhere}"
    ".plots{display:flex;flex-wrap:wrap;gap:8px;align-items:flex-start}"
    ".plots img{max-width:100%;height:auto}"
    ".table{overflow-x:auto;max-width:100%}"
    "table{border-collapse:collapse;font-size:11px}"
    "td,th{border:1px solid #ccc;padding:1px 4px;text-align:right}"
    "td{white-space:nowrap;font-variant-numeric:tabular-nums}"
    "th{background:#f3f3f3;font-weight:600;vertical-align:bottom;overflow-wrap:normal}"
    "p.note{color:#555;font-size:13px;max-width:70em}"
)


def render_html(collected: dict[str, list[Any]], source: str,
                internal_listeners: Any = INTERNAL_LISTENERS) -> str:
    by_api, per_minute = collected["by_api"], collected["per_minute"]
    client = [r for r in by_api if r["traffic"] == "client"]
    internal = [r for r in by_api if r["traffic"] == "internal"]
    sent = sum(r["requests"] for r in collected.get("controller_queue", []))
    height = min(12.0, max(3.5, 0.9 + 0.22 * len(by_api)))
    plots = [
        _plot_png(lambda ax: _bars(ax, by_api, "requests", "requests"), height),
        _plot_png(lambda ax: _bars(ax, by_api, "totalTimeMs_p99", "p99 total time (ms)"), height),
        _plot_png(lambda ax: _minutes(ax, per_minute), 3.5),
    ]
    listeners = ", ".join(internal_listeners) or "none"
    what = ("heartbeats, broker registration, control requests (LeaderAndIsr, UpdateMetadata, "
            f"StopReplica) and every request on the internal listeners ({html.escape(listeners)})")
    topics = [
        ("Produce per topic", "produce_by_topic",
         "Per topic, from the Produce requests' lines: the requests that named it, the share in which "
         "one of its partitions failed, those partitions, and the records and bytes appended "
         "(Kafka's MessagesInPerSec and BytesInPerSec)."),
        ("Fetch per topic", "fetch_by_topic",
         "Per topic, from the Fetch requests' lines: the requests that named it, the share in which "
         "one of its partitions failed, those partitions, and the record bytes sent (Kafka's "
         "BytesOutPerSec for clients; followers' fetches are broker-internal: replication)."),
    ]
    sections = [
        ("Client requests", "by_api", _html_table(client, drop=("traffic",)), ""),
        ("Broker-internal requests", "by_api", _html_table(internal, drop=("traffic",)),
         f"Brokers' and controllers' requests to each other: {what}."),
        *((title, name, _html_table(collected[name]), note) for title, name, note in topics
          if name in collected),
        ("Control requests sent by the controller", "controller_queue",
         _html_table(collected.get("controller_queue", [])),
         "Per broker: the control requests its controller's send thread took from that broker's "
         "queue, and how long each waited there."),
        *((f"{name}", name, _html_table(rows), "") for name, rows in collected.items()
          if name not in ("by_api", "controller_queue", *TOPIC_TABLES)),
    ]
    body = "".join(f"<h2>{html.escape(title)}{'' if title == name else f' <small>({name})</small>'}</h2>"
                   + (f'<p class="note">{note}</p>' if note else "") + table
                   for title, name, table, note in sections)
    images = "".join(f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{png}">'
                     for png, alt in plots)
    failed = sum(r["error_rate"] * r["requests"] for r in client)
    totals = (f"{sum(r['requests'] for r in client):,} client requests "
              f"({failed / max(1, sum(r['requests'] for r in client)):.2%} failed), "
              f"{sum(r['requests'] for r in internal):,} broker-internal requests, "
              f"{sent:,} control requests sent by controllers")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>kafkalite request report</title>"
            f"<style>{_CSS}</style></head><body>"
            f"<h1>kafkalite request report</h1><p>Logs: {html.escape(source)}; written "
            f"{time.strftime('%Y-%m-%d %H:%M:%S')}</p><p>{totals}</p>"
            f'<div class="plots">{images}</div>{body}</body></html>')


def summary(by_api: list[Any], sent: int = 0) -> str:
    """The by_api table as text: client requests, then broker-internal ones, then how many
    control requests the controllers sent."""
    header = (f"{'api':<22} {'ver':>3} {'listener':<12} {'requests':>10} {'failed':>7} {'errors':>8} "
              f"{'p50 ms':>8} {'p99 ms':>8} {'max ms':>9}")
    lines = []
    for traffic, title in (("client", "client requests"), ("internal", "broker-internal requests")):
        rows = [r for r in by_api if r["traffic"] == traffic]
        lines.append(f"{title}: {sum(r['requests'] for r in rows):,}")
        if rows:
            lines.append(header)
        for r in rows:
            lines.append(f"{r['api']:<22} {r['version']:>3} {r['listener']:<12} {r['requests']:>10,} "
                         f"{r['error_rate']:>7.2%} {r['errors']:>8,} {r['totalTimeMs_p50']:>8.2f} "
                         f"{r['totalTimeMs_p99']:>8.2f} {r['totalTimeMs_max']:>9.2f}")
    lines.append(f"control requests sent by controllers: {sent:,}")
    return "\n".join(lines)


def run(spark: Any, logs: str, out: str, progress: Any = print, percentiles: str = "exact",
        internal_listeners: Any = INTERNAL_LISTENERS) -> dict[str, list[Any]]:
    progress(f"reading {logs} ...")
    lines = flat(read_all(spark, logs), internal_listeners).cache()
    df = requests(lines)
    progress(f"{df.count():,} requests")
    collected = {}
    every = {**tables(df, percentiles), "controller_queue": controller_queue(lines, percentiles),
             **topic_tables(df)}
    for name, table in every.items():
        progress(f"computing {name} ...")
        table = table.cache()  # small: written and collected from one computation, not two
        rows = table.collect()
        if rows or name not in TOPIC_TABLES:
            table.write.mode("overwrite").parquet(os.path.join(out, name))
            collected[name] = rows
        else:  # no topics in these logs: no table, nor one left from an earlier run
            shutil.rmtree(os.path.join(out, name), ignore_errors=True)
        table.unpersist()
    lines.unpersist()
    path = os.path.join(out, "report.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write(render_html(collected, logs, internal_listeners))
    progress(summary(collected["by_api"], sum(r["requests"] for r in collected["controller_queue"])))
    progress(f"wrote {path} and the Parquet tables under {out}")
    return collected


# Spark's own log while the report runs: errors only, on stderr. Without a configuration of its
# own, Spark prints which default it uses, its WARN lines (the native-hadoop library, the
# loopback address, ...) and a console progress bar.
_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = stderr
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
# The level of the class that starts pyspark's JVM: Spark takes it for an interactive shell's
# (and, were it unset, would set WARN and say so).
logger.pygateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.pygateway.level = error
"""
# What the JVM itself prints at startup, whatever the logging: Spark 4 starts it with the
# incubating vector module, and the JVM announces options it picked up from the environment.
_JVM_NOISE = (b"WARNING: Using incubator modules:", b"Picked up JAVA_TOOL_OPTIONS:",
              b"Picked up _JAVA_OPTIONS:")


def _forward_stderr(stream: Any) -> None:
    """The JVM's stderr, less :data:`_JVM_NOISE`, to ours (a thread: until the JVM exits)."""
    for line in iter(stream.readline, b""):
        if not line.startswith(_JVM_NOISE):
            try:
                os.write(2, line)
            except OSError:
                pass


def _log4j2_file() -> str:
    fd, path = tempfile.mkstemp(prefix="kafkalite-report-log4j2-", suffix=".properties")
    with os.fdopen(fd, "w") as f:
        f.write(_LOG4J2)
    atexit.register(_remove, path)
    return path


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _start_quietly(options: dict[str, Any]) -> None:
    """Start the SparkContext (and the JVM, if this process has none yet) with ``options``,
    Spark logging errors only and the JVM's startup noise filtered from its stderr."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._active_spark_context is not None:
        return
    conf = SparkConf().setAll(list(options.items()))
    gateway = None
    if SparkContext._gateway is None and "PYSPARK_GATEWAY_PORT" not in os.environ:
        # Not under spark-submit (which started the JVM already): this process starts it.
        conf.set("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={_log4j2_file()}")
        gateway = launch_gateway(conf, popen_kwargs={"stderr": subprocess.PIPE})
        threading.Thread(target=_forward_stderr, args=(gateway.proc.stderr,), daemon=True,
                         name="kafkalite-report-jvm-stderr").start()
    SparkContext(conf=conf, gateway=gateway)


def session(master: str | None = None, app: str = "kafkalite-report",
            driver_memory: str | None = None, quiet: bool = True) -> Any:
    """The Spark session; no master: whatever spark-submit configured (local[*] if nothing).
    ``driver_memory`` (e.g. ``8g``) only takes effect where this starts the JVM (not under
    spark-submit, which has its own --driver-memory); in local mode the cached lines live there.
    ``quiet``: no progress bar, and Spark logs errors only (:func:`_start_quietly`)."""
    from pyspark.sql import SparkSession

    # The cache is read a few times and dropped: building it uncompressed is faster (10M lines:
    # 64 -> 53 s on 2 cores) for about twice the memory.
    options: dict[str, Any] = {"spark.app.name": app, "spark.sql.inMemoryColumnarStorage.compressed": "false"}
    if master:
        options["spark.master"] = master
    if driver_memory:
        options["spark.driver.memory"] = driver_memory
    if quiet:
        options["spark.ui.showConsoleProgress"] = "false"
        _start_quietly(options)
    spark = SparkSession.builder.config(map=options).getOrCreate()
    context = spark.sparkContext
    if quiet:
        context.setLogLevel("ERROR")
    local = (context.master or "").startswith("local")
    if local and not context.getConf().contains("spark.sql.shuffle.partitions"):
        # Spark's 200 shuffle partitions are for clusters: on one machine each is a task of
        # almost nothing (per table, 200 tasks where 2 per core do).
        spark.conf.set("spark.sql.shuffle.partitions", str(2 * context.defaultParallelism))
    if not context.getConf().contains(_FALLBACK):
        spark.conf.set(_FALLBACK, str(HASH_AGGREGATE_GROUPS))
    return spark


def cannot_run(logs: str) -> str | None:
    """Why the report cannot run on ``logs`` here, in one line saying what to do; None if it can."""
    if "://" not in logs and not find_logs(logs):
        return str(NoLogs(logs))
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return PYSPARK_MISSING
    if not os.environ.get("JAVA_HOME") and shutil.which("java") is None:
        return JAVA_MISSING
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kafkalite report", description=__doc__.splitlines()[0])
    parser.add_argument("--logs", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--master", default=None, help="e.g. local[*] or spark://host:7077")
    parser.add_argument("--driver-memory", default=None, help="e.g. 8g (Spark's default: 1g)")
    parser.add_argument("--percentiles", choices=PERCENTILE_MODES, default="exact")
    parser.add_argument("--internal-listeners", default=",".join(INTERNAL_LISTENERS),
                        help="listeners whose requests are broker-internal traffic, comma-separated")
    args = parser.parse_args(argv)
    logs = args.logs if "://" in args.logs else os.path.abspath(args.logs)
    problem = cannot_run(logs)
    if problem:
        print(f"kafkalite report: {problem}", file=sys.stderr)
        return 2
    listeners = tuple(x.strip() for x in args.internal_listeners.split(",") if x.strip())
    spark = session(args.master, driver_memory=args.driver_memory)
    try:
        run(spark, logs, os.path.abspath(args.out), percentiles=args.percentiles,
            internal_listeners=listeners)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
