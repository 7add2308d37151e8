"""LogConfig: a topic's log settings with Kafka's names, defaults and bounds (LogConfig.java).

Topic-level overrides (CreateTopics' configs, later AlterConfigs) are given as Kafka's property
names and strings; ``LogConfig.from_properties`` checks them as Kafka's ConfigDef does and refuses
unknown names and bad values with a ConfigError naming the setting.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from kafkalite.common.errors import ConfigError

CLEANUP_POLICY_DELETE = "delete"
CLEANUP_POLICY_COMPACT = "compact"


class _Setting(NamedTuple):
    name: str  # Kafka's topic-level name
    field: str  # LogConfig's field
    minimum: int | None  # ConfigDef's atLeast, when it has one


# segment.bytes' floor is Kafka's LegacyRecord.RECORD_OVERHEAD_V0 (14): a segment must hold a batch.
SETTINGS: tuple[_Setting, ...] = (
    _Setting("segment.bytes", "segment_bytes", 14),
    _Setting("segment.ms", "segment_ms", 1),
    _Setting("segment.jitter.ms", "segment_jitter_ms", 0),
    _Setting("segment.index.bytes", "segment_index_bytes", 4),
    _Setting("retention.ms", "retention_ms", -1),
    _Setting("retention.bytes", "retention_bytes", None),
    _Setting("index.interval.bytes", "index_interval_bytes", 0),
    _Setting("max.message.bytes", "max_message_bytes", 0),
    _Setting("file.delete.delay.ms", "file_delete_delay_ms", 0),
    _Setting("cleanup.policy", "cleanup_policy", None),
    _Setting("delete.retention.ms", "delete_retention_ms", 0),
    _Setting("min.compaction.lag.ms", "min_compaction_lag_ms", 0),
    _Setting("max.compaction.lag.ms", "max_compaction_lag_ms", 1),
    _Setting("min.cleanable.dirty.ratio", "min_cleanable_dirty_ratio", 0),
    # Replication's, kept with the topic's other settings as Kafka's LogConfig keeps them.
    _Setting("min.insync.replicas", "min_insync_replicas", 1),
    _Setting("unclean.leader.election.enable", "unclean_leader_election_enable", None),
)
_BY_NAME = {s.name: s for s in SETTINGS}


@dataclass(frozen=True)
class LogConfig:
    """One log's settings; defaults are Kafka's (the broker-level ``log.*`` defaults)."""

    segment_bytes: int = 1024 * 1024 * 1024
    segment_ms: int = 7 * 24 * 60 * 60 * 1000
    segment_jitter_ms: int = 0
    segment_index_bytes: int = 10 * 1024 * 1024
    retention_ms: int = 7 * 24 * 60 * 60 * 1000
    retention_bytes: int = -1
    index_interval_bytes: int = 4096
    max_message_bytes: int = 1024 * 1024 + 12  # 1048588: a 1 MiB batch plus its log overhead
    file_delete_delay_ms: int = 60000
    cleanup_policy: str = CLEANUP_POLICY_DELETE
    delete_retention_ms: int = 24 * 60 * 60 * 1000  # how long a tombstone outlives its cleaning
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = 2**63 - 1
    min_cleanable_dirty_ratio: float = 0.5
    min_insync_replicas: int = 1
    unclean_leader_election_enable: bool = False

    @property
    def delete(self) -> bool:
        """Whether time and size retention apply (cleanup.policy contains delete)."""
        return CLEANUP_POLICY_DELETE in self.cleanup_policy.split(",")

    @property
    def compact(self) -> bool:
        """Whether the log cleaner compacts the log (cleanup.policy contains compact)."""
        return CLEANUP_POLICY_COMPACT in self.cleanup_policy.split(",")

    @classmethod
    def from_properties(cls, props: Mapping[str, str], base: LogConfig | None = None) -> LogConfig:
        """``base`` (the defaults when None) with Kafka-named overrides applied."""
        changes: dict[str, object] = {}
        errors: list[ConfigError] = []
        for name, raw in props.items():
            setting = _BY_NAME.get(name)
            if setting is None:
                errors.append(ConfigError(f"Unknown topic config name: {name}", name))
                continue
            try:
                changes[setting.field] = _parse(setting, raw)
            except ConfigError as e:
                errors.append(e)
        if errors:
            raise ConfigError.of(errors)
        return dataclasses.replace(base or cls(), **changes)  # type: ignore[arg-type]

    def to_properties(self) -> dict[str, str]:
        """Every setting under its Kafka name, as strings (DescribeConfigs' view)."""
        return {s.name: _text(getattr(self, s.field)) for s in SETTINGS}


def _text(value: object) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _parse(setting: _Setting, raw: str) -> int | str | bool | float:
    if setting.name == "unclean.leader.election.enable":
        text = raw.strip().lower()
        if text not in ("true", "false"):
            raise ConfigError(f"Invalid value {raw} for configuration {setting.name}: Expected value to be "
                              "either true or false", setting.name)
        return text == "true"
    if setting.name == "cleanup.policy":
        policies = [p.strip() for p in raw.split(",")]
        if not policies or any(p not in (CLEANUP_POLICY_DELETE, CLEANUP_POLICY_COMPACT) for p in policies):
            raise ConfigError(
                f"Invalid value {raw} for configuration cleanup.policy: "
                "String must be one of: compact, delete",
                setting.name,
            )
        return ",".join(policies)
    if setting.name == "min.cleanable.dirty.ratio":
        try:
            ratio = float(raw.strip())
        except ValueError:
            ratio = float("nan")
        if not 0 <= ratio <= 1:
            raise ConfigError(f"Invalid value {raw} for configuration {setting.name}: Value must be a number "
                              "between 0 and 1 (both included)", setting.name)
        return ratio
    try:
        value = int(raw.strip())
    except ValueError:
        raise ConfigError(
            f"Invalid value {raw} for configuration {setting.name}: Not a number of type LONG", setting.name
        ) from None
    if setting.minimum is not None and value < setting.minimum:
        raise ConfigError(
            f"Invalid value {value} for configuration {setting.name}: "
            f"Value must be at least {setting.minimum}",
            setting.name,
        )
    return value
