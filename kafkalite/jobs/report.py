"""The request-log report: a PySpark job over the brokers' request logs (docs/metrics.md).

``kafkalite report --logs DIR --out DIR [--master URL]``, or the same module through
``spark-submit kafkalite/jobs/report.py --logs DIR --out DIR``. It reads every ``*.jsonl`` under
DIR with an explicit schema, computes the tables below, writes each as Parquet under OUT, writes
OUT/report.html with its plots, and prints a summary. ``local[*]`` unless a master is given; the
same code runs unchanged on a Spark cluster.

Tables: ``by_api`` (per api, version and listener: count, error rate, bytes, p50/p95/p99/max of
each timing), ``per_minute`` (per api and minute: count and total-time percentiles), ``slowest``
(the slowest requests), ``by_client`` (per client software and version), ``by_processor``
(requests per listener and Processor, and each one's share of its listener), ``controller_queue``
(per broker: the control requests this broker's controller sent it and their time in its queue).
"""

from __future__ import annotations

import argparse
import base64
import html
import io
import os
import sys
import time
from typing import Any

TIMINGS = ("totalTimeMs", "requestQueueTimeMs", "localTimeMs", "responseQueueTimeMs", "sendTimeMs")
PERCENTILES = (0.5, 0.95, 0.99)
ACCURACY = 10000  # percentile_approx's accuracy: relative error about 1/ACCURACY of the rank
# "exact": Spark's percentile (linear interpolation between the two nearest ranks, as DuckDB's
# quantile_cont): keeps a count per distinct value and group, which the request log bounds by
# writing times in whole microseconds; and faster than the sketch here. "approx": percentile_approx,
# fixed memory per group whatever the values.
PERCENTILE_MODES = ("exact", "approx")
SLOWEST = 20


def schema() -> Any:
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
        T.StructField("brokerId", T.IntegerType()),
        T.StructField("queueTimeMs", T.DoubleType()),
    ])


def read_all(spark: Any, logs: str) -> Any:
    return spark.read.schema(schema()).option("recursiveFileLookup", "true").json(
        os.path.join(logs, "*.jsonl") if not logs.endswith(".jsonl") else logs)


def controller_queue(lines: Any, percentiles: str = "exact") -> Any:
    """Per broker: control requests the controller sent it and how long they waited in its queue
    (from :func:`flat` lines)."""
    from pyspark.sql import functions as F

    return _spread(lines.where(F.col("type") == "controller").groupBy("broker_id").agg(
        F.count("*").alias("requests"), *_pcts("queueTimeMs", percentiles))).orderBy("broker_id")


def flat(raw: Any) -> Any:
    """Every line as the flat columns the tables read: a request's, and a controller line's
    (``type``, ``broker_id``, ``queueTimeMs``). What the job caches: only what it needs."""
    from pyspark.sql import functions as F

    return raw.select(
        "type", F.col("brokerId").alias("broker_id"), "queueTimeMs",
        F.col("requestHeader.requestApiKeyName").alias("api"),
        F.col("requestHeader.requestApiVersion").alias("version"),
        F.col("requestHeader.correlationId").alias("correlation_id"),
        F.col("requestHeader.clientId").alias("client_id"),
        F.col("clientInformation.softwareName").alias("client_software"),
        F.col("clientInformation.softwareVersion").alias("client_software_version"),
        (F.col("timestamp") / 1000).cast("timestamp").alias("time"),
        "connection", "listener", "processor", "requestBytes", "responseBytes", "errorCode", *TIMINGS,
    )


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

    errors = (F.col("errorCode") != 0).cast("double")
    by_api = _spread(df.groupBy("api", "version", "listener").agg(
        F.count("*").alias("requests"), F.avg(errors).alias("error_rate"),
        F.sum("requestBytes").alias("request_bytes"), F.sum("responseBytes").alias("response_bytes"),
        *(c for t in TIMINGS for c in _pcts(t, percentiles)),
    )).orderBy("api", "version", "listener")
    per_minute = _spread(df.groupBy(F.date_trunc("minute", "time").alias("minute"), "api").agg(
        F.count("*").alias("requests"), F.avg(errors).alias("error_rate"), *_pcts("totalTimeMs", percentiles),
    )).orderBy("minute", "api")
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


def _plot_png(draw: Any) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 3.5))
    draw(ax)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def _html_table(rows: list[Any], limit: int = 200) -> str:
    if not rows:
        return "<p>(none)</p>"
    cols = list(rows[0].asDict())
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_fmt(r[c]))}</td>" for c in cols) + "</tr>"
                   for r in rows[:limit])
    return f"<table><tr>{head}</tr>{body}</table>"


def _fmt(v: Any) -> str:
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def render_html(collected: dict[str, list[Any]], source: str) -> str:
    by_api, per_minute = collected["by_api"], collected["per_minute"]

    def requests_by_api(ax: Any) -> None:
        labels = [f"{r['api']} v{r['version']} {r['listener']}" for r in by_api]
        ax.barh(labels, [r["requests"] for r in by_api])
        ax.set_title("requests per api, version and listener")

    def p99_by_api(ax: Any) -> None:
        labels = [f"{r['api']} v{r['version']} {r['listener']}" for r in by_api]
        ax.barh(labels, [r["totalTimeMs_p99"] for r in by_api])
        ax.set_title("p99 total time (ms)")

    def minutes(ax: Any) -> None:
        for api in sorted({r["api"] for r in per_minute}):
            pts = [(r["minute"], r["requests"]) for r in per_minute if r["api"] == api]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=api)
        ax.set_title("requests per minute")
        ax.legend(fontsize=7)

    plots = [_plot_png(f) for f in (requests_by_api, p99_by_api, minutes)]
    sections = "".join(f"<h2>{name}</h2>{_html_table(rows)}" for name, rows in collected.items())
    images = "".join(f'<img alt="plot" src="data:image/png;base64,{p}">' for p in plots)
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>kafkalite request report</title>"
            "<style>body{font-family:sans-serif}table{border-collapse:collapse;font-size:12px}"
            "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}</style></head><body>"
            f"<h1>kafkalite request report</h1><p>Logs: {html.escape(source)}; written "
            f"{time.strftime('%Y-%m-%d %H:%M:%S')}</p>{images}{sections}</body></html>")


def summary(by_api: list[Any]) -> str:
    lines = [f"{'api':<22} {'ver':>3} {'listener':<12} {'requests':>10} {'errors':>7} "
             f"{'p50 ms':>8} {'p99 ms':>8} {'max ms':>9}"]
    for r in by_api:
        lines.append(f"{r['api']:<22} {r['version']:>3} {r['listener']:<12} {r['requests']:>10,} "
                     f"{r['error_rate']:>7.2%} {r['totalTimeMs_p50']:>8.2f} {r['totalTimeMs_p99']:>8.2f} "
                     f"{r['totalTimeMs_max']:>9.2f}")
    return "\n".join(lines)


def run(spark: Any, logs: str, out: str, progress: Any = print,
        percentiles: str = "exact") -> dict[str, list[Any]]:
    progress(f"reading {logs} ...")
    lines = flat(read_all(spark, logs)).cache()
    df = requests(lines)
    progress(f"{df.count():,} requests")
    collected = {}
    every = {**tables(df, percentiles), "controller_queue": controller_queue(lines, percentiles)}
    for name, table in every.items():
        progress(f"computing {name} ...")
        table = table.cache()  # small: written and collected from one computation, not two
        table.write.mode("overwrite").parquet(os.path.join(out, name))
        collected[name] = table.collect()
        table.unpersist()
    lines.unpersist()
    path = os.path.join(out, "report.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write(render_html(collected, logs))
    progress(summary(collected["by_api"]))
    progress(f"wrote {path} and the Parquet tables under {out}")
    return collected


def session(master: str | None = None, app: str = "kafkalite-report",
            driver_memory: str | None = None) -> Any:
    """The Spark session; no master: whatever spark-submit configured (local[*] if nothing).
    ``driver_memory`` (e.g. ``8g``) only takes effect where this starts the JVM (not under
    spark-submit, which has its own --driver-memory); in local mode the cached lines live there."""
    from pyspark.sql import SparkSession

    # The cache is read a few times and dropped: building it uncompressed is faster (10M lines:
    # 64 -> 53 s on 2 cores) for about twice the memory.
    builder = SparkSession.builder.appName(app)
    builder = builder.config("spark.sql.inMemoryColumnarStorage.compressed", "false")
    if master:
        builder = builder.master(master)
    if driver_memory:
        builder = builder.config("spark.driver.memory", driver_memory)
    spark = builder.getOrCreate()
    context = spark.sparkContext
    local = (context.master or "").startswith("local")
    if local and not context.getConf().contains("spark.sql.shuffle.partitions"):
        # Spark's 200 shuffle partitions are for clusters: on one machine each is a task of
        # almost nothing (per table, 200 tasks where 2 per core do).
        spark.conf.set("spark.sql.shuffle.partitions", str(2 * context.defaultParallelism))
    return spark


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kafkalite report", description=__doc__.splitlines()[0])
    parser.add_argument("--logs", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--master", default=None, help="e.g. local[*] or spark://host:7077")
    parser.add_argument("--driver-memory", default=None, help="e.g. 8g (Spark's default: 1g)")
    parser.add_argument("--percentiles", choices=PERCENTILE_MODES, default="exact")
    args = parser.parse_args(argv)
    spark = session(args.master, driver_memory=args.driver_memory)
    try:
        run(spark, os.path.abspath(args.logs), os.path.abspath(args.out), percentiles=args.percentiles)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
