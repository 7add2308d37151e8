"""``kafkalite bench share``: share-group (KIP-932) throughput with 1, 4 and 16
confluent_kafka.ShareConsumers on one partition, on kafkalite and on librdkafka's mock cluster in
one run.

Each server's topic ``share`` (one partition) is first loaded with ``--records`` records of 100 B
(a confluent-kafka Producer, flushed). Each measurement is a new share group reading it from the
start: share.auto.offset.reset=earliest, a group config (Kafka's default is latest), set on
kafkalite with IncrementalAlterConfigs on the GROUP resource before the consumers start, and on
the mock, which serves no IncrementalAlterConfigs, for all its share groups when it starts
(mock_server.py). The consumers (member_pool.share_members: a thread each, ``--per-process`` a
worker process, client defaults but ``share.acknowledgement.mode``) poll until every record is
acknowledged. Figures:

- records/s: records delivered to the consumers (a record whose lock expired would count again:
  the lock is 30 s, longer than any run here);
- acknowledgements/s: records whose acknowledgement the broker confirmed (the consumers'
  acknowledgement-commit callbacks).

Both are the log's records over the time from subscribe to the last one, joining included; the
time to the first record is given too.

Context (the harness is not the limit): the same client machinery reading the same records with
a plain confluent-kafka Consumer (``assign()`` partition 0, bench/data/clients.py's
consume_rate: a first pass, then the log again and again for 2 s) from each server, and the
worker processes' CPU. The bare server (bench/data) is no ceiling here: it serves no ShareFetch.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from kafkalite.protocol.api_keys import ApiKey

from . import member_pool
from .data import clients, servers, tasks, wire
from .data.servers import CLIENT_CORE, HOST, pinning
from .figures import count, median
from .group_protocols import offered_api_keys
from .markdown import machine, write_section

Say = Callable[[str], None]
TOPIC = "share"
RECORD_BYTES = 100
MODES = ("implicit", "explicit")
PLAIN_SECONDS = 2.0  # the plain consumer reads the log round and round for this long, after a first pass
KAFKALITE_OVERRIDES = ("offsets.topic.replication.factor=1",)
MOCK_SETTINGS = ("share.auto.offset.reset=earliest", f"topic:{TOPIC}=1")


def serves_share_groups(port: int) -> bool:
    return int(ApiKey.SHARE_FETCH) in offered_api_keys(port)


def preload(bootstrap: str, records: int) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    value = b"x" * RECORD_BYTES
    for _ in range(records):
        while True:
            try:
                producer.produce(TOPIC, value, partition=0)
                break
            except BufferError:
                producer.poll(0.05)
    if producer.flush(60) != 0:
        raise RuntimeError(f"{bootstrap}: records left unsent")


def earliest(kind: str, bootstrap: str, group: str) -> None:
    """share.auto.offset.reset=earliest for ``group`` (the mock has it for every share group)."""
    if kind == "mock":
        return
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        ResourceType,
    )

    admin = AdminClient({"bootstrap.servers": bootstrap})
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[ConfigEntry(
        "share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(30)


class Measured:
    """first: seconds from subscribe to the first record; records, acks: per second; tail: seconds
    from the last record delivered to the last acknowledgement confirmed; failed: acknowledgements
    the broker refused; client_cpu, server_cpu: the workers' and the server's CPU, shares of one core."""

    def __init__(self, first: float, records: float, acks: float, tail: float, failed: int,
                 client_cpu: float, server_cpu: float) -> None:
        self.first, self.records, self.acks, self.tail = first, records, acks, tail
        self.failed, self.client_cpu, self.server_cpu = failed, client_cpu, server_cpu


def _rate(stamps: list[tuple[float, int]], start: float) -> float:
    """Per second from ``start`` (subscribe) to the last report."""
    return stamps[-1][1] / max(1e-9, stamps[-1][0] - start)


def share_throughput(kind: str, bootstrap: str, server_pid: int, group: str, consumers: int, records: int,
                     mode: str, per_process: int, pin: bool, timeout: float = 300) -> Measured:
    earliest(kind, bootstrap, group)
    config = {"bootstrap.servers": bootstrap, "group.id": group, "share.acknowledgement.mode": mode}
    core = CLIENT_CORE if pin and pinning() else None
    args = (config, TOPIC)
    with member_pool.started(member_pool.share_members, consumers, per_process, core, args) as pool:
        got: list[tuple[float, int]] = []
        acked: list[tuple[float, int]] = []
        n_got = n_acked = n_failed = 0
        errors: set[str] = set()
        cpu0, server_cpu0, start = pool.cpu_seconds(), servers.cpu_seconds(server_pid), time.monotonic()
        pool.go.set()
        deadline = start + timeout
        while n_acked + n_failed < records or n_got < records:
            kind_, *rest = pool.get(max(0.1, deadline - time.monotonic()))
            if kind_ == "error":
                raise RuntimeError(f"a share consumer failed: {rest[0]}")
            if kind_ == "records" and n_got < records:
                n_got += rest[1]
                got.append((rest[0], n_got))
            elif kind_ == "ack-failed":  # those records are redelivered once their lock expires
                n_failed += rest[1]
                errors.add(rest[2])
            elif kind_ == "acked" and n_acked < records:
                n_acked += rest[1]
                acked.append((rest[0], n_acked))
            if time.monotonic() > deadline:
                raise RuntimeError(f"{n_got} records and {n_acked} acknowledgements of {records} "
                                   f"in {timeout:g} s")
        wall = max(1e-9, time.monotonic() - start)
        client_cpu = (pool.cpu_seconds() - cpu0) / wall
        server_cpu = (servers.cpu_seconds(server_pid) - server_cpu0) / wall
        if n_failed:
            print(f"{n_failed} acknowledgements failed: {', '.join(sorted(errors))}")
        tail = acked[-1][0] - got[-1][0] if acked else float("nan")
        return Measured(got[0][0] - start, _rate(got, start), _rate(acked, start), tail, n_failed,
                        client_cpu, server_cpu)


Key = tuple[str, str, int]  # server, acknowledgement mode, consumers


def run(server_kinds: tuple[str, ...], counts: list[int], modes: tuple[str, ...], records: int, rounds: int,
        per_process: int, pin: bool, write_md: str | None, command: str, say: Say = print) -> str:
    results: dict[Key, list[Measured]] = {}
    plain: dict[str, list[float]] = {}
    missing: set[str] = set()
    with tasks.ClientProcess(pin) as client:
        for r in range(rounds):
            for kind in (server_kinds if r % 2 == 0 else tuple(reversed(server_kinds))):
                args = ({"overrides": KAFKALITE_OVERRIDES} if kind == "kafkalite"
                        else {"mock_settings": MOCK_SETTINGS})
                with servers.started(kind, pin=pin, **args) as server:
                    if kind == "kafkalite":
                        with wire.Connection(HOST, server.port) as conn:
                            wire.create_topic(conn, TOPIC, 1)
                    client.run(preload, server.bootstrap, records)
                    rate = client.run(clients.consume_rate, server.bootstrap, TOPIC, records, PLAIN_SECONDS)
                    plain.setdefault(kind, []).append(rate.messages / rate.seconds)
                    say(f"round {r + 1}/{rounds} {kind}: a plain consumer reads "
                        f"{plain[kind][-1]:,.0f} records/s")
                    if kind == "kafkalite" and not serves_share_groups(server.port):
                        missing.add(kind)
                        continue
                    for mode in modes:
                        for n in counts:
                            m = share_throughput(kind, server.bootstrap, server.pid, f"s-{mode}-{n}-{r}", n,
                                                 records, mode, per_process, pin)
                            results.setdefault((kind, mode, n), []).append(m)
                            say(f"round {r + 1}/{rounds} {kind} {mode} {n} consumers: {m.records:,.0f} "
                                f"records/s, {m.acks:,.0f} acks/s, first record after "
                                f"{m.first * 1000:,.0f} ms, "
                                f"last acknowledgement {m.tail * 1000:,.0f} ms after the last record, "
                                f"{m.failed} failed "
                                f"(CPU, % of a core: consumers {m.client_cpu * 100:.0f}, server "
                                f"{m.server_cpu * 100:.0f})")
    body = section(server_kinds, counts, modes, records, rounds, per_process, results, plain, missing,
                   command)
    if write_md:
        write_section(write_md, "share", body)
        say(f"wrote {write_md}")
    return body






def section(server_kinds: tuple[str, ...], counts: list[int], modes: tuple[str, ...], records: int,
            rounds: int, per_process: int, results: dict[Key, list[Measured]], plain: dict[str, list[float]],
            missing: set[str], command: str) -> str:
    def med(kind: str, mode: str, n: int, what: str) -> float:
        return median([getattr(m, what) for m in results.get((kind, mode, n), [])])

    text = (f"## Share groups: ShareConsumers on one partition\n\nCommand: `{command}`  \n"
            f"Machine: {machine()}.  \nMeasured: {time.strftime('%Y-%m-%d %H:%M')}. {rounds} rounds, servers "
            f"in turn (order reversed every other round), medians. A log of {records:,} records of "
            f"{RECORD_BYTES} B on one partition, read whole by a new share group each time "
            f"(share.auto.offset.reset=earliest); confluent-kafka ShareConsumers with client defaults but "
            f"share.acknowledgement.mode, a thread each, {per_process} a worker process. Rates: the log's "
            f"records over the time from subscribe to the last record delivered (acknowledgement "
            f"confirmed by the broker), joining the group included.\n\n")
    text += ("| server | acknowledgement | consumers | records/s | acknowledgements/s | first record, ms | "
             "last acknowledgement after the last record, ms | CPU, % of a core: consumers | server |\n"
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
    for kind in server_kinds:
        for mode in modes:
            for n in counts:
                if kind in missing:
                    text += f"| {kind} | {mode} | {n} | not served | not served | - | - | - | - |\n"
                    continue
                text += (f"| {kind} | {mode} | {n} | {count(med(kind, mode, n, 'records'))} | "
                         f"{count(med(kind, mode, n, 'acks'))} | "
                         f"{count(med(kind, mode, n, 'first') * 1000)} | "
                         f"{count(med(kind, mode, n, 'tail') * 1000)} | "
                         f"{count(med(kind, mode, n, 'client_cpu') * 100)} | "
                         f"{count(med(kind, mode, n, 'server_cpu') * 100)} |\n")
    if "kafkalite" in server_kinds and "mock" in server_kinds and "kafkalite" not in missing:
        text += ("\n| acknowledgement | consumers | kafkalite / mock, records/s | "
                 "kafkalite / mock, acknowledgements/s |\n")
        text += "| --- | ---: | ---: | ---: |\n"
        for mode in modes:
            for n in counts:
                cells = []
                for what in ("records", "acks"):
                    k, m = med("kafkalite", mode, n, what), med("mock", mode, n, what)
                    cells.append("-" if k != k or m != m or not m else f"{k / m:.2f}x")
                text += f"| {mode} | {n} | " + " | ".join(cells) + " |\n"
    text += (f"\nThe same records read by a plain confluent-kafka Consumer (`assign()`, one in the client "
             f"process; after a first pass, the log again and again for {PLAIN_SECONDS:g} s), records/s: "
             + ", ".join(f"{kind} {count(median(plain[kind]))}" for kind in server_kinds if kind in plain)
             + ": the client process reads records far faster than any share group here delivers them.\n")
    failed = sum(m.failed for ms in results.values() for m in ms)
    if failed:
        text += (f"\n{failed:,} acknowledgements were refused by the broker in all (their records are "
                 f"redelivered after the lock; counted as done here).\n")
    for kind in sorted(missing):
        text += f"\n{kind} did not offer ShareFetch (api key 78): no share-group figures.\n"
    return text
