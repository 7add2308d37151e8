"""``kafkalite reassign-partitions``: kafka-reassign-partitions.sh's generate, execute, verify and
cancel, with its options and Kafka's JSON files, against any Kafka-protocol cluster
(docs/operations.md)."""

from __future__ import annotations

import click

from kafkalite.cli.admin_options import admin_client, connection_options, one_action
from kafkalite.common.cli_help import Command


@click.command(cls=Command)
@connection_options
@click.option("--generate", is_flag=True,
              help="Propose an assignment of --topics-to-move-json-file's topics to --broker-list.")
@click.option("--execute", is_flag=True, help="Start the reassignment of --reassignment-json-file.")
@click.option("--verify", is_flag=True,
              help="Whether --reassignment-json-file's reassignment is done (then clear the throttles).")
@click.option("--cancel", is_flag=True, help="Cancel --reassignment-json-file's reassignments in progress.")
@click.option("--list", "list_", is_flag=True, help="The reassignments in progress.")
@click.option("--topics-to-move-json-file", type=click.Path(dir_okay=False, exists=True), default=None,
              help='--generate: {"topics": [{"topic": "foo"}], "version": 1}.')
@click.option("--broker-list", default=None, metavar="1,2,3", help="--generate: the brokers to move to.")
@click.option("--reassignment-json-file", type=click.Path(dir_okay=False, exists=True), default=None,
              help='{"version": 1, "partitions": [{"topic": "foo", "partition": 0, "replicas": [1, 2]}]}.')
@click.option("--throttle", type=click.IntRange(1), default=None, metavar="BYTES/S",
              help="--execute: limit the moving replicas' replication (leader and follower rates).")
@click.option("--additional", is_flag=True, help="--execute: even while other reassignments run.")
@click.option("--preserve-throttles", is_flag=True, help="--verify/--cancel: leave the throttles set.")
def reassign_partitions(bootstrap_server: str, command_config: str | None, generate: bool, execute: bool,
                        verify: bool, cancel: bool, list_: bool, topics_to_move_json_file: str | None,
                        broker_list: str | None, reassignment_json_file: str | None, throttle: int | None,
                        additional: bool, preserve_throttles: bool) -> None:
    """Move partitions' replicas to other brokers (kafka-reassign-partitions.sh)."""
    from kafkalite.cli import reassign_partitions_run as run

    action = one_action({"generate": generate, "execute": execute, "verify": verify, "cancel": cancel,
                         "list": list_})
    if action == "generate" and (topics_to_move_json_file is None or broker_list is None):
        raise click.UsageError("--generate needs --topics-to-move-json-file and --broker-list")
    if action in ("execute", "verify", "cancel") and reassignment_json_file is None:
        raise click.UsageError(f"--{action} needs --reassignment-json-file")
    if throttle is not None and action != "execute":
        raise click.UsageError("--throttle goes with --execute")
    with admin_client(bootstrap_server, command_config, "reassign partitions") as admin:
        if action == "generate":
            assert topics_to_move_json_file is not None and broker_list is not None
            run.generate(admin, run.topics_to_move(topics_to_move_json_file), run.brokers(broker_list))
        elif action == "list":
            run.list_reassignments(admin)
        else:
            assert reassignment_json_file is not None
            target = run.reassignment(reassignment_json_file)
            if action == "execute":
                run.execute(admin, target, throttle, additional)
            elif action == "verify":
                if not run.verify(admin, target, preserve_throttles):
                    raise SystemExit(1)
            elif not run.cancel(admin, target, preserve_throttles):
                raise SystemExit(1)
