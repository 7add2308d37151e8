"""``kafkalite configs``: kafka-configs.sh's describe and alter of topics', brokers' (one broker, or
the cluster-wide default), broker loggers' and groups' configs, with its options and its output
(docs/operations.md)."""

from __future__ import annotations

import click

from kafkalite.cli.admin_options import admin_client, connection_options, one_action
from kafkalite.common.cli_help import Command

ENTITY_TYPES = ("topics", "brokers", "broker-loggers", "groups")


@click.command(cls=Command)
@connection_options
@click.option("--describe", is_flag=True,
              help="Print the entity's dynamic configs (every config with --all).")
@click.option("--alter", is_flag=True, help="Change the entity's configs: --add-config, --delete-config.")
@click.option("--entity-type", type=click.Choice(ENTITY_TYPES), default=None, help="What the configs are of.")
@click.option("--entity-name", default=None, help="The topic's or group's name, or the broker's id.")
@click.option("--entity-default", is_flag=True,
              help="brokers: the cluster-wide default, instead of one broker.")
@click.option("--topic", default=None, help="Short for --entity-type topics --entity-name TOPIC.")
@click.option("--broker", default=None, help="Short for --entity-type brokers --entity-name BROKER.")
@click.option("--broker-defaults", is_flag=True, help="Short for --entity-type brokers --entity-default.")
@click.option("--broker-logger", default=None,
              help="Short for --entity-type broker-loggers --entity-name BROKER.")
@click.option("--group", default=None, help="Short for --entity-type groups --entity-name GROUP.")
@click.option("--all", "describe_all", is_flag=True, help="--describe: every config, with defaults.")
@click.option("--add-config", default=None, metavar="K1=V1,K2=[V2,V3]",
              help="--alter: configs to set, comma separated; a list value in square brackets.")
@click.option("--add-config-file", type=click.Path(dir_okay=False, exists=True), default=None,
              help="--alter: a properties file of configs to set.")
@click.option("--delete-config", default=None, metavar="K1,K2", help="--alter: configs to remove.")
def configs(bootstrap_server: str, command_config: str | None, describe: bool, alter: bool,
            entity_type: str | None, entity_name: str | None, entity_default: bool, topic: str | None,
            broker: str | None, broker_defaults: bool, broker_logger: str | None, group: str | None,
            describe_all: bool,
            add_config: str | None, add_config_file: str | None, delete_config: str | None) -> None:
    """Describe or alter topics', brokers', broker loggers' and groups' configs (kafka-configs.sh)."""
    from kafkalite.cli import configs_run as run

    action = one_action({"describe": describe, "alter": alter})
    entity = run.entity(entity_type, entity_name, entity_default, topic, broker, broker_defaults,
                        broker_logger, group)
    with admin_client(bootstrap_server, command_config, "config") as admin:
        if action == "describe":
            run.describe(admin, entity, describe_all)
        else:
            if describe_all:
                raise click.UsageError("--all goes with --describe")
            run.alter(admin, entity, run.configs_to_add(add_config, add_config_file),
                      run.configs_to_delete(delete_config))
