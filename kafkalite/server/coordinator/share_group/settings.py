"""The share groups' membership settings (Kafka's ShareGroupConfig and GroupCoordinatorConfig:
group.share.* that the group coordinator reads) as rows of the broker's settings table
(``SHARE_GROUP_SETTINGS``) and their typed view ``ShareGroupConfig``."""

from __future__ import annotations

from dataclasses import dataclass

from kafkalite.common.config_def import Setting, between, fields_from
from kafkalite.common.group_bounds import SHARE_GROUP_BOUNDS

SHARE_GROUP_SETTINGS: tuple[Setting, ...] = (
    *SHARE_GROUP_BOUNDS,
    Setting(
        "group.share.max.size", "int", 200,
        "The maximum number of members that a single share group can accommodate.",
        validator=between(10, 1000), group="share",
    ),
    Setting(
        "group.share.max.groups", "int", 10,
        "The maximum number of share groups.",
        validator=between(1, 1000), group="share",
    ),
    Setting(
        "group.share.assignors", "list", ["simple"],
        "The server-side assignors as a list of names; the first one is used. kafkalite has "
        "`simple` (Kafka's SimpleAssignor).",
        group="share",
    ),
)

_field = fields_from(SHARE_GROUP_SETTINGS)


def _clamped(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


@dataclass(frozen=True)
class ShareGroupConfig:
    """group.share.* settings of membership."""

    session_timeout_ms: int = _field("group.share.session.timeout.ms")
    min_session_timeout_ms: int = _field("group.share.min.session.timeout.ms")
    max_session_timeout_ms: int = _field("group.share.max.session.timeout.ms")
    heartbeat_interval_ms: int = _field("group.share.heartbeat.interval.ms")
    min_heartbeat_interval_ms: int = _field("group.share.min.heartbeat.interval.ms")
    max_heartbeat_interval_ms: int = _field("group.share.max.heartbeat.interval.ms")
    max_size: int = _field("group.share.max.size")
    max_groups: int = _field("group.share.max.groups")

    @property
    def session_ms(self) -> int:
        return _clamped(self.session_timeout_ms, self.min_session_timeout_ms, self.max_session_timeout_ms)

    @property
    def heartbeat_ms(self) -> int:
        return _clamped(self.heartbeat_interval_ms, self.min_heartbeat_interval_ms,
                        self.max_heartbeat_interval_ms)
