"""Listener endpoints: ``NAME://host:port`` as in Kafka's ``listeners`` and ``advertised.listeners``.

Kafka's rules (SocketServerConfigs.listenerListToEndPoints): the listener name is normalised to upper
case; the host may be empty (bind to the default interface), a name, an IPv4 address or a bracketed
IPv6 address (``[::1]``); the name must have an entry in ``listener.security.protocol.map``. Port 0
is accepted and means "pick a free port" (the server reports the port it actually bound).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from .errors import ConfigError

# Kafka's SecurityProtocol ids, as UpdateMetadata and BrokerRegistration carry them.
SECURITY_PROTOCOL_IDS: dict[str, int] = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}
# The security protocols whose connections use TLS, and those that authenticate with SASL.
TLS_PROTOCOLS = frozenset({"SSL", "SASL_SSL"})
SASL_PROTOCOLS = frozenset({"SASL_PLAINTEXT", "SASL_SSL"})
SECURITY_PROTOCOL_NAMES: dict[int, str] = {v: k for k, v in SECURITY_PROTOCOL_IDS.items()}

# NAME://host:port, NAME://[v6]:port, NAME://:port. The name excludes ':' and '/' so that the
# separator is unambiguous; the host charset is Kafka's ([0-9a-zA-Z-%._:], ':' only inside brackets).
_LISTENER_RE = re.compile(
    r"(?P<name>[^:/\s]+)://(?:\[(?P<v6>[0-9a-zA-Z%._:-]*)\]|(?P<host>[0-9a-zA-Z%._-]*)):(?P<port>[0-9]+)"
)


@dataclass(frozen=True)
class Endpoint:
    """One listener: its (upper-case) name, host ("" = default interface), port and security protocol."""

    name: str
    host: str
    port: int
    security_protocol: str

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.name}://{host}:{self.port}"


def parse_listener(text: str, protocol_map: Mapping[str, str], *, setting: str = "listeners") -> Endpoint:
    """Parse ``NAME://host:port``; the protocol comes from ``protocol_map`` (keys compared in upper case).

    Raises ConfigError naming ``setting`` when the text is malformed, the port is out of range, or
    the listener name has no security protocol.
    """
    raw = text.strip()
    match = _LISTENER_RE.fullmatch(raw)
    if match is None:
        raise ConfigError(
            f"invalid value {text!r} for {setting}: expected NAME://host:port "
            "(host may be empty or a bracketed IPv6 address)",
            setting,
        )
    name = match["name"].upper()
    host = match["v6"] if match["v6"] is not None else match["host"]
    port = int(match["port"])
    if port > 65535:
        raise ConfigError(f"invalid value {text!r} for {setting}: port {port} is out of range 0..65535",
                          setting)
    protocols = {key.upper(): value.upper() for key, value in protocol_map.items()}
    protocol = protocols.get(name)
    if protocol is None:
        raise ConfigError(
            f"invalid value {text!r} for {setting}: no security protocol defined for listener {name} "
            "in listener.security.protocol.map",
            setting,
        )
    return Endpoint(name=name, host=host, port=port, security_protocol=protocol)
