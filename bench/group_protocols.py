"""``kafkalite bench group-protocols``: how long a consumer group takes to be stable, and to be
stable again after a member leaves, with the classic protocol (JoinGroup/SyncGroup, the clients'
assignor) against KIP-848's consumer protocol (ConsumerGroupHeartbeat, the server's assignor),
on kafkalite and on librdkafka's mock cluster in one run.

The members are confluent-kafka Consumers (``group.protocol`` classic or consumer, every other
client property at its default: heartbeat.interval.ms 3000, session.timeout.ms 45000, the classic
assignors range,roundrobin), hosted by worker processes (member_pool.py, ``--per-process`` a
worker) that poll each member every 5 ms and report each change of its assignment. The topic
has ``--partitions`` partitions (60: every member of 50 gets one).

- stable: every member holds a balanced share (partitions / members, rounded down or up) and the
  members' assignments are disjoint and cover every partition; form: from the moment the members
  subscribe (all made beforehand) until the group is first stable;
- leave: member 0 closes (a LeaveGroup, or a ConsumerGroupHeartbeat with epoch -1); from the
  moment close() is called until the others are stable again.

Each server runs with group.initial.rebalance.delay.ms at Kafka's default, 3000, and at 0
(``--delays``); it delays only a classic group's first rebalance. Kafka's defaults otherwise:
group.consumer.heartbeat.interval.ms 5000 and group.consumer.session.timeout.ms 45000 on kafkalite
(its defaults) and on the mock (set: its own defaults are 3000 and 30000); kafkalite, one broker,
offsets.topic.replication.factor=1.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from collections.abc import Callable

from kafkalite.clients import BlockingClient
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import api_versions

from . import member_pool
from .data import servers, wire
from .data.servers import CLIENT_CORE, HOST, pinning
from .figures import count, median, millis, ratio
from .groups import coordinator_of
from .markdown import machine, write_section

Say = Callable[[str], None]
PROTOCOLS = ("classic", "consumer")
TOPIC = "members"
KAFKALITE_OVERRIDES = ("offsets.topic.replication.factor=1",)
# Kafka's defaults: the clients' (classic) and the brokers' (consumer protocol; the mock's own are
# 3000 and 30000, rdkafka_mock.c)
SESSION_TIMEOUT_MS, HEARTBEAT_INTERVAL_MS = 45000, 3000
CONSUMER_HEARTBEAT_MS, CONSUMER_SESSION_MS = 5000, 45000


@dataclasses.dataclass(frozen=True)
class Options:
    partitions: int = 60
    per_process: int = 10
    pin: bool = True
    session_timeout_ms: int = SESSION_TIMEOUT_MS  # the classic members' session.timeout.ms
    heartbeat_interval_ms: int = HEARTBEAT_INTERVAL_MS  # ... and heartbeat.interval.ms
    consumer_heartbeat_ms: int = CONSUMER_HEARTBEAT_MS  # the servers' group.consumer.heartbeat.interval.ms

    def lowered(self) -> list[str]:
        """The timeouts set below Kafka's defaults, as the section says them."""
        return [f"{name} {value}" for name, value, default in (
            ("session.timeout.ms", self.session_timeout_ms, SESSION_TIMEOUT_MS),
            ("heartbeat.interval.ms", self.heartbeat_interval_ms, HEARTBEAT_INTERVAL_MS),
            ("group.consumer.heartbeat.interval.ms", self.consumer_heartbeat_ms, CONSUMER_HEARTBEAT_MS),
        ) if value != default]


def offered_api_keys(port: int) -> set[int]:
    """The api keys a broker offers (ApiVersions v3)."""
    client = BlockingClient(HOST, port, "bench-api-versions", 10, strict=False)
    try:
        answer = client.send_and_receive(ApiKey.API_VERSIONS, 3, api_versions.REQUEST(
            client_software_name="kafkalite-bench", client_software_version="1"))
        return {int(k.api_key) for k in answer.api_keys}
    finally:
        client.close()


def serves_consumer_protocol(port: int) -> bool:
    return int(ApiKey.CONSUMER_GROUP_HEARTBEAT) in offered_api_keys(port)


def is_stable(held: dict[int, tuple[int, ...]], members: set[int], partitions: int) -> bool:
    """Every member holds its balanced share, and together they hold each partition once."""
    shares = [held.get(m, ()) for m in members]
    if sum(map(len, shares)) != partitions or len(set().union(*shares)) != partitions:
        return False
    low, high = partitions // len(members), -(-partitions // len(members))
    return all(low <= len(s) <= high for s in shares)


def _until_stable(pool: member_pool.Pool, held: dict[int, tuple[int, ...]], members: set[int],
                  partitions: int, timeout: float) -> tuple[float, int]:
    """When (monotonic) the assignment reported last made the group stable, and the most
    partitions that no member held at once meanwhile."""
    deadline = time.monotonic() + timeout
    unowned = partitions - len(set().union(*(held.get(m, ()) for m in members)))
    while True:
        kind, *rest = pool.get(max(0.1, deadline - time.monotonic()))
        if kind == "error":
            raise RuntimeError(f"a member failed: {rest[0]}")
        if kind == "assign":
            index, when, partitions_held = rest
            held[index] = partitions_held
            if index in members:
                owned = set().union(*(held.get(m, ()) for m in members))
                unowned = max(unowned, partitions - len(owned))
                if is_stable(held, members, partitions):
                    return float(when), unowned
        if time.monotonic() > deadline:
            raise RuntimeError(f"the group did not become stable in {timeout:g} s")


class Measured:
    """One measurement: seconds to form and to reconcile after a leave (nan with one member), the
    most partitions without an owner at once while reconciling (the leaver's, and with the
    classic protocol's eager rebalance every member's until it has synced), and the member
    workers' and the server's CPU while forming, as shares of one core."""

    def __init__(self, form: float, leave: float, unowned: float, client_cpu: float,
                 server_cpu: float) -> None:
        self.form, self.leave, self.unowned = form, leave, unowned
        self.client_cpu, self.server_cpu = client_cpu, server_cpu


def form_and_leave(port: int, server_pid: int, group: str, protocol: str, size: int, opts: Options,
                   timeout: float = 180) -> Measured:
    coordinator_of(port, group)  # untimed: kafkalite makes __consumer_offsets on the first one
    config: dict[str, object] = {"bootstrap.servers": f"{HOST}:{port}", "group.id": group,
                                 "group.protocol": protocol}
    if protocol == "classic":  # the consumer protocol's are the server's
        config.update({"session.timeout.ms": opts.session_timeout_ms,
                       "heartbeat.interval.ms": opts.heartbeat_interval_ms})
    partitions = opts.partitions
    core = CLIENT_CORE if opts.pin and pinning() else None
    args = (config, TOPIC)
    with member_pool.started(member_pool.group_members, size, opts.per_process, core, args) as pool:
        held: dict[int, tuple[int, ...]] = {}
        members = set(range(size))
        cpu0, server_cpu0, start = pool.cpu_seconds(), servers.cpu_seconds(server_pid), time.monotonic()
        pool.go.set()
        formed, _ = _until_stable(pool, held, members, partitions, timeout)
        wall = max(1e-9, time.monotonic() - start)
        client_cpu = (pool.cpu_seconds() - cpu0) / wall
        server_cpu = (servers.cpu_seconds(server_pid) - server_cpu0) / wall
        if size < 2:
            return Measured(formed - start, float("nan"), float("nan"), client_cpu, server_cpu)
        pool.leave.set()
        members.discard(0)
        while True:  # the leaver's stamp; assignments reported before it change nothing here
            kind, *rest = pool.get(timeout)
            if kind == "left":
                left = float(rest[1])
                break
            if kind == "assign":
                held[rest[0]] = rest[2]
        again, unowned = _until_stable(pool, held, members, partitions, timeout)
        return Measured(formed - start, again - left, unowned, client_cpu, server_cpu)


def _server_args(kind: str, delay_ms: int, opts: Options) -> dict:
    heartbeat = opts.consumer_heartbeat_ms
    if kind == "kafkalite":
        lowered = (() if heartbeat == CONSUMER_HEARTBEAT_MS else  # below Kafka's minimum, 5000, too
                   (f"group.consumer.heartbeat.interval.ms={heartbeat}",
                    f"group.consumer.min.heartbeat.interval.ms={heartbeat}"))
        return {"overrides": (f"group.initial.rebalance.delay.ms={delay_ms}", *KAFKALITE_OVERRIDES, *lowered)}
    return {"mock_settings": (f"group.initial.rebalance.delay.ms={delay_ms}",
                              f"group.consumer.heartbeat.interval.ms={heartbeat}",
                              f"group.consumer.session.timeout.ms={CONSUMER_SESSION_MS}",
                              f"topic:{TOPIC}={opts.partitions}")}


Key = tuple[str, int, str, int]  # server, initial delay, protocol, members


def run(server_kinds: tuple[str, ...], sizes: list[int], protocols: tuple[str, ...], delays: list[int],
        rounds: int, opts: Options, write_md: str | None, command: str, say: Say = print) -> str:
    results: dict[Key, list[Measured]] = {}
    missing: set[tuple[str, str]] = set()
    for r in range(rounds):
        for kind in (server_kinds if r % 2 == 0 else tuple(reversed(server_kinds))):
            for delay in delays:
                with servers.started(kind, pin=opts.pin, **_server_args(kind, delay, opts)) as server:
                    if kind == "kafkalite":
                        with wire.Connection(HOST, server.port) as conn:
                            wire.create_topic(conn, TOPIC, opts.partitions)
                        if not serves_consumer_protocol(server.port):
                            missing.add((kind, "consumer"))
                    for protocol in protocols:
                        if (kind, protocol) in missing:
                            continue
                        for size in sizes:
                            group = f"g-{protocol}-{size}-{delay}-{r}"
                            m = form_and_leave(server.port, server.pid, group, protocol, size, opts)
                            results.setdefault((kind, delay, protocol, size), []).append(m)
                            say(f"round {r + 1}/{rounds} {kind} delay {delay} ms {protocol} {size} members: "
                                f"stable in {millis(m.form)} ms, again {millis(m.leave)} ms after a leave "
                                f"({count(m.unowned)} partitions unowned at most) "
                                f"(CPU, % of a core: members {m.client_cpu * 100:.0f}, server "
                                f"{m.server_cpu * 100:.0f})")
    body = section(server_kinds, sizes, protocols, delays, rounds, opts, results, missing, command)
    if write_md:
        write_section(write_md, "group-protocols", body)
        say(f"wrote {write_md}")
    return body










def section(server_kinds: tuple[str, ...], sizes: list[int], protocols: tuple[str, ...], delays: list[int],
            rounds: int, opts: Options, results: dict[Key, list[Measured]],
            missing: set[tuple[str, str]], command: str) -> str:
    def med(kind: str, delay: int, protocol: str, size: int, what: str) -> float:
        return median([getattr(m, what) for m in results.get((kind, delay, protocol, size), [])])

    text = (f"## Consumer groups: the classic protocol against the consumer protocol (KIP-848)\n\n"
            f"Command: `{command}`  \nMachine: {machine()}.  \n"
            f"Measured: {time.strftime('%Y-%m-%d %H:%M')}. {rounds} rounds, servers in turn (order reversed "
            f"every other round), medians. confluent-kafka Consumers with client defaults but "
            f"`group.protocol`, {opts.per_process} a worker process, on a topic of {opts.partitions} "
            f"partitions; stable: every member holds its balanced share and together they hold each "
            f"partition once. Form: subscribe to stable; leave: one member's close() to the others stable "
            f"again; unowned: the most partitions no member held at once meanwhile. Kafka's defaults on "
            f"both servers (group.consumer.heartbeat.interval.ms 5000, "
            f"group.consumer.session.timeout.ms 45000; the mock set to them) but the initial delay"
            + (f"; lowered for this run: {', '.join(opts.lowered())}" if opts.lowered() else "") + ".\n\n")
    text += ("| server | initial delay, ms | members | " + " | ".join(
        f"{p} form, ms | {p} leave, ms | {p} leave, unowned" for p in protocols)
             + " | consumer / classic, form | consumer / classic, leave |\n")
    text += "| --- | ---: | ---: |" + " ---: |" * (3 * len(protocols) + 2) + "\n"
    for kind in server_kinds:
        for delay in delays:
            for size in sizes:
                cells = []
                for p in protocols:
                    served = (kind, p) not in missing
                    for what in ("form", "leave"):
                        cells.append(millis(med(kind, delay, p, size, what)) if served else "not served")
                    cells.append(count(med(kind, delay, p, size, "unowned")) if served else "not served")
                ratios = [ratio(med(kind, delay, "consumer", size, w), med(kind, delay, "classic", size, w))
                          for w in ("form", "leave")]
                text += f"| {kind} | {delay} | {size} | " + " | ".join(cells + ratios) + " |\n"
    if "kafkalite" in server_kinds and "mock" in server_kinds:
        text += "\nkafkalite / mock, same protocol, delay and size:\n\n"
        text += ("| protocol | initial delay, ms | members | form | leave |\n"
                 "| --- | ---: | ---: | ---: | ---: |\n")
        for p in protocols:
            for delay in delays:
                for size in sizes:
                    text += (f"| {p} | {delay} | {size} | " + " | ".join(
                        ratio(med("kafkalite", delay, p, size, w), med("mock", delay, p, size, w))
                        for w in ("form", "leave")) + " |\n")
    cpu = [m.client_cpu for ms in results.values() for m in ms]
    server_cpu = [m.server_cpu for ms in results.values() for m in ms]
    if cpu:
        text += (f"\nWhile a group formed the member workers used at most {max(cpu) * 100:.0f}% of a core "
                 f"(median {statistics.median(cpu) * 100:.0f}%) and the server at most "
                 f"{max(server_cpu) * 100:.0f}%: the times are the protocols' waits, not CPU.\n")
    for kind, p in sorted(missing):
        text += f"\n{kind} did not offer ConsumerGroupHeartbeat (api key 68): no {p}-protocol figures.\n"
    return text
