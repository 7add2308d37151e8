"""The ``kafkalite`` command. Each subcommand only parses options and forwards to its module."""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
from collections.abc import Callable

import click

from kafkalite import __version__


def _summary(command: click.Command) -> str:
    """A command's first sentence, whole: click would cut it at the terminal's width."""
    text = " ".join((command.help or "").split())
    end = text.find(". ")
    return command.short_help or (text if end < 0 else text[:end + 1])


class _Command(click.Command):
    def get_short_help_str(self, limit: int = 45) -> str:
        return _summary(self)


class _Group(click.Group):
    command_class = _Command
    group_class = type  # subgroups are _Group too

    def get_short_help_str(self, limit: int = 45) -> str:
        return _summary(self)


class _BenchGroup(_Group):
    """The benchmarks need the ``bench`` extra; without it, say so in one line."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except ModuleNotFoundError as e:
            if (e.name or "").split(".")[0] in ("kafkalite", "bench"):
                raise
            raise click.ClickException(
                f"kafkalite bench needs the bench extra (module {e.name!r} is missing): "
                "pip install 'kafkalite[bench]'") from None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kafkalite")
def main() -> None:
    """kafkalite: a lightweight Kafka-compatible broker."""
    # `kill -USR1 <pid>` prints every thread's stack to stderr (the JVM's thread dump on SIGQUIT):
    # what a broker or a benchmark that seems stuck is doing, without stopping it. Dumped from a
    # Python handler, holding the GIL: faulthandler's own C handler reads the other threads'
    # frames while they run, and crashed the process when one was importing a module.
    if hasattr(signal, "SIGUSR1") and sys.__stderr__ is not None:
        signal.signal(signal.SIGUSR1, _dump_stacks)


def _dump_stacks(signum: int, frame: object) -> None:
    if sys.__stderr__ is not None:
        faulthandler.dump_traceback(file=sys.__stderr__, all_threads=True)


@main.command()
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


@main.command()
@click.option("--brokers", default=3, show_default=True, type=click.IntRange(1, 50))
@click.option("--dir", "directory", default=".kafkalite/cluster", show_default=True,
              type=click.Path(file_okay=False), help="Logs and data of every broker.")
@click.option("--base-port", default=9092, show_default=True, type=click.IntRange(1024, 65000),
              help="Broker i listens on base-port + 2(i-1) (clients) and the next port (internal).")
@click.option("--metrics/--no-metrics", default=True, show_default=True,
              help="Serve each broker's Prometheus metrics, on the ports after the brokers' ports.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, exists=True), default=None,
              help="A server.properties file for every broker (the cluster's own settings win).")
@click.option("--override", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Set a property on every broker, over all else; repeatable. request.log.dir=DIR "
                   "gives each broker DIR/broker-N.")
def cluster(brokers: int, directory: str, base_port: int, metrics: bool, config_file: str | None,
            overrides: tuple[str, ...]) -> None:
    """Run a local cluster of N brokers (the first is also the controller) until Ctrl-C."""
    from kafkalite.local.processes import run
    from kafkalite.local.settings import ClusterError
    from kafkalite.server.config import ConfigError

    try:
        code = run(brokers, os.path.abspath(directory), base_port,
                   base_port + 2 * brokers if metrics else None,
                   os.path.abspath(config_file) if config_file else None, overrides)
    except (ClusterError, ConfigError) as e:
        raise click.ClickException(str(e)) from None
    sys.exit(code)


@main.command()
@click.option("--logs", required=True, type=click.Path(),
              help="Request logs: a directory searched recursively for *.jsonl (the request.log.dir "
                   "of one or more brokers), or one file.")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Where tables and report go.")
@click.option("--master", default="local[*]", show_default=True, help="Spark master URL.")
@click.option("--driver-memory", default=None, help="Spark driver memory, e.g. 8g (Spark's default: 1g).")
@click.option("--percentiles", type=click.Choice(["exact", "approx"]), default="exact", show_default=True,
              help="exact: Spark's percentile; approx: percentile_approx (fixed memory per group).")
@click.option("--internal-listeners", default="INTERNAL,CONTROLLER", show_default=True,
              help="Listeners whose requests count as broker-internal traffic (the inter-broker and "
                   "control plane listeners), comma-separated.")
def report(logs: str, out: str, master: str, driver_memory: str | None, percentiles: str,
           internal_listeners: str) -> None:
    """Aggregate request logs with Spark into Parquet tables and an HTML report with plots."""
    from kafkalite.jobs.report import main as report_main

    args = ["--logs", logs, "--out", out, "--master", master, "--percentiles", percentiles,
            "--internal-listeners", internal_listeners]
    sys.exit(report_main(args + (["--driver-memory", driver_memory] if driver_memory else [])))

# --- kafkalite fault: a running cluster's faults ------------------------------------------------


@main.group(cls=_Group)
@click.option("--admin", envvar="KAFKALITE_FAULT_ADMIN", required=True, metavar="HOST:PORT",
              help="The cluster's fault endpoint, as `kafkalite cluster` prints it (or "
                   "kafkalite.testing's Cluster.serve_admin); env KAFKALITE_FAULT_ADMIN.")
@click.pass_context
def fault(ctx: click.Context, admin: str) -> None:
    """Inject faults into a running cluster (errors, latency, brokers down, capture, old versions)."""
    host, _, port = admin.rpartition(":")
    if not host or not port.isdigit():
        raise click.BadParameter(f"{admin!r} is not HOST:PORT", param_hint="--admin")
    ctx.obj = (host, int(port))


def _fault_call(ctx: click.Context, args: dict) -> None:
    import json

    from kafkalite.local.fault_admin import FaultCallError, post_json

    host, port = ctx.obj
    try:
        result = post_json(host, port, {k: v for k, v in args.items() if v is not None})
    except FaultCallError as e:
        raise click.ClickException(str(e)) from None
    # An operation that answers nothing (per broker: null) prints nothing.
    if result is not None and not (isinstance(result, dict) and all(v is None for v in result.values())):
        click.echo(json.dumps(result, indent=2))


_broker_option = click.option("--broker", type=int, default=None,
                              help="One broker (node id); every running broker without it.")


@fault.command("brokers")
@click.pass_context
def fault_brokers(ctx: click.Context) -> None:
    """The cluster's brokers and whether each runs."""
    _fault_call(ctx, {"op": "brokers"})


@fault.command("errors")
@click.argument("api")
@click.argument("errors", nargs=-1, required=True)
@click.option("--count", default=1, show_default=True, type=click.IntRange(1), help="Repeat the errors.")
@_broker_option
@click.option("--topic", default=None, help="Only this partition's answers (with --partition).")
@click.option("--partition", type=int, default=None)
@click.pass_context
def fault_errors(ctx: click.Context, api: str, errors: tuple[str, ...], count: int, broker: int | None,
                 topic: str | None, partition: int | None) -> None:
    """Answer the next API requests with ERRORS, in order (names or codes): `errors Produce
    NOT_LEADER_OR_FOLLOWER --count 3`."""
    _fault_call(ctx, {"op": "push_errors", "api": api, "errors": list(errors), "count": count,
                      "broker": broker, "topic": topic, "partition": partition})


@fault.command("pending")
@_broker_option
@click.pass_context
def fault_pending(ctx: click.Context, broker: int | None) -> None:
    """The injected errors not answered yet."""
    _fault_call(ctx, {"op": "pending_errors", "broker": broker})


@fault.command("clear")
@_broker_option
@click.pass_context
def fault_clear(ctx: click.Context, broker: int | None) -> None:
    """Every fault off: errors, added latency, capture, versions."""
    _fault_call(ctx, {"op": "clear", "broker": broker})


@fault.command("rtt")
@click.argument("ms", type=click.IntRange(0))
@_broker_option
@click.pass_context
def fault_rtt(ctx: click.Context, ms: int, broker: int | None) -> None:
    """Add MS milliseconds to every response (0: none)."""
    _fault_call(ctx, {"op": "rtt", "ms": ms, "broker": broker})


@fault.command("drop")
@_broker_option
@click.pass_context
def fault_drop(ctx: click.Context, broker: int | None) -> None:
    """Close the clients' connections now."""
    _fault_call(ctx, {"op": "drop_connections", "broker": broker})


@fault.command("down")
@click.argument("broker", type=int)
@click.pass_context
def fault_down(ctx: click.Context, broker: int) -> None:
    """Close BROKER's client listeners (no leadership change); `up` reopens them."""
    _fault_call(ctx, {"op": "down", "broker": broker})


@fault.command("up")
@click.argument("broker", type=int)
@click.pass_context
def fault_up(ctx: click.Context, broker: int) -> None:
    """Reopen BROKER's client listeners."""
    _fault_call(ctx, {"op": "up", "broker": broker})


@fault.command("kill")
@click.argument("broker", type=int)
@click.pass_context
def fault_kill(ctx: click.Context, broker: int) -> None:
    """Kill BROKER (not 1, the controller): its leaderships move at once; `restart` starts it."""
    _fault_call(ctx, {"op": "kill", "broker": broker})


@fault.command("restart")
@click.argument("broker", type=int)
@click.pass_context
def fault_restart(ctx: click.Context, broker: int) -> None:
    """Start a killed BROKER again and wait until it is registered."""
    _fault_call(ctx, {"op": "restart", "broker": broker})


@fault.command("capture")
@click.argument("action", type=click.Choice(["start", "show", "stop"]))
@_broker_option
@click.pass_context
def fault_capture(ctx: click.Context, action: str, broker: int | None) -> None:
    """Record the requests clients send (start), print them (show), print and stop (stop)."""
    op = {"start": "capture_start", "show": "capture_get", "stop": "capture_stop"}[action]
    _fault_call(ctx, {"op": op, "broker": broker})


@fault.command("max-versions")
@click.argument("limits", nargs=-1, metavar="API=VERSION...")
@_broker_option
@click.pass_context
def fault_max_versions(ctx: click.Context, limits: tuple[str, ...], broker: int | None) -> None:
    """Advertise at most these versions in ApiVersions (`Produce=7 Fetch=11`); none: the real ones."""
    versions = {}
    for item in limits:
        name, _, version = item.partition("=")
        if not version.isdigit():
            raise click.BadParameter(f"{item!r} is not API=VERSION", param_hint="LIMITS")
        versions[name] = int(version)
    _fault_call(ctx, {"op": "max_versions", "versions": versions, "broker": broker})



@main.group(cls=_BenchGroup)
def bench() -> None:
    """Benchmarks; results go to docs/benchmarks.md."""


@bench.command("codec")
@click.option("--seconds", default=1.0, show_default=True, help="Time per measurement.")
@click.option("--repeat", default=5, show_default=True, help="Measurements per case (best kept).")
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the codec section of this markdown file (docs/benchmarks.md).")
def bench_codec(seconds: float, repeat: int, write_md: str | None) -> None:
    """Encode/decode speed of kafkalite's codec against kio, in one run."""
    from bench import codec

    codec.run(seconds=seconds, repeat=repeat, write_md=write_md)


@bench.command("report")
@click.option("--records", default=10_000_000, show_default=True, help="Request-log records to generate.")
@click.option("--logs", "logs_dir", type=click.Path(file_okay=False), default=None,
              help="Where the generated logs are kept (reused while the same); default: a temp folder.")
@click.option("--repeat", default=2, show_default=True, help="Timed rounds; medians are reported.")
@click.option("--warmup", default=1, show_default=True, help="Untimed rounds first (the JIT's).")
@click.option("--driver-memory", default="8g", show_default=True, help="Spark driver memory.")
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the report section of this markdown file (docs/benchmarks.md).")
def bench_report(records: int, logs_dir: str | None, repeat: int, warmup: int, driver_memory: str,
                 write_md: str | None) -> None:
    """The Spark report against DuckDB computing the same tables from the same files."""
    from bench.report import run

    run.run(records, logs_dir, repeat, warmup, driver_memory, write_md)


@bench.command("fuzz")
@click.option("--frames", default=1_000_000, show_default=True, help="Hostile frames to send.")
@click.option("--seed", default=1, show_default=True)
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the fuzz section of this markdown file (docs/benchmarks.md).")
def bench_fuzz(frames: int, seed: int, write_md: str | None) -> None:
    """Random and mutated frames at a broker process while a canary client checks every answer."""
    from bench.fuzz import run

    run.bench(frames, seed, write_md)


@bench.command("fuzz-coverage")
@click.option("--runs", default=1_000_000, show_default=True, help="Inputs for libFuzzer to try.")
@click.option("--corpus", type=click.Path(file_okay=False), default=None,
              help="Corpus directory (kept and grown between runs); default: a temp folder.")
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the fuzz-coverage section of this markdown file (docs/benchmarks.md).")
def bench_fuzz_coverage(runs: int, corpus: str | None, write_md: str | None) -> None:
    """Coverage-guided fuzzing (atheris) of frames, requests and SASL tokens."""
    from bench.fuzz import coverage

    raise SystemExit(coverage.bench(runs, corpus, write_md))


@bench.command("controller")
@click.option("--repeat", default=3, show_default=True, help="Timed runs per size, after a warm-up.")
@click.option("--sizes", default="1000,10000,100000", show_default=True, help="Partition counts.")
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the controller section of this markdown file (docs/benchmarks.md).")
def bench_controller(repeat: int, sizes: str, write_md: str | None) -> None:
    """Time for the controller to bring 3 brokers' metadata up to date (UpdateMetadata fan-out)."""
    from bench import controller

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
    from bench.network import history, run

    command = (f"kafkalite bench network-history --revs {revs} --threads {threads} --connections "
               f"{connections} --depth {depth} --seconds {seconds:g} --warmup {warmup:g} --repeat {repeat}"
               + (f" --write {write_md}" if write_md else ""))
    history.run(revs.split(","), _thread_settings(threads),
                run.Scenario(connections, depth), seconds, warmup, repeat, write_md, command)


@bench.command("network")
@click.option("--servers", default="kafkalite,asyncio,uvloop,threaded,selectors", show_default=True)
@click.option("--connections", default="50", show_default=True,
              help="Connections; a comma list runs one scenario each (e.g. 1,50,500,5000).")
@click.option("--depth", default="1", show_default=True,
              help="Requests in flight per connection; a comma list multiplies the scenarios.")
@click.option("--mix", default="apiversions", show_default=True,
              type=click.Choice(["apiversions", "metadata", "mixed"]))
@click.option("--topics", default=10, show_default=True, help="Topics in the metadata cache.")
@click.option("--seconds", default=5.0, show_default=True)
@click.option("--warmup", default=2.0, show_default=True)
@click.option("--threads", default="3+8", show_default=True,
              help="kafkalite's network+io threads; a comma list measures each (e.g. 1+1,3+8).")
@click.option("--repeat", default=1, show_default=True,
              help="Take the servers in turn this many times; figures are medians.")
@click.option("--observability", default="metrics", show_default=True,
              help="kafkalite's: off, metrics or log (metrics and request log); a comma list measures each.")
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
    from bench.network import run

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
    scenarios = [run.Scenario(int(c), int(d), mix, topics)
                 for c in connections.split(",") for d in depth.split(",")]
    thread_list = _thread_settings(threads)
    run.run(names, scenarios, thread_list, seconds, warmup, repeat, write_md,
            section or f"{connections.replace(',', '-')}-conn-{depth.replace(',', '-')}-deep-{mix}",
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
    from bench.data import run

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
    from bench import replication

    command = (f"kafkalite bench replication --seconds {seconds:g} --rounds {rounds} "
               f"--session-timeout-ms {session_timeout_ms}" + (f" --write {write_md}" if write_md else ""))
    replication.run(seconds, rounds, session_timeout_ms, write_md, command)


@bench.command("groups")
@click.option("--members", default="1,10,50", show_default=True,
              help="Group sizes to form and rebalance, comma-separated.")
@click.option("--seconds", default=3.0, show_default=True, help="Seconds of OffsetCommits per round.")
@click.option("--rounds", default=3, show_default=True, help="Rounds (servers in turn).")
@click.option("--heartbeat-ms", default=50, show_default=True,
              help="How often the members heartbeat while waiting for a rebalance.")
@click.option("--pin/--no-pin", default=True, show_default=True,
              help="Pin the server to core 0 (the members run on the others).")
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the groups section of this markdown file (docs/benchmarks.md).")
def bench_groups(members: str, seconds: float, rounds: int, heartbeat_ms: int, pin: bool,
                 write_md: str | None) -> None:
    """A consumer group forming and rebalancing after a member leaves, and OffsetCommits to one
    coordinator, on kafkalite and on librdkafka's mock cluster."""
    from bench import groups

    sizes = [int(x) for x in members.split(",") if x.strip()]
    command = (f"kafkalite bench groups --members {members} --seconds {seconds:g} --rounds {rounds} "
               f"--heartbeat-ms {heartbeat_ms}" + ("" if pin else " --no-pin")
               + (f" --write {write_md}" if write_md else ""))
    groups.run(sizes, seconds, rounds, heartbeat_ms, pin, write_md, command)


@bench.command("startup")
@click.option("--rounds", default=5, show_default=True,
              help="Rounds (kinds in turn), each in a fresh process.")
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the startup section of this markdown file (docs/benchmarks.md).")
def bench_startup(rounds: int, write_md: str | None) -> None:
    """A 3-broker test cluster from nothing to ready, and a one-record test, on kafkalite.testing
    and on librdkafka's mock cluster."""
    from bench import startup

    command = f"kafkalite bench startup --rounds {rounds}" + (f" --write {write_md}" if write_md else "")
    startup.run(rounds, write_md, command)


@bench.command("storage")
@click.option("--size", default="10GB", show_default=True,
              help="The large log's size (the small one is 10 MB).")
@click.option("--samples", default=2000, show_default=True, help="Appends and reads measured at each size.")
@click.option("--write", "write_md", type=click.Path(dir_okay=False), default=None,
              help="Replace the storage section of this markdown file (docs/benchmarks.md).")
def bench_storage(size: str, samples: int, write_md: str | None) -> None:
    """An append and a read in a 10 MB log and in a --size one: their cost and the memory held."""
    from bench import storage
    from bench.data.run import parse_size

    try:
        size_bytes = parse_size(size)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--size") from None
    command = f"kafkalite bench storage --size {size} --samples {samples}" + (
        f" --write {write_md}" if write_md else "")
    storage.run(size_bytes, samples, write_md, command)
