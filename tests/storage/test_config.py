from __future__ import annotations

import pytest

from kafkalite.common.errors import ConfigError
from kafkalite.storage.config import LogConfig


def test_defaults_are_kafkas():
    assert LogConfig().to_properties() == {
        "segment.bytes": "1073741824",
        "segment.ms": "604800000",
        "segment.jitter.ms": "0",
        "segment.index.bytes": "10485760",
        "retention.ms": "604800000",
        "retention.bytes": "-1",
        "index.interval.bytes": "4096",
        "max.message.bytes": "1048588",
        "file.delete.delay.ms": "60000",
        "cleanup.policy": "delete",
        "delete.retention.ms": "86400000",
        "min.compaction.lag.ms": "0",
        "max.compaction.lag.ms": "9223372036854775807",
        "min.cleanable.dirty.ratio": "0.5",
        "min.insync.replicas": "1",
        "unclean.leader.election.enable": "false",
        "leader.replication.throttled.replicas": "",
        "follower.replication.throttled.replicas": "",
    }


def test_throttled_replicas_are_checked_as_kafka_does():
    config = LogConfig.from_properties({"leader.replication.throttled.replicas": "0:1, 1:2",
                                        "follower.replication.throttled.replicas": "*"})
    assert (config.leader_replication_throttled_replicas,
            config.follower_replication_throttled_replicas) == ("0:1,1:2", "*")
    for bad in ("0", "a:1", "*,0:1", "0:1:2"):
        with pytest.raises(ConfigError, match="must be the literal '\\*' or a list of replicas"):
            LogConfig.from_properties({"follower.replication.throttled.replicas": bad})


def test_compaction_settings_parse_as_kafka_does():
    config = LogConfig.from_properties({"cleanup.policy": "compact,delete",
                                        "min.cleanable.dirty.ratio": "0.1",
                                        "delete.retention.ms": "100", "min.compaction.lag.ms": "5"})
    assert (config.compact, config.delete, config.min_cleanable_dirty_ratio, config.delete_retention_ms,
            config.min_compaction_lag_ms) == (True, True, 0.1, 100, 5)
    for bad in ("1.5", "-0.1", "x"):
        with pytest.raises(ConfigError, match="between 0 and 1"):
            LogConfig.from_properties({"min.cleanable.dirty.ratio": bad})
    with pytest.raises(ConfigError, match="at least 1"):
        LogConfig.from_properties({"max.compaction.lag.ms": "0"})


def test_replication_settings_parse_as_kafka_does():
    config = LogConfig.from_properties({"min.insync.replicas": "2", "unclean.leader.election.enable": "TRUE"})
    assert (config.min_insync_replicas, config.unclean_leader_election_enable) == (2, True)
    with pytest.raises(ConfigError, match="Value must be at least 1"):
        LogConfig.from_properties({"min.insync.replicas": "0"})
    with pytest.raises(ConfigError, match="either true or false"):
        LogConfig.from_properties({"unclean.leader.election.enable": "yes"})


def test_topic_overrides_apply_over_a_base():
    base = LogConfig(retention_ms=1000)
    config = LogConfig.from_properties({"segment.bytes": "1024", "cleanup.policy": "compact,delete"}, base)
    assert (config.segment_bytes, config.retention_ms, config.delete) == (1024, 1000, True)
    assert not LogConfig.from_properties({"cleanup.policy": "compact"}).delete


def test_bad_overrides_are_refused_naming_each_setting():
    with pytest.raises(ConfigError) as e:
        LogConfig.from_properties(
            {"segment.bytes": "13", "retention.ms": "soon", "no.such": "1", "cleanup.policy": "keep"}
        )
    assert sorted(err.setting or "" for err in e.value.errors) == [
        "cleanup.policy", "no.such", "retention.ms", "segment.bytes",
    ]
    assert "Value must be at least 14" in str(e.value)


def test_the_defaults_are_the_broker_settings_defaults():
    from kafkalite.storage.config import STORAGE_SETTINGS

    assert LogConfig.from_broker({s.name: s.default for s in STORAGE_SETTINGS}) == LogConfig()


def test_broker_synonyms_give_values_in_their_units_the_first_set_winning():
    from kafkalite.storage.config import STORAGE_SETTINGS

    values = {s.name: s.default for s in STORAGE_SETTINGS}
    hour = 3600 * 1000
    config = LogConfig.from_broker({**values, "log.retention.minutes": 3, "log.roll.hours": 2,
                                    "log.roll.jitter.hours": 1, "log.cleanup.policy": ["compact", "delete"]})
    assert (config.retention_ms, config.segment_ms, config.segment_jitter_ms, config.cleanup_policy) == (
        3 * 60000, 2 * hour, hour, "compact,delete")
    first = LogConfig.from_broker({**values, "log.retention.ms": 5, "log.retention.minutes": 3})
    assert first.retention_ms == 5
    # As Kafka's logRetentionTimeMillis: any negative retention is -1, no limit.
    assert LogConfig.from_broker({**values, "log.retention.hours": -2}).retention_ms == -1
