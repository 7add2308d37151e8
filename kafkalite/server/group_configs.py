"""This broker's copy of the group configs (ConfigResource type GROUP): the controller pushes each
group's complete set after a change, and every set when the broker registers (as it does topic
configs); ``group_config(group_id)`` is what the group coordinators and share-partitions read, the
group's overrides over this broker's settings, current at each call (Kafka's GroupConfigManager).
A controller-only node reads its controller's sets instead (it is pushed nothing)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

from kafkalite.controller import group_configs as G
from kafkalite.controller.group_configs import GroupConfigView

from .config import SETTINGS_BY_NAME, BrokerConfig


def bounds_of(config: BrokerConfig) -> G.BoundsSource:
    """The broker settings a group config's default and bounds come from, as this node has them
    (None for those it does not define: Kafka's defaults then)."""
    return lambda name: config[name] if name in SETTINGS_BY_NAME else None


class GroupConfigCache:
    def __init__(self, bounds: G.BoundsSource | None = None,
                 controller_sets: Callable[[], Mapping[str, Mapping[str, str]]] | None = None) -> None:
        self.bounds = bounds
        self.controller_sets = controller_sets  # a controller-only node's: its controller's sets
        self._lock = threading.Lock()
        self._sets: dict[str, dict[str, str]] = {}

    def update(self, group_id: str, values: Mapping[str, str]) -> None:
        """The controller's complete set for the group (empty: none left)."""
        with self._lock:
            if values:
                self._sets[group_id] = dict(values)
            else:
                self._sets.pop(group_id, None)

    def overrides(self, group_id: str) -> dict[str, str]:
        if self.controller_sets is not None:
            return dict(self.controller_sets().get(group_id, {}))
        with self._lock:
            return dict(self._sets.get(group_id, {}))

    def groups(self) -> list[str]:
        """The groups with configs (ListConfigResources)."""
        if self.controller_sets is not None:
            return sorted(self.controller_sets())
        with self._lock:
            return sorted(self._sets)

    def group_config(self, group_id: str) -> GroupConfigView:
        """The group's configs in effect now."""
        return G.view(self.overrides(group_id), self.bounds)
