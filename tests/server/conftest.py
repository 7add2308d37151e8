from __future__ import annotations

import contextlib
from collections.abc import Iterator

from kafkalite.server.broker import Broker
from kafkalite.server.config import BrokerConfig

from ..kafka_client import wait_for


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
