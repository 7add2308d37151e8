"""Which node runs the controller: one per cluster, never two silently (docs/configuration.md,
'Starting brokers by hand')."""

from __future__ import annotations

import pytest

from kafkalite.server.config import BrokerConfig, ConfigError

CONTROLLER = {"listeners": "PLAINTEXT://:9092,CONTROLLER://:9093",
              "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
              "controller.listener.names": "CONTROLLER"}


def config(**props: str) -> BrokerConfig:
    return BrokerConfig({"node.id": "1", **{k.replace("_", "."): v for k, v in props.items()}})


def error(**props: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        config(**props)
    return info.value


def test_a_lone_broker_is_its_own_controller():
    c = config()
    assert c.process_roles == ["broker", "controller"] and c.controller_address is None


@pytest.mark.parametrize("servers", ["localhost:9093", "127.0.0.1:9093", "[::1]:9093"])
def test_bootstrap_servers_naming_this_node_make_it_the_controller(servers):
    c = BrokerConfig({"node.id": "1", **CONTROLLER, "controller.quorum.bootstrap.servers": servers})
    assert c.is_controller and c.controller_address == (servers.rpartition(":")[0].strip("[]"), 9093)
    assert c.controller_listener_names == ["CONTROLLER"]


def test_bootstrap_servers_naming_another_node_make_a_broker_only():
    c = config(controller_quorum_bootstrap_servers="127.0.0.1:9193")
    assert c.process_roles == ["broker"] and not c.is_controller
    assert c.controller_address == ("127.0.0.1", 9193)


def test_voters_decide_by_node_id():
    assert config(controller_quorum_voters="1@localhost:9093").is_controller
    other = config(controller_quorum_voters="2@localhost:9093")
    assert not other.is_controller and other.controller_address == ("localhost", 9093)


def test_an_explicit_controller_role_beside_another_controller_is_refused():
    e = error(process_roles="broker,controller", controller_quorum_bootstrap_servers="10.0.0.2:9093")
    assert e.setting == "process.roles" and "one controller per cluster" in str(e)
    assert "10.0.0.2:9093" in str(e)


def test_a_broker_only_node_must_be_told_where_the_controller_is():
    e = error(process_roles="broker")
    assert e.setting == "controller.quorum.bootstrap.servers"


def test_a_quorum_of_voters_is_refused_with_the_reason():
    e = error(controller_quorum_voters="1@a:9093,2@b:9093,3@c:9093")
    assert "one controller" in str(e)


@pytest.mark.parametrize(("props", "words"), [
    ({"controller.listener.names": "NOPE"}, "not a listener"),
    ({"controller.listener.names": "PLAINTEXT"}, "must not name the inter-broker"),
])
def test_controller_listener_names_are_checked_on_the_controller(props, words):
    with pytest.raises(ConfigError) as info:
        BrokerConfig({"node.id": "1", **props})
    assert words in str(info.value)


def test_controller_listener_names_are_not_checked_on_a_broker_only_node():
    c = config(controller_quorum_bootstrap_servers="127.0.0.1:9193", controller_listener_names="CONTROLLER")
    assert not c.is_controller
