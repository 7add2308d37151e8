"""The group coordinator's settings that bound a group's configs (Kafka's GroupConfig.validate
reads them): group.consumer.* and group.share.* session timeouts and heartbeat intervals, the
share groups' record lock durations, and group.streams.*. They are rows of the broker's settings
table (the coordinator's and share-partitions' tables include them) kept here, below the
controller, because the controller checks a GROUP config resource against their values too."""

from __future__ import annotations

from kafkalite.common.config_def import Setting, at_least

CONSUMER_GROUP_BOUNDS: tuple[Setting, ...] = (
    Setting(
        "group.consumer.session.timeout.ms", "int", 45000,
        "The timeout to detect client failures when using the consumer group protocol.",
        validator=at_least(1), group="group",
    ),
    Setting(
        "group.consumer.min.session.timeout.ms", "int", 45000,
        "The minimum allowed session timeout for registered consumers.",
        validator=at_least(1), group="group",
    ),
    Setting(
        "group.consumer.max.session.timeout.ms", "int", 60000,
        "The maximum allowed session timeout for registered consumers.",
        validator=at_least(1), group="group",
    ),
    Setting(
        "group.consumer.heartbeat.interval.ms", "int", 5000,
        "The heartbeat interval given to the members of a consumer group.",
        validator=at_least(1), group="group",
    ),
    Setting(
        "group.consumer.min.heartbeat.interval.ms", "int", 5000,
        "The minimum heartbeat interval for registered consumers.",
        validator=at_least(1), group="group",
    ),
    Setting(
        "group.consumer.max.heartbeat.interval.ms", "int", 15000,
        "The maximum heartbeat interval for registered consumers.",
        validator=at_least(1), group="group",
    ),
)

SHARE_GROUP_BOUNDS: tuple[Setting, ...] = (
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
)

RECORD_LOCK_BOUNDS: tuple[Setting, ...] = (
    Setting(
        "group.share.record.lock.duration.ms", "int", 30000,
        "The record acquisition lock duration in milliseconds for share groups: a record a "
        "consumer acquired and did not acknowledge in this time becomes available again.",
        validator=at_least(1000), group="share",
    ),
    Setting(
        "group.share.min.record.lock.duration.ms", "int", 15000,
        "The record acquisition lock minimum duration in milliseconds for share groups.",
        validator=at_least(1000), group="share",
    ),
    Setting(
        "group.share.max.record.lock.duration.ms", "int", 60000,
        "The record acquisition lock maximum duration in milliseconds for share groups.",
        validator=at_least(1000), group="share",
    ),
)

STREAMS_GROUP_BOUNDS: tuple[Setting, ...] = (
    Setting(
        "group.streams.session.timeout.ms", "int", 45000,
        "The timeout to detect client failures when using the streams group protocol."
        " (kafkalite serves no streams groups: it bounds their group configs only).",
        validator=at_least(0), group="group",
    ),
    Setting(
        "group.streams.min.session.timeout.ms", "int", 45000,
        "The minimum allowed session timeout for registered streams consumers."
        " (kafkalite serves no streams groups: it bounds their group configs only).",
        validator=at_least(0), group="group",
    ),
    Setting(
        "group.streams.max.session.timeout.ms", "int", 60000,
        "The maximum allowed session timeout for registered streams consumers."
        " (kafkalite serves no streams groups: it bounds their group configs only).",
        validator=at_least(0), group="group",
    ),
    Setting(
        "group.streams.heartbeat.interval.ms", "int", 5000,
        "The heartbeat interval given to the members of a streams group."
        " (kafkalite serves no streams groups: it bounds their group configs only).",
        validator=at_least(0), group="group",
    ),
    Setting(
        "group.streams.min.heartbeat.interval.ms", "int", 5000,
        "The minimum heartbeat interval for registered streams consumers."
        " (kafkalite serves no streams groups: it bounds their group configs only).",
        validator=at_least(0), group="group",
    ),
    Setting(
        "group.streams.max.heartbeat.interval.ms", "int", 15000,
        "The maximum heartbeat interval for registered streams consumers."
        " (kafkalite serves no streams groups: it bounds their group configs only).",
        validator=at_least(0), group="group",
    ),
    Setting(
        "group.streams.num.standby.replicas", "int", 0,
        "The number of standby replicas for each task."
        " (kafkalite serves no streams groups: it bounds their group configs only).",
        validator=at_least(0), group="group",
    ),
    Setting(
        "group.streams.max.standby.replicas", "int", 2,
        "The maximum allowed value for the group-level configuration of streams.num.standby.replicas."
        " (kafkalite serves no streams groups: it bounds their group configs only).",
        validator=at_least(0), group="group",
    ),
)

GROUP_CONFIG_BOUNDS: tuple[Setting, ...] = (
    CONSUMER_GROUP_BOUNDS + SHARE_GROUP_BOUNDS + RECORD_LOCK_BOUNDS + STREAMS_GROUP_BOUNDS)
