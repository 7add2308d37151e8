"""A broker's ControllerNodeProvider (Kafka's ControllerNodeProvider): the active controller
learned from the control requests (highest epoch), the next voter after a connection failure or
NOT_CONTROLLER; and the handlers acting through the local controller only while it is active."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator

import pytest

from kafkalite.common.endpoints import SECURITY_PROTOCOL_IDS
from kafkalite.controller.controller import KafkaController
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.codec import decode_request, encode_response
from kafkalite.protocol.messages import allocate_producer_ids, broker_heartbeat, broker_registration
from kafkalite.server.controller_node import ControllerClient, ControllerNode, ControllerNodeProvider
from kafkalite.testing import Cluster

VOTERS = {1: ("127.0.0.1", 9001), 2: ("127.0.0.1", 9002), 3: ("127.0.0.1", 9003)}


def test_candidates_in_turn_until_the_active_one_is_learned():
    p = ControllerNodeProvider(VOTERS)
    assert p.current() == ControllerNode(1, "127.0.0.1", 9001) and p.active_id == -1
    p.failed(p.current())
    assert p.current().id == 2
    p.failed(ControllerNode(1, "127.0.0.1", 9001))  # another sender's stale failure: no move
    assert p.current().id == 2
    assert p.learn(3, 5) and p.active_id == 3 and p.current().id == 3
    assert not p.learn(1, 4)  # an older epoch: a deposed controller's request
    assert p.current().id == 3
    p.failed(p.current())  # the active one fails: forgotten, the next voter is tried
    assert p.active_id == -1 and p.current().id == 1 and p.epoch == 5
    assert p.learn(2, 5) and p.current().id == 2  # the same epoch's leader, learned again


def test_an_unknown_id_or_bootstrap_servers_rotate():
    p = ControllerNodeProvider({}, [("127.0.0.1", 9001), ("127.0.0.1", 9002)])
    assert p.current().id == -1 and p.current().port == 9001
    p.learn(7, 1)  # not a voter it knows: the candidates stay
    assert p.active_id == -1
    p.failed(p.current())
    assert p.current().port == 9002
    with pytest.raises(ValueError):
        ControllerNodeProvider({})


class NotController:
    """A server answering every BrokerHeartbeat with NOT_CONTROLLER (a standby controller)."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.asked = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                try:
                    while head := conn.recv(4, socket.MSG_WAITALL):
                        size = struct.unpack(">i", head)[0]
                        header, _ = decode_request(conn.recv(size, socket.MSG_WAITALL))
                        self.asked += 1
                        body = broker_heartbeat.RESPONSE(error_code=E.NOT_CONTROLLER)
                        conn.sendall(bytes(encode_response(header.request_api_key, header.request_api_version,
                                                           header.correlation_id, body)))
                except OSError:
                    pass

    def close(self) -> None:
        try:
            self.server.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.server.close()
        self.thread.join(5)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with Cluster(2, offsets_topic=False) as c:
        yield c


def dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def heartbeat(cluster: Cluster, node: int) -> broker_heartbeat.RESPONSE:
    b = cluster.broker(node)
    return broker_heartbeat.REQUEST(broker_id=node, broker_epoch=b.lifecycle.broker_epoch,
                                    current_metadata_offset=0, want_fence=False, want_shut_down=False,
                                    offline_log_dirs=[])


def test_requests_move_past_a_dead_voter_and_a_standby_to_the_active_controller(cluster):
    standby = NotController()
    real = cluster.broker(1).socket_server.bound_address(cluster.broker(1).config.privileged_listener_name)
    provider = ControllerNodeProvider({7: ("127.0.0.1", dead_port()), 8: ("127.0.0.1", standby.port),
                                       1: real})
    client = ControllerClient(provider, "broker-2", 2.0)
    try:
        response = client.send_and_receive(ApiKey.BROKER_HEARTBEAT, 1, heartbeat(cluster, 2))
        assert response.error_code == E.NONE and standby.asked == 1
        assert client.node.id == 1 and provider.current().id == 1
        # Learned from the control requests, the active one is asked first from then on.
        provider.learn(8, provider.epoch + 1)
        response = client.send_and_receive(ApiKey.BROKER_HEARTBEAT, 1, heartbeat(cluster, 2))
        assert response.error_code == E.NONE and standby.asked == 2 and provider.active_id == -1
        # Tries bounded: every candidate a standby, the NOT_CONTROLLER answer is returned.
        only_standby = ControllerClient(ControllerNodeProvider({8: ("127.0.0.1", standby.port)}), "b", 2.0)
        try:
            got = only_standby.send_and_receive(ApiKey.BROKER_HEARTBEAT, 1, heartbeat(cluster, 2))
            assert got.error_code == E.NOT_CONTROLLER
        finally:
            only_standby.close()
        with pytest.raises(OSError):
            dead = ControllerClient(ControllerNodeProvider({7: ("127.0.0.1", dead_port())}), "b", 2.0)
            dead.send_and_receive(ApiKey.BROKER_HEARTBEAT, 1, heartbeat(cluster, 2))
    finally:
        client.close()
        standby.close()


def test_brokers_learn_the_controller_epoch_from_its_control_requests(cluster):
    assert cluster.broker(1).controller_nodes.active_id == 1  # the lone controller's own node
    # Broker 2 knows the controller by its bootstrap server only (no voter ids): the epoch is
    # learned, the address stays the one it has (the quorum's case: test_controller_quorum_cluster).
    nodes = cluster.broker(2).controller_nodes
    assert nodes.epoch >= 1 and nodes.current().address == cluster.broker(1).controller_address


def test_an_inactive_controller_answers_not_controller_and_acts_again_when_active(cluster, monkeypatch):
    active = [False]
    monkeypatch.setattr(KafkaController, "is_active", property(lambda self: active[0]))
    b = cluster.broker(1)
    port = b.socket_server.bound_address(b.config.privileged_listener_name)
    client = ControllerClient(ControllerNodeProvider({1: port}), "broker-2", 5.0)
    epoch = cluster.broker(2).lifecycle.broker_epoch
    R = broker_registration.REQUEST
    registration = R(broker_id=9, cluster_id=cluster.cluster_id, incarnation_id=b.lifecycle.incarnation,
                     listeners=[R["listeners"](name="PLAINTEXT", host="127.0.0.1", port=1,
                                               security_protocol=SECURITY_PROTOCOL_IDS["PLAINTEXT"])],
                     features=[], rack=None, previous_broker_epoch=-1)
    try:
        for api, version, body in (
                (ApiKey.BROKER_HEARTBEAT, 1, heartbeat(cluster, 2)),
                (ApiKey.BROKER_REGISTRATION, 3, registration),
                (ApiKey.ALLOCATE_PRODUCER_IDS, 0,
                 allocate_producer_ids.REQUEST(broker_id=2, broker_epoch=epoch))):
            assert client.send_and_receive(api, version, body, attempts=1).error_code == E.NOT_CONTROLLER
        assert not b.topic_configs.local  # its topic configs come from the active controller then
        active[0] = True
        assert client.send_and_receive(ApiKey.BROKER_HEARTBEAT, 1, heartbeat(cluster, 2)).error_code == E.NONE
        got = client.send_and_receive(ApiKey.ALLOCATE_PRODUCER_IDS, 0,
                                      allocate_producer_ids.REQUEST(broker_id=2, broker_epoch=epoch))
        assert got.error_code == E.NONE and got.producer_id_len > 0
    finally:
        client.close()


def test_a_voter_of_a_quorum_without_a_cluster_id_is_refused_at_startup(tmp_path):
    from kafkalite.common.errors import ConfigError
    from kafkalite.server.broker import Broker
    from kafkalite.server.config import BrokerConfig

    config = BrokerConfig({"node.id": "1", "log.dirs": str(tmp_path),
                           "listeners": "PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
                           "controller.listener.names": "CONTROLLER",
                           "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                           "controller.quorum.voters": "1@127.0.0.1:1,2@127.0.0.1:2,3@127.0.0.1:3"})
    broker = Broker(config)
    with pytest.raises(ConfigError, match=r"set the same cluster\.id on every voter"):
        broker.startup()
    broker.shutdown()
