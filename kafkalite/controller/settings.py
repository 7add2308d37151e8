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
        if len(value) > 1:
            return ("kafkalite runs one controller, not a quorum: name one voter (the node that runs "
                    "the controller)")
        return None

    def describe(self) -> str:
        return "at most one id@host:port entry"


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
        "{id}@{host}:{port} entries; kafkalite runs one controller, so at most one voter: this node "
        "runs it if the id is its node.id, and every node registers with it at host:port.",
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
    # metadata.log.max.record.bytes.between.snapshots (Kafka's default; helper D adds the setting row).
    metadata_log_max_record_bytes_between_snapshots: int = 20971520
