"""``kafkalite report``: the Spark report over request logs (kafkalite/jobs/report.py)."""

from __future__ import annotations

import sys

import click

from kafkalite.common.cli_help import Command


@click.command(cls=Command)
@click.option("--logs", required=True, type=click.Path(),
              help="Request logs: a directory searched recursively for *.jsonl and *.csv (the "
                   "request.log.dir "
                   "of one or more brokers), or one file.")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Where tables and report go.")
@click.option("--master", default="local[*]", show_default=True, help="Spark master URL.")
@click.option("--driver-memory", default=None, help="Spark driver memory, e.g. 8g (Spark's default: 1g).")
@click.option("--percentiles", type=click.Choice(["exact", "approx"]), default="exact", show_default=True,
              help="exact: Spark's percentile; approx: percentile_approx (fixed memory per group).")
@click.option("--internal-listeners", default="INTERNAL,CONTROLLER", show_default=True,
              help="Listeners whose requests count as broker-internal traffic (the inter-broker and "
                   "control plane listeners), comma-separated.")
def report(logs: str, out: str, master: str, driver_memory: str | None, percentiles: str,
           internal_listeners: str) -> None:
    """Aggregate request logs with Spark into Parquet tables and an HTML report with plots."""
    from kafkalite.jobs.report import main as report_main

    args = ["--logs", logs, "--out", out, "--master", master, "--percentiles", percentiles,
            "--internal-listeners", internal_listeners]
    sys.exit(report_main(args + (["--driver-memory", driver_memory] if driver_memory else [])))
