"""The group coordinator's settings (Kafka's GroupCoordinatorConfig: group.*, and the offsets
topic's: offsets.*) as rows of the broker's settings table (``GROUP_SETTINGS``) and their typed
views, which the broker's configuration fills (``BrokerConfig.group_config``,
``BrokerConfig.offsets_topic_config``)."""

from __future__ import annotations

from dataclasses import dataclass

from kafkalite.common.config_def import Setting, at_least, fields_from, one_of
from kafkalite.common.group_bounds import CONSUMER_GROUP_BOUNDS, STREAMS_GROUP_BOUNDS

GROUP_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "offsets.topic.num.partitions", "int", 50,
        "The number of partitions for the offset commit topic (should not change after deployment).",
        validator=at_least(1), group="group",
    ),
    Setting(
        "offsets.topic.replication.factor", "int", 3,
        "The replication factor for the offsets topic; kafkalite takes fewer when fewer brokers are "
        "registered (Kafka refuses to create it until enough are).",
        validator=at_least(1), group="group",
    ),
    Setting(
        "offsets.topic.segment.bytes", "int", 104857600,
        "The offsets topic segment bytes should be kept relatively small in order to facilitate faster "
        "log compaction and cache loads.",
        validator=at_least(1), group="group",
    ),
    Setting(
        "offsets.commit.timeout.ms", "int", 5000,
        "Offset commit will be delayed until all replicas for the offsets topic receive the commit or "
        "this timeout is reached.",
        validator=at_least(1), group="group",
    ),
    Setting(
        "offsets.retention.minutes", "int", 10080,
        "For subscribed consumers, committed offset of a specific partition will be expired and "
        "discarded after this period of time has elapsed after the consumer group loses all its "
        "consumers (becomes empty); for standalone consumers (assigned partitions) after the commit.",
        validator=at_least(1), group="group",
    ),
    Setting(
        "offsets.retention.check.interval.ms", "long", 600000,
        "Frequency at which to check for stale offsets.",
        validator=at_least(1), group="group",
    ),
    Setting(
        "group.initial.rebalance.delay.ms", "int", 3000,
        "The amount of time the group coordinator will wait for more consumers to join a new group "
        "before performing the first rebalance (`kafkalite cluster` sets 0).",
        validator=at_least(0), group="group",
    ),
    Setting(
        "group.min.session.timeout.ms", "int", 6000,
        "The minimum allowed session timeout for registered consumers.",
        group="group",
    ),
    Setting(
        "group.max.session.timeout.ms", "int", 1800000,
        "The maximum allowed session timeout for registered consumers.",
        group="group",
    ),
    Setting(
        "group.max.size", "int", 2147483647,
        "The maximum number of consumers that a single consumer group can accommodate.",
        validator=at_least(1), group="group",
    ),
    # The consumer rebalance protocol (KIP-848), Kafka's GroupCoordinatorConfig.
    Setting(
        "group.coordinator.rebalance.protocols", "list", ["classic", "consumer"],
        "The list of enabled rebalance protocols (classic, consumer; share groups are not among them "
        "here). Without consumer, ConsumerGroupHeartbeat is not offered.",
        validator=one_of("classic", "consumer"), group="group",
    ),
    *CONSUMER_GROUP_BOUNDS,
    *STREAMS_GROUP_BOUNDS,
    Setting(
        "group.consumer.max.size", "int", 2147483647,
        "The maximum number of consumers that a single consumer group can accommodate.",
        validator=at_least(1), group="group",
    ),
    Setting(
        "group.consumer.assignors", "list", ["uniform", "range"],
        "The server-side assignors as a list of names (uniform, range); the first one is the default.",
        validator=one_of("uniform", "range"), group="group",
    ),
    Setting(
        "group.consumer.migration.policy", "string", "bidirectional",
        "The config that enables converting the non-empty classic group using the consumer embedded "
        "protocol to the non-empty consumer group using the consumer group protocol and vice versa; "
        "conversions of empty groups in both directions are always enabled regardless of this policy "
        "(bidirectional, upgrade, downgrade or disabled).",
        validator=one_of("bidirectional", "upgrade", "downgrade", "disabled"), group="group",
    ),
)

_field = fields_from(GROUP_SETTINGS)


def _minutes_as_ms(minutes: int) -> int:
    return minutes * 60 * 1000


@dataclass(frozen=True)
class GroupConfig:
    """group.* settings."""

    min_session_timeout_ms: int = _field("group.min.session.timeout.ms")
    max_session_timeout_ms: int = _field("group.max.session.timeout.ms")
    initial_rebalance_delay_ms: int = _field("group.initial.rebalance.delay.ms")
    max_size: int = _field("group.max.size")
    rebalance_protocols: tuple[str, ...] = _field("group.coordinator.rebalance.protocols", tuple)
    consumer_session_timeout_ms: int = _field("group.consumer.session.timeout.ms")
    consumer_min_session_timeout_ms: int = _field("group.consumer.min.session.timeout.ms")
    consumer_max_session_timeout_ms: int = _field("group.consumer.max.session.timeout.ms")
    consumer_heartbeat_interval_ms: int = _field("group.consumer.heartbeat.interval.ms")
    consumer_min_heartbeat_interval_ms: int = _field("group.consumer.min.heartbeat.interval.ms")
    consumer_max_heartbeat_interval_ms: int = _field("group.consumer.max.heartbeat.interval.ms")
    consumer_max_size: int = _field("group.consumer.max.size")
    consumer_assignors: tuple[str, ...] = _field("group.consumer.assignors", tuple)
    consumer_migration_policy: str = _field("group.consumer.migration.policy")

    @property
    def consumer_protocol_enabled(self) -> bool:
        return "consumer" in self.rebalance_protocols

    @property
    def consumer_session_timeout(self) -> int:
        """group.consumer.session.timeout.ms within its min and max (Kafka requires it there)."""
        return min(max(self.consumer_session_timeout_ms, self.consumer_min_session_timeout_ms),
                   self.consumer_max_session_timeout_ms)

    @property
    def consumer_heartbeat_interval(self) -> int:
        return min(max(self.consumer_heartbeat_interval_ms, self.consumer_min_heartbeat_interval_ms),
                   self.consumer_max_heartbeat_interval_ms)


@dataclass(frozen=True)
class OffsetsTopicConfig:
    """offsets.* settings."""

    num_partitions: int = _field("offsets.topic.num.partitions")
    replication_factor: int = _field("offsets.topic.replication.factor")
    segment_bytes: int = _field("offsets.topic.segment.bytes")
    commit_timeout_ms: int = _field("offsets.commit.timeout.ms")
    retention_ms: int = _field("offsets.retention.minutes", _minutes_as_ms)
    retention_check_interval_ms: int = _field("offsets.retention.check.interval.ms")

    def replication_factor_for(self, brokers: int) -> int:
        """offsets.topic.replication.factor capped by the brokers there are (at least 1)."""
        return max(1, min(self.replication_factor, brokers))

    def topic_configs(self) -> dict[str, str]:
        """The topic's settings at its creation (Kafka's groupMetadataTopicConfigs)."""
        return {"cleanup.policy": "compact", "segment.bytes": str(self.segment_bytes)}
