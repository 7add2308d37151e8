"""``kafkalite topics``: kafka-topics.sh's list, describe, create, delete and alter (partitions),
with its options and its output, against any Kafka-protocol cluster (docs/operations.md)."""

from __future__ import annotations

import click

from kafkalite.cli.admin_options import admin_client, connection_options, one_action
from kafkalite.common.cli_help import Command


@click.command(cls=Command)
@connection_options
@click.option("--list", "list_", is_flag=True, help="List the topics.")
@click.option("--describe", is_flag=True,
              help="Describe the topics: partitions, leaders, replicas, ISR, configs.")
@click.option("--create", is_flag=True, help="Create --topic.")
@click.option("--delete", is_flag=True, help="Delete --topic.")
@click.option("--alter", is_flag=True, help="Raise --topic's partition count to --partitions.")
@click.option("--topic", default=None,
              help="The topic; with --list, --describe, --delete and --alter a regular expression "
                   "the whole name matches (as Kafka's).")
@click.option("--partitions", type=click.IntRange(1), default=None,
              help="The partition count (create: the broker's num.partitions without it).")
@click.option("--replication-factor", type=click.IntRange(1), default=None,
              help="Replicas of each partition (create: the broker's default.replication.factor without it).")
@click.option("--config", "configs", multiple=True, metavar="NAME=VALUE",
              help="A topic config for --create; repeatable.")
@click.option("--replica-assignment", default=None, metavar="B1:B2,B3:B4",
              help="The replicas of each (new) partition, the preferred leader first, partitions "
                   "separated by commas.")
@click.option("--if-exists", is_flag=True, help="--alter/--delete: do nothing when no topic matches.")
@click.option("--if-not-exists", is_flag=True, help="--create: do nothing when the topic exists.")
@click.option("--exclude-internal", is_flag=True, help="--list/--describe: leave internal topics out.")
@click.option("--under-replicated-partitions", is_flag=True,
              help="--describe: only partitions whose ISR is smaller than their replicas.")
@click.option("--unavailable-partitions", is_flag=True, help="--describe: only partitions without a leader.")
@click.option("--topics-with-overrides", is_flag=True,
              help="--describe: only topics with configs of their own (their summary line).")
def topics(bootstrap_server: str, command_config: str | None, list_: bool, describe: bool, create: bool,
           delete: bool, alter: bool, topic: str | None, partitions: int | None,
           replication_factor: int | None, configs: tuple[str, ...], replica_assignment: str | None,
           if_exists: bool, if_not_exists: bool, exclude_internal: bool, under_replicated_partitions: bool,
           unavailable_partitions: bool, topics_with_overrides: bool) -> None:
    """Create, delete, describe, list topics or add partitions (kafka-topics.sh)."""
    from kafkalite.cli import topics_run as run

    action = one_action({"list": list_, "describe": describe, "create": create, "alter": alter,
                         "delete": delete})
    if action in ("create", "alter", "delete") and not topic:
        raise click.UsageError(f"--{action} needs --topic")
    assignment = run.parse_assignment(replica_assignment) if replica_assignment else None
    with admin_client(bootstrap_server, command_config, "topic") as admin:
        if action == "list":
            run.list_topics(admin, topic, exclude_internal)
        elif action == "describe":
            run.describe(admin, topic, exclude_internal, under_replicated_partitions, unavailable_partitions,
                         topics_with_overrides)
        elif action == "create":
            assert topic is not None
            run.create(admin, topic, partitions, replication_factor, configs, assignment, if_not_exists)
        elif action == "delete":
            assert topic is not None
            run.delete(admin, topic, if_exists)
        else:
            assert topic is not None
            if partitions is None:
                raise click.UsageError("--alter needs --partitions")
            run.alter(admin, topic, partitions, assignment, if_exists)
