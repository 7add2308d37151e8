"""Kafka's group configs (GroupConfig, KIP-848 / KIP-932 / KIP-1071): the per-group overrides a
ConfigResource of type GROUP (32) holds, stored by the controller as ConfigRecords like a topic's,
checked here, and read by the group and share code on every broker as a ``GroupConfigView`` (the
overrides over the broker's settings).

Each name has a type, the broker setting that gives its default, and the bounds of its value,
themselves broker settings (Kafka's GroupConfig.validate): ``consumer.session.timeout.ms`` within
group.consumer.min/max.session.timeout.ms, and so on; ``share.auto.offset.reset`` is ``latest``,
``earliest`` or ``by_duration:<ISO-8601 duration>``; ``share.isolation.level`` is
``read_uncommitted`` or ``read_committed``; a heartbeat interval must be less than the session
timeout of the same kind. The broker settings' values come from the node's configuration
(``BoundsSource``); Kafka's defaults stand for those this node does not define.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kafkalite.common.group_bounds import GROUP_CONFIG_BOUNDS

RESOURCE_GROUP = 32  # ConfigResource.Type.GROUP


@dataclass(frozen=True)
class GroupSetting:
    """A group config: its type ("int" or "string"), the broker setting of its default, the broker
    settings of its bounds (ints), and its doc."""

    name: str
    type: str
    default_from: str
    doc: str
    min_from: str | None = None
    max_from: str | None = None
    choices: tuple[str, ...] = ()


GROUP_SETTINGS: tuple[GroupSetting, ...] = (
    GroupSetting("consumer.session.timeout.ms", "int", "group.consumer.session.timeout.ms",
                 "The timeout to detect client failures when using the consumer group protocol.",
                 "group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"),
    GroupSetting("consumer.heartbeat.interval.ms", "int", "group.consumer.heartbeat.interval.ms",
                 "The heartbeat interval given to the members of a consumer group.",
                 "group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"),
    GroupSetting("share.session.timeout.ms", "int", "group.share.session.timeout.ms",
                 "The timeout to detect client failures when using the share group protocol.",
                 "group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms"),
    GroupSetting("share.heartbeat.interval.ms", "int", "group.share.heartbeat.interval.ms",
                 "The heartbeat interval given to the members of a share group.",
                 "group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms"),
    GroupSetting("share.record.lock.duration.ms", "int", "group.share.record.lock.duration.ms",
                 "The record acquisition lock duration in milliseconds for share groups.",
                 "group.share.min.record.lock.duration.ms", "group.share.max.record.lock.duration.ms"),
    GroupSetting("share.auto.offset.reset", "string", "",
                 "The strategy to initialize the share-partition start offset: latest, earliest, or "
                 "by_duration:<ISO-8601 duration> (the offset of the first record at or after now "
                 "minus the duration)."),
    GroupSetting("share.isolation.level", "string", "",
                 "Controls how to read records written transactionally: read_committed or "
                 "read_uncommitted.", choices=("read_committed", "read_uncommitted")),
    GroupSetting("streams.session.timeout.ms", "int", "group.streams.session.timeout.ms",
                 "The timeout to detect client failures when using the streams group protocol.",
                 "group.streams.min.session.timeout.ms", "group.streams.max.session.timeout.ms"),
    GroupSetting("streams.heartbeat.interval.ms", "int", "group.streams.heartbeat.interval.ms",
                 "The heartbeat interval given to the members of a streams group.",
                 "group.streams.min.heartbeat.interval.ms", "group.streams.max.heartbeat.interval.ms"),
    GroupSetting("streams.num.standby.replicas", "int", "group.streams.num.standby.replicas",
                 "The number of standby replicas for each task.", None, "group.streams.max.standby.replicas"),
)
GROUP_SETTINGS_BY_NAME = {s.name: s for s in GROUP_SETTINGS}

# The defaults of the broker settings above, for those a node does not define.
KAFKA_DEFAULTS: dict[str, Any] = {s.name: s.default for s in GROUP_CONFIG_BOUNDS}
# The defaults of the two group configs whose default is not a broker setting.
DEFAULTS = {"share.auto.offset.reset": "latest", "share.isolation.level": "read_uncommitted"}
# (interval, session timeout): the interval must be the smaller (GroupConfig.validate).
ORDERED = (("consumer.heartbeat.interval.ms", "consumer.session.timeout.ms"),
           ("share.heartbeat.interval.ms", "share.session.timeout.ms"),
           ("streams.heartbeat.interval.ms", "streams.session.timeout.ms"))

# The broker settings this node has (by Kafka's name); the missing ones are KAFKA_DEFAULTS'.
BoundsSource = Callable[[str], Any]

_DURATION = re.compile(r"^([-+]?)P(?:([-+]?[0-9]+)D)?(?:T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?"
                       r"(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?$", re.IGNORECASE)


def parse_duration_ms(text: str) -> int:
    """java.time.Duration.parse's milliseconds (PnDTnHnMn.nS); ValueError if not one."""
    m = _DURATION.match(text)
    if m is None or text.upper().endswith("T") or text.upper() in ("P", "-P", "+P"):
        raise ValueError(f"{text!r} is not an ISO-8601 duration")
    sign = -1 if m.group(1) == "-" else 1
    days, hours, minutes, seconds = (int(g) if g else 0 for g in m.group(2, 3, 4, 5))
    fraction = int((m.group(6) or "").ljust(3, "0")[:3] or 0)
    ms = ((days * 24 + hours) * 60 + minutes) * 60_000 + seconds * 1000 + (
        -fraction if seconds < 0 or (m.group(5) or "").startswith("-") else fraction)
    return sign * ms


def _broker(source: BoundsSource | None, name: str) -> Any:
    value = source(name) if source is not None else None
    return KAFKA_DEFAULTS[name] if value is None else value


def default_of(setting: GroupSetting, source: BoundsSource | None) -> Any:
    return DEFAULTS[setting.name] if setting.type == "string" else _broker(source, setting.default_from)


class GroupConfigError(ValueError):
    """A group config refused (Kafka's InvalidConfigurationException: INVALID_CONFIG)."""


def validate(values: Mapping[str, str], source: BoundsSource | None = None) -> dict[str, Any]:
    """The typed values of a group's overrides, or GroupConfigError with Kafka's reason."""
    typed: dict[str, Any] = {}
    for name, text in values.items():
        setting = GROUP_SETTINGS_BY_NAME.get(name)
        if setting is None:
            raise GroupConfigError(f"Unknown group config name: {name}")
        if setting.type == "int":
            try:
                value: Any = int(text.strip())
            except ValueError:
                raise GroupConfigError(f"Invalid value {text} for configuration {name}: Not a number of "
                                       "type INT") from None
            low = _broker(source, setting.min_from) if setting.min_from else 0
            high = _broker(source, setting.max_from) if setting.max_from else None
            if value < low:
                raise GroupConfigError(f"Invalid value {value} for configuration {name}: Value must be "
                                       f"at least {low}")
            if high is not None and value > high:
                raise GroupConfigError(f"Invalid value {value} for configuration {name}: Value must be "
                                       f"no more than {high}")
        else:
            value = text.strip()
            if setting.choices and value.lower() not in setting.choices:
                raise GroupConfigError(f"Invalid value {text} for configuration {name}: String must be "
                                       f"one of: {', '.join(setting.choices)}")
            if name == "share.auto.offset.reset":
                check_auto_offset_reset(value)
            value = value.lower() if setting.choices else value
        typed[name] = value
    for interval, session in ORDERED:
        i = typed.get(interval, default_of(GROUP_SETTINGS_BY_NAME[interval], source))
        s = typed.get(session, default_of(GROUP_SETTINGS_BY_NAME[session], source))
        if (interval in typed or session in typed) and i >= s:
            raise GroupConfigError(f"{interval} must be less than {session}")
    return typed


def check_auto_offset_reset(value: str) -> None:
    """ShareGroupAutoOffsetResetStrategy.Validator: latest, earliest or by_duration:<duration>
    (a duration not negative)."""
    lowered = value.lower()
    if lowered in ("latest", "earliest"):
        return
    if lowered.startswith("by_duration:"):
        try:
            ms = parse_duration_ms(value[len("by_duration:"):])
        except ValueError:
            raise GroupConfigError(f"Invalid value {value} for configuration share.auto.offset.reset: "
                                   "Unable to parse duration string") from None
        if ms < 0:
            raise GroupConfigError(f"Invalid value {value} for configuration share.auto.offset.reset: "
                                   "Duration must be non-negative")
        return
    raise GroupConfigError(f"Invalid value {value} for configuration share.auto.offset.reset: "
                           "Invalid value. Valid values are [latest, earliest, by_duration:PnDTnHnMn.nS]")


@dataclass(frozen=True)
class GroupConfigView:
    """A group's configs in effect: its overrides over the broker's settings (what the group
    coordinators and share-partitions read, Kafka's GroupConfigManager.groupConfig)."""

    consumer_session_timeout_ms: int
    consumer_heartbeat_interval_ms: int
    share_session_timeout_ms: int
    share_heartbeat_interval_ms: int
    share_record_lock_duration_ms: int
    share_auto_offset_reset: str
    share_isolation_level: str
    streams_session_timeout_ms: int
    streams_heartbeat_interval_ms: int
    streams_num_standby_replicas: int
    overrides: Mapping[str, str] = dataclasses.field(default_factory=dict)  # what the group set


def view(overrides: Mapping[str, str], source: BoundsSource | None = None) -> GroupConfigView:
    """The view of a group with ``overrides`` (stored ones, already valid; an invalid one, as after a
    broker's bounds changed, falls back to the default, as Kafka's GroupConfig.fromProps would
    refuse it)."""
    values: dict[str, Any] = {}
    try:  # together, as they were accepted: a session timeout below the default interval is fine
        typed = validate(overrides, source)
    except GroupConfigError:
        typed = None
    for s in GROUP_SETTINGS:
        values[s.name.replace(".", "_")] = default_of(s, source)
        if typed is not None and s.name in typed:
            values[s.name.replace(".", "_")] = typed[s.name]
        elif s.name in overrides:
            try:
                values[s.name.replace(".", "_")] = validate({s.name: overrides[s.name]}, source)[s.name]
            except GroupConfigError:
                pass
    return GroupConfigView(**values, overrides=dict(overrides))
