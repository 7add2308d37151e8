"""The operators' commands (``kafkalite topics``, ``consumer-groups``, ``configs``,
``leader-election``, ``reassign-partitions``) against a real cluster (kafkalite.testing, in
process, one per module) and against librdkafka's mock cluster: each command's output parsed and
checked against what confluent-kafka's clients see, offsets reset with every strategy (--dry-run
changing nothing, --execute committing), a partition moved, exit codes and one-line errors."""

from __future__ import annotations

import json
import re
import time

import pytest
from click.testing import CliRunner, Result
from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, Producer, TopicPartition
from confluent_kafka.admin import AdminClient as ConfluentAdmin

from kafkalite.cli import main
from kafkalite.testing import Cluster
from tests.support.wait import wait_for, wait_for_value

pytestmark = pytest.mark.integration

DAY_MS = 24 * 3600 * 1000


@pytest.fixture(scope="module")
def cluster():
    with Cluster(3, settings={"auto.leader.rebalance.enable": "false"}) as c:
        yield c


def kafkalite(cluster: Cluster | str, *args: str) -> Result:
    servers = cluster if isinstance(cluster, str) else cluster.bootstrap_servers
    command, *rest = args
    return CliRunner().invoke(main, [command, "--bootstrap-server", servers, *rest])


def topics(cluster: Cluster | str, *args: str) -> Result:
    return kafkalite(cluster, "topics", *args)


def groups(cluster: Cluster, *args: str) -> Result:
    return kafkalite(cluster, "consumer-groups", *args)


def configs(cluster: Cluster, *args: str) -> Result:
    return kafkalite(cluster, "configs", *args)


def elect(cluster: Cluster, *args: str) -> Result:
    return kafkalite(cluster, "leader-election", *args)


def ok(result: Result) -> str:
    assert result.exit_code == 0, (result.output, result.exception)
    return result.stdout


def failed(result: Result, *words: str) -> str:
    """The command failed with exit code 1 and one line on stderr naming ``words``."""
    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("Error")]
    assert len(lines) == 1 and all(w in lines[0] for w in words), result.stderr
    return lines[0]


def parse_describe(text: str) -> dict[str, dict]:
    """kafka-topics.sh --describe: {topic: {"PartitionCount": .., "Configs": {..}, "partitions":
    {p: {"Leader": .., "Replicas": [..], "Isr": [..]}}}}."""
    topics: dict[str, dict] = {}
    for line in text.splitlines():
        cells = line.strip("\t").split("\t")
        fields = dict(f.split(": ", 1) if ": " in f else (f.rstrip(":"), "") for f in cells)
        if not line.startswith("\t"):
            configs = dict(c.split("=", 1) for c in fields["Configs"].split(",") if c)
            topics[fields["Topic"]] = {"PartitionCount": int(fields["PartitionCount"]),
                                       "ReplicationFactor": int(fields["ReplicationFactor"]),
                                       "TopicId": fields.get("TopicId"), "Configs": configs, "partitions": {}}
        else:
            ints = lambda s: [int(x) for x in s.split(",") if x]  # noqa: E731
            topics[fields["Topic"]]["partitions"][int(fields["Partition"])] = {
                "Leader": -1 if fields["Leader"] == "none" else int(fields["Leader"]),
                "Replicas": ints(fields["Replicas"]), "Isr": ints(fields["Isr"])}
    return topics


def parse_table(text: str) -> list[dict[str, str]]:
    """An aligned table (the first line of headers after a blank line): its rows as dicts, each cell
    cut where its header starts."""
    lines = [line for line in text.splitlines() if line.strip()]
    start = next(i for i, line in enumerate(lines) if line.startswith("GROUP "))
    header = lines[start]
    names = header.split()
    starts = [header.index(" " + n + " ") + 1 if i else 0 for i, n in enumerate(names[:-1])] + \
             [header.rindex(names[-1])]
    rows = []
    for line in lines[start + 1:]:
        cells = [line[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
        rows.append(dict(zip(names, cells, strict=True)))
    return rows


# --- topics ----------------------------------------------------------------------------------


def test_topics_create_describe_alter_delete(cluster):
    assert ok(topics(cluster, "--create", "--topic", "life", "--partitions", "2",
                        "--replication-factor", "2", "--config", "retention.ms=60000",
                        "--config", "cleanup.policy=compact")) == "Created topic life.\n"
    failed(topics(cluster, "--create", "--topic", "life", "--partitions", "1"), "TOPIC_ALREADY_EXISTS")
    ok(topics(cluster, "--create", "--topic", "life", "--if-not-exists"))
    assert "life" in ok(topics(cluster, "--list")).split()

    described = parse_describe(ok(topics(cluster, "--describe", "--topic", "life")))
    life = described["life"]
    assert (life["PartitionCount"], life["ReplicationFactor"]) == (2, 2)
    assert life["Configs"]["retention.ms"] == "60000" and life["Configs"]["cleanup.policy"] == "compact"
    # What confluent-kafka's own Metadata shows.
    confluent = ConfluentAdmin({"bootstrap.servers": cluster.bootstrap_servers})
    metadata = confluent.list_topics("life", timeout=10)
    for p, info in metadata.topics["life"].partitions.items():
        assert life["partitions"][p] == {"Leader": info.leader, "Replicas": info.replicas, "Isr": info.isrs}

    assert ok(topics(cluster, "--alter", "--topic", "life", "--partitions", "4")) == ""
    assert parse_describe(ok(topics(cluster, "--describe", "--topic", "life")))["life"][
        "PartitionCount"] == 4
    failed(topics(cluster, "--alter", "--topic", "life", "--partitions", "3"), "INVALID_PARTITIONS",
           "can only be increased")

    ok(topics(cluster, "--delete", "--topic", "life"))
    assert wait_for(lambda: "life" not in ok(topics(cluster, "--list")).split(), timeout=10)
    failed(topics(cluster, "--delete", "--topic", "life"), "does not exist")
    ok(topics(cluster, "--delete", "--topic", "life", "--if-exists"))


def test_topics_list_and_describe_filter(cluster):
    cluster.create_topic("filter-a", 1, 1)
    cluster.create_topic("filter-b", 1, 1)
    listed = ok(topics(cluster, "--list", "--topic", "filter-.*")).split()
    assert listed == ["filter-a", "filter-b"]
    everything = ok(topics(cluster, "--list")).split()
    assert "__consumer_offsets" in everything
    assert "__consumer_offsets" not in ok(topics(cluster, "--list", "--exclude-internal")).split()
    assert sorted(parse_describe(ok(topics(cluster, "--describe", "--topic", "filter-.*")))) == listed
    # Every partition has its leader: --unavailable-partitions prints nothing.
    assert ok(topics(cluster, "--describe", "--unavailable-partitions")) == ""


def test_topics_usage_errors_exit_2(cluster):
    result = topics(cluster, "--list", "--describe")
    assert result.exit_code == 2 and "exactly one action" in result.stderr
    assert topics(cluster, "--create").exit_code == 2
    assert CliRunner().invoke(main, ["topics", "-h"]).exit_code == 0


def test_topics_replica_assignment(cluster):
    ok(topics(cluster, "--create", "--topic", "placed", "--replica-assignment", "3:1,2:3"))
    placed = parse_describe(ok(topics(cluster, "--describe", "--topic", "placed")))["placed"]
    assert [placed["partitions"][p]["Replicas"] for p in (0, 1)] == [[3, 1], [2, 3]]


# --- consumer groups -------------------------------------------------------------------------


def produce(servers: str, topic: str, per_partition: int, partitions: int,
            timestamps: list[int] | None = None) -> None:
    producer = Producer({"bootstrap.servers": servers, "linger.ms": 0})
    for p in range(partitions):
        for i in range(per_partition):
            producer.produce(topic, f"{p}-{i}".encode(), partition=p,
                             timestamp=timestamps[i] if timestamps else 0)
    assert producer.flush(10) == 0


def committed(cluster: Cluster, group: str) -> dict[tuple[str, int], int]:
    """The group's offsets as confluent-kafka's AdminClient reads them."""
    admin = ConfluentAdmin({"bootstrap.servers": cluster.bootstrap_servers})
    result = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(10)
    return {(tp.topic, tp.partition): tp.offset for tp in result.topic_partitions if tp.offset >= 0}


@pytest.fixture(scope="module")
def lagging(cluster):
    """Group "lagging" on topic "lag" (3 partitions of 10 records): consumed and committed up to
    offsets 10, 4 and 0 by a member still in the group; yields the consumer."""
    cluster.create_topic("lag", 3, 2)
    produce(cluster.bootstrap_servers, "lag", 10, 3)
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "lagging",
                         "client.id": "lag-reader", "enable.auto.commit": False,
                         "auto.offset.reset": "earliest"})
    consumer.subscribe(["lag"])
    assert wait_for(lambda: consumer.poll(0.2) is not None and bool(consumer.assignment()), timeout=20)
    consumer.commit(offsets=[TopicPartition("lag", 0, 10), TopicPartition("lag", 1, 4)], asynchronous=False)
    try:
        yield consumer
    finally:
        consumer.close()


def test_describe_shows_offsets_and_lag_per_partition(cluster, lagging):
    out = ok(groups(cluster, "--describe", "--group", "lagging"))
    rows = {int(r["PARTITION"]): r for r in parse_table(out)}
    assert sorted(rows) == [0, 1, 2]
    assert [(rows[p]["CURRENT-OFFSET"], rows[p]["LOG-END-OFFSET"], rows[p]["LAG"]) for p in (0, 1, 2)] == [
        ("10", "10", "0"), ("4", "10", "6"), ("-", "10", "-")]
    member = lagging.memberid()
    assert {(r["GROUP"], r["TOPIC"], r["CONSUMER-ID"], r["CLIENT-ID"]) for r in rows.values()} == {
        ("lagging", "lag", member, "lag-reader")}
    assert all(r["HOST"].startswith("/127.0.0.1") for r in rows.values())

    members = parse_table(ok(groups(cluster, "--describe", "--group", "lagging", "--members")))
    assert [(m["CONSUMER-ID"], m["#PARTITIONS"]) for m in members] == [(member, "3")]
    state = parse_table(ok(groups(cluster, "--describe", "--group", "lagging", "--state")))
    assert [(s["STATE"], s["#MEMBERS"], s["ASSIGNMENT-STRATEGY"]) for s in state] == [
        ("Stable", "1", "range")]
    listed = parse_table(ok(groups(cluster, "--list", "--state")))
    assert {"GROUP": "lagging", "STATE": "Stable"} in listed
    assert "lagging" in ok(groups(cluster, "--list")).split()


def test_an_active_group_is_not_reset(cluster, lagging):
    failed(groups(cluster, "--reset-offsets", "--group", "lagging", "--topic", "lag",
                     "--to-earliest", "--execute"), "can only be reset if the group 'lagging' is inactive",
           "Stable")
    assert committed(cluster, "lagging") == {("lag", 0): 10, ("lag", 1): 4}


def reset(cluster: Cluster, group: str, *args: str) -> dict[tuple[str, int], int]:
    out = ok(groups(cluster, "--reset-offsets", "--group", group, *args))
    return {(r["TOPIC"], int(r["PARTITION"])): int(r["NEW-OFFSET"]) for r in parse_table(out)
            if r["GROUP"] == group}


def test_reset_offsets_with_each_strategy(cluster):
    cluster.create_topic("resets", 2, 2)
    produce(cluster.bootstrap_servers, "resets", 10, 2)
    ok(groups(cluster, "--reset-offsets", "--group", "resetting", "--topic", "resets",
                 "--to-offset", "5", "--execute"))
    start = {("resets", 0): 5, ("resets", 1): 5}
    assert committed(cluster, "resetting") == start

    # --dry-run (and no --execute) print the plan and change nothing.
    both = {("resets", 0): 0, ("resets", 1): 0}
    assert reset(cluster, "resetting", "--topic", "resets", "--to-earliest", "--dry-run") == both
    assert reset(cluster, "resetting", "--topic", "resets", "--to-earliest") == both
    assert committed(cluster, "resetting") == start

    cases = [
        (["--topic", "resets", "--to-earliest"], {("resets", 0): 0, ("resets", 1): 0}),
        (["--topic", "resets", "--to-latest"], {("resets", 0): 10, ("resets", 1): 10}),
        (["--topic", "resets:1", "--shift-by", "-3"], {("resets", 1): 7}),
        (["--all-topics", "--shift-by", "-8"], {("resets", 0): 2, ("resets", 1): 0}),  # 7-8: kept at 0
        (["--all-topics", "--shift-by", "100"], {("resets", 0): 10, ("resets", 1): 10}),  # kept at the end
        (["--topic", "resets", "--to-offset", "4"], {("resets", 0): 4, ("resets", 1): 4}),
        (["--topic", "resets:0", "--to-current"], {("resets", 0): 4}),
    ]
    expected = dict(start)
    for args, new in cases:
        assert reset(cluster, "resetting", *args, "--dry-run") == new, args
        assert committed(cluster, "resetting") == expected, args
        assert reset(cluster, "resetting", *args, "--execute") == new, args
        expected.update(new)
        assert committed(cluster, "resetting") == expected, args


def test_reset_offsets_to_a_datetime_or_by_a_duration(cluster):
    cluster.create_topic("times", 1, 1)
    now = int(time.time() * 1000)
    # Records at 1970-01-01T00:00:01, :02, :03 UTC, then three days ago and an hour ago.
    produce(cluster.bootstrap_servers, "times", 5, 1, [1000, 2000, 3000, now - 3 * DAY_MS, now - 3600_000])
    cases = [
        ("--to-datetime", "1970-01-01T00:00:02.000", 1),
        ("--to-datetime", "1970-01-01T00:00:01.500", 1),
        ("--to-datetime", "1970-01-01T01:00:03.000+01:00", 2),
        ("--to-datetime", "1970-01-01T00:00:00.000Z", 0),
        ("--to-datetime", "2999-01-01T00:00:00.000", 5),  # after every record: the log end
        ("--by-duration", "P1D", 4),
        ("--by-duration", "P4DT0H", 3),
    ]
    for option, value, offset in cases:
        new = reset(cluster, "timed", "--topic", "times", option, value, "--execute")
        assert new == {("times", 0): offset}, value
        assert committed(cluster, "timed") == {("times", 0): offset}
    bad = groups(cluster, "--reset-offsets", "--group", "timed", "--topic", "times",
                    "--to-datetime", "yesterday")
    assert bad.exit_code == 2 and "YYYY-MM-DDTHH:mm:SS.sss" in bad.stderr


def test_delete_groups(cluster):
    cluster.create_topic("doomed", 1, 1)
    ok(groups(cluster, "--reset-offsets", "--group", "doomed", "--topic", "doomed",
                 "--to-earliest", "--execute"))
    assert "doomed" in ok(groups(cluster, "--list")).split()
    out = ok(groups(cluster, "--delete", "--group", "doomed"))
    assert out == "Deletion of requested consumer groups ('doomed') was successful.\n"
    assert "doomed" not in ok(groups(cluster, "--list")).split()
    again = groups(cluster, "--delete", "--group", "doomed")
    assert again.exit_code == 1 and "GROUP_ID_NOT_FOUND" in again.stdout
    gone = groups(cluster, "--describe", "--group", "doomed")
    assert gone.exit_code == 1 and "Consumer group 'doomed' does not exist." in gone.stderr


def test_an_active_group_is_not_deleted(cluster, lagging):
    result = groups(cluster, "--delete", "--group", "lagging")
    assert result.exit_code == 1 and "NON_EMPTY_GROUP" in result.stdout


# --- configs ---------------------------------------------------------------------------------


def test_configs_describe(cluster):
    cluster.create_topic("configured", 1, 1, configs={"retention.ms": "120000"})
    out = ok(configs(cluster, "--describe", "--entity-type", "topics", "--entity-name", "configured"))
    assert out.splitlines() == [
        "Dynamic configs for topic configured are:",
        "  retention.ms=120000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=120000, "
        "DEFAULT_CONFIG:log.retention.hours=168}"]
    assert ok(configs(cluster, "--describe", "--topic", "configured")) == out
    every = ok(configs(cluster, "--describe", "--topic", "configured", "--all")).splitlines()
    assert every[0] == "All configs for topic configured are:"
    names = [re.match(r"  ([^=]+)=", line).group(1) for line in every[1:]]  # type: ignore[union-attr]
    assert names == sorted(names) and {"retention.ms", "segment.bytes", "cleanup.policy"} <= set(names)
    assert ok(configs(cluster, "--describe", "--broker", "2")) == "Dynamic configs for broker 2 are:\n"
    brokers = ok(configs(cluster, "--describe", "--entity-type", "brokers", "--all"))
    assert [line for line in brokers.splitlines() if not line.startswith("  ")] == [
        f"All configs for broker {b} are:" for b in (1, 2, 3)]
    failed(configs(cluster, "--describe", "--topic", "no-such-topic"), "UNKNOWN_TOPIC_OR_PARTITION")
    assert configs(cluster, "--describe", "--broker", "one").exit_code == 2


# --- configs --alter -------------------------------------------------------------------------


def described(cluster: Cluster, *entity: str) -> dict[str, str]:
    """configs --describe's entries: {name: the rest of the line}."""
    lines = ok(configs(cluster, "--describe", *entity)).splitlines()[1:]
    return dict(line.strip().split("=", 1) for line in lines)


def test_configs_alter_a_topic(cluster):
    cluster.create_topic("altered", 1, 1)
    out = ok(configs(cluster, "--alter", "--topic", "altered", "--add-config",
                     "retention.ms=1000,cleanup.policy=[compact,delete]"))
    assert out == "Completed updating config for topic altered.\n"
    assert wait_for(lambda: {"retention.ms", "cleanup.policy"} <= described(cluster, "--topic", "altered")
                    .keys(), timeout=10)
    entries = described(cluster, "--topic", "altered")
    assert entries["retention.ms"].startswith(
        "1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000")
    assert entries["cleanup.policy"].startswith("compact,delete ")
    ok(configs(cluster, "--alter", "--topic", "altered", "--delete-config", "retention.ms"))
    assert wait_for(lambda: "retention.ms" not in described(cluster, "--topic", "altered"), timeout=10)
    failed(configs(cluster, "--alter", "--topic", "altered", "--delete-config", "retention.ms"),
           "INVALID_CONFIG", "Invalid config(s): retention.ms")
    failed(configs(cluster, "--alter", "--topic", "altered", "--add-config", "retention.ms=soon"),
           "INVALID_CONFIG")
    failed(configs(cluster, "--alter", "--topic", "no-such-topic", "--add-config", "retention.ms=1"),
           "UNKNOWN_TOPIC_OR_PARTITION")


def test_configs_of_a_group(cluster):
    out = ok(configs(cluster, "--alter", "--group", "workers", "--add-config",
                     "share.record.lock.duration.ms=20000,share.auto.offset.reset=earliest"))
    assert out == "Completed updating config for group workers.\n"
    assert wait_for(lambda: {"share.record.lock.duration.ms", "share.auto.offset.reset"}
                    <= described(cluster, "--entity-type", "groups", "--entity-name", "workers").keys(),
                    timeout=10)
    entries = described(cluster, "--group", "workers")
    assert entries["share.record.lock.duration.ms"].startswith(
        "20000 sensitive=false synonyms={GROUP_CONFIG:share.record.lock.duration.ms=20000")
    ok(configs(cluster, "--alter", "--group", "workers", "--delete-config", "share.auto.offset.reset"))
    assert wait_for(lambda: "share.auto.offset.reset" not in described(cluster, "--group", "workers"),
                    timeout=10)
    failed(configs(cluster, "--alter", "--group", "workers", "--add-config", "share.isolation.level=dirty"),
           "INVALID_CONFIG")


def test_configs_alter_brokers(cluster):
    out = ok(configs(cluster, "--alter", "--broker", "2", "--add-config", "log.cleaner.threads=2"))
    assert out == "Completed updating config for broker 2.\n"
    assert wait_for(lambda: described(cluster, "--broker", "2").get("log.cleaner.threads", "").startswith(
        "2 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.cleaner.threads=2"), timeout=10)
    out = ok(configs(cluster, "--alter", "--entity-type", "brokers", "--entity-default", "--add-config",
                     "log.retention.ms=3600000"))
    assert out == "Completed updating default config for brokers in the cluster.\n"
    assert wait_for(lambda: "log.retention.ms" in described(cluster, "--broker-defaults"), timeout=10)
    # Every broker applies the cluster-wide default, below its own settings.
    wanted = "3600000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=3600000"
    assert wait_for(lambda: described(cluster, "--broker", "3", "--all")["log.retention.ms"]
                    .startswith(wanted), timeout=10)
    failed(configs(cluster, "--alter", "--broker", "2", "--add-config", "broker.id=7"), "broker.id")
    ok(configs(cluster, "--alter", "--broker", "2", "--delete-config", "log.cleaner.threads"))
    ok(configs(cluster, "--alter", "--broker-defaults", "--delete-config", "log.retention.ms"))
    assert wait_for(lambda: not described(cluster, "--broker", "2")
                    and not described(cluster, "--broker-defaults"), timeout=10)


# --- leader election -------------------------------------------------------------------------


def test_preferred_leader_election(tmp_path):
    """A cluster of its own: a broker killed and restarted leaves its preferred partitions led by
    others until the election."""
    with Cluster(3, settings={"auto.leader.rebalance.enable": "false"}, offsets_topic=False) as cluster:
        elections(cluster, tmp_path)


def all_in_sync(cluster: Cluster) -> bool:
    described = parse_describe(ok(topics(cluster, "--describe")))
    partitions = [p for t in described.values() for p in t["partitions"].values()]
    return all(sorted(p["Isr"]) == sorted(p["Replicas"]) for p in partitions)


def elections(cluster: Cluster, tmp_path) -> None:
    cluster.create_topic("elect", assignment={0: [2, 3], 1: [3, 2]})
    cluster.create_topic("other", 3, 3)
    cluster.kill(2)
    assert wait_for(lambda: cluster.leader("elect", 0) == 3, timeout=10)
    cluster.restart(2)
    assert wait_for(lambda: all_in_sync(cluster), timeout=20)
    assert cluster.leader("elect", 0) == 3  # the preferred replica is back, but not the leader

    out = ok(elect(cluster, "--election-type", "PREFERRED", "--topic", "elect",
                       "--partition", "0"))
    assert out == "Successfully completed leader election (PREFERRED) for partitions elect-0\n"
    assert wait_for(lambda: cluster.leader("elect", 0) == 2, timeout=10)

    listed = tmp_path / "partitions.json"
    listed.write_text(json.dumps({"partitions": [{"topic": "elect", "partition": 0},
                                                 {"topic": "elect", "partition": 1}]}))
    out = ok(elect(cluster, "--election-type", "preferred", "--path-to-json-file",
                       str(listed)))
    assert out == "Valid replica already elected for partitions elect-0, elect-1\n"
    out = ok(elect(cluster, "--election-type", "PREFERRED", "--all-topic-partitions"))
    assert "elect-" not in out  # already led by their preferred replicas: not in the answer
    def preferred_leaders() -> bool:  # once every broker has the controller's news
        other = parse_describe(ok(topics(cluster, "--describe", "--topic", "other")))["other"]
        return all(p["Leader"] == p["Replicas"][0] for p in other["partitions"].values())

    assert wait_for(preferred_leaders, timeout=10)

    result = elect(cluster, "--election-type", "UNCLEAN", "--topic", "elect",
                       "--partition", "9")
    assert result.stdout.startswith("Error completing leader election (UNCLEAN) for partition: elect-9: "
                                    "UNKNOWN_TOPIC_OR_PARTITION")
    failed(result, "1 replica(s) could not be elected")
    assert elect(cluster, "--election-type", "PREFERRED", "--topic", "elect").exit_code == 2


# --- reassign-partitions ---------------------------------------------------------------------


def reassign(cluster: Cluster, *args: str) -> Result:
    return kafkalite(cluster, "reassign-partitions", *args)


def test_reassign_partitions_generate_execute_verify(cluster, tmp_path):
    cluster.create_topic("moved", assignment={0: [1, 2], 1: [2, 1]})
    produce(cluster.bootstrap_servers, "moved", 5, 2)
    to_move = tmp_path / "topics.json"
    to_move.write_text(json.dumps({"topics": [{"topic": "moved"}], "version": 1}))
    lines = ok(reassign(cluster, "--generate", "--topics-to-move-json-file", str(to_move), "--broker-list",
                        "2,3")).splitlines()
    assert (lines[0], lines[2], lines[3]) == ("Current partition replica assignment", "",
                                              "Proposed partition reassignment configuration")
    current, proposed = json.loads(lines[1]), json.loads(lines[4])
    assert current == {"version": 1, "partitions": [
        {"topic": "moved", "partition": 0, "replicas": [1, 2], "log_dirs": ["any", "any"]},
        {"topic": "moved", "partition": 1, "replicas": [2, 1], "log_dirs": ["any", "any"]}]}
    assert [(p["topic"], p["partition"]) for p in proposed["partitions"]] == [("moved", 0), ("moved", 1)]
    assert all(sorted(p["replicas"]) == [2, 3] for p in proposed["partitions"])

    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "moved", "partition": 0,
                                                              "replicas": [2, 3]}]}))
    out = ok(reassign(cluster, "--execute", "--reassignment-json-file", str(plan))).splitlines()
    assert out[0] == "Current partition replica assignment"
    assert json.loads(out[2]) == {"version": 1, "partitions": [
        {"topic": "moved", "partition": 0, "replicas": [1, 2], "log_dirs": ["any", "any"]}]}
    assert out[4] == "Save this to use as the --reassignment-json-file option during rollback"
    assert out[-1] == "Successfully started partition reassignment for moved-0"

    def verified() -> str | None:
        result = reassign(cluster, "--verify", "--reassignment-json-file", str(plan))
        return result.stdout if result.exit_code == 0 else None

    out_verify = wait_for_value(verified, timeout=30)
    assert out_verify is not None
    assert out_verify.splitlines() == ["Status of partition reassignment:",
                                       "Reassignment of partition moved-0 is completed.",
                                       "Clearing broker-level throttles on brokers 1,2,3",
                                       "Clearing topic-level throttles on topic moved"]
    # Done at the controller; the broker answering Metadata learns it by its UpdateMetadata.
    assert wait_for(lambda: parse_describe(ok(topics(cluster, "--describe", "--topic", "moved")))[
        "moved"]["partitions"][0]["Replicas"] == [2, 3], timeout=20)
    assert ok(reassign(cluster, "--list")) == "No partition reassignments found.\n"
    assert ok(reassign(cluster, "--cancel", "--reassignment-json-file", str(plan))).splitlines()[0] == (
        "None of the specified partition reassignments are active.")
    # Every record acknowledged before the move is still there, read from the new replicas' leader.
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "after-move",
                         "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition("moved", 0, 0)])
        got: list[bytes] = []

        def take() -> bool:
            message = consumer.poll(0.2)
            if message is not None and not message.error():
                got.append(message.value())
            return len(got) >= 5

        assert wait_for(take, timeout=20)
        assert got == [f"0-{i}".encode() for i in range(5)]
    finally:
        consumer.close()


def test_reassign_partitions_refusals(cluster, tmp_path):
    cluster.create_topic("unmoved", assignment={0: [1, 2]})
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "unmoved", "partition": 0,
                                                              "replicas": [1, 9]}]}))
    failed(reassign(cluster, "--execute", "--reassignment-json-file", str(plan)),
           "INVALID_REPLICA_ASSIGNMENT")
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "unmoved", "partition": 0,
                                                              "replicas": [1, 1]}]}))
    bad = reassign(cluster, "--execute", "--reassignment-json-file", str(plan))
    assert bad.exit_code == 2 and "Duplicate replica assignment found: unmoved-0" in bad.stderr
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "unmoved", "partition": 5,
                                                              "replicas": [1, 2]}]}))
    failed(reassign(cluster, "--execute", "--reassignment-json-file", str(plan)), "unmoved-5")
    # A partition not being moved: --verify says the replicas differ, and fails.
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "unmoved", "partition": 0,
                                                              "replicas": [2, 3]}]}))
    result = reassign(cluster, "--verify", "--reassignment-json-file", str(plan))
    assert result.exit_code == 1
    assert "There is no active reassignment of partition unmoved-0, but replica set is 1,2 rather than 2,3." \
        in result.stdout


def test_reassign_partitions_with_a_throttle(cluster, tmp_path):
    cluster.create_topic("throttled", assignment={0: [1, 2]})
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "throttled", "partition": 0,
                                                              "replicas": [3, 2]}]}))
    out = ok(reassign(cluster, "--execute", "--reassignment-json-file", str(plan), "--throttle", "50000000"))
    assert "The inter-broker throttle limit was set to 50000000 B/s" in out
    assert "--verify periodically" in out
    rates = described(cluster, "--broker", "3")
    assert rates["follower.replication.throttled.rate"].startswith("50000000 ")
    assert rates["leader.replication.throttled.rate"].startswith("50000000 ")
    topic = described(cluster, "--topic", "throttled")
    assert topic["leader.replication.throttled.replicas"].startswith("0:1,0:2 ")
    assert topic["follower.replication.throttled.replicas"].startswith("0:3 ")
    assert wait_for(lambda: reassign(cluster, "--verify", "--reassignment-json-file", str(plan))
                    .exit_code == 0, timeout=30)
    # --verify cleared the throttles once the move was done.
    assert wait_for(lambda: not described(cluster, "--broker", "3")
                    and not described(cluster, "--topic", "throttled"), timeout=10)


# --- any Kafka-protocol cluster --------------------------------------------------------------


def test_topics_list_and_describe_on_librdkafkas_mock_cluster():
    host = Producer({"test.mock.num.brokers": 3, "bootstrap.servers": "unused:9092", "log_level": 3})
    try:
        metadata = host.list_topics("mocked", timeout=10)  # the mock creates it when asked
        servers = ",".join(f"{b.host}:{b.port}" for b in metadata.brokers.values())
        assert ok(topics(servers, "--list")).split() == ["mocked"]
        described = parse_describe(ok(topics(servers, "--describe", "--topic", "mocked")))
        mocked = metadata.topics["mocked"]
        assert described["mocked"]["PartitionCount"] == len(mocked.partitions)
        for p, info in mocked.partitions.items():
            assert described["mocked"]["partitions"][p] == {"Leader": info.leader, "Replicas": info.replicas,
                                                            "Isr": info.isrs}
        # The mock serves no CreateTopics: said so, by Kafka's error name.
        failed(topics(servers, "--create", "--topic", "new"), "UNSUPPORTED_VERSION", "CreateTopics")
    finally:
        host.flush(5)
        del host


def test_command_config_logs_in_over_sasl_as_kafkas_tools_do(tmp_path):
    """--command-config with Kafka's client settings (security.protocol, sasl.mechanism,
    sasl.jaas.config) against a SASL_PLAINTEXT listener; a wrong password and no login refused."""
    from tests.support.brokers import running_broker

    users = tmp_path / "users.properties"
    users.write_text("admin=admin-secret\n")
    jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="{}";'

    def client_config(name: str, password: str) -> str:
        path = tmp_path / name
        path.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                        f"sasl.jaas.config={jaas.format(password)}\n")
        return str(path)

    with running_broker(tmp_path / "broker", sasl_plain_users_file=str(users),
                        listener_security_protocol_map="PLAINTEXT:SASL_PLAINTEXT,INTERNAL:PLAINTEXT") as b:
        servers = f"127.0.0.1:{b.bound_port('PLAINTEXT')}"
        good = client_config("good.properties", "admin-secret")
        ok(topics(servers, "--create", "--topic", "secured", "--partitions", "2", "--replication-factor", "1",
                  "--command-config", good))
        assert "secured" in ok(topics(servers, "--list", "--command-config", good)).split()
        refused = topics(servers, "--list", "--command-config", client_config("bad.properties", "nope"))
        assert refused.exit_code == 1 and "Invalid username or password" in refused.output, refused.output
        wrong = topics(servers, "--list", "--command-config", str(tmp_path / "gssapi.properties"))
        assert wrong.exit_code == 2  # the file does not exist: click's usage error
        (tmp_path / "gssapi.properties").write_text("security.protocol=SASL_PLAINTEXT\n")
        gssapi = topics(servers, "--list", "--command-config", str(tmp_path / "gssapi.properties"))
        assert gssapi.exit_code == 1 and "sasl.mechanism GSSAPI is not supported" in gssapi.output
