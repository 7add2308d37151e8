"""``kafkalite bench authorizer``: what the StandardAuthorizer costs produce and fetch.

Two single-broker processes on this machine (``kafkalite cluster``'s layout), one without an
authorizer, one with ``authorizer.class.name`` = Kafka's StandardAuthorizer and 1,000 ACL bindings
(created with one CreateAcls request, then read back with DescribeAcls until the broker has them):
the bench client's own (User:ANONYMOUS on the PLAINTEXT listener: WRITE and READ on topic
``bench``, READ on groups prefixed ``bench-``, IDEMPOTENT_WRITE and DESCRIBE on the cluster, the
prefixed ALLOW for every user and the DENY for another one that also apply to ``bench``), and
filler bindings of 50 other users on literal and prefixed topics, groups and transactional ids.
``allow.everyone.if.no.acl.found`` is true only so that the client may create the ACLs; every
resource the benchmark touches has bindings, so each check is decided by them.

The same confluent-kafka client against each broker in turn (alternating rounds, order reversed
every other round, medians): a Producer (acks=1, linger 5 ms, 100-byte values) for ``--seconds``,
then a Consumer (assigned partitions, no commits) reading everything produced back. The figure is
produce+fetch messages per second (messages produced and fetched over the time of both); the
ratio is the authorizer's against none.

Also in-process, the per-check cost itself: ``authorize`` calls per second over the same 1,000
bindings against ALLOW_ALL's, for the check a Produce or Fetch of topic ``bench`` makes.

The broker's own connections are User:ANONYMOUS too (its registration and heartbeats need
CLUSTER_ACTION), and the client creates topic ``bench`` after the ACLs (CREATE on it).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import statistics
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from kafkalite.clients import BlockingClient
from kafkalite.controller.acls import AclBinding
from kafkalite.local import processes as C
from kafkalite.local.settings import free_base_port
from kafkalite.protocol.acl import AclOperation as Op
from kafkalite.protocol.acl import AclPermissionType as Perm
from kafkalite.protocol.acl import PatternType as Pat
from kafkalite.protocol.acl import ResourceType as Res
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import create_acls as ca
from kafkalite.protocol.messages import describe_acls as dea
from kafkalite.server.authorizer import ALLOW_ALL
from kafkalite.server.authorizer.settings import STANDARD_AUTHORIZER, AuthorizerSettings
from kafkalite.server.authorizer.standard import StandardAuthorizer

from .markdown import machine, write_section

TOPIC = "bench"
PARTITIONS = 3
VALUE_BYTES = 100
ME = "User:ANONYMOUS"
Say = Callable[[str], None]


def bindings(count: int = 1000) -> list[AclBinding]:
    """The client's own bindings, then filler up to ``count``."""
    own = [
        AclBinding(Res.TOPIC, TOPIC, Pat.LITERAL, ME, "*", Op.WRITE, Perm.ALLOW),
        AclBinding(Res.TOPIC, TOPIC, Pat.LITERAL, ME, "*", Op.READ, Perm.ALLOW),
        AclBinding(Res.TOPIC, TOPIC, Pat.LITERAL, ME, "*", Op.CREATE, Perm.ALLOW),
        AclBinding(Res.TOPIC, "ben", Pat.PREFIXED, "User:*", "*", Op.DESCRIBE, Perm.ALLOW),
        AclBinding(Res.TOPIC, "be", Pat.PREFIXED, "User:mallory", "*", Op.ALL, Perm.DENY),
        AclBinding(Res.GROUP, "bench-", Pat.PREFIXED, ME, "*", Op.READ, Perm.ALLOW),
        AclBinding(Res.CLUSTER, "kafka-cluster", Pat.LITERAL, ME, "*", Op.IDEMPOTENT_WRITE, Perm.ALLOW),
        AclBinding(Res.CLUSTER, "kafka-cluster", Pat.LITERAL, ME, "*", Op.DESCRIBE, Perm.ALLOW),
        AclBinding(Res.CLUSTER, "kafka-cluster", Pat.LITERAL, ME, "*", Op.CLUSTER_ACTION, Perm.ALLOW),
    ]
    filler: list[AclBinding] = []
    ops = (Op.READ, Op.WRITE, Op.DESCRIBE, Op.ALTER)
    i = 0
    while len(own) + len(filler) < count:
        user = f"User:user{i % 50}"
        kind = i % 5
        if kind == 0:
            filler.append(AclBinding(Res.TOPIC, f"topic-{i}", Pat.LITERAL, user, "*", ops[i % 4], Perm.ALLOW))
        elif kind == 1:
            filler.append(
                AclBinding(Res.TOPIC, f"team{i % 40}-{i}", Pat.PREFIXED, user, "*", Op.READ, Perm.ALLOW)
            )
        elif kind == 2:
            filler.append(
                AclBinding(
                    Res.TOPIC, TOPIC, Pat.LITERAL, user, f"10.{i // 250}.{i % 250}.1", Op.WRITE, Perm.DENY
                )
            )
        elif kind == 3:
            filler.append(AclBinding(Res.GROUP, f"group-{i}", Pat.LITERAL, user, "*", Op.READ, Perm.ALLOW))
        else:
            filler.append(
                AclBinding(Res.TRANSACTIONAL_ID, f"tx-{i}", Pat.PREFIXED, user, "*", Op.WRITE, Perm.ALLOW)
            )
        i += 1
    return own + filler


@dataclass
class Broker:
    name: str
    nodes: list[Any]
    directory: str

    @property
    def servers(self) -> str:
        return f"127.0.0.1:{self.nodes[0].client_port}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def checks_made(broker: Broker) -> int:
    """The broker's authorization decisions so far (its authorizer metrics; 0 without any)."""
    port = broker.nodes[0].metrics_port
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    for line in text.splitlines():
        if line.startswith("kafka_server_authorizer_metrics_authorization_request_total"):
            return int(float(line.split()[-1]))
    return 0


@contextlib.contextmanager
def _broker(name: str, extra: tuple[str, ...]) -> Iterator[Broker]:
    work = tempfile.mkdtemp(prefix="kafkalite-bench-authorizer-")
    nodes = C.start(1, work, free_base_port(1), extra, metrics_base=_free_port())
    try:
        if not C.wait_registered(nodes, 60):
            raise RuntimeError(f"the {name} broker did not come up")
        yield Broker(name, nodes, work)
    finally:
        C.stop(nodes)
        shutil.rmtree(work, ignore_errors=True)


def _client(broker: Broker) -> BlockingClient:
    return BlockingClient("127.0.0.1", broker.nodes[0].client_port, "bench-authorizer", 30)


def _create_acls(broker: Broker, acls: list[AclBinding]) -> None:
    C_ = ca.REQUEST["creations"]
    body = ca.REQUEST(
        creations=[
            C_(
                resource_type=b.resource_type,
                resource_name=b.resource_name,
                resource_pattern_type=b.pattern_type,
                principal=b.principal,
                host=b.host,
                operation=b.operation,
                permission_type=b.permission_type,
            )
            for b in acls
        ]
    )
    query = dea.REQUEST(
        resource_type_filter=Res.ANY,
        resource_name_filter=None,
        pattern_type_filter=Pat.ANY,
        principal_filter=None,
        host_filter=None,
        operation=Op.ANY,
        permission_type=Perm.ANY,
    )
    client = _client(broker)
    try:
        deadline = time.monotonic() + 60
        while True:  # CLUSTER_AUTHORIZATION_FAILED until the broker has the controller's (empty) set
            answer = client.send_and_receive(ApiKey.CREATE_ACLS, 3, body)
            errors = {r.error_code for r in answer.results}
            if errors == {0}:
                break
            if errors != {31} or time.monotonic() > deadline:
                raise RuntimeError(f"CreateAcls: errors {sorted(errors)}")
            time.sleep(0.05)
        while True:  # the controller's push has reached the broker's authorizer
            described = client.send_and_receive(ApiKey.DESCRIBE_ACLS, 3, query)
            if sum(len(r.acls) for r in described.resources) == len(set(acls)):
                return
            if time.monotonic() > deadline:
                raise RuntimeError("the broker did not get the ACLs")
            time.sleep(0.05)
    finally:
        client.close()


def _create_topic(broker: Broker) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": broker.servers})
    admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)])[TOPIC].result(30)
    deadline = time.monotonic() + 60
    while True:
        t = admin.list_topics(TOPIC, timeout=10).topics.get(TOPIC)
        if (
            t is not None
            and t.error is None
            and len(t.partitions) == PARTITIONS
            and all(p.leader >= 0 for p in t.partitions.values())
        ):
            return
        if time.monotonic() > deadline:
            raise RuntimeError("the topic did not come up")
        time.sleep(0.05)


def produce_fetch(broker: Broker, seconds: float) -> tuple[float, float, float]:
    """(produce messages/s, fetch messages/s, produce+fetch messages/s)."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    producer = Producer({"bootstrap.servers": broker.servers, "acks": "1", "linger.ms": 5})
    consumer = Consumer(
        {
            "bootstrap.servers": broker.servers,
            "group.id": f"bench-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    try:
        starts = [
            consumer.get_watermark_offsets(TopicPartition(TOPIC, p), timeout=10)[1] for p in range(PARTITIONS)
        ]
        value = os.urandom(VALUE_BYTES)
        sent = 0
        start = time.perf_counter()
        deadline = start + seconds
        while time.perf_counter() < deadline:
            for _ in range(500):
                try:
                    producer.produce(TOPIC, value)
                    sent += 1
                except BufferError:
                    producer.poll(0.001)
            producer.poll(0)
        if producer.flush(60):
            raise RuntimeError("messages left unsent")
        produce_s = time.perf_counter() - start
        consumer.assign([TopicPartition(TOPIC, p, starts[p]) for p in range(PARTITIONS)])
        got = 0
        start = time.perf_counter()
        give_up = start + 120
        while got < sent and time.perf_counter() < give_up:
            for m in consumer.consume(1000, 1.0):
                if m.error() is None:
                    got += 1
        fetch_s = time.perf_counter() - start
        if got < sent:
            raise RuntimeError(f"fetched {got} of {sent}")
        return sent / produce_s, got / fetch_s, (sent + got) / (produce_s + fetch_s)
    finally:
        consumer.close()


@dataclass
class _Req:
    principal: str = ME
    client_address: str = "127.0.0.1"
    api_key: int = ApiKey.PRODUCE


def checks_per_second(acls: list[AclBinding], seconds: float) -> tuple[float, float]:
    """``authorize`` calls per second for WRITE on topic ``bench``: (StandardAuthorizer with
    ``acls``, ALLOW_ALL)."""
    standard = StandardAuthorizer(AuthorizerSettings(STANDARD_AUTHORIZER, frozenset(), True))
    standard.load(acls)
    request = _Req()
    rates = []
    for authorizer in (standard, ALLOW_ALL):
        if not authorizer.authorize(request, Op.WRITE, Res.TOPIC, TOPIC):
            raise RuntimeError("the bench client's own binding does not allow it")
        calls = 0
        start = time.perf_counter()
        deadline = start + seconds
        while time.perf_counter() < deadline:
            for _ in range(1000):
                authorizer.authorize(request, Op.WRITE, Res.TOPIC, TOPIC)
            calls += 1000
        rates.append(calls / (time.perf_counter() - start))
    return rates[0], rates[1]


def run(
    seconds: float, rounds: int, acl_count: int, write_md: str | None, command: str, say: Say = print
) -> str:
    acls = bindings(acl_count)
    on_extra = (f"authorizer.class.name={STANDARD_AUTHORIZER}", "allow.everyone.if.no.acl.found=true")
    results: dict[str, list[tuple[float, float, float]]] = {"off": [], "on": []}
    with _broker("off", ()) as off, _broker("on", on_extra) as on:
        _create_acls(on, acls)
        for b in (off, on):
            _create_topic(b)
        before = checks_made(on)
        for r in range(rounds):
            for b in (off, on) if r % 2 == 0 else (on, off):
                found = produce_fetch(b, seconds)
                results[b.name].append(found)
                say(
                    f"round {r + 1}/{rounds} authorizer {b.name}: produce {found[0]:,.0f}/s, fetch "
                    f"{found[1]:,.0f}/s, produce+fetch {found[2]:,.0f} messages/s"
                )
        checks = checks_made(on) - before
    say(f"authorization checks the broker made during the rounds: {checks:,}")
    rates = checks_per_second(acls, min(seconds, 2.0))
    say(f"authorize(): {rates[0]:,.0f} calls/s with {len(acls)} ACLs, {rates[1]:,.0f} with ALLOW_ALL")
    body = _section(results, rates, checks, len(acls), seconds, rounds, command)
    if write_md:
        write_section(write_md, "authorizer", body)
        say(f"wrote {write_md}")
    return body


def _section(
    results: dict[str, list[tuple[float, float, float]]],
    rates: tuple[float, float],
    checks: int,
    acl_count: int,
    seconds: float,
    rounds: int,
    command: str,
) -> str:
    med = {k: tuple(statistics.median(x[i] for x in v) for i in range(3)) for k, v in results.items()}
    ratio = med["on"][2] / med["off"][2]
    text = (
        f"## Authorizer: produce and fetch with the StandardAuthorizer and {acl_count:,} ACLs\n\n"
        f"Command: `{command}`  \n"
        f"Machine: {machine()}; 2 single-broker processes and the client on the same cores.  \n"
        f"Measured: {time.strftime('%Y-%m-%d %H:%M')}. {rounds} rounds of {seconds:g} s of producing "
        f"(confluent-kafka, acks=1, linger 5 ms, {VALUE_BYTES}-byte values, topic of {PARTITIONS} "
        f"partitions) then fetching it all back, the two brokers in turn (order reversed every other "
        f"round), medians.\n\n"
        "| authorizer | produce messages/s | fetch messages/s | produce+fetch messages/s | each round |\n"
        "| --- | ---: | ---: | ---: | --- |\n"
    )
    for k, label in (("off", "none"), ("on", f"StandardAuthorizer, {acl_count:,} ACLs")):
        each = ", ".join(f"{x[2]:,.0f}" for x in results[k])
        text += f"| {label} | {med[k][0]:,.0f} | {med[k][1]:,.0f} | {med[k][2]:,.0f} | {each} |\n"
    text += f"\nAuthorization checks the broker with the authorizer made during the rounds: {checks:,}" + (
        " (none: this build's Produce and Fetch handlers do not ask the authorizer yet, so the two "
        "rows differ by the machine's noise alone; rerun once every api's checks are in).\n"
        if checks == 0
        else ".\n"
    )
    text += (
        f"\nOne check (`authorize` of WRITE on the topic, in-process): {rates[0]:,.0f} calls/s "
        f"({1e9 / rates[0]:,.0f} ns each) with {acl_count:,} ACLs, {rates[1]:,.0f} calls/s "
        f"({1e9 / rates[1]:,.0f} ns) with ALLOW_ALL.\n\n"
        f"Goals:\n\n- produce+fetch with the authorizer at least 0.95x without: {ratio:.2f}x, "
        + ("not measured yet (no check was made)" if checks == 0 else ("met" if ratio >= 0.95 else "NOT met"))
        + "\n"
    )
    return text
