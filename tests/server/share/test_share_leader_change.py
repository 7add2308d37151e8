"""ShareFetch and ShareAcknowledge when the partition's leader changes, on the wire against three
in-process brokers (one partition on all three, __share_group_state on all three):

- to a broker that is not the leader: NOT_LEADER_OR_FOLLOWER with the CurrentLeader (id and
  epoch) and its NodeEndpoints, so that a client goes to the leader without a Metadata request;
- the leader killed: the new leader reads the state the old one wrote, so what was
  acknowledged (ACCEPT, REJECT) is never delivered again and what was only acquired is, and the
  acknowledgement of a record a member acquired from the old leader is refused
  (INVALID_RECORD_STATE: the new leader gave it to another member)."""

from __future__ import annotations

import pytest

from kafkalite.protocol import error_codes as E
from kafkalite.server.share_coordinator.coordinator import SHARE_GROUP_STATE_TOPIC
from kafkalite.testing import Cluster
from tests.support.raw_requests import batch, produce
from tests.support.share_requests import (
    acquired_offsets,
    call_share_acknowledge,
    call_share_fetch,
    only_partition,
)
from tests.support.wait import wait_for
from tests.support.wire_client import Client

TOPIC, GROUP = "jobs", "workers"
ACCEPT, REJECT = 1, 3


@pytest.fixture
def cluster():
    with Cluster(3, offsets_topic=False, settings={
            "share.auto.offset.reset": "earliest", "share.coordinator.state.topic.num.partitions": 1,
            "share.coordinator.write.timeout.ms": 20000}) as c:
        c.create_topic(SHARE_GROUP_STATE_TOPIC, assignment={0: [2, 3, 1]},
                       configs={"cleanup.policy": "compact"})
        c.create_topic(TOPIC, assignment={0: [2, 3, 1]})
        yield c


def client(cluster: Cluster, node: int) -> Client:
    return Client("127.0.0.1", cluster.broker(node).bound_port("PLAINTEXT"))










def test_a_follower_names_the_leader_and_the_new_leader_keeps_the_state(cluster):
    tid = cluster.broker(1).metadata_cache.snapshot.topics[TOPIC].topic_id
    leader = cluster.leader(TOPIC)
    assert leader == 2
    with client(cluster, leader) as c:
        assert produce(c, TOPIC, batch([b"%d" % i for i in range(10)]), acks=-1).error_code == E.NONE
    epoch = cluster.broker(1).metadata_cache.snapshot.topics[TOPIC].partitions[0].leader_epoch

    # A follower: NOT_LEADER_OR_FOLLOWER, the leader and where it listens.
    with client(cluster, 3) as c:
        answer = call_share_fetch(c, GROUP, "m", 0, tid)
        p = only_partition(answer)
        assert p.error_code == E.NOT_LEADER_OR_FOLLOWER
        assert (p.current_leader.leader_id, p.current_leader.leader_epoch) == (leader, epoch)
        assert [(n.node_id, n.port) for n in answer.node_endpoints] == [
            (leader, cluster.broker(leader).bound_port("PLAINTEXT"))]
        acked = call_share_acknowledge(c, GROUP, "m", 1, tid, [(0, 0, ACCEPT)])
        p = only_partition(acked)
        assert p.error_code == E.NOT_LEADER_OR_FOLLOWER and p.current_leader.leader_id == leader
        assert [n.node_id for n in acked.node_endpoints] == [leader]

    # On the leader: 0-9 acquired; 0-2 accepted, 3-4 rejected (written before the answer), 5-9 held.
    with client(cluster, leader) as c:
        assert wait_for(lambda: acquired_offsets(call_share_fetch(c, GROUP, "m", 0, tid, max_wait_ms=1000))
                        == list(range(10)), timeout=20)
        answer = call_share_acknowledge(c, GROUP, "m", 1, tid, [(0, 2, ACCEPT), (3, 4, REJECT)])
        assert only_partition(answer).error_code == E.NONE
    cluster.kill(leader)  # the partition's leader and the share coordinator
    assert wait_for(lambda: cluster.leader(TOPIC) not in (leader, -1)
                    and cluster.leader(SHARE_GROUP_STATE_TOPIC) not in (leader, -1), timeout=20)
    new = cluster.leader(TOPIC)

    with client(cluster, new) as c:
        # Another member gets what was held (and only that); the member that held it on the old
        # leader cannot acknowledge it any more.
        got: list[int] = []
        assert wait_for(lambda: got.extend(acquired_offsets(
            call_share_fetch(c, GROUP, "other", 0, tid, max_wait_ms=1000))) or got, timeout=20)
        assert got == list(range(5, 10))
        assert acquired_offsets(call_share_fetch(c, GROUP, "m", 0, tid)) == []
        stale = call_share_fetch(c, GROUP, "m", 1, tid, acks=((5, 9, ACCEPT),))
        assert only_partition(stale).acknowledge_error_code == E.INVALID_RECORD_STATE
        accepted = call_share_fetch(c, GROUP, "other", 1, tid, acks=((5, 9, ACCEPT),))
        assert only_partition(accepted).acknowledge_error_code == E.NONE
        assert acquired_offsets(call_share_fetch(c, GROUP, "m", 2, tid)) == []
    sp = cluster.broker(new).share_partitions.partitions[(GROUP, tid, 0)].partition
    assert (sp.start_offset, sp.records) == (10, {})
