"""Group configs (ConfigResource type GROUP, 32) end to end with confluent-kafka's AdminClient:
IncrementalAlterConfigs and AlterConfigs stored by the controller (forwarded from any broker),
pushed to every broker's ``group_config(group_id)``, described with their source, refused with
Kafka's errors (GroupConfig.validate), kept over a broker's restart (its registration gets them)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kafkalite.controller import group_configs as G
from kafkalite.protocol import error_codes as E
from kafkalite.testing import Cluster
from tests.support.wait import wait_for

BROKERS = (1, 2, 3)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with Cluster(3, offsets_topic=False) as c:
        yield c
        _ADMINS.clear()


_ADMINS: dict = {}  # kept alive while their futures are waited for


def admin(cluster: Cluster, broker: int = 2):
    from confluent_kafka.admin import AdminClient
    key = (id(cluster), broker)
    if key not in _ADMINS:
        _ADMINS[key] = AdminClient({"bootstrap.servers": cluster.nodes[broker].address})
    return _ADMINS[key]


def incremental(cluster: Cluster, group: str, *entries: tuple[str, str | None], broker: int = 2):
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[
        ConfigEntry(name, value or "", incremental_operation=AlterConfigOpType.SET if value is not None
                    else AlterConfigOpType.DELETE) for name, value in entries])
    (future,) = admin(cluster, broker).incremental_alter_configs([resource]).values()
    return future


def error_of(future) -> int:
    from confluent_kafka import KafkaException
    with pytest.raises(KafkaException) as e:
        future.result(10)
    return e.value.args[0].code()


def test_a_change_reaches_every_brokers_group_config(cluster):
    assert incremental(cluster, "orders", ("share.record.lock.duration.ms", "20000"),
                       ("share.auto.offset.reset", "earliest")).result(10) is None
    for b in BROKERS:
        broker = cluster.broker(b)
        assert wait_for(lambda broker=broker: broker.group_config("orders").share_record_lock_duration_ms
                        == 20000, 10)
        view = broker.group_config("orders")
        assert (view.share_auto_offset_reset, view.share_isolation_level) == ("earliest", "read_uncommitted")
        assert broker.group_config("other").share_record_lock_duration_ms == 30000  # Kafka's default
    # DELETE goes back to the broker's default
    assert incremental(cluster, "orders", ("share.auto.offset.reset", None)).result(10) is None
    assert wait_for(lambda: all(cluster.broker(b).group_config("orders").share_auto_offset_reset == "latest"
                                for b in BROKERS), 10)


def test_describe_shows_every_group_config_with_its_source(cluster):
    from confluent_kafka.admin import ConfigResource, ConfigSource, ResourceType
    assert incremental(cluster, "described", ("consumer.session.timeout.ms", "50000")).result(10) is None
    assert wait_for(lambda: cluster.broker(3).group_config("described").consumer_session_timeout_ms == 50000,
                    10)
    (future,) = admin(cluster, 3).describe_configs([ConfigResource(ResourceType.GROUP, "described")]).values()
    entries = future.result(10)
    assert set(entries) == {s.name for s in G.GROUP_SETTINGS}
    assert entries["consumer.session.timeout.ms"].value == "50000"
    assert entries["consumer.session.timeout.ms"].source == ConfigSource.GROUP_CONFIG.value
    assert entries["share.auto.offset.reset"].value == "latest"
    assert entries["share.auto.offset.reset"].source == ConfigSource.DEFAULT_CONFIG.value


@pytest.mark.parametrize("entries", [
    (("no.such.config", "1"),),
    (("share.record.lock.duration.ms", "1000"),),  # below group.share.min.record.lock.duration.ms
    (("share.record.lock.duration.ms", "90000"),),  # above the max
    (("share.auto.offset.reset", "sometimes"),),
    (("share.auto.offset.reset", "by_duration:yesterday"),),
    (("share.isolation.level", "read_dirty"),),
    (("consumer.heartbeat.interval.ms", "abc"),),
])
def test_invalid_values_are_refused_with_invalid_config(cluster, entries):
    assert error_of(incremental(cluster, "refused", *entries)) == E.INVALID_CONFIG
    assert cluster.broker(1).group_config("refused").overrides == {}


def test_by_duration_is_accepted(cluster):
    assert incremental(cluster, "dur", ("share.auto.offset.reset", "by_duration:PT1H30M")).result(10) is None
    assert wait_for(lambda: cluster.broker(1).group_config("dur").share_auto_offset_reset
                    == "by_duration:PT1H30M", 10)


def test_a_restarted_broker_gets_the_group_configs_at_registration(cluster):
    assert incremental(cluster, "kept", ("share.heartbeat.interval.ms", "6000")).result(10) is None
    assert wait_for(lambda: cluster.broker(3).group_config("kept").share_heartbeat_interval_ms == 6000, 10)
    cluster.kill(3)
    cluster.restart(3)
    assert wait_for(lambda: cluster.broker(3).group_config("kept").share_heartbeat_interval_ms == 6000, 10)
