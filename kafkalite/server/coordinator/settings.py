"""The group coordinator's settings (Kafka's GroupCoordinatorConfig and the offsets topic's), as
typed values: the broker's settings table (server/config.py) names and documents them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GroupConfig:
    """group.* settings."""

    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1800000
    initial_rebalance_delay_ms: int = 3000
    max_size: int = 2**31 - 1


@dataclass(frozen=True)
class OffsetsTopicConfig:
    """offsets.* settings."""

    num_partitions: int = 50
    replication_factor: int = 3
    segment_bytes: int = 104857600
    commit_timeout_ms: int = 5000
    retention_ms: int = 7 * 24 * 60 * 60 * 1000
    retention_check_interval_ms: int = 600000

    def replication_factor_for(self, brokers: int) -> int:
        """offsets.topic.replication.factor capped by the brokers there are (at least 1)."""
        return max(1, min(self.replication_factor, brokers))

    def topic_configs(self) -> dict[str, str]:
        """The topic's settings at its creation (Kafka's groupMetadataTopicConfigs)."""
        return {"cleanup.policy": "compact", "segment.bytes": str(self.segment_bytes)}
