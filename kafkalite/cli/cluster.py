"""``kafkalite cluster``: a local cluster of broker processes (kafkalite/local/processes.py)."""

from __future__ import annotations

import os
import sys

import click

from kafkalite.common.cli_help import Command


@click.command(cls=Command)
@click.option("--brokers", default=3, show_default=True, type=click.IntRange(1, 50))
@click.option("--controllers", default=1, show_default=True, type=click.IntRange(1, 50),
              help="Voters of the controller quorum: brokers 1..N also run a controller (on a "
                   "CONTROLLER listener after the metrics ports); 1: broker 1 alone.")
@click.option("--dir", "directory", default=".kafkalite/cluster", show_default=True,
              type=click.Path(file_okay=False), help="Logs and data of every broker.")
@click.option("--base-port", default=9092, show_default=True, type=click.IntRange(1024, 65000),
              help="Broker i listens on base-port + 2(i-1) (clients) and the next port (internal).")
@click.option("--metrics/--no-metrics", default=True, show_default=True,
              help="Serve each broker's Prometheus metrics, on the ports after the brokers' ports.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, exists=True), default=None,
              help="A server.properties file for every broker (the cluster's own settings win).")
@click.option("--override", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Set a property on every broker, over all else; repeatable. request.log.dir=DIR "
                   "gives each broker DIR/broker-N.")
def cluster(brokers: int, controllers: int, directory: str, base_port: int, metrics: bool,
            config_file: str | None, overrides: tuple[str, ...]) -> None:
    """Run a local cluster of N brokers (the first, or the first --controllers, also run the
    controller) until Ctrl-C."""
    from kafkalite.local.processes import run
    from kafkalite.local.settings import ClusterError
    from kafkalite.server.config import ConfigError

    if controllers > brokers:
        raise click.BadParameter(f"at most --brokers ({brokers})", param_hint="--controllers")
    try:
        code = run(brokers, os.path.abspath(directory), base_port,
                   base_port + 2 * brokers if metrics else None,
                   os.path.abspath(config_file) if config_file else None, overrides, controllers)
    except (ClusterError, ConfigError) as e:
        raise click.ClickException(str(e)) from None
    sys.exit(code)
