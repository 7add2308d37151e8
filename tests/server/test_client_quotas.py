"""Client quotas end to end on a 2-broker cluster (broker 1 runs the controller): AlterClientQuotas
and DescribeClientQuotas on the wire (kafka-python 3.0.12 and confluent-kafka 2.16 have no client
quota admin calls), forwarded from broker 2 and pushed to both; a producer over producer_byte_rate
held to it while another client id is not; a consumer over consumer_byte_rate likewise; throttle
time in confluent-kafka's statistics; controller_mutation_rate refusing a burst of topics."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, Producer

from kafkalite.common.uuids import ZERO_UUID
from kafkalite.metrics.collector import BrokerCollector
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import alter_client_quotas as acq
from kafkalite.protocol.messages import create_topics as ct
from kafkalite.protocol.messages import delete_topics as dt
from kafkalite.protocol.messages import describe_client_quotas as dcq
from kafkalite.protocol.messages import metadata
from kafkalite.server.broker import Broker
from kafkalite.testing import Cluster
from tests.support.wait import wait_for
from tests.support.wire_client import Client

pytestmark = pytest.mark.integration

EXACT, DEFAULT, SPECIFIED = dcq.MATCH_EXACT, dcq.MATCH_DEFAULT, dcq.MATCH_SPECIFIED

# quota.window.num: 3 one-second samples instead of Kafka's 11. A rate is measured over at least
# (samples - 1) windows, so a client over its quota gets about 2 s of burst before it is throttled,
# not 10 s: the throttling tests see it with a fifth of the data and time.
WINDOWS = 3


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with Cluster(2, topics=["slow", "free", "reads"], settings={"quota.window.num": WINDOWS}) as c:
        yield c


def connect(broker: Broker, client_id: str = "test") -> Client:
    return Client("127.0.0.1", broker.bound_port(None), client_id=client_id)


Entity = list[tuple[str, str | None]]
Ops = list[tuple[str, float, bool]]
OK = (E.NONE, None)


def alter(broker: Broker, entries: list[tuple[Entity, Ops]], validate_only: bool = False,
          version: int = 1) -> list[tuple[int, str | None]]:
    Q = acq.REQUEST
    body = Q(validate_only=validate_only, entries=[Q["entries"](
        entity=[Q["entries"]["entity"](entity_type=t, entity_name=n) for t, n in entity],
        ops=[Q["entries"]["ops"](key=k, value=v, remove=r) for k, v, r in ops]) for entity, ops in entries])
    with connect(broker) as c:
        response = c.call(ApiKey.ALTER_CLIENT_QUOTAS, version, body)
    return [(e.error_code, e.error_message) for e in response.entries]


def quota_set(cluster: Cluster, client_id: str, key: str, value: float) -> None:
    """``key`` = ``value`` for a client id, through broker 1, seen by both brokers."""
    assert alter(cluster.broker(1), [([("client-id", client_id)], [(key, value, False)])]) == [OK]
    for b in (cluster.broker(1), cluster.broker(2)):
        assert wait_for(lambda b=b: b.quotas.quotas.value((("client-id", client_id),), key) == value)


def describe(broker: Broker, components: list[tuple[str, int, str | None]], strict: bool = False,
             version: int = 1) -> tuple[int, dict]:
    Q = dcq.REQUEST
    body = Q(strict=strict, components=[Q["components"](entity_type=t, match_type=m, match=n)
                                        for t, m, n in components])
    with connect(broker) as c:
        r = c.call(ApiKey.DESCRIBE_CLIENT_QUOTAS, version, body)
    if r.error_code:
        return r.error_code, {}
    return E.NONE, {tuple((e.entity_type, e.entity_name) for e in entry.entity):
                    {v.key: v.value for v in entry.values} for entry in r.entries}


def test_alter_forwarded_and_pushed_to_every_broker(cluster):
    b1, b2 = cluster.broker(1), cluster.broker(2)
    alice_app = [("user", "alice"), ("client-id", "app")]
    assert alter(b2, [(alice_app, [("producer_byte_rate", 1024.0, False)]),
                      ([("client-id", None)], [("consumer_byte_rate", 2048.0, False)])]) == [OK] * 2
    for b in (b1, b2):
        assert wait_for(lambda b=b: describe(b, [("user", EXACT, "alice")])[1] == {
            (("client-id", "app"), ("user", "alice")): {"producer_byte_rate": 1024.0}})
    # strict: only entities with exactly the types named
    assert describe(b1, [("user", EXACT, "alice")], strict=True) == (E.NONE, {})
    assert describe(b1, [("client-id", DEFAULT, None)], strict=True)[1] == {
        (("client-id", None),): {"consumer_byte_rate": 2048.0}}
    # SPECIFIED: any entity with the type, the default one too (as Kafka's ClientQuotasImage)
    assert describe(b1, [("client-id", SPECIFIED, None)])[1] == {
        (("client-id", "app"), ("user", "alice")): {"producer_byte_rate": 1024.0},
        (("client-id", None),): {"consumer_byte_rate": 2048.0}}
    assert describe(b1, [("user", DEFAULT, None)])[1] == {}
    # removal, validate_only changes nothing
    remove_default = ([("client-id", None)], [("consumer_byte_rate", 0.0, True)])
    assert alter(b1, [remove_default], validate_only=True) == [OK]
    assert describe(b2, [("client-id", DEFAULT, None)])[1] != {}
    assert alter(b1, [remove_default, (alice_app, [("producer_byte_rate", 0.0, True)])]) == [OK] * 2
    for b in (b1, b2):
        assert wait_for(lambda b=b: describe(b, [])[1] == {})


@pytest.mark.parametrize("entity, ops, message", [
    ([], [("producer_byte_rate", 1.0, False)], "Invalid empty client quota entity"),
    ([("user", "a"), ("user", "b")], [], "Invalid client quota entity, duplicate entity entry user"),
    ([("group", "a")], [], "Unhandled client quota entity type: group"),
    ([("user", "")], [], "Empty user not supported"),
    ([("ip", "1.2.3.4"), ("user", "a")], [],
     "Invalid quota entity combination, IP entity should not be combined with User or ClientId"),
    ([("user", "a")], [("bogus", 1.0, False)], "Invalid configuration key bogus"),
    ([("user", "a")], [("producer_byte_rate", 0.0, False)],
     "Quota producer_byte_rate must be greater than 0"),
    ([("user", "a")], [("producer_byte_rate", 1.5, False)],
     "producer_byte_rate cannot be a fractional value."),
    ([("user", "a")], [("producer_byte_rate", 1e30, False)],
     "Proposed value for producer_byte_rate is too large for a LONG."),
    ([("ip", "1.2.3.4")], [("producer_byte_rate", 10.0, False)],
     "Invalid configuration key producer_byte_rate"),
])
def test_alter_refusals(cluster, entity, ops, message):
    assert alter(cluster.broker(2), [(entity, ops)]) == [(E.INVALID_REQUEST, message)]


@pytest.mark.parametrize("components, code, message", [
    ([("group", EXACT, "x")], E.UNSUPPORTED_VERSION, "Unsupported entity type group"),
    ([("", EXACT, "x")], E.INVALID_REQUEST, "Invalid empty entity type."),
    ([("user", EXACT, None)], E.INVALID_REQUEST,
     "Request specified MATCH_TYPE_EXACT, but set match string to null."),
    ([("user", DEFAULT, "x")], E.INVALID_REQUEST,
     "Request specified MATCH_TYPE_DEFAULT, but also specified a match string."),
    ([("user", SPECIFIED, "x")], E.INVALID_REQUEST,
     "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string."),
    ([("user", EXACT, "x"), ("user", DEFAULT, None)], E.INVALID_REQUEST,
     "Entity type user cannot appear more than once in the filter."),
    ([("ip", SPECIFIED, None), ("user", DEFAULT, None)], E.INVALID_REQUEST,
     "Invalid entity filter component combination. IP filter component should not be used with "
     "user or clientId filter component."),
    ([("user", 7, None)], E.INVALID_REQUEST, "Unknown match type 7"),
])
def test_describe_refusals(cluster, components, code, message):
    Q = dcq.REQUEST
    body = Q(strict=False, components=[Q["components"](entity_type=t, match_type=m, match=n)
                                       for t, m, n in components])
    with connect(cluster.broker(1)) as c:
        r = c.call(ApiKey.DESCRIBE_CLIENT_QUOTAS, 1, body)
    assert (r.error_code, r.error_message, r.entries) == (code, message, None)


def _produce_for(bootstrap: str, client_id: str, topic: str, seconds: float,
                 stats: list) -> tuple[int, float]:
    """Bytes of values acknowledged while producing as fast as possible for ``seconds``, and the
    seconds it took, the final flush included."""
    start = time.monotonic()
    # A small queue: a throttled producer's acknowledgements can run ahead of its quota by what
    # one request carries (KIP-219 answers at once and then mutes), at most the queue.
    p = Producer({"bootstrap.servers": bootstrap, "client.id": client_id, "linger.ms": 5,
                  "statistics.interval.ms": 500, "stats_cb": lambda s: stats.append(json.loads(s)),
                  "queue.buffering.max.kbytes": 64})
    acked = [0]

    def on_delivery(err, msg):
        if err is None:
            acked[0] += len(msg.value())

    value = b"v" * 1000
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            p.produce(topic, value, on_delivery=on_delivery)
        except BufferError:
            p.poll(0.05)
        p.poll(0)
    p.flush(60)
    return acked[0], time.monotonic() - start


def test_producer_held_to_its_quota_while_another_is_not(cluster):
    quota = 50_000.0
    quota_set(cluster, "slow-producer", "producer_byte_rate", quota)
    leader = cluster.broker(cluster.leader("slow"))
    bootstrap = f"127.0.0.1:{leader.bound_port(None)}"
    stats: list = []
    seconds = 3.0
    slowed, elapsed = _produce_for(bootstrap, "slow-producer", "slow", seconds, stats)
    free, _ = _produce_for(bootstrap, "free-producer", "free", seconds, [])
    # Kafka's window: a burst of up to the quota x the window's span passes before throttling
    # catches up, so the bound is generous; well under what the free client moved.
    assert slowed <= quota * (elapsed + WINDOWS) * 1.5
    assert free > 3 * slowed
    throttles = [s["brokers"][k]["throttle"]["max"] for s in stats for k in s["brokers"]
                 if s["brokers"][k].get("throttle")]
    assert max(throttles) > 0
    assert leader.quotas.produce.sensors[("", "slow-producer")].throttled > 0
    samples = {(s.name, s.labels.get("client_id")): s.value for f in BrokerCollector(leader).collect()
               if f.name.startswith("kafka_server_produce_") for s in f.samples}
    assert samples[("kafka_server_produce_throttled_total", "slow-producer")] > 0
    assert samples[("kafka_server_produce_throttle_time", "slow-producer")] > 0
    assert ("", "free-producer") not in leader.quotas.produce.sensors or \
        leader.quotas.produce.sensors[("", "free-producer")].throttled == 0


def test_consumer_held_to_its_quota(cluster):
    leader = cluster.broker(cluster.leader("reads"))
    bootstrap = f"127.0.0.1:{leader.bound_port(None)}"
    total = 150_000
    # small batches: like Kafka, a batch larger than the quota's window bytes could never pass
    p = Producer({"bootstrap.servers": bootstrap, "batch.size": 16384})
    for _ in range(total // 1000):
        p.produce("reads", b"r" * 1000)
        p.poll(0)
    assert p.flush(30) == 0
    quota = 30_000.0
    quota_set(cluster, "slow-consumer", "consumer_byte_rate", quota)
    c = Consumer({"bootstrap.servers": bootstrap, "client.id": "slow-consumer", "group.id": "q",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        c.subscribe(["reads"])
        got, start = 0, time.monotonic()
        while got < total and time.monotonic() - start < 60:
            m = c.poll(0.5)
            if m is not None and m.error() is None:
                got += len(m.value())
        elapsed = time.monotonic() - start
    finally:
        c.close()
    assert got >= total
    # 150 kB at 30 kB/s: the window (at least 2 s long) lets about 60-90 kB through at once,
    # then throttles: the rest takes about 3 s more (asserted with a generous bound; unthrottled,
    # it all comes in well under a second).
    assert leader.quotas.fetch.sensors[("", "slow-consumer")].throttled > 0
    assert elapsed > (total / quota - WINDOWS) * 0.5


def test_controller_mutation_rate_refuses_a_burst(cluster):
    b1 = cluster.broker(1)  # runs the controller
    quota_set(cluster, "creator", "controller_mutation_rate", 1.0)
    Q = ct.REQUEST

    def create(names: list[str], partitions: int, version: int):
        body = Q(timeout_ms=10000, validate_only=False, topics=[Q["topics"](
            name=n, num_partitions=partitions, replication_factor=1, assignments=[], configs=[])
            for n in names])
        with connect(b1, "creator") as c:
            return c.call(ApiKey.CREATE_TOPICS, version, body)

    # burst = 1/s x 11 windows x 1 s: 20 partitions empty the bucket, the next topic is refused
    r = create(["m1", "m2"], 20, 7)
    codes = [t.error_code for t in r.topics]
    assert codes == [E.NONE, E.THROTTLING_QUOTA_EXCEEDED]
    assert r.throttle_time_ms > 0
    # the controller checks a topic before charging it: an existing topic is refused as such
    assert [t.error_code for t in create(["m1"], 20, 7).topics] == [E.TOPIC_ALREADY_EXISTS]
    # DeleteTopics v6 meets the same empty bucket
    D = dt.REQUEST
    with connect(b1, "creator") as c:
        body = D(timeout_ms=10000, topics=[D["topics"](name="m1", topic_id=ZERO_UUID)])
        r = c.call(ApiKey.DELETE_TOPICS, 6, body)
    assert [(t.error_code, t.error_message) for t in r.responses] == [
        (E.THROTTLING_QUOTA_EXCEEDED, "The throttling quota has been exceeded.")]
    assert r.throttle_time_ms > 0
    # CreateTopics v5 is permissive: accepted, then throttled
    r = create(["m3"], 1, 5)
    assert [t.error_code for t in r.topics] == [E.NONE]
    assert r.throttle_time_ms > 0


def test_request_percentage_throttles_and_mutes_the_connection(cluster):
    """A client id over request_percentage gets the throttle time (capped at one window, 1 s) in
    its response, and its connection stays muted for it (KIP-219): its next request is answered
    only after that; another client id is answered at once without throttle time."""
    quota_set(cluster, "busy", "request_percentage", 0.0001)
    b = cluster.broker(2)
    md = metadata.REQUEST(topics=None, allow_auto_topic_creation=False,
                          include_topic_authorized_operations=False)
    with connect(b, "busy") as c:
        first = c.call(ApiKey.METADATA, 12, md)
        assert first.throttle_time_ms == 1000
        start = time.monotonic()
        c.call(ApiKey.METADATA, 12, md)
        assert time.monotonic() - start >= 0.5  # muted for the throttle time (1 s)
    with connect(b, "idle") as c:
        assert c.call(ApiKey.METADATA, 12, md).throttle_time_ms == 0
    assert b.quotas.request.sensors[("", "busy")].throttled >= 1


def test_kafka_python_sees_the_produce_throttle_time(cluster):
    """kafka-python 3.0.12's producer-metrics throttle-time-max shows the broker's throttle."""
    from kafka import KafkaProducer

    quota_set(cluster, "kp-slow", "producer_byte_rate", 10_000.0)
    leader = cluster.broker(cluster.leader("free"))
    p = KafkaProducer(bootstrap_servers=f"127.0.0.1:{leader.bound_port(None)}", client_id="kp-slow",
                      linger_ms=5)
    try:
        for _ in range(50):  # 50 kB: past the 20-30 kB the 2-3 s window lets through at once
            p.send("free", b"k" * 1000)
        p.flush(60)
        metrics = p.metrics()["producer-metrics"]
        assert metrics["throttle-time-max"] > 0
    finally:
        p.close(5)


def test_quotas_pushed_to_a_restarted_broker_and_kept_by_the_controller(tmp_path):
    """A broker that restarts gets every quota again when it registers (the controller's full
    push), and the controller's store keeps them across a restart of the whole cluster."""
    with Cluster(2, storage="files") as c:
        quota_set(c, "kept", "producer_byte_rate", 1234.0)
        c.restart(2)
        assert wait_for(lambda: c.broker(2).quotas.quotas.value((("client-id", "kept"),),
                                                                "producer_byte_rate") == 1234.0)
        c.restart_all()
        for n in (1, 2):
            assert wait_for(lambda n=n: describe(c.broker(n), [("client-id", EXACT, "kept")])[1] == {
                (("client-id", "kept"),): {"producer_byte_rate": 1234.0}})
