"""Replication's settings (Kafka's ReplicationConfigs: replica.*) as rows of the broker's settings
table (``REPLICATION_SETTINGS``) and their typed view ``ReplicationSettings``, which the broker's
configuration fills (``BrokerConfig.replication_settings``)."""

from __future__ import annotations

from dataclasses import dataclass

from kafkalite.clients.security import PLAINTEXT, ClientSecurity
from kafkalite.common.config_def import Setting, at_least, fields_from

# Kafka's QuotaConfig.QUOTA_BYTES_PER_SECOND_DEFAULT (Long.MAX_VALUE): no throttle.
UNLIMITED_RATE = 2**63 - 1

REPLICATION_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "num.replica.fetchers", "int", 1,
        "Number of fetcher threads used to replicate records from each source broker. The total "
        "number of fetchers on each broker is bound by num.replica.fetchers multiplied by the number "
        "of brokers in the cluster.",
        validator=at_least(1), group="replication",
    ),
    Setting(
        "replica.fetch.max.bytes", "int", 1048576,
        "The number of bytes of messages to attempt to fetch for each partition. This is not an "
        "absolute maximum: if the first record batch in the first non-empty partition of the fetch "
        "is larger than this value, the record batch will still be returned to ensure that progress "
        "can be made.",
        validator=at_least(0), group="replication",
    ),
    Setting(
        "replica.fetch.response.max.bytes", "int", 10485760,
        "Maximum bytes expected for the entire fetch response. Records are fetched in batches, and "
        "if the first record batch in the first non-empty partition of the fetch is larger than this "
        "value, the record batch will still be returned to ensure that progress can be made.",
        validator=at_least(0), group="replication",
    ),
    Setting(
        "replica.fetch.min.bytes", "int", 1,
        "Minimum bytes expected for each fetch response. If not enough bytes, wait up to "
        "replica.fetch.wait.max.ms.",
        group="replication",
    ),
    Setting(
        "replica.fetch.wait.max.ms", "int", 500,
        "The maximum wait time for each fetcher request issued by follower replicas. This value "
        "should always be less than the replica.lag.time.max.ms at all times to prevent frequent "
        "shrinking of ISR for low throughput topics.",
        group="replication",
    ),
    Setting(
        "replica.fetch.backoff.ms", "int", 1000,
        "The amount of time to sleep when fetch partition error occurs.",
        validator=at_least(0), group="replication",
    ),
    Setting(
        "replica.lag.time.max.ms", "long", 30000,
        "If a follower hasn't sent any fetch requests or hasn't consumed up to the leader's log end "
        "offset for at least this time, the leader will remove the follower from the ISR.",
        group="replication",
    ),
    Setting(
        "replica.socket.timeout.ms", "int", 30000,
        "The socket timeout for network requests. Its value should be at least "
        "replica.fetch.wait.max.ms.",
        group="replication",
    ),
    Setting(
        "replica.socket.receive.buffer.bytes", "int", 65536,
        "The socket receive buffer for network requests to the leader for replicating data.",
        group="replication",
    ),
    # Replication throttles (Kafka's QuotaConfig.brokerQuotaConfigs, dynamic broker configs; here
    # also taken from the broker's configuration, which Kafka ignores for them).
    Setting(
        "leader.replication.throttled.rate", "long", UNLIMITED_RATE,
        "A long representing the upper bound (bytes/sec) on replication traffic for leaders enumerated "
        "in the property leader.replication.throttled.replicas (for each topic). This property can be "
        "only set dynamically. It is suggested that the limit be kept above 1MB/s for accurate "
        "behaviour.",
        validator=at_least(0), group="replication", update_mode="cluster-wide",
    ),
    Setting(
        "follower.replication.throttled.rate", "long", UNLIMITED_RATE,
        "A long representing the upper bound (bytes/sec) on replication traffic for followers "
        "enumerated in the property follower.replication.throttled.replicas (for each topic). This "
        "property can be only set dynamically. It is suggested that the limit be kept above 1MB/s "
        "for accurate behaviour.",
        validator=at_least(0), group="replication", update_mode="cluster-wide",
    ),
    Setting(
        "replication.quota.window.num", "int", 11,
        "The number of samples to retain in memory for replication quotas.",
        validator=at_least(1), group="replication",
    ),
    Setting(
        "replication.quota.window.size.seconds", "int", 1,
        "The time span of each sample for replication quotas.",
        validator=at_least(1), group="replication",
    ),
    Setting(
        "replica.alter.log.dirs.io.max.bytes.per.second", "long", UNLIMITED_RATE,
        "A long representing the upper bound (bytes/sec) on disk IO used for moving replica between "
        "log directories on the same broker. It is suggested that the limit be kept above 1MB/s for "
        "accurate behaviour.",
        validator=at_least(1), group="replication", update_mode="cluster-wide",
    ),
)

_field = fields_from(REPLICATION_SETTINGS)


@dataclass(frozen=True)
class ReplicationSettings:
    """The ``replica.*`` settings the replica manager and its fetchers act on."""

    num_replica_fetchers: int = _field("num.replica.fetchers")
    fetch_max_bytes: int = _field("replica.fetch.max.bytes")  # per partition
    fetch_response_max_bytes: int = _field("replica.fetch.response.max.bytes")
    fetch_min_bytes: int = _field("replica.fetch.min.bytes")
    fetch_wait_max_ms: int = _field("replica.fetch.wait.max.ms")
    fetch_backoff_ms: int = _field("replica.fetch.backoff.ms")
    lag_time_max_ms: int = _field("replica.lag.time.max.ms")
    socket_timeout_ms: int = _field("replica.socket.timeout.ms")
    leader_throttled_rate: int = _field("leader.replication.throttled.rate")
    follower_throttled_rate: int = _field("follower.replication.throttled.rate")
    quota_window_num: int = _field("replication.quota.window.num")
    quota_window_size_seconds: int = _field("replication.quota.window.size.seconds")
    # The ReplicaAlterLogDirsThread's copy rate (AlterReplicaLogDirs); changed live.
    alter_log_dirs_io_max_bytes_per_second: int = _field("replica.alter.log.dirs.io.max.bytes.per.second")
    # How the fetchers connect to the leaders' inter-broker listener (BrokerConfig.inter_broker_security).
    inter_broker_security: ClientSecurity = PLAINTEXT
