"""What the SocketServer is configured with: Kafka's listener, socket-server, quota, SSL and SASL
settings (``NETWORK_SETTINGS``, the network's rows of the broker's settings table) and their typed
views, which the broker's configuration fills (``BrokerConfig.socket_server_settings``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kafkalite.common.config_def import Setting, Validator, at_least, each_value, fields_from, one_of
from kafkalite.common.endpoints import SECURITY_PROTOCOL_IDS, Endpoint

SECURITY_PROTOCOLS = tuple(SECURITY_PROTOCOL_IDS)


class _ProtocolMap(Validator):
    def check(self, value: Any) -> str | None:
        seen: set[str] = set()
        for name, protocol in value.items():
            if name.upper() in seen:
                return f"listener name {name.upper()} appears more than once"
            seen.add(name.upper())
            if protocol.upper() not in SECURITY_PROTOCOLS:
                return f"unknown security protocol {protocol!r} for listener {name}"
        return None

    def describe(self) -> str:
        return "NAME:PROTOCOL entries, PROTOCOL one of " + ", ".join(SECURITY_PROTOCOLS)


NETWORK_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "listeners", "list", ["PLAINTEXT://:9092"],
        "Comma-separated list of URIs (NAME://host:port) we will listen on and their listener names; "
        "an empty host binds to the default interface, 0.0.0.0 to all interfaces, and port 0 to a free port.",
        group="network",
    ),
    Setting(
        "advertised.listeners", "list", None,
        "The listener addresses advertised to clients and other brokers if they differ from listeners, "
        "which is used when this is unset; kafkalite advertises an empty host (or 0.0.0.0) as 127.0.0.1 "
        "where Kafka uses the machine's hostname.",
        group="network",
    ),
    Setting(
        "listener.security.protocol.map", "map",
        {"PLAINTEXT": "PLAINTEXT", "SSL": "SSL", "SASL_PLAINTEXT": "SASL_PLAINTEXT", "SASL_SSL": "SASL_SSL"},
        "Map between listener names and security protocols, as NAME:PROTOCOL entries separated by commas; "
        "the inter-broker and control plane listeners must be PLAINTEXT in kafkalite.",
        validator=_ProtocolMap(), group="network",
    ),
    Setting(
        "inter.broker.listener.name", "string", None,
        "Name of the listener used for communication between brokers; if unset, kafkalite uses the "
        "listener named PLAINTEXT if there is one, else the first listener (Kafka: the listener for "
        "security.inter.broker.protocol, PLAINTEXT).",
        group="network",
    ),
    Setting(
        "control.plane.listener.name", "string", None,
        "Name of the listener used for communication between the controller and brokers; if unset, "
        "controller requests share the inter-broker listener.",
        group="network",
    ),
    Setting(
        "num.network.threads", "int", 3,
        "The number of threads that the server uses for receiving requests from the network and sending "
        "responses to the network, per listener (except the control plane listener).",
        validator=at_least(1), group="network", update_mode="cluster-wide",
    ),
    Setting(
        "queued.max.requests", "int", 500,
        "The number of queued requests allowed for data-plane, before blocking the network threads.",
        validator=at_least(1), group="network",
    ),
    Setting(
        "queued.max.request.bytes", "long", -1,
        "The number of queued bytes allowed before no more requests are read (-1 for no limit). "
        "Counted from a request's size being read until it is parsed; while none are left the data "
        "plane's Processors read nothing new, and the pool can go over by one request per Processor.",
        group="network",
    ),
    Setting(
        "socket.send.buffer.bytes", "int", 102400,
        "The SO_SNDBUF buffer of the socket server sockets; if the value is -1, the OS default will be used.",
        group="network",
    ),
    Setting(
        "socket.receive.buffer.bytes", "int", 102400,
        "The SO_RCVBUF buffer of the socket server sockets; if the value is -1, the OS default will be used.",
        group="network",
    ),
    Setting(
        "socket.request.max.bytes", "int", 104857600,
        "The maximum number of bytes in a socket request.",
        validator=at_least(1), group="network",
    ),
    Setting(
        "socket.listen.backlog.size", "int", 50,
        "The maximum number of pending connections on the socket.",
        validator=at_least(1), group="network",
    ),
    Setting(
        "connections.max.idle.ms", "long", 600000,
        "Idle connections timeout: the server socket processor threads close the connections that idle "
        "more than this.",
        group="network",
    ),
    Setting(
        "max.connections", "int", 2147483647,
        "The maximum number of connections we allow in the broker at any time, in addition to any per-ip "
        "limits configured using max.connections.per.ip.",
        validator=at_least(0), group="network", update_mode="cluster-wide",
    ),
    Setting(
        "max.connections.per.ip", "int", 2147483647,
        "The maximum number of connections we allow from each ip address (0 only if "
        "max.connections.per.ip.overrides is set); new connections from the ip are dropped at the limit.",
        validator=at_least(0), group="network", update_mode="cluster-wide",
    ),
    Setting(
        "max.connections.per.ip.overrides", "map", {},
        "A comma-separated list of per-ip or hostname overrides to the default maximum number of "
        "connections, for example hostName:100,127.0.0.1:200.",
        validator=each_value(at_least(0)), group="network", item_type="int",
        update_mode="cluster-wide",
    ),
    # --- security -------------------------------------------------------------------------------
    Setting(
        "ssl.keystore.type", "string", "PEM",
        "The file format of the key store; kafkalite reads PEM only (Kafka's default is JKS).",
        validator=one_of("PEM"), group="security", update_mode="per-broker",
    ),
    Setting(
        "ssl.keystore.location", "string", None,
        "The PEM file holding the private key and the certificate chain of SSL and SASL_SSL "
        "listeners (or set ssl.keystore.key and ssl.keystore.certificate.chain).",
        group="security", update_mode="per-broker",
    ),
    Setting(
        "ssl.keystore.certificate.chain", "password", None,
        "The certificate chain in PEM format, in place of ssl.keystore.location.",
        group="security", update_mode="per-broker",
    ),
    Setting(
        "ssl.keystore.key", "password", None,
        "The private key in PEM format, in place of ssl.keystore.location; encrypted keys need "
        "ssl.key.password.",
        group="security", update_mode="per-broker",
    ),
    Setting(
        "ssl.key.password", "password", None,
        "The password of the private key in the key store; unset for an unencrypted key.",
        group="security", update_mode="per-broker",
    ),
    Setting(
        "ssl.truststore.type", "string", "PEM",
        "The file format of the trust store; kafkalite reads PEM only (Kafka's default is JKS).",
        validator=one_of("PEM"), group="security", update_mode="per-broker",
    ),
    Setting(
        "ssl.truststore.location", "string", None,
        "The PEM file of the certificates trusted to sign client certificates (for ssl.client.auth).",
        group="security", update_mode="per-broker",
    ),
    Setting(
        "ssl.truststore.certificates", "password", None,
        "Trusted certificates in PEM format, in place of ssl.truststore.location.",
        group="security", update_mode="per-broker",
    ),
    Setting(
        "ssl.client.auth", "string", "none",
        "Whether SSL listeners ask clients for a certificate: required (a client without a trusted "
        "one is refused in the handshake), requested (checked if sent) or none.",
        validator=one_of("required", "requested", "none"), group="security", update_mode="per-broker",
    ),
    Setting(
        "ssl.enabled.protocols", "list", ["TLSv1.2", "TLSv1.3"],
        "The TLS versions enabled for SSL connections.",
        validator=one_of("TLSv1.2", "TLSv1.3"), group="security", update_mode="per-broker",
    ),
    Setting(
        "ssl.allow.dn.changes", "bool", False,
        "Indicates whether changes to the certificate distinguished name should be allowed during a "
        "dynamic reconfiguration of certificates or not.",
        group="security",
    ),
    Setting(
        "ssl.allow.san.changes", "bool", False,
        "Indicates whether changes to the certificate subject alternative names should be allowed "
        "during a dynamic reconfiguration of certificates or not.",
        group="security",
    ),
    Setting(
        "sasl.enabled.mechanisms", "list", ["PLAIN"],
        "The SASL mechanisms enabled on SASL_PLAINTEXT and SASL_SSL listeners (also per listener: "
        "listener.name.<listener>.sasl.enabled.mechanisms); kafkalite supports PLAIN, "
        "SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER with Kafka's unsecured JWS validator "
        "(Kafka's default is GSSAPI).",
        validator=one_of("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"), group="security",
        update_mode="per-broker",
    ),
    Setting(
        "connections.max.reauth.ms", "long", 0,
        "When explicitly set to a positive number (the default is 0, not a positive number), a "
        "session lifetime that will not exceed the configured value will be communicated to v2.2.0 "
        "or later clients when they authenticate. The broker will disconnect any such connection "
        "that is not re-authenticated within the session lifetime and that is then subsequently "
        "used for any purpose other than re-authentication. Also per listener: "
        "listener.name.<listener>.connections.max.reauth.ms.",
        validator=at_least(0), group="security",
    ),
    Setting(
        "principal.builder.class", "string",
        "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder",
        "The class that builds a connection's principal; kafkalite has Kafka's default only "
        "(DefaultKafkaPrincipalBuilder: User:ANONYMOUS on PLAINTEXT, the SASL user or token "
        "principal, a TLS client certificate's subject mapped by ssl.principal.mapping.rules).",
        validator=one_of("org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder"),
        group="security",
    ),
    Setting(
        "ssl.principal.mapping.rules", "string", "DEFAULT",
        "A list of rules for mapping from distinguished name from the client certificate to short "
        "name. The rules are evaluated in order and the first rule that matches a principal name is "
        "used to map it to a short name. Any later rules in the list are ignored. By default, "
        "distinguished name of the X.500 certificate will be the principal. Each rule is "
        "RULE:pattern/replacement/[LU], or DEFAULT.",
        group="security",
    ),
    Setting(
        "sasl.plain.users.file", "string", None,
        "The users of SASL/PLAIN: a file of username=password lines (# starts a comment), read at "
        "startup; Kafka takes them from the listener's JAAS config (user_NAME=\"PASSWORD\").",
        group="security", kafka=False,
    ),
    Setting(
        "connection.failed.authentication.delay.ms", "int", 100,
        "Connection close delay on failed authentication: the time (in milliseconds) by which the "
        "answer to a failed authentication, and the close that follows, is delayed.",
        validator=at_least(0), group="security",
    ),
)

_field = fields_from(NETWORK_SETTINGS)


@dataclass(frozen=True)
class TlsSettings:
    """ssl.* (Kafka's names with dots as underscores); PEM stores only."""

    enabled_protocols: tuple[str, ...] = _field("ssl.enabled.protocols", tuple)
    key_password: str | None = _field("ssl.key.password")
    keystore_location: str | None = _field("ssl.keystore.location")
    keystore_certificate_chain: str | None = _field("ssl.keystore.certificate.chain")
    keystore_key: str | None = _field("ssl.keystore.key")
    client_auth: str = _field("ssl.client.auth")
    truststore_location: str | None = _field("ssl.truststore.location")
    truststore_certificates: str | None = _field("ssl.truststore.certificates")


@dataclass(frozen=True)
class SocketServerSettings:
    """The listeners as the broker's configuration resolved them, and the socket server's settings."""

    node_id: int
    listeners: tuple[Endpoint, ...]
    inter_broker_listener_name: str
    privileged_listener_name: str
    control_plane_listener_name: str | None
    num_network_threads: int = _field("num.network.threads")
    queued_max_requests: int = _field("queued.max.requests")
    queued_max_request_bytes: int = _field("queued.max.request.bytes")
    socket_send_buffer_bytes: int = _field("socket.send.buffer.bytes")
    socket_receive_buffer_bytes: int = _field("socket.receive.buffer.bytes")
    socket_request_max_bytes: int = _field("socket.request.max.bytes")
    socket_listen_backlog_size: int = _field("socket.listen.backlog.size")
    connections_max_idle_ms: int = _field("connections.max.idle.ms")
    max_connections: int = _field("max.connections")
    max_connections_per_ip: int = _field("max.connections.per.ip")
    max_connections_per_ip_overrides: Mapping[str, int] = _field("max.connections.per.ip.overrides")
    sasl_enabled_mechanisms: tuple[str, ...] = _field("sasl.enabled.mechanisms", tuple)
    sasl_plain_users_file: str | None = _field("sasl.plain.users.file")
    connections_max_reauth_ms: int = _field("connections.max.reauth.ms")
    ssl_principal_mapping_rules: str = _field("ssl.principal.mapping.rules")
    # listener.name.<listener>.<setting> given statically (sasl.enabled.mechanisms,
    # connections.max.reauth.ms), parsed.
    listener_overrides: Mapping[str, Any] = field(default_factory=dict)
    failed_authentication_delay_ms: int = _field("connection.failed.authentication.delay.ms")
    tls: TlsSettings = field(default_factory=TlsSettings)
