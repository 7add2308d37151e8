"""``kafkalite bench quorum``: what the KRaft controller quorum costs and what it buys.

Failover: 3 processes on this machine (``kafkalite cluster --controllers 3``'s layout: each node
broker and controller, every node reaching each voter through a proxy of this process), Kafka's
default quorum timeouts (controller.quorum.election.timeout.ms 1000, fetch.timeout.ms 2000) and
``--session-timeout-ms`` (broker.session.timeout.ms, Kafka's 9000), a topic ``spread`` of 6
partitions of RF 3 whose preferred leaders are nodes 1, 2, 3 twice. Each round finds the active
controller (a surviving broker's Metadata controller_id), SIGKILLs it and measures, from the
kill: when a surviving broker's Metadata first names a live controller; (a) the first successful
CreateTopics of a new topic (RF 2) sent to a surviving broker (which forwards it to the
controller), retried at once on any error or timeout (5 s per try; TOPIC_ALREADY_EXISTS, an
earlier try that timed out but created it, counts as success); (a') the same sent, as Kafka's
admin client does, to the node the watching broker's Metadata names controller; (b) the first
Metadata of ``spread`` (polled every 20 ms on the other surviving broker) in which no partition is
led by the dead node or leaderless.
Then the dead node is started again, back in every ISR, a preferred election (ElectLeaders) gives
it its partitions back and its voter has caught up (DescribeQuorum) before the next round.

Metadata changes per second, the quorum (3 voters) against a single controller (1 voter, node 1),
in one run, each on a fresh 3-node cluster with the same settings; ``--clients`` threads of this
process, each with its own connection and one request in flight, send:

- creations: CreateTopics of one topic (1 partition, RF 3) per request, the clients spread over
  the three brokers (the others forward it to the controller);
- config changes: IncrementalAlterConfigs SET retention.ms of one of those topics per request
  (a ConfigRecord each), spread over the brokers the same way;
- leader moves: on a partition of RF 2 per client, AlterPartitionReassignments reversing its two
  replicas (completes at once: a PartitionChangeRecord of the replicas) then ElectLeaders
  PREFERRED (a PartitionChangeRecord of the leader, and LeaderAndIsr to both brokers), in turn; sent
  to the active controller's node (NOT_CONTROLLER elsewhere, as the admin client does). Each
  request is one change.

Every change is one record appended to the metadata log and committed (on the quorum: fetched by
a majority) before it is answered. Before each phase the nodes are let go quiet (below a quarter of
a core together), so that no phase pays for the previous one's LeaderAndIsr and UpdateMetadata.
The CPU time of this process and of the nodes (/proc) over each phase is reported, to show
whether the load generator or the machine is the bottleneck.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import statistics
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kafkalite.clients import BlockingClient
from kafkalite.local import processes as C
from kafkalite.local.settings import HOST, free_base_port
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import alter_partition_reassignments as A
from kafkalite.protocol.messages import create_topics as ct
from kafkalite.protocol.messages import describe_quorum as dq
from kafkalite.protocol.messages import elect_leaders as el
from kafkalite.protocol.messages import incremental_alter_configs as iac
from kafkalite.protocol.messages import metadata

from .markdown import machine, write_section

Say = Callable[[str], None]
NODES = 3
SPREAD = "spread"
SPREAD_PARTITIONS = 6
TOPIC_RESOURCE = 2  # ConfigResource.Type.TOPIC


def heartbeat_interval_ms(session_timeout_ms: int) -> int:
    return min(2000, max(50, session_timeout_ms // 4))  # Kafka's 2000 for its 9000


@dataclass
class Cluster:
    work: str
    cluster_id: str
    nodes: list[C.Node]
    quorum: C.Quorum | None
    faults: C.ProcessFaults = field(init=False)

    def __post_init__(self) -> None:
        self.faults = C.ProcessFaults(self.nodes, self.cluster_id, self.quorum)

    def node(self, node_id: int) -> C.Node:
        return next(n for n in self.nodes if n.node_id == node_id)

    def live(self) -> list[C.Node]:
        return [n for n in self.nodes if n.process.poll() is None]


def _settings(session_timeout_ms: int) -> tuple[str, ...]:
    return ("controller.quorum.election.timeout.ms=1000", "controller.quorum.fetch.timeout.ms=2000",
            f"broker.session.timeout.ms={session_timeout_ms}",
            f"broker.heartbeat.interval.ms={heartbeat_interval_ms(session_timeout_ms)}",
            "auto.leader.rebalance.enable=false")  # the bench moves leaders itself


@contextlib.contextmanager
def cluster(voters: int, session_timeout_ms: int) -> Iterator[Cluster]:
    work = tempfile.mkdtemp(prefix="kafkalite-bench-quorum-")
    base = free_base_port(NODES + 2)  # the nodes' 6 ports, then the voters' CONTROLLER listeners
    quorum = C.Quorum(voters, NODES, base + 2 * NODES) if voters > 1 else None
    nodes: list[C.Node] = []
    try:
        nodes = C.start(NODES, work, base, _settings(session_timeout_ms), quorum=quorum)
        with open(os.path.join(work, "cluster.id")) as f:
            cluster_id = f.read().strip()
        if not C.wait_registered(nodes, 90, cluster_id):
            raise RuntimeError(f"the cluster did not come up (logs in {work})")
        yield Cluster(work, cluster_id, nodes, quorum)
    finally:
        C.stop(nodes, controllers=voters)
        if quorum is not None:
            quorum.close()
        shutil.rmtree(work, ignore_errors=True)


# --- requests ---------------------------------------------------------------------------------

def _client(port: int, timeout: float = 5.0) -> BlockingClient:
    return BlockingClient(HOST, port, "bench-quorum", timeout)


def _metadata(port: int, topics: list[str] | None) -> Any:
    client = _client(port, 2.0)
    try:
        R = metadata.REQUEST
        wanted = None if topics is None else [R["topics"](name=t) for t in topics]
        return client.send_and_receive(ApiKey.METADATA, 12, R(topics=wanted, allow_auto_topic_creation=False))
    finally:
        client.close()


def active_controller(c: Cluster, timeout: float = 60.0) -> C.Node:
    """The node the running brokers' Metadata names controller (once it is a live node)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for n in c.live():
            try:
                found = _metadata(n.client_port, []).controller_id
            except OSError:
                continue
            if found in {m.node_id for m in c.live()}:
                return c.node(found)
        time.sleep(0.05)
    raise RuntimeError("no active controller")


def _create_body(name: str, partitions: int = 1, rf: int = 3,
                 assignments: list[list[int]] | None = None) -> Any:
    R = ct.REQUEST
    if assignments:
        t = R["topics"](name=name, num_partitions=-1, replication_factor=-1, assignments=[
            R["topics"]["assignments"](partition_index=i, broker_ids=b) for i, b in enumerate(assignments)])
    else:
        t = R["topics"](name=name, num_partitions=partitions, replication_factor=rf)
    return R(topics=[t], timeout_ms=5000)


def _create(client: BlockingClient, body: Any) -> int:
    answer = client.send_and_receive(ApiKey.CREATE_TOPICS, 7, body)
    return int(answer.topics[0].error_code)


def _check(code: int, what: str) -> None:
    if code:
        raise RuntimeError(f"{what}: {E.for_code(code).name}")


def _elect(client: BlockingClient, topics: dict[str, list[int]]) -> list[int]:
    R = el.REQUEST
    body = R(election_type=el.PREFERRED, timeout_ms=30000,
             topic_partitions=[R["topic_partitions"](topic=t, partitions=p) for t, p in topics.items()])
    answer = client.send_and_receive(ApiKey.ELECT_LEADERS, 2, body)
    if answer.error_code:
        return [answer.error_code]
    return [p.error_code for r in answer.replica_election_results for p in r.partition_result]


def _reassign(client: BlockingClient, topic: str, replicas: list[int]) -> int:
    body = A.REQUEST(timeout_ms=30000, topics=[A.REASSIGNABLE_TOPIC(
        name=topic, partitions=[A.REASSIGNABLE_PARTITION(partition_index=0, replicas=replicas)])])
    answer = client.send_and_receive(ApiKey.ALTER_PARTITION_REASSIGNMENTS, 0, body)
    return int(answer.error_code or (answer.responses[0].partitions[0].error_code if answer.responses else 0))


def _alter_config(client: BlockingClient, topic: str, value: str) -> int:
    R = iac.REQUEST
    res = R["resources"]
    body = R(resources=[res(resource_type=TOPIC_RESOURCE, resource_name=topic, configs=[
        res["configs"](name="retention.ms", config_operation=iac.OP_SET, value=value)])])
    answer = client.send_and_receive(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, body)
    return int(answer.responses[0].error_code)


def _partitions(port: int, topic: str) -> list[Any]:
    answer = _metadata(port, [topic])
    return list(answer.topics[0].partitions) if answer.topics and not answer.topics[0].error_code else []


def _wait(what: str, check: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {what}")


# --- failover ---------------------------------------------------------------------------------

def _spread_assignments() -> list[list[int]]:
    return [[(i + k) % NODES + 1 for k in range(NODES)] for i in range(SPREAD_PARTITIONS)]


def _settle(c: Cluster) -> None:
    """Every node in every ISR of ``spread``, each leading its preferred partitions, and every
    voter caught up with the quorum's leader."""
    _wait("full ISRs", lambda: all(
        len(p.isr_nodes) == NODES for n in c.nodes for p in _partitions(n.client_port, SPREAD))
        and all(len(_partitions(n.client_port, SPREAD)) == SPREAD_PARTITIONS for n in c.nodes))
    active = active_controller(c)
    client = _client(active.client_port, 30.0)
    try:
        codes = _elect(client, {SPREAD: list(range(SPREAD_PARTITIONS))})
    finally:
        client.close()
    if any(code not in (E.NONE, E.ELECTION_NOT_NEEDED) for code in codes):
        raise RuntimeError(f"preferred election: {[E.for_code(x).name for x in codes]}")
    _wait("preferred leaders", lambda: all(
        [p.leader_id for p in sorted(_partitions(n.client_port, SPREAD), key=lambda p: p.partition_index)]
        == [a[0] for a in _spread_assignments()] for n in c.nodes))
    if c.quorum is not None:
        port, voters = c.quorum.controller_port(active.node_id), len(c.quorum.voter_ids)

        def caught_up() -> bool:
            client = _client(port, 2.0)
            try:
                R = dq.REQUEST
                body = R(topics=[R["topics"](topic_name="__cluster_metadata",
                                             partitions=[R["topics"]["partitions"](partition_index=0)])])
                p = client.send_and_receive(ApiKey.DESCRIBE_QUORUM, 1, body).topics[0].partitions[0]
            finally:
                client.close()
            return (not p.error_code and len(p.current_voters) == voters
                    and all(v.log_end_offset >= p.high_watermark for v in p.current_voters))
        _wait("the voters to catch up", caught_up)


@dataclass
class Round:
    killed: int
    controller_s: float  # a surviving broker's Metadata names a live controller
    create_s: float  # (a) CreateTopics to a surviving broker (forwarded) succeeded
    admin_s: float  # (a') CreateTopics to the controller Metadata names succeeded
    leaders_s: float  # (b) no partition led by the dead node
    create_errors: Counter
    first_answer: tuple[float, str]  # the forwarded CreateTopics' first answer: (s, error)


def _creator(name: str, killed_at: list[float], deadline: float, got: dict[str, float], errors: Counter,
             tries: list[tuple[float, str]], port: Callable[[], int | None]) -> Callable[[], None]:
    """Retries a CreateTopics of ``name`` (RF 2: it fits on the survivors) at the broker ``port()``
    names (None: not known yet) until it succeeds; ``got[name]`` is then when, from the kill."""
    body = _create_body(name, 1, 2)
    clients: dict[int, BlockingClient] = {}

    def loop() -> None:
        try:
            while time.perf_counter() < deadline:
                target = port()
                if target is None:
                    time.sleep(0.01)
                    continue
                client = clients.setdefault(target, _client(target))
                try:
                    code = _create(client, body)
                except Exception as e:  # a timeout, a closed connection: try again
                    code, error = -1, type(e).__name__
                else:
                    error = E.for_code(code).name
                tries.append((round(time.perf_counter() - killed_at[0], 2), error))
                if code in (E.NONE, E.TOPIC_ALREADY_EXISTS):
                    got[name] = time.perf_counter() - killed_at[0]
                    return
                errors[error] += 1
                time.sleep(0.01)
        finally:
            for client in clients.values():
                client.close()
    return loop


def failover_round(c: Cluster, number: int, say: Say, timeout: float = 60.0) -> Round:
    _settle(c)
    time.sleep(1.0)  # quiet: the restarted node's fetches and sessions settled
    dead = active_controller(c)
    survivors = [n for n in c.nodes if n is not dead]
    creator, watcher = survivors[0], survivors[1]
    live = {n.node_id: n for n in survivors}
    got: dict[str, float] = {}
    errors: Counter = Counter()
    tries: list[tuple[float, str]] = []  # (answered at, error) of each forwarded CreateTopics
    named: list[int] = []  # the live controller the watcher's Metadata named, once it does
    killed_at = [0.0]
    deadline = time.perf_counter() + timeout
    forwarded, admin = f"after-kill-{number}", f"after-kill-{number}-admin"
    threads = [
        threading.Thread(target=_creator(forwarded, killed_at, deadline, got, errors, tries,
                                         lambda: creator.client_port), daemon=True),
        # As Kafka's admin client: to the node Metadata names controller.
        threading.Thread(target=_creator(admin, killed_at, deadline, got, Counter(), [], lambda: (
            live[named[-1]].client_port if named else None)), daemon=True)]
    watch_client = _client(watcher.client_port, 2.0)
    watch_client.connect()  # connected before the kill: a connection is not part of what is measured
    R = metadata.REQUEST
    body = R(topics=[R["topics"](name=SPREAD)], allow_auto_topic_creation=False)
    killed_at[0] = time.perf_counter()
    dead.process.kill()
    dead.process.wait(10)
    dead.killed = True
    for t in threads:
        t.start()
    try:
        while time.perf_counter() < deadline and ("leaders" not in got or "controller" not in got):
            try:
                answer = watch_client.send_and_receive(ApiKey.METADATA, 12, body)
            except OSError:
                time.sleep(0.02)
                continue
            now = time.perf_counter() - killed_at[0]
            if answer.controller_id in live:
                if not named:
                    got["controller"] = now
                named.append(answer.controller_id)
            parts = answer.topics[0].partitions if answer.topics else []
            if "leaders" not in got and parts and all(p.leader_id in live for p in parts):
                got["leaders"] = now
            time.sleep(0.02)
        for t in threads:
            t.join(max(0.0, deadline - time.perf_counter()) + 6)
    finally:
        watch_client.close()
    if {forwarded, admin, "leaders", "controller"} - set(got):
        raise RuntimeError(f"round {number}: after {timeout:.0f} s only {got} (errors {dict(errors)}; "
                           f"logs in {c.work})")
    r = Round(dead.node_id, got["controller"], got[forwarded], got[admin], got["leaders"], errors, tries[0])
    say(f"round {number}: killed node {r.killed} (active controller); new controller seen "
        f"{r.controller_s:.2f} s; CreateTopics ok {r.create_s:.2f} s via broker {creator.node_id} "
        f"(answers, s after the kill: {tries[:4]}{' ...' if len(tries) > 4 else ''}), {r.admin_s:.2f} s "
        f"sent to the controller; its partitions led elsewhere {r.leaders_s:.2f} s")
    c.faults.restart(dead.node_id)
    return r


def failover(c: Cluster, rounds: int, say: Say) -> list[Round]:
    client = _client(c.nodes[0].client_port, 30.0)
    try:
        _check(_create(client, _create_body(SPREAD, assignments=_spread_assignments())), SPREAD)
    finally:
        client.close()
    return [failover_round(c, i + 1, say) for i in range(rounds)]


# --- metadata changes per second ----------------------------------------------------------------

def _cpu_seconds(pids: list[int]) -> list[float]:
    """Each process's CPU seconds so far (user and system)."""
    tick = os.sysconf("SC_CLK_TCK")
    seconds = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            seconds.append((int(fields[11]) + int(fields[12])) / tick)  # utime, stime
        except (OSError, IndexError, ValueError):
            seconds.append(0.0)
    return seconds


def _quiet(c: Cluster, below: float = 0.25, timeout: float = 20.0) -> None:
    """Until the nodes use less than ``below`` of a core together (the previous phase's work, such
    as the LeaderAndIsr and UpdateMetadata it sent, done), at most ``timeout`` seconds."""
    pids = [n.process.pid for n in c.nodes]
    deadline = time.monotonic() + timeout
    before = sum(_cpu_seconds(pids))
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = sum(_cpu_seconds(pids))
        if (now - before) / 0.5 < below:
            return
        before = now


@dataclass
class Phase:
    kind: str
    changes: int
    seconds: float
    client_cpu: float  # this process's CPU seconds / wall seconds
    nodes_cpu: float  # the nodes' CPU seconds / wall seconds
    busiest_cpu: float  # the busiest node's
    errors: Counter

    @property
    def rate(self) -> float:
        return self.changes / self.seconds


def _phase(c: Cluster, kind: str, clients: int, work: Callable[[int], Callable[[], int]],
           per_client: int) -> Phase:
    """``clients`` threads each doing ``per_client`` calls of its ``work(i)()`` (an error code)."""
    errors: Counter = Counter()
    lock = threading.Lock()
    start = threading.Barrier(clients + 1)
    jobs = [work(i) for i in range(clients)]

    def loop(job: Callable[[], int]) -> None:
        start.wait()
        for _ in range(per_client):
            code = job()
            if code:
                with lock:
                    errors[E.for_code(code).name] += 1

    threads = [threading.Thread(target=loop, args=(j,), daemon=True) for j in jobs]
    for t in threads:
        t.start()
    pids = [n.process.pid for n in c.nodes]
    cpu0, nodes0 = time.process_time(), _cpu_seconds(pids)
    start.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    cpu, nodes = time.process_time() - cpu0, [b - a for a, b in zip(nodes0, _cpu_seconds(pids))]
    return Phase(kind, clients * per_client - sum(errors.values()), wall, cpu / wall, sum(nodes) / wall,
                 max(nodes) / wall, errors)


def changes(c: Cluster, topics: int, clients: int, say: Say) -> list[Phase]:
    label = "quorum" if c.quorum is not None else "single"
    per_client = max(1, topics // clients)
    ports = [c.nodes[i % NODES].client_port for i in range(clients)]
    conns = [_client(p, 30.0) for p in ports]
    controller = active_controller(c)
    ctl = [_client(controller.client_port, 30.0) for _ in range(clients)]
    phases: list[Phase] = []

    def add(p: Phase) -> None:
        phases.append(p)
        say(f"{label}: {p.changes} {p.kind} in {p.seconds:.2f} s = {p.rate:,.0f}/s (this process "
            f"{p.client_cpu:.0%} of a core, the nodes {p.nodes_cpu:.0%}, the busiest {p.busiest_cpu:.0%}); "
            f"errors: {dict(p.errors) or 'none'}")

    try:
        _quiet(c)

        def creating(i: int) -> Callable[[], int]:
            names = iter(f"t{i}-{k}" for k in range(per_client))
            return lambda: _create(conns[i], _create_body(next(names)))
        add(_phase(c, "topic creations", clients, creating, per_client))

        # One client alone: a change's latency, to the controller's node (no forwarding).
        _quiet(c)
        latencies = []
        for k in range(min(100, per_client)):
            began = time.perf_counter()
            _check(_alter_config(ctl[0], f"t0-{k}", str(7_200_000 + k)), "IncrementalAlterConfigs")
            latencies.append(time.perf_counter() - began)
        alone = Phase("config change latency", len(latencies), statistics.median(latencies), 0, 0, 0,
                      Counter())
        say(f"{label}: one config change alone, to the controller's node: median "
            f"{statistics.median(latencies) * 1000:.1f} ms")

        def configuring(i: int) -> Callable[[], int]:
            values = iter(range(per_client))

            def one() -> int:
                k = next(values)
                return _alter_config(conns[i], f"t{i}-{k}", str(3_600_000 + k))
            return one
        _quiet(c)
        add(_phase(c, "config changes", clients, configuring, per_client))

        pairs = [[i % NODES + 1, (i + 1) % NODES + 1] for i in range(clients)]
        for i, pair in enumerate(pairs):
            _check(_create(ctl[i], _create_body(f"lead-{i}", assignments=[pair])), f"lead-{i}")
        _wait("the lead topics' ISRs", lambda: all(
            len(ps[0].isr_nodes) == 2 for i in range(clients)
            if (ps := _partitions(controller.client_port, f"lead-{i}"))) and all(
            _partitions(controller.client_port, f"lead-{i}") for i in range(clients)))
        _quiet(c)

        def moving(i: int) -> Callable[[], int]:
            order, steps = list(pairs[i]), iter(range(2 * per_client))

            def one() -> int:
                if next(steps) % 2 == 0:
                    order.reverse()  # the other replica first
                    return _reassign(ctl[i], f"lead-{i}", order)
                return next((x for x in _elect(ctl[i], {f"lead-{i}": [0]}) if x), 0)
            return one
        add(_phase(c, "leader moves", clients, moving, 2 * per_client))
        phases.append(alone)
    finally:
        for client in conns + ctl:
            client.close()
    return phases


# --- the run ------------------------------------------------------------------------------------

def run(rounds: int, topics: int, clients: int, session_timeout_ms: int, write_md: str | None,
        command: str, say: Say = print) -> str:
    with cluster(1, session_timeout_ms) as c:
        say("single controller (1 voter):")
        single = changes(c, topics, clients, say)
    with cluster(3, session_timeout_ms) as c:
        say("quorum (3 voters):")
        quorum = changes(c, topics, clients, say)
        say(f"failover ({rounds} rounds):")
        failovers = failover(c, rounds, say)
    body = section(failovers, single, quorum, rounds, topics, clients, session_timeout_ms, command)
    if write_md:
        write_section(write_md, "quorum", body)
        say(f"wrote {write_md}")
    return body


def _stats(values: list[float]) -> str:
    return f"{statistics.median(values):,.2f} | {min(values):,.2f} | {max(values):,.2f}"


def section(rounds: list[Round], single: list[Phase], quorum: list[Phase], n_rounds: int, topics: int,
            clients: int, session_timeout_ms: int, command: str) -> str:
    errors: Counter = Counter()
    for r in rounds:
        errors.update(r.create_errors)
    text = (f"## Controller quorum: failover and metadata changes per second\n\nCommand: `{command}`  \n"
            f"Machine: {machine()}, shared; 3 node processes (broker and controller each) and the "
            f"clients on the same cores.  \nMeasured: {time.strftime('%Y-%m-%d %H:%M %Z')}.\n\n"
            f"### Failover: SIGKILL of the active controller ({n_rounds} rounds)\n\n"
            "3 voters, Kafka's default quorum timeouts (controller.quorum.election.timeout.ms 1000, "
            f"controller.quorum.fetch.timeout.ms 2000), broker.session.timeout.ms {session_timeout_ms} "
            f"(heartbeats every {heartbeat_interval_ms(session_timeout_ms)} ms); a topic of "
            f"{SPREAD_PARTITIONS} partitions, RF 3, two led by each node. Seconds from the SIGKILL:\n\n"
            "| from the SIGKILL to | median s | min s | max s |\n| --- | ---: | ---: | ---: |\n"
            "| a surviving broker's Metadata names a live controller | "
            f"{_stats([r.controller_s for r in rounds])} |\n"
            f"| (a) the first successful CreateTopics sent to a surviving broker (forwarded; retried "
            f"on errors) | {_stats([r.create_s for r in rounds])} |\n"
            f"| (a') the first successful CreateTopics sent to the node Metadata names controller (as "
            f"Kafka's admin client does; retried on errors) | {_stats([r.admin_s for r in rounds])} |\n"
            f"| (b) no partition led by the dead node (Metadata of a surviving broker) | "
            f"{_stats([r.leaders_s for r in rounds])} |\n\n"
            f"Nodes killed in turn: {', '.join(str(r.killed) for r in rounds)}. The forwarded CreateTopics' "
            f"first answers (s after the kill, error): "
            f"{', '.join(f'{r.first_answer[0]:.2f} {r.first_answer[1]}' for r in rounds)}; its failed tries "
            f"over all rounds: {', '.join(f'{k} {v}' for k, v in sorted(errors.items())) or 'none'}.\n\n")
    worst = max(max(r.create_s, r.admin_s) for r in rounds)
    met = sum(max(r.create_s, r.admin_s) < 2.0 for r in rounds)
    text += (f"- goal, a successful CreateTopics under 2 s after the active controller's death with "
             f"Kafka's default timeouts: met in {met} of {len(rounds)} rounds for both (a) and (a') "
             f"(worst {worst:.2f} s).\n")
    if any(r.first_answer[1] == "REQUEST_TIMED_OUT" and r.create_s > r.admin_s + 1 for r in rounds):
        text += ("- (a) against (a'): the forwarded CreateTopics sent at the kill is answered "
                 "REQUEST_TIMED_OUT only when the broker's forward times out (FORWARD_TIMEOUT_MS, 4 s, "
                 "kafkalite/server/handlers/topics.py), although a new controller is active from about "
                 "2 s; its retry then finds the topic created. A standby controller forwards a forwarded "
                 "topic request again instead of answering NOT_CONTROLLER (Kafka's answer, on which "
                 "the broker's ForwardingManager tries the new controller), and the forward waits out "
                 "that timeout.\n")
    text += ("- what bounds the new controller: a follower starts an election only after "
             "controller.quorum.fetch.timeout.ms (2 s) without a successful Fetch from the leader "
             "(Kafka's rule; the last Fetch answered up to its wait before the kill), then a pre-vote "
             "and a vote round (milliseconds here).\n"
             "- what bounds (b): the new controller does not know the killed node is dead; it gives "
             "every registered broker a fresh session when it activates (as Kafka's does), so the "
             "dead node's partitions move once that session expires: about the time to a new "
             f"controller plus broker.session.timeout.ms ({session_timeout_ms / 1000:g} s).\n\n")
    text += (f"### Metadata changes per second: 3 voters against 1\n\n{clients} client threads, one "
             "request in flight each, one change per request; each change is one record the "
             "controller appends to the metadata log and commits (with 3 voters: once a majority "
             f"has fetched it) before answering. Topic creations: {clients * max(1, topics // clients)} "
             "topics of 1 partition, RF 3, one CreateTopics each, sent to the three brokers in turn "
             "(forwarded to the controller). Config changes: IncrementalAlterConfigs SET retention.ms "
             "of one of those topics (a ConfigRecord). Leader moves: on one RF-2 partition per client, "
             "AlterPartitionReassignments reversing its replicas then ElectLeaders PREFERRED, in turn "
             "(each a PartitionChangeRecord; the election a LeaderAndIsr to both replicas), sent to "
             "the active controller's node. Before each kind the nodes are let go quiet (below a quarter "
             "of a core together, at most 20 s).\n\n"
             "| change | single controller /s | quorum /s | quorum / single | this process's CPU "
             "(single / quorum) | the nodes' CPU (single / quorum) | the busiest node's CPU "
             "(single / quorum) |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
    for s, q in zip(single[:-1], quorum[:-1]):
        text += (f"| {s.kind} | {s.rate:,.0f} | {q.rate:,.0f} | {q.rate / s.rate:.2f} | "
                 f"{s.client_cpu:.0%} / {q.client_cpu:.0%} | {s.nodes_cpu:.0%} / {q.nodes_cpu:.0%} | "
                 f"{s.busiest_cpu:.0%} / {q.busiest_cpu:.0%} |\n")
    failed = sum(sum(p.errors.values()) for p in single + quorum)
    text += (f"\nCPU is CPU seconds over wall seconds (100% = one core of {os.cpu_count()}); this "
             "process's share shows whether the load generator is the bottleneck. Failed requests "
             f"(not counted): {failed}. One config change alone (one client, to the controller's node): "
             f"median {single[-1].seconds * 1000:.1f} ms with 1 voter, {quorum[-1].seconds * 1000:.1f} ms "
             "with 3. The controller's event thread waits for each write's commit before the next event "
             "(kafkalite/controller/store.py): changes are not pipelined, so with 3 voters each one "
             "costs a round of the followers' Fetch, whatever the number of clients.\n")
    return text
