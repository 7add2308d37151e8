"""The DefaultStatePersister in a 3-broker in-process cluster (3 controllers, so any broker may
die): state written through one broker's persister, the share coordinator's broker killed, the
same state read from the new leader of the __share_group_state partition; FindCoordinator key
type 2 names the leader of the key's partition."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest

from kafkalite.clients import BlockingClient
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import find_coordinator
from kafkalite.server.share.persister import ReadStateResult, ShareStateKey, StateBatch, StateSummary
from kafkalite.server.share_coordinator.coordinator import SHARE_GROUP_STATE_TOPIC
from kafkalite.server.share_coordinator.state import coordinator_key
from kafkalite.testing import Cluster

KEY = ShareStateKey("share-group", uuid.uuid4().bytes, 3)


@pytest.fixture(scope="module")
def cluster():
    with Cluster(3, controllers=3, offsets_topic=False, settings={
            "share.coordinator.state.topic.num.partitions": 1,
            # the persister retries a moving coordinator this long (the kill below moves it)
            "share.coordinator.write.timeout.ms": 20000}) as c:
        yield c


def call(fn: Any, *args: Any) -> Any:
    got: list[Any] = []
    answered = threading.Event()

    def done(value: Any) -> None:
        got.append(value)
        answered.set()
    fn(*args, done)
    assert answered.wait(30), f"{fn.__name__} unanswered"
    return got[0]


def persister(cluster: Cluster, node: int) -> Any:
    p = cluster.broker(node).share_persister
    assert p is not None
    return p


def test_state_survives_the_death_of_its_coordinator(cluster):
    first = [StateBatch(0, 9, 2, 1), StateBatch(10, 19, 0, 1)]
    assert call(persister(cluster, 1).initialize_state, KEY, 1, 0) == E.NONE
    assert call(persister(cluster, 1).write_state, KEY, 1, 0, 0, first) == E.NONE
    leader = cluster.leader(SHARE_GROUP_STATE_TOPIC, 0)
    other = next(n for n in (1, 2, 3) if n != leader)
    # From a broker that is not the coordinator: over the inter-broker listener.
    remote = persister(cluster, other)
    sent = remote.sent
    assert call(remote.write_state, KEY, 1, 1, 5, [StateBatch(10, 14, 2, 2)]) == E.NONE
    assert remote.sent > sent
    # 0-4 went below the start offset; 10-14 were rewritten with count 2 (runs are by state and count)
    want = ReadStateResult(E.NONE, 1, 5, (StateBatch(5, 9, 2, 1), StateBatch(10, 14, 2, 2),
                                          StateBatch(15, 19, 0, 1)))
    assert call(remote.read_state, KEY, 1) == want

    cluster.kill(leader)
    try:
        survivor = persister(cluster, other)
        assert call(survivor.read_state, KEY, 2) == want
        assert cluster.leader(SHARE_GROUP_STATE_TOPIC, 0) != leader
        # the old leader epoch is fenced by the read with epoch 2 on the new coordinator
        assert call(survivor.write_state, KEY, 1, 1, 5, []) == E.FENCED_LEADER_EPOCH
        assert call(survivor.read_summary, KEY, 2) == StateSummary(E.NONE, 1, -1, 5)
    finally:
        cluster.restart(leader)


def test_find_coordinator_names_the_leader_of_the_keys_partition(cluster):
    R = find_coordinator.REQUEST
    port = cluster.nodes[1].client_port
    client = BlockingClient("127.0.0.1", port, "test", 10)
    try:
        def ask(key: str) -> Any:
            return client.send_and_receive(ApiKey.FIND_COORDINATOR, 6, R(key_type=2, coordinator_keys=[key]))
        answer = ask(coordinator_key(KEY)).coordinators[0]
        assert answer.error_code == E.NONE
        assert answer.node_id == cluster.leader(SHARE_GROUP_STATE_TOPIC, 0)
        assert ask("no-colons").coordinators[0].error_code == E.INVALID_REQUEST
    finally:
        client.close()
