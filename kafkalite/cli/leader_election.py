"""``kafkalite leader-election``: kafka-leader-election.sh, electing the preferred replica (or,
UNCLEAN, any live replica) of some or every partition, with its options and its output
(docs/operations.md)."""

from __future__ import annotations

import click

from kafkalite.cli.admin_options import admin_client, connection_options, topic_partition
from kafkalite.common.cli_help import Command


@click.command(cls=Command)
@connection_options
@click.option("--election-type", required=True,
              type=click.Choice(["PREFERRED", "UNCLEAN"], case_sensitive=False),
              help="PREFERRED: the first replica if it is in the ISR; UNCLEAN: any live replica of a "
                   "partition without a leader.")
@click.option("--topic", default=None, help="The partition's topic (with --partition).")
@click.option("--partition", type=click.IntRange(0), default=None, help="The partition (with --topic).")
@click.option("--all-topic-partitions", is_flag=True, help="Every partition of every topic.")
@click.option("--path-to-json-file", type=click.Path(dir_okay=False, exists=True), default=None,
              help='The partitions: {"partitions": [{"topic": "foo", "partition": 1}, ...]}.')
def leader_election(bootstrap_server: str, command_config: str | None, election_type: str, topic: str | None,
                    partition: int | None, all_topic_partitions: bool, path_to_json_file: str | None) -> None:
    """Elect partitions' preferred (or any live) replicas as leaders (kafka-leader-election.sh)."""
    import json

    from kafkalite.protocol.messages import elect_leaders as EL

    if (topic is None) != (partition is None):
        raise click.UsageError("--topic and --partition go together")
    if sum([topic is not None, all_topic_partitions, path_to_json_file is not None]) != 1:
        raise click.UsageError("One and only one of the following options is required: "
                               "--all-topic-partitions, --topic, --path-to-json-file")
    partitions: list[tuple[str, int]] | None = None
    if topic is not None and partition is not None:
        partitions = [(topic, partition)]
    elif path_to_json_file is not None:
        try:
            with open(path_to_json_file) as f:
                listed = json.load(f)["partitions"]
            partitions = [(str(p["topic"]), int(p["partition"])) for p in listed]
        except (OSError, ValueError, KeyError, TypeError) as bad:
            raise click.BadParameter(f"{path_to_json_file}: not Kafka's partitions file ({bad})",
                                     param_hint="--path-to-json-file") from None
        if len(set(partitions)) != len(partitions):
            raise click.BadParameter(f"{path_to_json_file} lists a partition twice",
                                     param_hint="--path-to-json-file")
    kind = election_type.upper()
    with admin_client(bootstrap_server, command_config, "leader election") as admin:
        results = admin.elect_leaders(EL.PREFERRED if kind == "PREFERRED" else EL.UNCLEAN, partitions)
    elected = [tp for tp, e in sorted(results.items()) if e is None]
    noop = [tp for tp, e in sorted(results.items()) if e is not None and e.name == "ELECTION_NOT_NEEDED"]
    failed = {tp: e for tp, e in sorted(results.items()) if e is not None and e.name != "ELECTION_NOT_NEEDED"}
    if elected:
        click.echo(f"Successfully completed leader election ({kind}) for partitions "
                   + ", ".join(topic_partition(*tp) for tp in elected))
    if noop:
        click.echo("Valid replica already elected for partitions "
                   + ", ".join(topic_partition(*tp) for tp in noop))
    if failed:
        for tp, e in failed.items():
            click.echo(f"Error completing leader election ({kind}) for partition: "
                       f"{topic_partition(*tp)}: {e}")
        raise click.ClickException(f"{len(failed)} replica(s) could not be elected")
