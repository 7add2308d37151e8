"""``kafkalite consumer-groups``: kafka-consumer-groups.sh's list, describe (offsets and lag per
partition, members, state), reset offsets and delete, with its options and its tables, against
any Kafka-protocol cluster (docs/operations.md)."""

from __future__ import annotations

import click

from kafkalite.cli.admin_options import admin_client, connection_options, one_action
from kafkalite.common.cli_help import Command


@click.command(cls=Command)
@connection_options
@click.option("--list", "list_", is_flag=True, help="List the groups (every broker's).")
@click.option("--describe", is_flag=True,
              help="Describe --group: offsets and lag per partition (default), --members or --state.")
@click.option("--reset-offsets", is_flag=True,
              help="Reset --group's offsets of --topic or --all-topics (--dry-run unless --execute).")
@click.option("--delete", is_flag=True, help="Delete --group (only a group without members).")
@click.option("--group", "groups", multiple=True, help="The group; repeatable.")
@click.option("--all-groups", is_flag=True, help="Every group, instead of --group.")
@click.option("--topic", "topics", multiple=True, metavar="TOPIC[:P1,P2]",
              help="--reset-offsets: a topic, every partition or the ones listed; repeatable.")
@click.option("--all-topics", is_flag=True,
              help="--reset-offsets: every partition the group has an offset for.")
@click.option("--to-earliest", is_flag=True, help="Reset to each partition's log start offset.")
@click.option("--to-latest", is_flag=True, help="Reset to each partition's log end offset.")
@click.option("--to-current", is_flag=True, help="Reset to the committed offsets (the log end where none).")
@click.option("--to-offset", type=int, default=None, help="Reset to this offset (kept within the log).")
@click.option("--to-datetime", default=None, metavar="YYYY-MM-DDTHH:mm:SS.sss",
              help="Reset to the first offset at or after this time (UTC unless a zone is given: "
                   "Z, +hh, +hhmm, +hh:mm); the log end when none is.")
@click.option("--by-duration", default=None, metavar="PnDTnHnMnS",
              help="Reset to the first offset at or after this long ago (ISO-8601 duration).")
@click.option("--shift-by", type=int, default=None,
              help="Move the committed offsets by N (negative: back), kept within the log.")
@click.option("--dry-run", is_flag=True, help="Print the new offsets only (the default).")
@click.option("--execute", is_flag=True, help="Commit the new offsets.")
@click.option("--members", is_flag=True, help="--describe: the group's members.")
@click.option("--state", default=None, is_flag=False, flag_value="", metavar="[STATE]",
              help="--describe: the group's state; --list: with each group's state (only groups in "
                   "STATE, when given).")
@click.option("--offsets", is_flag=True, help="--describe: offsets and lag (the default).")
def consumer_groups(bootstrap_server: str, command_config: str | None, list_: bool, describe: bool,
                    reset_offsets: bool, delete: bool, groups: tuple[str, ...], all_groups: bool,
                    topics: tuple[str, ...], all_topics: bool, to_earliest: bool, to_latest: bool,
                    to_current: bool, to_offset: int | None, to_datetime: str | None, by_duration: str | None,
                    shift_by: int | None, dry_run: bool, execute: bool, members: bool, state: str | None,
                    offsets: bool) -> None:
    """List, describe, delete consumer groups or reset their offsets (kafka-consumer-groups.sh)."""
    from kafkalite.cli import consumer_groups_run as run

    action = one_action({"list": list_, "describe": describe, "delete": delete,
                         "reset-offsets": reset_offsets})
    if action != "list" and not groups and not all_groups:
        raise click.UsageError(f"--{action} needs --group or --all-groups")
    if groups and all_groups:
        raise click.UsageError("--group and --all-groups exclude each other")
    with admin_client(bootstrap_server, command_config, "consumer group") as admin:
        chosen = list(groups) if not all_groups else [g.group_id for g in admin.list_groups()]
        if action == "list":
            run.list_groups(admin, state)
        elif action == "describe":
            if sum([members, state is not None, offsets]) > 1:
                raise click.UsageError("--describe takes one of --offsets, --members and --state")
            what = "members" if members else "state" if state is not None else "offsets"
            if not run.describe(admin, chosen, what):
                raise SystemExit(1)
        elif action == "delete":
            if not run.delete(admin, chosen):
                raise SystemExit(1)
        else:
            strategies = {"to-earliest": to_earliest, "to-latest": to_latest, "to-current": to_current,
                          "to-offset": to_offset is not None, "to-datetime": to_datetime is not None,
                          "by-duration": by_duration is not None, "shift-by": shift_by is not None}
            chosen_strategy = [s for s, on in strategies.items() if on]
            if len(chosen_strategy) != 1:
                raise click.UsageError("--reset-offsets takes exactly one of "
                                       + ", ".join(f"--{s}" for s in strategies))
            if bool(topics) == all_topics:
                raise click.UsageError("--reset-offsets takes --topic or --all-topics")
            if dry_run and execute:
                raise click.UsageError("--dry-run and --execute exclude each other")
            if not dry_run and not execute:
                click.echo("WARN: No action will be performed as the --execute option is missing. "
                           "Add --dry-run to say so, or --execute to reset the offsets.", err=True)
            strategy = run.Strategy(chosen_strategy[0], to_offset if to_offset is not None else shift_by,
                                    to_datetime or by_duration)
            if not run.reset(admin, chosen, topics, strategy, execute):
                raise SystemExit(1)
