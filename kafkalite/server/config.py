"""The broker's configuration: the settings table, assembled from the rows each area declares, the
loading of its sources, the cross-checks between settings, and the listeners.

Each area owns its settings (``common/config_def.py``: a ``Setting`` row carries Kafka's property
name, type, default, meaning and validator, or ``kafka=False`` when the setting exists only in
kafkalite) and the typed view it is configured with: the network's (``network/settings.py``), the
controller's (``controller/settings.py``), replication's (``server/replication/settings.py``), the
group coordinator's (``server/coordinator/settings.py``), the authorizer's
(``server/authorizer/settings.py``), the storage's with the topic-level
settings (``storage/config.py``), the request log's (``metrics/settings.py``, listed among the
broker's), and the broker's own below. ``SETTINGS`` joins them: it feeds
loading, validation, ``--override``, DescribeConfigs and ``docs/configuration.md``
(``python -m kafkalite.server.config_docs``). ``BrokerConfig`` gives each area its typed view.

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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kafkalite.clients.security import CLIENT_MECHANISMS, ClientSecurity
from kafkalite.common.config_def import (
    Setting,
    Validator,
    at_least,
    between,
    one_of,
    view,
)
from kafkalite.common.endpoints import SASL_PROTOCOLS, TLS_PROTOCOLS, Endpoint, parse_listener
from kafkalite.common.errors import ConfigError
from kafkalite.common.jaas import LOGIN_MODULES, JaasConfigError, parse_jaas_config
from kafkalite.common.properties import load_properties_file
from kafkalite.controller.settings import (
    CONTROLLER_SETTINGS,
    ControllerSettings,
    QuorumSettings,
    parse_voters,
)
from kafkalite.metrics.settings import REQUEST_LOG_SETTINGS
from kafkalite.network.principal import parse_rules
from kafkalite.network.settings import (
    NETWORK_SETTINGS,
    SocketServerSettings,
    TlsSettings,
)
from kafkalite.server.authorizer.settings import AUTHORIZER_SETTINGS, AuthorizerSettings
from kafkalite.server.client_quotas import QUOTA_SETTINGS, QuotaSettings
from kafkalite.server.coordinator.settings import GROUP_SETTINGS, GroupConfig, OffsetsTopicConfig
from kafkalite.server.coordinator.share_group.settings import SHARE_GROUP_SETTINGS, ShareGroupConfig
from kafkalite.server.coordinator.transaction.settings import TRANSACTION_SETTINGS, TransactionConfig
from kafkalite.server.kafka_config_names import (
    KAFKA_BROKER_CONFIGS,
    is_kafka_config,
    split_listener_prefix,
)
from kafkalite.server.replication.settings import REPLICATION_SETTINGS, ReplicationSettings
from kafkalite.server.share.settings import SHARE_SETTINGS, SharePartitionConfig
from kafkalite.server.share_coordinator.settings import SHARE_COORDINATOR_SETTINGS, ShareCoordinatorConfig
from kafkalite.storage.config import STORAGE_SETTINGS, CleanerConfig, LogConfig, LogSchedule

# ConfigError stays importable from here, where the command and the tests have always taken it.
__all__ = ["GROUPS", "SETTINGS", "SETTINGS_BY_NAME", "BrokerConfig", "ConfigError", "lookup"]

_CLUSTER_ID_RE = re.compile(r"[A-Za-z0-9_-]{22}")


class _ClusterId(Validator):
    def check(self, value: Any) -> str | None:
        if value is None or _CLUSTER_ID_RE.fullmatch(value):
            return None
        return "must be 22 characters of URL-safe base64 (a Kafka UUID)"

    def describe(self) -> str:
        return "22-character base64url UUID"


# The broker's own settings; every other area declares its own rows.
BROKER_SETTINGS: tuple[Setting, ...] = (
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
        "controller.quorum.voters lists this node.id (or, without voters, if "
        "controller.quorum.bootstrap.servers is empty or names this node), and broker alone "
        "otherwise (see 'Starting brokers by hand').",
        validator=one_of("broker", "controller"), group="server",
    ),
    Setting(
        "num.io.threads", "int", 8,
        "The number of threads that the server uses for processing requests, which may include disk I/O.",
        validator=at_least(1), group="server", update_mode="cluster-wide",
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
        "max.request.partition.size.limit", "int", 2000,
        "The maximum number of partitions can be served in one request (DescribeTopicPartitions "
        "answers at most this many, whatever the request's limit).",
        validator=at_least(1), group="server",
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
    *REQUEST_LOG_SETTINGS,  # the request log's (metrics/settings.py), listed among the broker's
    Setting(
        "auto.create.topics.enable", "bool", True,
        "Enable auto creation of topic on the server: a Metadata request that allows it creates a "
        "topic it names, with num.partitions and default.replication.factor.",
        group="log",
    ),
    Setting(
        "controlled.shutdown.enable", "bool", True,
        "Enable controlled shutdown of the server: a broker stopped gracefully first asks the "
        "controller to move the leadership of its partitions to other replicas.",
        group="replication",
    ),
)

SETTINGS: tuple[Setting, ...] = (
    BROKER_SETTINGS + NETWORK_SETTINGS + CONTROLLER_SETTINGS + REPLICATION_SETTINGS + GROUP_SETTINGS
    + TRANSACTION_SETTINGS + SHARE_COORDINATOR_SETTINGS + STORAGE_SETTINGS + AUTHORIZER_SETTINGS
    + QUOTA_SETTINGS + SHARE_GROUP_SETTINGS + SHARE_SETTINGS
)

GROUPS: tuple[tuple[str, str], ...] = (
    ("server", "Server"),
    ("network", "Network and listeners"),
    ("controller", "Controller (KRaft)"),
    ("replication", "Replication"),
    ("log", "Log"),
    ("group", "Consumer groups"),
    ("share", "Share groups (KIP-932)"),
    ("transaction", "Transactions"),
    ("share_coordinator", "Share coordinator (share-group state)"),
    ("quotas", "Client quotas"),
    ("security", "Security (SSL and SASL)"),
)

SETTINGS_BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}
if len(SETTINGS_BY_NAME) != len(SETTINGS):
    raise ValueError("two areas declare a setting of the same name")
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


# --- the broker's configuration ------------------------------------------------------------------

_WILDCARDS = {"0.0.0.0": "127.0.0.1", "::": "::1"}
# A listener's JAAS config for one mechanism: the broker's credentials on that listener.
_JAAS_KEY = re.compile(r"listener\.name\.([^.\s]+)\.([a-z0-9-]+)\.sasl\.jaas\.config", re.I)


@dataclass
class _Gathered:
    """What the sources say, later ones winning: each setting's text or value by the setting's name,
    the Kafka settings kafkalite does not act on, and every error found on the way."""

    raw: dict[str, object]
    ignored: set[str]
    errors: list[ConfigError]
    # listener.name.<listener>.<setting> for the settings kafkalite reads per listener at startup.
    listener_raw: dict[str, object] = field(default_factory=dict)
    # listener.name.<listener>.<mechanism>.sasl.jaas.config values, by the name as given
    jaas: dict[str, str] = field(default_factory=dict)


# Settings a static listener.name.<listener>. prefix overrides (read when the listener is created).
STATIC_LISTENER_SETTINGS = frozenset({"sasl.enabled.mechanisms", "connections.max.reauth.ms"})


def _canonical(props: Mapping[str, object], into: _Gathered | None = None) -> _Gathered:
    """Add one source to ``into``: keys (and aliases) become setting names, None values are unset, a
    Kafka setting kafkalite does not act on is ignored, any other key is an error. Within one source,
    an alias and its setting may both appear only with equal values."""
    gathered = into if into is not None else _Gathered({}, set(), [])
    origin: dict[str, str] = {}
    for key, raw in props.items():
        key = key.strip()
        setting = _BY_ANY_NAME.get(key)
        split = split_listener_prefix(key) if setting is None else None
        if split is not None and split[1] in STATIC_LISTENER_SETTINGS and split[0].count(".") == 3:
            if raw is not None:
                gathered.listener_raw[key] = raw
            continue
        if setting is None:
            if not is_kafka_config(key):
                gathered.errors.append(_unknown(key))
            elif raw is not None and _JAAS_KEY.fullmatch(key):
                gathered.jaas[key] = str(raw)
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
        listener_values: dict[str, Any] = {}
        for key, raw in gathered.listener_raw.items():
            split = split_listener_prefix(key)
            assert split is not None
            try:
                listener_values[key] = _BY_ANY_NAME[split[1]].parse(raw)
            except ConfigError as e:
                errors.append(ConfigError(f"{key}: {e}", key))
        if errors:
            raise ConfigError.of(errors)
        self._listener_values = listener_values
        self._values = values
        self._explicit = frozenset(gathered.raw)
        self._ignored = sorted(gathered.ignored)
        self._jaas = dict(gathered.jaas)
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

    @property
    def quorum_voters(self) -> dict[int, tuple[str, int]]:
        """controller.quorum.voters as {id: (host, port)} (empty when not set: a node that runs the
        controller alone is then the only voter, at its own controller or privileged listener)."""
        return dict(self._voters)

    @property
    def controller_bootstrap_servers(self) -> list[tuple[str, int]]:
        """controller.quorum.bootstrap.servers as (host, port) pairs."""
        return list(self._bootstrap_servers)

    def quorum_settings(self) -> QuorumSettings:
        """The quorum's timing: ``QuorumConfig(**config.quorum_settings().quorum_config_args())``."""
        return view(QuorumSettings, self._values)

    @property
    def metadata_log_dir(self) -> str | None:
        """The directory holding the metadata log's ``__cluster_metadata-0`` (metadata.log.dir, else
        the first log dir); None with log.storage=memory (the log then stays in memory)."""
        if self.memory_storage:
            return None
        return str(self._values["metadata.log.dir"] or self._log_dirs[0])

    @property
    def metadata_partition_dir(self) -> str | None:
        """``<metadata_log_dir>/__cluster_metadata-0``, the RaftManager's directory (None: in memory)."""
        base = self.metadata_log_dir
        return None if base is None else os.path.join(base, "__cluster_metadata-0")

    # Typed values for the broker; each area's own view (its dataclass over its rows) is built by view().

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
    def request_log(self) -> tuple[str, int, int, str] | None:
        """(request.log.dir, .segment.bytes, .roll.ms, .format), or None without a request log."""
        v = self._values
        if not v["request.log.dir"]:
            return None
        return (v["request.log.dir"], v["request.log.segment.bytes"], v["request.log.roll.ms"],
                v["request.log.format"])

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
        return LogConfig.from_broker(self._values)

    @property
    def log_schedule(self) -> LogSchedule:
        return view(LogSchedule, self._values)

    def group_config(self) -> GroupConfig:
        return view(GroupConfig, self._values)

    def share_group_config(self) -> ShareGroupConfig:
        return view(ShareGroupConfig, self._values)

    def share_partition_config(self) -> SharePartitionConfig:
        return view(SharePartitionConfig, self._values)

    def offsets_topic_config(self) -> OffsetsTopicConfig:
        return view(OffsetsTopicConfig, self._values)

    def transaction_config(self) -> TransactionConfig:
        return view(TransactionConfig, self._values)

    def share_coordinator_config(self) -> ShareCoordinatorConfig:
        return view(ShareCoordinatorConfig, self._values)

    def cleaner_config(self) -> CleanerConfig:
        return view(CleanerConfig, self._values)

    @property
    def auto_create_topics(self) -> tuple[bool, int, int]:
        """(auto.create.topics.enable, num.partitions, default.replication.factor)."""
        v = self._values
        return (v["auto.create.topics.enable"], v["num.partitions"], v["default.replication.factor"])

    def socket_server_settings(self) -> SocketServerSettings:
        return view(SocketServerSettings, self._values, node_id=self.node_id,
                    listeners=tuple(self._listeners), inter_broker_listener_name=self._inter_broker,
                    privileged_listener_name=self.privileged_listener_name,
                    control_plane_listener_name=self._control_plane, tls=view(TlsSettings, self._values),
                    listener_overrides=dict(self._listener_values))

    def listener_value(self, listener: str, name: str) -> Any:
        """``listener.name.<listener>.<name>`` if set statically, else ``name``'s value."""
        key = f"listener.name.{listener.lower()}.{name}"
        return self._listener_values[key] if key in self._listener_values else self._values[name]

    def controller_settings(self) -> ControllerSettings:
        return view(ControllerSettings, self._values, node_id=self.node_id,
                    listener=self.privileged_listener_name, client_security=self._privileged_security,
                    inter_broker_listener=self._inter_broker if self._control_plane else None)

    def replication_settings(self) -> ReplicationSettings:
        return view(ReplicationSettings, self._values, inter_broker_security=self._inter_broker_security)

    def authorizer_settings(self) -> AuthorizerSettings:
        return view(AuthorizerSettings, self._values)

    def quota_settings(self) -> QuotaSettings:
        return view(QuotaSettings, self._values)

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

        # A controller-only node listens on controller listeners only; the inter-broker listener
        # names where its controller reaches the brokers (Kafka's default: PLAINTEXT).
        controller_only = "broker" not in v["process.roles"]
        inter_broker = v["inter.broker.listener.name"]
        if controller_only:
            names = names + [n for n in (inter_broker or v["security.inter.broker.protocol"] or "PLAINTEXT",)
                             if n.upper() not in names]
        if inter_broker is not None and v["security.inter.broker.protocol"] is not None:
            raise ConfigError("Only one of inter.broker.listener.name and security.inter.broker.protocol "
                              "should be set.", "security.inter.broker.protocol")
        if v["security.inter.broker.protocol"] is not None:
            # Kafka: the inter-broker listener is the listener named as the protocol.
            self._inter_broker = v["security.inter.broker.protocol"].upper()
            if self._inter_broker not in names:
                raise ConfigError(
                    f"security.inter.broker.protocol is {self._inter_broker}, but no listener of that "
                    f"name is in listeners ({', '.join(names)}); name the listener with "
                    "inter.broker.listener.name instead", "security.inter.broker.protocol")
        elif inter_broker is not None:
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
            if name is not None and name not in advertised_names and not controller_only:
                raise ConfigError(
                    f"{setting} is {name}, which must also be in advertised.listeners", setting)

        if v["max.connections.per.ip"] == 0 and not v["max.connections.per.ip.overrides"]:
            raise ConfigError(
                "max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides is set",
                "max.connections.per.ip")

        self._derive_controller()
        self._derive_client_security()

        self._log_dirs = list(v["log.dirs"]) if v["log.dirs"] is not None else [v["log.dir"]]
        if not self._log_dirs or not all(self._log_dirs):
            raise ConfigError("at least one log directory must be defined via log.dirs or log.dir",
                              "log.dirs")

    def _derive_controller(self) -> None:
        """The roles of this node and where the controller quorum is, checked as Kafka's
        KafkaConfig (KafkaConfigValidator) checks a KRaft node. Without process.roles, a node runs
        broker,controller if controller.quorum.voters lists its node.id (or, without voters, if
        controller.quorum.bootstrap.servers is empty or names this node), else broker alone."""
        v = self._values
        voters = parse_voters(v["controller.quorum.voters"])
        servers = [(host.strip("[]"), int(port))
                   for host, _, port in (e.rpartition(":") for e in v["controller.quorum.bootstrap.servers"])]
        node_id = self.node_id
        if "process.roles" not in self._explicit:
            if voters:
                runs_controller = node_id in voters
            else:
                runs_controller = not servers or self._is_own_address(*servers[0])
            v["process.roles"] = ["broker", "controller"] if runs_controller else ["broker"]
        roles = v["process.roles"]
        ids = "{" + ", ".join(str(i) for i in voters) + "}"
        if "controller" in roles:
            if "broker" not in roles and not voters:
                raise ConfigError("If using process.roles, controller.quorum.voters must contain a "
                                  "parseable set of voters.", "controller.quorum.voters")
            if voters and node_id not in voters:
                raise ConfigError(
                    f"If process.roles contains the 'controller' role, the node id {node_id} must be "
                    f"included in the set of voters controller.quorum.voters={ids}",
                    "controller.quorum.voters")
            if not voters and servers and not self._is_own_address(*servers[0]):
                host, port = servers[0]
                raise ConfigError(
                    f"process.roles includes controller, but controller.quorum.bootstrap.servers names "
                    f"another node ({host}:{port}) and controller.quorum.voters is empty: list every "
                    "controller in controller.quorum.voters (id@host:port), or set process.roles to "
                    "broker", "process.roles")
        else:
            if not voters and not servers:
                raise ConfigError(
                    "If using process.roles, either controller.quorum.voters or "
                    "controller.quorum.bootstrap.servers must contain the set of bootstrap controllers",
                    "controller.quorum.bootstrap.servers")
            if node_id in voters:
                raise ConfigError(
                    f"If process.roles contains just the 'broker' role, the node id {node_id} must not be "
                    f"included in the set of voters controller.quorum.voters={ids}", "process.roles")
        self._voters = voters
        self._bootstrap_servers = servers
        address: tuple[str, int] | None = servers[0] if servers else next(iter(voters.values()), None)
        self._controller_address = address
        names = [e.name for e in self._listeners]
        self._controller_listeners = [n.upper() for n in v["controller.listener.names"]]
        controller_listeners = [n for n in self._controller_listeners if n in names]
        if not self.is_controller:
            if controller_listeners:
                raise ConfigError(
                    "controller.listener.names must not contain a value appearing in the 'listeners' "
                    "configuration when running KRaft with just the broker role", "controller.listener.names")
            return
        if any(n not in names for n in self._controller_listeners):
            raise ConfigError(
                "controller.listener.names must only contain values appearing in the 'listeners' "
                f"configuration when running the KRaft controller role (listeners: {', '.join(names)})",
                "controller.listener.names")
        if not controller_listeners and (len(voters) > 1 or not self.is_broker):
            # kafkalite's single controller may take registrations on its privileged listener; the
            # quorum's voters talk to each other on controller listeners only.
            raise ConfigError(
                "controller.listener.names must contain at least one value appearing in the 'listeners' "
                "configuration when running the KRaft controller role", "controller.listener.names")
        if not self.is_broker:
            if any(n not in self._controller_listeners for n in names):
                raise ConfigError(
                    "The listeners config must only contain KRaft controller listeners from "
                    "controller.listener.names when process.roles=controller", "listeners")
            return
        for name in self._controller_listeners:
            if name in (self._inter_broker, self._control_plane):
                raise ConfigError(
                    f"controller.listener.names must not name the inter-broker or control plane "
                    f"listener ({name})", "controller.listener.names")

    def _derive_client_security(self) -> None:
        """How this node connects to other brokers and to the controller (Kafka's
        interBrokerSecurityProtocol with sasl.mechanism.inter.broker.protocol, and the controller
        listener's protocol with sasl.mechanism.controller.protocol); ConfigError as Kafka's
        startup checks for a mechanism not enabled, an unsupported one, missing credentials."""
        v = self._values
        inter_mechanism = v["sasl.mechanism.inter.broker.protocol"]
        # The controller reaches the brokers on their privileged listener (Kafka's ZooKeeper-mode
        # ControllerChannelManager: the control plane listener, else the inter-broker one, with
        # the inter-broker mechanism).
        self._inter_broker_security = self._client_security(
            self._inter_broker, inter_mechanism, "sasl.mechanism.inter.broker.protocol")
        self._privileged_security = self._client_security(
            self.privileged_listener_name, inter_mechanism, "sasl.mechanism.inter.broker.protocol")
        if self._privileged_security.uses_sasl and inter_mechanism.startswith("SCRAM-"):
            # kafkalite's controller pushes the SCRAM credentials to the brokers over this very
            # listener (Kafka's brokers read them from the metadata log instead): a SCRAM login
            # there could never succeed before the credential it needs has arrived.
            raise ConfigError(
                f"sasl.mechanism.inter.broker.protocol is {inter_mechanism}, but the controller "
                f"reaches the brokers on listener {self.privileged_listener_name} "
                f"({self._privileged_security.protocol}) and sends them the SCRAM credentials "
                "there: use PLAIN, or set control.plane.listener.name to an SSL listener",
                "sasl.mechanism.inter.broker.protocol")
        if self._controller_listeners and self._controller_address is not None:
            name = self._controller_listeners[0]
            if name not in v["listener.security.protocol.map"]:
                if "listener.security.protocol.map" in self._explicit:
                    # Kafka's KafkaConfig.effectiveListenerSecurityProtocolMap.
                    raise ConfigError(
                        f"Controller listener with name {name} defined in controller.listener.names not "
                        "found in listener.security.protocol.map (an explicit security mapping for "
                        "each controller listener is required if listener.security.protocol.map is "
                        "non-empty, or if there are security protocols other than PLAINTEXT in use)",
                        "controller.listener.names")
                # Kafka: with the default map, a controller listener not in it is PLAINTEXT.
                v["listener.security.protocol.map"] = {**v["listener.security.protocol.map"],
                                                       name: "PLAINTEXT"}
            self._controller_security = self._client_security(
                name, v["sasl.mechanism.controller.protocol"], "sasl.mechanism.controller.protocol")
        else:  # kafkalite: the controller's privileged listener takes the registrations
            self._controller_security = self._privileged_security

    def _client_security(self, listener: str, mechanism: str, mechanism_setting: str) -> ClientSecurity:
        v = self._values
        protocol = v["listener.security.protocol.map"].get(listener)
        if protocol is None:
            raise ConfigError(f"listener {listener} is not in listener.security.protocol.map",
                              "listener.security.protocol.map")
        tls = view(TlsSettings, v) if protocol in TLS_PROTOCOLS else None
        identification = v["ssl.endpoint.identification.algorithm"]
        if protocol not in SASL_PROTOCOLS:
            return ClientSecurity(protocol, listener, tls, identification)
        if mechanism.upper() == "GSSAPI":
            raise ConfigError(
                f"{mechanism_setting} is GSSAPI (Kafka's default), which kafkalite does not support; "
                f"listener {listener} uses {protocol}: set {mechanism_setting} to one of "
                f"{', '.join(CLIENT_MECHANISMS)}", mechanism_setting)
        if mechanism not in CLIENT_MECHANISMS:
            raise ConfigError(
                f"{mechanism_setting} is {mechanism}, which kafkalite does not support (one of "
                f"{', '.join(CLIENT_MECHANISMS)})", mechanism_setting)
        listens = listener in {e.name for e in self._listeners}
        enabled = self._enabled_mechanisms(listener)
        if listens and mechanism not in enabled:
            # Kafka's KafkaConfig.validateValues for the inter-broker listener.
            raise ConfigError(
                f"{mechanism_setting} must be included in sasl.enabled.mechanisms when SASL is used "
                f"for inter-broker communication ({mechanism} is not enabled on listener {listener}: "
                f"{', '.join(enabled)})", mechanism_setting)
        key, text = self._jaas_config(listener, mechanism)
        if text is None:
            raise ConfigError(
                f"listener {listener} uses {protocol} with mechanism {mechanism}: this node needs its "
                f"own credentials to connect there; set listener.name.{listener.lower()}."
                f"{mechanism.lower()}.sasl.jaas.config (or sasl.jaas.config) to "
                f'{LOGIN_MODULES[mechanism]} required username="..." password="...";', key)
        try:
            module = parse_jaas_config(text)
        except JaasConfigError as e:
            raise ConfigError(f"invalid value for {key}: {e}", key) from None
        if not module.username or module.password is None:
            raise ConfigError(f"{key}: the login module {module.class_name} needs username and password "
                              "options (this node's credentials on other brokers and the controller)",
                              key)
        return ClientSecurity(protocol, listener, tls, identification, mechanism, module.username,
                              module.password)

    def _enabled_mechanisms(self, listener: str) -> list[str]:
        """listener.name.<l>.sasl.enabled.mechanisms if set, else sasl.enabled.mechanisms."""
        return list(self.listener_value(listener, "sasl.enabled.mechanisms"))

    def _jaas_config(self, listener: str, mechanism: str) -> tuple[str, str | None]:
        """(the key it came from, the JAAS text) of the listener's login module for ``mechanism``:
        listener.name.<listener>.<mechanism>.sasl.jaas.config, else sasl.jaas.config."""
        wanted = f"listener.name.{listener}.{mechanism}.sasl.jaas.config".lower()
        for key, text in self._jaas.items():
            if key.lower() == wanted:
                return key, text
        text = self._values["sasl.jaas.config"]
        return ("sasl.jaas.config" if text is not None else wanted), text

    @property
    def inter_broker_security(self) -> ClientSecurity:
        """How this broker connects to the other brokers' inter-broker listener (replica fetchers,
        transaction markers, AddPartitionsToTxn verification)."""
        return self._inter_broker_security

    @property
    def privileged_security(self) -> ClientSecurity:
        """How the controller connects to the brokers' privileged listener."""
        return self._privileged_security

    @property
    def controller_security(self) -> ClientSecurity:
        """How this broker connects to the controller (registration, heartbeats, ControllerLink,
        AlterPartition, producer id blocks)."""
        return self._controller_security

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
        try:
            parse_rules(v["ssl.principal.mapping.rules"])
        except ValueError as e:
            raise ConfigError(f"Invalid value {v['ssl.principal.mapping.rules']!r} for configuration "
                              f"ssl.principal.mapping.rules: {e}", "ssl.principal.mapping.rules") from None
        plain = any("PLAIN" in self.listener_value(e.name, "sasl.enabled.mechanisms")
                    for e in self._listeners if e.security_protocol in SASL_PROTOCOLS)
        if plain and v["sasl.plain.users.file"] is None:
            raise ConfigError(
                "SASL listeners with PLAIN need sasl.plain.users.file (username=password lines)",
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

