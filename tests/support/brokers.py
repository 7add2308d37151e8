"""Brokers in the test's process: one (``running_broker``, its own controller), or two
(``two_brokers``: broker 1 runs the controller, broker 2 registers with it)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from kafkalite.protocol.messages import create_topics as ct
from kafkalite.server.broker import Broker
from kafkalite.server.config import BrokerConfig

from .wait import wait_for
from .wire_client import Client

CREATE_TOPICS = 19


@contextlib.contextmanager
def running_broker(tmp_path, **overrides: str) -> Iterator[Broker]:
    props = {
        "node.id": "1",
        "listeners": "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL",
        "log.dirs": str(tmp_path),
    }
    props.update({k.replace("_", "."): v for k, v in overrides.items()})
    broker = Broker(BrokerConfig(props))
    broker.startup()
    try:
        if broker.lifecycle is not None:
            # Registered, and the controller's first UpdateMetadata applied: the broker's own
            # connections (lifecycle, controller channel) are all open before a test counts any.
            assert broker.lifecycle.registered.wait(10)
            assert wait_for(lambda: broker.replica_manager.controller_epoch >= 1, timeout=10)
        yield broker
    finally:
        broker.shutdown()
        threads = [*broker.socket_server.acceptors.values(), *broker.socket_server.processors,
                   *(t for pool in broker.pools for t in pool.threads)]
        assert not [t.name for t in threads if t.is_alive()]


@contextlib.contextmanager
def two_brokers(tmp_path, **overrides: str) -> Iterator[tuple[Broker, Broker]]:
    """Broker 1 (the controller) and broker 2 (registered with it), each seeing both."""
    with running_broker(tmp_path / "1", **overrides) as one:
        controller = f"127.0.0.1:{one.bound_port('INTERNAL')}"
        with running_broker(tmp_path / "2", node_id="2", controller_quorum_bootstrap_servers=controller,
                            **overrides) as two:
            assert two.controller is None
            assert wait_for(lambda: all(set(b.metadata_cache.snapshot.brokers) == {1, 2} for b in (one, two)),
                            timeout=10)
            yield one, two


def connect(broker: Broker) -> Client:
    return Client("127.0.0.1", broker.bound_port("PLAINTEXT"))


def create(broker: Broker, name: str, replicas: list[int], version: int = 7, **configs: str) -> Any:
    """CreateTopics on ``broker`` with one partition on ``replicas``."""
    R = ct.REQUEST
    topic = R["topics"](name=name, num_partitions=-1, replication_factor=-1,
                        assignments=[R["topics"]["assignments"](partition_index=0, broker_ids=replicas)],
                        configs=[R["topics"]["configs"](name=k.replace("_", "."), value=v)
                                 for k, v in configs.items()])
    with connect(broker) as c:
        return c.call(CREATE_TOPICS, version, R(topics=[topic], timeout_ms=10000)).topics[0]
