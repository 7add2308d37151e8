"""The share-partition leader's settings (Kafka's ShareGroupConfig, the group.share.* that a
partition leader reads: record locks, delivery count, sessions) as rows of the broker's settings
table (``SHARE_SETTINGS``) and their typed view ``SharePartitionConfig``.

Share groups are on (Kafka 4.2 has them production-ready and on once ``share.version`` is 1,
which a new 4.2 cluster finalizes; kafkalite has no ``share.version`` feature: they are served).
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkalite.common.config_def import Setting, at_least, between, fields_from, one_of
from kafkalite.common.group_bounds import RECORD_LOCK_BOUNDS

SHARE_SETTINGS: tuple[Setting, ...] = (
    *RECORD_LOCK_BOUNDS,
    Setting(
        "group.share.delivery.count.limit", "int", 5,
        "The maximum number of delivery attempts for a record delivered to a share group: at the "
        "limit a record released or whose lock expires is archived (a poison record).",
        validator=between(2, 10), group="share",
    ),
    Setting(
        "group.share.partition.max.record.locks", "int", 200,
        "Share-group record lock limit per share-partition: the most records in flight (between "
        "the share-partition start and end offsets) at once.",
        validator=between(100, 10000), group="share",
    ),
    Setting(
        "group.share.max.share.sessions", "int", 2000,
        "The maximum number of share sessions per broker (SHARE_SESSION_LIMIT_REACHED beyond).",
        validator=at_least(1), group="share",
    ),
    Setting(
        "share.auto.offset.reset", "string", "latest",
        "Where a share group starts reading a partition it has no state for: latest or earliest. "
        "A group config in Kafka (IncrementalAlterConfigs of the GROUP resource); here the default "
        "every group gets until group configs are set.",
        validator=one_of("latest", "earliest"), group="share", kafka=False,
    ),
)

_field = fields_from(SHARE_SETTINGS)


@dataclass(frozen=True)
class SharePartitionConfig:
    """group.share.* settings a share-partition leader reads."""

    record_lock_duration_ms: int = _field("group.share.record.lock.duration.ms")
    min_record_lock_duration_ms: int = _field("group.share.min.record.lock.duration.ms")
    max_record_lock_duration_ms: int = _field("group.share.max.record.lock.duration.ms")
    delivery_count_limit: int = _field("group.share.delivery.count.limit")
    max_record_locks: int = _field("group.share.partition.max.record.locks")
    max_share_sessions: int = _field("group.share.max.share.sessions")
    auto_offset_reset: str = _field("share.auto.offset.reset")

    def lock_duration_ms(self, wanted: int | None = None) -> int:
        """A lock duration (a group config's, else the broker's) within the min and max."""
        value = self.record_lock_duration_ms if wanted is None else wanted
        return max(self.min_record_lock_duration_ms, min(self.max_record_lock_duration_ms, value))
