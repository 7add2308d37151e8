"""A kafkalite cluster inside the test's own process, with faults to inject.

Every broker is a kafkalite Broker on its own threads, on 127.0.0.1 ports below the kernel's
ephemeral range; broker 1 is also the controller, or, with ``controllers=N``, the first N nodes
(or N controller-only nodes) form a controller quorum whose voters reach each other's controller
listener through TCP proxies (kafkalite/local/proxy.py) that ``partition_controller`` cuts.
Storage is in memory by default (nothing on disk), or files under a temporary directory that goes
with the cluster. ``stop`` (or leaving the
``with``) stops every broker and checks that no thread of theirs is left.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import logging
import shutil
import tempfile
import threading
import time
import weakref
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from kafkalite.common.errors import ApiError
from kafkalite.local.fault_admin import FaultAdmin, serve_admin
from kafkalite.local.proxy import TcpProxy
from kafkalite.local.settings import HOST, ClusterError, broker_settings, free_base_port
from kafkalite.metrics.http import JsonHttpServer
from kafkalite.protocol import error_codes as E
from kafkalite.server.broker import Broker
from kafkalite.server.config import BrokerConfig
from kafkalite.server.coordinator.offsets_topic import OFFSETS_TOPIC
from kafkalite.server.coordinator.transaction.log_records import TRANSACTION_STATE_TOPIC
from kafkalite.server.faults.injector import CapturedRequest, FaultError
from kafkalite.server.faults.operations import api_key, error_code
from kafkalite.server.meta_properties import new_cluster_id

log = logging.getLogger("kafkalite.testing")

READY_TIMEOUT = 30.0
POLL = 0.002  # seconds between looks at the brokers' state while waiting for it

# What a test cluster sets unless the test says otherwise (each also a Kafka setting).
TEST_DEFAULTS: dict[str, str] = {
    # One network and one I/O thread per listener: three brokers share one interpreter.
    "num.network.threads": "1",
    "num.io.threads": "2",
    # A killed broker's session ends at once (``kill`` fences it); a short session still bounds
    # a broker a test stopped some other way.
    "broker.session.timeout.ms": "6000",
    "broker.heartbeat.interval.ms": "500",
    # A follower whose first fetch reaches its leader before the leader knows it leads (their
    # LeaderAndIsr requests cross) tries again soon, not after Kafka's 1000 ms: the first
    # acks=all produce of a test would wait for it.
    "replica.fetch.backoff.ms": "50",
    # Kafka's own test brokers' value: the offsets topic the cluster creates before it is ready
    # has few partitions to create (broker_settings already sets no initial rebalance delay).
    "offsets.topic.num.partitions": "5",
    # The same for __transaction_state, created with it.
    "transaction.state.log.num.partitions": "5",
}


@dataclasses.dataclass(frozen=True)
class Topic:
    """A topic the cluster creates before it is ready."""

    name: str
    partitions: int = 1
    replication_factor: int | None = None  # None: min(3, brokers)
    configs: Mapping[str, str] = dataclasses.field(default_factory=dict)


TopicSpec = str | Topic | tuple


def _topic(spec: TopicSpec) -> Topic:
    if isinstance(spec, Topic):
        return spec
    if isinstance(spec, str):
        return Topic(spec)
    return Topic(*spec)


@dataclasses.dataclass
class Node:
    node_id: int
    client_port: int
    internal_port: int
    settings: dict[str, str]
    broker: Broker | None = None
    volume: Any = None  # its memory storage, kept across a kill and restart
    is_broker: bool = True  # False: a controller-only node (process.roles=controller)
    is_voter: bool = False  # one of the controller quorum's voters

    @property
    def alive(self) -> bool:
        return self.broker is not None

    @property
    def address(self) -> str:
        return f"{HOST}:{self.client_port}"


class Cluster:
    """N in-process brokers. Use as a context manager (or ``start``/``stop``)::

        with kafkalite.testing.Cluster(3, topics=["orders"]) as cluster:
            producer = Producer({"bootstrap.servers": cluster.bootstrap_servers})

    ``settings`` go to every broker (Kafka's names), ``broker_settings`` to single ones
    ({node id: settings}); ``storage`` is "memory" or "files"; ``topics`` are created (and led)
    before ``start`` returns, and so is ``__consumer_offsets`` unless ``offsets_topic`` is False.

    ``controllers``: how many voters the controller quorum has; the first ``controllers`` brokers
    run a controller each, or, with ``controller_only``, ``controllers`` more nodes (ids after the
    brokers') run only a controller. With one controller and no ``controller_only``, broker 1 runs
    it alone, as ever."""

    def __init__(self, brokers: int = 3, *, controllers: int = 1, controller_only: bool = False,
                 topics: Sequence[TopicSpec] = (),
                 settings: Mapping[str, Any] | None = None,
                 broker_settings: Mapping[int, Mapping[str, Any]] | None = None,
                 storage: str = "memory", ready_timeout: float = READY_TIMEOUT,
                 offsets_topic: bool = True) -> None:
        if brokers < 1:
            raise ValueError("a cluster has at least one broker")
        if storage not in ("memory", "files"):
            raise ValueError(f"storage is 'memory' or 'files', not {storage!r}")
        if controllers < 1 or (not controller_only and controllers > brokers):
            raise ValueError(f"controllers is 1 to the number of brokers ({brokers}), or any number "
                             "of controller-only nodes")
        self.size = brokers
        self.controllers = controllers
        self.controller_only = controller_only
        first = brokers + 1 if controller_only else 1
        self.voter_ids = list(range(first, first + controllers))
        self.quorum = controllers > 1 or controller_only  # else broker 1's lone controller
        # (node, voter) -> the proxy node's controller connections to that voter go through.
        self._proxies: dict[tuple[int, int], TcpProxy] = {}
        self.topics = [_topic(t) for t in topics]
        self.settings = {k: str(v) for k, v in (settings or {}).items()}
        self.broker_overrides = {int(n): {k: str(v) for k, v in s.items()}
                                 for n, s in (broker_settings or {}).items()}
        self.storage = storage
        self.ready_timeout = ready_timeout
        self.offsets_topic = offsets_topic
        self.nodes: dict[int, Node] = {}
        self.cluster_id = new_cluster_id()
        self._directory: str | None = None
        self._admin: JsonHttpServer | None = None
        self._lock = threading.RLock()
        self.started_s = 0.0  # seconds ``start`` took (ready included)

    # --- life cycle ---------------------------------------------------------------------------

    def __enter__(self) -> Cluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> Cluster:
        began = time.monotonic()
        _LIVE.add(self)
        try:
            if self.storage == "files":
                self._directory = tempfile.mkdtemp(prefix="kafkalite-")
            self._start_brokers()
            self.wait_ready(self.ready_timeout)
            # All at once: the controller creates one while the brokers learn of the one before,
            # and one wait for all of them to be led.
            self._create_topics([*(self._internal_topics() if self.offsets_topic else []), *self.topics],
                                self.ready_timeout)
        except BaseException:
            self.stop()
            raise
        self.started_s = time.monotonic() - began
        return self

    def _node_ids(self) -> list[int]:
        return list(range(1, self.size + 1)) + (self.voter_ids if self.controller_only else [])

    def _voters_for(self, node_id: int) -> str:
        """controller.quorum.voters as ``node_id`` sees it: each voter at its proxy for this node."""
        if not self.quorum:
            return ""
        for voter in self.voter_ids:
            if (node_id, voter) not in self._proxies:
                self._proxies[(node_id, voter)] = TcpProxy(None, HOST, name=f"proxy-{node_id}-to-{voter}")
        return ",".join(f"{v}@{HOST}:{self._proxies[(node_id, v)].port}" for v in self.voter_ids)

    def _start_brokers(self) -> None:
        for attempt in range(5):
            base = free_base_port(self.size)
            self.nodes = {}
            for n in self._node_ids():
                is_broker = n <= self.size
                client, internal = (base + 2 * (n - 1), base + 2 * (n - 1) + 1) if is_broker else (0, 0)
                settings = broker_settings(n, self._directory or "/kafkalite-memory", client, internal,
                                           base + 1, self.cluster_id, voters=self._voters_for(n),
                                           controller_only=self.controller_only)
                settings.update(TEST_DEFAULTS)
                if self.storage == "memory":
                    settings["log.storage"] = "memory"
                settings.update(self.settings)
                settings.update(self.broker_overrides.get(n, {}))
                self.nodes[n] = Node(n, client, internal, settings, is_broker=is_broker,
                                     is_voter=n in self.voter_ids if self.quorum else n == 1)
            try:
                for node in self.nodes.values():
                    self._start_node(node)
                return
            except OSError as e:  # a port taken since it was found free: another base
                log.info("Test cluster ports from %d: %s; trying others", base, e)
                self._stop_brokers()
                if attempt == 4:
                    raise ClusterError(f"no free ports for the test cluster: {e}") from e

    def _start_node(self, node: Node) -> None:
        config = BrokerConfig(node.settings)
        broker = Broker(config, volume=node.volume) if self.storage == "memory" else Broker(config)
        try:
            broker.startup()
        except BaseException:
            broker.shutdown(graceful=False)
            raise
        node.broker = broker
        if self.storage == "memory":
            node.volume = broker.volume
        if self.quorum and node.is_voter:  # its proxies now lead to where it listens
            target = (HOST, broker.bound_port("CONTROLLER"))
            for (_, voter), proxy in self._proxies.items():
                if voter == node.node_id:
                    proxy.target = target

    def stop(self) -> None:
        """Stop every broker and the admin endpoint; remove the files, if any. Idempotent."""
        with self._lock:
            if self._admin is not None:
                self._admin.shutdown()
                self._admin = None
            self._stop_brokers()
            for proxy in self._proxies.values():
                proxy.close()
            self._proxies = {}
            for node in self.nodes.values():
                if node.volume is not None:
                    node.volume.close()  # the memory goes now, not when the cluster is collected
                    node.volume = None
            if self._directory is not None:
                shutil.rmtree(self._directory, ignore_errors=True)
                self._directory = None
            _LIVE.discard(self)

    def _stop_brokers(self) -> None:
        # All at once, none gracefully: the test is over, nobody waits for an answer (a graceful
        # stop would wait for long-polling fetches, and for a controller that is stopping too).
        brokers = []
        for node in self.nodes.values():
            broker, node.broker = node.broker, None
            if broker is not None:
                brokers.append(broker)
        stoppers = [threading.Thread(target=b.shutdown, kwargs={"timeout": 5, "graceful": False},
                                     name=f"stop-broker-{b.node_id}") for b in brokers]
        for t in stoppers:
            t.start()
        for t in stoppers:
            t.join()

    # --- what the test reads ------------------------------------------------------------------

    @property
    def directory(self) -> str | None:
        """Where the brokers keep their files (storage "files"); None in memory."""
        return self._directory

    @property
    def ports(self) -> list[int]:
        return [p for n in self.nodes.values() if n.is_broker for p in (n.client_port, n.internal_port)]

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(n.address for n in self.nodes.values() if n.is_broker)

    @property
    def controller(self) -> Broker:
        """The node of the active controller (broker 1 with one controller; in a quorum, waiting
        up to ``ready_timeout`` for one to be active)."""
        if not self.quorum:
            return self.broker(1)
        return self.active_controller(self.ready_timeout)

    def active_controller(self, timeout: float = 0.0) -> Broker:
        """The node whose controller is active, waiting up to ``timeout`` seconds for one."""
        deadline = time.monotonic() + timeout
        while True:
            for node in list(self.nodes.values()):
                b = node.broker
                if b is not None and b.controller is not None and b.controller.is_active:
                    return b
            if time.monotonic() >= deadline:
                raise FaultError(f"no active controller within {timeout:.0f} s")
            time.sleep(POLL)

    def broker(self, node_id: int) -> Broker:
        node = self._node(node_id)
        if node.broker is None:
            raise FaultError(f"broker {node_id} is not running")
        return node.broker

    def _node(self, node_id: int) -> Node:
        node = self.nodes.get(int(node_id))
        if node is None:
            raise FaultError(f"no broker {node_id} (brokers: {sorted(self.nodes)})")
        return node

    def _live(self) -> list[Broker]:
        """The running brokers (controller-only nodes left out)."""
        return [n.broker for n in self.nodes.values() if n.broker is not None and n.is_broker]

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> None:
        """Until every running broker is registered and knows every running broker."""
        want = {n.node_id for n in self.nodes.values() if n.alive and n.is_broker}
        deadline = time.monotonic() + timeout
        while True:
            if all(b.lifecycle is not None and b.lifecycle.registered.is_set()
                   and b.metadata_cache is not None and set(b.metadata_cache.snapshot.brokers) >= want
                   for b in self._live()):
                return
            if time.monotonic() > deadline:
                raise ClusterError(f"the test cluster was not ready within {timeout:.0f} s")
            time.sleep(POLL)

    def leader(self, topic: str, partition: int = 0) -> int:
        """The leader of a partition, as the controller's broker sees it (-1: none)."""
        seen_by = self.controller if not self.controller_only else self._live()[0]
        info = seen_by.metadata_cache.snapshot.topics.get(topic)  # type: ignore[union-attr]
        if info is None or partition not in info.partitions:
            return -1
        return info.partitions[partition].leader

    def create_topic(self, name: str, partitions: int = 1, replication_factor: int | None = None,
                     configs: Mapping[str, str] | None = None, timeout: float = READY_TIMEOUT,
                     assignment: Mapping[int, Sequence[int]] | None = None) -> None:
        """Create a topic and wait until each of its partitions is led (the leader leads it and
        every running broker knows the leader). ``assignment``: {partition: [replicas]}, the
        first the preferred leader (CreateTopics' manual assignment)."""
        if assignment is not None:
            partitions, replication_factor = len(assignment), -1
        rf = self._factor(replication_factor)
        manual = {int(p): [int(r) for r in rs] for p, rs in assignment.items()} if assignment else None
        deadline = time.monotonic() + timeout
        while True:  # again on the next active controller if this one is deposed meanwhile
            controller = self.active_controller(max(0.0, deadline - time.monotonic())).controller
            assert controller is not None
            try:
                controller.create_topic(name, partitions if manual is None else -1, rf, manual, False,
                                        dict(configs or {})).result(max(0.1, deadline - time.monotonic()))
                break
            except ApiError as e:
                if e.code != E.NOT_CONTROLLER or time.monotonic() >= deadline:
                    raise
        self.wait_led(name, max(0.1, deadline - time.monotonic()))

    def _internal_topics(self) -> list[Topic]:
        # Created by ``start`` rather than by the first FindCoordinator: a client asking while it is
        # being created is told COORDINATOR_NOT_AVAILABLE and asks again after its retry interval
        # (librdkafka's 1 s), which would be most of a short test. Created as the brokers would
        # create them: their offsets.topic.* and transaction.state.log.* settings (for a
        # transactional producer's FindCoordinator), the factor capped by the brokers.
        offsets = self.controller.config.offsets_topic_config()
        txn = self.controller.config.transaction_config()
        return [Topic(OFFSETS_TOPIC, offsets.num_partitions, offsets.replication_factor_for(self.size),
                      offsets.topic_configs()),
                Topic(TRANSACTION_STATE_TOPIC, txn.num_partitions, txn.replication_factor_for(self.size),
                      txn.topic_configs(self.size))]

    def _create_topics(self, topics: Sequence[Topic], timeout: float) -> None:
        """``create_topic`` of each, the requests all sent before waiting for the first answer."""
        if not topics:
            return
        deadline = time.monotonic() + timeout
        controller = self.active_controller(timeout).controller
        assert controller is not None
        sent = [(t, controller.create_topic(t.name, t.partitions, self._factor(t.replication_factor), None,
                                            False, dict(t.configs))) for t in topics]
        for t, future in sent:
            try:
                future.result(max(0.1, deadline - time.monotonic()))
            except ApiError as e:  # deposed meanwhile: this one again, on the next active controller
                if e.code != E.NOT_CONTROLLER or time.monotonic() >= deadline:
                    raise
                self.create_topic(t.name, t.partitions, t.replication_factor, t.configs,
                                  timeout=max(0.1, deadline - time.monotonic()))
        self._wait_led([t.name for t in topics], max(0.1, deadline - time.monotonic()))

    def _factor(self, replication_factor: int | None) -> int:
        return replication_factor if replication_factor is not None else min(3, self.size)

    def wait_led(self, topic: str, timeout: float = READY_TIMEOUT) -> None:
        self._wait_led([topic], timeout)

    def _wait_led(self, topics: Sequence[str], timeout: float) -> None:
        """Until each of ``topics`` is led (see ``create_topic``)."""
        deadline = time.monotonic() + timeout
        waiting = list(topics)
        while waiting:
            waiting = [t for t in waiting if not self._led(t)]
            if not waiting:
                return
            if time.monotonic() > deadline:
                raise ClusterError(f"topic {waiting[0]!r} was not led everywhere within {timeout:.0f} s")
            time.sleep(POLL)

    def _led(self, topic: str) -> bool:
        leaders: dict[int, int] | None = None
        for b in self._live():
            info = b.metadata_cache.snapshot.topics.get(topic)  # type: ignore[union-attr]
            if info is None:
                return False
            seen = {i: p.leader for i, p in info.partitions.items()}
            if leaders is None:
                leaders = seen
            elif seen != leaders:
                return False
        if not leaders:
            return False
        fetching = {b.node_id: b.replica_manager.fetcher_manager.fetching()  # type: ignore[union-attr]
                    for b in self._live()}
        for index, leader in leaders.items():
            node = self.nodes.get(leader)
            if node is None or node.broker is None:
                return False
            partition = node.broker.replica_manager.partitions.get((topic, index))  # type: ignore[union-attr]
            if partition is None or not partition.is_leader:
                return False
            # Its live followers fetch it (else a first acks=all produce waits for them to start).
            for follower in partition.followers:
                if follower in fetching and fetching[follower].get((topic, index)) != leader:
                    return False
        return True

    # --- faults -------------------------------------------------------------------------------

    def _targets(self, broker: int | None) -> list[Broker]:
        return [self.broker(broker)] if broker is not None else self._live()

    def push_errors(self, api: int | str, *errors: int | str, count: int = 1, broker: int | None = None,
                    topic: str | None = None, partition: int | None = None) -> None:
        """The next ``count`` x len(errors) requests of ``api`` are answered with ``errors``, in
        order: by ``broker``, or by each broker (every broker holds its own copy); with ``topic``
        and ``partition``, only for that partition."""
        key = api_key(api)
        codes = [error_code(e) for e in errors] * count
        if not codes:
            raise FaultError("no error codes given")
        for b in self._targets(broker):
            assert b.faults is not None
            b.faults.push_errors(key, codes, topic, partition)

    def pending_errors(self, broker: int | None = None) -> dict[int, list[dict]]:
        return {b.node_id: b.faults.pending_errors() for b in self._targets(broker)}  # type: ignore[union-attr]

    def clear_faults(self, broker: int | None = None) -> None:
        """Every fault off: error stacks, round-trip times, capture, versions."""
        for b in self._targets(broker):
            b.faults.clear()  # type: ignore[union-attr]

    def set_rtt(self, ms: int, broker: int | None = None) -> None:
        """Every response of ``broker`` (or of every broker) waits ``ms`` more."""
        for b in self._targets(broker):
            b.faults.set_rtt(ms)  # type: ignore[union-attr]

    def drop_connections(self, broker: int | None = None) -> None:
        """Close the client connections of ``broker`` (or every broker) now."""
        for b in self._targets(broker):
            b.fault_ops.drop_connections({})  # type: ignore[union-attr]

    def take_down(self, broker: int) -> None:
        """Close the broker's client listeners: clients are refused, the cluster keeps it (no
        leadership moves, it stays in every ISR)."""
        self.broker(broker).fault_ops.take_down({})  # type: ignore[union-attr]

    def bring_up(self, broker: int) -> None:
        """Reopen what ``take_down`` closed, on the same ports."""
        self.broker(broker).fault_ops.bring_up({})  # type: ignore[union-attr]

    def kill(self, broker: int) -> None:
        """Stop a node without controlled shutdown and have the active controller handle it as
        failed at once, as when its session times out: its leaderships move to the ISR. Its
        storage stays for ``restart``, as a disk would. The active controller may be killed: in a
        quorum another voter takes over (the killed broker is fenced by it); with one controller
        the cluster has none until ``restart``."""
        with self._lock:
            node = self._node(broker)
            b, node.broker = node.broker, None
            if b is None:
                return
            b.shutdown(timeout=5, graceful=False)
        if not node.is_broker or (not self.quorum and node.node_id == 1):
            return
        deadline = time.monotonic() + self.ready_timeout
        while True:
            controller = self.active_controller(max(0.0, deadline - time.monotonic())).controller
            assert controller is not None
            try:
                controller.fence(node.node_id).result(10)
                return
            except ApiError as e:  # deposed meanwhile: the next one fences it
                if e.code != E.NOT_CONTROLLER or time.monotonic() >= deadline:
                    raise

    def partition_controller(self, node_id: int) -> None:
        """Cut voter ``node_id``'s controller off from every other node (both ways, through the
        proxies in front of the controller listeners): a network partition of the quorum. Its
        node keeps its other listeners (clients, replication)."""
        if not self.quorum or int(node_id) not in self.voter_ids:
            raise FaultError(f"node {node_id} is not a voter of a controller quorum "
                             f"(voters: {self.voter_ids if self.quorum else [1]})")
        for (src, dst), proxy in self._proxies.items():
            if (src == node_id) != (dst == node_id):
                proxy.cut()

    def heal_controller(self, node_id: int) -> None:
        """Undo ``partition_controller``."""
        for (src, dst), proxy in self._proxies.items():
            if (src == node_id) != (dst == node_id):
                proxy.heal()

    def proxy(self, node_id: int, voter: int) -> TcpProxy:
        """The proxy ``node_id``'s connections to ``voter``'s controller listener go through."""
        return self._proxies[(int(node_id), int(voter))]

    def restart(self, broker: int, timeout: float = READY_TIMEOUT) -> None:
        """Start a killed broker again, on its ports, with its storage; wait until registered."""
        with self._lock:
            node = self._node(broker)
            if node.broker is not None:
                return
            self._start_node(node)
        self.wait_ready(timeout)

    def restart_all(self, timeout: float = READY_TIMEOUT) -> None:
        """Stop every broker (not gracefully) and start them all again, the controller's first, on
        their ports with their storage (with storage "files" the controller's store too); wait
        until all are registered."""
        with self._lock:
            self._stop_brokers()
            for node in self.nodes.values():
                self._start_node(node)
        self.wait_ready(timeout)

    @contextlib.contextmanager
    def capture(self, broker: int | None = None) -> Iterator[list[CapturedRequest]]:
        """Record the requests clients send to ``broker`` (or to any broker) within the block; the
        list yielded is filled when the block ends, in the order each broker received them."""
        targets = self._targets(broker)
        got: list[CapturedRequest] = []
        for b in targets:
            b.faults.start_capture()  # type: ignore[union-attr]
        try:
            yield got
        finally:
            for b in targets:
                got.extend(b.faults.stop_capture())  # type: ignore[union-attr]

    def set_max_versions(self, versions: Mapping[int | str, int], broker: int | None = None) -> None:
        """Advertise at most these versions in ApiVersions ({api: version}; empty: the real ones)."""
        limits = {api_key(k): int(v) for k, v in versions.items()}
        for b in self._targets(broker):
            b.faults.set_max_versions(limits)  # type: ignore[union-attr]

    # --- the same over HTTP, for ``kafkalite fault`` ------------------------------------------

    def fault_admin(self) -> FaultAdmin:
        def brokers() -> dict[int, Any]:
            return {n.node_id: n.broker.fault_ops.apply for n in self.nodes.values()  # type: ignore[union-attr]
                    if n.broker is not None and n.is_broker}

        return FaultAdmin(brokers, self.kill, self.restart, self.describe,
                          partition=self.partition_controller, heal=self.heal_controller)

    def serve_admin(self, port: int = 0) -> int:
        """Serve ``POST /faults`` on 127.0.0.1 (``kafkalite fault --admin``); its port."""
        if self._admin is None:
            self._admin = serve_admin(self.fault_admin(), HOST, port)
        return self._admin.port

    def describe(self) -> dict:
        return {"cluster_id": self.cluster_id, "bootstrap_servers": self.bootstrap_servers,
                "brokers": {str(n.node_id): {"address": n.address, "alive": n.alive}
                            for n in self.nodes.values() if n.is_broker},
                "controllers": {str(n.node_id): {"alive": n.alive, "broker": n.is_broker,
                                                 "active": n.broker is not None and n.broker.controller
                                                 is not None and n.broker.controller.is_active}
                                for n in self.nodes.values() if n.is_voter}}

    def __repr__(self) -> str:
        return f"<kafkalite test cluster {self.bootstrap_servers} ({self.storage})>"


# Clusters not stopped by their test (an interrupted run) are stopped when the interpreter exits,
# so that their files go too.
_LIVE: weakref.WeakSet[Cluster] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    for c in list(_LIVE):
        with contextlib.suppress(Exception):
            c.stop()
