"""The replication throttle's pieces with a fake clock: Kafka's throttled-replica lists as a broker
reads them, the SimpleRate over the quota windows, and the Reconfigurable that sets the rates."""

from __future__ import annotations

import pytest

from kafkalite.common.errors import ConfigError
from kafkalite.server.replication.quota import (
    ReplicationQuotaManager,
    ReplicationQuotas,
    is_throttled,
    throttled_partitions,
)
from kafkalite.server.replication.settings import UNLIMITED_RATE, ReplicationSettings


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_broker_takes_the_items_naming_it():
    assert throttled_partitions("0:1,1:2,3:1", 1) == frozenset({0, 3})
    assert throttled_partitions("0:1,1:2", 3) == frozenset()
    assert throttled_partitions("*", 7) == "*"
    assert is_throttled("*", 5, 2)
    assert is_throttled("0:2", 0, 2) and not is_throttled("0:2", 1, 2) and not is_throttled("0:2", 0, 1)
    assert not is_throttled("", 0, 1)


def test_rate_is_bytes_over_the_windows_kept():
    clock = Clock()
    quota = ReplicationQuotaManager("FollowerReplication", 1000, samples=3, window_s=1.0, clock=clock)
    assert quota.rate() == 0 and not quota.is_quota_exceeded()
    quota.record(900)
    assert quota.rate() == 900  # at least one window of elapsed time
    assert not quota.is_quota_exceeded()
    quota.record(200)
    assert quota.is_quota_exceeded()
    clock.now += 1.5
    assert quota.rate() == pytest.approx(1100 / 1.5)
    assert not quota.is_quota_exceeded()
    clock.now += 10  # every window has aged out
    assert quota.rate() == 0
    assert quota.recorded_bytes == 1100


def test_only_throttled_replicas_out_of_sync_are_held_while_over_the_rate():
    clock = Clock()
    quota = ReplicationQuotaManager("LeaderReplication", 100, samples=11, window_s=1.0, clock=clock)
    assert not quota.should_throttle("0:1", 0, 1, in_sync=False)  # under the rate
    quota.record(1000)
    assert quota.should_throttle("0:1", 0, 1, in_sync=False)
    assert not quota.should_throttle("0:1", 0, 1, in_sync=True)  # in sync: never
    assert not quota.should_throttle("0:1", 1, 1, in_sync=False)  # not listed
    assert not quota.should_throttle("0:2", 0, 1, in_sync=False)  # another broker's item
    assert quota.throttled == 1
    quota.update_quota(UNLIMITED_RATE)
    assert not quota.should_throttle("*", 0, 1, in_sync=False)  # no bound


def test_quotas_are_reconfigured_by_the_two_rates():
    quotas = ReplicationQuotas(ReplicationSettings())
    assert quotas.leader.unlimited and quotas.follower.unlimited
    assert quotas.reconfigurable_configs == {"leader.replication.throttled.rate",
                                             "follower.replication.throttled.rate"}
    with pytest.raises(ConfigError):
        quotas.validate_reconfiguration({"leader.replication.throttled.rate": -1})
    quotas.validate_reconfiguration({"leader.replication.throttled.rate": 0})
    quotas.reconfigure({}, {"leader.replication.throttled.rate": 5_000_000,
                            "follower.replication.throttled.rate": 1_000_000})
    assert (quotas.leader.bound, quotas.follower.bound) == (5_000_000, 1_000_000)
