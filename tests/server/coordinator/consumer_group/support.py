"""What the consumer-group tests share: a timer driven by the test (Kafka's MockCoordinatorTimer)
and a manager over a topics table the test changes."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Hashable

from kafkalite.server.coordinator.consumer_group.assignors import Assignment
from kafkalite.server.coordinator.consumer_group.manager import (
    ConsumerGroupManager,
    HeartbeatRequest,
    HeartbeatResult,
    Records,
)
from kafkalite.server.coordinator.settings import GroupConfig


class ManualTimer:
    """Kafka's MockCoordinatorTimer: callbacks run when the test advances the time past them."""

    def __init__(self) -> None:
        self.now = 0
        self.pending: dict[Hashable, tuple[int, Callable[[], None]]] = {}

    def schedule(self, key: Hashable, delay_ms: int, fn: Callable[[], None]) -> None:
        self.pending[key] = (self.now + delay_ms, fn)

    def cancel(self, key: Hashable) -> None:
        self.pending.pop(key, None)

    def fire(self, key: Hashable) -> bool:
        """Run the callback of ``key`` now (its deadline reached); False if none is pending."""
        entry = self.pending.pop(key, None)
        if entry is None:
            return False
        entry[1]()
        return True

    def advance(self, ms: int) -> None:
        self.now += ms
        for key, (deadline, _) in sorted(self.pending.items(), key=lambda kv: kv[1][0]):
            if deadline <= self.now and key in self.pending:
                self.fire(key)


class Harness:
    """A manager of groups over ``topics`` (name -> partitions), its written records kept."""

    def __init__(self, topics: dict[str, int] | None = None, **config: object) -> None:
        self.ids: dict[str, uuid.UUID] = {}
        self.partitions: dict[str, int] = {}
        for name, n in (topics or {}).items():
            self.set_topic(name, n)
        self.timer = ManualTimer()
        self.written: Records = []
        self.config = GroupConfig(**config)  # type: ignore[arg-type]
        self.manager = ConsumerGroupManager(self.config, self.view, self.timer, self._write)

    def _write(self, group_id: str, records: Records) -> None:
        self.written.extend(records)

    def set_topic(self, name: str, partitions: int) -> None:
        self.ids.setdefault(name, uuid.uuid5(uuid.NAMESPACE_OID, name))
        self.partitions[name] = partitions

    def view(self) -> dict[str, tuple[uuid.UUID, int]]:
        return {n: (self.ids[n], p) for n, p in self.partitions.items()}

    def tp(self, **topics: list[int]) -> Assignment:
        return {self.ids[t]: frozenset(ps) for t, ps in topics.items()}

    def heartbeat(self, member_id: str, epoch: int, group: str = "g", **fields: object) -> HeartbeatResult:
        if epoch == 0:
            fields.setdefault("rebalance_timeout_ms", 30000)
            fields.setdefault("owned", {})
            if "subscribed_topic_regex" not in fields:
                fields.setdefault("subscribed_topic_names", ("t",))
        result, records = self.manager.heartbeat(HeartbeatRequest(group, member_id, epoch, **fields))  # type: ignore[arg-type]
        self.written.extend(records)
        return result
