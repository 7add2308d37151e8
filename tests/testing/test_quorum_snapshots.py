"""Snapshots of the metadata log in a real quorum (three controller-only voters, kafkalite.testing):
with a small metadata.log.max.record.bytes.between.snapshots every voter snapshots its image and
drops the log below it; a voter that was down while the log moved past what it holds catches up
from the leader's snapshot (FetchSnapshot) and then the entries after it, and ends with the same
image as the others."""

from __future__ import annotations

import pytest

from kafkalite.testing import Cluster
from tests.support.wait import wait_for

SETTINGS = {"metadata.log.max.record.bytes.between.snapshots": 4096,
            "controller.quorum.election.timeout.ms": 300, "controller.quorum.fetch.timeout.ms": 600}


@pytest.fixture
def cluster():
    with Cluster(1, controllers=3, controller_only=True, offsets_topic=False, settings=SETTINGS,
                 storage="files") as c:
        yield c


def voters(cluster: Cluster) -> dict[int, object]:
    return {v: cluster.nodes[v].broker for v in cluster.voter_ids if cluster.nodes[v].broker is not None}


def test_a_voter_behind_the_log_start_loads_the_leaders_snapshot_and_converges(cluster):
    for i in range(20):
        cluster.create_topic(f"first-{i}", partitions=2, replication_factor=1)
    active = cluster.active_controller(10).node_id
    behind = next(v for v in cluster.voter_ids if v != active)
    held = cluster.nodes[behind].broker.raft.node.log_end_offset
    cluster.kill(behind)
    for i in range(40):
        cluster.create_topic(f"second-{i}", partitions=2, replication_factor=1)
    leader = cluster.nodes[active].broker
    # The leader's log now starts past everything the stopped voter holds: only a snapshot can
    # bring it up to date.
    assert wait_for(lambda: leader.raft.node.log_start_offset > held, timeout=10)
    cluster.restart(behind)

    def converged() -> bool:
        nodes = voters(cluster)
        if len(nodes) != 3:
            return False
        images = [n.controller.store.image for n in nodes.values()]
        return all(image == images[0] for image in images) and "second-39" in images[0].topic_ids
    assert wait_for(converged, timeout=20), "the voters' images differ"
    restarted = cluster.nodes[behind].broker
    assert restarted.raft.node.log_start_offset > held  # it went on from the leader's snapshot
    assert all(n.raft.node.latest_snapshot() is not None for n in voters(cluster).values())
