"""DynamicBrokerConfig without a cluster: precedence of the dynamic sets over the static
configuration, the checks of a change (names, update modes, values, the thread pools' rule, every
component concerned before any applies), the pushed sets applied to the registered components, and
BROKER_LOGGER's levels."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import pytest

from kafkalite.common.errors import ApiError, ConfigError
from kafkalite.controller.configs import Op
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import incremental_alter_configs as iac
from kafkalite.server.config import SETTINGS, BrokerConfig
from kafkalite.server.dynamic_config import (
    LOG_DEFAULT_CONFIGS,
    BrokerLoggers,
    DynamicBrokerConfig,
    check_thread_count,
    setting_for,
)

SET, DELETE, APPEND, SUBTRACT = iac.OP_SET, iac.OP_DELETE, iac.OP_APPEND, iac.OP_SUBTRACT


def dynamic(**static: str) -> DynamicBrokerConfig:
    props = {"node.id": "1", "log.dirs": "/tmp/unused", **{k.replace("_", "."): v for k, v in static.items()}}
    return DynamicBrokerConfig(BrokerConfig(props))


def refused(call: Any) -> ApiError:
    with pytest.raises(ApiError) as e:
        call()
    return e.value


class Recorder:
    """A component that applies some settings, refusing a value when told to."""

    def __init__(self, names: set[str], refuse: Any = None) -> None:
        self.reconfigurable_configs = frozenset(names)
        self.refuse = refuse
        self.validated: list[Mapping[str, Any]] = []
        self.applied: list[tuple[Any, Any]] = []

    def validate_reconfiguration(self, new: Mapping[str, Any]) -> None:
        self.validated.append(new)
        if self.refuse is not None and self.refuse(new):
            raise ConfigError("refused by the test component", next(iter(self.reconfigurable_configs)))

    def reconfigure(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        self.applied.append((old, new))


# --- precedence ------------------------------------------------------------------------------------


def test_broker_over_default_over_static_over_default_config():
    d = dynamic(log_segment_bytes="2000")
    assert d.values["log.segment.bytes"] == 2000  # static
    assert d.values["log.retention.bytes"] == -1  # Kafka's default
    d.update("", {"log.segment.bytes": "3000", "log.retention.bytes": "500"})
    assert (d.values["log.segment.bytes"], d.values["log.retention.bytes"]) == (3000, 500)
    d.update("1", {"log.segment.bytes": "4000"})
    assert (d.values["log.segment.bytes"], d.values["log.retention.bytes"]) == (4000, 500)
    d.update("1", {})  # the broker's set emptied: the cluster default again
    assert d.values["log.segment.bytes"] == 3000
    d.update("", {})
    assert d.values["log.segment.bytes"] == 2000


def test_another_brokers_set_is_ignored():
    d = dynamic()
    assert d.update("2", {"log.segment.bytes": "4000"}) == set()
    assert d.values["log.segment.bytes"] == 1073741824 and d.broker_configs == {}


def test_synonyms_resolve_after_the_sources_as_kafka():
    """A static log.retention.ms outranks a dynamic log.retention.hours: each name is resolved by
    source first, then the first synonym with a value gives the topic default."""
    d = dynamic(log_retention_ms="60000")
    d.update("", {"log.retention.hours": "1"})
    assert d.log_config().retention_ms == 60000
    d = dynamic()
    d.update("", {"log.retention.hours": "2"})
    assert d.log_config().retention_ms == 2 * 3600 * 1000
    d.update("1", {"log.retention.ms": "1234"})
    assert d.log_config().retention_ms == 1234


# --- checks of a change ----------------------------------------------------------------------------


def test_read_only_refused_in_kafkas_words():
    e = refused(lambda: dynamic().new_set("1", [Op("log.dirs", SET, "/x"), Op("node.id", SET, "3")], True))
    assert e.code == E.INVALID_REQUEST
    assert e.message == "Cannot update these configs dynamically: Set(log.dirs, node.id)"


def test_per_broker_setting_refused_at_the_cluster_default():
    name = "listener.name.plaintext.log.retention.ms"  # a listener override: per-broker (Kafka)
    assert setting_for(name)[1] == "per-broker"
    e = refused(lambda: dynamic().new_set("", [Op(name, SET, "5")], True))
    assert e.code == E.INVALID_REQUEST
    assert e.message == ("Cannot update these configs at default cluster level, broker id must be "
                         f"specified: Set({name})")
    assert dynamic().new_set("1", [Op(name, SET, "5")], True) == {name: "5"}


def test_every_per_broker_row_is_refused_at_the_default():
    """Whatever the areas mark per-broker (the network's SSL settings, ...) is refused at ''."""
    for s in SETTINGS:
        if s.update_mode == "per-broker":
            assert refused(lambda s=s: dynamic().validate({s.name: "x"}, False)).code == E.INVALID_REQUEST


def test_invalid_and_unknown_broker_values_are_invalid_request():
    """As Kafka's ConfigAdminManager: a broker change DynamicBrokerConfig cannot validate is
    INVALID_REQUEST with the reason (KAFKA-13609); topics' are INVALID_CONFIG (the controller's)."""
    e = refused(lambda: dynamic().new_set("", [Op("log.segment.bytes", SET, "ten")], True))
    assert (e.code, e.message) == (
        E.INVALID_REQUEST, "Invalid value ten for configuration log.segment.bytes: Not a number of type INT")
    e = refused(lambda: dynamic().new_set("", [Op("log.segment.bytes", SET, "10")], True))
    assert e.message == "Invalid value 10 for configuration log.segment.bytes: Value must be at least 14"
    e = refused(lambda: dynamic().new_set("", [Op("log.cleaner.min.cleanable.ratio", SET, "2")], True))
    assert e.message.endswith("Value must be no more than 1")
    e = refused(lambda: dynamic().new_set("", [Op("unclean.leader.election.enable", SET, "yes")], True))
    assert e.message.endswith(": Expected value to be either true or false")
    e = refused(lambda: dynamic().new_set("", [Op("log.cleanup.policy", SET, "shred")], True))
    assert e.message.startswith(
        "Invalid value shred for configuration log.cleanup.policy: String must be one of")
    e = refused(lambda: dynamic().new_set("", [Op("no.such.setting", SET, "1")], True))
    assert (e.code, e.message) == (E.INVALID_REQUEST, "Unknown broker configs: Set(no.such.setting)")


def test_append_and_subtract_only_on_lists():
    d = dynamic()
    assert d.new_set("", [Op("log.cleanup.policy", APPEND, "compact")], True) == {
        "log.cleanup.policy": "delete,compact"}
    d.update("", {"log.cleanup.policy": "delete,compact"})
    assert d.new_set("", [Op("log.cleanup.policy", SUBTRACT, "delete")], True) == {
        "log.cleanup.policy": "compact"}
    e = refused(lambda: d.new_set("", [Op("log.segment.bytes", APPEND, "1")], True))
    assert (e.code, e.message) == (E.INVALID_CONFIG,
                                   "Config value append is not allowed for config key: log.segment.bytes")
    e = refused(lambda: d.new_set("", [Op("no.such", SUBTRACT, "1")], True))
    assert (e.code, e.message) == (E.INVALID_CONFIG, "Unknown config name: no.such")


def test_alter_configs_replaces_the_whole_set_incremental_keeps_the_rest():
    d = dynamic()
    d.update("", {"log.segment.bytes": "3000", "log.retention.bytes": "500"})
    assert d.new_set("", [Op("log.retention.bytes", SET, "7")], False) == {"log.retention.bytes": "7"}
    assert d.new_set("", [Op("log.retention.bytes", SET, "7")], True) == {
        "log.segment.bytes": "3000", "log.retention.bytes": "7"}
    assert d.new_set("", [Op("log.retention.bytes", DELETE, None)], True) == {"log.segment.bytes": "3000"}


def test_duplicate_keys_refused():
    e = refused(lambda: dynamic().new_set("", [Op("log.segment.bytes", SET, "3000"),
                                               Op("log.segment.bytes", DELETE, None)], True))
    assert (e.code, e.message) == (E.INVALID_REQUEST, "Error due to duplicate config keys")


@pytest.mark.parametrize("old,new,ok", [(8, 4, True), (8, 16, True), (8, 3, False), (8, 17, False),
                                        (1, 2, True), (1, 0, False), (3, 1, True), (5, 2, True)])
def test_thread_pool_half_double_rule(old, new, ok):
    if ok:
        check_thread_count("num.io.threads", old, new)
        return
    with pytest.raises(ConfigError) as e:
        check_thread_count("num.io.threads", old, new)
    assert str(e.value).startswith(f"Dynamic thread count update validation failed for num.io.threads={new}")


def test_every_component_concerned_validates_before_any_applies():
    d = dynamic()
    willing = Recorder({"log.segment.bytes"})
    unwilling = Recorder({"log.segment.bytes"}, refuse=lambda new: new["log.segment.bytes"] == 5000)
    bystander = Recorder({"log.cleaner.threads"})
    for r in (willing, unwilling, bystander):
        d.add_reconfigurable(r)
    e = refused(lambda: d.new_set("", [Op("log.segment.bytes", SET, "5000")], True))
    assert (e.code, e.message) == (E.INVALID_REQUEST, "refused by the test component")
    assert len(willing.validated) == 1 and bystander.validated == []  # only those concerned
    assert willing.applied == unwilling.applied == [] and d.values["log.segment.bytes"] != 5000
    assert d.new_set("", [Op("log.segment.bytes", SET, "6000")], True) == {"log.segment.bytes": "6000"}
    assert willing.applied == []  # checking applies nothing: the controller's push does
    changed = d.update("", {"log.segment.bytes": "6000"})
    assert changed == {"log.segment.bytes"}
    (old, new), = willing.applied
    assert (old["log.segment.bytes"], new["log.segment.bytes"]) == (1073741824, 6000)
    assert bystander.applied == []


def test_a_component_naming_a_read_only_setting_is_refused():
    with pytest.raises(ValueError, match=r"node\.id"):
        dynamic().add_reconfigurable(Recorder({"node.id"}))


def test_log_defaults_are_the_topic_settings_synonyms_and_all_dynamic():
    assert "message.max.bytes" in LOG_DEFAULT_CONFIGS and "log.retention.hours" in LOG_DEFAULT_CONFIGS
    assert all(setting_for(n)[1] == "cluster-wide" for n in LOG_DEFAULT_CONFIGS)


# --- BROKER_LOGGER ---------------------------------------------------------------------------------


@pytest.fixture
def test_logger():
    logger = logging.getLogger("kafkalite.test.dynamic_config")
    before = logger.level
    yield logger
    logger.setLevel(before)


def test_loggers_listed_with_kafkas_level_names(test_logger):
    loggers = BrokerLoggers()
    test_logger.setLevel(logging.WARNING)
    levels = loggers.levels()
    assert "root" in levels and levels["kafkalite.test.dynamic_config"] == "WARN"
    assert all(n in ("root", "kafka.authorizer.logger") or n.startswith("kafkalite") for n in levels)
    assert loggers.levels(["kafkalite.test.dynamic_config"]) == {"kafkalite.test.dynamic_config": "WARN"}


def test_logger_levels_set_deleted_and_refused(test_logger):
    loggers = BrokerLoggers()
    name = test_logger.name
    loggers.alter([Op(name, SET, "TRACE")], validate_only=False)
    assert test_logger.level == 5 and loggers.levels([name])[name] == "TRACE"
    e = refused(lambda: loggers.alter([Op(name, SET, "trace")], False))  # Kafka's names, as written
    assert e.message == (f"Cannot set the log level of {name} to trace as it is not a supported log level. "
                         "Valid log levels are DEBUG, ERROR, FATAL, INFO, TRACE, WARN")
    loggers.alter([Op(name, SET, "ERROR")], validate_only=True)
    assert test_logger.level == 5  # validate_only changes nothing
    loggers.alter([Op(name, DELETE, None)], validate_only=False)
    assert test_logger.level == logging.NOTSET  # follows its parent again
    e = refused(lambda: loggers.alter([Op(name, SET, "LOUD")], False))
    assert e.code == E.INVALID_CONFIG and "to LOUD as it is not a supported log level" in e.message
    e = refused(lambda: loggers.alter([Op("kafkalite.no.such.logger.here", SET, "INFO")], False))
    assert (e.code, e.message) == (E.INVALID_CONFIG, "Logger kafkalite.no.such.logger.here does not exist!")
    e = refused(lambda: loggers.alter([Op("root", DELETE, None)], False))
    assert e.code == E.INVALID_REQUEST and "root" in e.message
    e = refused(lambda: loggers.alter([Op(name, APPEND, "INFO")], False))
    assert (e.code, e.message) == (E.INVALID_REQUEST,
                                   "APPEND operation is not allowed for the BROKER_LOGGER resource")
    # One bad op refuses them all: the good one before it is not applied.
    e = refused(lambda: loggers.alter([Op(name, SET, "ERROR"), Op(name + ".x.y.z", SET, "INFO")], False))
    assert test_logger.level == logging.NOTSET


# --- what DescribeConfigs shows --------------------------------------------------------------------


def test_described_sources_synonyms_and_listener_overrides():
    from kafkalite.protocol.messages import describe_configs as dc
    from kafkalite.server.handlers.configs import ConfigDescriber

    d = dynamic(log_retention_hours="100")
    override = "listener.name.plaintext.log.retention.ms"
    d.update("", {"log.retention.hours": "50", "log.segment.bytes": "5000"})
    d.update("1", {"log.retention.hours": "25", override: "9"})
    describer = ConfigDescriber(d.static, d)
    entries = {e.name: e for e in describer.broker_entries(None, synonyms=True)}
    hours = entries["log.retention.hours"]
    assert (hours.value, hours.config_source, hours.read_only) == (
        "25", dc.SOURCE_DYNAMIC_BROKER_CONFIG, False)
    assert [(s.source, s.value) for s in hours.synonyms] == [
        (dc.SOURCE_DYNAMIC_BROKER_CONFIG, "25"), (dc.SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG, "50"),
        (dc.SOURCE_STATIC_BROKER_CONFIG, "100"), (dc.SOURCE_DEFAULT_CONFIG, "168")]
    shown = entries[override]
    assert (shown.value, shown.config_source) == ("9", dc.SOURCE_DYNAMIC_BROKER_CONFIG)
    assert entries["node.id"].read_only and entries["node.id"].config_source == dc.SOURCE_STATIC_BROKER_CONFIG
    # The cluster default lists what is set there, without this broker's own values.
    defaults = {e.name: e for e in describer.default_entries(None, synonyms=True)}
    assert sorted(defaults) == ["log.retention.hours", "log.segment.bytes"]
    assert [s.source for s in defaults["log.retention.hours"].synonyms] == [
        dc.SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG, dc.SOURCE_STATIC_BROKER_CONFIG, dc.SOURCE_DEFAULT_CONFIG]
    # A topic without overrides: the broker's value in effect, with where it comes from.
    topic = {e.name: e for e in describer.topic_entries({}, synonyms=True)}
    assert topic["retention.ms"].value == str(25 * 3600 * 1000)
    assert topic["retention.ms"].config_source == dc.SOURCE_DYNAMIC_BROKER_CONFIG
    assert topic["segment.bytes"].value == "5000"
    assert topic["segment.bytes"].config_source == dc.SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG
