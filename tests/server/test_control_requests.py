"""LeaderAndIsr, StopReplica and UpdateMetadata sent to a running broker on its privileged
listener: applied to the metadata cache and partition table, fenced as Kafka fences them."""

from __future__ import annotations

import uuid

import pytest

from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import leader_and_isr as lai
from kafkalite.protocol.messages import metadata
from kafkalite.protocol.messages import stop_replica as sr
from kafkalite.protocol.messages import update_metadata as um
from tests.support.brokers import running_broker
from tests.support.wire_client import Client

pytestmark = pytest.mark.integration


TOPIC_ID = uuid.UUID(int=42)


@pytest.fixture
def broker(tmp_path):
    with running_broker(tmp_path) as b:
        yield b


def control(broker) -> Client:
    return Client("127.0.0.1", broker.bound_port("INTERNAL"))


def update_metadata_v8(broker, epoch=1, leader=1, partitions=3, topic="orders", listener="PLAINTEXT"):
    R = um.REQUEST
    endpoint = R["live_brokers"]["endpoints"]
    brokers = [
        R["live_brokers"](id=b, rack=None, endpoints=[
            endpoint(port=port, host="127.0.0.1", listener=listener, security_protocol=0)])
        for b, port in ((1, broker.bound_port(listener)), (2, 19999))
    ]
    state = R["topic_states"]["partition_states"]
    return R(controller_id=2, controller_epoch=epoch, broker_epoch=-1, live_brokers=brokers,
             topic_states=[R["topic_states"](topic_name=topic, topic_id=TOPIC_ID, partition_states=[
                 state(partition_index=p, controller_epoch=epoch, leader=leader, leader_epoch=0,
                       isr=[1, 2], zk_version=0, replicas=[1, 2]) for p in range(partitions)])])


def client_metadata(broker):
    with Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as c:
        return c.call(3, 12, metadata.REQUEST(topics=None))


def test_update_metadata_is_what_clients_then_see(broker):
    with control(broker) as c:
        assert c.call(6, 8, update_metadata_v8(broker)).error_code == 0
    md = client_metadata(broker)
    assert md.controller_id == 2
    assert [(b.node_id, b.port) for b in md.brokers] == [(1, broker.bound_port("PLAINTEXT")), (2, 19999)]
    (topic,) = md.topics
    assert (topic.name, topic.topic_id) == ("orders", TOPIC_ID)
    assert [(p.partition_index, p.leader_id, p.isr_nodes) for p in topic.partitions] == [
        (0, 1, [1, 2]), (1, 1, [1, 2]), (2, 1, [1, 2])]


def test_update_metadata_from_a_stale_controller_is_refused(broker):
    with control(broker) as c:
        assert c.call(6, 8, update_metadata_v8(broker, epoch=5)).error_code == 0
        stale = c.call(6, 8, update_metadata_v8(broker, epoch=4, topic="late"))
    assert stale.error_code == E.STALE_CONTROLLER_EPOCH
    assert [t.name for t in client_metadata(broker).topics] == ["orders"]


def test_update_metadata_with_leader_minus_two_deletes(broker):
    with control(broker) as c:
        c.call(6, 8, update_metadata_v8(broker))
        assert c.call(6, 8, update_metadata_v8(broker, leader=-2)).error_code == 0
    assert client_metadata(broker).topics == []


def test_update_metadata_v0_single_endpoint(broker):
    R = um.REQUEST
    state = R["ungrouped_partition_states"]
    req = R(controller_id=1, controller_epoch=1,
            live_brokers=[R["live_brokers"](id=1, v0_host="127.0.0.1",
                                            v0_port=broker.bound_port("PLAINTEXT"))],
            ungrouped_partition_states=[state(topic_name="old", partition_index=0, controller_epoch=1,
                                              leader=1, leader_epoch=0, isr=[1], zk_version=0, replicas=[1])])
    with control(broker) as c:
        assert c.call(6, 0, req).error_code == 0
    md = client_metadata(broker)
    assert [t.name for t in md.topics] == ["old"] and md.brokers[0].node_id == 1


def test_stale_broker_epoch(broker):
    broker.replica_manager.broker_epoch = 10
    req = update_metadata_v8(broker)
    req.broker_epoch = 9
    with control(broker) as c:
        assert c.call(6, 8, req).error_code == E.STALE_BROKER_EPOCH
        req.broker_epoch = 10
        assert c.call(6, 8, req).error_code == 0


def leader_and_isr_v7(epoch=1, leader_epoch=0, replicas=(1, 2), partitions=2, leader=1):
    R = lai.REQUEST
    state = R["topic_states"]["partition_states"]
    return R(controller_id=2, controller_epoch=epoch, broker_epoch=-1, topic_states=[
        R["topic_states"](topic_name="orders", topic_id=TOPIC_ID, partition_states=[
            state(partition_index=p, controller_epoch=epoch, leader=leader, leader_epoch=leader_epoch,
                  isr=list(replicas), partition_epoch=0, replicas=list(replicas), is_new=True)
            for p in range(partitions)])])


def test_leader_and_isr_applied_and_fenced_per_partition(broker):
    rm = broker.replica_manager
    with control(broker) as c:
        first = c.call(4, 7, leader_and_isr_v7())
        assert first.error_code == 0
        assert [(t.topic_id, [(p.partition_index, p.error_code) for p in t.partition_errors])
                for t in first.topics] == [(TOPIC_ID, [(0, 0), (1, 0)])]
        assert rm.partitions[("orders", 0)].leader == 1
        again = c.call(4, 7, leader_and_isr_v7())  # same leader epoch: stale
        assert {p.error_code for t in again.topics for p in t.partition_errors} == {E.STALE_CONTROLLER_EPOCH}
        newer = c.call(4, 7, leader_and_isr_v7(leader_epoch=1))
        assert {p.error_code for t in newer.topics for p in t.partition_errors} == {0}
        assert rm.partitions[("orders", 1)].leader_epoch == 1
        not_mine = c.call(4, 7, leader_and_isr_v7(leader_epoch=2, replicas=(2, 3)))
        assert {p.error_code for t in not_mine.topics for p in t.partition_errors} == {
            E.UNKNOWN_TOPIC_OR_PARTITION}
        stale = c.call(4, 7, leader_and_isr_v7(epoch=0, leader_epoch=3))
        assert stale.error_code == E.STALE_CONTROLLER_EPOCH


def test_a_follower_whose_leader_had_no_address_fetches_once_the_metadata_lists_it(broker):
    # A controller that restarted may send a LeaderAndIsr before the leader has registered with
    # it again: no live_leaders entry, so no fetcher, until an UpdateMetadata lists the leader.
    fetching = broker.replica_manager.fetcher_manager.fetching
    with control(broker) as c:
        assert c.call(4, 7, leader_and_isr_v7(leader=2)).error_code == 0
        assert ("orders", 0) not in fetching()
        assert c.call(6, 8, update_metadata_v8(broker, leader=2, partitions=2,
                                               listener="INTERNAL")).error_code == 0
    assert {k: v for k, v in fetching().items() if k[0] == "orders"} == {("orders", 0): 2, ("orders", 1): 2}


def test_leader_and_isr_v1_shape(broker):
    R = lai.REQUEST
    state = R["ungrouped_partition_states"]
    req = R(controller_id=2, controller_epoch=1, ungrouped_partition_states=[
        state(topic_name="t", partition_index=0, controller_epoch=1, leader=1, leader_epoch=0,
              isr=[1], partition_epoch=0, replicas=[1])])
    with control(broker) as c:
        resp = c.call(4, 1, req)
    assert [(p.topic_name, p.partition_index, p.error_code) for p in resp.partition_errors] == [("t", 0, 0)]


def stop_replica_v3(epoch, delete, leader_epoch):
    R = sr.REQUEST
    ps = R["topic_states"]["partition_states"]
    return R(controller_id=2, controller_epoch=epoch, broker_epoch=-1, topic_states=[
        R["topic_states"](topic_name="orders", partition_states=[
            ps(partition_index=0, leader_epoch=leader_epoch, delete_partition=delete)])])


def test_stop_replica_fencing_and_delete(broker):
    rm = broker.replica_manager
    with control(broker) as c:
        c.call(4, 7, leader_and_isr_v7(leader_epoch=5))
        fenced = c.call(5, 3, stop_replica_v3(1, False, 5))  # not above the epoch held
        assert [p.error_code for p in fenced.partition_errors] == [E.FENCED_LEADER_EPOCH]
        assert ("orders", 0) in rm.partitions
        deleting = c.call(5, 3, stop_replica_v3(1, True, -2))  # topic being deleted: always applies
        assert [p.error_code for p in deleting.partition_errors] == [0]
        assert ("orders", 0) not in rm.partitions and ("orders", 0) in rm.deleted
        stale = c.call(5, 3, stop_replica_v3(0, False, 9))
        assert stale.error_code == E.STALE_CONTROLLER_EPOCH


def test_stop_replica_v0_and_v1_shapes(broker):
    R = sr.REQUEST
    with control(broker) as c:
        c.call(4, 7, leader_and_isr_v7())
        v0 = c.call(5, 0, R(controller_id=2, controller_epoch=1, delete_partitions=False,
                            ungrouped_partitions=[R["ungrouped_partitions"](topic_name="orders",
                                                                            partition_index=0)]))
        v1 = c.call(5, 1, R(controller_id=2, controller_epoch=1, delete_partitions=True,
                            topics=[R["topics"](name="orders", partition_indexes=[1])]))
    assert [(p.topic_name, p.partition_index, p.error_code)
            for p in v0.partition_errors] == [("orders", 0, 0)]
    assert [(p.partition_index, p.error_code) for p in v1.partition_errors] == [(1, 0)]
    assert broker.replica_manager.partitions == {}
