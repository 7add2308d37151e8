"""``kafkalite bench``: the benchmarks' commands; results go to docs/benchmarks.md. The ``kafkalite``
command attaches this group (kafkalite/cli/bench.py). Each command parses its options and imports
its benchmark only when it runs: most need the ``bench`` extra, and without it the command says so
in one line."""

from __future__ import annotations

from collections.abc import Callable

import click

from kafkalite.common.cli_help import Group


class _BenchGroup(Group):
    """The benchmarks need the ``bench`` extra; without it, say so in one line."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except ModuleNotFoundError as e:
            if (e.name or "").split(".")[0] in ("kafkalite", "kafkalite_bench"):
                raise
            raise click.ClickException(
                f"kafkalite bench needs the bench extra (module {e.name!r} is missing): "
                "pip install 'kafkalite[bench]'") from None


@click.group(cls=_BenchGroup)
def bench() -> None:
    """Benchmarks; results go to docs/benchmarks.md."""


@bench.command("codec")
@click.option("--seconds", default=1.0, show_default=True, help="Time per measurement.")
@click.option("--repeat", default=5, show_default=True, help="Measurements per case (best kept).")
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the codec section of this markdown file (docs/benchmarks.md).")
def bench_codec(seconds: float, repeat: int, write_md: str | None) -> None:
    """Encode/decode speed of kafkalite's codec against kio, in one run."""
    from . import codec

    codec.run(seconds=seconds, repeat=repeat, write_md=write_md)


@bench.command("report")
@click.option("--records", default=10_000_000, show_default=True, help="Request-log records to generate.")
@click.option("--logs", "logs_dir", type=click.Path(file_okay=False), default=None,
              help="Where the generated logs are kept (reused while the same); default: a temp folder.")
@click.option("--repeat", default=2, show_default=True, help="Timed rounds; medians are reported.")
@click.option("--warmup", default=1, show_default=True, help="Untimed rounds first (the JIT's).")
@click.option("--driver-memory", default="8g", show_default=True, help="Spark driver memory.")
@click.option("--format", "log_format", type=click.Choice(["json", "csv"]), default="csv", show_default=True,
              help="The request log's format (request.log.format) the logs are generated in.")
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the report section of this markdown file (docs/benchmarks.md).")
def bench_report(records: int, logs_dir: str | None, repeat: int, warmup: int, driver_memory: str,
                 log_format: str, write_md: str | None) -> None:
    """The Spark report against DuckDB computing the same tables from the same files."""
    from .report import run

    run.run(records, logs_dir, repeat, warmup, driver_memory, write_md, log_format=log_format)


@bench.command("fuzz")
@click.option("--frames", default=1_000_000, show_default=True, help="Hostile frames to send.")
@click.option("--seed", default=1, show_default=True)
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the fuzz section of this markdown file (docs/benchmarks.md).")
def bench_fuzz(frames: int, seed: int, write_md: str | None) -> None:
    """Random and mutated frames at a broker process while a canary client checks every answer."""
    from .fuzz import run

    run.bench(frames, seed, write_md)


@bench.command("fuzz-coverage")
@click.option("--runs", default=1_000_000, show_default=True, help="Inputs for libFuzzer to try.")
@click.option("--corpus", type=click.Path(file_okay=False), default=None,
              help="Corpus directory (kept and grown between runs); default: a temp folder.")
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the fuzz-coverage section of this markdown file (docs/benchmarks.md).")
def bench_fuzz_coverage(runs: int, corpus: str | None, write_md: str | None) -> None:
    """Coverage-guided fuzzing (atheris) of frames, requests and SASL tokens."""
    from .fuzz import coverage

    raise SystemExit(coverage.bench(runs, corpus, write_md))


@bench.command("controller")
@click.option("--repeat", default=3, show_default=True, help="Timed runs per size, after a warm-up.")
@click.option("--sizes", default="1000,10000,100000", show_default=True, help="Partition counts.")
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the controller section of this markdown file (docs/benchmarks.md).")
def bench_controller(repeat: int, sizes: str, write_md: str | None) -> None:
    """Time for the controller to bring 3 brokers' metadata up to date (UpdateMetadata fan-out)."""
    from . import controller

    controller.run(tuple(int(s) for s in sizes.split(",")), repeat, write_md)


def _thread_settings(text: str) -> list[tuple[int, int]]:
    """``1+1,3+8`` -> [(1, 1), (3, 8)]: network threads + io threads, as the bench options take them."""
    return [(int(n), int(i)) for n, i in (t.split("+") for t in text.split(","))]


@bench.command("network-history")
@click.option("--revs", required=True, help="Comma-separated git revisions, oldest first.")
@click.option("--threads", default="1+1,3+8", show_default=True)
@click.option("--connections", default=50, show_default=True)
@click.option("--depth", default=1, show_default=True)
@click.option("--seconds", default=4.0, show_default=True)
@click.option("--warmup", default=1.0, show_default=True)
@click.option("--repeat", default=3, show_default=True)
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None)
def bench_network_history(revs: str, threads: str, connections: int, depth: int, seconds: float,
                          warmup: float, repeat: int, write_md: str | None) -> None:
    """kafkalite at several git revisions against the asyncio peer: what each change bought."""
    from .network import history, run

    command = (f"kafkalite bench network-history --revs {revs} --threads {threads} --connections "
               f"{connections} --depth {depth} --seconds {seconds:g} --warmup {warmup:g} --repeat {repeat}"
               + (f" --write {write_md}" if write_md else ""))
    history.run(revs.split(","), _thread_settings(threads),
                run.Scenario(connections, depth), seconds, warmup, repeat, write_md, command)


@bench.command("network")
@click.option("--servers", default="kafkalite,asyncio,uvloop,threaded,selectors", show_default=True,
              help="Also asyncio-bytes: asyncio answering precomputed bytes (no codec).")
@click.option("--connections", default="50", show_default=True,
              help="Connections; a comma list runs one scenario each (e.g. 1,50,500,5000).")
@click.option("--depth", default="1", show_default=True,
              help="Requests in flight per connection; a comma list multiplies the scenarios.")
@click.option("--mix", default="apiversions", show_default=True,
              help="Requests sent: apiversions, metadata (all topics), mixed (the two in turn), "
                   "metadata-produce (Metadata for 10 topics and a small Produce in turn); a comma "
                   "list multiplies the scenarios.")
@click.option("--topics", default=10, show_default=True, help="Topics in the metadata cache.")
@click.option("--seconds", default=5.0, show_default=True)
@click.option("--warmup", default=2.0, show_default=True)
@click.option("--threads", default="3+8", show_default=True,
              help="kafkalite's network+io threads; a comma list measures each (e.g. 1+1,3+8).")
@click.option("--repeat", default=1, show_default=True,
              help="Take the servers in turn this many times; figures are medians.")
@click.option("--observability", default="metrics", show_default=True,
              help="kafkalite's: off, metrics, log (metrics and the request log, json lines) or log-csv "
                   "(request.log.format=csv); a comma list measures each.")
@click.option("--idle", "idle_connections", default=0,
              help="Instead: memory per idle connection with this many connections open.")
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace this run's section of this markdown file (docs/benchmarks.md).")
@click.option("--section", default=None, help="The section's name (default: from the scenario).")
@click.option("--plot", type=click.Path(dir_okay=False), default=None, help="Write a PNG plot here.")
def bench_network(servers: str, connections: str, depth: str, mix: str, topics: int, seconds: float,
                  warmup: float, threads: str, repeat: int, observability: str, idle_connections: int,
                  write_md: str | None, section: str | None, plot: str | None) -> None:
    """kafkalite against peer servers (asyncio, uvloop, thread per connection, selectors loop)."""
    from .network import run
    from .network.workload import MIXES

    names = tuple(servers.split(","))
    out = (f" --write {write_md}" if write_md else "") + (f" --plot {plot}" if plot else "")
    if idle_connections:
        run.run_idle(names, idle_connections, write_md,
                     f"kafkalite bench network --servers {servers} --idle {idle_connections}{out}")
        return
    command = (f"kafkalite bench network --servers {servers} --connections {connections} --depth {depth} "
               f"--mix {mix} --topics {topics} --seconds {seconds:g} --warmup {warmup:g} --threads {threads} "
               f"--repeat {repeat}"
               + (f" --observability {observability}" if observability != "metrics" else "")
               + (f" --section {section}" if section else "") + out)
    for m in mix.split(","):
        if m not in MIXES or m == "all":
            raise click.BadParameter(f"unknown mix {m!r}", param_hint="--mix")
    scenarios = [run.Scenario(int(c), int(d), m, topics) for m in mix.split(",")
                 for c in connections.split(",") for d in depth.split(",")]
    thread_list = _thread_settings(threads)
    run.run(names, scenarios, thread_list, seconds, warmup, repeat, write_md,
            section or "-".join((connections.replace(",", "-"), "conn", depth.replace(",", "-"),
                                 "deep", mix.replace(",", "-"))),
            command, plot, tuple(observability.split(",")))


def _data_bench_options(size_default: str, size_help: str) -> Callable[[Callable[..., None]], click.Command]:
    """The options ``bench produce`` and ``bench fetch`` share."""
    def decorate(fn: Callable[..., None]) -> click.Command:
        for option in reversed((
            click.option("--servers", default="bare,kafkalite,mock", show_default=True,
                         help="Servers to measure: bare (answers only: the clients' ceiling), kafkalite, "
                              "mock (librdkafka's mock cluster)."),
            click.option("--seconds", default=3.0, show_default=True, help="Time per measurement."),
            click.option("--rounds", default=2, show_default=True,
                         help="Take the servers in turn this many times (order reversed every other "
                              "round); figures are medians."),
            click.option("--depth", default=4, show_default=True,
                         help="Requests in flight for the raw Produce sender and Fetch reader."),
            click.option("--size", default=size_default, show_default=True, help=size_help),
            click.option("--pin/--no-pin", default=True, show_default=True,
                         help="Servers on core 0, clients on core 1."),
            click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
                         help="Replace this benchmark's section of this markdown file (docs/benchmarks.md)."),
        )):
            fn = option(fn)
        return bench.command(fn.__name__.replace("bench_", ""))(fn)
    return decorate


def _data_bench(kind: str, servers: str, seconds: float, rounds: int, depth: int, size: str, pin: bool,
                write_md: str | None) -> None:
    from .data import run

    try:
        size_bytes = run.parse_size(size)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--size") from None
    names = tuple(servers.split(","))
    unknown = set(names) - {"bare", "kafkalite", "mock"}
    if unknown:
        raise click.BadParameter(f"unknown servers: {', '.join(sorted(unknown))}", param_hint="--servers")
    command = (f"kafkalite bench {kind} --servers {servers} --seconds {seconds:g} --rounds {rounds} "
               f"--depth {depth} --size {size}" + ("" if pin else " --no-pin")
               + (f" --write {write_md}" if write_md else ""))
    opts = run.Options(servers=names, seconds=seconds, rounds=rounds, depth=depth, size=size_bytes, pin=pin)
    body = (run.produce if kind == "produce" else run.fetch)(opts, write_md, command)
    click.echo(body)


@_data_bench_options("500MB", "Bytes to produce to kafkalite while its RSS is sampled (the issue's "
                              "figure: 5GB); 0 skips it.")
def bench_produce(servers: str, seconds: float, rounds: int, depth: int, size: str, pin: bool,
                  write_md: str | None) -> None:
    """Produce to kafkalite and to librdkafka's mock cluster with the same clients: confluent-kafka
    throughput and latency, raw 1 MiB requests, broker RSS while producing --size."""
    _data_bench("produce", servers, seconds, rounds, depth, size, pin, write_md)


@_data_bench_options("500MB", "Bytes of kafkalite's log to write and read back whole (the issue's "
                              "figure: 2GB); 0 skips it.")
def bench_fetch(servers: str, seconds: float, rounds: int, depth: int, size: str, pin: bool,
                write_md: str | None) -> None:
    """Fetch from kafkalite and from librdkafka's mock cluster with the same clients, against the
    loopback ceiling (sendfile -> recv_into); kafkalite also reading a --size log whole."""
    _data_bench("fetch", servers, seconds, rounds, depth, size, pin, write_md)


@bench.command("txn")
@click.option("--servers", default="kafkalite,mock", show_default=True,
              help="Servers to measure: kafkalite, mock (librdkafka's mock cluster).")
@click.option("--sizes", default="1,100,10000", show_default=True, help="Records per transaction.")
@click.option("--seconds", default=5.0, show_default=True, help="Time per produce measurement.")
@click.option("--records", default=30_000, show_default=True,
              help="The consumed log's size in records (the mock keeps 5 MiB per partition).")
@click.option("--rounds", default=2, show_default=True,
              help="Take the servers in turn this many times (order reversed every other round).")
@click.option("--pin/--no-pin", default=True, show_default=True, help="Servers on core 0, clients on core 1.")
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the transactions section of this markdown file (docs/benchmarks.md).")
def bench_txn(servers: str, sizes: str, seconds: float, records: int, rounds: int, pin: bool,
              write_md: str | None) -> None:
    """Transactional produce (transactions of 1, 100, 10,000 records: records/s, commit p50/p99)
    and read_committed against read_uncommitted consumption, on kafkalite and librdkafka's mock."""
    from . import transactions

    names = tuple(servers.split(","))
    unknown = set(names) - {"kafkalite", "mock"}
    if unknown:
        raise click.BadParameter(f"unknown servers: {', '.join(sorted(unknown))}", param_hint="--servers")
    command = (f"kafkalite bench txn --servers {servers} --sizes {sizes} --seconds {seconds:g} "
               f"--records {records} --rounds {rounds}" + ("" if pin else " --no-pin")
               + (f" --write {write_md}" if write_md else ""))
    click.echo(transactions.run([int(x) for x in sizes.split(",")], names, seconds, records, rounds, pin,
                                write_md, command))


@bench.command("replication")
@click.option("--seconds", default=3.0, show_default=True,
              help="Seconds per throughput and latency measurement.")
@click.option("--rounds", default=3, show_default=True, help="Rounds (and failovers of each kind).")
@click.option("--session-timeout-ms", default=9000, show_default=True,
              help="broker.session.timeout.ms of the brokers (Kafka's default): how long a killed leader "
                   "goes unnoticed.")
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the replication section of this markdown file (docs/benchmarks.md).")
def bench_replication(seconds: float, rounds: int, session_timeout_ms: int, write_md: str | None) -> None:
    """acks=all with replication factor 3 against 1 on 3 broker processes, and the failover time
    after a leader's SIGKILL and after its graceful stop."""
    from . import replication

    command = (f"kafkalite bench replication --seconds {seconds:g} --rounds {rounds} "
               f"--session-timeout-ms {session_timeout_ms}" + (f" --write {write_md}" if write_md else ""))
    replication.run(seconds, rounds, session_timeout_ms, write_md, command)


@bench.command("authorizer")
@click.option("--seconds", default=3.0, show_default=True, help="Seconds of producing per round.")
@click.option("--rounds", default=3, show_default=True, help="Rounds (each broker once per round).")
@click.option("--acls", "acl_count", default=1000, show_default=True, help="ACL bindings of the authorizer.")
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the authorizer section of this markdown file (docs/benchmarks.md).")
def bench_authorizer(seconds: float, rounds: int, acl_count: int, write_md: str | None) -> None:
    """Produce+fetch throughput with the StandardAuthorizer and 1,000 ACLs against none, and the
    cost of one check."""
    from . import authorizer

    command = (f"kafkalite bench authorizer --seconds {seconds:g} --rounds {rounds} --acls {acl_count}"
               + (f" --write {write_md}" if write_md else ""))
    authorizer.run(seconds, rounds, acl_count, write_md, command)


@bench.command("reassign")
@click.option("--size", default=1_000_000_000, show_default=True, help="Bytes in the partition moved.")
@click.option("--throttle", default=20_000_000, show_default=True,
              help="leader/follower.replication.throttled.rate of the throttled case, bytes/s.")
@click.option("--rate", default=200, show_default=True,
              help="Messages/s of the producer timed during the move.")
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the reassign section of this markdown file (docs/benchmarks.md).")
def bench_reassign(size: int, throttle: int, rate: int, write_md: str | None) -> None:
    """Reassignment of a big partition on 3 broker processes, with and without a replication
    throttle: time to complete and the producers' p99 during it."""
    from . import reassign

    command = (f"kafkalite bench reassign --size {size} --throttle {throttle} --rate {rate}"
               + (f" --write {write_md}" if write_md else ""))
    reassign.run(size, throttle, rate, write_md, command)


@bench.command("groups")
@click.option("--members", default="1,10,50", show_default=True,
              help="Group sizes to form and rebalance, comma-separated.")
@click.option("--seconds", default=3.0, show_default=True, help="Seconds of OffsetCommits per round.")
@click.option("--rounds", default=3, show_default=True, help="Rounds (servers in turn).")
@click.option("--heartbeat-ms", default=50, show_default=True,
              help="How often the members heartbeat while waiting for a rebalance.")
@click.option("--committers", default=8, show_default=True,
              help="Connections committing for one group at once (1: only the one-in-flight case).")
@click.option("--pin/--no-pin", default=True, show_default=True,
              help="Pin the server to core 0 (the members run on the others).")
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the groups section of this markdown file (docs/benchmarks.md).")
def bench_groups(members: str, seconds: float, rounds: int, heartbeat_ms: int, committers: int, pin: bool,
                 write_md: str | None) -> None:
    """A consumer group forming and rebalancing after a member leaves, and OffsetCommits to one
    coordinator, on kafkalite and on librdkafka's mock cluster."""
    from . import groups

    sizes = [int(x) for x in members.split(",") if x.strip()]
    command = (f"kafkalite bench groups --members {members} --seconds {seconds:g} --rounds {rounds} "
               f"--heartbeat-ms {heartbeat_ms} --committers {committers}" + ("" if pin else " --no-pin")
               + (f" --write {write_md}" if write_md else ""))
    groups.run(sizes, seconds, rounds, heartbeat_ms, pin, write_md, command, committers=committers)


def _server_names(servers: str) -> tuple[str, ...]:
    names = tuple(servers.split(","))
    unknown = set(names) - {"kafkalite", "mock"}
    if unknown:
        raise click.BadParameter(f"unknown servers: {', '.join(sorted(unknown))}", param_hint="--servers")
    return names


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


@bench.command("group-protocols")
@click.option("--servers", default="kafkalite,mock", show_default=True,
              help="Servers to measure: kafkalite, mock (librdkafka's mock cluster).")
@click.option("--members", default="1,10,50", show_default=True, help="Group sizes, comma-separated.")
@click.option("--protocols", default="classic,consumer", show_default=True,
              help="group.protocol values to measure.")
@click.option("--delays", default="3000,0", show_default=True,
              help="group.initial.rebalance.delay.ms of the servers (Kafka's default 3000), comma-separated.")
@click.option("--partitions", default=60, show_default=True, help="Partitions of the subscribed topic.")
@click.option("--rounds", default=3, show_default=True,
              help="Take the servers in turn this many times (order reversed every other round).")
@click.option("--per-process", default=10, show_default=True, help="Members hosted by each worker process.")
@click.option("--session-timeout-ms", default=45000, show_default=True,
              help="The classic members' session.timeout.ms (the mock's classic rebalances wait 1 s less).")
@click.option("--heartbeat-interval-ms", default=3000, show_default=True,
              help="The classic members' heartbeat.interval.ms.")
@click.option("--consumer-heartbeat-ms", default=5000, show_default=True,
              help="The servers' group.consumer.heartbeat.interval.ms (below 5000 kafkalite's minimum is "
                   "lowered with it).")
@click.option("--pin/--no-pin", default=True, show_default=True, help="Servers on core 0, members on core 1.")
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the group-protocols section of this markdown file (docs/benchmarks.md).")
def bench_group_protocols(servers: str, members: str, protocols: str, delays: str, partitions: int,
                          rounds: int, per_process: int, session_timeout_ms: int, heartbeat_interval_ms: int,
                          consumer_heartbeat_ms: int, pin: bool, write_md: str | None) -> None:
    """A group of 1, 10 and 50 confluent-kafka consumers stable, and stable again after one leaves,
    with the classic protocol against KIP-848's consumer protocol, on kafkalite and the mock."""
    from . import group_protocols

    names = _server_names(servers)
    wanted = tuple(protocols.split(","))
    if set(wanted) - set(group_protocols.PROTOCOLS):
        raise click.BadParameter(f"protocols are {', '.join(group_protocols.PROTOCOLS)}",
                                 param_hint="--protocols")
    command = (f"kafkalite bench group-protocols --servers {servers} --members {members} "
               f"--protocols {protocols} --delays {delays} --partitions {partitions} --rounds {rounds} "
               f"--per-process {per_process}"
               + "".join(f" --{name} {value}" for name, value, default in (
                   ("session-timeout-ms", session_timeout_ms, 45000),
                   ("heartbeat-interval-ms", heartbeat_interval_ms, 3000),
                   ("consumer-heartbeat-ms", consumer_heartbeat_ms, 5000)) if value != default)
               + ("" if pin else " --no-pin") + (f" --write {write_md}" if write_md else ""))
    opts = group_protocols.Options(partitions, per_process, pin, session_timeout_ms, heartbeat_interval_ms,
                                   consumer_heartbeat_ms)
    group_protocols.run(names, _ints(members), wanted, _ints(delays), rounds, opts, write_md, command)


@bench.command("share")
@click.option("--servers", default="kafkalite,mock", show_default=True,
              help="Servers to measure: kafkalite, mock (librdkafka's mock cluster).")
@click.option("--consumers", default="1,4,16", show_default=True,
              help="ShareConsumers on the one partition, comma-separated.")
@click.option("--acks", default="implicit,explicit", show_default=True,
              help="share.acknowledgement.mode values to measure.")
@click.option("--records", default=30_000, show_default=True,
              help="Records of 100 B loaded first, read whole each time (the mock keeps 5 MiB a partition).")
@click.option("--rounds", default=3, show_default=True,
              help="Take the servers in turn this many times (order reversed every other round).")
@click.option("--per-process", default=4, show_default=True,
              help="ShareConsumers hosted by each worker process.")
@click.option("--pin/--no-pin", default=True, show_default=True,
              help="Servers on core 0, consumers on core 1.")
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the share section of this markdown file (docs/benchmarks.md).")
def bench_share(servers: str, consumers: str, acks: str, records: int, rounds: int, per_process: int,
                pin: bool, write_md: str | None) -> None:
    """Share-group throughput with 1, 4 and 16 ShareConsumers on one partition (records/s and
    acknowledgements/s), on kafkalite and the mock."""
    from . import share

    names = _server_names(servers)
    modes = tuple(acks.split(","))
    if set(modes) - set(share.MODES):
        raise click.BadParameter(f"modes are {', '.join(share.MODES)}", param_hint="--acks")
    command = (f"kafkalite bench share --servers {servers} --consumers {consumers} --acks {acks} "
               f"--records {records} --rounds {rounds} --per-process {per_process}"
               + ("" if pin else " --no-pin") + (f" --write {write_md}" if write_md else ""))
    share.run(names, _ints(consumers), modes, records, rounds, per_process, pin, write_md, command)


@bench.command("startup")
@click.option("--rounds", default=5, show_default=True,
              help="Rounds (kinds in turn), each in a fresh process.")
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the startup section of this markdown file (docs/benchmarks.md).")
def bench_startup(rounds: int, write_md: str | None) -> None:
    """A 3-broker test cluster from nothing to ready, and a one-record test, on kafkalite.testing
    and on librdkafka's mock cluster."""
    from . import startup

    command = f"kafkalite bench startup --rounds {rounds}" + (f" --write {write_md}" if write_md else "")
    startup.run(rounds, write_md, command)


@bench.command("sasl")
@click.option("--seconds", default=3.0, show_default=True, help="Seconds of logins per mechanism per round.")
@click.option("--rounds", default=3, show_default=True, help="Rounds (mechanisms in turn).")
@click.option("--iterations", default=4096, show_default=True, help="The SCRAM credentials' iterations.")
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the sasl section of this markdown file (docs/benchmarks.md).")
def bench_sasl(seconds: float, rounds: int, iterations: int, write_md: str | None) -> None:
    """SASL logins per second on one broker: SCRAM-SHA-256 and SCRAM-SHA-512 against PLAIN."""
    from . import sasl

    command = (f"kafkalite bench sasl --seconds {seconds:g} --rounds {rounds} --iterations {iterations}"
               + (f" --write {write_md}" if write_md else ""))
    sasl.run(seconds, rounds, iterations, write_md, command)


@bench.command("storage")
@click.option("--size", default="10GB", show_default=True,
              help="The large log's size (the small one is 10 MB).")
@click.option("--samples", default=2000, show_default=True, help="Appends and reads measured at each size.")
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the storage section of this markdown file (docs/benchmarks.md).")
def bench_storage(size: str, samples: int, write_md: str | None) -> None:
    """An append and a read in a 10 MB log and in a --size one: their cost and the memory held."""
    from . import storage
    from .data.run import parse_size

    try:
        size_bytes = parse_size(size)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--size") from None
    command = f"kafkalite bench storage --size {size} --samples {samples}" + (
        f" --write {write_md}" if write_md else "")
    storage.run(size_bytes, samples, write_md, command)


@bench.command("quorum")
@click.option("--rounds", default=5, show_default=True, help="Failovers (SIGKILL of the active controller).")
@click.option("--topics", default=300, show_default=True,
              help="Topics created (and config changes; twice as many leader moves) per cluster.")
@click.option("--clients", default=4, show_default=True,
              help="Concurrent clients, one request in flight each.")
@click.option("--session-timeout-ms", default=9000, show_default=True,
              help="broker.session.timeout.ms (Kafka's default 9000).")
@click.option("--quick", is_flag=True, help="A smoke test: 1 round, 24 topics, 2 clients, a 2 s session.")
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the quorum section of this markdown file (docs/benchmarks.md).")
def bench_quorum(rounds: int, topics: int, clients: int, session_timeout_ms: int, quick: bool,
                 write_md: str | None) -> None:
    """The controller quorum: time from the active controller's SIGKILL to a successful CreateTopics
    and to new leaders; metadata changes per second with 3 voters against 1, in one run."""
    from . import quorum

    if quick:
        rounds, topics, clients, session_timeout_ms = 1, 24, 2, 2000
    command = (f"kafkalite bench quorum --rounds {rounds} --topics {topics} --clients {clients} "
               f"--session-timeout-ms {session_timeout_ms}" + (f" --write {write_md}" if write_md else ""))
    quorum.run(rounds, topics, clients, session_timeout_ms, write_md, command)


@bench.command("compiled")
@click.option("--build-dir", type=click.Path(file_okay=False), default=None,
              help="Build the compiled copy here and keep it (default: a temporary folder), e.g. to "
                   "run other benches with it first on PYTHONPATH.")
@click.option("--reuse", is_flag=True, help="Use the build already in --build-dir (the sources unchanged).")
@click.option("--rounds", default=3, show_default=True, help="Pure and compiled children in turn, best kept.")
@click.option("--seconds", default=1.0, show_default=True, help="CPU time per operation per child.")
@click.option("--network-rounds", default=2, show_default=True,
              help="Network bench rounds (1+1 and 3+8 threads, pure and compiled servers in turn); 0: none.")
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the compiled section of this markdown file (docs/benchmarks.md).")
def bench_compiled(build_dir: str | None, reuse: bool, rounds: int, seconds: float, network_rounds: int,
                   write_md: str | None) -> None:
    """The hot path compiled with mypyc against the pure-Python modules, in one run."""
    from . import compiled

    command = (f"kafkalite bench compiled --rounds {rounds} --seconds {seconds:g} "
               f"--network-rounds {network_rounds}" + (f" --write {write_md}" if write_md else ""))
    compiled.run(build_dir, reuse, rounds, seconds, network_rounds, write_md, command)
