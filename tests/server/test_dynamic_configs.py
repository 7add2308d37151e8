"""Dynamic configs end to end on one 3-broker cluster (broker 1 runs the controller; storage on
files so that the controller's store survives the restart at the end): changes by confluent-kafka's
and kafka-python's admin clients and by hand-built requests, read back from every broker, applied
live (segments roll and are deleted, a larger batch is refused, the cleaner's threads and the
loggers change), refused with Kafka's errors, and kept across a restart of the whole cluster."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from kafkalite.protocol import error_codes as E
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import alter_configs as ac
from kafkalite.protocol.messages import describe_configs as dc
from kafkalite.protocol.messages import incremental_alter_configs as iac
from kafkalite.protocol.messages import list_config_resources as lcr
from kafkalite.protocol.messages import produce as pm
from kafkalite.protocol.records import Record, build_batch
from kafkalite.server.broker import Broker
from kafkalite.testing import Cluster
from tests.support.wait import wait_for
from tests.support.wire_client import Client

pytestmark = pytest.mark.integration

BROKERS = (1, 2, 3)
TOPICS = ["alpha", "rolling", "sized", "whole"]
SET, DELETE, APPEND = iac.OP_SET, iac.OP_DELETE, iac.OP_APPEND
TOPIC, BROKER = dc.RESOURCE_TOPIC, dc.RESOURCE_BROKER
OK = (E.NONE, None)
TOPIC_OVERRIDE = dc.SOURCE_DYNAMIC_TOPIC_CONFIG
CLUSTER_DEFAULT = dc.SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG
WEEK_MS = 7 * 24 * 3600 * 1000


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with Cluster(3, topics=TOPICS, storage="files") as c:  # one partition, three replicas each
        yield c


def connect(broker: Broker, listener: str | None = None, client_id: str = "test") -> Client:
    return Client("127.0.0.1", broker.bound_port(listener), client_id=client_id)


def describe(broker: Broker, kind: int, name: str, keys: list[str] | None = None) -> tuple[int, dict]:
    R = dc.REQUEST
    body = R(resources=[R["resources"](resource_type=kind, resource_name=name, configuration_keys=keys)],
             include_synonyms=True, include_documentation=True)
    with connect(broker) as c:
        (result,) = c.call(ApiKey.DESCRIBE_CONFIGS, 4, body).results
    return result.error_code, {e.name: e for e in result.configs}


def incremental(broker: Broker, kind: int, name: str, ops: list[tuple[str, int, str | None]],
                validate_only: bool = False, client_id: str = "test", listener: str | None = None) -> tuple:
    R = iac.REQUEST
    body = R(validate_only=validate_only, resources=[R["resources"](
        resource_type=kind, resource_name=name,
        configs=[R["resources"]["configs"](name=n, config_operation=op, value=v) for n, op, v in ops])])
    with connect(broker, listener, client_id) as c:
        (r,) = c.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, body).responses
    return r.error_code, r.error_message


def produce(broker: Broker, topic: str, size: int) -> int:
    R = pm.REQUEST
    records = build_batch([Record(offset_delta=0, timestamp_delta=0, key=None, value=b"x" * size)])
    body = R(transactional_id=None, acks=-1, timeout_ms=10000, topic_data=[R["topic_data"](
        name=topic, partition_data=[R["topic_data"]["partition_data"](index=0, records=records)])])
    with connect(broker) as c:
        return int(c.call(ApiKey.PRODUCE, 9, body).responses[0].partition_responses[0].error_code)


def every_broker(cluster: Cluster, check, timeout: float = 10.0) -> None:
    """``check(broker)`` holds on every broker (the controller's push is asynchronous)."""
    for b in BROKERS:
        assert wait_for(lambda b=b: check(cluster.broker(b)), timeout), f"not on broker {b}"


def topic_value(broker: Broker, topic: str, name: str) -> tuple[str | None, int]:
    code, entries = describe(broker, TOPIC, topic, [name])
    assert code == E.NONE
    return entries[name].value, entries[name].config_source


def confluent_admin(cluster: Cluster):
    from confluent_kafka.admin import AdminClient
    return AdminClient({"bootstrap.servers": cluster.bootstrap_servers})


def kafka_python_admin(cluster: Cluster):
    from kafka.admin import KafkaAdminClient
    return KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=10000)


def confluent_error(future) -> int:
    from confluent_kafka import KafkaException
    with pytest.raises(KafkaException) as e:
        future.result(10)
    return e.value.args[0].code()


# --- topics ----------------------------------------------------------------------------------------


def test_topic_changes_from_both_clients_reach_every_broker_and_its_logs(cluster):
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource
    from kafka.admin import ConfigResource as KafkaPythonResource

    admin = confluent_admin(cluster)
    resource = ConfigResource("TOPIC", "alpha", incremental_configs=[
        ConfigEntry("retention.ms", "3600000", incremental_operation=AlterConfigOpType.SET)])
    (future,) = admin.incremental_alter_configs([resource]).values()
    assert future.result(10) is None
    kp = kafka_python_admin(cluster)
    try:
        result = kp.alter_configs([KafkaPythonResource("TOPIC", "alpha", {"segment.bytes": "1048576"})])
        assert result == {"topic": {"alpha": "OK"}}
        described = kp.describe_configs([KafkaPythonResource("TOPIC", "alpha")])["topic"]["alpha"]
    finally:
        kp.close()
    assert described["retention.ms"]["value"] == "3600000"
    assert described["retention.ms"]["config_source"] == "DYNAMIC_TOPIC_CONFIG"
    for b in BROKERS:
        broker = cluster.broker(b)
        log_ = broker.log_manager.get_log("alpha", 0)
        assert wait_for(lambda log_=log_: log_.config.segment_bytes == 1048576)
        log_config = broker.log_manager.get_log("alpha", 0).config
        assert (log_config.retention_ms, log_config.segment_bytes) == (3600000, 1048576)
        assert topic_value(broker, "alpha", "retention.ms") == ("3600000", TOPIC_OVERRIDE)
        assert topic_value(broker, "alpha", "segment.bytes") == ("1048576", TOPIC_OVERRIDE)
    # confluent-kafka's describe shows the same.
    (future,) = admin.describe_configs([ConfigResource("TOPIC", "alpha")]).values()
    entry = future.result(10)["retention.ms"]
    assert entry.value == "3600000" and entry.source == TOPIC_OVERRIDE


@pytest.mark.filterwarnings("ignore:alter_configs has been deprecated:DeprecationWarning")
def test_alter_configs_replaces_a_topics_whole_set(cluster):
    from confluent_kafka.admin import ConfigResource

    admin = confluent_admin(cluster)
    assert incremental(cluster.broker(3), TOPIC, "whole",
                       [("retention.ms", SET, "7200000"), ("cleanup.policy", APPEND, "compact")]) == OK
    every_broker(cluster, lambda b: topic_value(b, "whole", "cleanup.policy")[0] == "delete,compact")
    whole = ConfigResource("TOPIC", "whole", set_config={"segment.bytes": "2097152"})
    (future,) = admin.alter_configs([whole]).values()
    assert future.result(10) is None
    every_broker(cluster, lambda b: b.topic_configs.overrides("whole") == {"segment.bytes": "2097152"})
    for b in BROKERS:
        value, source = topic_value(cluster.broker(b), "whole", "retention.ms")
        assert source != TOPIC_OVERRIDE and value == str(WEEK_MS)
        assert cluster.broker(b).log_manager.get_log("whole", 0).config.compact is False


def test_segment_bytes_rolls_segments_and_retention_deletes_them(cluster):
    leader = cluster.broker(cluster.leader("rolling"))
    assert incremental(cluster.broker(2), TOPIC, "rolling", [("segment.bytes", SET, "1024")]) == OK
    every_broker(cluster, lambda b: b.log_manager.get_log("rolling", 0).config.segment_bytes == 1024)
    for _ in range(12):
        assert produce(leader, "rolling", 300) == E.NONE
    for b in BROKERS:  # the followers roll at the same size
        log_ = cluster.broker(b).log_manager.get_log("rolling", 0)
        assert wait_for(lambda log_=log_: len(log_.segments()) >= 4), f"broker {b}: {log_}"
    log_ = leader.log_manager.get_log("rolling", 0)
    assert log_.log_start_offset == 0
    assert incremental(cluster.broker(3), TOPIC, "rolling", [("retention.ms", SET, "1")]) == OK
    assert wait_for(lambda: (leader.log_manager.cleanup_logs(), log_.log_start_offset > 0)[1])
    assert len(log_.segments()) < 4


# --- brokers ---------------------------------------------------------------------------------------


def test_message_max_bytes_at_the_cluster_default_refuses_a_larger_batch(cluster):
    leader = cluster.broker(cluster.leader("sized"))
    assert produce(leader, "sized", 3000) == E.NONE
    # Asked of broker 2 (not the controller): checked there, forwarded, pushed to every broker.
    assert incremental(cluster.broker(2), BROKER, "", [("message.max.bytes", SET, "2000")]) == OK
    every_broker(cluster, lambda b: b.dynamic_config.values["message.max.bytes"] == 2000)
    assert produce(leader, "sized", 3000) == E.MESSAGE_TOO_LARGE
    assert produce(leader, "sized", 500) == E.NONE
    for b in BROKERS:
        code, entries = describe(cluster.broker(b), BROKER, "", None)
        assert code == E.NONE and list(entries) == ["message.max.bytes"]
        assert entries["message.max.bytes"].config_source == CLUSTER_DEFAULT
        code, entries = describe(cluster.broker(b), BROKER, str(b), ["message.max.bytes"])
        entry = entries["message.max.bytes"]
        assert (entry.value, entry.config_source, entry.read_only) == (
            "2000", CLUSTER_DEFAULT, False)
        assert [(s.source, s.value) for s in entry.synonyms] == [
            (CLUSTER_DEFAULT, "2000"), (dc.SOURCE_DEFAULT_CONFIG, "1048588")]
        assert topic_value(cluster.broker(b), "sized", "max.message.bytes") == (
            "2000", CLUSTER_DEFAULT)
    assert incremental(cluster.broker(1), BROKER, "", [("message.max.bytes", DELETE, None)]) == OK
    every_broker(cluster, lambda b: b.dynamic_config.values["message.max.bytes"] == 1048588)
    assert produce(leader, "sized", 3000) == E.NONE


def test_one_brokers_config_with_kafka_python_then_reset(cluster):
    from kafka.admin import ConfigResource

    kp = kafka_python_admin(cluster)
    try:
        assert kp.alter_configs([ConfigResource("BROKER", "2", {"log.retention.ms": "4242000"})]) == {
            "broker": {"2": "OK"}}
        assert wait_for(lambda: cluster.broker(2).dynamic_config.values["log.retention.ms"] == 4242000)
        shown = kp.describe_configs([ConfigResource("BROKER", "2")], include_synonyms=True)["broker"]["2"]
        entry = shown["log.retention.ms"]
        assert (entry["value"], entry["config_source"]) == ("4242000", "DYNAMIC_BROKER_CONFIG")
        assert entry["synonyms"][0] == {"name": "log.retention.ms", "value": "4242000",
                                        "source": "DYNAMIC_BROKER_CONFIG"}
        for b in (1, 3):  # the others keep theirs
            assert cluster.broker(b).dynamic_config.broker_configs == {}
            assert kp.describe_configs([ConfigResource("BROKER", str(b))])["broker"][str(b)] == {}
        # Topics without an override follow the broker's new default on that broker only.
        assert topic_value(cluster.broker(2), "sized", "retention.ms") == (
            "4242000", dc.SOURCE_DYNAMIC_BROKER_CONFIG)
        assert cluster.broker(2).log_manager.get_log("sized", 0).config.retention_ms == 4242000
        assert cluster.broker(3).log_manager.get_log("sized", 0).config.retention_ms == WEEK_MS
        reset = kp.reset_configs([ConfigResource("BROKER", "2", ["log.retention.ms"])])
        assert reset == {"broker": {"2": "OK"}}
        assert wait_for(lambda: cluster.broker(2).dynamic_config.broker_configs == {})
        assert kp.describe_configs([ConfigResource("BROKER", "2")])["broker"]["2"] == {}
    finally:
        kp.close()


def test_cleaner_threads_grow_and_shrink_live(cluster):
    every_broker(cluster, lambda b: b.log_manager.cleaner.num_threads == 1)
    assert incremental(cluster.broker(3), BROKER, "", [("log.cleaner.threads", SET, "2")]) == OK
    every_broker(cluster, lambda b: b.log_manager.cleaner.num_threads == 2)
    # DynamicThreadPool's rule: at most double.
    code, message = incremental(cluster.broker(3), BROKER, "", [("log.cleaner.threads", SET, "5")])
    assert code == E.INVALID_REQUEST
    assert message == "Log cleaner threads cannot be increased to more than double the current value 2"
    assert incremental(cluster.broker(1), BROKER, "", [("log.cleaner.threads", DELETE, None)]) == OK
    every_broker(cluster, lambda b: b.log_manager.cleaner.num_threads == 1)


def test_producer_id_expiration_and_verification_apply_live(cluster):
    assert incremental(cluster.broker(2), BROKER, "", [("producer.id.expiration.ms", SET, "60000"),
                                                       ("transaction.partition.verification.enable", SET,
                                                        "false")]) == OK
    for b in BROKERS:
        broker = cluster.broker(b)
        log_ = broker.log_manager.get_log("sized", 0)
        assert wait_for(lambda log_=log_: log_.producer_state.producer_id_expiration_ms == 60000)
        assert broker.txn_verifier.enabled is False
    assert incremental(cluster.broker(2), BROKER, "", [("producer.id.expiration.ms", DELETE, None),
                                                       ("transaction.partition.verification.enable", DELETE,
                                                        None)]) == OK
    every_broker(cluster, lambda b: b.txn_verifier.enabled is True
                 and b.log_manager.get_log("sized", 0).producer_state.producer_id_expiration_ms == 86400000)


def test_network_and_handler_threads_resize_through_the_registry(cluster):
    """The SocketServer and the data plane's RequestHandlerPool are registered components: a
    cluster-wide num.io.threads and one broker's listener override of num.network.threads reach
    them, and their own checks refuse what Kafka refuses."""
    assert incremental(cluster.broker(2), BROKER, "", [("num.io.threads", SET, "4")]) == OK
    every_broker(cluster, lambda b: len(b.pools[-1].threads) == 4)
    per_listener = "listener.name.plaintext.num.network.threads"
    assert incremental(cluster.broker(2), BROKER, "2", [(per_listener, SET, "2")]) == OK
    assert wait_for(lambda: cluster.broker(2).socket_server.processor_count("PLAINTEXT") == 2)
    assert cluster.broker(2).socket_server.processor_count("INTERNAL") == 1
    assert cluster.broker(3).socket_server.processor_count("PLAINTEXT") == 1
    code, message = incremental(cluster.broker(2), BROKER, "", [("num.io.threads", SET, "9")])
    assert (code, message) == (E.INVALID_REQUEST, "Dynamic thread count update validation failed for "
                                                  "num.io.threads=9, value should not be greater than double "
                                                  "the current value 4")
    code, message = incremental(cluster.broker(2), BROKER, "", [("ssl.keystore.location", SET, "/x")])
    assert (code, message) == (E.INVALID_REQUEST, "Cannot update these configs at default cluster level, "
                                                  "broker id must be specified: Set(ssl.keystore.location)")
    assert incremental(cluster.broker(2), BROKER, "2", [(per_listener, DELETE, None)]) == OK
    assert incremental(cluster.broker(1), BROKER, "", [("num.io.threads", DELETE, None)]) == OK
    every_broker(cluster, lambda b: len(b.pools[-1].threads) == 2)
    assert wait_for(lambda: cluster.broker(2).socket_server.processor_count("PLAINTEXT") == 1)


def test_the_controller_follows_the_dynamic_unclean_election_default(cluster):
    """unclean.leader.election.enable at the cluster default decides, for topics without an
    override, whether the controller may elect outside the ISR."""
    controller = cluster.controller.controller
    b3, unclean = cluster.broker(3), "unclean.leader.election.enable"
    assert controller._unclean_allowed("sized") is False
    assert incremental(b3, BROKER, "", [(unclean, SET, "true")]) == OK
    assert wait_for(lambda: controller._unclean_allowed("sized") is True)
    assert incremental(b3, TOPIC, "sized", [(unclean, SET, "false")]) == OK
    assert wait_for(lambda: controller._unclean_allowed("sized") is False)
    assert controller._unclean_allowed("alpha") is True
    assert incremental(b3, TOPIC, "sized", [(unclean, DELETE, None)]) == OK
    assert incremental(b3, BROKER, "", [(unclean, DELETE, None)]) == OK
    assert wait_for(lambda: controller._unclean_allowed("sized") is False)


def test_replication_throttles_reach_every_brokers_quotas(cluster):
    """The replication quotas (the reassignment's throttles) are a registered component: the
    rates set at the cluster default and one broker's own reach the quota managers."""
    rate, follower = "leader.replication.throttled.rate", "follower.replication.throttled.rate"
    assert incremental(cluster.broker(1), BROKER, "", [(rate, SET, "1048576")]) == OK
    assert incremental(cluster.broker(3), BROKER, "3", [(follower, SET, "2097152")]) == OK
    every_broker(cluster, lambda b: b.replica_manager.quotas.leader.bound == 1048576)
    assert wait_for(lambda: cluster.broker(3).replica_manager.quotas.follower.bound == 2097152)
    assert cluster.broker(2).replica_manager.quotas.follower.bound != 2097152
    assert incremental(cluster.broker(3), BROKER, "3", [(follower, DELETE, None)]) == OK
    assert incremental(cluster.broker(1), BROKER, "", [(rate, DELETE, None)]) == OK
    every_broker(cluster, lambda b: b.replica_manager.quotas.leader.unlimited
                 and b.replica_manager.quotas.follower.unlimited)


# --- refusals --------------------------------------------------------------------------------------


def test_refusals_with_kafkas_errors(cluster):
    from confluent_kafka import KafkaError
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource

    admin = confluent_admin(cluster)

    def alter(kind: str, name: str, key: str, value: str):
        (future,) = admin.incremental_alter_configs([ConfigResource(kind, name, incremental_configs=[
            ConfigEntry(key, value, incremental_operation=AlterConfigOpType.SET)])]).values()
        return future

    unknown = alter("TOPIC", "no-such-topic", "retention.ms", "1")
    assert confluent_error(unknown) == KafkaError.UNKNOWN_TOPIC_OR_PART
    assert confluent_error(alter("TOPIC", "alpha", "retention.ms", "soon")) == KafkaError.INVALID_CONFIG
    assert confluent_error(alter("TOPIC", "alpha", "no.such.config", "1")) == KafkaError.INVALID_CONFIG
    assert confluent_error(alter("BROKER", "1", "log.dirs", "/elsewhere")) == KafkaError.INVALID_REQUEST
    assert confluent_error(alter("BROKER", "3", "log.segment.bytes", "ten")) == KafkaError.INVALID_REQUEST
    # The reasons, as Kafka words them.
    b2 = cluster.broker(2)
    assert incremental(b2, TOPIC, "no-such-topic", [("retention.ms", SET, "1")]) == (
        E.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'no-such-topic' does not exist.")
    assert incremental(b2, TOPIC, "alpha", [("retention.ms", SET, "soon")]) == (
        E.INVALID_CONFIG, "Invalid value soon for configuration retention.ms: Not a number of type LONG")
    assert incremental(b2, TOPIC, "alpha", [("retention.ms", APPEND, "1")]) == (
        E.INVALID_CONFIG, "Can't APPEND to key retention.ms because its type is not LIST.")
    assert incremental(b2, BROKER, "2", [("log.dirs", SET, "/x")]) == (
        E.INVALID_REQUEST, "Cannot update these configs dynamically: Set(log.dirs)")
    per_broker = "listener.name.plaintext.log.retention.ms"
    assert incremental(b2, BROKER, "", [(per_broker, SET, "5")]) == (
        E.INVALID_REQUEST, "Cannot update these configs at default cluster level, broker id must be "
                           f"specified: Set({per_broker})")
    assert incremental(b2, BROKER, "3", [("log.retention.ms", SET, "5")]) == (
        E.INVALID_REQUEST, "Unexpected broker id, expected 2, but received 3")
    assert incremental(b2, dc.RESOURCE_BROKER_LOGGER, "3", [("root", SET, "INFO")]) == (
        E.INVALID_REQUEST, "Unexpected node id. Expected 2, but received 3")
    assert incremental(b2, TOPIC, "alpha", [("retention.ms", SET, None)]) == (
        E.INVALID_REQUEST, "Null value not supported for : retention.ms")
    # A resource twice in one request: both refused, as Kafka's preprocess does.
    R = iac.REQUEST
    twice = [R["resources"](resource_type=TOPIC, resource_name="alpha", configs=[
        R["resources"]["configs"](name="retention.ms", config_operation=SET, value=v)]) for v in ("1", "2")]
    with connect(b2) as c:
        request = R(validate_only=False, resources=twice)
        answers = c.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, request).responses
    assert [(r.error_code, r.error_message) for r in answers] == [
        (E.INVALID_REQUEST, "Each resource must appear at most once.")] * 2
    # AlterConfigs has no BROKER_LOGGER.
    A = ac.REQUEST
    with connect(b2) as c:
        (r,) = c.call(ApiKey.ALTER_CONFIGS, 2, A(validate_only=False, resources=[A["resources"](
            resource_type=dc.RESOURCE_BROKER_LOGGER, resource_name="2", configs=[])])).responses
    assert (r.error_code, r.error_message) == (E.INVALID_REQUEST, "Unknown resource type 8")
    # Nothing changed anywhere.
    for b in BROKERS:
        assert cluster.broker(b).dynamic_config.default_configs == {}
        assert "no.such.config" not in (cluster.broker(b).topic_configs.overrides("alpha") or {})


def test_a_forwarded_change_reaching_a_broker_without_the_controller_is_not_controller(cluster):
    """What Kafka's inactive controller answers: a forwarded request (the ControllerLink's client
    id on the privileged listener) at a broker that does not run the controller."""
    b3 = cluster.broker(3)
    listener = b3.config.privileged_listener_name
    code, _ = incremental(b3, TOPIC, "alpha", [("retention.ms", SET, "1")],
                          client_id="broker-2-alter-configs", listener=listener)
    assert code == E.NOT_CONTROLLER
    assert topic_value(b3, "alpha", "retention.ms")[0] != "1"


def test_validate_only_checks_and_changes_nothing(cluster):
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource

    admin = confluent_admin(cluster)
    (future,) = admin.incremental_alter_configs([ConfigResource("TOPIC", "alpha", incremental_configs=[
        ConfigEntry("retention.ms", "5", incremental_operation=AlterConfigOpType.SET)])],
        validate_only=True).values()
    assert future.result(10) is None
    assert incremental(cluster.broker(2), BROKER, "", [("log.segment.bytes", SET, "5000")],
                       validate_only=True) == OK
    assert incremental(cluster.broker(2), BROKER, "", [("log.segment.bytes", SET, "5")],
                       validate_only=True)[0] == E.INVALID_REQUEST
    for b in BROKERS:
        assert topic_value(cluster.broker(b), "alpha", "retention.ms")[0] != "5"
        assert cluster.broker(b).dynamic_config.default_configs == {}


# --- loggers and listing ---------------------------------------------------------------------------


def test_broker_logger_levels_with_kafka_python(cluster):
    from kafka.admin import ConfigResource

    name = "kafkalite.server.handlers.configs"
    logger = logging.getLogger(name)
    before = logger.level
    kp = kafka_python_admin(cluster)
    try:
        asked = ConfigResource("BROKER_LOGGER", "2", [name, "root"])
        shown = kp.describe_configs([asked])["broker_logger"]["2"]
        assert set(shown) == {name, "root"}
        assert shown[name]["config_source"] == "DYNAMIC_BROKER_LOGGER_CONFIG"
        assert kp.alter_configs([ConfigResource("BROKER_LOGGER", "2", {name: "TRACE"})]) == {
            "broker_logger": {"2": "OK"}}
        assert logger.level == 5 and logger.isEnabledFor(5)
        shown = kp.describe_configs([ConfigResource("BROKER_LOGGER", "2", [name])])["broker_logger"]["2"]
        assert shown[name]["value"] == "TRACE"
        result = kp.alter_configs([ConfigResource("BROKER_LOGGER", "2", {name: "CHATTY"})])
        assert result["broker_logger"]["2"].startswith(
            "[Error 40] InvalidConfigurationError: Cannot set the log level")
        assert logger.level == 5
        reset = kp.reset_configs([ConfigResource("BROKER_LOGGER", "2", [name])])
        assert reset == {"broker_logger": {"2": "OK"}}
        assert logger.level == logging.NOTSET
    finally:
        kp.close()
        logger.setLevel(before)


def test_list_config_resources_with_kafka_python(cluster):
    kp = kafka_python_admin(cluster)
    try:
        listed = kp.list_config_resources()
        assert listed["broker"] == ["1", "2", "3"] and listed["broker_logger"] == ["1", "2", "3"]
        assert set(TOPICS) <= set(listed["topic"]) and listed["topic"] == sorted(listed["topic"])
        assert kp.list_config_resources(["TOPIC"]) == {"topic": listed["topic"]}
        assert kp.list_config_resources(["GROUP"]) == {}
    finally:
        kp.close()
    L = lcr.REQUEST
    with connect(cluster.broker(3)) as c:
        v0 = c.call(ApiKey.LIST_CONFIG_RESOURCES, 0, L())  # ListClientMetricsResources: none here
        assert (v0.error_code, v0.config_resources) == (E.NONE, [])
        unknown = c.call(ApiKey.LIST_CONFIG_RESOURCES, 1, L(resource_types=[TOPIC, 64]))
        assert (unknown.error_code, unknown.config_resources) == (E.UNSUPPORTED_VERSION, [])
        both = c.call(ApiKey.LIST_CONFIG_RESOURCES, 1, L(resource_types=[TOPIC, BROKER]))
    assert [r.resource_type for r in both.config_resources][:3] == [BROKER] * 3  # Kafka's order


# --- last: the whole cluster restarted -------------------------------------------------------------


def test_configs_survive_a_restart_of_the_whole_cluster(cluster):
    b2 = cluster.broker(2)
    assert incremental(b2, BROKER, "", [("log.retention.bytes", SET, "123456789")]) == OK
    assert incremental(b2, BROKER, "2", [("log.roll.ms", SET, "3600000")]) == OK
    assert incremental(b2, TOPIC, "alpha", [("min.cleanable.dirty.ratio", SET, "0.25")]) == OK
    every_broker(cluster, lambda b: b.dynamic_config.values["log.retention.bytes"] == 123456789)
    cluster.restart_all()
    every_broker(cluster, lambda b: b.dynamic_config.default_configs == {"log.retention.bytes": "123456789"})
    assert wait_for(lambda: cluster.broker(2).dynamic_config.broker_configs == {"log.roll.ms": "3600000"})
    for b in BROKERS:
        broker = cluster.broker(b)
        assert topic_value(broker, "alpha", "min.cleanable.dirty.ratio") == ("0.25", TOPIC_OVERRIDE)
        assert topic_value(broker, "alpha", "retention.bytes") == ("123456789", CLUSTER_DEFAULT)
        assert wait_for(lambda broker=broker: broker.log_manager.get_log("sized", 0).config.retention_bytes
                        == 123456789)
    assert cluster.broker(2).log_manager.get_log("sized", 0).config.segment_ms == 3600000
    assert cluster.broker(3).log_manager.get_log("sized", 0).config.segment_ms == WEEK_MS


def test_forwarded_over_a_controller_listener(tmp_path):
    """Brokers registering on the controller's CONTROLLER listener (controller.listener.names, as
    in docs/configuration.md's example) forward their changes there: a broker id's set still
    reaches that broker."""
    from tests.support.broker_process import free_port
    from tests.support.brokers import running_broker

    cport = free_port()
    controller = f"127.0.0.1:{cport}"
    with running_broker(tmp_path / "1", listeners=f"PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0,"
                        f"CONTROLLER://127.0.0.1:{cport}",
                        listener_security_protocol_map="PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,"
                                                       "CONTROLLER:PLAINTEXT",
                        controller_listener_names="CONTROLLER",
                        controller_quorum_bootstrap_servers=controller) as one:
        with running_broker(tmp_path / "2", node_id="2",
                            controller_quorum_bootstrap_servers=controller) as two:
            assert two.controller is None and two.controller_link.address == ("127.0.0.1", cport)
            assert incremental(two, BROKER, "2", [("log.segment.bytes", SET, "5000")]) == OK
            assert wait_for(lambda: two.dynamic_config.values["log.segment.bytes"] == 5000)
            assert one.dynamic_config.broker_configs == {}
