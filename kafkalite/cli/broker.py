"""``kafkalite broker``: one broker in the foreground."""

from __future__ import annotations

import sys

import click

from kafkalite.common.cli_help import Command


@click.command(cls=Command)
@click.option("--config", "config_file", type=click.Path(dir_okay=False), default=None,
              help="A server.properties file (Kafka's property names).")
@click.option("--override", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Set a property, over the file; repeatable.")
@click.option("--log-level", default="INFO", show_default=True,
              type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False))
def broker(config_file: str | None, overrides: tuple[str, ...], log_level: str) -> None:
    """Run one broker in the foreground until SIGTERM or Ctrl-C (a second one forces exit)."""
    import logging

    from kafkalite.server.broker import run
    from kafkalite.server.config import BrokerConfig, ConfigError

    logging.basicConfig(level=log_level.upper(),
                        format="%(asctime)s %(levelname)s [%(threadName)s] %(name)s: %(message)s")
    try:
        config = BrokerConfig.from_sources(config_file, overrides)
    except ConfigError as e:
        raise click.ClickException(f"configuration: {e}") from None
    from kafkalite.network.sasl import SaslConfigError
    from kafkalite.network.tls import TlsConfigError
    from kafkalite.server.meta_properties import ClusterIdMismatch

    try:
        code = run(config)
    except (OSError, TlsConfigError, SaslConfigError, ClusterIdMismatch) as e:
        raise click.ClickException(f"cannot start the broker: {e}") from None
    sys.exit(code)
