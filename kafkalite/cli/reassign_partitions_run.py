"""What ``kafkalite reassign-partitions`` does once its options are parsed (kafkalite/cli/
reassign_partitions.py): Kafka's ReassignPartitionsCommand over kafkalite's AdminClient, with
Kafka's JSON files and what kafka-reassign-partitions.sh prints."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import click

from kafkalite.cli.admin_options import topic_partition
from kafkalite.clients.admin import BROKER, TOPIC, AdminClient, AdminError, UnsupportedApi
from kafkalite.controller.assignment import assign_replicas
from kafkalite.protocol import error_codes as E

TP = tuple[str, int]
FILE = "--reassignment-json-file"
# The throttles --execute --throttle sets and --verify clears (Kafka's names).
LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
LOG_DIRS_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"
LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"


def _read_json(path: str, option: str) -> Any:
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise click.BadParameter(f"{path}: {e}", param_hint=option) from None


def topics_to_move(path: str) -> list[str]:
    """--topics-to-move-json-file: {"topics": [{"topic": "foo"}, ...], "version": 1}."""
    data = _read_json(path, "--topics-to-move-json-file")
    try:
        names = [str(t["topic"]) for t in data["topics"]]
    except (KeyError, TypeError):
        raise click.BadParameter(f'{path} is not {{"topics": [{{"topic": "foo"}}], "version": 1}}',
                                 param_hint="--topics-to-move-json-file") from None
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise click.BadParameter("List of topics to reassign contains duplicate entries: "
                                 + ",".join(duplicates), param_hint="--topics-to-move-json-file")
    return names


def brokers(text: str) -> list[int]:
    try:
        ids = [int(b) for b in text.split(",") if b.strip()]
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a list of broker ids",
                                 param_hint="--broker-list") from None
    duplicates = sorted({b for b in ids if ids.count(b) > 1})
    if duplicates:
        raise click.BadParameter(f"Broker list contains duplicate entries: {','.join(map(str, duplicates))}",
                                 param_hint="--broker-list")
    return ids


def reassignment(path: str) -> dict[TP, list[int]]:
    """--reassignment-json-file: {"version": 1, "partitions": [{"topic", "partition", "replicas",
    "log_dirs"?}]}, checked as Kafka's parsePartitionReassignmentData checks it."""
    data = _read_json(path, "--reassignment-json-file")
    out: dict[TP, list[int]] = {}
    try:
        for p in data["partitions"]:
            tp = (str(p["topic"]), int(p["partition"]))
            replicas = [int(r) for r in p["replicas"]]
            dirs = p.get("log_dirs")
            if dirs is not None and len(dirs) != len(replicas):
                raise click.BadParameter(f"Size of replicas list {replicas} is different from size of log "
                                         f"dirs list {dirs} for partition {topic_partition(*tp)}",
                                         param_hint=FILE)
            if dirs is not None and any(d != "any" for d in dirs):
                raise click.BadParameter("log_dirs other than \"any\" need AlterReplicaLogDirs, which this "
                                         "command does not send yet", param_hint=FILE)
            if len(set(replicas)) != len(replicas):
                raise click.BadParameter(f"Duplicate replica assignment found: {topic_partition(*tp)}: "
                                         f"{replicas}", param_hint=FILE)
            if tp in out:
                raise click.BadParameter(f"Duplicate reassignment of partition {topic_partition(*tp)}",
                                         param_hint=FILE)
            out[tp] = replicas
    except (KeyError, TypeError, ValueError) as e:
        if isinstance(e, click.BadParameter):
            raise
        raise click.BadParameter(f"{path} is not Kafka's reassignment file ({e})",
                                 param_hint=FILE) from None
    if not out:
        raise click.BadParameter("Partition reassignment list cannot be empty", param_hint=FILE)
    return out


def reassignment_json(assignment: Mapping[TP, Sequence[int]]) -> str:
    """Kafka's formatAsReassignmentJson: compact, partitions in order, log_dirs "any"."""
    partitions = [{"topic": t, "partition": p, "replicas": list(rs), "log_dirs": ["any"] * len(rs)}
                  for (t, p), rs in sorted(assignment.items())]
    return json.dumps({"version": 1, "partitions": partitions}, separators=(",", ":"))


def current_assignment(admin: AdminClient, topics: Iterable[str]) -> dict[TP, list[int]]:
    found = admin.describe_topics(sorted(set(topics)))
    return {(t, p.partition): list(p.replicas) for t, info in found.items() for p in info.partitions.values()}


def generate(admin: AdminClient, topics: Sequence[str], broker_ids: Sequence[int]) -> None:
    known = admin.describe_cluster().brokers
    missing = sorted(set(broker_ids) - set(known))
    if missing:
        raise AdminError(E.BROKER_NOT_AVAILABLE, f"The following brokers are not in the cluster: "
                                                 f"{','.join(map(str, missing))}")
    current = current_assignment(admin, topics)
    proposed: dict[TP, list[int]] = {}
    for topic in topics:
        parts = sorted(p for t, p in current if t == topic)
        factor = len(current[(topic, parts[0])])
        for p, replicas in assign_replicas(len(parts), factor, list(broker_ids)).items():
            proposed[(topic, p)] = replicas
    click.echo(f"Current partition replica assignment\n{reassignment_json(current)}\n")
    click.echo(f"Proposed partition reassignment configuration\n{reassignment_json(proposed)}")


def list_reassignments(admin: AdminClient) -> None:
    ongoing = admin.list_partition_reassignments(None)
    if not ongoing:
        click.echo("No partition reassignments found.")
        return
    click.echo("Current partition reassignment(s):")
    for tp, (replicas, adding, removing) in sorted(ongoing.items()):
        click.echo(f"{topic_partition(*tp)}: replicas: {_ids(replicas)}. adding: {_ids(adding)}. "
                   f"removing: {_ids(removing)}.")


def _ids(ids: Iterable[int]) -> str:
    return ",".join(map(str, ids))


def execute(admin: AdminClient, target: dict[TP, list[int]], throttle: int | None, additional: bool) -> None:
    if not additional and admin.list_partition_reassignments(None):
        raise AdminError(E.INVALID_REQUEST, "Cannot execute because there is an existing partition "
                                            "assignment. Use --additional to override this and create a new "
                                            "partition assignment in addition to the existing one.")
    current = current_assignment(admin, {t for t, _ in target})
    unknown = sorted(tp for tp in target if tp not in current)
    if unknown:
        raise AdminError(E.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition "
                                                       + ", ".join(topic_partition(*tp) for tp in unknown))
    click.echo("Current partition replica assignment\n\n"
               f"{reassignment_json({tp: current[tp] for tp in target})}\n\n"
               "Save this to use as the --reassignment-json-file option during rollback")
    if throttle is not None:
        moving = {tp: rs for tp, rs in target.items() if rs != current[tp]}
        set_throttles(admin, {tp: current[tp] for tp in moving}, moving, throttle)
        click.echo("Warning: You must run --verify periodically, until the reassignment completes, to "
                   "ensure the throttle is removed.")
        click.echo(f"The inter-broker throttle limit was set to {throttle} B/s")
    errors = {tp: e for tp, e in admin.alter_partition_reassignments(target).items() if e is not None}
    if errors:
        raise AdminError(next(iter(errors.values())).code, "Error reassigning partition(s):\n" + "\n".join(
            f"{topic_partition(*tp)}: {e}" for tp, e in sorted(errors.items())))
    plural = "" if len(target) == 1 else "s"
    click.echo(f"Successfully started partition reassignment{plural} for "
               + ",".join(topic_partition(*tp) for tp in sorted(target)))


def set_throttles(admin: AdminClient, current: Mapping[TP, Sequence[int]], target: Mapping[TP, Sequence[int]],
                  rate: int) -> None:
    """Kafka's modifyTopicThrottles and modifyInterBrokerThrottle: each moving partition's current
    replicas throttled as leaders, its new replicas as followers, and the rates on every broker
    that takes part."""
    leaders: dict[str, list[str]] = {}
    followers: dict[str, list[str]] = {}
    for (t, p), replicas in sorted(target.items()):
        leaders.setdefault(t, []).extend(f"{p}:{r}" for r in current[(t, p)])
        followers.setdefault(t, []).extend(f"{p}:{r}" for r in replicas if r not in current[(t, p)])
    for topic in sorted(leaders):
        admin.incremental_alter_configs(TOPIC, topic, {LEADER_REPLICAS: ",".join(leaders[topic]),
                                                       FOLLOWER_REPLICAS: ",".join(followers[topic])}, [])
    involved = sorted({r for tp in target for r in (*current[tp], *target[tp])})
    for broker in involved:
        rates = {LEADER_RATE: str(rate), FOLLOWER_RATE: str(rate)}
        admin.incremental_alter_configs(BROKER, str(broker), rates, [])


def clear_throttles(admin: AdminClient, topics: Iterable[str]) -> None:
    """Kafka's clearAllThrottles: the rates off every broker, the throttled replicas off the topics."""
    ids = sorted(admin.describe_cluster().brokers)
    click.echo(f"Clearing broker-level throttles on brokers {_ids(ids)}")
    try:
        for broker in ids:
            admin.incremental_alter_configs(BROKER, str(broker), {},
                                            [LEADER_RATE, FOLLOWER_RATE, LOG_DIRS_RATE])
        for topic in sorted(set(topics)):
            click.echo(f"Clearing topic-level throttles on topic {topic}")
            admin.incremental_alter_configs(TOPIC, topic, {}, [LEADER_REPLICAS, FOLLOWER_REPLICAS])
    except UnsupportedApi as e:  # a cluster without IncrementalAlterConfigs has no throttles to clear
        click.echo(f"WARN: throttles not cleared: {e}", err=True)


def verify(admin: AdminClient, target: dict[TP, list[int]], preserve_throttles: bool) -> bool:
    """Print each partition's state; True when every one is done as the file says."""
    ongoing = admin.list_partition_reassignments(sorted(target))
    current = current_assignment(admin, {t for t, _ in target})
    click.echo("Status of partition reassignment:")
    done = True
    for tp, replicas in sorted(target.items()):
        if tp in ongoing:
            done = False
            click.echo(f"Reassignment of partition {topic_partition(*tp)} is still in progress.")
        elif current.get(tp) == replicas:
            click.echo(f"Reassignment of partition {topic_partition(*tp)} is completed.")
        else:
            done = False
            click.echo(f"There is no active reassignment of partition {topic_partition(*tp)}, but replica "
                       f"set is {_ids(current.get(tp, []))} rather than {_ids(replicas)}.")
    if not ongoing and not preserve_throttles:
        clear_throttles(admin, {t for t, _ in target})
    return done


def cancel(admin: AdminClient, target: dict[TP, list[int]], preserve_throttles: bool) -> bool:
    ongoing = admin.list_partition_reassignments(sorted(target))
    active = sorted(tp for tp in target if tp in ongoing)
    ok = True
    if active:
        results = admin.alter_partition_reassignments({tp: None for tp in active})
        cancelled = [tp for tp in active if results.get(tp) is None]
        for tp in active:
            error = results.get(tp)
            if error is not None:
                ok = False
                click.echo(f"Error cancelling partition reassignment of {topic_partition(*tp)}: {error}")
        if cancelled:
            plural = "" if len(cancelled) == 1 else "s"
            click.echo(f"Successfully cancelled partition reassignment{plural} for: "
                       + ",".join(topic_partition(*tp) for tp in cancelled))
    else:
        click.echo("None of the specified partition reassignments are active.")
    if not preserve_throttles:
        clear_throttles(admin, {t for t, _ in target})
    return ok
