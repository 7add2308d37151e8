"""The ``kafkalite`` command. Each subcommand has a module here (broker, cluster, fault, report,
bench) that only parses options and imports what it forwards to when it runs."""

from __future__ import annotations

import faulthandler
import signal
import sys

import click

from kafkalite import __version__
from kafkalite.cli import (
    bench,
    broker,
    cluster,
    configs,
    consumer_groups,
    fault,
    leader_election,
    reassign_partitions,
    report,
    topics,
)
from kafkalite.common.cli_help import Group


class _Main(Group):
    """Lists and finds ``bench`` too, whose group kafkalite.cli.bench loads from kafkalite_bench."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), bench.NAME])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return bench.group() if cmd_name == bench.NAME else super().get_command(ctx, cmd_name)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kafkalite")
def main() -> None:
    """kafkalite: a lightweight Kafka-compatible broker."""
    # `kill -USR1 <pid>` prints every thread's stack to stderr (the JVM's thread dump on SIGQUIT):
    # what a broker or a benchmark that seems stuck is doing, without stopping it. Dumped from a
    # Python handler, holding the GIL: faulthandler's own C handler reads the other threads'
    # frames while they run, and crashed the process when one was importing a module.
    if hasattr(signal, "SIGUSR1") and sys.__stderr__ is not None:
        signal.signal(signal.SIGUSR1, _dump_stacks)


def _dump_stacks(signum: int, frame: object) -> None:
    if sys.__stderr__ is not None:
        faulthandler.dump_traceback(file=sys.__stderr__, all_threads=True)


for _command in (broker.broker, cluster.cluster, report.report, fault.fault, topics.topics, configs.configs):
    main.add_command(_command)
# Kafka's script names: kafka-consumer-groups.sh, kafka-leader-election.sh.
main.add_command(consumer_groups.consumer_groups, "consumer-groups")
main.add_command(leader_election.leader_election, "leader-election")
main.add_command(reassign_partitions.reassign_partitions, "reassign-partitions")
