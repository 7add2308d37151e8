"""The storage's settings: one table of the topic-level settings (``TOPIC_SETTINGS``: Kafka's
names, types, bounds and meaning, and the broker settings that give each its default, with their
units, as Kafka's ServerTopicConfigSynonyms), the broker's log settings (``STORAGE_SETTINGS``, rows
of the broker's settings table) and their typed views: ``LogConfig`` (one log's settings),
``CleanerConfig`` and ``LogSchedule``.

Topic-level overrides (CreateTopics' configs, later AlterConfigs) are given as Kafka's property
names and strings; ``LogConfig.from_properties`` checks them as Kafka's ConfigDef does and refuses
unknown names and bad values with a ConfigError naming the setting.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kafkalite.common.config_def import (
    OneOf,
    Range,
    Setting,
    Validator,
    at_least,
    between,
    fields_from,
    one_of,
)
from kafkalite.common.errors import ConfigError

CLEANUP_POLICY_DELETE = "delete"
CLEANUP_POLICY_COMPACT = "compact"
MINUTE_MS = 60 * 1000
HOUR_MS = 60 * MINUTE_MS

# --- the broker's log settings -------------------------------------------------------------------

STORAGE_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "log.dirs", "list", None,
        "A comma-separated list of the directories where the log data is stored; if not set, the value "
        "in log.dir is used.",
        group="log",
    ),
    Setting(
        "log.dir", "string", "/tmp/kafka-logs",
        "The directory in which the log data is kept (supplemental for the log.dirs property).",
        group="log",
    ),
    Setting(
        "log.storage", "string", "files",
        "Where the logs are kept: files (in log.dirs) or memory (the same files, in anonymous memory "
        "files named under log.dirs, nothing on disk; gone when the process ends; a broker "
        "restarted in the same process may be given them back). With memory the controller's "
        "store is in memory too. For test clusters (kafkalite.testing, docs/storage.md).",
        validator=one_of("files", "memory"), group="log", kafka=False,
    ),
    Setting(
        "message.max.bytes", "int", 1048588,
        "The largest record batch size allowed by Kafka (after compression if compression is "
        "enabled); the topic-level max.message.bytes overrides it.",
        validator=at_least(0), group="log",
        update_mode="cluster-wide",
    ),
    Setting(
        "log.segment.bytes", "int", 1073741824,
        "The maximum size of a single log file.",
        validator=at_least(14), group="log",
        update_mode="cluster-wide",
    ),
    Setting(
        "log.roll.ms", "long", None,
        "The maximum time before a new log segment is rolled out (in milliseconds). If not set, "
        "the value in log.roll.hours is used.",
        validator=at_least(1), group="log",
        update_mode="cluster-wide",
    ),
    Setting(
        "log.roll.hours", "int", 168,
        "The maximum time before a new log segment is rolled out (in hours), secondary to log.roll.ms.",
        validator=at_least(1), group="log",
        update_mode="cluster-wide",
    ),
    Setting(
        "log.roll.jitter.ms", "long", None,
        "The maximum jitter to subtract from logRollTimeMillis (in milliseconds). If not set, the "
        "value in log.roll.jitter.hours is used.",
        validator=at_least(0), group="log",
        update_mode="cluster-wide",
    ),
    Setting(
        "log.roll.jitter.hours", "int", 0,
        "The maximum jitter to subtract from logRollTimeMillis (in hours), secondary to log.roll.jitter.ms.",
        validator=at_least(0), group="log",
        update_mode="cluster-wide",
    ),
    Setting(
        "log.retention.ms", "long", None,
        "The number of milliseconds to keep a log file before deleting it; if not set, the value in "
        "log.retention.minutes is used. If set to -1, no time limit is applied.",
        group="log",
        update_mode="cluster-wide",
    ),
    Setting(
        "log.retention.minutes", "int", None,
        "The number of minutes to keep a log file before deleting it, secondary to log.retention.ms; "
        "if not set, the value in log.retention.hours is used.",
        group="log",
        update_mode="cluster-wide",
    ),
    Setting(
        "log.retention.hours", "int", 168,
        "The number of hours to keep a log file before deleting it, tertiary to log.retention.ms.",
        group="log",
        update_mode="cluster-wide",
    ),
    Setting(
        "log.retention.bytes", "long", -1,
        "The maximum size of the log before deleting it (-1: no limit).",
        group="log",
        update_mode="cluster-wide",
    ),
    Setting(
        "log.retention.check.interval.ms", "long", 300000,
        "The frequency in milliseconds that the log cleaner checks whether any log is eligible for deletion.",
        validator=at_least(1), group="log",
    ),
    Setting(
        "log.index.interval.bytes", "int", 4096,
        "The interval with which we add an entry to the offset index.",
        validator=at_least(0), group="log",
        update_mode="cluster-wide",
    ),
    Setting(
        "log.index.size.max.bytes", "int", 10485760,
        "The maximum size in bytes of the offset index.",
        validator=at_least(4), group="log",
        update_mode="cluster-wide",
    ),
    Setting(
        "log.segment.delete.delay.ms", "long", 60000,
        "The amount of time to wait before deleting a file from the filesystem.",
        validator=at_least(0), group="log",
        update_mode="cluster-wide",
    ),
    Setting(
        "log.cleanup.policy", "list", ["delete"],
        "The default cleanup policy for segments beyond the retention window: delete (time and "
        "size retention), compact (the log cleaner keeps the last record of each key), or both.",
        validator=one_of("delete", "compact"), group="log",
        update_mode="cluster-wide",
    ),
    Setting(
        "log.cleaner.enable", "bool", True,
        "Enable the log cleaner process to run on the server: needed for topics with "
        "cleanup.policy=compact, including the internal offsets topic.",
        group="log",
    ),
    Setting(
        "log.cleaner.threads", "int", 1,
        "The number of background threads to use for log cleaning.",
        validator=at_least(0), group="log",
        update_mode="cluster-wide",
    ),
    Setting(
        "log.cleaner.backoff.ms", "long", 15000,
        "The amount of time to sleep when there are no logs to clean.",
        validator=at_least(0), group="log",
        update_mode="cluster-wide",
    ),
    Setting(
        "log.cleaner.dedupe.buffer.size", "long", 134217728,
        "The total memory used for log deduplication across all cleaner threads (24 bytes per key, "
        "as Kafka's offset map: a cleaning round stops at the offset where it is full).",
        group="log",
        update_mode="cluster-wide",
    ),
    Setting(
        "log.cleaner.min.cleanable.ratio", "double", 0.5,
        "The minimum ratio of dirty log to total log for a log to be eligible for cleaning "
        "(unless max.compaction.lag.ms has passed).",
        validator=between(0, 1), group="log",
        update_mode="cluster-wide",
    ),
    Setting(
        "log.cleaner.delete.retention.ms", "long", 86400000,
        "The amount of time to retain tombstone markers for log compacted topics.",
        validator=at_least(0), group="log",
        update_mode="cluster-wide",
    ),
    Setting(
        "log.cleaner.min.compaction.lag.ms", "long", 0,
        "The minimum time a message will remain uncompacted in the log.",
        validator=at_least(0), group="log",
        update_mode="cluster-wide",
    ),
    Setting(
        "log.cleaner.max.compaction.lag.ms", "long", 9223372036854775807,
        "The maximum time a message will remain ineligible for compaction in the log.",
        validator=at_least(1), group="log",
        update_mode="cluster-wide",
    ),
    Setting(
        "log.flush.offset.checkpoint.interval.ms", "int", 60000,
        "The frequency with which we update the persistent record of the last flush which acts as "
        "the log recovery point.",
        validator=at_least(0), group="log",
    ),
    Setting(
        "log.flush.start.offset.checkpoint.interval.ms", "int", 60000,
        "The frequency with which we update the persistent record of log start offset.",
        validator=at_least(0), group="log",
    ),
    Setting(
        "producer.id.expiration.ms", "int", 86400000,
        "The time in ms that a topic partition leader will wait before expiring producer IDs.",
        validator=at_least(1), group="log",
        update_mode="cluster-wide",
    ),
    Setting(
        "producer.id.expiration.check.interval.ms", "int", 600000,
        "The interval at which to remove producer IDs that have expired due to "
        "producer.id.expiration.ms passing.",
        validator=at_least(1), group="log",
    ),
    # Replication's, kept with the log settings as Kafka's LogConfig keeps the topic-level ones.
    Setting(
        "min.insync.replicas", "int", 1,
        "When a producer sets acks to \"all\" (or \"-1\"), min.insync.replicas specifies the minimum "
        "number of replicas that must acknowledge a write for the write to be considered successful. "
        "If this minimum cannot be met, then the producer will raise an exception (either "
        "NotEnoughReplicas or NotEnoughReplicasAfterAppend). The high watermark does not advance "
        "while the ISR is smaller.",
        validator=at_least(1), group="replication",
        update_mode="cluster-wide",
    ),
    Setting(
        "unclean.leader.election.enable", "bool", False,
        "Indicates whether to enable replicas not in the ISR set to be elected as leader as a last "
        "resort, even though doing so may result in data loss.",
        group="replication",
        update_mode="cluster-wide",
    ),
    Setting(
        "replica.high.watermark.checkpoint.interval.ms", "long", 5000,
        "The frequency with which the high watermark is saved out to disk.",
        validator=at_least(1), group="replication",
    ),
)
_BROKER = {s.name: s for s in STORAGE_SETTINGS}

# --- topic-level settings ------------------------------------------------------------------------


def _same(value: Any) -> Any:
    return value


def _in_ms(unit_ms: int, unlimited: bool = False) -> Callable[[int], int]:
    """A broker value in units of ``unit_ms`` milliseconds, in milliseconds; with ``unlimited``, a
    negative value is -1 (no limit), as Kafka's logRetentionTimeMillis."""
    def convert(value: int) -> int:
        ms = value * unit_ms
        return -1 if unlimited and ms < 0 else ms
    return convert


@dataclass(frozen=True)
class Synonym:
    """A broker setting that gives a topic setting its default (``convert``: its value in the topic
    setting's unit and type)."""

    name: str
    convert: Callable[[Any], Any] = _same


@dataclass(frozen=True)
class TopicSetting:
    """A topic-level setting: Kafka's name and ConfigDef type (int, long, double, list or bool), the
    bounds of a value (``validator``), its meaning, and the broker settings it defaults to, the
    first one set winning (Kafka's synonyms); a setting without synonyms defaults to
    ``fallback``."""

    name: str
    type: str
    validator: Validator | None
    doc: str
    synonyms: tuple[Synonym, ...]
    fallback: Any = None

    @property
    def field(self) -> str:
        """LogConfig's field."""
        return self.name.replace(".", "_")

    @property
    def synonym_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.synonyms)

    def from_broker(self, values: Mapping[str, Any]) -> Any:
        """The value the broker's settings (``values`` by name) give: the first synonym set."""
        if not self.synonyms:
            return self.fallback
        for synonym in self.synonyms:
            value = values[synonym.name]
            if value is not None:
                return synonym.convert(value)
        raise ValueError(f"no synonym of {self.name} has a value")

    @property
    def default(self) -> Any:
        return self.from_broker({s.name: _BROKER[s.name].default for s in self.synonyms})

    def parse(self, raw: str) -> Any:
        """An override's text as Kafka's ConfigDef parses it; ConfigError in Kafka's words."""
        name, v = self.name, self.validator
        if self.type == "bool":
            text = raw.strip().lower()
            if text not in ("true", "false"):
                raise ConfigError(f"Invalid value {raw} for configuration {name}: Expected value to be "
                                  "either true or false", name)
            return text == "true"
        if self.type == "list":
            items = [p.strip() for p in raw.split(",")]
            if isinstance(v, OneOf) and any(p not in v.choices for p in items):
                raise ConfigError(f"Invalid value {raw} for configuration {name}: String must be one of: "
                                  + ", ".join(sorted(v.choices)), name)
            if v is not None and not isinstance(v, OneOf):
                reason = v.check(items)
                if reason is not None:
                    raise ConfigError(f"Invalid value {raw} for configuration {name}: {name} {reason}", name)
            return ",".join(items)
        if self.type == "double":
            try:
                number = float(raw.strip())
            except ValueError:
                number = float("nan")
            if isinstance(v, Range) and (number != number or v.check(number) is not None):
                raise ConfigError(f"Invalid value {raw} for configuration {name}: Value must be a number "
                                  f"between {v.low} and {v.high} (both included)", name)
            return number
        try:
            value = int(raw.strip())
        except ValueError:
            raise ConfigError(f"Invalid value {raw} for configuration {name}: Not a number of type LONG",
                              name) from None
        if isinstance(v, Range) and v.low is not None and value < v.low:
            raise ConfigError(f"Invalid value {value} for configuration {name}: "
                              f"Value must be at least {v.low}", name)
        return value


class ThrottledReplicas(Validator):
    """Kafka's ThrottledReplicaListValidator: ``*``, or ``partitionId:brokerId`` items."""

    def check(self, value: Any) -> str | None:
        items = [str(v).strip() for v in value]
        if "".join(items) == "*" or all(_REPLICA.fullmatch(i) for i in items):
            return None
        return ("must be the literal '*' or a list of replicas in the following format: "
                "[partitionId]:[brokerId],[partitionId]:[brokerId],...")

    def describe(self) -> str:
        return "[partitionId]:[brokerId],[partitionId]:[brokerId],..."


_REPLICA = re.compile(r"([0-9]+:[0-9]+)?")

# segment.bytes' floor is Kafka's LegacyRecord.RECORD_OVERHEAD_V0 (14): a segment must hold a batch.
TOPIC_SETTINGS: tuple[TopicSetting, ...] = (
    TopicSetting("cleanup.policy", "list", one_of(CLEANUP_POLICY_DELETE, CLEANUP_POLICY_COMPACT),
                 "What happens to segments past the retention limits: delete removes them; compact "
                 "keeps the last record of each key (the log cleaner); both may be given.",
                 (Synonym("log.cleanup.policy", ",".join),)),
    TopicSetting("delete.retention.ms", "long", at_least(0),
                 "With the compact policy, how long a tombstone (a record with a null value) stays "
                 "after the cleaner first kept it, so that consumers still see the deletion.",
                 (Synonym("log.cleaner.delete.retention.ms"),)),
    TopicSetting("file.delete.delay.ms", "long", at_least(0),
                 "How long a deleted segment's files stay on disk before they are removed.",
                 (Synonym("log.segment.delete.delay.ms"),)),
    TopicSetting("index.interval.bytes", "int", at_least(0),
                 "How many bytes of batches go between two offset index entries: more entries let "
                 "reads start closer to the offset asked for, at the cost of a bigger index.",
                 (Synonym("log.index.interval.bytes"),)),
    TopicSetting("leader.replication.throttled.replicas", "list", ThrottledReplicas(),
                 "A list of replicas for which log replication should be throttled on the leader side. "
                 "The list should describe a set of replicas in the form "
                 "[PartitionId]:[BrokerId],[PartitionId]:[BrokerId]:... or alternatively the wildcard "
                 "'*' can be used to throttle all replicas for this topic.",
                 (), fallback=""),
    TopicSetting("follower.replication.throttled.replicas", "list", ThrottledReplicas(),
                 "A list of replicas for which log replication should be throttled on the follower "
                 "side. The list should describe a set of replicas in the form "
                 "[PartitionId]:[BrokerId],[PartitionId]:[BrokerId]:... or alternatively the wildcard "
                 "'*' can be used to throttle all replicas for this topic.",
                 (), fallback=""),
    TopicSetting("max.compaction.lag.ms", "long", at_least(1),
                 "With the compact policy, the longest a record stays uncompacted: a log whose "
                 "oldest dirty record is older is cleaned whatever its dirty ratio.",
                 (Synonym("log.cleaner.max.compaction.lag.ms"),)),
    TopicSetting("min.cleanable.dirty.ratio", "double", between(0, 1),
                 "With the compact policy, the share of the log not yet cleaned at which the "
                 "cleaner takes it.",
                 (Synonym("log.cleaner.min.cleanable.ratio"),)),
    TopicSetting("min.compaction.lag.ms", "long", at_least(0),
                 "With the compact policy, the shortest a record stays uncompacted.",
                 (Synonym("log.cleaner.min.compaction.lag.ms"),)),
    TopicSetting("min.insync.replicas", "int", at_least(1),
                 "With acks=all, how many in-sync replicas (the leader included) a write needs: "
                 "fewer, and Produce is refused with NOT_ENOUGH_REPLICAS and the high watermark "
                 "does not advance.",
                 (Synonym("min.insync.replicas"),)),
    TopicSetting("max.message.bytes", "int", at_least(0),
                 "The largest record batch the topic accepts (after compression if compressed); a "
                 "larger one is refused with MESSAGE_TOO_LARGE.",
                 (Synonym("message.max.bytes"),)),
    TopicSetting("retention.bytes", "long", None,
                 "With the delete policy, how big a partition may grow before its oldest segments "
                 "are removed; -1 means no size limit.",
                 (Synonym("log.retention.bytes"),)),
    TopicSetting("retention.ms", "long", at_least(-1),
                 "With the delete policy, how long a segment is kept after its last record's "
                 "timestamp; -1 means no time limit.",
                 (Synonym("log.retention.ms", _in_ms(1, unlimited=True)),
                  Synonym("log.retention.minutes", _in_ms(MINUTE_MS, unlimited=True)),
                  Synonym("log.retention.hours", _in_ms(HOUR_MS, unlimited=True)))),
    TopicSetting("segment.bytes", "int", at_least(14),
                 "The size at which a partition's active segment is closed and a new one started; "
                 "retention removes whole segments.",
                 (Synonym("log.segment.bytes"),)),
    TopicSetting("segment.index.bytes", "int", at_least(4),
                 "The size of a segment's offset index (and time index) files; a full index rolls "
                 "the segment.",
                 (Synonym("log.index.size.max.bytes"),)),
    TopicSetting("segment.jitter.ms", "long", at_least(0),
                 "At most this much is taken off segment.ms at random for each segment, so that "
                 "segments of many partitions do not roll at once.",
                 (Synonym("log.roll.jitter.ms"), Synonym("log.roll.jitter.hours", _in_ms(HOUR_MS)))),
    TopicSetting("segment.ms", "long", at_least(1),
                 "The age at which a partition's active segment is closed even if not full, so that "
                 "retention can remove old data.",
                 (Synonym("log.roll.ms"), Synonym("log.roll.hours", _in_ms(HOUR_MS)))),
    TopicSetting("unclean.leader.election.enable", "bool", None,
                 "Whether a replica outside the ISR may become leader when no ISR member is alive, "
                 "at the cost of losing what only the ISR had.",
                 (Synonym("unclean.leader.election.enable"),)),
)
TOPIC_SETTINGS_BY_NAME: dict[str, TopicSetting] = {s.name: s for s in TOPIC_SETTINGS}
if any(s.name not in _BROKER for t in TOPIC_SETTINGS for s in t.synonyms):
    raise ValueError("a topic setting's synonym is not a broker log setting")


def _default(name: str) -> Any:
    return TOPIC_SETTINGS_BY_NAME[name].default


# --- typed views ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LogConfig:
    """One log's settings (Kafka's LogConfig): the topic's overrides over the broker's log settings;
    the defaults are those of the broker's settings."""

    segment_bytes: int = _default("segment.bytes")
    segment_ms: int = _default("segment.ms")
    segment_jitter_ms: int = _default("segment.jitter.ms")
    segment_index_bytes: int = _default("segment.index.bytes")
    retention_ms: int = _default("retention.ms")
    retention_bytes: int = _default("retention.bytes")
    index_interval_bytes: int = _default("index.interval.bytes")
    max_message_bytes: int = _default("max.message.bytes")
    file_delete_delay_ms: int = _default("file.delete.delay.ms")
    cleanup_policy: str = _default("cleanup.policy")
    delete_retention_ms: int = _default("delete.retention.ms")  # how long a tombstone outlives its cleaning
    min_compaction_lag_ms: int = _default("min.compaction.lag.ms")
    max_compaction_lag_ms: int = _default("max.compaction.lag.ms")
    min_cleanable_dirty_ratio: float = _default("min.cleanable.dirty.ratio")
    min_insync_replicas: int = _default("min.insync.replicas")
    unclean_leader_election_enable: bool = _default("unclean.leader.election.enable")
    # partition:broker items or "*" (comma-separated); replication/quota.py reads them at fetch time
    leader_replication_throttled_replicas: str = _default("leader.replication.throttled.replicas")
    follower_replication_throttled_replicas: str = _default("follower.replication.throttled.replicas")

    @property
    def delete(self) -> bool:
        """Whether time and size retention apply (cleanup.policy contains delete)."""
        return CLEANUP_POLICY_DELETE in self.cleanup_policy.split(",")

    @property
    def compact(self) -> bool:
        """Whether the log cleaner compacts the log (cleanup.policy contains compact)."""
        return CLEANUP_POLICY_COMPACT in self.cleanup_policy.split(",")

    @classmethod
    def from_broker(cls, values: Mapping[str, Any]) -> LogConfig:
        """The broker's defaults for every log, from its settings' ``values`` (by name)."""
        return cls(**{t.field: t.from_broker(values) for t in TOPIC_SETTINGS})

    @classmethod
    def from_properties(cls, props: Mapping[str, str], base: LogConfig | None = None) -> LogConfig:
        """``base`` (the defaults when None) with Kafka-named overrides applied."""
        changes: dict[str, object] = {}
        errors: list[ConfigError] = []
        for name, raw in props.items():
            setting = TOPIC_SETTINGS_BY_NAME.get(name)
            if setting is None:
                errors.append(ConfigError(f"Unknown topic config name: {name}", name))
                continue
            try:
                changes[setting.field] = setting.parse(raw)
            except ConfigError as e:
                errors.append(e)
        if errors:
            raise ConfigError.of(errors)
        return dataclasses.replace(base or cls(), **changes)  # type: ignore[arg-type]

    def to_properties(self) -> dict[str, str]:
        """Every setting under its Kafka name, as strings (DescribeConfigs' view)."""
        return {s.name: _text(getattr(self, s.field)) for s in TOPIC_SETTINGS}


if {f.name for f in dataclasses.fields(LogConfig)} != {t.field for t in TOPIC_SETTINGS}:
    raise ValueError("LogConfig must have a field for each topic setting, and no other")


def _text(value: object) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


_field = fields_from(STORAGE_SETTINGS)


@dataclass(frozen=True)
class CleanerConfig:
    """The broker's log.cleaner.* settings that are not a topic's."""

    enable: bool = _field("log.cleaner.enable")
    num_threads: int = _field("log.cleaner.threads")
    dedupe_buffer_size: int = _field("log.cleaner.dedupe.buffer.size")
    backoff_ms: int = _field("log.cleaner.backoff.ms")


@dataclass(frozen=True)
class LogSchedule:
    """How often the broker's scheduler runs the log manager's periodic work."""

    retention_check_interval_ms: int = _field("log.retention.check.interval.ms")
    recovery_point_checkpoint_interval_ms: int = _field("log.flush.offset.checkpoint.interval.ms")
    log_start_offset_checkpoint_interval_ms: int = _field("log.flush.start.offset.checkpoint.interval.ms")
    high_watermark_checkpoint_interval_ms: int = _field("replica.high.watermark.checkpoint.interval.ms")
    producer_id_expiration_ms: int = _field("producer.id.expiration.ms")
    producer_id_expiration_check_interval_ms: int = _field("producer.id.expiration.check.interval.ms")
