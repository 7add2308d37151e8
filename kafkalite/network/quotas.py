"""Connection counts (Kafka's ConnectionQuotas): max.connections per broker, max.connections.per.ip
and its overrides. The Acceptor waits for a slot under max.connections; a per-IP excess closes the
new connection at once.

The three limits change live (``update``), as Kafka's updateBrokerMaxConnections,
updateMaxConnectionsPerIp and updateMaxConnectionsPerIpOverride: the per-IP limits apply to the
next connections (those open stay open, even past a lowered limit); a lowered max.connections also
makes the Processors close their least recently active connections while the broker is over it
(``max_connections_exceeded``, Kafka's closeExcessConnections), and a raised one wakes an Acceptor
waiting for a slot.
"""

from __future__ import annotations

import collections
import threading
import time


class TooManyConnections(Exception):
    def __init__(self, ip: str, limit: int) -> None:
        super().__init__(f"too many connections from {ip} (maximum = {limit})")
        self.ip = ip
        self.limit = limit


class ConnectionQuotas:
    def __init__(
        self, max_connections: int, max_per_ip: int, per_ip_overrides: dict[str, int],
        protected_listener: str | None = None,
    ) -> None:
        self.max_connections = max_connections
        self.max_per_ip = max_per_ip
        self.overrides = dict(per_ip_overrides)
        # The inter-broker listener is exempt from max.connections when there are several
        # listeners, so that a flood of clients cannot cut the brokers off from each other.
        self.protected_listener = protected_listener
        self._lock = threading.Condition()
        self._per_ip: collections.Counter[str] = collections.Counter()
        self._per_listener: collections.Counter[str] = collections.Counter()
        self.total = 0

    def update(self, max_connections: int, max_per_ip: int, per_ip_overrides: dict[str, int]) -> None:
        """New limits (max.connections, max.connections.per.ip and its overrides)."""
        with self._lock:
            self.max_connections = max_connections
            self.max_per_ip = max_per_ip
            self.overrides = dict(per_ip_overrides)
            self._lock.notify_all()  # an Acceptor waiting in wait_for_slot looks again

    def limit_for(self, ip: str) -> int:
        return self.overrides.get(ip, self.max_per_ip)

    def _protected(self, listener: str) -> bool:
        return listener == self.protected_listener

    def wait_for_slot(self, listener: str, timeout: float) -> bool:
        """Block until the broker is under max.connections (or the listener is protected)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self.total >= self.max_connections and not self._protected(listener):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
            return True

    def inc(self, listener: str, ip: str) -> None:
        """Count a new connection; TooManyConnections (and nothing counted) past the per-IP limit."""
        with self._lock:
            limit = self.limit_for(ip)
            if self._per_ip[ip] >= limit:
                raise TooManyConnections(ip, limit)
            self._per_ip[ip] += 1
            self._per_listener[listener] += 1
            self.total += 1

    def dec(self, listener: str, ip: str) -> None:
        with self._lock:
            if self._per_ip[ip] <= 0:
                raise RuntimeError(f"connection count for {ip} would go negative")
            self._per_ip[ip] -= 1
            if not self._per_ip[ip]:
                del self._per_ip[ip]
            self._per_listener[listener] -= 1
            self.total -= 1
            self._lock.notify_all()

    def get(self, ip: str) -> int:
        with self._lock:
            return self._per_ip[ip]

    def max_connections_exceeded(self, listener: str) -> bool:
        if self.total <= self.max_connections:  # every Processor asks every loop: no lock then
            return False
        with self._lock:
            return self.total > self.max_connections and not self._protected(listener)
