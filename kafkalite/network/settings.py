"""What the SocketServer is configured with, typed: Kafka's socket-server, quota, SSL and SASL
settings as the broker's configuration builds them (``BrokerConfig.socket_server_settings``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kafkalite.common.endpoints import Endpoint


@dataclass(frozen=True)
class TlsSettings:
    """ssl.* (Kafka's names with dots as underscores); PEM stores only."""

    enabled_protocols: tuple[str, ...] = ("TLSv1.2", "TLSv1.3")
    key_password: str | None = None
    keystore_location: str | None = None
    keystore_certificate_chain: str | None = None
    keystore_key: str | None = None
    client_auth: str = "none"
    truststore_location: str | None = None
    truststore_certificates: str | None = None


@dataclass(frozen=True)
class SocketServerSettings:
    node_id: int
    listeners: tuple[Endpoint, ...]
    inter_broker_listener_name: str
    privileged_listener_name: str
    control_plane_listener_name: str | None = None
    num_network_threads: int = 3
    queued_max_requests: int = 500
    queued_max_request_bytes: int = -1
    socket_send_buffer_bytes: int = 102400
    socket_receive_buffer_bytes: int = 102400
    socket_request_max_bytes: int = 104857600
    socket_listen_backlog_size: int = 50
    connections_max_idle_ms: int = 600000
    max_connections: int = 2147483647
    max_connections_per_ip: int = 2147483647
    max_connections_per_ip_overrides: Mapping[str, int] = field(default_factory=dict)
    sasl_enabled_mechanisms: tuple[str, ...] = ("PLAIN",)
    sasl_plain_users_file: str | None = None
    failed_authentication_delay_ms: int = 100
    tls: TlsSettings = field(default_factory=TlsSettings)
