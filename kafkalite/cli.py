"""The ``kafkalite`` command. Each subcommand only parses options and forwards to its module."""

from __future__ import annotations

import click

from kafkalite import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kafkalite")
def main() -> None:
    """kafkalite: a lightweight Kafka-compatible broker."""


@main.group()
def bench() -> None:
    """Benchmarks; results go to docs/benchmarks.md."""


@bench.command("codec")
@click.option("--seconds", default=1.0, show_default=True, help="Time per measurement.")
@click.option("--repeat", default=5, show_default=True, help="Measurements per case (best kept).")
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the codec section of this markdown file (docs/benchmarks.md).")
def bench_codec(seconds: float, repeat: int, write_md: str | None) -> None:
    """Encode/decode speed of kafkalite's codec against kio, in one run."""
    from bench import codec

    codec.run(seconds=seconds, repeat=repeat, write_md=write_md)
