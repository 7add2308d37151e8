"""A cluster's faults over HTTP: ``POST /faults`` on one 127.0.0.1 port, the endpoint
``kafkalite fault --admin`` talks to. ``kafkalite cluster`` serves it (its brokers are processes:
a broker's operations go to that broker's own HTTP port, a kill is a SIGKILL), and so can an
in-process test cluster (kafkalite.testing). A broker's operations (kafkalite/server/faults/operations.py)
go to the broker named by ``"broker"``, or to every running broker; ``kill``, ``restart``,
``brokers``, ``partition`` and ``heal`` (cut a controller quorum's voter off the others and back,
where the cluster can) are the cluster's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafkalite.metrics.http import JsonHttpServer
from kafkalite.server.faults.injector import FaultError

BrokerOp = Callable[[dict], Any]
ONE_BROKER_OPS = frozenset({"down", "up", "kill", "restart", "partition", "heal"})


class FaultAdmin:
    """``brokers()``: {node id: that broker's operation function} for the running brokers."""

    def __init__(self, brokers: Callable[[], dict[int, BrokerOp]], kill: Callable[[int], None],
                 restart: Callable[[int], None], describe: Callable[[], dict],
                 partition: Callable[[int], None] | None = None,
                 heal: Callable[[int], None] | None = None) -> None:
        self.brokers = brokers
        self.partition = partition
        self.heal = heal
        self.kill = kill
        self.restart = restart
        self.describe = describe

    def apply(self, args: dict) -> Any:
        op = str(args.get("op"))
        broker = args.get("broker")
        if op in ONE_BROKER_OPS and broker is None:
            raise FaultError(f"{op} names one broker")
        if op == "brokers":
            return self.describe()
        if op == "kill":
            self.kill(int(broker))  # type: ignore[arg-type]
            return None
        if op == "restart":
            self.restart(int(broker))  # type: ignore[arg-type]
            return None
        if op in ("partition", "heal"):
            fn = self.partition if op == "partition" else self.heal
            if fn is None:
                raise FaultError(f"{op}: this cluster has no controller quorum to partition")
            fn(int(broker))  # type: ignore[arg-type]
            return None
        targets = self.brokers()
        if broker is not None:
            if int(broker) not in targets:
                raise FaultError(f"broker {broker} is not running (running: {sorted(targets)})")
            targets = {int(broker): targets[int(broker)]}
        plain = {k: v for k, v in args.items() if k != "broker"}
        return {str(node): fn(plain) for node, fn in sorted(targets.items())}


def serve_admin(admin: FaultAdmin, host: str, port: int) -> JsonHttpServer:
    return JsonHttpServer(host, port, post_handlers={"/faults": admin.apply}, name="fault-admin")
