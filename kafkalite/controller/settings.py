"""What the controller is configured with, typed (built by the broker's configuration from
Kafka's settings: node.id, the privileged listener, broker.session.timeout.ms,
controller.socket.timeout.ms, inter.broker.protocol.version, num.partitions,
default.replication.factor, unclean.leader.election.enable and the leader.imbalance.* settings)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ControllerSettings:
    node_id: int
    listener: str  # brokers' listener the controller sends its requests to (its privileged one)
    session_timeout_ms: int = 9000
    socket_timeout_ms: int = 30000
    inter_broker_protocol_version: str = "3.9"
    num_partitions: int = 1
    default_replication_factor: int = 1
    unclean_leader_election_enable: bool = False  # topics may override it
    auto_leader_rebalance_enable: bool = True
    leader_imbalance_check_interval_seconds: int = 300
    leader_imbalance_per_broker_percentage: int = 10
