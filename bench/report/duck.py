"""The report's aggregates computed by DuckDB over the same files: the reference the Spark job is
measured against (docs/benchmarks.md). Same tables, same columns; percentiles either exact
(``quantile_disc``, a value of the data, as Spark's ``percentile_approx`` returns) or DuckDB's
own approximation (``approx_quantile``, a t-digest)."""

from __future__ import annotations

import os
from typing import Any

from kafkalite.jobs.report import INTERNAL_API_KEYS, INTERNAL_LISTENERS, PERCENTILES, SLOWEST, TIMINGS
from kafkalite.metrics.request_log import CSV_COLUMNS

COLUMNS = {
    "type": "VARCHAR", "timestamp": "BIGINT",
    "requestHeader": "STRUCT(requestApiKeyName VARCHAR, requestApiKey INTEGER, requestApiVersion INTEGER, "
                     "correlationId INTEGER, clientId VARCHAR)",
    "connection": "VARCHAR", **{t: "DOUBLE" for t in TIMINGS}, "listener": "VARCHAR",
    "clientInformation": "STRUCT(softwareName VARCHAR, softwareVersion VARCHAR)",
    "processor": "INTEGER", "requestBytes": "BIGINT", "responseBytes": "BIGINT", "errorCode": "INTEGER",
    "errorCounts": "MAP(VARCHAR, BIGINT)", "brokerId": "INTEGER", "queueTimeMs": "DOUBLE",
}


_CSV_STRINGS = {"type", "requestApiKeyName", "clientId", "connection", "securityProtocol", "principal",
                "listener",
                "softwareName", "softwareVersion", "errorCounts", "topics"}


def _csv_table(logs: str) -> str:
    """request.log.format=csv files as the JSON lines' table (the same values: ms are us / 1000)."""
    types = {c: "VARCHAR" if c in _CSV_STRINGS else "BIGINT" for c in CSV_COLUMNS}
    columns = "{" + ", ".join(f"'{c}': '{t}'" for c, t in types.items()) + "}"
    errors = ("map_from_entries(list_transform(string_split(errorCounts, ';'), "
              "lambda x: {'k': split_part(x, ':', 1), 'v': split_part(x, ':', 2)::BIGINT}))")
    return f"""SELECT type, timestamp,
               {{'requestApiKeyName': requestApiKeyName, 'requestApiKey': requestApiKey,
                 'requestApiVersion': requestApiVersion, 'correlationId': correlationId,
                 'clientId': clientId}} AS requestHeader, connection,
               {', '.join(f"{t[:-2]}Us / 1000 AS {t}" for t in TIMINGS)}, listener,
               {{'softwareName': softwareName, 'softwareVersion': softwareVersion}} AS clientInformation,
               processor, requestBytes, responseBytes, errorCode,
               CASE WHEN errorCounts IS NULL OR errorCounts = '' THEN MAP {{}} ELSE {errors} END
                 AS errorCounts,
               brokerId, queueTimeNs / 1e6 AS queueTimeMs
             FROM read_csv('{logs}/*.csv', header = false, quote = '"', escape = '"', nullstr = '',
                           columns = {columns})"""


def _pcts(column: str, quantile: str) -> str:
    ps = ", ".join(str(p) for p in PERCENTILES)
    parts = [f"{quantile}({column}, [{ps}]) AS {column}_q"]
    return ", ".join(parts + [f"max({column}) AS {column}_max"])


def _spread(column: str) -> str:
    """The list of percentiles as one column each, named as the Spark job names them."""
    spread = [f"{column}_q[{i + 1}] AS {column}_p{round(p * 100)}" for i, p in enumerate(PERCENTILES)]
    return ", ".join([*spread, f"{column}_max"])


def queries(quantile: str) -> dict[str, str]:
    errors = "avg((errors > 0)::DOUBLE) AS error_rate"
    return {
        "by_api": f"""SELECT traffic, api, version, listener, requests, error_rate, errors, request_bytes,
                    response_bytes, {', '.join(_spread(t) for t in TIMINGS)} FROM (
                  SELECT traffic, api, version, listener, count(*) AS requests, {errors},
                    sum(errors) AS errors, sum(requestBytes) AS request_bytes,
                    sum(responseBytes) AS response_bytes, {', '.join(_pcts(t, quantile) for t in TIMINGS)}
                  FROM requests GROUP BY traffic, api, version, listener)
                  ORDER BY traffic, api, version, listener""",
        "per_minute": f"""SELECT minute, traffic, api, requests, error_rate, {_spread('totalTimeMs')} FROM (
                  SELECT date_trunc('minute', time) AS minute, traffic, api, count(*) AS requests, {errors},
                    {_pcts('totalTimeMs', quantile)} FROM requests GROUP BY minute, traffic, api)
                  ORDER BY minute, traffic, api""",
        "slowest": f"""SELECT time, api, version, listener, connection, client_id, correlation_id,
                    {', '.join(TIMINGS)} FROM requests ORDER BY totalTimeMs DESC LIMIT {SLOWEST}""",
        "by_client": f"""SELECT client_software, client_software_version, count(*) AS requests, {errors},
                    {quantile}(totalTimeMs, 0.99) AS totalTimeMs_p99
                  FROM requests GROUP BY client_software, client_software_version ORDER BY requests DESC""",
        "by_processor": """SELECT listener, processor, count(*) AS requests,
                    count(*) / sum(count(*)) OVER (PARTITION BY listener) AS share
                  FROM requests GROUP BY listener, processor ORDER BY listener, processor""",
        "controller_queue": f"""SELECT broker_id, requests, {_spread('queueTimeMs')} FROM (
                  SELECT brokerId AS broker_id, count(*) AS requests, {_pcts('queueTimeMs', quantile)}
                  FROM raw WHERE type = 'controller' GROUP BY brokerId) ORDER BY broker_id""",
    }


def run(logs: str, out: str, quantile: str = "quantile_cont",
        threads: int | None = None, log_format: str = "json") -> dict[str, list[Any]]:
    """Load the logs (with the same explicit schema; ``log_format``: request.log.format, json or
    csv), compute every table, write each as Parquet under ``out``; returns the rows."""
    import duckdb

    os.makedirs(out, exist_ok=True)
    con = duckdb.connect()
    try:
        if threads:
            con.execute(f"SET threads = {threads}")
        columns = "{" + ", ".join(f"'{k}': '{v}'" for k, v in COLUMNS.items()) + "}"
        if log_format == "csv":
            con.execute(f"CREATE TABLE raw AS {_csv_table(logs)}")
        else:
            con.execute(f"""CREATE TABLE raw AS SELECT * FROM read_json('{logs}/*.jsonl',
                            format = 'newline_delimited', columns = {columns})""")
        con.execute("""CREATE VIEW requests AS SELECT requestHeader.requestApiKeyName AS api,
                         requestHeader.requestApiVersion AS version,
                         requestHeader.correlationId AS correlation_id, requestHeader.clientId AS client_id,
                         clientInformation.softwareName AS client_software,
                         clientInformation.softwareVersion AS client_software_version,
                         make_timestamp(timestamp * 1000) AS time, connection, listener, processor,
                         requestBytes, responseBytes, errorCode, """ + ", ".join(TIMINGS) + f""",
                         CASE WHEN requestHeader.requestApiKey IN ({', '.join(map(str, INTERNAL_API_KEYS))})
                           OR listener IN ({', '.join(f"'{x}'" for x in INTERNAL_LISTENERS)})
                           THEN 'internal' ELSE 'client' END AS traffic,
                         coalesce(CASE WHEN cardinality(errorCounts) > 0
                                    THEN list_sum(map_values(errorCounts)) END,
                                  CASE WHEN coalesce(errorCode, 0) <> 0 THEN 1 END, 0)::BIGINT AS errors
                       FROM raw WHERE type IS NULL""")
        collected = {}
        for name, sql in queries(quantile).items():
            rel = con.sql(sql)
            rel.write_parquet(os.path.join(out, f"{name}.parquet"))
            collected[name] = rel.fetchall()
        return collected
    finally:
        con.close()
