"""The controller's dynamic configs (Kafka's ConfigurationControlManager): each topic's overrides,
each broker's dynamic settings (by id), the cluster-wide defaults (the broker named '') and each
group's configs (ConfigResource type GROUP, checked by group_configs.py).

AlterConfigs replaces a resource's whole set; IncrementalAlterConfigs changes it by operations
(``apply_ops``: SET, DELETE, APPEND, SUBTRACT; the last two only for LIST settings). A resource is
checked whole before anything changes: an unknown topic is UNKNOWN_TOPIC_OR_PARTITION, a bad name
or value INVALID_CONFIG with Kafka's reason, a bad broker name INVALID_REQUEST. Broker settings are
checked by the broker that took the request (server/dynamic_config.py: update modes, values, the
thread pools' rule), which sends the controller the new complete set; the controller checks the
resource and stores it.

What is stored is pushed: after a change the resource's complete new set goes to every live broker
it concerns (a broker id's to that broker, the default and topics' to every broker) as an
AlterConfigs request over the ControllerChannelManager, and a broker that (re)registers gets every
set first (``full_sets``). The event thread alone changes the dicts, each replaced whole, so
request handlers read them without a lock.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kafkalite.common.errors import ApiError, ConfigError
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import alter_configs as ac
from kafkalite.protocol.messages import describe_configs as dc
from kafkalite.protocol.messages import incremental_alter_configs as iac
from kafkalite.storage.config import TOPIC_SETTINGS_BY_NAME, LogConfig

from . import group_configs

log = logging.getLogger("kafkalite.controller.configs")

RESOURCE_NAMES = {dc.RESOURCE_TOPIC: "TOPIC", dc.RESOURCE_BROKER: "BROKER",
                  dc.RESOURCE_BROKER_LOGGER: "BROKER_LOGGER", 16: "CLIENT_METRICS", 32: "GROUP"}
PUSH_VERSION = 2  # AlterConfigs' version of the controller's pushes


@dataclasses.dataclass(frozen=True)
class Op:
    """One change of one setting: Kafka's AlterableConfig (``op`` SET for AlterConfigs)."""

    name: str
    op: int
    value: str | None


@dataclasses.dataclass(frozen=True)
class ResourceChange:
    """The changes asked for one resource. ``incremental`` False: ``ops`` are all SETs giving the
    whole new set (AlterConfigs)."""

    resource_type: int
    resource_name: str
    ops: tuple[Op, ...]
    incremental: bool


def check_duplicates(ops: Sequence[Op]) -> None:
    names = [o.name for o in ops]
    if len(set(names)) != len(names):
        raise ApiError(E.INVALID_REQUEST, "Error due to duplicate config keys")


def apply_ops(current: Mapping[str, str | None], ops: Sequence[Op], is_list: Callable[[str], bool],
              base: Callable[[str], str | None]) -> dict[str, str | None]:
    """The new set after ``ops`` (Kafka's incrementalAlterConfigResource): SET gives the value,
    DELETE removes it, APPEND adds the items not yet there and SUBTRACT removes items, starting
    from the current value, else ``base(name)`` (the value the setting has without it).
    ApiError INVALID_CONFIG for APPEND/SUBTRACT of a setting that is not a list, INVALID_REQUEST
    for an unknown operation."""
    check_duplicates(ops)
    new: dict[str, str | None] = dict(current)
    for o in ops:
        if o.op == iac.OP_SET:
            new[o.name] = o.value
        elif o.op == iac.OP_DELETE:
            new.pop(o.name, None)
        elif o.op in (iac.OP_APPEND, iac.OP_SUBTRACT):
            if not is_list(o.name):
                raise ApiError(E.INVALID_CONFIG, f"Can't {iac.OP_NAMES[o.op]} to key {o.name} because its "
                                                 "type is not LIST.")
            old = new.get(o.name)
            if old is None:
                old = base(o.name)
            items = split_list(old)
            for item in split_list(o.value):
                if o.op == iac.OP_APPEND and item not in items:
                    items.append(item)
                elif o.op == iac.OP_SUBTRACT and item in items:
                    items.remove(item)
            new[o.name] = ",".join(items)
        else:
            raise ApiError(E.INVALID_REQUEST, f"Unknown alter configs operation {o.op} for {o.name}")
    return new


def split_list(text: str | None) -> list[str]:
    """A LIST value's items (Kafka's ConfigDef list parsing: comma separated, trimmed)."""
    if text is None or not text.strip():
        return []
    return [item.strip() for item in text.split(",")]


def _topic_is_list(name: str) -> bool:
    setting = TOPIC_SETTINGS_BY_NAME.get(name)
    return setting is not None and setting.type == "list"


class ConfigurationControl:
    """The dynamic configs and their checks; the controller's event thread calls ``alter``.

    ``topic_configs`` is the controller's dict of topic overrides (shared: CreateTopics writes it
    too). ``topic_defaults`` gives the broker defaults a topic setting has without an override
    (the base of an APPEND, unclean.leader.election.enable without an override); the broker sets
    it to its dynamic configuration's."""

    def __init__(self, topic_configs: dict[str, dict[str, str]], store: Any) -> None:
        self.topic_configs = topic_configs
        self.broker_configs: dict[str, dict[str, str]] = {}
        self.group_configs: dict[str, dict[str, str]] = {}
        self.store = store
        self.topic_defaults: Callable[[], LogConfig] | None = None  # None: Kafka's defaults
        # The broker settings that bound a group's configs (group.share.min.record.lock.duration.ms,
        # ...): the node's, set by the broker; None: Kafka's defaults.
        self.group_bounds: group_configs.BoundsSource | None = None

    def load(self) -> None:
        self.broker_configs.update(self.store.load_broker_configs())
        self.group_configs = self.store.load_group_configs()

    def alter(self, change: ResourceChange, validate_only: bool, topic_exists: Callable[[str], bool]
              ) -> dict[str, str] | None:
        """The resource's new complete set (None: validate_only, nothing changed), stored; ApiError
        with Kafka's code when refused (nothing changed)."""
        kind, name = change.resource_type, change.resource_name
        if kind == dc.RESOURCE_TOPIC:
            new = self._new_topic_set(change, topic_exists)
        elif kind == dc.RESOURCE_BROKER:
            new = self._new_broker_set(change)
        elif kind == group_configs.RESOURCE_GROUP:
            new = self._new_group_set(change)
        else:
            raise ApiError(E.INVALID_REQUEST,
                           f"Unsupported resource type: {RESOURCE_NAMES.get(kind, 'UNKNOWN')}")
        if validate_only:
            return None
        if kind == dc.RESOURCE_TOPIC:
            self.store.set_topic_configs(name, new)
            if new:
                self.topic_configs[name] = new
            else:
                self.topic_configs.pop(name, None)
        elif kind == group_configs.RESOURCE_GROUP:
            self.store.set_group_configs(name, new)
            groups = dict(self.group_configs)  # replaced whole: handlers read it without a lock
            if new:
                groups[name] = new
            else:
                groups.pop(name, None)
            self.group_configs = groups
        else:
            self.store.set_broker_configs(name, new)
            if new:
                self.broker_configs[name] = new
            else:
                self.broker_configs.pop(name, None)
        log.info("Dynamic configs of %s %r are now %s", RESOURCE_NAMES[kind], name, new)
        return new

    def _new_topic_set(self, change: ResourceChange, topic_exists: Callable[[str], bool]) -> dict[str, str]:
        name = change.resource_name
        if not topic_exists(name):
            raise ApiError(E.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.")
        current = self.topic_configs.get(name, {}) if change.incremental else {}
        defaults = (self.topic_defaults or LogConfig)().to_properties()
        new = apply_ops(current, change.ops, _topic_is_list, defaults.get)
        nulls = [k for k, v in new.items() if v is None]
        if nulls:
            raise ApiError(E.INVALID_CONFIG, f"Null value not supported for topic configs: {','.join(nulls)}")
        values = {k: v for k, v in new.items() if v is not None}
        try:
            LogConfig.from_properties(values)  # Kafka's LogConfig.validate: names and values
        except ConfigError as e:
            raise ApiError(E.INVALID_CONFIG, str(e)) from None
        return values

    def _new_broker_set(self, change: ResourceChange) -> dict[str, str]:
        name = change.resource_name
        if name:
            try:
                valid = int(name) >= 0
            except ValueError:
                valid = False
            if not valid:
                raise ApiError(E.INVALID_REQUEST, f"Invalid broker name {name}")
        current = self.broker_configs.get(name, {}) if change.incremental else {}
        new = apply_ops(current, change.ops, lambda _: False, lambda _: None)
        # A null value removes a broker setting (Kafka's legacy AlterConfigs).
        return {k: v for k, v in new.items() if v is not None}

    def _new_group_set(self, change: ResourceChange) -> dict[str, str]:
        """A group's new configs, checked whole (Kafka's GroupConfig.validate: names, types, the
        bounds the broker settings give, an interval below its session timeout); a group need not
        exist to have configs."""
        name = change.resource_name
        if not name:
            raise ApiError(E.INVALID_REQUEST, "Group name must not be empty")
        current = self.group_configs.get(name, {}) if change.incremental else {}
        new = apply_ops(current, change.ops, lambda _: False, lambda _: None)
        values = {k: v for k, v in new.items() if v is not None}
        try:
            group_configs.validate(values, self.group_bounds)
        except group_configs.GroupConfigError as e:
            raise ApiError(E.INVALID_CONFIG, str(e)) from None
        return values

    # --- what the brokers are told ----------------------------------------------------------------

    def push_body(self, sets: Sequence[tuple[int, str, Mapping[str, str]]]) -> Any:
        """The AlterConfigs request that gives brokers these complete sets."""
        R = ac.REQUEST
        return R(validate_only=False, resources=[
            R["resources"](resource_type=kind, resource_name=name, configs=[
                R["resources"]["configs"](name=k, value=v) for k, v in sorted(values.items())])
            for kind, name, values in sets])

    def full_sets(self, broker_id: int, topics: Sequence[str]) -> list[tuple[int, str, Mapping[str, str]]]:
        """Every set a broker that (re)registers is given: the cluster default, its own, every
        topic's (empty ones too, so that one it knew before is emptied)."""
        empty: dict[str, str] = {}
        sets: list[tuple[int, str, Mapping[str, str]]] = [
            (dc.RESOURCE_BROKER, "", self.broker_configs.get("", empty)),
            (dc.RESOURCE_BROKER, str(broker_id), self.broker_configs.get(str(broker_id), empty))]
        sets += [(dc.RESOURCE_TOPIC, t, self.topic_configs.get(t, empty)) for t in sorted(topics)]
        sets += [(group_configs.RESOURCE_GROUP, g, values)
                 for g, values in sorted(self.group_configs.items())]
        return sets
