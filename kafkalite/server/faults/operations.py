"""One broker's faults as JSON operations: what ``POST /faults`` on its HTTP port (metrics.port)
takes, and what kafkalite.testing's and ``kafkalite cluster``'s admin endpoints send each broker.

An operation is ``{"op": NAME, ...arguments}``; the answer is JSON. Apis and error codes may be
given by Kafka's name ("Produce", "NOT_LEADER_OR_FOLLOWER") or by number.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafkalite.protocol import APIS_BY_KEY, APIS_BY_NAME
from kafkalite.protocol import error_codes as E

from .injector import FaultError, FaultInjector

# The listeners clients use: the broker's listeners but the inter-broker (privileged) one.


def api_key(value: Any) -> int:
    """An api key from its number or Kafka's name ("Produce", "ListOffsets")."""
    if isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
        key = int(value)
        if key not in APIS_BY_KEY:
            raise FaultError(f"unknown api key {key}")
        return key
    api = APIS_BY_NAME.get(str(value))
    if api is None:
        raise FaultError(f"unknown api {value!r} (Kafka's names: {', '.join(sorted(APIS_BY_NAME)[:6])}, ...)")
    return int(api.key)


def error_code(value: Any) -> int:
    """An error code from its number or Kafka's name ("NOT_LEADER_OR_FOLLOWER")."""
    if isinstance(value, int) or (isinstance(value, str) and value.lstrip("-").isdigit()):
        code = int(value)
        if code not in E.BY_CODE:
            raise FaultError(f"unknown error code {code}")
        return code
    entry = E.BY_NAME.get(str(value).upper())
    if entry is None:
        raise FaultError(f"unknown error {value!r}")
    return entry.code


class BrokerFaults:
    """The operations on one broker. ``listeners``: its client listeners (all but the
    inter-broker one); ``socket_server`` and ``controller`` as the broker has them."""

    def __init__(self, faults: FaultInjector, socket_server: Any, listeners: list[str],
                 controller: Any = None) -> None:
        self.faults = faults
        self.socket_server = socket_server
        self.listeners = listeners
        self.controller = controller
        self.down = False
        self.ops: dict[str, Callable[[dict], Any]] = {
            "push_errors": self.push_errors, "pending_errors": lambda _: self.faults.pending_errors(),
            "clear": self.clear, "rtt": self.rtt, "drop_connections": self.drop_connections,
            "down": self.take_down, "up": self.bring_up, "capture_start": self.capture_start,
            "capture_get": self.capture_get, "capture_stop": self.capture_stop,
            "max_versions": self.max_versions, "fence": self.fence,
        }

    def apply(self, args: dict) -> Any:
        op = args.get("op")
        fn = self.ops.get(str(op))
        if fn is None:
            raise FaultError(f"unknown fault operation {op!r}; known: {', '.join(sorted(self.ops))}")
        return fn(args)

    def push_errors(self, a: dict) -> None:
        codes = [error_code(c) for c in a.get("errors", ())] * int(a.get("count", 1))
        if not codes:
            raise FaultError("no error codes given")
        self.faults.push_errors(api_key(a["api"]), codes, a.get("topic"), a.get("partition"))

    def clear(self, _: dict) -> None:
        self.faults.clear()

    def rtt(self, a: dict) -> None:
        self.faults.set_rtt(int(a["ms"]))

    def drop_connections(self, _: dict) -> None:
        self.socket_server.drop_connections(self.listeners)

    def take_down(self, _: dict) -> None:
        for name in self.listeners:
            self.socket_server.close_listener(name)
        self.down = True

    def bring_up(self, _: dict) -> None:
        for name in self.listeners:
            self.socket_server.reopen_listener(name)
        self.down = False

    def capture_start(self, _: dict) -> None:
        self.faults.start_capture()

    def capture_get(self, _: dict) -> list[dict]:
        return [c.to_json() for c in self.faults.captured()]

    def capture_stop(self, _: dict) -> list[dict]:
        return [c.to_json() for c in self.faults.stop_capture()]

    def max_versions(self, a: dict) -> None:
        self.faults.set_max_versions({api_key(k): int(v) for k, v in dict(a.get("versions", {})).items()})

    def fence(self, a: dict) -> None:
        """The controller (only) handles a broker as failed at once (``kafkalite cluster`` kills one)."""
        if self.controller is None:
            raise FaultError("this broker is not the controller")
        self.controller.fence(int(a["broker"])).result(10)
