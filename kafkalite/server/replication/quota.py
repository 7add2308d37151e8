"""Replication throttles (KIP-73): Kafka's ReplicationQuotaManager, one for the leader side and one
for the follower side of this broker, and the Reconfigurable that sets their rates.

Which replicas are throttled is each topic's setting, read from the topic's current config at
fetch time (so an AlterConfigs of it applies at the next fetch): ``leader.replication.throttled.
replicas`` / ``follower.replication.throttled.replicas``, a list of ``partition:broker`` items or
``*``. As Kafka's TopicConfigHandler parses them, a broker takes the items naming itself: the
leader list throttles what this broker sends as leader of those partitions, the follower list
what it fetches as follower of them.

How much: ``leader.replication.throttled.rate`` / ``follower.replication.throttled.rate`` bytes per
second (Long.MAX_VALUE: none), measured as Kafka's SimpleRate over
``replication.quota.window.num`` samples of ``replication.quota.window.size.seconds``. A
throttled replica that is not in sync (the leader's ISR; for the follower, not caught up with the
high watermark) is left out of a fetch while the rate is over the bound, as Kafka does:

- follower side (ReplicaFetcherThread.shouldFollowerThrottle): the partition is not asked for;
  the bytes it fetches are recorded;
- leader side (ReplicaManager.shouldLeaderThrottle): a follower's fetch of it gets no records;
  the bytes sent are recorded.

Replicas in sync are never throttled, so a throttle slows a reassignment's new replicas, never
the followers an acks=all produce waits for.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from kafkalite.common.errors import ConfigError

from .settings import UNLIMITED_RATE, ReplicationSettings

LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
ALL_REPLICAS = "*"


@functools.lru_cache(maxsize=1024)
def throttled_partitions(value: str, broker_id: int) -> frozenset[int] | str:
    """The partitions a throttled-replicas list throttles on ``broker_id``: ``*`` for all, else
    the partition of each ``partition:broker`` item naming it (Kafka's parseThrottledPartitions)."""
    items = [i.strip() for i in value.split(",") if i.strip()]
    if items == [ALL_REPLICAS]:
        return ALL_REPLICAS
    partitions = set()
    for item in items:
        partition, _, broker = item.partition(":")
        if broker.strip().isdigit() and int(broker) == broker_id and partition.strip().isdigit():
            partitions.add(int(partition))
    return frozenset(partitions)


def is_throttled(value: str, partition: int, broker_id: int) -> bool:
    if not value:
        return False
    found = throttled_partitions(value, broker_id)
    return found == ALL_REPLICAS or partition in found


class ReplicationQuotaManager:
    """One side's quota: the bytes recorded in ``samples`` windows of ``window_s`` seconds each,
    and whether their rate (Kafka's SimpleRate: the total over the time since the oldest window
    began, at least one window) is above ``bound`` bytes/s. Thread-safe."""

    def __init__(self, kind: str, bound: int, samples: int, window_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.kind = kind  # "LeaderReplication" or "FollowerReplication" (Kafka's QuotaType)
        self.bound = bound
        self.samples = samples
        self.window_s = window_s
        self.clock = clock
        self._windows: list[list[float]] = []  # [start, bytes], oldest first
        self._lock = threading.Lock()
        self.recorded_bytes = 0  # every throttled byte recorded (metrics, tests)
        self.throttled = 0  # times a replica was left out of a fetch because the quota was exceeded

    def update_quota(self, bound: int) -> None:
        self.bound = bound

    @property
    def unlimited(self) -> bool:
        return self.bound >= UNLIMITED_RATE

    def _purge(self, now: float) -> None:
        horizon = now - self.samples * self.window_s
        while self._windows and self._windows[0][0] + self.window_s <= horizon:
            self._windows.pop(0)

    def record(self, value: int) -> None:
        """Add ``value`` bytes to the rate, whatever the bound says."""
        if value <= 0:
            return
        now = self.clock()
        with self._lock:
            self.recorded_bytes += value
            self._purge(now)
            if not self._windows or now - self._windows[-1][0] >= self.window_s:
                self._windows.append([now, 0.0])
            self._windows[-1][1] += value

    def rate(self) -> float:
        """Bytes per second over the windows kept."""
        now = self.clock()
        with self._lock:
            self._purge(now)
            if not self._windows:
                return 0.0
            total = sum(w[1] for w in self._windows)
            elapsed = max(now - self._windows[0][0], self.window_s)
        return total / elapsed

    def is_quota_exceeded(self) -> bool:
        return not self.unlimited and self.rate() > self.bound

    def should_throttle(self, throttled_replicas: str, partition: int, broker_id: int,
                        in_sync: bool) -> bool:
        """Kafka's shouldLeaderThrottle / shouldFollowerThrottle: a throttled replica that is not in
        sync, while the quota is exceeded (counted in ``throttled``)."""
        if in_sync or self.unlimited or not is_throttled(throttled_replicas, partition, broker_id):
            return False
        if not self.is_quota_exceeded():
            return False
        with self._lock:
            self.throttled += 1
        return True


class ReplicationQuotas:
    """This broker's two replication quotas, reconfigured live by the dynamic broker configuration
    (a Reconfigurable: common/reconfigurable.py) when the throttled rates change."""

    reconfigurable_configs = frozenset({LEADER_RATE, FOLLOWER_RATE})

    def __init__(self, settings: ReplicationSettings) -> None:
        window = settings.quota_window_size_seconds
        self.leader = ReplicationQuotaManager("LeaderReplication", settings.leader_throttled_rate,
                                              settings.quota_window_num, window)
        self.follower = ReplicationQuotaManager("FollowerReplication", settings.follower_throttled_rate,
                                                settings.quota_window_num, window)

    def validate_reconfiguration(self, new: Mapping[str, Any]) -> None:
        for name in self.reconfigurable_configs:
            value = new.get(name)
            if value is not None and int(value) < 0:
                raise ConfigError(f"Invalid value {value} for configuration {name}: Value must be at "
                                  "least 0", name)

    def reconfigure(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        if LEADER_RATE in new:
            self.leader.update_quota(int(new[LEADER_RATE]))
        if FOLLOWER_RATE in new:
            self.follower.update_quota(int(new[FOLLOWER_RATE]))
