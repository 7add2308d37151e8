"""log_store.py's CoordinatorLog on real brokers: an append is answered once the high watermark
covers it, at once when the append itself committed it (a leader alone in its ISR), only after
the followers have it otherwise."""

from __future__ import annotations

import pytest

from kafkalite.protocol import error_codes as E
from kafkalite.server.coordinator.log_store import CoordinatorLog
from tests.server.replication.test_replication import brokers, partition_of
from tests.support.brokers import create
from tests.support.wait import wait_for

pytestmark = pytest.mark.integration


def test_an_append_is_answered_once_committed_at_once_when_the_leader_is_alone(tmp_path):
    with brokers(tmp_path) as (one, two, three):
        assert create(one, "alone", [1]).error_code == 0
        assert create(one, "three", [1, 2, 3]).error_code == 0
        assert wait_for(lambda: all(partition_of(b, "three") is not None for b in (one, two, three)),
                        timeout=10)
        assert wait_for(lambda: partition_of(one, "alone") is not None, timeout=10)
        rm = one.replica_manager

        answers: list[int] = []
        placed: list[int] = []
        CoordinatorLog(rm, "alone", 5000).append(0, [(b"k", b"v")], answers.append, placed=placed.append)
        assert (answers, placed) == ([E.NONE], [0])  # answered within the call: nothing waited
        assert rm.produce_purgatory.delayed() == 0

        # The followers stop fetching: the append waits in the produce purgatory for them.
        for follower in (two, three):
            follower.replica_manager.fetcher_manager.remove_fetcher_for_partitions([("three", 0)])
        answers.clear()
        CoordinatorLog(rm, "three", 30000).append(0, [(b"k", b"v")], answers.append)
        leader = partition_of(one, "three").log
        assert (leader.log_end_offset, leader.high_watermark, answers) == (1, 0, [])
        assert rm.produce_purgatory.delayed() == 1
        # They fetch again: the high watermark covers the record and the append is answered.
        address = {1: ("127.0.0.1", one.bound_port("INTERNAL"))}
        for follower in (two, three):
            follower.replica_manager._update_fetchers([("three", 0)], address)
        assert wait_for(lambda: answers == [E.NONE], timeout=10)
        assert leader.high_watermark == 1
