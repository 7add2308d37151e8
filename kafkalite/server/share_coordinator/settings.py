"""The share coordinator's settings (Kafka's ShareCoordinatorConfig: share.coordinator.*) as rows
of the broker's settings table (``SHARE_COORDINATOR_SETTINGS``) and their typed view, which the
broker's configuration fills (``BrokerConfig.share_coordinator_config``)."""

from __future__ import annotations

from dataclasses import dataclass

from kafkalite.common.config_def import Setting, at_least, fields_from

GROUP = "share_coordinator"

SHARE_COORDINATOR_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "share.coordinator.state.topic.num.partitions", "int", 50,
        "The number of partitions for the share-group state topic (should not change after deployment).",
        validator=at_least(1), group=GROUP,
    ),
    Setting(
        "share.coordinator.state.topic.replication.factor", "int", 3,
        "Replication factor for the share-group state topic; kafkalite takes fewer when fewer brokers "
        "are registered (Kafka refuses to create it until enough are).",
        validator=at_least(1), group=GROUP,
    ),
    Setting(
        "share.coordinator.state.topic.min.isr", "int", 2,
        "Overridden min.insync.replicas for the share-group state topic (capped by the replication "
        "factor the topic gets).",
        validator=at_least(1), group=GROUP,
    ),
    Setting(
        "share.coordinator.state.topic.segment.bytes", "int", 104857600,
        "The log segment size for the share-group state topic.",
        validator=at_least(1), group=GROUP,
    ),
    Setting(
        "share.coordinator.snapshot.update.records.per.snapshot", "int", 500,
        "The number of update records the share coordinator writes between snapshot records.",
        validator=at_least(0), group=GROUP,
    ),
    Setting(
        "share.coordinator.write.timeout.ms", "int", 5000,
        "The duration in milliseconds that the share coordinator will wait for all replicas of the "
        "share-group state topic to receive a write; also how long the broker's persister retries a "
        "request to a coordinator that is moving or loading.",
        validator=at_least(1), group=GROUP,
    ),
    Setting(
        "share.coordinator.load.buffer.size", "int", 5242880,
        "Batch size for reading from the share-group state topic when loading state information into "
        "the cache (soft-limit, overridden if records are too large).",
        validator=at_least(1), group=GROUP,
    ),
)

_field = fields_from(SHARE_COORDINATOR_SETTINGS)


@dataclass(frozen=True)
class ShareCoordinatorConfig:
    """share.coordinator.* settings."""

    num_partitions: int = _field("share.coordinator.state.topic.num.partitions")
    replication_factor: int = _field("share.coordinator.state.topic.replication.factor")
    min_isr: int = _field("share.coordinator.state.topic.min.isr")
    segment_bytes: int = _field("share.coordinator.state.topic.segment.bytes")
    updates_per_snapshot: int = _field("share.coordinator.snapshot.update.records.per.snapshot")
    write_timeout_ms: int = _field("share.coordinator.write.timeout.ms")
    load_buffer_size: int = _field("share.coordinator.load.buffer.size")

    def replication_factor_for(self, brokers: int) -> int:
        """The replication factor capped by the brokers there are (at least 1)."""
        return max(1, min(self.replication_factor, brokers))

    def topic_configs(self, brokers: int | None = None) -> dict[str, str]:
        """The topic's settings at its creation (Kafka's ShareCoordinatorService.shareGroupStateTopicConfigs):
        compacted, min.insync.replicas capped by the factor the topic gets."""
        min_isr = self.min_isr if brokers is None else min(self.min_isr, self.replication_factor_for(brokers))
        return {
            "cleanup.policy": "compact",
            "min.insync.replicas": str(min_isr),
            "segment.bytes": str(self.segment_bytes),
        }
