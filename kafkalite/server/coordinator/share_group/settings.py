"""The share groups' membership settings (Kafka's ShareGroupConfig and GroupCoordinatorConfig:
group.share.* that the group coordinator reads) as rows of the broker's settings table
(``SHARE_GROUP_SETTINGS``) and their typed view ``ShareGroupConfig``."""

from __future__ import annotations

from dataclasses import dataclass

from kafkalite.common.config_def import Setting, at_least, between, fields_from

SHARE_GROUP_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "group.share.session.timeout.ms", "int", 45000,
        "The timeout to detect client failures when using the share group protocol.",
        validator=at_least(1), group="share",
    ),
    Setting(
        "group.share.min.session.timeout.ms", "int", 45000,
        "The minimum allowed session timeout for share group members.",
        validator=at_least(1), group="share",
    ),
    Setting(
        "group.share.max.session.timeout.ms", "int", 60000,
        "The maximum allowed session timeout for share group members.",
        validator=at_least(1), group="share",
    ),
    Setting(
        "group.share.heartbeat.interval.ms", "int", 5000,
        "The heartbeat interval given to the members of a share group.",
        validator=at_least(1), group="share",
    ),
    Setting(
        "group.share.min.heartbeat.interval.ms", "int", 5000,
        "The minimum heartbeat interval for share group members.",
        validator=at_least(1), group="share",
    ),
    Setting(
        "group.share.max.heartbeat.interval.ms", "int", 15000,
        "The maximum heartbeat interval for share group members.",
        validator=at_least(1), group="share",
    ),
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
