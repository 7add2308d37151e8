"""Broker settings: Kafka's defaults, properties parsing, validation, cross-checks, generated docs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalite.common.endpoints import Endpoint, parse_listener
from kafkalite.common.metadata_version import is_metadata_version
from kafkalite.common.properties import format_properties, parse_properties
from kafkalite.server.config import (
    GROUPS,
    SETTINGS,
    SETTINGS_BY_NAME,
    BrokerConfig,
    ConfigError,
    lookup,
)
from kafkalite.server.config_docs import render_markdown
from kafkalite.server.kafka_config_names import KAFKA_BROKER_CONFIGS, is_kafka_config

ROOT = Path(__file__).resolve().parents[2]
PLAIN = {"PLAINTEXT": "PLAINTEXT", "INTERNAL": "PLAINTEXT", "SSL": "SSL"}


def cfg(**props: str) -> BrokerConfig:
    """A config from keyword props, ``_`` standing for ``.``; node.id defaults to 1."""
    named = {k.replace("_", "."): v for k, v in props.items()}
    named.setdefault("node.id", "1")
    return BrokerConfig(named)


def error_for(props: dict[str, object]) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        BrokerConfig({"node.id": "1", **props})
    return info.value


# --- the table -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "default"),
    [
        ("num.network.threads", 3),
        ("num.io.threads", 8),
        ("queued.max.requests", 500),
        ("queued.max.request.bytes", -1),
        ("socket.send.buffer.bytes", 100 * 1024),
        ("socket.receive.buffer.bytes", 100 * 1024),
        ("socket.request.max.bytes", 100 * 1024 * 1024),
        ("socket.listen.backlog.size", 50),
        ("connections.max.idle.ms", 10 * 60 * 1000),
        ("max.connections", 2**31 - 1),
        ("max.connections.per.ip", 2**31 - 1),
        ("max.connections.per.ip.overrides", {}),
        ("listeners", ["PLAINTEXT://:9092"]),
        ("advertised.listeners", None),
        ("log.dir", "/tmp/kafka-logs"),
        ("log.dirs", None),
        ("broker.rack", None),
        ("controller.quorum.bootstrap.servers", []),
        ("controller.socket.timeout.ms", 30000),
        ("broker.session.timeout.ms", 9000),
        ("broker.heartbeat.interval.ms", 2000),
        ("default.replication.factor", 1),
        ("num.partitions", 1),
        ("delete.topic.enable", True),
        ("inter.broker.listener.name", None),
        ("control.plane.listener.name", None),
        ("ssl.client.auth", "none"),
        ("ssl.enabled.protocols", ["TLSv1.2", "TLSv1.3"]),
        ("connection.failed.authentication.delay.ms", 100),
    ],
)
def test_defaults_match_kafka(name: str, default: object) -> None:
    assert SETTINGS_BY_NAME[name].default == default
    assert SETTINGS_BY_NAME[name].kafka
    assert cfg().get(name) == default


def test_kafkalite_specific_defaults() -> None:
    c = cfg()
    assert c["process.roles"] == ["broker", "controller"] and c.is_controller
    assert c["auto.create.topics.enable"] is True  # Kafka's default
    assert c["metrics.port"] == -1 and c["metrics.host"] == "127.0.0.1"
    assert c["request.log.dir"] is None and c["cluster.id"] is None
    assert c["listener.security.protocol.map"] == {
        "PLAINTEXT": "PLAINTEXT", "SSL": "SSL", "SASL_PLAINTEXT": "SASL_PLAINTEXT", "SASL_SSL": "SASL_SSL"}
    assert c["request.log.segment.bytes"] == 104857600 and c["request.log.roll.ms"] == 3600000
    assert c["request.log.format"] == "json"
    assert {s.name for s in SETTINGS if not s.kafka} == {
        "metrics.port", "metrics.host", "request.log.dir", "request.log.segment.bytes",
        "request.log.roll.ms", "request.log.format", "cluster.id", "sasl.plain.users.file",
        "threads.sched.batch", "log.storage", "share.auto.offset.reset"}
    assert c["log.storage"] == "files" and not c.memory_storage
    assert c["threads.sched.batch"] is True and c.sched_batch
    # Kafka's JKS and GSSAPI defaults name what kafkalite does not read or speak.
    assert c["ssl.keystore.type"] == c["ssl.truststore.type"] == "PEM"
    assert c["sasl.enabled.mechanisms"] == ["PLAIN"]


def test_table_is_well_formed() -> None:
    names = [n for s in SETTINGS for n in s.names]
    assert len(names) == len(set(names))
    groups = {g for g, _ in GROUPS}
    for s in SETTINGS:
        assert s.group in groups, s.name
        assert s.doc.endswith(".") and s.doc[0].isupper(), s.name
        if s.default is not None:  # every default survives its own rendering and validation
            assert s.parse(s.render(s.default)) == s.default, s.name


def test_values_and_explicit() -> None:
    c = cfg(num_io_threads="4")
    assert set(c.values) == set(SETTINGS_BY_NAME)
    assert c.values["num.io.threads"] == 4
    assert c.explicit == {"node.id", "num.io.threads"}
    c.values["num.io.threads"] = 99  # a copy
    assert c["num.io.threads"] == 4
    with pytest.raises(KeyError):
        c.get("no.such.setting")


# --- .properties ---------------------------------------------------------------------------------


def test_properties_comments_separators_whitespace() -> None:
    text = (
        "# a comment\n"
        "   ! another comment\n"
        "\n"
        "a=1\n"
        "b : 2\n"
        "c 3\n"
        "  d   =   spaced value   \n"
        "e\t\tf\n"
        "g=\n"
        "h\n"
        "i==x\n"
        "j=x=y:z\n"
        "a=later\n"
    )
    assert parse_properties(text) == {
        "a": "later", "b": "2", "c": "3", "d": "spaced value", "e": "f", "g": "", "h": "", "i": "=x",
        "j": "x=y:z",
    }


def test_properties_continuation_and_escapes() -> None:
    text = (
        "listeners=PLAINTEXT://:9092,\\\n"
        "          INTERNAL://:9093\n"
        "path=c:\\\\tmp\\\\logs\n"
        "key\\ with\\=odd\\:chars = v\n"
        "tab=a\\tb\n"
        "uni=\\u00e9\\ud83d\\ude00\n"
        "even=ends with two\\\\\n"
        "next=line\r\n"
        "cr=only\r"
        "# comment \\\n"
        "notcontinued=yes\n"
        "eof=trailing\\"
    )
    assert parse_properties(text) == {
        "listeners": "PLAINTEXT://:9092,INTERNAL://:9093",
        "path": "c:\\tmp\\logs",
        "key with=odd:chars": "v",
        "tab": "a\tb",
        "uni": "\u00e9\U0001f600",
        "even": "ends with two\\",
        "next": "line",
        "cr": "only",
        "notcontinued": "yes",
        "eof": "trailing",
    }


def test_properties_bad_unicode_escape() -> None:
    with pytest.raises(ConfigError):
        parse_properties("a=\\u12\n")


_text = st.text(max_size=20)  # no surrogates by default


@given(st.dictionaries(_text, _text, max_size=8))
def test_properties_round_trip(props: dict[str, str]) -> None:
    assert parse_properties(format_properties(props)) == props


# --- sources -------------------------------------------------------------------------------------


def test_from_sources_overrides_beat_file(tmp_path: Path) -> None:
    path = tmp_path / "server.properties"
    path.write_text("broker.id=3\nnum.io.threads=2\nlog.dirs=/a, /b\nnum.partitions=5\n")
    c = BrokerConfig.from_sources(
        str(path), ["num.io.threads=6", "node.id = 7"], extra={"num.partitions": "9", "num.io.threads": "4"})
    assert c.node_id == 7
    assert c["num.io.threads"] == 6
    assert c["num.partitions"] == 9
    assert c.log_dirs == ["/a", "/b"]
    assert c.explicit == {"node.id", "num.io.threads", "log.dirs", "num.partitions"}


def test_from_sources_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        BrokerConfig.from_sources(str(tmp_path / "missing.properties"), [])
    with pytest.raises(ConfigError, match="expected key=value"):
        BrokerConfig.from_sources(None, ["node.id"])
    with pytest.raises(ConfigError, match=r"unknown setting 'foo\.bar'"):
        BrokerConfig.from_sources(None, ["node.id=1", "foo.bar=1"])


def test_broker_id_alias() -> None:
    c = BrokerConfig({"broker.id": "5"})
    assert c.node_id == 5 and c["node.id"] == 5 and c["broker.id"] == 5
    assert c.explicit == {"node.id"}
    assert lookup("broker.id") is SETTINGS_BY_NAME["node.id"]
    assert BrokerConfig({"broker.id": "5", "node.id": "5"}).node_id == 5
    with pytest.raises(ConfigError, match=r"broker\.id") as info:
        BrokerConfig({"broker.id": "5", "node.id": "6"})
    assert info.value.setting == "node.id"


def test_node_id_required() -> None:
    with pytest.raises(ConfigError, match=r"node\.id"):
        BrokerConfig({})
    with pytest.raises(ConfigError, match=r"node\.id"):
        BrokerConfig({"node.id": "-1"})


# --- validation ----------------------------------------------------------------------------------


def test_unknown_setting() -> None:
    e = error_for({"foo.bar": "1"})
    assert "unknown setting 'foo.bar'" in str(e) and e.setting == "foo.bar"
    assert "did you mean 'num.io.threads'" in str(error_for({"num.io.thread": "1"}))


@pytest.mark.parametrize(
    ("name", "raw", "reason"),
    [
        ("num.io.threads", "x", "not an integer"),
        ("num.io.threads", "1.5", "not an integer"),
        ("num.io.threads", "0", "at least 1"),
        ("num.network.threads", "2147483648", "out of range"),
        ("connections.max.idle.ms", "9223372036854775808", "out of range"),
        ("max.connections", "-1", "at least 0"),
        ("delete.topic.enable", "yes", "true or false"),
        ("process.roles", "broker,zookeeper", "not one of"),
        ("process.roles", "broker,broker", "duplicate"),
        ("inter.broker.protocol.version", "4.7", "metadata version"),
        ("metrics.port", "70000", "between -1 and 65535"),
        ("max.connections.per.ip.overrides", "host:x", "not an integer"),
        ("max.connections.per.ip.overrides", "host:-2", "at least 0"),
        ("max.connections.per.ip.overrides", "host", "key:value"),
        ("listener.security.protocol.map", "PLAINTEXT:TLS", "unknown security protocol"),
        ("listener.security.protocol.map", "A:PLAINTEXT,a:SSL", "more than once"),
        ("controller.quorum.bootstrap.servers", "localhost", "host:port"),
        ("cluster.id", "short", "22 characters"),
        ("log.dirs", "/a,,/b", "empty entry"),
    ],
)
def test_invalid_values_name_the_setting(name: str, raw: str, reason: str) -> None:
    e = error_for({name: raw})
    assert f"invalid value {raw!r} for {name}" in str(e)
    assert reason in str(e)
    assert e.setting == name


def test_type_parsing() -> None:
    c = cfg(
        num_io_threads=" +12 ",
        delete_topic_enable="FALSE",
        log_dirs=" /a ,/b,  /c ",
        max_connections_per_ip_overrides="hostName:100, 127.0.0.1 : 200,::1:3",
        listener_security_protocol_map="plaintext:plaintext,internal:PlainText",
        listeners="PLAINTEXT://:9092,INTERNAL://:9093",
        controller_quorum_bootstrap_servers="localhost:9093,[::1]:9094",
        inter_broker_protocol_version="3.9.1",
        broker_rack="",
    )
    assert c["num.io.threads"] == 12
    assert c["delete.topic.enable"] is False
    assert c.log_dirs == ["/a", "/b", "/c"]
    assert c["max.connections.per.ip.overrides"] == {"hostName": 100, "127.0.0.1": 200, "::1": 3}
    assert c.security_protocol_map == {"PLAINTEXT": "PLAINTEXT", "INTERNAL": "PLAINTEXT"}
    assert c["controller.quorum.bootstrap.servers"] == ["localhost:9093", "[::1]:9094"]
    assert c["broker.rack"] is None  # empty text unsets a setting whose default is null
    assert cfg(process_roles=" broker , controller ").is_controller


def test_typed_values_are_accepted() -> None:
    c = BrokerConfig({"node.id": 2, "delete.topic.enable": False, "log.dirs": ["/x"],
                      "max.connections.per.ip.overrides": {"h": 1}})
    assert c.node_id == 2 and c["delete.topic.enable"] is False and c.log_dirs == ["/x"]
    assert c["max.connections.per.ip.overrides"] == {"h": 1}
    assert "not an integer" not in str(error_for({"num.io.threads": True}))  # a bool is not an int
    assert "expected a value of type int" in str(error_for({"num.io.threads": True}))
    assert "expected a value of type list" in str(error_for({"log.dirs": [1]}))


def test_metadata_versions_as_kafka_reads_them() -> None:
    assert all(is_metadata_version(v) for v in ("3.9.1", "3.9-IV0", "0.10.2.1", "2.8"))
    assert not any(is_metadata_version(v) for v in ("3.9-IV1", "4.0", "x", "0.10.2-IV1"))
    for ok in ("2.8", "3.0", "3.3-IV3", "3.7-IV4", "3.9", "0.8.2"):
        assert cfg(inter_broker_protocol_version=ok)["inter.broker.protocol.version"] == ok


# --- listeners and cross-checks ------------------------------------------------------------------


def test_parse_listener() -> None:
    assert parse_listener("PLAINTEXT://localhost:9092", PLAIN) == Endpoint(
        "PLAINTEXT", "localhost", 9092, "PLAINTEXT")
    assert parse_listener(" internal://:0 ", PLAIN) == Endpoint("INTERNAL", "", 0, "PLAINTEXT")
    e = parse_listener("SSL://[::1]:9093", PLAIN)
    assert e == Endpoint("SSL", "::1", 9093, "SSL") and str(e) == "SSL://[::1]:9093"
    assert str(parse_listener("PLAINTEXT://0.0.0.0:1", PLAIN)) == "PLAINTEXT://0.0.0.0:1"
    for bad in ("PLAINTEXT://host", "PLAINTEXT:/host:1", "://h:1", "PLAINTEXT://h:-1", "PLAINTEXT://h:65536",
                "PLAINTEXT://a b:1", "PLAINTEXT://::1:9092"):
        with pytest.raises(ConfigError, match="listeners"):
            parse_listener(bad, PLAIN)
    with pytest.raises(ConfigError, match="no security protocol defined for listener OTHER") as info:
        parse_listener("OTHER://:1", PLAIN, setting="advertised.listeners")
    assert info.value.setting == "advertised.listeners"


def test_advertised_listeners_fall_back_to_listeners() -> None:
    c = cfg(
        listeners="PLAINTEXT://:9092,INTERNAL://0.0.0.0:9093,V6://[::]:9094,HOST://myhost:0",
        listener_security_protocol_map="PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,V6:PLAINTEXT,HOST:PLAINTEXT",
    )
    assert [str(e) for e in c.listeners] == [
        "PLAINTEXT://:9092", "INTERNAL://0.0.0.0:9093", "V6://[::]:9094", "HOST://myhost:0"]
    assert [str(e) for e in c.advertised_listeners] == [
        "PLAINTEXT://127.0.0.1:9092", "INTERNAL://127.0.0.1:9093", "V6://[::1]:9094", "HOST://myhost:0"]


def test_explicit_advertised_listeners() -> None:
    c = cfg(listeners="PLAINTEXT://:9092,INTERNAL://:9093",
            advertised_listeners="PLAINTEXT://broker1:19092,INTERNAL://:9093",
            listener_security_protocol_map="PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT")
    assert [str(e) for e in c.advertised_listeners] == ["PLAINTEXT://broker1:19092", "INTERNAL://127.0.0.1:9093"]
    assert "not a listener name" in str(error_for({"advertised.listeners": "OTHER://h:1",
                                                   "listener.security.protocol.map": "OTHER:PLAINTEXT,"
                                                   "PLAINTEXT:PLAINTEXT"}))
    assert "meta-address" in str(error_for({"advertised.listeners": "PLAINTEXT://0.0.0.0:9092"}))
    e = error_for({"listeners": "PLAINTEXT://:9092,INTERNAL://:9093",
                   "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
                   "advertised.listeners": "INTERNAL://h:9093"})
    assert "inter.broker.listener.name is PLAINTEXT" in str(e) and e.setting == "inter.broker.listener.name"


def test_listener_names_and_ports_are_unique() -> None:
    e = error_for({"listeners": "PLAINTEXT://:9092,plaintext://:9093"})
    assert "PLAINTEXT is used more than once" in str(e) and e.setting == "listeners"
    assert "same port" in str(error_for({
        "listeners": "PLAINTEXT://:9092,INTERNAL://localhost:9092",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT"}))
    both_families = cfg(listeners="PLAINTEXT://127.0.0.1:9092,INTERNAL://[::1]:9092,A://:0,B://:0",
                        listener_security_protocol_map="PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,A:PLAINTEXT,"
                                                       "B:PLAINTEXT")
    assert len(both_families.listeners) == 4
    assert "at least one listener" in str(error_for({"listeners": ""}))


def test_listener_needs_protocol() -> None:
    e = error_for({"listeners": "CLIENT://:9092"})
    assert "CLIENT" in str(e) and "listener.security.protocol.map" in str(e)


def test_secure_listeners_need_their_stores_and_users() -> None:
    two = "PLAINTEXT://:9092,SSL://:9093"
    e = error_for({"listeners": two})
    assert e.setting == "ssl.keystore.location" and "key store" in str(e)
    e = error_for({"listeners": two, "ssl.keystore.location": "k.pem", "ssl.keystore.key": "x"})
    assert "not both" in str(e)
    e = error_for({"listeners": two, "ssl.keystore.key": "x"})
    assert "together" in str(e) and e.setting == "ssl.keystore.key"
    e = error_for({"listeners": two, "ssl.keystore.location": "k.pem", "ssl.client.auth": "required"})
    assert e.setting == "ssl.client.auth" and "trust store" in str(e)
    ok = cfg(listeners=two, ssl_keystore_location="k.pem", ssl_client_auth="requested",
             ssl_truststore_location="ca.pem")
    assert [x.security_protocol for x in ok.listeners] == ["PLAINTEXT", "SSL"]
    e = error_for({"listeners": "PLAINTEXT://:9092,SASL_PLAINTEXT://:9093"})
    assert e.setting == "sasl.plain.users.file"
    e = error_for({"listeners": "PLAINTEXT://:9092,SSL://:9093", "ssl.keystore.location": "k.pem",
                   "sasl.enabled.mechanisms": "GSSAPI"})
    assert e.setting == "sasl.enabled.mechanisms" and "SCRAM-SHA-512" in str(e)
    # Without PLAIN on any SASL listener no users file is needed; a listener may name its own.
    sasl = "PLAINTEXT://:9092,SASL_PLAINTEXT://:9093"
    assert cfg(listeners=sasl, sasl_enabled_mechanisms="SCRAM-SHA-256").listeners
    e = error_for({"listeners": sasl, "sasl.enabled.mechanisms": "SCRAM-SHA-256",
                   "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512"})
    assert e.setting == "sasl.plain.users.file"
    ok = BrokerConfig({"node.id": "1", "listeners": sasl,
                       "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "OAUTHBEARER",
                       "listener.name.sasl_plaintext.connections.max.reauth.ms": "60000"})
    settings = ok.socket_server_settings()
    assert settings.listener_overrides == {
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms": ["OAUTHBEARER"],
        "listener.name.sasl_plaintext.connections.max.reauth.ms": 60000}
    e = error_for({"listeners": sasl, "listener.name.sasl_plaintext.connections.max.reauth.ms": "-1"})
    assert "listener.name.sasl_plaintext.connections.max.reauth.ms" in str(e)


def test_passwords_are_never_shown() -> None:
    c = cfg(listeners="PLAINTEXT://:9092,SSL://:9093", ssl_keystore_location="k.pem",
            ssl_key_password="s3cret")
    assert c["ssl.key.password"] == "s3cret"
    assert "s3cret" not in repr(c) and "ssl.key.password=[hidden]" in repr(c)


def test_inter_broker_and_control_plane_listeners() -> None:
    proto = "CLIENT:PLAINTEXT,REPLICATION:PLAINTEXT,CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"
    c = cfg(listeners="CLIENT://:9092,REPLICATION://:9093", listener_security_protocol_map=proto)
    assert c.inter_broker_listener_name == "CLIENT"  # no PLAINTEXT listener: the first
    assert c.control_plane_listener_name is None and c.privileged_listener_name == "CLIENT"

    c = cfg(listeners="CLIENT://:9092,PLAINTEXT://:9093", listener_security_protocol_map=proto)
    assert c.inter_broker_listener_name == "PLAINTEXT"

    c = cfg(listeners="CONTROLLER://:9094,CLIENT://:9092,REPLICATION://:9093",
            listener_security_protocol_map=proto, control_plane_listener_name="controller",
            inter_broker_listener_name="replication")
    assert c.control_plane_listener_name == "CONTROLLER"
    assert c.inter_broker_listener_name == "REPLICATION"
    assert c.privileged_listener_name == "CONTROLLER"

    c = cfg(listeners="CONTROLLER://:9094,CLIENT://:9092", listener_security_protocol_map=proto,
            control_plane_listener_name="CONTROLLER")
    assert c.inter_broker_listener_name == "CLIENT"  # the default skips the control plane listener

    base = {"listeners": "CONTROLLER://:9094,CLIENT://:9092", "listener.security.protocol.map": proto}
    e = error_for({**base, "control.plane.listener.name": "CONTROLLER",
                   "inter.broker.listener.name": "CONTROLLER"})
    assert "must differ" in str(e)
    e = error_for({**base, "control.plane.listener.name": "NOPE"})
    assert "control.plane.listener.name" in str(e) and e.setting == "control.plane.listener.name"
    e = error_for({**base, "inter.broker.listener.name": "NOPE"})
    assert "inter.broker.listener.name" in str(e) and e.setting == "inter.broker.listener.name"
    e = error_for({"listeners": "CONTROLLER://:9094", "listener.security.protocol.map": proto,
                   "control.plane.listener.name": "CONTROLLER"})
    assert "another listener" in str(e)


def test_other_cross_checks() -> None:
    assert "can be set to zero only if" in str(error_for({"max.connections.per.ip": "0"}))
    assert cfg(max_connections_per_ip="0", max_connections_per_ip_overrides="10.0.0.1:5")[
        "max.connections.per.ip"] == 0
    assert "at least one log directory" in str(error_for({"log.dirs": ""}))
    assert "at least one role" in str(error_for({"process.roles": ""}))
    assert cfg(log_dir="/var/k").log_dirs == ["/var/k"]


# --- docs ----------------------------------------------------------------------------------------


def test_docs_are_up_to_date() -> None:
    path = ROOT / "docs" / "configuration.md"
    assert path.read_text() == render_markdown(), (
        "docs/configuration.md is stale: python -m kafkalite.server.config_docs > docs/configuration.md")


def test_docs_cover_every_setting() -> None:
    md = render_markdown()
    for s in SETTINGS:
        assert f"`{s.name}`" in md
    assert "`metrics.port` (kafkalite)" in md and "alias `broker.id`" in md


@pytest.mark.parametrize("value", ["\\ ", " ", "a ", "\\\\ ", "x\\", "  "])
def test_properties_round_trip_trailing_space_after_backslashes(value: str) -> None:
    """Found by hypothesis: a value ending in a backslash and a space lost its space."""
    assert parse_properties(format_properties({"k": value})) == {"k": value}


# --- Kafka's own server.properties ---------------------------------------------------------------

# Kafka 3.9's config/kraft/server.properties, as released (apache/kafka, branch 3.9).
KAFKA_39_KRAFT_SERVER_PROPERTIES = """# Licensed to the Apache Software Foundation (ASF) under one or more
# contributor license agreements.  See the NOTICE file distributed with
# this work for additional information regarding copyright ownership.
# The ASF licenses this file to You under the Apache License, Version 2.0
# (the "License"); you may not use this file except in compliance with
# the License.  You may obtain a copy of the License at
#
#    http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

#
# This configuration file is intended for use in KRaft mode, where
# Apache ZooKeeper is not present.
#

############################# Server Basics #############################

# The role of this server. Setting this puts us in KRaft mode
process.roles=broker,controller

# The node id associated with this instance's roles
node.id=1

# The connect string for the controller quorum
controller.quorum.voters=1@localhost:9093

############################# Socket Server Settings #############################

# The address the socket server listens on.
# Combined nodes (i.e. those with `process.roles=broker,controller`) must list the controller listener here at a minimum.
# If the broker listener is not defined, the default listener will use a host name that is equal to the value of java.net.InetAddress.getCanonicalHostName(),
# with PLAINTEXT listener name, and port 9092.
#   FORMAT:
#     listeners = listener_name://host_name:port
#   EXAMPLE:
#     listeners = PLAINTEXT://your.host.name:9092
listeners=PLAINTEXT://:9092,CONTROLLER://:9093

# Name of listener used for communication between brokers.
inter.broker.listener.name=PLAINTEXT

# Listener name, hostname and port the broker or the controller will advertise to clients.
# If not set, it uses the value for "listeners".
advertised.listeners=PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093

# A comma-separated list of the names of the listeners used by the controller.
# If no explicit mapping set in `listener.security.protocol.map`, default will be using PLAINTEXT protocol
# This is required if running in KRaft mode.
controller.listener.names=CONTROLLER

# Maps listener names to security protocols, the default is for them to be the same. See the config documentation for more details
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL

# The number of threads that the server uses for receiving requests from the network and sending responses to the network
num.network.threads=3

# The number of threads that the server uses for processing requests, which may include disk I/O
num.io.threads=8

# The send buffer (SO_SNDBUF) used by the socket server
socket.send.buffer.bytes=102400

# The receive buffer (SO_RCVBUF) used by the socket server
socket.receive.buffer.bytes=102400

# The maximum size of a request that the socket server will accept (protection against OOM)
socket.request.max.bytes=104857600


############################# Log Basics #############################

# A comma separated list of directories under which to store log files
log.dirs=/tmp/kraft-combined-logs

# The default number of log partitions per topic. More partitions allow greater
# parallelism for consumption, but this will also result in more files across
# the brokers.
num.partitions=1

# The number of threads per data directory to be used for log recovery at startup and flushing at shutdown.
# This value is recommended to be increased for installations with data dirs located in RAID array.
num.recovery.threads.per.data.dir=1

############################# Internal Topic Settings  #############################
# The replication factor for the group metadata internal topics "__consumer_offsets" and "__transaction_state"
# For anything other than development testing, a value greater than 1 is recommended to ensure availability such as 3.
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1

############################# Log Flush Policy #############################

# Messages are immediately written to the filesystem but by default we only fsync() to sync
# the OS cache lazily. The following configurations control the flush of data to disk.
# There are a few important trade-offs here:
#    1. Durability: Unflushed data may be lost if you are not using replication.
#    2. Latency: Very large flush intervals may lead to latency spikes when the flush does occur as there will be a lot of data to flush.
#    3. Throughput: The flush is generally the most expensive operation, and a small flush interval may lead to excessive seeks.
# The settings below allow one to configure the flush policy to flush data after a period of time or
# every N messages (or both). This can be done globally and overridden on a per-topic basis.

# The number of messages to accept before forcing a flush of data to disk
#log.flush.interval.messages=10000

# The maximum amount of time a message can sit in a log before we force a flush
#log.flush.interval.ms=1000

############################# Log Retention Policy #############################

# The following configurations control the disposal of log segments. The policy can
# be set to delete segments after a period of time, or after a given size has accumulated.
# A segment will be deleted whenever *either* of these criteria are met. Deletion always happens
# from the end of the log.

# The minimum age of a log file to be eligible for deletion due to age
log.retention.hours=168

# A size-based retention policy for logs. Segments are pruned from the log unless the remaining
# segments drop below log.retention.bytes. Functions independently of log.retention.hours.
#log.retention.bytes=1073741824

# The maximum size of a log segment file. When this size is reached a new log segment will be created.
log.segment.bytes=1073741824

# The interval at which log segments are checked to see if they can be deleted according
# to the retention policies
log.retention.check.interval.ms=300000
"""  # noqa: E501

# Kafka 4.x's config/server.properties (4.0 moved config/kraft/server.properties here): the same
# file with controller.quorum.bootstrap.servers in place of controller.quorum.voters, and the share
# group state topic's settings.
KAFKA_4_SERVER_PROPERTIES = (
    KAFKA_39_KRAFT_SERVER_PROPERTIES
    .replace("#\n# This configuration file is intended for use in KRaft mode, where\n"
             "# Apache ZooKeeper is not present.\n#\n\n", "")
    .replace("# The connect string for the controller quorum\ncontroller.quorum.voters=1@localhost:9093",
             "# List of controller endpoints used connect to the controller cluster\n"
             "controller.quorum.bootstrap.servers=localhost:9093")
    .replace('"__consumer_offsets" and "__transaction_state"',
             '"__consumer_offsets", "__share_group_state" and "__transaction_state"')
    .replace("offsets.topic.replication.factor=1\n", "offsets.topic.replication.factor=1\n"
             "share.coordinator.state.topic.replication.factor=1\nshare.coordinator.state.topic.min.isr=1\n")
)

# The settings of both files that Kafka defines and kafkalite does not act on.
# (The samples' transaction.state.log.* lines are acted on since the transaction coordinator.)
IGNORED_BY_BOTH = [
    "num.recovery.threads.per.data.dir",
]


def test_kafka_39_kraft_sample_loads_on_the_first_try(tmp_path: Path) -> None:
    path = tmp_path / "server.properties"
    path.write_text(KAFKA_39_KRAFT_SERVER_PROPERTIES)
    c = BrokerConfig.from_sources(str(path))
    assert c.ignored == IGNORED_BY_BOTH
    assert c.node_id == 1 and c.is_controller and c.is_broker
    assert c["controller.quorum.voters"] == ["1@localhost:9093"]
    assert c.controller_listener_names == ["CONTROLLER"]
    assert [str(e) for e in c.listeners] == ["PLAINTEXT://:9092", "CONTROLLER://:9093"]
    assert c.log_dirs == ["/tmp/kraft-combined-logs"]
    assert not set(c.ignored) & c.explicit


def test_kafka_4_sample_loads_on_the_first_try(tmp_path: Path) -> None:
    path = tmp_path / "server.properties"
    path.write_text(KAFKA_4_SERVER_PROPERTIES)
    c = BrokerConfig.from_sources(str(path))
    # (its share.coordinator.state.topic.* lines are acted on since the share coordinator)
    assert c.ignored == IGNORED_BY_BOTH
    assert c["controller.quorum.bootstrap.servers"] == ["localhost:9093"]
    assert c.is_controller and c.controller_listener_names == ["CONTROLLER"]


def test_kafka_names_are_accepted_and_ignored_not_set() -> None:
    c = cfg(log_flush_interval_ms="1000", zookeeper_connect="localhost:2181")
    assert c.ignored == ["log.flush.interval.ms", "zookeeper.connect"]
    assert c.explicit == {"node.id"}
    with pytest.raises(KeyError):
        c.get("log.flush.interval.ms")
    c = BrokerConfig({"node.id": "1", "listener.name.internal.ssl.keystore.location": "/k.jks",
                      "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config": "x required;",
                      "log.flush.interval.ms": None})  # None is unset, so not listed
    # A listener's JAAS config is read (the broker's own credentials on that listener).
    assert c.ignored == ["listener.name.internal.ssl.keystore.location"]
    with pytest.raises(ConfigError, match="Kafka setting that kafkalite does not act on") as info:
        lookup("log.flush.interval.ms")
    assert info.value.setting == "log.flush.interval.ms"


def test_the_kafka_flag_agrees_with_kafkas_names() -> None:
    for s in SETTINGS:
        for name in s.names:
            assert is_kafka_config(name) == s.kafka, name
    assert len(KAFKA_BROKER_CONFIGS) > 300  # the whole list, not a sample of it


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("controller.listener.name", "controller.listener.names"),  # Kafka's, not control.plane...
        ("log.retention.hour", "log.retention.hours"),  # a name Kafka defines
        ("num.io.thread", "num.io.threads"),  # a kafkalite setting
        ("listener.name.internal.ssl.keystore.locaton", "listener.name.internal.ssl.keystore.location"),
    ],
)
def test_unknown_names_fail_with_a_hint_from_the_right_family(name: str, hint: str) -> None:
    e = error_for({name: "1"})
    assert str(e) == f"unknown setting {name!r} (did you mean {hint!r}?)"
    assert e.setting == name and e.errors == (e,)


def test_every_error_of_a_file_and_its_overrides_in_one_run(tmp_path: Path) -> None:
    path = tmp_path / "server.properties"
    path.write_text(KAFKA_39_KRAFT_SERVER_PROPERTIES
                    + "log.retention.hourz=1\nnum.io.threads=many\nfoo.bar=1\n")
    with pytest.raises(ConfigError) as info:
        BrokerConfig.from_sources(str(path), ["num.network.thread=2", "broken"])
    e = info.value
    lines = str(e).splitlines()
    assert lines[0] == "5 errors:"
    assert lines[1:] == [
        "  unknown setting 'log.retention.hourz' (did you mean 'log.retention.hours'?)",
        "  unknown setting 'foo.bar'",
        "  unknown setting 'num.network.thread' (did you mean 'num.network.threads'?)",
        "  invalid override 'broken': expected key=value",
        "  invalid value 'many' for num.io.threads: not an integer",
    ]
    assert e.setting == "log.retention.hourz"
    assert [x.setting for x in e.errors] == [
        "log.retention.hourz", "foo.bar", "num.network.thread", None, "num.io.threads"]


def _swap(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


@pytest.mark.integration
def test_the_cli_starts_from_kafkas_sample_and_lists_what_it_ignores_once(tmp_path: Path) -> None:
    """``kafkalite broker --config`` on Kafka's sample, with free ports and a temporary log directory
    (and no controller address, so that this node runs the controller it registers with)."""
    text = _swap(KAFKA_4_SERVER_PROPERTIES, "controller.quorum.bootstrap.servers=localhost:9093\n", "")
    text = _swap(text, "\nlisteners=PLAINTEXT://:9092,CONTROLLER://:9093",
                 "\nlisteners=PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0")
    text = _swap(text, "advertised.listeners=PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093\n", "")
    text = _swap(text, "log.dirs=/tmp/kraft-combined-logs", f"log.dirs={tmp_path / 'logs'}")
    path = tmp_path / "server.properties"
    path.write_text(text)
    proc = subprocess.Popen([sys.executable, "-m", "kafkalite", "broker", "--config", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines: list[str] = []
    up = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if " is up" in line:
                up.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert up.wait(30), "\n".join(lines)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0, "\n".join(lines)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
        reader.join(5)
    unused = [line for line in lines if "were supplied but are not used yet" in line]
    assert len(unused) == 1, "\n".join(lines)
    ignored = IGNORED_BY_BOTH  # (the share.coordinator.state.topic.* lines are acted on)
    assert f"WARNING [MainThread] kafkalite.server.broker: These configurations '[{', '.join(ignored)}]'" \
        in unused[0]
    assert not [line for line in lines if line.startswith("Error:") or "Traceback" in line]


def test_each_typed_view_defaults_to_its_settings_defaults():
    from kafkalite.controller.settings import ControllerSettings
    from kafkalite.network.settings import SocketServerSettings
    from kafkalite.server.coordinator.settings import GroupConfig, OffsetsTopicConfig
    from kafkalite.server.replication.settings import ReplicationSettings
    from kafkalite.storage.config import CleanerConfig, LogConfig, LogSchedule

    c = cfg()
    assert (c.group_config(), c.offsets_topic_config(), c.replication_settings(), c.cleaner_config(),
            c.log_config(), c.log_schedule) == (GroupConfig(), OffsetsTopicConfig(), ReplicationSettings(),
                                                CleanerConfig(), LogConfig(), LogSchedule())
    assert c.controller_settings() == ControllerSettings(1, "PLAINTEXT")
    s = c.socket_server_settings()
    assert s == SocketServerSettings(1, s.listeners, "PLAINTEXT", "PLAINTEXT", None)


def test_the_views_take_the_configured_values_in_their_units():
    c = cfg(offsets_retention_minutes="2", group_max_size="7", replica_fetch_max_bytes="10",
            ssl_enabled_protocols="TLSv1.3", log_cleaner_threads="2", num_partitions="4")
    assert (c.offsets_topic_config().retention_ms, c.group_config().max_size,
            c.replication_settings().fetch_max_bytes, c.socket_server_settings().tls.enabled_protocols,
            c.cleaner_config().num_threads, c.controller_settings().num_partitions) == (
        120000, 7, 10, ("TLSv1.3",), 2, 4)
