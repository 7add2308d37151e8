"""How a node connects to other brokers and to the controller, as its configuration says
(BrokerConfig.inter_broker_security / privileged_security / controller_security), and Kafka's
startup checks for it."""

from __future__ import annotations

import pytest

from kafkalite.server.config import BrokerConfig, ConfigError

PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
JAAS = f'{PLAIN_MODULE} required username="broker" password="broker-secret" user_broker="broker-secret";'
SECURE = {
    "node.id": "1",
    "listeners": "CLIENT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
    "listener.security.protocol.map": "CLIENT:SASL_SSL,INTERNAL:SASL_SSL,CONTROLLER:SASL_PLAINTEXT",
    "inter.broker.listener.name": "INTERNAL",
    "ssl.keystore.location": "k.pem", "ssl.truststore.location": "ca.pem",
    "sasl.plain.users.file": "users",
    "sasl.mechanism.inter.broker.protocol": "PLAIN",
    "listener.name.internal.plain.sasl.jaas.config": JAAS,
}


def error_for(props: dict[str, str]) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        BrokerConfig(props)
    return info.value


def test_sasl_ssl_inter_broker_listener_gives_tls_and_the_listeners_credentials() -> None:
    c = BrokerConfig(SECURE)
    s = c.inter_broker_security
    assert (s.protocol, s.listener, s.mechanism, s.username, s.password) == (
        "SASL_SSL", "INTERNAL", "PLAIN", "broker", "broker-secret")
    assert s.tls is not None and s.tls.truststore_location == "ca.pem"
    assert s.endpoint_identification == "https"
    assert c.privileged_security == s and c.controller_security == s  # this node runs the controller
    assert c.controller_settings().client_security == s
    assert c.replication_settings().inter_broker_security == s
    # The listener's JAAS config is acted on, not listed as ignored; the password never shown.
    assert c.ignored == [] and "broker-secret" not in repr(s)


def test_sasl_jaas_config_is_the_fallback_and_the_listener_prefix_wins() -> None:
    props = {k: v for k, v in SECURE.items() if "jaas" not in k}
    other = f'{PLAIN_MODULE} required username="fallback" password="x";'
    assert BrokerConfig({**props, "sasl.jaas.config": other}).inter_broker_security.username == "fallback"
    both = {**SECURE, "sasl.jaas.config": other}
    assert BrokerConfig(both).inter_broker_security.username == "broker"


def test_security_inter_broker_protocol_names_the_listener() -> None:
    props = {"node.id": "1", "listeners": "PLAINTEXT://:9092,SSL://:9093", "ssl.keystore.location": "k.pem",
             "security.inter.broker.protocol": "SSL", "ssl.endpoint.identification.algorithm": ""}
    c = BrokerConfig(props)
    assert c.inter_broker_listener_name == "SSL"
    assert c.inter_broker_security.protocol == "SSL" and c.inter_broker_security.endpoint_identification == ""
    e = error_for({**props, "inter.broker.listener.name": "PLAINTEXT"})
    assert str(e) == ("Only one of inter.broker.listener.name and security.inter.broker.protocol "
                      "should be set.")
    e = error_for({**props, "security.inter.broker.protocol": "SASL_SSL"})
    assert e.setting == "security.inter.broker.protocol" and "no listener of that name" in str(e)


def test_plaintext_stays_the_default() -> None:
    c = BrokerConfig({"node.id": "1", "listeners": "PLAINTEXT://:9092"})
    assert c.inter_broker_security.protocol == "PLAINTEXT" and c.controller_security.protocol == "PLAINTEXT"
    assert not c.inter_broker_security.uses_tls and not c.inter_broker_security.uses_sasl


def test_gssapi_the_default_mechanism_is_refused_when_sasl_is_used() -> None:
    props = {k: v for k, v in SECURE.items() if k != "sasl.mechanism.inter.broker.protocol"}
    e = error_for(props)
    assert e.setting == "sasl.mechanism.inter.broker.protocol"
    assert "GSSAPI" in str(e) and "does not support" in str(e)


def test_mechanism_must_be_enabled_on_the_inter_broker_listener() -> None:
    e = error_for({**SECURE, "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
                   "sasl.enabled.mechanisms": "PLAIN"})
    assert e.setting == "sasl.mechanism.inter.broker.protocol"


def test_credentials_are_required_and_checked() -> None:
    props = {k: v for k, v in SECURE.items() if "jaas" not in k}
    e = error_for(props)
    assert e.setting == "listener.name.internal.plain.sasl.jaas.config"
    assert "username" in str(e) and PLAIN_MODULE in str(e)
    e = error_for({**props, "listener.name.internal.plain.sasl.jaas.config": f"{PLAIN_MODULE} required;"})
    assert "needs username and password" in str(e)
    e = error_for({**props, "listener.name.INTERNAL.plain.sasl.jaas.config": "broken"})
    assert e.setting == "listener.name.INTERNAL.plain.sasl.jaas.config" and "invalid value" in str(e)


def test_a_broker_reaches_the_controller_on_the_controller_listener() -> None:
    jaas = f'{PLAIN_MODULE} required username="ctl" password="ctl-secret";'
    props = {**SECURE, "node.id": "2", "process.roles": "broker",
             "controller.quorum.bootstrap.servers": "127.0.0.1:9999",
             "controller.listener.names": "CONTROLLER",
             "sasl.mechanism.controller.protocol": "PLAIN",
             "listener.name.controller.plain.sasl.jaas.config": jaas}
    c = BrokerConfig(props)
    s = c.controller_security
    assert (s.protocol, s.listener, s.username, s.tls) == ("SASL_PLAINTEXT", "CONTROLLER", "ctl", None)
    assert c.inter_broker_security.listener == "INTERNAL"
    scram = {**props, "sasl.mechanism.controller.protocol": "SCRAM-SHA-512",
             "listener.name.controller.scram-sha-512.sasl.jaas.config":
                 'org.apache.kafka.common.security.scram.ScramLoginModule required '
                 'username="s" password="p";'}
    s = BrokerConfig(scram).controller_security
    assert (s.mechanism, s.username, s.password) == ("SCRAM-SHA-512", "s", "p")
    e = error_for({**props, "sasl.mechanism.controller.protocol": "GSSAPI"})
    assert e.setting == "sasl.mechanism.controller.protocol"
    e = error_for({**props, "controller.listener.names": "NOWHERE"})
    assert str(e).startswith("Controller listener with name NOWHERE defined in controller.listener.names "
                             "not found in listener.security.protocol.map")
    # With the default map, a controller listener it does not name is PLAINTEXT (Kafka's rule).
    c = BrokerConfig({"node.id": "2", "listeners": "PLAINTEXT://:9092", "process.roles": "broker",
                      "controller.quorum.bootstrap.servers": "127.0.0.1:9999",
                      "controller.listener.names": "CONTROLLER"})
    assert c.controller_security.protocol == "PLAINTEXT" and c.controller_security.listener == "CONTROLLER"


def test_scram_cannot_carry_the_controllers_pushes_of_the_scram_credentials() -> None:
    scram_jaas = ('org.apache.kafka.common.security.scram.ScramLoginModule required '
                  'username="broker" password="b";')
    props = {**SECURE, "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-256",
             "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
             "listener.name.internal.scram-sha-256.sasl.jaas.config": scram_jaas}
    try:
        BrokerConfig({"node.id": "1", "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256"})
    except ConfigError:  # the listeners take PLAIN only until their SCRAM server side lands
        pytest.skip("the listeners do not take SCRAM yet")
    e = error_for(props)
    assert e.setting == "sasl.mechanism.inter.broker.protocol" and "control.plane.listener.name" in str(e)


def test_leaders_are_given_on_the_inter_broker_listener_when_a_control_plane_listener_exists() -> None:
    c = BrokerConfig({"node.id": "1", "listeners": "PLAINTEXT://:9092,INTERNAL://:9093,CONTROL://:9094",
                      "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,CONTROL:SSL",
                      "inter.broker.listener.name": "INTERNAL", "control.plane.listener.name": "CONTROL",
                      "ssl.keystore.location": "k.pem"})
    s = c.controller_settings()
    assert (s.listener, s.inter_broker_listener) == ("CONTROL", "INTERNAL")
    assert s.client_security.protocol == "SSL" and c.inter_broker_security.protocol == "PLAINTEXT"
