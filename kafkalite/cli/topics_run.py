"""What ``kafkalite topics`` does once its options are parsed (kafkalite/cli/topics.py): Kafka's
TopicCommand over kafkalite's AdminClient, printing what kafka-topics.sh prints."""

from __future__ import annotations

import re
from collections.abc import Sequence

import click

from kafkalite.clients.admin import TOPIC, AdminClient, AdminError, NewTopic, TopicInfo, UnsupportedApi
from kafkalite.protocol import error_codes as E

OPTION = "--replica-assignment"


def parse_assignment(text: str) -> dict[int, list[int]]:
    """--replica-assignment "1:2,2:3": {partition: replicas} in order."""
    out = {}
    for i, part in enumerate(text.split(",")):
        try:
            replicas = [int(b) for b in part.strip().split(":")]
        except ValueError:
            raise click.BadParameter(f"{text!r} is not B1:B2,B3:B4", param_hint=OPTION) from None
        if len(set(replicas)) != len(replicas):
            raise click.BadParameter(f"partition {i} has a replica twice: {part}", param_hint=OPTION)
        out[i] = replicas
    return out


def parse_configs(items: Sequence[str]) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"{item!r} is not NAME=VALUE", param_hint="--config")
        out[name.strip()] = value.strip()
    return out


def matching(admin: AdminClient, pattern: str | None, exclude_internal: bool) -> dict[str, TopicInfo]:
    """The topics whose whole name matches ``pattern`` (every topic without one), by name."""
    topics = admin.describe_topics(None)
    try:
        regex = re.compile(pattern) if pattern else None
    except re.error as e:
        raise click.BadParameter(f"{pattern!r}: {e}", param_hint="--topic") from None
    return {name: t for name, t in sorted(topics.items())
            if (regex is None or regex.fullmatch(name) or name == pattern)
            and not (exclude_internal and t.is_internal)}


def _expected(found: dict[str, TopicInfo], pattern: str, if_exists: bool) -> bool:
    if not found and not if_exists:
        raise AdminError(E.UNKNOWN_TOPIC_OR_PARTITION, f"Topic '{pattern}' does not exist as expected")
    return bool(found)


def list_topics(admin: AdminClient, pattern: str | None, exclude_internal: bool) -> None:
    for name in matching(admin, pattern, exclude_internal):
        click.echo(name)


def describe(admin: AdminClient, pattern: str | None, exclude_internal: bool, under_replicated: bool,
             unavailable: bool, with_overrides: bool) -> None:
    found = matching(admin, pattern, exclude_internal)
    if pattern:
        _expected(found, pattern, False)
    brokers = admin.describe_cluster().brokers
    partition_filter = under_replicated or unavailable
    for name, t in found.items():
        try:
            configs = admin.describe_configs(TOPIC, name)
        except UnsupportedApi:  # a cluster without DescribeConfigs (librdkafka's mock): no configs
            configs = []
        overrides = ",".join(f"{c.name}={c.value}" for c in configs if not c.is_default)
        if with_overrides and not any(c.source_name == "DYNAMIC_TOPIC_CONFIG" for c in configs):
            continue
        factor = len(t.partitions[0].replicas) if 0 in t.partitions else 0
        if not partition_filter:
            topic_id = f"\tTopicId: {t.topic_id}" if t.topic_id is not None and t.topic_id.int else ""
            click.echo(f"Topic: {name}{topic_id}\tPartitionCount: {len(t.partitions)}\t"
                       f"ReplicationFactor: {factor}\tConfigs: {overrides}")
        if with_overrides:
            continue
        for p in sorted(t.partitions.values(), key=lambda p: p.partition):
            live_leader = p.leader >= 0 and p.leader in brokers
            if under_replicated and not len(p.isr) < len(p.replicas):
                continue
            if unavailable and live_leader:
                continue
            click.echo(f"\tTopic: {name}\tPartition: {p.partition}\t"
                       f"Leader: {p.leader if live_leader else 'none'}\t"
                       f"Replicas: {','.join(map(str, p.replicas))}\tIsr: {','.join(map(str, p.isr))}\t"
                       f"Elr: \tLastKnownElr: ")


def create(admin: AdminClient, name: str, partitions: int | None, replication_factor: int | None,
           configs: Sequence[str], assignment: dict[int, list[int]] | None, if_not_exists: bool) -> None:
    if assignment is not None and (partitions is not None or replication_factor is not None):
        raise click.UsageError("--replica-assignment replaces --partitions and --replication-factor")
    topic = NewTopic(name, partitions if partitions is not None else -1,
                     replication_factor if replication_factor is not None else -1,
                     parse_configs(configs), assignment)
    try:
        admin.create_topic(topic)
    except AdminError as e:
        if if_not_exists and e.code == E.TOPIC_ALREADY_EXISTS:
            return
        raise
    click.echo(f"Created topic {name}.")


def delete(admin: AdminClient, pattern: str, if_exists: bool) -> None:
    found = matching(admin, pattern, False)
    if not _expected(found, pattern, if_exists):
        return
    internal = [n for n, t in found.items() if t.is_internal]
    if internal:
        raise AdminError(E.INVALID_REQUEST, f"Topic {internal[0]} is a kafka internal topic and is not "
                                            "allowed to be marked for deletion.")
    for name, error in admin.delete_topics(list(found)).items():
        if error is not None:
            raise AdminError(error.code, f"{name}: {error.message}")


def alter(admin: AdminClient, pattern: str, partitions: int, assignment: dict[int, list[int]] | None,
          if_exists: bool) -> None:
    found = matching(admin, pattern, False)
    if not _expected(found, pattern, if_exists):
        return
    for name, t in found.items():
        if partitions <= len(t.partitions):
            raise AdminError(E.INVALID_PARTITIONS, f"Topic {name} has {len(t.partitions)} partitions, "
                                                   "which is higher or equal than the requested "
                                                   f"{partitions}. The number of partitions for a topic "
                                                   "can only be increased.")
    new = None
    if assignment is not None:
        new = {n: [assignment[i] for i in sorted(assignment) if i >= len(t.partitions)]
               for n, t in found.items()}
    for name, error in admin.create_partitions({n: partitions for n in found}, new).items():
        if error is not None:
            raise AdminError(error.code, f"{name}: {error.message}")
