"""RaftManagers over real loopback sockets: each node has a SocketServer whose requests go through
KafkaApis to the quorum's handlers (server/handlers/raft.py) and on to its RaftManager, as a
controller listener does. Three voters elect one leader, replicate appends to every listener in
order, elect another when the leader shuts down, catch up a restarted node; DescribeQuorum is
answered by the leader. Every thread and socket is closed at the end."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from kafkalite.clients.blocking import BlockingClient
from kafkalite.common.errors import ApiError
from kafkalite.network.socket_server import SocketServer
from kafkalite.protocol import ApiKey
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import fetch
from kafkalite.protocol.schema import Versions
from kafkalite.raft import wire
from kafkalite.raft.config import QuorumConfig
from kafkalite.raft.manager import RaftManager
from kafkalite.raft.messages import Entry, FetchRequest, OffsetAndEpoch
from kafkalite.server.apis import SERVED_BY_KEY, ServedApi
from kafkalite.server.config import BrokerConfig
from kafkalite.server.handlers.raft import RaftApis
from kafkalite.server.kafka_apis import KafkaApis
from kafkalite.server.request_handler import RequestHandlerPool
from tests.support.wait import wait_for

LISTENER = "PLAINTEXT"
CONFIG = QuorumConfig(election_timeout_ms=300, fetch_timeout_ms=600, election_backoff_max_ms=200,
                      request_timeout_ms=1000)
QUORUM_APIS = [SERVED_BY_KEY[k] for k in (ApiKey.VOTE, ApiKey.BEGIN_QUORUM_EPOCH, ApiKey.END_QUORUM_EPOCH,
                                          ApiKey.DESCRIBE_QUORUM, ApiKey.FETCH_SNAPSHOT)]
DEADLINE_S = 10.0


def _table(listener: str, privileged: bool, *_: object, **__: object) -> dict[int, Versions]:
    table = {int(s.key): s.versions for s in QUORUM_APIS}
    table[ApiKey.FETCH] = Versions(4, 18)
    table[ApiKey.API_VERSIONS] = Versions(0, 4)
    return table


@dataclass
class Recorder:
    """A RaftListener that keeps what it was told."""
    committed: list[Entry] = field(default_factory=list)
    leaders: list[tuple[int, int]] = field(default_factory=list)
    snapshots: list[OffsetAndEpoch] = field(default_factory=list)
    thread_names: set[str] = field(default_factory=set)

    def handle_commit(self, entries: list[Entry]) -> None:
        self.thread_names.add(threading.current_thread().name)
        self.committed.extend(entries)

    def handle_load_snapshot(self, snapshot_id: OffsetAndEpoch, payload: bytes) -> None:
        self.snapshots.append(snapshot_id)
        self.committed = []

    def handle_leader_change(self, leader_id: int, epoch: int) -> None:
        self.thread_names.add(threading.current_thread().name)
        self.leaders.append((leader_id, epoch))

    def data(self) -> list[bytes]:
        return [e.data for e in self.committed]


class Node:
    """One voter: a SocketServer answering with the quorum's handlers, and its RaftManager."""

    def __init__(self, node_id: int) -> None:
        self.node_id = node_id
        props = {"node.id": str(node_id), "listeners": f"{LISTENER}://127.0.0.1:0",
                 "log.dirs": "/tmp/kafkalite-test-unused", "num.network.threads": "1"}
        self.server = SocketServer(BrokerConfig(props).socket_server_settings(), _table)
        send = self.server.data_plane_request_channel.send_response
        self.apis = RaftApis(None, send, frozenset({LISTENER}))
        fetch_only = _FetchToRaft(self.apis)
        self.kafka_apis = KafkaApis(self.apis, fetch_only, served=[*QUORUM_APIS, _FETCH_ROW])
        self.pool = RequestHandlerPool(self.server.data_plane_request_channel, self.kafka_apis.handle, 1,
                                       turns=self.server.turns)
        self.server.startup()
        self.pool.start()
        self.port = self.server.bound_port(LISTENER)
        self.manager: RaftManager | None = None
        self.listener = Recorder()

    def start_raft(self, voters: dict[int, tuple[str, int]], directory: str | None) -> RaftManager:
        self.listener = Recorder()
        self.manager = RaftManager(self.node_id, voters, "cluster-1", directory, CONFIG, self.listener)
        self.apis.raft = self.manager
        self.manager.startup()
        return self.manager

    def stop_raft(self) -> None:
        if self.manager is not None:
            self.manager.shutdown()
            self.apis.raft = None

    def close(self) -> None:
        self.stop_raft()
        self.pool.shutdown()
        self.server.shutdown()


class _FetchToRaft:
    """The Fetch area of a controller-only test node: every Fetch here is the quorum's."""

    def __init__(self, apis: RaftApis) -> None:
        self.apis = apis

    def handle_fetch(self, request):
        assert self.apis.serves_fetch(request)
        return self.apis.fetch(request)


_FETCH_ROW = ServedApi(ApiKey.FETCH, Versions(4, 18), QUORUM_APIS[0].where, _FetchToRaft.handle_fetch)


def wait_until(condition, what: str, timeout: float = DEADLINE_S) -> None:
    assert wait_for(condition, timeout), f"timed out waiting for {what}"


@contextlib.contextmanager
def quorum(size: int, tmp_path=None) -> Iterator[list[Node]]:
    before = {t.ident for t in threading.enumerate()}
    nodes = [Node(i) for i in range(1, size + 1)]
    voters = {n.node_id: ("127.0.0.1", n.port) for n in nodes}
    try:
        for n in nodes:
            n.start_raft(voters, str(tmp_path / f"node-{n.node_id}") if tmp_path is not None else None)
        yield nodes
    finally:
        for n in nodes:
            n.close()
    left = [t.name for t in threading.enumerate() if t.ident not in before and t.is_alive()]
    assert not left, f"threads left running: {left}"


def leader_of(nodes: list[Node]) -> Node:
    """The node every running manager names leader, in one epoch."""
    found: list[Node] = []

    def agreed() -> bool:
        running = [n for n in nodes if n.manager is not None and n.manager.running]
        views = {n.manager.leader for n in running}
        if len(views) != 1:
            return False
        leader_id, _ = views.pop()
        found[:] = [n for n in running if n.node_id == leader_id]
        return bool(found) and found[0].listener.leaders[-1:] == [found[0].manager.leader]
    wait_until(agreed, "one leader known to every voter")
    return found[0]


def test_a_single_voter_leads_at_once_and_commits_alone():
    with quorum(1) as nodes:
        n = nodes[0]
        assert n.manager is not None
        wait_until(lambda: n.manager.leader[0] == 1, "the only voter to lead")
        assert n.manager.append([b"x", b"y"]).result(DEADLINE_S) >= 1
        assert n.listener.data() == [b"x", b"y"]
        assert n.listener.thread_names == {"kafka-raft-io-thread"}


def test_three_voters_elect_one_leader_and_replicate_in_order():
    with quorum(3) as nodes:
        leader = leader_of(nodes)
        epoch = leader.manager.leader[1]
        offsets = [leader.manager.append([f"r{i}".encode()]).result(DEADLINE_S) for i in range(20)]
        assert offsets == sorted(offsets)
        expected = [f"r{i}".encode() for i in range(20)]
        for n in nodes:
            wait_until(lambda n=n: n.listener.data() == expected, f"node {n.node_id} to get every record")
            assert all(e.epoch == epoch and not e.control for e in n.listener.committed)
            assert n.listener.leaders[-1] == (leader.node_id, epoch)
        follower = next(n for n in nodes if n is not leader)
        with pytest.raises(ApiError) as refused:
            follower.manager.append([b"no"]).result(DEADLINE_S)
        assert refused.value.code == E.NOT_CONTROLLER


def test_a_new_leader_after_the_leader_shuts_down(tmp_path):
    with quorum(3, tmp_path) as nodes:
        old = leader_of(nodes)
        old_epoch = old.manager.leader[1]
        old.manager.append([b"before"]).result(DEADLINE_S)
        old.stop_raft()
        new = leader_of([n for n in nodes if n is not old])
        assert new is not old and new.manager.leader[1] > old_epoch
        new.manager.append([b"after"]).result(DEADLINE_S)
        for n in nodes:
            if n is not old:
                wait_until(lambda n=n: n.listener.data() == [b"before", b"after"], f"node {n.node_id}")


def test_a_restarted_voter_catches_up(tmp_path):
    with quorum(3, tmp_path) as nodes:
        leader = leader_of(nodes)
        leader.manager.append([b"one"]).result(DEADLINE_S)
        follower = next(n for n in nodes if n is not leader)
        follower.stop_raft()
        for i in range(5):
            leader.manager.append([f"while-{i}".encode()]).result(DEADLINE_S)
        voters = {n.node_id: ("127.0.0.1", n.port) for n in nodes}
        follower.start_raft(voters, str(tmp_path / f"node-{follower.node_id}"))
        expected = [b"one"] + [f"while-{i}".encode() for i in range(5)]
        wait_until(lambda: follower.listener.data() == expected, "the restarted voter to catch up")
        assert follower.listener.leaders[-1][0] == leader.node_id


def test_describe_quorum_is_answered_by_the_leader_only():
    with quorum(3) as nodes:
        leader = leader_of(nodes)
        leader.manager.append([b"a"]).result(DEADLINE_S)
        info = leader.manager.describe_quorum()
        assert info.leader_id == leader.node_id
        assert {s.replica_id for s in info.voters} == {1, 2, 3}
        for n in nodes:
            client = BlockingClient("127.0.0.1", n.port, "describe-quorum", 5.0)
            try:
                body = client.send_and_receive(ApiKey.DESCRIBE_QUORUM, 2, wire.describe_quorum_request())
            finally:
                client.close()
            if n is leader:
                got = wire.quorum_info_from_wire(body)
                assert (got.leader_id, got.leader_epoch) == leader.manager.leader
                assert got.high_watermark >= 1
            else:
                with pytest.raises(ApiError) as refused:
                    wire.quorum_info_from_wire(body)
                assert refused.value.code == E.NOT_LEADER_OR_FOLLOWER
        with pytest.raises(ApiError):
            next(n for n in nodes if n is not leader).manager.describe_quorum()


def test_a_fetch_of_another_cluster_is_refused_on_the_wire():
    with quorum(1) as nodes:
        n = nodes[0]
        wait_until(lambda: n.manager.leader[0] == 1, "the only voter to lead")
        _, version, body = wire.request_to_wire(FetchRequest("other-cluster", 7, 1, 0, 0, 0))
        client = BlockingClient("127.0.0.1", n.port, "fetch", 5.0)
        try:
            answer = client.send_and_receive(ApiKey.FETCH, version, body)
        finally:
            client.close()
        assert isinstance(answer, fetch.RESPONSE.cls)
        assert answer.error_code == E.INCONSISTENT_CLUSTER_ID


def test_a_new_voter_loads_the_leaders_snapshot_then_the_entries_after_it(tmp_path):
    with quorum(3, tmp_path) as nodes:
        leader = leader_of(nodes)
        last = leader.manager.append([b"s0", b"s1", b"s2"]).result(DEADLINE_S)
        epoch = leader.manager.leader[1]
        snapshot_id = OffsetAndEpoch(last + 1, epoch)
        follower = next(n for n in nodes if n is not leader)
        follower.stop_raft()
        for n in nodes:
            if n.manager is not None and n.manager.running:
                # A snapshot is taken at a committed offset: once this node knows s2 is committed
                # (a follower learns it from its next Fetch).
                wait_until(lambda n=n: b"s2" in n.listener.data(), f"node {n.node_id} to commit s2")
                n.manager.create_snapshot(snapshot_id, b"state-up-to-s2")
        leader.manager.append([b"after"]).result(DEADLINE_S)
        voters = {n.node_id: ("127.0.0.1", n.port) for n in nodes}
        follower.start_raft(voters, str(tmp_path / "empty"))  # its log and state lost
        wait_until(lambda: follower.listener.data() == [b"after"], "the new voter to catch up")
        assert follower.listener.snapshots == [snapshot_id]
