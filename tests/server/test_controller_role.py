"""Which roles a node plays (process.roles) and where the controller quorum is, checked as Kafka's
KafkaConfig checks a KRaft node (docs/configuration.md, 'Starting brokers by hand')."""

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


def test_an_explicit_controller_role_with_only_another_nodes_bootstrap_server_is_refused():
    e = error(process_roles="broker,controller", controller_quorum_bootstrap_servers="10.0.0.2:9093")
    assert e.setting == "process.roles" and "controller.quorum.voters" in str(e)
    assert "10.0.0.2:9093" in str(e)


def test_a_broker_only_node_must_be_told_where_the_controller_is():
    e = error(process_roles="broker")
    assert e.setting == "controller.quorum.bootstrap.servers"


VOTERS = "1@a:9093,2@b:9093,3@c:9093"


def test_a_quorum_of_voters_makes_the_listed_nodes_controllers():
    c = BrokerConfig({"node.id": "2", **CONTROLLER, "controller.quorum.voters": VOTERS})
    assert c.process_roles == ["broker", "controller"]
    assert c.quorum_voters == {1: ("a", 9093), 2: ("b", 9093), 3: ("c", 9093)}
    other = config(controller_quorum_voters=VOTERS.replace("1@", "4@"))
    assert other.process_roles == ["broker"] and other.controller_address == ("a", 9093)


def test_a_voter_id_twice_is_refused():
    assert "more than once" in str(error(controller_quorum_voters="1@a:9093,1@b:9093"))


def test_a_controller_must_be_a_voter():
    e = error(process_roles="controller", controller_quorum_voters="2@localhost:9093", **{
        k.replace(".", "_"): v for k, v in CONTROLLER.items()})
    assert str(e).startswith("If process.roles contains the 'controller' role, the node id 1 must be "
                             "included in the set of voters controller.quorum.voters={2}")
    e = error(process_roles="broker,controller", controller_quorum_voters="2@localhost:9093")
    assert "the node id 1 must be included in the set of voters" in str(e)


def test_a_broker_only_node_must_not_be_a_voter():
    e = error(process_roles="broker", controller_quorum_voters="1@localhost:9093,2@localhost:9094")
    assert str(e) == ("If process.roles contains just the 'broker' role, the node id 1 must not be "
                      "included in the set of voters controller.quorum.voters={1, 2}")


def test_quorum_voters_need_controller_listeners():
    e = error(controller_quorum_voters=VOTERS)
    assert e.setting == "controller.listener.names"
    assert "at least one value appearing in the 'listeners'" in str(e)


def test_a_controller_only_node_has_only_controller_listeners():
    only = {"listeners": "CONTROLLER://:9093",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "controller.listener.names": "CONTROLLER", "controller.quorum.voters": "1@localhost:9093",
            "process.roles": "controller"}
    c = BrokerConfig({"node.id": "1", **only})
    assert c.is_controller and not c.is_broker and c.inter_broker_listener_name == "PLAINTEXT"
    with pytest.raises(ConfigError) as info:
        BrokerConfig({"node.id": "1", **only, "listeners": "CONTROLLER://:9093,PLAINTEXT://:9092"})
    assert str(info.value) == ("The listeners config must only contain KRaft controller listeners from "
                               "controller.listener.names when process.roles=controller")
    with pytest.raises(ConfigError) as info:
        BrokerConfig({"node.id": "1", **only, "controller.listener.names": ""})
    assert "controller.listener.names must contain at least one value" in str(info.value)


def test_a_broker_only_node_does_not_listen_on_controller_listeners():
    e = error(process_roles="broker", controller_quorum_voters="2@localhost:9093", **{
        k.replace(".", "_"): v for k, v in CONTROLLER.items()})
    assert "must not contain a value appearing in the 'listeners' configuration when running KRaft " \
        "with just the broker role" in str(e)


def test_quorum_timing_and_metadata_log_settings():
    c = config(controller_quorum_election_timeout_ms="500", metadata_log_dir="/tmp/meta",
               metadata_log_max_record_bytes_between_snapshots="1000")
    q = c.quorum_settings()
    assert q.quorum_config_args() == {"election_timeout_ms": 500, "fetch_timeout_ms": 2000,
                                      "election_backoff_max_ms": 1000, "request_timeout_ms": 2000,
                                      "retry_backoff_ms": 20}
    assert q.append_linger_ms == 25
    assert c.metadata_partition_dir == "/tmp/meta/__cluster_metadata-0"
    assert c.controller_settings().metadata_log_max_record_bytes_between_snapshots == 1000
    assert config(log_dirs="/data/a,/data/b").metadata_log_dir == "/data/a"
    assert config(log_storage="memory").metadata_log_dir is None


@pytest.mark.parametrize(("props", "words"), [
    ({"controller.listener.names": "NOPE"}, "must only contain values appearing in the 'listeners'"),
    ({"controller.listener.names": "PLAINTEXT"}, "must not name the inter-broker"),
])
def test_controller_listener_names_are_checked_on_the_controller(props, words):
    with pytest.raises(ConfigError) as info:
        BrokerConfig({"node.id": "1", **props})
    assert words in str(info.value)


def test_controller_listener_names_are_not_checked_on_a_broker_only_node():
    c = config(controller_quorum_bootstrap_servers="127.0.0.1:9193", controller_listener_names="CONTROLLER")
    assert not c.is_controller
