"""The controller's settings: where it is (controller.quorum.*, controller.listener.names), the
brokers' leases with it, and how it creates topics and elects leaders (``CONTROLLER_SETTINGS``,
rows of the broker's settings table), and their typed view ``ControllerSettings``, which the
broker's configuration fills (``BrokerConfig.controller_settings``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kafkalite.clients.security import PLAINTEXT, ClientSecurity
from kafkalite.common.config_def import Setting, Validator, at_least, fields_from
from kafkalite.common.metadata_version import is_metadata_version
from kafkalite.storage.config import STORAGE_SETTINGS


class _HostPorts(Validator):
    def check(self, value: Any) -> str | None:
        for entry in value:
            host, sep, port = entry.rpartition(":")
            host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
            if not sep or not host or not port.isascii() or not port.isdigit() or int(port) > 65535:
                return f"{entry!r} is not host:port"
        return None

    def describe(self) -> str:
        return "host:port entries"


_VOTER_RE = re.compile(r"(?P<id>[0-9]+)@(?P<host>\[[0-9a-fA-F:.%]+\]|[^:@\[\]]+):(?P<port>[0-9]+)")


def parse_voter(entry: str) -> tuple[int, str, int]:
    """``1@host:port`` -> (1, host, port); ValueError if it is not one."""
    m = _VOTER_RE.fullmatch(entry)
    if not m or int(m["port"]) > 65535:
        raise ValueError(f"{entry!r} is not id@host:port")
    return int(m["id"]), m["host"].strip("[]"), int(m["port"])


class _Voters(Validator):
    def check(self, value: Any) -> str | None:
        for entry in value:
            try:
                parse_voter(entry)
            except ValueError as e:
                return str(e)
        ids = [parse_voter(e)[0] for e in value]
        if len(set(ids)) != len(ids):
            return "a voter id appears more than once"
        return None

    def describe(self) -> str:
        return "id@host:port entries, one per voter"


class _MetadataVersion(Validator):
    def check(self, value: Any) -> str | None:
        if value is None or is_metadata_version(value):
            return None
        return "not a Kafka metadata version (for example 3.9 or 3.9-IV0)"

    def describe(self) -> str:
        return "a Kafka metadata version, 0.8.0 to 3.9 (e.g. 3.9, 3.9-IV0)"


CONTROLLER_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "controller.quorum.bootstrap.servers", "list", [],
        "List of endpoints to use for bootstrapping the cluster metadata, as comma-separated "
        "host:port entries.",
        validator=_HostPorts(), group="controller",
    ),
    Setting(
        "controller.quorum.voters", "list", [],
        "Map of id/endpoint information for the set of voters in a comma-separated list of "
        "{id}@{host}:{port} entries. For example: 1@localhost:9092,2@localhost:9093,3@localhost:9094. "
        "The voters form the controller quorum (KRaft): the node whose node.id is listed runs a "
        "controller, the quorum's leader is the active one, and every broker registers with it.",
        validator=_Voters(), group="controller",
    ),
    Setting(
        "controller.listener.names", "list", [],
        "A comma-separated list of the names of the listeners used by the controller; on a node that "
        "runs the controller they serve broker registration and heartbeats and are not advertised "
        "to clients. A broker connects to the controller with the security protocol of the first of them "
        "(and sasl.mechanism.controller.protocol); unset, with that of its privileged listener.",
        group="controller",
    ),
    Setting(
        "controller.quorum.election.timeout.ms", "int", 1000,
        "Maximum time in milliseconds to wait without being able to fetch from the leader before "
        "triggering a new election.",
        group="controller",
    ),
    Setting(
        "controller.quorum.fetch.timeout.ms", "int", 2000,
        "Maximum time without a successful fetch from the current leader before becoming a "
        "candidate and triggering an election for voters; Maximum time a leader can go without "
        "receiving valid fetch or fetchSnapshot request from a majority of the quorum before resigning.",
        group="controller",
    ),
    Setting(
        "controller.quorum.election.backoff.max.ms", "int", 1000,
        "Maximum time in milliseconds before starting new elections. This is used in the binary "
        "exponential backoff mechanism that helps prevent gridlocked elections.",
        group="controller",
    ),
    Setting(
        "controller.quorum.append.linger.ms", "int", 25,
        "The duration in milliseconds that the leader will wait for writes to accumulate before "
        "flushing them to disk.",
        group="controller",
    ),
    Setting(
        "controller.quorum.request.timeout.ms", "int", 2000,
        "The configuration controls the maximum amount of time the client will wait for the response "
        "of a request. If the response is not received before the timeout elapses the client will "
        "resend the request if necessary or fail the request if retries are exhausted.",
        group="controller",
    ),
    Setting(
        "controller.quorum.retry.backoff.ms", "int", 20,
        "The amount of time to wait before attempting to retry a failed request to a given topic "
        "partition. This avoids repeatedly sending requests in a tight loop under some failure "
        "scenarios.",
        group="controller",
    ),
    Setting(
        "metadata.log.dir", "string", None,
        "This configuration determines where we put the metadata log. If it is not set, the "
        "metadata log is placed in the first log directory from log.dirs.",
        group="controller",
    ),
    Setting(
        "metadata.log.max.record.bytes.between.snapshots", "long", 20971520,
        "This is the maximum number of bytes in the log between the latest snapshot and the "
        "high-watermark needed before generating a new snapshot. The default value is 20971520. To "
        "generate snapshots based on the time elapsed, see the metadata.log.max.snapshot.interval.ms "
        "configuration. The Kafka node will generate a snapshot when either the maximum time "
        "interval is reached or the maximum bytes limit is reached.",
        validator=at_least(1), group="controller",
    ),
    Setting(
        "metadata.log.max.snapshot.interval.ms", "long", 3600000,
        "This is the maximum number of milliseconds to wait to generate a snapshot if there are "
        "committed records in the log that are not included in the latest snapshot. A value of zero "
        "disables time based snapshot generation. The default value is 3600000. To generate "
        "snapshots based on the number of metadata bytes, see the "
        "metadata.log.max.record.bytes.between.snapshots configuration. The Kafka node will generate "
        "a snapshot when either the maximum time interval is reached or the maximum bytes limit is "
        "reached.",
        validator=at_least(0), group="controller",
    ),
    Setting(
        "broker.session.timeout.ms", "int", 9000,
        "The length of time in milliseconds that a broker lease lasts if no heartbeats are made.",
        group="controller",
    ),
    Setting(
        "broker.heartbeat.interval.ms", "int", 2000,
        "The length of time in milliseconds between broker heartbeats.",
        group="controller",
    ),
    Setting(
        "controller.socket.timeout.ms", "int", 30000,
        "The socket timeout for controller-to-broker channels.",
        group="replication",
    ),
    Setting(
        "inter.broker.protocol.version", "string", "3.9",
        "Specify which version of the inter-broker protocol will be used, typically bumped after all "
        "brokers were upgraded to a new version.",
        validator=_MetadataVersion(), group="replication",
    ),
    Setting(
        "num.partitions", "int", 1,
        "The default number of log partitions per topic.",
        validator=at_least(1), group="log",
    ),
    Setting(
        "default.replication.factor", "int", 1,
        "The default replication factor for automatically created topics.",
        group="replication",
    ),
    Setting(
        "auto.leader.rebalance.enable", "bool", True,
        "Enables auto leader balancing. A background thread checks the distribution of partition "
        "leaders at regular intervals, configurable by leader.imbalance.check.interval.seconds. If "
        "the leader imbalance exceeds leader.imbalance.per.broker.percentage, leader rebalance to "
        "the preferred leader for partitions is triggered.",
        group="replication",
    ),
    Setting(
        "leader.imbalance.check.interval.seconds", "long", 300,
        "The frequency with which the partition rebalance check is triggered by the controller.",
        validator=at_least(1), group="replication",
    ),
    Setting(
        "leader.imbalance.per.broker.percentage", "int", 10,
        "The ratio of leader imbalance allowed per broker. The controller would trigger a leader "
        "balance if it goes above this value per broker. The value is specified in percentage.",
        group="replication",
    ),
)

_field = fields_from(CONTROLLER_SETTINGS, STORAGE_SETTINGS)


@dataclass(frozen=True)
class ControllerSettings:
    node_id: int
    listener: str  # brokers' listener the controller sends its requests to (its privileged one)
    session_timeout_ms: int = _field("broker.session.timeout.ms")
    socket_timeout_ms: int = _field("controller.socket.timeout.ms")
    inter_broker_protocol_version: str = _field("inter.broker.protocol.version")
    num_partitions: int = _field("num.partitions")
    default_replication_factor: int = _field("default.replication.factor")
    unclean_leader_election_enable: bool = _field("unclean.leader.election.enable")  # topics may override it
    auto_leader_rebalance_enable: bool = _field("auto.leader.rebalance.enable")
    leader_imbalance_check_interval_seconds: int = _field("leader.imbalance.check.interval.seconds")
    leader_imbalance_per_broker_percentage: int = _field("leader.imbalance.per.broker.percentage")
    # Where followers find their leaders (LeaderAndIsr's live_leaders, as Kafka's controller gives
    # the inter-broker listener's endpoints); None: ``listener``.
    inter_broker_listener: str | None = None
    # How the controller connects to the brokers' privileged listener (BrokerConfig.privileged_security).
    client_security: ClientSecurity = PLAINTEXT
    # Snapshots of the metadata log (KIP-630): after this many bytes of records, or this long.
    metadata_log_max_record_bytes_between_snapshots: int = _field(
        "metadata.log.max.record.bytes.between.snapshots")
    metadata_log_max_snapshot_interval_ms: int = _field("metadata.log.max.snapshot.interval.ms")


@dataclass(frozen=True)
class QuorumSettings:
    """The controller quorum's timing (Kafka's QuorumConfig), in milliseconds; ``quorum_config_args``
    gives the keyword arguments of the RaftNode's QuorumConfig."""

    election_timeout_ms: int = _field("controller.quorum.election.timeout.ms")
    fetch_timeout_ms: int = _field("controller.quorum.fetch.timeout.ms")
    election_backoff_max_ms: int = _field("controller.quorum.election.backoff.max.ms")
    request_timeout_ms: int = _field("controller.quorum.request.timeout.ms")
    retry_backoff_ms: int = _field("controller.quorum.retry.backoff.ms")
    append_linger_ms: int = _field("controller.quorum.append.linger.ms")

    def quorum_config_args(self) -> dict[str, int]:
        return {"election_timeout_ms": self.election_timeout_ms, "fetch_timeout_ms": self.fetch_timeout_ms,
                "election_backoff_max_ms": self.election_backoff_max_ms,
                "request_timeout_ms": self.request_timeout_ms, "retry_backoff_ms": self.retry_backoff_ms}


def parse_voters(entries: list[str]) -> dict[int, tuple[str, int]]:
    """controller.quorum.voters as {id: (host, port)}, in the order given."""
    voters: dict[int, tuple[str, int]] = {}
    for entry in entries:
        node_id, host, port = parse_voter(entry)
        voters[node_id] = (host, port)
    return voters
