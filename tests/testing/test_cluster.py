"""kafkalite.testing.Cluster itself: what ready means, settings reaching the brokers, and a stop
that leaves no thread, descriptor, port or directory behind."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import find_coordinator
from kafkalite.testing import Cluster, Topic
from tests.support.wire_client import Client

from . import port_free

pytestmark = pytest.mark.integration


def test_ready_means_every_broker_registered_and_every_topic_led_and_fetched():
    with Cluster(3, topics=["one", Topic("three", partitions=3, replication_factor=2)]) as cluster:
        for node in cluster.nodes.values():
            snapshot = node.broker.metadata_cache.snapshot
            assert set(snapshot.brokers) == {1, 2, 3}
            assert [len(snapshot.topics[t].partitions) for t in ("one", "three")] == [1, 3]
        for topic, count in (("one", 1), ("three", 3)):
            for p in range(count):
                leader = cluster.leader(topic, p)
                partition = cluster.broker(leader).replica_manager.partitions[(topic, p)]
                assert partition.is_leader
                for follower in partition.followers:  # and its followers fetch it from there
                    fetching = cluster.broker(follower).replica_manager.fetcher_manager.fetching()
                    assert fetching[(topic, p)] == leader
        assert len(cluster.controller.metadata_cache.snapshot.topics["three"].partitions[0].replicas) == 2
        cluster.create_topic("placed", assignment={0: [3, 1]})
        assert cluster.leader("placed", 0) == 3


def test_the_offsets_topic_is_led_before_ready_so_a_group_finds_its_coordinator_at_once():
    # A client asking while __consumer_offsets is being created would retry after its interval
    # (librdkafka's 1 s): most of a short test.
    with Cluster(2) as cluster:
        offsets = cluster.controller.metadata_cache.snapshot.topics["__consumer_offsets"]
        assert len(offsets.partitions) == 5  # Kafka's test brokers' offsets.topic.num.partitions
        assert all(len(p.replicas) == 2 for p in offsets.partitions.values())  # capped by the brokers
        assert cluster.controller.topic_configs.overrides("__consumer_offsets")["cleanup.policy"] == "compact"
        host, port = cluster.bootstrap_servers.split(",")[0].split(":")
        with Client(host, int(port)) as c:
            found = c.call(10, 2, find_coordinator.REQUEST(key="first-group", key_type=0))
        assert found.error_code == E.NONE and found.node_id in (1, 2)
    with Cluster(1, offsets_topic=False) as cluster:
        assert "__consumer_offsets" not in cluster.controller.metadata_cache.snapshot.topics


def test_settings_reach_every_broker_and_broker_settings_one():
    with Cluster(2, settings={"num.partitions": 4}, broker_settings={2: {"broker.rack": "r2"}}) as c:
        assert [c.broker(n).config.broker_rack for n in (1, 2)] == [None, "r2"]
        assert all(c.broker(n).config["num.partitions"] == 4 for n in (1, 2))
        assert c.broker(1).volume is not c.broker(2).volume  # each its own memory


def test_stop_leaves_no_thread_descriptor_port_or_directory():
    threads = {t.name for t in threading.enumerate()}
    for storage in ("memory", "files"):
        cluster = Cluster(3, topics=["t"], storage=storage).start()
        ports, directory = cluster.ports, cluster.directory
        assert (directory is not None) == (storage == "files")
        volumes = [(n.volume, Path(n.settings["log.dirs"])) for n in cluster.nodes.values()]
        cluster.stop()
        cluster.stop()  # twice is harmless
        left = {t.name for t in threading.enumerate()} - threads
        assert not left, f"threads left by a {storage} cluster: {sorted(left)}"
        taken = [p for p in ports if not port_free(p)]
        assert not taken, f"ports still taken after a {storage} cluster stopped: {taken}"
        assert directory is None or not os.path.exists(directory)
        # The memory files went with their cluster (not when it is collected).
        assert all(v is None or not v.exists(root) for v, root in volumes)
