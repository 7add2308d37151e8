"""Broker settings: one declarative table that feeds loading, validation, ``--override`` and the docs.

Every entry of ``SETTINGS`` carries Kafka's property name, type, default and meaning (from Kafka's
KafkaConfig / SocketServerConfigs / ServerConfigs / ReplicationConfigs / KRaftConfigs /
ServerLogConfigs), or is marked ``kafka=False`` when the setting exists only in kafkalite.
``docs/configuration.md`` is generated from the same table (``python -m kafkalite.server.config_docs``).

Values are parsed as Kafka parses them: text is trimmed; ``int``/``long`` are 32/64-bit signed;
``bool`` is ``true``/``false`` in any case; ``list`` is comma separated with the items trimmed and an
empty text meaning ``[]``; ``map`` is ``key:value`` entries separated by commas, split at the last
colon (so IPv6 keys work). An empty text for a string setting whose default is null means "unset".

Sources, later ones winning: the properties file, then ``extra``, then each ``--override key=value``.
A setting Kafka defines that kafkalite does not act on (``kafka_config_names``) is accepted and
listed in ``BrokerConfig.ignored``; a name neither defines is an error that suggests the closest
name. Every unknown name and invalid value of all the sources is reported in one ConfigError.
"""

from __future__ import annotations

import copy
import difflib
import os
import re
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kafkalite.common.endpoints import (
    SASL_PROTOCOLS,
    SECURITY_PROTOCOL_IDS,
    TLS_PROTOCOLS,
    Endpoint,
    parse_listener,
)
from kafkalite.common.errors import ConfigError
from kafkalite.common.metadata_version import is_metadata_version
from kafkalite.controller.settings import ControllerSettings
from kafkalite.network.settings import SocketServerSettings, TlsSettings
from kafkalite.server.coordinator.settings import GroupConfig, OffsetsTopicConfig
from kafkalite.server.kafka_config_names import (
    KAFKA_BROKER_CONFIGS,
    is_kafka_config,
    split_listener_prefix,
)
from kafkalite.server.replication.replica_fetcher import ReplicationSettings
from kafkalite.storage.cleaner import CleanerConfig
from kafkalite.storage.config import LogConfig

__all__ = [
    "GROUPS",
    "SECURITY_PROTOCOLS",
    "SETTINGS",
    "SETTINGS_BY_NAME",
    "TYPES",
    "BrokerConfig",
    "ConfigError",
    "Endpoint",
    "Setting",
    "Validator",
    "at_least",
    "between",
    "format_properties",
    "load_properties_file",
    "lookup",
    "one_of",
    "parse_properties",
]


class _Invalid(Exception):
    """Internal: why a value is invalid; turned into a ConfigError naming the setting and the value."""


# --- validators ----------------------------------------------------------------------------------


class Validator:
    """Checks a parsed value (``check`` returns the reason it is invalid, or None) and describes the
    valid values for the docs (Kafka's notation: ``[1,...]``, ``[a, b]``)."""

    def check(self, value: Any) -> str | None:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def __call__(self, value: Any) -> None:
        reason = self.check(value)
        if reason is not None:
            raise _Invalid(reason)


@dataclass(frozen=True)
class _Range(Validator):
    low: int | None
    high: int | None

    def check(self, value: Any) -> str | None:
        if value is None:
            return None
        if self.low is not None and value < self.low:
            return f"must be at least {self.low}" if self.high is None else self._between()
        if self.high is not None and value > self.high:
            return f"must be at most {self.high}" if self.low is None else self._between()
        return None

    def _between(self) -> str:
        return f"must be between {self.low} and {self.high}"

    def describe(self) -> str:
        low = "..." if self.low is None else str(self.low)
        high = "..." if self.high is None else str(self.high)
        return f"[{low},...,{high}]" if self.low is not None and self.high is not None else f"[{low},{high}]"


def at_least(low: int) -> Validator:
    """Kafka's ``Range.atLeast``: the value (or, for a map, every value) is >= ``low``."""
    return _Range(low, None)


def between(low: int, high: int) -> Validator:
    """Kafka's ``Range.between``: ``low <= value <= high``, both inclusive."""
    return _Range(low, high)


def _show(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


@dataclass(frozen=True)
class _OneOf(Validator):
    choices: tuple[Any, ...]

    def check(self, value: Any) -> str | None:
        allowed = ", ".join(_show(c) for c in self.choices)
        if isinstance(value, list):  # Kafka's ValidList.in: every item allowed, no duplicates
            for item in value:
                if item not in self.choices:
                    return f"{item!r} is not one of {allowed}"
            if len(set(value)) != len(value):
                return "duplicate entries"
            return None
        if value is None or value in self.choices:
            return None
        return f"only {allowed} is supported" if len(self.choices) == 1 else f"must be one of {allowed}"

    def describe(self) -> str:
        return "[" + ", ".join(_show(c) for c in self.choices) + "]"


def one_of(*choices: Any) -> Validator:
    """Kafka's ``ValidString.in`` / ``ValidList.in``: the value, or every item of a list, is a choice."""
    return _OneOf(tuple(choices))


@dataclass(frozen=True)
class _EachValue(Validator):
    inner: Validator

    def check(self, value: Any) -> str | None:
        for key, item in (value or {}).items():
            reason = self.inner.check(item)
            if reason is not None:
                return f"value for {key!r} {reason}"
        return None

    def describe(self) -> str:
        return "each value " + self.inner.describe()


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


_CLUSTER_ID_RE = re.compile(r"[A-Za-z0-9_-]{22}")


class _ClusterId(Validator):
    def check(self, value: Any) -> str | None:
        if value is None or _CLUSTER_ID_RE.fullmatch(value):
            return None
        return "must be 22 characters of URL-safe base64 (a Kafka UUID)"

    def describe(self) -> str:
        return "22-character base64url UUID"


# --- the settings table --------------------------------------------------------------------------

# "password" is a string that is never shown (Kafka's PASSWORD type, printed as [hidden]).
TYPES = ("int", "long", "double", "string", "password", "list", "bool", "map")
_INT_BOUNDS = {"int": (-(2**31), 2**31 - 1), "long": (-(2**63), 2**63 - 1)}
_INT_RE = re.compile(r"[+-]?[0-9]+")
_LIST_SPLIT = re.compile(r"\s*,\s*")


def _parse_double(text: str) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise _Invalid("not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise _Invalid("not a finite number")
    return value


def _parse_int(text: str, type_: str) -> int:
    text = text.strip()
    if not _INT_RE.fullmatch(text):
        raise _Invalid("not an integer")
    value = int(text)
    low, high = _INT_BOUNDS[type_]
    if not low <= value <= high:
        raise _Invalid(f"out of range for {type_} ({low}..{high})")
    return value


def _parse_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    raise _Invalid("expected true or false")


def _parse_list(text: str) -> list[str]:
    text = text.strip()
    if not text:
        return []
    items = _LIST_SPLIT.split(text)
    if any(not item for item in items):
        raise _Invalid("empty entry in comma-separated list")
    return items


@dataclass(frozen=True)
class Setting:
    """One broker setting: Kafka's name, type, default and meaning, plus a validator.

    ``default`` is the parsed (Python) value; None means "unset" (Kafka's null). ``item_type`` is the
    type of a map's values ("string" or "int"). ``kafka`` is False for kafkalite-only settings.
    """

    name: str
    type: str
    default: Any
    doc: str
    validator: Validator | None = None
    aliases: tuple[str, ...] = ()
    group: str = "server"
    kafka: bool = True
    item_type: str = "string"

    def __hash__(self) -> int:  # defaults may be lists or dicts; a setting is identified by its name
        return hash(self.name)

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"setting {self.name}: unknown type {self.type!r}")

    def parse(self, raw: object) -> Any:
        """The value for ``raw`` (text as in a properties file, or an already typed value), validated.

        Raises ConfigError naming this setting.
        """
        try:
            value = self._convert(raw)
            if self.validator is not None:
                self.validator(value)
        except _Invalid as e:
            shown = raw if isinstance(raw, str) else str(raw)
            raise ConfigError(f"invalid value {shown!r} for {self.name}: {e}", self.name) from None
        return value

    def _convert(self, raw: object) -> Any:
        if isinstance(raw, str):
            return self._parse_text(raw)
        if self.type in ("int", "long") and isinstance(raw, int) and not isinstance(raw, bool):
            return _parse_int(str(raw), self.type)
        if self.type == "double" and isinstance(raw, int | float) and not isinstance(raw, bool):
            return _parse_double(str(raw))
        if self.type == "bool" and isinstance(raw, bool):
            return raw
        if self.type == "list" and isinstance(raw, list | tuple) and all(isinstance(i, str) for i in raw):
            return _parse_list(",".join(raw))
        if self.type == "map" and isinstance(raw, Mapping):
            return self._parse_text(self.render(dict(raw)))
        raise _Invalid(f"expected a value of type {self.type}, got {type(raw).__name__}")

    def _parse_text(self, text: str) -> Any:
        if self.type in ("int", "long"):
            return _parse_int(text, self.type)
        if self.type == "double":
            return _parse_double(text)
        if self.type == "bool":
            return _parse_bool(text)
        if self.type == "list":
            return _parse_list(text)
        if self.type == "map":
            return self._parse_map(text)
        text = text.strip()
        return None if text == "" and self.default is None else text

    def _parse_map(self, text: str) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for entry in _parse_list(text):
            key, sep, value = entry.rpartition(":")
            key, value = key.strip(), value.strip()
            if not sep or not key or not value:
                raise _Invalid(f"entry {entry!r} is not key:value")
            if key in result:
                raise _Invalid(f"key {key!r} appears more than once")
            if self.item_type == "int":
                try:
                    result[key] = _parse_int(value, "int")
                except _Invalid as e:
                    raise _Invalid(f"value {value!r} for {key!r}: {e}") from None
            else:
                result[key] = value
        return result

    def render(self, value: Any) -> str:
        """``value`` as text in a properties file (the inverse of ``parse``); None renders as ""."""
        if value is None:
            return ""
        if self.type == "bool":
            return "true" if value else "false"
        if self.type == "list":
            return ",".join(value)
        if self.type == "map":
            return ",".join(f"{k}:{v}" for k, v in value.items())
        return str(value)

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


SETTINGS: tuple[Setting, ...] = (
    # --- server ---------------------------------------------------------------------------------
    Setting(
        "node.id", "int", -1,
        "The node ID associated with the roles this process is playing; kafkalite requires it "
        "(a value >= 0) and accepts broker.id as an alias.",
        aliases=("broker.id",), group="server",
    ),
    Setting(
        "process.roles", "list", ["broker", "controller"],
        "The roles that this process plays: broker, controller, or broker,controller if it is both. "
        "Kafka requires it; kafkalite, when it is not set, runs broker,controller if "
        "controller.quorum.bootstrap.servers and controller.quorum.voters are empty or name this "
        "node, and broker alone if they name another node (one controller per cluster; see "
        "'Starting brokers by hand').",
        validator=one_of("broker", "controller"), group="server",
    ),
    Setting(
        "num.io.threads", "int", 8,
        "The number of threads that the server uses for processing requests, which may include disk I/O.",
        validator=at_least(1), group="server",
    ),
    Setting(
        "broker.rack", "string", None,
        "Rack of the broker, used in rack aware replication assignment for fault tolerance "
        "(for example RACK1 or us-east-1d).",
        group="server",
    ),
    Setting(
        "delete.topic.enable", "bool", True,
        "Enables delete topic; deleting a topic through the admin tool has no effect if this is turned off.",
        group="server",
    ),
    Setting(
        "cluster.id", "string", None,
        "The cluster ID, a Kafka UUID; if unset, one is generated once and kept in meta.properties "
        "under the first log directory.",
        validator=_ClusterId(), group="server", kafka=False,
    ),
    Setting(
        "metrics.port", "int", -1,
        "TCP port of the Prometheus metrics HTTP endpoint; -1 turns it off and 0 picks a free port.",
        validator=between(-1, 65535), group="server", kafka=False,
    ),
    Setting(
        "metrics.host", "string", "127.0.0.1",
        "Address the Prometheus metrics HTTP endpoint binds to.",
        group="server", kafka=False,
    ),
    Setting(
        "threads.sched.batch", "bool", True,
        "Run the broker's threads under Linux's SCHED_BATCH policy (ignored elsewhere). A woken "
        "thread then does not preempt the running one: a request handler woken by a Processor "
        "waits until the Processor blocks and lets go of Python's lock, instead of preempting it "
        "only to wait for that lock (measured: 3 context switches a request instead of 10).",
        group="server", kafka=False,
    ),
    Setting(
        "request.log.dir", "string", None,
        "Directory where the broker writes its request log; if unset, no request log is written.",
        group="server", kafka=False,
    ),
    Setting(
        "request.log.segment.bytes", "int", 104857600,
        "Size at which a request log file is closed and a new one started.",
        validator=at_least(1024), group="server", kafka=False,
    ),
    Setting(
        "request.log.roll.ms", "long", 3600000,
        "Age at which a request log file is closed and a new one started.",
        validator=at_least(1), group="server", kafka=False,
    ),
    # --- network --------------------------------------------------------------------------------
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
        validator=at_least(1), group="network",
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
        validator=at_least(0), group="network",
    ),
    Setting(
        "max.connections.per.ip", "int", 2147483647,
        "The maximum number of connections we allow from each ip address (0 only if "
        "max.connections.per.ip.overrides is set); new connections from the ip are dropped at the limit.",
        validator=at_least(0), group="network",
    ),
    Setting(
        "max.connections.per.ip.overrides", "map", {},
        "A comma-separated list of per-ip or hostname overrides to the default maximum number of "
        "connections, for example hostName:100,127.0.0.1:200.",
        validator=_EachValue(at_least(0)), group="network", item_type="int",
    ),
    # --- controller (KRaft) ----------------------------------------------------------------------
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
        "to clients. They must be PLAINTEXT in kafkalite.",
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
    # --- replication ----------------------------------------------------------------------------
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
        "default.replication.factor", "int", 1,
        "The default replication factor for automatically created topics.",
        group="replication",
    ),
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
        "offsets.topic.num.partitions", "int", 50,
        "The number of partitions for the offset commit topic (should not change after deployment).",
        validator=at_least(1), group="group",
    ),
    Setting(
        "offsets.topic.replication.factor", "int", 3,
        "The replication factor for the offsets topic; kafkalite takes fewer when fewer brokers are "
        "registered (Kafka refuses to create it until enough are).",
        validator=at_least(1), group="group",
    ),
    Setting(
        "offsets.topic.segment.bytes", "int", 104857600,
        "The offsets topic segment bytes should be kept relatively small in order to facilitate faster "
        "log compaction and cache loads.",
        validator=at_least(1), group="group",
    ),
    Setting(
        "offsets.commit.timeout.ms", "int", 5000,
        "Offset commit will be delayed until all replicas for the offsets topic receive the commit or "
        "this timeout is reached.",
        validator=at_least(1), group="group",
    ),
    Setting(
        "offsets.retention.minutes", "int", 10080,
        "For subscribed consumers, committed offset of a specific partition will be expired and "
        "discarded after this period of time has elapsed after the consumer group loses all its "
        "consumers (becomes empty); for standalone consumers (assigned partitions) after the commit.",
        validator=at_least(1), group="group",
    ),
    Setting(
        "offsets.retention.check.interval.ms", "long", 600000,
        "Frequency at which to check for stale offsets.",
        validator=at_least(1), group="group",
    ),
    Setting(
        "group.initial.rebalance.delay.ms", "int", 3000,
        "The amount of time the group coordinator will wait for more consumers to join a new group "
        "before performing the first rebalance (`kafkalite cluster` sets 0).",
        validator=at_least(0), group="group",
    ),
    Setting(
        "group.min.session.timeout.ms", "int", 6000,
        "The minimum allowed session timeout for registered consumers.",
        group="group",
    ),
    Setting(
        "group.max.session.timeout.ms", "int", 1800000,
        "The maximum allowed session timeout for registered consumers.",
        group="group",
    ),
    Setting(
        "group.max.size", "int", 2147483647,
        "The maximum number of consumers that a single consumer group can accommodate.",
        validator=at_least(1), group="group",
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
    Setting(
        "min.insync.replicas", "int", 1,
        "When a producer sets acks to \"all\" (or \"-1\"), min.insync.replicas specifies the minimum "
        "number of replicas that must acknowledge a write for the write to be considered successful. "
        "If this minimum cannot be met, then the producer will raise an exception (either "
        "NotEnoughReplicas or NotEnoughReplicasAfterAppend). The high watermark does not advance "
        "while the ISR is smaller.",
        validator=at_least(1), group="replication",
    ),
    Setting(
        "unclean.leader.election.enable", "bool", False,
        "Indicates whether to enable replicas not in the ISR set to be elected as leader as a last "
        "resort, even though doing so may result in data loss.",
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
    Setting(
        "controlled.shutdown.enable", "bool", True,
        "Enable controlled shutdown of the server: a broker stopped gracefully first asks the "
        "controller to move the leadership of its partitions to other replicas.",
        group="replication",
    ),
    # --- log ------------------------------------------------------------------------------------
    Setting(
        "log.dirs", "list", None,
        "A comma-separated list of the directories where the log data is stored; if not set, the value "
        "in log.dir is used.",
        group="log",
    ),
    Setting(
        "log.dir", "string", "/tmp/kafka-logs",
        "The directory in which the log data is kept (supplemental for the log.dirs property).",
        group="log",
    ),
    Setting(
        "log.storage", "string", "files",
        "Where the logs are kept: files (in log.dirs) or memory (the same files, in anonymous memory "
        "files named under log.dirs, nothing on disk; gone when the process ends; a broker "
        "restarted in the same process may be given them back). With memory the controller's "
        "store is in memory too. For test clusters (kafkalite.testing, docs/storage.md).",
        validator=one_of("files", "memory"), group="log", kafka=False,
    ),
    Setting(
        "num.partitions", "int", 1,
        "The default number of log partitions per topic.",
        validator=at_least(1), group="log",
    ),
    Setting(
        "auto.create.topics.enable", "bool", True,
        "Enable auto creation of topic on the server: a Metadata request that allows it creates a "
        "topic it names, with num.partitions and default.replication.factor.",
        group="log",
    ),
    Setting(
        "message.max.bytes", "int", 1048588,
        "The largest record batch size allowed by Kafka (after compression if compression is "
        "enabled); the topic-level max.message.bytes overrides it.",
        validator=at_least(0), group="log",
    ),
    Setting(
        "log.segment.bytes", "int", 1073741824,
        "The maximum size of a single log file.",
        validator=at_least(14), group="log",
    ),
    Setting(
        "log.roll.ms", "long", None,
        "The maximum time before a new log segment is rolled out (in milliseconds). If not set, "
        "the value in log.roll.hours is used.",
        validator=at_least(1), group="log",
    ),
    Setting(
        "log.roll.hours", "int", 168,
        "The maximum time before a new log segment is rolled out (in hours), secondary to log.roll.ms.",
        validator=at_least(1), group="log",
    ),
    Setting(
        "log.roll.jitter.ms", "long", None,
        "The maximum jitter to subtract from logRollTimeMillis (in milliseconds). If not set, the "
        "value in log.roll.jitter.hours is used.",
        validator=at_least(0), group="log",
    ),
    Setting(
        "log.roll.jitter.hours", "int", 0,
        "The maximum jitter to subtract from logRollTimeMillis (in hours), secondary to log.roll.jitter.ms.",
        validator=at_least(0), group="log",
    ),
    Setting(
        "log.retention.ms", "long", None,
        "The number of milliseconds to keep a log file before deleting it; if not set, the value in "
        "log.retention.minutes is used. If set to -1, no time limit is applied.",
        group="log",
    ),
    Setting(
        "log.retention.minutes", "int", None,
        "The number of minutes to keep a log file before deleting it, secondary to log.retention.ms; "
        "if not set, the value in log.retention.hours is used.",
        group="log",
    ),
    Setting(
        "log.retention.hours", "int", 168,
        "The number of hours to keep a log file before deleting it, tertiary to log.retention.ms.",
        group="log",
    ),
    Setting(
        "log.retention.bytes", "long", -1,
        "The maximum size of the log before deleting it (-1: no limit).",
        group="log",
    ),
    Setting(
        "log.retention.check.interval.ms", "long", 300000,
        "The frequency in milliseconds that the log cleaner checks whether any log is eligible for deletion.",
        validator=at_least(1), group="log",
    ),
    Setting(
        "log.index.interval.bytes", "int", 4096,
        "The interval with which we add an entry to the offset index.",
        validator=at_least(0), group="log",
    ),
    Setting(
        "log.index.size.max.bytes", "int", 10485760,
        "The maximum size in bytes of the offset index.",
        validator=at_least(4), group="log",
    ),
    Setting(
        "log.segment.delete.delay.ms", "long", 60000,
        "The amount of time to wait before deleting a file from the filesystem.",
        validator=at_least(0), group="log",
    ),
    Setting(
        "log.cleanup.policy", "list", ["delete"],
        "The default cleanup policy for segments beyond the retention window: delete (time and "
        "size retention), compact (the log cleaner keeps the last record of each key), or both.",
        validator=one_of("delete", "compact"), group="log",
    ),
    Setting(
        "log.cleaner.enable", "bool", True,
        "Enable the log cleaner process to run on the server: needed for topics with "
        "cleanup.policy=compact, including the internal offsets topic.",
        group="log",
    ),
    Setting(
        "log.cleaner.threads", "int", 1,
        "The number of background threads to use for log cleaning.",
        validator=at_least(0), group="log",
    ),
    Setting(
        "log.cleaner.backoff.ms", "long", 15000,
        "The amount of time to sleep when there are no logs to clean.",
        validator=at_least(0), group="log",
    ),
    Setting(
        "log.cleaner.dedupe.buffer.size", "long", 134217728,
        "The total memory used for log deduplication across all cleaner threads (24 bytes per key, "
        "as Kafka's offset map: a cleaning round stops at the offset where it is full).",
        group="log",
    ),
    Setting(
        "log.cleaner.min.cleanable.ratio", "double", 0.5,
        "The minimum ratio of dirty log to total log for a log to be eligible for cleaning "
        "(unless max.compaction.lag.ms has passed).",
        validator=between(0, 1), group="log",
    ),
    Setting(
        "log.cleaner.delete.retention.ms", "long", 86400000,
        "The amount of time to retain tombstone markers for log compacted topics.",
        validator=at_least(0), group="log",
    ),
    Setting(
        "log.cleaner.min.compaction.lag.ms", "long", 0,
        "The minimum time a message will remain uncompacted in the log.",
        validator=at_least(0), group="log",
    ),
    Setting(
        "log.cleaner.max.compaction.lag.ms", "long", 9223372036854775807,
        "The maximum time a message will remain ineligible for compaction in the log.",
        validator=at_least(1), group="log",
    ),
    Setting(
        "log.flush.offset.checkpoint.interval.ms", "int", 60000,
        "The frequency with which we update the persistent record of the last flush which acts as "
        "the log recovery point.",
        validator=at_least(0), group="log",
    ),
    Setting(
        "log.flush.start.offset.checkpoint.interval.ms", "int", 60000,
        "The frequency with which we update the persistent record of log start offset.",
        validator=at_least(0), group="log",
    ),
    Setting(
        "replica.high.watermark.checkpoint.interval.ms", "long", 5000,
        "The frequency with which the high watermark is saved out to disk.",
        validator=at_least(1), group="replication",
    ),
    Setting(
        "producer.id.expiration.ms", "int", 86400000,
        "The time in ms that a topic partition leader will wait before expiring producer IDs.",
        validator=at_least(1), group="log",
    ),
    Setting(
        "producer.id.expiration.check.interval.ms", "int", 600000,
        "The interval at which to remove producer IDs that have expired due to "
        "producer.id.expiration.ms passing.",
        validator=at_least(1), group="log",
    ),
    # --- security -------------------------------------------------------------------------------
    Setting(
        "ssl.keystore.type", "string", "PEM",
        "The file format of the key store; kafkalite reads PEM only (Kafka's default is JKS).",
        validator=one_of("PEM"), group="security",
    ),
    Setting(
        "ssl.keystore.location", "string", None,
        "The PEM file holding the private key and the certificate chain of SSL and SASL_SSL "
        "listeners (or set ssl.keystore.key and ssl.keystore.certificate.chain).",
        group="security",
    ),
    Setting(
        "ssl.keystore.certificate.chain", "password", None,
        "The certificate chain in PEM format, in place of ssl.keystore.location.",
        group="security",
    ),
    Setting(
        "ssl.keystore.key", "password", None,
        "The private key in PEM format, in place of ssl.keystore.location; encrypted keys need "
        "ssl.key.password.",
        group="security",
    ),
    Setting(
        "ssl.key.password", "password", None,
        "The password of the private key in the key store; unset for an unencrypted key.",
        group="security",
    ),
    Setting(
        "ssl.truststore.type", "string", "PEM",
        "The file format of the trust store; kafkalite reads PEM only (Kafka's default is JKS).",
        validator=one_of("PEM"), group="security",
    ),
    Setting(
        "ssl.truststore.location", "string", None,
        "The PEM file of the certificates trusted to sign client certificates (for ssl.client.auth).",
        group="security",
    ),
    Setting(
        "ssl.truststore.certificates", "password", None,
        "Trusted certificates in PEM format, in place of ssl.truststore.location.",
        group="security",
    ),
    Setting(
        "ssl.client.auth", "string", "none",
        "Whether SSL listeners ask clients for a certificate: required (a client without a trusted "
        "one is refused in the handshake), requested (checked if sent) or none.",
        validator=one_of("required", "requested", "none"), group="security",
    ),
    Setting(
        "ssl.enabled.protocols", "list", ["TLSv1.2", "TLSv1.3"],
        "The TLS versions enabled for SSL connections.",
        validator=one_of("TLSv1.2", "TLSv1.3"), group="security",
    ),
    Setting(
        "sasl.enabled.mechanisms", "list", ["PLAIN"],
        "The SASL mechanisms enabled on SASL_PLAINTEXT and SASL_SSL listeners; kafkalite supports "
        "PLAIN only (Kafka's default is GSSAPI).",
        validator=one_of("PLAIN"), group="security",
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

GROUPS: tuple[tuple[str, str], ...] = (
    ("server", "Server"),
    ("network", "Network and listeners"),
    ("controller", "Controller (KRaft)"),
    ("replication", "Replication"),
    ("log", "Log"),
    ("group", "Consumer groups"),
    ("security", "Security (SSL and SASL)"),
)

SETTINGS_BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}
_BY_ANY_NAME: dict[str, Setting] = {n: s for s in SETTINGS for n in s.names}


_HINT_NAMES = sorted(set(_BY_ANY_NAME) | KAFKA_BROKER_CONFIGS)


def lookup(name: str) -> Setting:
    """The setting called ``name`` (or one of its aliases); ConfigError if there is none, saying
    whether ``name`` is a Kafka setting kafkalite does not act on or an unknown name (with a hint)."""
    setting = _BY_ANY_NAME.get(name)
    if setting is None:
        if is_kafka_config(name):
            raise ConfigError(f"{name!r} is a Kafka setting that kafkalite does not act on", name)
        raise _unknown(name)
    return setting


def _unknown(name: str) -> ConfigError:
    """The error for a name neither kafkalite nor Kafka defines, suggesting the closest name that is
    one (under the same listener prefix for a listener-prefixed name)."""
    split = split_listener_prefix(name)
    if split is None:
        close = difflib.get_close_matches(name, _HINT_NAMES, n=1)
    else:
        prefix, rest = split
        close = [prefix + c for c in difflib.get_close_matches(rest, sorted(KAFKA_BROKER_CONFIGS), n=1)]
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return ConfigError(f"unknown setting {name!r}{hint}", name)


# --- Java .properties ----------------------------------------------------------------------------

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_WS = " \t\f"
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _trailing_backslashes(line: str) -> int:
    return len(line) - len(line.rstrip("\\"))


def _unescape(text: str, *, trim: bool) -> str:
    """Resolve backslash escapes; with ``trim``, drop trailing unescaped whitespace."""
    out: list[str] = []
    keep = 0
    i = 0
    while i < len(text):
        c = text[i]
        i += 1
        if c != "\\":
            out.append(c)
            if c not in _WS:
                keep = len(out)
            continue
        if i >= len(text):
            break  # a lone backslash at the very end (continuation at end of input) is dropped
        c = text[i]
        i += 1
        if c == "u":
            digits = text[i:i + 4]
            if len(digits) < 4 or any(d not in string.hexdigits for d in digits):
                raise ConfigError(f"malformed \\uxxxx escape in properties: {text!r}")
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append(_ESCAPES.get(c, c))
        keep = len(out)
    result = "".join(out[:keep] if trim else out)
    try:  # \ud83d\ude00 (Java's UTF-16 pair) -> one code point
        return result.encode("utf-16", "surrogatepass").decode("utf-16")
    except UnicodeDecodeError:
        return result


def _split_key_value(line: str) -> tuple[str, str]:
    """Java's rule: the key ends at the first unescaped '=', ':' or whitespace; then whitespace, at
    most one '=' or ':' and more whitespace are skipped; the rest is the value."""
    key_end = len(line)
    value_start = len(line)
    has_sep = False
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c in "=:":
            key_end, value_start, has_sep = i, i + 1, True
            break
        if c in _WS:
            key_end, value_start = i, i + 1
            break
        i += 1
    while value_start < len(line):
        c = line[value_start]
        if c not in _WS:
            if not has_sep and c in "=:":
                has_sep = True
            else:
                break
        value_start += 1
    return _unescape(line[:key_end], trim=False), _unescape(line[value_start:], trim=True)


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java ``.properties`` text: ``#``/``!`` comments, ``key=value``, ``key: value`` or
    ``key value``, backslash escapes and line continuation; later keys win. Values lose trailing
    unescaped whitespace (Kafka trims them anyway)."""
    lines = _LINE_BREAK.split(text)
    result: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i].lstrip(_WS)
        i += 1
        if not line or line[0] in "#!":
            continue
        while _trailing_backslashes(line) % 2 == 1:
            line = line[:-1]
            if i >= len(lines):
                break
            line += lines[i].lstrip(_WS)
            i += 1
        key, value = _split_key_value(line)
        result[key] = value
    return result


def _escape(text: str, specials: str) -> str:
    out = []
    for c in text:
        if c == "\\":
            out.append("\\\\")
        elif c in "\t\n\r\f":
            out.append("\\" + {"\t": "t", "\n": "n", "\r": "r", "\f": "f"}[c])
        elif c in specials:
            out.append("\\" + c)
        else:
            out.append(c)
    return "".join(out)


def format_properties(props: Mapping[str, str]) -> str:
    """Properties text that ``parse_properties`` reads back as ``props`` (one ``key=value`` a line)."""
    lines = []
    for key, value in props.items():
        escaped = _escape(value, "")
        if escaped.startswith(" "):
            escaped = "\\" + escaped
        if escaped.endswith(" ") and _trailing_backslashes(escaped[:-1]) % 2 == 0:
            escaped = escaped[:-1] + "\\ "  # an unescaped trailing space would be trimmed
        lines.append(f"{_escape(key, ' =:#!')}={escaped}\n")
    return "".join(lines)


def load_properties_file(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read and parse a properties file (UTF-8); ConfigError if it cannot be read."""
    try:
        with open(path, encoding="utf-8-sig") as f:
            return parse_properties(f.read())
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read config file {os.fspath(path)!r}: {e}") from None


# --- the broker's configuration ------------------------------------------------------------------

_WILDCARDS = {"0.0.0.0": "127.0.0.1", "::": "::1"}


@dataclass
class _Gathered:
    """What the sources say, later ones winning: each setting's text or value by the setting's name,
    the Kafka settings kafkalite does not act on, and every error found on the way."""

    raw: dict[str, object]
    ignored: set[str]
    errors: list[ConfigError]


def _canonical(props: Mapping[str, object], into: _Gathered | None = None) -> _Gathered:
    """Add one source to ``into``: keys (and aliases) become setting names, None values are unset, a
    Kafka setting kafkalite does not act on is ignored, any other key is an error. Within one source,
    an alias and its setting may both appear only with equal values."""
    gathered = into if into is not None else _Gathered({}, set(), [])
    origin: dict[str, str] = {}
    for key, raw in props.items():
        key = key.strip()
        setting = _BY_ANY_NAME.get(key)
        if setting is None:
            if not is_kafka_config(key):
                gathered.errors.append(_unknown(key))
            elif raw is not None:
                gathered.ignored.add(key)
            continue
        if raw is None:
            continue
        name = setting.name
        if name in origin and origin[name] != key and _differ(setting, gathered.raw[name], raw):
            gathered.errors.append(ConfigError(
                f"{origin[name]} and {key} are both set, to different values "
                f"({gathered.raw[name]!r} and {raw!r})", name))
        gathered.raw[name] = raw
        origin[name] = key
    return gathered


def _differ(setting: Setting, a: object, b: object) -> bool:
    try:
        return bool(setting.parse(a) != setting.parse(b))
    except ConfigError:  # an invalid value is reported when the values are parsed
        return a != b


@dataclass(frozen=True)
class LogSchedule:
    """How often the broker's scheduler runs the log manager's periodic work."""

    retention_check_interval_ms: int
    recovery_point_checkpoint_interval_ms: int
    log_start_offset_checkpoint_interval_ms: int
    high_watermark_checkpoint_interval_ms: int
    producer_id_expiration_ms: int
    producer_id_expiration_check_interval_ms: int


def _parse_override(item: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"invalid override {item!r}: expected key=value")
    return key.strip(), value


class BrokerConfig:
    """A validated broker configuration: every setting's value (defaults filled) and derived views.

    ``values`` holds the configured values (after parsing; the listener map's names and protocols in
    upper case); the properties (``listeners``, ``inter_broker_listener_name``, ...) give the
    effective ones, with Kafka's fallbacks applied.
    """

    def __init__(self, props: Mapping[str, object] | None = None) -> None:
        self._load(_canonical(props or {}))

    def _load(self, gathered: _Gathered) -> None:
        """Parse every gathered value; one ConfigError lists every unknown name and invalid value."""
        errors = list(gathered.errors)
        values: dict[str, Any] = {}
        for setting in SETTINGS:
            if setting.name in gathered.raw:
                try:
                    values[setting.name] = setting.parse(gathered.raw[setting.name])
                except ConfigError as e:
                    errors.append(e)
            else:
                values[setting.name] = copy.deepcopy(setting.default)
        if errors:
            raise ConfigError.of(errors)
        self._values = values
        self._explicit = frozenset(gathered.raw)
        self._ignored = sorted(gathered.ignored)
        self._derive()

    @classmethod
    def from_sources(
        cls,
        file_path: str | os.PathLike[str] | None,
        overrides: Iterable[str] = (),
        extra: Mapping[str, object] | None = None,
    ) -> BrokerConfig:
        """The properties file (if any), then ``extra``, then each ``key=value`` override; later wins."""
        gathered = _Gathered({}, set(), [])
        if file_path is not None:
            try:
                _canonical(load_properties_file(file_path), gathered)
            except ConfigError as e:
                gathered.errors.append(e)
        if extra:
            _canonical(extra, gathered)
        for item in overrides:
            try:
                _canonical(dict([_parse_override(item)]), gathered)
            except ConfigError as e:
                gathered.errors.append(e)
        config = cls.__new__(cls)
        config._load(gathered)
        return config

    # --- access ---------------------------------------------------------------------------------

    def get(self, name: str) -> Any:
        """The value of setting ``name`` (or an alias); KeyError for an unknown name."""
        setting = _BY_ANY_NAME.get(name)
        if setting is None:
            raise KeyError(f"unknown setting {name!r}")
        return self._values[setting.name]

    def __getitem__(self, name: str) -> Any:
        return self.get(name)

    def __contains__(self, name: object) -> bool:
        return name in _BY_ANY_NAME

    @property
    def values(self) -> dict[str, Any]:
        """Every setting's value by name, defaults filled (a copy)."""
        return dict(self._values)

    @property
    def explicit(self) -> frozenset[str]:
        """Names of the settings the user set (aliases mapped to the setting's name)."""
        return self._explicit

    @property
    def ignored(self) -> list[str]:
        """Names the user set that Kafka defines and kafkalite does not act on, sorted."""
        return list(self._ignored)

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{n}={'[hidden]' if SETTINGS_BY_NAME[n].type == 'password' else repr(self._values[n])}"
            for n in sorted(self._explicit))
        return f"BrokerConfig({shown})"

    # --- derived --------------------------------------------------------------------------------

    @property
    def node_id(self) -> int:
        return int(self._values["node.id"])

    @property
    def process_roles(self) -> list[str]:
        return list(self._values["process.roles"])

    @property
    def is_controller(self) -> bool:
        return "controller" in self._values["process.roles"]

    @property
    def is_broker(self) -> bool:
        return "broker" in self._values["process.roles"]

    @property
    def security_protocol_map(self) -> dict[str, str]:
        return dict(self._values["listener.security.protocol.map"])

    @property
    def listeners(self) -> list[Endpoint]:
        return list(self._listeners)

    @property
    def advertised_listeners(self) -> list[Endpoint]:
        return list(self._advertised)

    @property
    def inter_broker_listener_name(self) -> str:
        return self._inter_broker

    @property
    def control_plane_listener_name(self) -> str | None:
        return self._control_plane

    @property
    def privileged_listener_name(self) -> str:
        """The control plane listener if there is one, else the inter-broker listener."""
        return self._control_plane or self._inter_broker

    @property
    def controller_address(self) -> tuple[str, int] | None:
        """Where the controller takes registrations (controller.quorum.bootstrap.servers, else the
        voter's address); None when this node runs it and nothing names an address."""
        return self._controller_address

    @property
    def controller_listener_names(self) -> list[str]:
        return list(self._controller_listeners)

    # Typed views for the components (no string lookups outside this module).

    @property
    def num_io_threads(self) -> int:
        return int(self._values["num.io.threads"])

    @property
    def broker_rack(self) -> str | None:
        return self._values["broker.rack"]

    @property
    def heartbeat_interval_ms(self) -> int:
        return int(self._values["broker.heartbeat.interval.ms"])

    @property
    def sched_batch(self) -> bool:
        return bool(self._values["threads.sched.batch"])

    @property
    def request_log(self) -> tuple[str, int, int] | None:
        """(request.log.dir, .segment.bytes, .roll.ms), or None without a request log."""
        v = self._values
        if not v["request.log.dir"]:
            return None
        return v["request.log.dir"], v["request.log.segment.bytes"], v["request.log.roll.ms"]

    @property
    def memory_storage(self) -> bool:
        """log.storage=memory: logs, checkpoints, meta.properties and the controller's store in memory."""
        return bool(self._values["log.storage"] == "memory")

    @property
    def metrics_endpoint(self) -> tuple[str, int] | None:
        """(metrics.host, metrics.port), or None when metrics.port is -1."""
        v = self._values
        return None if v["metrics.port"] < 0 else (v["metrics.host"], v["metrics.port"])

    def log_config(self) -> LogConfig:
        """The broker's defaults for every log (Kafka's log.* settings, which topic-level
        settings override)."""
        v = self._values
        hours = 60 * 60 * 1000
        if v["log.retention.ms"] is not None:
            retention_ms = v["log.retention.ms"]
        elif v["log.retention.minutes"] is not None:
            retention_ms = v["log.retention.minutes"] * 60 * 1000
        else:
            retention_ms = v["log.retention.hours"] * hours
        return LogConfig(
            segment_bytes=v["log.segment.bytes"],
            segment_ms=v["log.roll.ms"] if v["log.roll.ms"] is not None else v["log.roll.hours"] * hours,
            segment_jitter_ms=(v["log.roll.jitter.ms"] if v["log.roll.jitter.ms"] is not None
                               else v["log.roll.jitter.hours"] * hours),
            segment_index_bytes=v["log.index.size.max.bytes"],
            retention_ms=retention_ms if retention_ms >= 0 else -1,
            retention_bytes=v["log.retention.bytes"],
            index_interval_bytes=v["log.index.interval.bytes"],
            max_message_bytes=v["message.max.bytes"],
            file_delete_delay_ms=v["log.segment.delete.delay.ms"],
            cleanup_policy=",".join(v["log.cleanup.policy"]),
            delete_retention_ms=v["log.cleaner.delete.retention.ms"],
            min_compaction_lag_ms=v["log.cleaner.min.compaction.lag.ms"],
            max_compaction_lag_ms=v["log.cleaner.max.compaction.lag.ms"],
            min_cleanable_dirty_ratio=v["log.cleaner.min.cleanable.ratio"],
            min_insync_replicas=v["min.insync.replicas"],
            unclean_leader_election_enable=v["unclean.leader.election.enable"],
        )

    @property
    def log_schedule(self) -> LogSchedule:
        v = self._values
        return LogSchedule(
            retention_check_interval_ms=v["log.retention.check.interval.ms"],
            recovery_point_checkpoint_interval_ms=v["log.flush.offset.checkpoint.interval.ms"],
            log_start_offset_checkpoint_interval_ms=v["log.flush.start.offset.checkpoint.interval.ms"],
            high_watermark_checkpoint_interval_ms=v["replica.high.watermark.checkpoint.interval.ms"],
            producer_id_expiration_ms=v["producer.id.expiration.ms"],
            producer_id_expiration_check_interval_ms=v["producer.id.expiration.check.interval.ms"],
        )

    def group_config(self) -> GroupConfig:
        v = self._values
        return GroupConfig(min_session_timeout_ms=v["group.min.session.timeout.ms"],
                           max_session_timeout_ms=v["group.max.session.timeout.ms"],
                           initial_rebalance_delay_ms=v["group.initial.rebalance.delay.ms"],
                           max_size=v["group.max.size"])

    def offsets_topic_config(self) -> OffsetsTopicConfig:
        v = self._values
        return OffsetsTopicConfig(num_partitions=v["offsets.topic.num.partitions"],
                                  replication_factor=v["offsets.topic.replication.factor"],
                                  segment_bytes=v["offsets.topic.segment.bytes"],
                                  commit_timeout_ms=v["offsets.commit.timeout.ms"],
                                  retention_ms=v["offsets.retention.minutes"] * 60000,
                                  retention_check_interval_ms=v["offsets.retention.check.interval.ms"])

    def cleaner_config(self) -> CleanerConfig:
        v = self._values
        return CleanerConfig(enable=v["log.cleaner.enable"], num_threads=v["log.cleaner.threads"],
                             dedupe_buffer_size=v["log.cleaner.dedupe.buffer.size"],
                             backoff_ms=v["log.cleaner.backoff.ms"])

    @property
    def auto_create_topics(self) -> tuple[bool, int, int]:
        """(auto.create.topics.enable, num.partitions, default.replication.factor)."""
        v = self._values
        return (v["auto.create.topics.enable"], v["num.partitions"], v["default.replication.factor"])

    def socket_server_settings(self) -> SocketServerSettings:
        v = self._values
        tls = TlsSettings(
            enabled_protocols=tuple(v["ssl.enabled.protocols"]), key_password=v["ssl.key.password"],
            keystore_location=v["ssl.keystore.location"],
            keystore_certificate_chain=v["ssl.keystore.certificate.chain"],
            keystore_key=v["ssl.keystore.key"],
            client_auth=v["ssl.client.auth"], truststore_location=v["ssl.truststore.location"],
            truststore_certificates=v["ssl.truststore.certificates"])
        return SocketServerSettings(
            node_id=self.node_id, listeners=tuple(self._listeners),
            inter_broker_listener_name=self._inter_broker,
            privileged_listener_name=self.privileged_listener_name,
            control_plane_listener_name=self._control_plane, num_network_threads=v["num.network.threads"],
            queued_max_requests=v["queued.max.requests"],
            queued_max_request_bytes=v["queued.max.request.bytes"],
            socket_send_buffer_bytes=v["socket.send.buffer.bytes"],
            socket_receive_buffer_bytes=v["socket.receive.buffer.bytes"],
            socket_request_max_bytes=v["socket.request.max.bytes"],
            socket_listen_backlog_size=v["socket.listen.backlog.size"],
            connections_max_idle_ms=v["connections.max.idle.ms"], max_connections=v["max.connections"],
            max_connections_per_ip=v["max.connections.per.ip"],
            max_connections_per_ip_overrides=dict(v["max.connections.per.ip.overrides"]),
            sasl_enabled_mechanisms=tuple(v["sasl.enabled.mechanisms"]),
            sasl_plain_users_file=v["sasl.plain.users.file"],
            failed_authentication_delay_ms=v["connection.failed.authentication.delay.ms"], tls=tls)

    def controller_settings(self) -> ControllerSettings:
        v = self._values
        return ControllerSettings(
            node_id=self.node_id, listener=self.privileged_listener_name,
            session_timeout_ms=v["broker.session.timeout.ms"],
            socket_timeout_ms=v["controller.socket.timeout.ms"],
            inter_broker_protocol_version=v["inter.broker.protocol.version"],
            num_partitions=v["num.partitions"], default_replication_factor=v["default.replication.factor"],
            unclean_leader_election_enable=v["unclean.leader.election.enable"],
            auto_leader_rebalance_enable=v["auto.leader.rebalance.enable"],
            leader_imbalance_check_interval_seconds=v["leader.imbalance.check.interval.seconds"],
            leader_imbalance_per_broker_percentage=v["leader.imbalance.per.broker.percentage"])

    def replication_settings(self) -> ReplicationSettings:
        v = self._values
        return ReplicationSettings(
            num_replica_fetchers=v["num.replica.fetchers"], fetch_max_bytes=v["replica.fetch.max.bytes"],
            fetch_response_max_bytes=v["replica.fetch.response.max.bytes"],
            fetch_min_bytes=v["replica.fetch.min.bytes"], fetch_wait_max_ms=v["replica.fetch.wait.max.ms"],
            fetch_backoff_ms=v["replica.fetch.backoff.ms"], lag_time_max_ms=v["replica.lag.time.max.ms"],
            socket_timeout_ms=v["replica.socket.timeout.ms"])

    @property
    def controlled_shutdown(self) -> bool:
        return bool(self._values["controlled.shutdown.enable"])

    @property
    def log_dirs(self) -> list[str]:
        return list(self._log_dirs)

    @property
    def cluster_id(self) -> str | None:
        return self._values["cluster.id"]

    def _derive(self) -> None:
        v = self._values
        if v["node.id"] < 0:
            raise ConfigError("node.id must be set to a value >= 0 (broker.id is accepted as an alias)",
                              "node.id")
        if not v["process.roles"]:
            raise ConfigError("process.roles must name at least one role (broker, controller)",
                              "process.roles")

        protocols = {k.upper(): p.upper() for k, p in v["listener.security.protocol.map"].items()}
        v["listener.security.protocol.map"] = protocols

        self._listeners = [parse_listener(t, protocols, setting="listeners") for t in v["listeners"]]
        if not self._listeners:
            raise ConfigError("listeners must contain at least one listener", "listeners")
        names = [e.name for e in self._listeners]
        self._check_unique_names(names, "listeners")
        self._check_ports()
        self._check_security()

        if v["advertised.listeners"] is None:
            self._advertised = [
                _replace_host(e, _WILDCARDS.get(e.host, e.host) or "127.0.0.1") for e in self._listeners
            ]
        else:
            self._advertised = []
            for text in v["advertised.listeners"]:
                e = parse_listener(text, protocols, setting="advertised.listeners")
                if e.host in _WILDCARDS:
                    raise ConfigError(
                        f"invalid value {text!r} for advertised.listeners: cannot advertise the "
                        f"non-routable meta-address {e.host}", "advertised.listeners")
                if e.name not in names:
                    raise ConfigError(
                        f"invalid value {text!r} for advertised.listeners: {e.name} is not a listener "
                        f"name in listeners ({', '.join(names)})", "advertised.listeners")
                self._advertised.append(_replace_host(e, e.host or "127.0.0.1"))
            self._check_unique_names([e.name for e in self._advertised], "advertised.listeners")
        advertised_names = {e.name for e in self._advertised}

        control_plane = v["control.plane.listener.name"]
        self._control_plane = control_plane.upper() if control_plane is not None else None
        if self._control_plane is not None and self._control_plane not in names:
            raise ConfigError(
                f"invalid value {control_plane!r} for control.plane.listener.name: not a listener name "
                f"in listeners ({', '.join(names)})", "control.plane.listener.name")

        inter_broker = v["inter.broker.listener.name"]
        if inter_broker is not None:
            self._inter_broker = inter_broker.upper()
            if self._inter_broker not in names:
                raise ConfigError(
                    f"invalid value {inter_broker!r} for inter.broker.listener.name: not a listener name "
                    f"in listeners ({', '.join(names)})", "inter.broker.listener.name")
        else:
            candidates = [n for n in names if n != self._control_plane]
            if not candidates:
                raise ConfigError(
                    "control.plane.listener.name is the only listener; another listener is needed "
                    "for inter-broker traffic", "control.plane.listener.name")
            self._inter_broker = "PLAINTEXT" if "PLAINTEXT" in candidates else candidates[0]
        if self._control_plane == self._inter_broker:
            raise ConfigError(
                f"control.plane.listener.name and inter.broker.listener.name must differ "
                f"(both are {self._inter_broker})", "control.plane.listener.name")
        for setting, name in (("inter.broker.listener.name", self._inter_broker),
                              ("control.plane.listener.name", self._control_plane)):
            if name is not None and name not in advertised_names:
                raise ConfigError(
                    f"{setting} is {name}, which must also be in advertised.listeners", setting)

        for setting, name in (("inter.broker.listener.name", self._inter_broker),
                              ("control.plane.listener.name", self._control_plane)):
            protocol = protocols.get(name or "")
            if name is not None and protocol != "PLAINTEXT":
                raise ConfigError(
                    f"{setting} is {name}, whose security protocol is {protocol}: kafkalite's "
                    "controller and brokers talk to each other over PLAINTEXT only; add a PLAINTEXT "
                    "listener for them", setting)

        if v["max.connections.per.ip"] == 0 and not v["max.connections.per.ip.overrides"]:
            raise ConfigError(
                "max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides is set",
                "max.connections.per.ip")

        self._derive_controller()

        self._log_dirs = list(v["log.dirs"]) if v["log.dirs"] is not None else [v["log.dir"]]
        if not self._log_dirs or not all(self._log_dirs):
            raise ConfigError("at least one log directory must be defined via log.dirs or log.dir",
                              "log.dirs")

    def _derive_controller(self) -> None:
        """Where the controller is, and whether this node runs it: kafkalite runs one controller
        per cluster, so a node runs one only if the controller settings name no other node."""
        v = self._values
        voters = [parse_voter(e) for e in v["controller.quorum.voters"]]
        servers = v["controller.quorum.bootstrap.servers"]
        address: tuple[str, int] | None = None
        source = ""
        if servers:
            host, _, port = servers[0].rpartition(":")
            address, source = (host.strip("[]"), int(port)), "controller.quorum.bootstrap.servers"
        elif voters:
            address, source = (voters[0][1], voters[0][2]), "controller.quorum.voters"
        if voters:
            names_self = voters[0][0] == self.node_id
            source = "controller.quorum.voters"
        else:
            names_self = address is None or self._is_own_address(*address)
        roles = v["process.roles"]
        if "process.roles" not in self._explicit:
            v["process.roles"] = ["broker", "controller"] if names_self else ["broker"]
        elif "controller" in roles and not names_self:
            raise ConfigError(
                f"process.roles includes controller, but {source} names another node "
                f"({v[source][0]}): kafkalite runs one controller per cluster; leave process.roles "
                "unset or set it to broker on every node but the controller's", "process.roles")
        elif "controller" not in roles and address is None:
            raise ConfigError(
                "process.roles=broker needs controller.quorum.bootstrap.servers (or "
                "controller.quorum.voters) to find the controller", "controller.quorum.bootstrap.servers")
        self._controller_address = address
        names = {e.name: e for e in self._listeners}
        self._controller_listeners = [n.upper() for n in v["controller.listener.names"]]
        if not self.is_controller:
            return
        for name in self._controller_listeners:
            if name not in names:
                raise ConfigError(
                    f"controller.listener.names names {name}, which is not a listener in listeners "
                    f"({', '.join(names)})", "controller.listener.names")
            if name in (self._inter_broker, self._control_plane):
                raise ConfigError(
                    f"controller.listener.names must not name the inter-broker or control plane "
                    f"listener ({name})", "controller.listener.names")
            if names[name].security_protocol != "PLAINTEXT":
                raise ConfigError(
                    f"controller.listener.names names {name}, whose security protocol is "
                    f"{names[name].security_protocol}: kafkalite's controller takes PLAINTEXT only",
                    "controller.listener.names")

    def _is_own_address(self, host: str, port: int) -> bool:
        local = {"", "localhost", "127.0.0.1", "::1", "0.0.0.0", "::"}
        return any(e.port == port and (host in local or host == e.host) for e in self._listeners)

    def _check_security(self) -> None:
        """SSL listeners need a key store (and a trust store to check clients); SASL ones need users."""
        v = self._values
        protocols = {e.security_protocol for e in self._listeners}
        if protocols & TLS_PROTOCOLS:
            inline = v["ssl.keystore.certificate.chain"] is not None or v["ssl.keystore.key"] is not None
            if v["ssl.keystore.location"] is not None and inline:
                raise ConfigError(
                    "set either ssl.keystore.location or ssl.keystore.key with "
                    "ssl.keystore.certificate.chain, not both", "ssl.keystore.location")
            if inline and (v["ssl.keystore.certificate.chain"] is None or v["ssl.keystore.key"] is None):
                raise ConfigError(
                    "ssl.keystore.key and ssl.keystore.certificate.chain must be set together",
                    "ssl.keystore.key")
            if v["ssl.keystore.location"] is None and not inline:
                raise ConfigError(
                    "SSL listeners need a key store: set ssl.keystore.location (a PEM file with the "
                    "key and certificate chain) or ssl.keystore.key and ssl.keystore.certificate.chain",
                    "ssl.keystore.location")
            trust = (v["ssl.truststore.location"], v["ssl.truststore.certificates"])
            if v["ssl.client.auth"] != "none" and trust == (None, None):
                raise ConfigError(
                    f"ssl.client.auth={v['ssl.client.auth']} needs a trust store: set "
                    "ssl.truststore.location or ssl.truststore.certificates", "ssl.client.auth")
        if protocols & SASL_PROTOCOLS and v["sasl.plain.users.file"] is None:
            raise ConfigError(
                "SASL listeners need sasl.plain.users.file (username=password lines)",
                "sasl.plain.users.file")

    @staticmethod
    def _check_unique_names(names: list[str], setting: str) -> None:
        seen: set[str] = set()
        for name in names:
            if name in seen:
                raise ConfigError(f"{setting}: listener name {name} is used more than once", setting)
            seen.add(name)

    def _check_ports(self) -> None:
        # Kafka: ports must be unique unless one listener is IPv4 and the other IPv6; 0 = any free port.
        seen: dict[tuple[int, bool], Endpoint] = {}
        for e in self._listeners:
            if e.port == 0:
                continue
            key = (e.port, ":" in e.host)
            if key in seen:
                raise ConfigError(
                    f"listeners: {seen[key]} and {e} use the same port {e.port}", "listeners")
            seen[key] = e


def _replace_host(endpoint: Endpoint, host: str) -> Endpoint:
    return Endpoint(endpoint.name, host, endpoint.port, endpoint.security_protocol)

