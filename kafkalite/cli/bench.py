"""``kafkalite bench``: the benchmarks' group lives with them, in kafkalite_bench (bench/cli.py);
the ``kafkalite`` command loads it only when it is named or listed."""

from __future__ import annotations

import click

NAME = "bench"


def group() -> click.Command:
    from kafkalite_bench.cli import bench

    return bench
