"""The broker's dynamic configuration (Kafka's DynamicBrokerConfig).

A setting's value is, the first that has one: this broker's dynamic config
(DYNAMIC_BROKER_CONFIG, AlterConfigs of its id), the cluster-wide default (DYNAMIC_DEFAULT_BROKER_CONFIG,
AlterConfigs of the broker named ''), the broker's configuration (STATIC_BROKER_CONFIG), the
setting's default (DEFAULT_CONFIG). Settings that stand for one value in several units (log.roll.ms
and log.roll.hours, ...) are resolved after that, the first synonym with a value winning, as Kafka
does: a static log.retention.ms outranks a dynamic log.retention.hours.

Which settings may change is each row's ``update_mode`` (common/config_def.py): read-only ones are
refused ("Cannot update these configs dynamically"), per-broker ones at the cluster default
("Cannot update these configs at default cluster level"). A change is checked on the broker that
took the request, against its own values, before anything changes: each value parsed, the thread
pools' half/double rule (Kafka's DynamicThreadPool), then every registered component
(``add_reconfigurable``: a common.reconfigurable.Reconfigurable) that applies one of the changed
settings validates the new values; a refusal is INVALID_REQUEST with the reason, as Kafka's
ConfigAdminManager answers (an APPEND or SUBTRACT of a setting that is not a list INVALID_CONFIG).
The controller stores the new set and pushes it to the brokers (controller/configs.py); ``update``
applies a pushed set: the new values are computed and handed to each component whose settings
changed.

Here too: the components kafkalite's log settings need (``LogDefaults``: topics without an
override follow new log.* defaults and message.max.bytes at once; ``CleanerThreads``: the log
cleaner restarts with its new threads; ``ProducerIdExpiration``; ``TransactionVerification``) and
the BROKER_LOGGER resource (``BrokerLoggers``: the levels of kafkalite's Python loggers under
Kafka's level names).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from kafkalite.common.config_def import OneOf, Range, Setting, view
from kafkalite.common.errors import ApiError, ConfigError
from kafkalite.common.reconfigurable import Reconfigurable
from kafkalite.controller.configs import Op, apply_ops
from kafkalite.network.socket_server import check_thread_count
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import incremental_alter_configs as iac
from kafkalite.storage.config import TOPIC_SETTINGS, CleanerConfig, LogConfig
from kafkalite.storage.log_manager import LogManager

from .config import SETTINGS_BY_NAME, BrokerConfig

log = logging.getLogger("kafkalite.server.dynamic_config")

# Kafka's DynamicThreadPool.ReconfigurableConfigs: a new count is at least 1, at least half and at
# most double the current (check_thread_count; num.network.threads is checked per listener by the
# SocketServer, as Kafka's DataPlaneAcceptor does).
THREAD_POOL_CONFIGS = ("num.io.threads", "num.replica.fetchers", "num.recovery.threads.per.data.dir",
                       "background.threads")


LISTENER_PREFIX = "listener.name."
# Listener overrides that may be set at the cluster default (Kafka's
# DynamicListenerConfig.ClusterLevelListenerConfigs); other listener.name.<l>.<setting> are per broker.
CLUSTER_LEVEL_LISTENER_CONFIGS = frozenset({"max.connections", "max.connection.creation.rate",
                                            "num.network.threads"})


def setting_for(name: str) -> tuple[Setting, str] | None:
    """The settings row of ``name`` (also of ``listener.name.<listener>.<setting>``, Kafka's
    listener override of a setting) and the name's update mode; None for an unknown name."""
    setting = SETTINGS_BY_NAME.get(name)
    if setting is not None:
        return setting, setting.update_mode
    if not name.startswith(LISTENER_PREFIX):
        return None
    listener, _, base = name[len(LISTENER_PREFIX):].partition(".")
    setting = SETTINGS_BY_NAME.get(base)
    if not listener or setting is None:
        return None
    mode = setting.update_mode
    if mode == "cluster-wide" and base not in CLUSTER_LEVEL_LISTENER_CONFIGS:
        mode = "per-broker"
    return setting, mode


_KAFKA_TYPES = {"int": "INT", "long": "LONG", "double": "DOUBLE"}


def parse_as_kafka(setting: Setting, name: str, text: str) -> Any:
    """``setting.parse(text)``, refused in the words of Kafka's ConfigDef (``Invalid value ten for
    configuration log.segment.bytes: Not a number of type INT``) where Kafka has words for it."""
    try:
        return setting.parse(text)
    except ConfigError as e:
        reason = str(e)
        raw = text.strip()
        if setting.type in _KAFKA_TYPES:
            try:
                number = float(raw) if setting.type == "double" else int(raw)
            except ValueError:
                reason = f"Not a number of type {_KAFKA_TYPES[setting.type]}"
            else:
                v = setting.validator
                if isinstance(v, Range) and v.low is not None and number < v.low:
                    reason = f"Value must be at least {v.low}"
                elif isinstance(v, Range) and v.high is not None and number > v.high:
                    reason = f"Value must be no more than {v.high}"
        elif setting.type == "bool":
            reason = "Expected value to be either true or false"
        elif isinstance(setting.validator, OneOf):
            reason = "String must be one of: " + ", ".join(str(c) for c in setting.validator.choices)
        raise ConfigError(f"Invalid value {text} for configuration {name}: {reason}", name) from None


def kafka_set(names: Sequence[str]) -> str:
    """A set of names as Kafka's messages print a Scala Set."""
    return "Set(" + ", ".join(names) + ")"


class DynamicBrokerConfig:
    def __init__(self, static: BrokerConfig) -> None:
        self.static = static
        self.node_id = static.node_id
        self._lock = threading.Lock()  # the sets and values, replaced whole
        self._apply_lock = threading.Lock()  # one update's reconfiguration at a time
        self.default_configs: dict[str, str] = {}  # the cluster default ('' broker), as stored
        self.broker_configs: dict[str, str] = {}  # this broker's, as stored
        self._values: dict[str, Any] = static.values
        self._reconfigurables: list[Reconfigurable] = []

    # --- what is in effect ------------------------------------------------------------------------

    @property
    def values(self) -> dict[str, Any]:
        """Every setting's value in effect (parsed), by name; do not change it."""
        return self._values

    def log_config(self) -> LogConfig:
        """The defaults of every log (the log.* settings in effect)."""
        return LogConfig.from_broker(self._values)

    def add_reconfigurable(self, component: Reconfigurable) -> None:
        """A component that applies some settings live (Kafka's addReconfigurable / addBrokerReconfigurable):
        every setting it names must be one that may change."""
        fixed = sorted(n for n in component.reconfigurable_configs
                       if (found := setting_for(n)) is None or found[1] == "read-only")
        if fixed:
            raise ValueError(f"{type(component).__name__} reconfigures settings that are not dynamic: "
                             f"{', '.join(fixed)}")
        self._reconfigurables.append(component)

    def _effective(self, default_configs: Mapping[str, str], broker_configs: Mapping[str, str],
                   lenient: bool) -> dict[str, Any]:
        values = self.static.values
        for props in (default_configs, broker_configs):  # the broker's own win
            for name, text in props.items():
                found = setting_for(name)
                if found is None or found[1] == "read-only":
                    if not lenient:
                        raise ApiError(E.INVALID_REQUEST, f"Unknown broker configs: Set({name})")
                    continue
                setting = found[0]
                try:
                    values[name] = parse_as_kafka(setting, name, text)
                except ConfigError as e:
                    if not lenient:
                        raise ApiError(E.INVALID_REQUEST, str(e)) from None
                    log.error("Dynamic config %s=%r not applied: %s", name, text, e)
        return values

    # --- a change asked for -------------------------------------------------------------------------

    def new_set(self, resource_name: str, ops: Sequence[Op], incremental: bool) -> dict[str, str]:
        """The complete new set of ``resource_name`` ('' or this broker's id) after ``ops``,
        checked as Kafka's DynamicBrokerConfig.validate (ApiError when refused)."""
        per_broker = resource_name != ""
        with self._lock:
            default_configs, broker_configs = dict(self.default_configs), dict(self.broker_configs)
        current = (broker_configs if per_broker else default_configs) if incremental else {}

        # Kafka's ConfigAdminManager.prepareIncrementalConfigs: APPEND and SUBTRACT of a LIST
        # setting start from its current dynamic value, else its default.
        for o in ops:
            if o.op in (iac.OP_APPEND, iac.OP_SUBTRACT):
                found = setting_for(o.name)
                if found is None:
                    raise ApiError(E.INVALID_CONFIG, f"Unknown config name: {o.name}")
                if found[0].type != "list":
                    verb = "append" if o.op == iac.OP_APPEND else "subtract"
                    raise ApiError(E.INVALID_CONFIG,
                                   f"Config value {verb} is not allowed for config key: {o.name}")

        def is_list(name: str) -> bool:
            found = setting_for(name)
            return found is not None and found[0].type == "list"

        def base(name: str) -> str | None:
            found = setting_for(name)
            return None if found is None else found[0].render(found[0].default)

        new = apply_ops(current, ops, is_list, base)
        values = {k: v for k, v in new.items() if v is not None}  # a null value removes the setting
        self.validate(values, per_broker, default_configs, broker_configs)
        return values

    def validate(self, props: Mapping[str, str], per_broker: bool,
                 default_configs: Mapping[str, str] | None = None,
                 broker_configs: Mapping[str, str] | None = None) -> None:
        """ApiError unless ``props`` may become the set of this broker (``per_broker``) or of the
        cluster default, checked in the order of Kafka's DynamicBrokerConfig.validate: names,
        update modes, values, the level (per broker or not), then every component concerned. As
        Kafka's ConfigAdminManager, every refusal is INVALID_REQUEST with the reason."""
        modes = {n: found[1] for n in props if (found := setting_for(n)) is not None}
        unknown = sorted(n for n in props if n not in modes)
        if unknown:  # Kafka keeps unknown names as custom configs; kafkalite would act on none
            raise ApiError(E.INVALID_REQUEST, f"Unknown broker configs: {kafka_set(unknown)}")
        fixed = sorted(n for n in props if modes[n] == "read-only")
        if fixed:
            raise ApiError(E.INVALID_REQUEST, f"Cannot update these configs dynamically: {kafka_set(fixed)}")
        with self._lock:
            default_configs = dict(self.default_configs if default_configs is None else default_configs)
            broker_configs = dict(self.broker_configs if broker_configs is None else broker_configs)
            old = self._values
        if per_broker:
            new = self._effective(default_configs, props, lenient=False)
        else:
            new = self._effective(props, broker_configs, lenient=False)
        if not per_broker:
            own = sorted(n for n in props if modes[n] == "per-broker")
            if own:
                raise ApiError(E.INVALID_REQUEST, "Cannot update these configs at default cluster level, "
                                                  f"broker id must be specified: {kafka_set(own)}")
        changed = {n for n in new.keys() | old.keys() if new.get(n) != old.get(n)}
        try:
            for name in THREAD_POOL_CONFIGS:
                if name in changed:
                    check_thread_count(name, old[name], new[name])
            for component in self._reconfigurables:
                if component.reconfigurable_configs & changed:
                    component.validate_reconfiguration(new)
        except ConfigError as e:
            raise ApiError(E.INVALID_REQUEST, str(e)) from None

    # --- a set pushed by the controller -----------------------------------------------------------

    def update(self, resource_name: str, props: Mapping[str, str]) -> set[str]:
        """Apply the controller's complete set of ``resource_name`` ('' or this broker's id; other
        brokers' are ignored): the names of the settings whose value changed. Each component whose
        settings changed is reconfigured; a failure is logged (the others still apply)."""
        if resource_name not in ("", str(self.node_id)):
            return set()
        with self._apply_lock:
            with self._lock:
                if resource_name == "":
                    self.default_configs = dict(props)
                else:
                    self.broker_configs = dict(props)
                old = self._values
                new = self._effective(self.default_configs, self.broker_configs, lenient=True)
                self._values = new
            changed = {n for n in new.keys() | old.keys() if new.get(n) != old.get(n)}
            if changed:
                log.info("Broker %d: dynamic configs of %r applied, changed: %s", self.node_id,
                         resource_name, ", ".join(sorted(changed)))
            for component in self._reconfigurables:
                if component.reconfigurable_configs & changed:
                    try:
                        component.reconfigure(old, new)
                    except Exception:
                        log.exception("Broker %d: %s could not apply the new configs", self.node_id,
                                      type(component).__name__)
        return changed


# --- the components of the log settings ------------------------------------------------------------

# Kafka's DynamicLogConfig.ReconfigurableConfigs: every broker setting that gives a topic setting
# its default (message.max.bytes included).
LOG_DEFAULT_CONFIGS = frozenset(s.name for t in TOPIC_SETTINGS for s in t.synonyms)


class LogDefaults:
    """The defaults of every log: topics without an override of a setting follow its new value
    at once (each log's LogConfig replaced; it applies from the next append or retention check)."""

    reconfigurable_configs = LOG_DEFAULT_CONFIGS

    def __init__(self, topic_configs: Any, log_manager: LogManager) -> None:
        self.topic_configs = topic_configs  # a TopicConfigCache
        self.log_manager = log_manager

    def validate_reconfiguration(self, new: Mapping[str, Any]) -> None:
        try:
            LogConfig.from_broker(new)
        except ValueError as e:
            raise ConfigError(str(e)) from None

    def reconfigure(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        self.topic_configs.defaults = LogConfig.from_broker(new)
        for tp, partition_log in self.log_manager.all_logs().items():
            partition_log.config = self.topic_configs.log_config(tp.topic)


class CleanerThreads:
    """The log cleaner: its threads stop after their round and start again with the new settings
    (Kafka's LogCleaner.reconfigure), so log.cleaner.threads grows or shrinks them."""

    reconfigurable_configs = frozenset({"log.cleaner.threads", "log.cleaner.backoff.ms",
                                        "log.cleaner.dedupe.buffer.size"})

    def __init__(self, log_manager: LogManager) -> None:
        self.log_manager = log_manager

    def validate_reconfiguration(self, new: Mapping[str, Any]) -> None:
        """Kafka's LogCleaner.validateReconfiguration, in its words."""
        threads, current = new["log.cleaner.threads"], self.log_manager.cleaner.config.num_threads
        if threads < 1:
            raise ConfigError("Log cleaner threads should be at least 1", "log.cleaner.threads")
        if threads < current // 2:
            raise ConfigError("Log cleaner threads cannot be reduced to less than half the current value "
                              f"{current}", "log.cleaner.threads")
        if threads > current * 2:
            raise ConfigError("Log cleaner threads cannot be increased to more than double the current value "
                              f"{current}", "log.cleaner.threads")

    def reconfigure(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        self.log_manager.cleaner.reconfigure(view(CleanerConfig, new))


class ProducerIdExpiration:
    """producer.id.expiration.ms (Kafka's ProducerStateManagerConfig): every log's producer state
    forgets idle producers by the new value from its next check."""

    reconfigurable_configs = frozenset({"producer.id.expiration.ms"})

    def __init__(self, log_manager: LogManager) -> None:
        self.log_manager = log_manager

    def validate_reconfiguration(self, new: Mapping[str, Any]) -> None:
        pass

    def reconfigure(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        self.log_manager.set_producer_id_expiration_ms(new["producer.id.expiration.ms"])


class TransactionVerification:
    """transaction.partition.verification.enable (KIP-890): the produce path's verifier."""

    reconfigurable_configs = frozenset({"transaction.partition.verification.enable"})

    def __init__(self, verifier: Any) -> None:
        self.verifier = verifier  # an AddPartitionsToTxnManager

    def validate_reconfiguration(self, new: Mapping[str, Any]) -> None:
        pass

    def reconfigure(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        self.verifier.enabled = new["transaction.partition.verification.enable"]


# --- BROKER_LOGGER ---------------------------------------------------------------------------------

ROOT_LOGGER = "root"
# Kafka's log levels (LoggingController) as Python levels; TRACE and ALL below DEBUG, OFF above all.
LEVELS = {"OFF": logging.CRITICAL + 10, "FATAL": logging.CRITICAL, "ERROR": logging.ERROR,
          "WARN": logging.WARNING, "INFO": logging.INFO, "DEBUG": logging.DEBUG, "TRACE": 5, "ALL": 1}
_BY_LEVEL = sorted(((v, k) for k, v in LEVELS.items()), reverse=True)
# What a level may be set to (Kafka's LogLevelConfig.VALID_LOG_LEVELS, case as written).
VALID_LEVELS = frozenset({"FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"})


def level_name(level: int) -> str:
    """Kafka's name of a Python level: the highest of Kafka's levels at or below it."""
    for value, name in _BY_LEVEL:
        if level >= value:
            return name
    return "ALL"


# Loggers kafkalite names as Kafka does, listed with its own: the authorizer's audit log.
KAFKA_LOGGERS = frozenset({"kafka.authorizer.logger"})


class BrokerLoggers:
    """The BROKER_LOGGER resource of this broker: ``root``, every ``kafkalite.*`` logger and
    Kafka's ``kafka.authorizer.logger`` (KAFKA_LOGGERS), each
    with its effective level (DYNAMIC_BROKER_LOGGER_CONFIG). IncrementalAlterConfigs SETs a level
    (Kafka's names) or DELETEs one (the logger then follows its parent; root's cannot be removed).
    Levels are this process's: they last until the broker stops, as in Kafka."""

    def __init__(self, prefix: str = "kafkalite") -> None:
        self.prefix = prefix

    def names(self) -> list[str]:
        # Parents of loggers (kafkalite.server) are loggers too, though Python makes them on first use.
        known = list(logging.root.manager.loggerDict)
        return [ROOT_LOGGER] + sorted(n for n in known if n == self.prefix or n.startswith(self.prefix + ".")
                                      or n in KAFKA_LOGGERS)

    @staticmethod
    def _logger(name: str) -> logging.Logger:
        return logging.getLogger() if name == ROOT_LOGGER else logging.getLogger(name)

    def levels(self, keys: Sequence[str] | None = None) -> dict[str, str]:
        names = self.names() if keys is None else [k for k in self.names() if k in set(keys)]
        return {n: level_name(self._logger(n).getEffectiveLevel()) for n in names}

    def alter(self, ops: Sequence[Op], validate_only: bool) -> None:
        """Check every op first (Kafka's RuntimeLoggerManager.validateLogLevelConfigs), then apply."""
        known = set(self.names())
        changes: list[tuple[logging.Logger, int]] = []
        for o in ops:
            if o.op in (iac.OP_SET, iac.OP_DELETE) and o.name not in known:
                raise ApiError(E.INVALID_CONFIG, f"Logger {o.name} does not exist!")
            if o.op == iac.OP_SET:
                if o.value not in VALID_LEVELS:
                    valid = ", ".join(sorted(VALID_LEVELS))
                    raise ApiError(E.INVALID_CONFIG,
                                   f"Cannot set the log level of {o.name} to {o.value} as it is not a "
                                   f"supported log level. Valid log levels are {valid}")
                changes.append((self._logger(o.name), LEVELS[o.value]))
            elif o.op == iac.OP_DELETE:
                if o.name == ROOT_LOGGER:
                    raise ApiError(E.INVALID_REQUEST,
                                   f"Removing the log level of the {ROOT_LOGGER} logger is not allowed")
                changes.append((self._logger(o.name), logging.NOTSET))
            elif o.op in (iac.OP_APPEND, iac.OP_SUBTRACT):
                op_name = iac.OP_NAMES[o.op]
                raise ApiError(E.INVALID_REQUEST,
                               f"{op_name} operation is not allowed for the BROKER_LOGGER resource")
            else:
                raise ApiError(E.INVALID_REQUEST,
                               f"Unknown operation type {o.op} is not allowed for the BROKER_LOGGER resource")
        if validate_only:
            return
        for logger, new_level in changes:
            logger.setLevel(new_level)
            log.warning("Updated the log level of %s to %s", logger.name,
                        level_name(new_level) if new_level else "its parent's")
