"""The controller as the metadata log's state machine, over a fake of RaftManager's shape: a
standby answers NOT_CONTROLLER, activation rebuilds everything from the image (Kafka's
onControllerFailover), losing leadership drops it, a write that fails aborts its event, snapshots
come every metadata.log.max.record.bytes.between.snapshots and a standby's image follows."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from kafkalite.common.errors import ApiError
from kafkalite.controller import records as R
from kafkalite.controller.controller import KafkaController
from kafkalite.controller.settings import ControllerSettings
from kafkalite.controller.store import ControllerStore
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import broker_registration as br
from kafkalite.raft.messages import NO_LEADER
from tests.support.fake_raft import FakeRaft
from tests.support.wait import wait_for


def closed_port() -> int:
    """A port nothing listens on: the controller's channel to a broker there retries in vain."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def controller(**settings: int) -> Iterator[tuple[KafkaController, FakeRaft]]:
    raft = FakeRaft(node_id=1)
    c = KafkaController(ControllerSettings(node_id=1, listener="INTERNAL", auto_leader_rebalance_enable=False,
                                           **settings), raft, "cluster")
    raft.listener = c
    c.startup()
    try:
        yield c, raft
    finally:
        c.shutdown()


def register(c: KafkaController, broker_id: int, port: int) -> int:
    R_ = br.REQUEST
    code, epoch = c.register(R_(broker_id=broker_id, cluster_id="cluster", incarnation_id=uuid.uuid4(),
                                listeners=[R_["listeners"](name="INTERNAL", host="127.0.0.1", port=port,
                                                           security_protocol=0)],
                                rack=None)).result(10)
    assert code == E.NONE
    return int(epoch)


def not_controller(future) -> bool:
    with pytest.raises(ApiError) as e:
        future.result(10)
    return e.value.code == E.NOT_CONTROLLER


def test_a_standby_answers_not_controller_and_activates_when_its_node_leads():
    with controller() as (c, raft):
        assert not c.is_active
        assert not_controller(c.create_topic("t", 1, 1, None, False))
        assert c.heartbeat(1, 0) == (E.NOT_CONTROLLER, False)
        assert raft.entries == []  # nothing written
        raft.startup()
        assert c.await_active(10) and c.epoch == raft.epoch == 1
        port = closed_port()
        epoch = register(c, 1, port)
        # The broker epoch is the offset of its RegisterBrokerRecord (after the epoch's control entry).
        assert epoch == 1 and type(R.decode(raft.entries[1].data)).__name__ == "RegisterBrokerRecord"
        assert c.heartbeat(1, epoch) == (E.NONE, False)
        topic_id, assignment = c.create_topic("t", 2, 1, None, False).result(10)
        assert assignment == {0: [1], 1: [1]}
        assert c.store.load()[0] == {"t": topic_id}


def test_losing_leadership_drops_everything_and_a_new_term_rebuilds_it_from_the_image():
    with controller() as (c, raft):
        raft.startup()
        assert c.await_active(10)
        port = closed_port()
        epoch = register(c, 1, port)
        topic_id, _ = c.create_topic("t", 2, 1, None, False).result(10)
        c.alter_client_quotas([([("user", "a")], [("producer_byte_rate", 5.0, False)])], False).result(10)
        raft.lose_leadership(2)
        assert wait_for(lambda: not c.is_active and not c.context.topic_ids, timeout=10)
        assert not_controller(c.create_topic("u", 1, 1, None, False))
        assert c.heartbeat(1, epoch) == (E.NOT_CONTROLLER, False)
        assert c.quotas.entities == {} and c.channel.broker_ids == []
        raft.elect()
        assert c.await_active(10)
        assert c.epoch == raft.epoch == 3  # the Raft epoch
        assert c.context.topic_ids == {"t": topic_id}
        assert c.context.live_broker_ids == {1} and c.context.broker_epoch(1) == epoch
        assert c.channel.broker_ids == [1]  # the full state is on its way to the live broker
        assert c.quotas.entities == {(("user", "a"),): {"producer_byte_rate": 5.0}}
        lead = c.context.partition_leadership_info(("t", 0))  # type: ignore[arg-type]
        assert lead is not None and lead.leader == 1 and lead.controller_epoch == 3
        assert c.heartbeat(1, epoch) == (E.NONE, False)


def test_a_failed_write_aborts_the_event_and_the_controller_starts_again_from_the_image():
    with controller() as (c, raft):
        raft.startup()
        assert c.await_active(10)
        register(c, 1, closed_port())
        raft.fail_appends = True
        assert not_controller(c.create_topic("t", 1, 1, None, False))
        raft.fail_appends = False
        # Still the leader: active again, in the same epoch, without the topic that was not committed.
        assert wait_for(lambda: c.is_active, timeout=10)
        assert c.epoch == raft.epoch and "t" not in c.context.topic_ids
        assert c.create_topic("t", 1, 1, None, False).result(10)


def test_a_deletion_that_began_resumes_in_the_next_term():
    with controller() as (c, raft):
        raft.startup()
        assert c.await_active(10)
        register(c, 1, closed_port())  # the replica never answers its StopReplica
        c.create_topic("t", 1, 1, None, False).result(10)
        assert c.delete_topic("t", None).result(10) == "t"
        assert c.deleting() == ["t"] and c.store.deleting_topics() == ["t"]
        raft.lose_leadership()
        assert wait_for(lambda: not c.is_active, timeout=10)
        raft.elect()
        assert c.await_active(10)
        assert c.deleting() == ["t"]
        # Refused as Kafka refuses a topic marked for deletion.
        with pytest.raises(ApiError) as e:
            c.create_topic("t", 1, 1, None, False).result(10)
        assert e.value.code == E.TOPIC_ALREADY_EXISTS


def test_snapshots_every_so_many_bytes_and_a_standby_image_follows():
    with controller(metadata_log_max_record_bytes_between_snapshots=2000) as (c, raft):
        raft.startup()
        assert c.await_active(10)
        register(c, 1, closed_port())
        for i in range(30):
            c.create_topic(f"t{i}", 2, 1, None, False).result(10)
        assert raft.snapshots
        snapshot_id, payload = raft.snapshots[-1]
        # The snapshot covers every record below its end offset, in the epoch of the last one.
        assert snapshot_id.epoch == raft.epoch and 0 < snapshot_id.offset <= len(raft.entries)
        standby = ControllerStore(lambda records: -1)
        standby.load_snapshot(snapshot_id.offset, snapshot_id.epoch, payload)
        standby.apply_entries(raft.entries[snapshot_id.offset:])
        assert standby.image == c.store.image


def test_a_snapshot_is_also_due_once_the_interval_has_passed_since_the_last():
    # Bytes enough never come (Kafka's 20 MiB default); an interval of 0 ms makes every commit due.
    with controller(metadata_log_max_snapshot_interval_ms=0) as (c, raft):
        raft.startup()
        assert c.await_active(10)
        register(c, 1, closed_port())
        c.create_topic("t", 1, 1, None, False).result(10)
        assert raft.snapshots and raft.snapshots[-1][0].offset == len(raft.entries)
    with controller() as (c, raft):  # Kafka's default hour: no snapshot for a few records
        raft.startup()
        assert c.await_active(10)
        register(c, 1, closed_port())
        c.create_topic("t", 1, 1, None, False).result(10)
        assert not raft.snapshots


def test_the_leader_gone_means_a_standby():
    with controller() as (c, raft):
        raft.startup()
        assert c.await_active(10)
        raft.lose_leadership(NO_LEADER)
        assert wait_for(lambda: not c.is_active, timeout=10)
        assert not_controller(c.allocate_producer_ids(1, 0))


def test_a_broker_done_with_its_controlled_shutdown_is_fenced_in_the_log():
    with controller() as (c, raft):
        raft.startup()
        assert c.await_active(10)
        epoch = register(c, 1, closed_port())
        assert wait_for(lambda: c.heartbeat(1, epoch, want_shut_down=True) == (E.NONE, True), timeout=10)
        fence = R.FENCE_BROKER_RECORD(id=1, epoch=epoch)
        assert wait_for(lambda: fence in [R.decode(e.data) for e in raft.records()], timeout=10)
        # Still in the context until its session ends; a new term does not take it as live.
        assert c.context.live_or_shutting_down_broker_ids == {1}
        raft.lose_leadership()
        raft.elect()
        assert c.await_active(10) and c.context.live_or_shutting_down_broker_ids == set()


def test_a_controlled_shutdown_leaves_the_partitions_of_a_topic_being_deleted_alone():
    """Kafka's doControlledShutdown acts on no partition of a topic queued for deletion: moving
    its leadership would send a LeaderAndIsr that makes the new leader create the log again."""
    with controller() as (c, raft):
        raft.startup()
        assert c.await_active(10)
        # Closed ports: the StopReplica (delete) is never answered, so "gone" stays being deleted.
        epochs = {b: register(c, b, closed_port()) for b in (1, 2)}
        for b, epoch in epochs.items():
            assert c.heartbeat(b, epoch) == (E.NONE, False)
        c.create_topic("gone", 1, 2, {0: [1, 2]}, False).result(10)
        c.create_topic("kept", 1, 2, {0: [1, 2]}, False).result(10)
        assert wait_for(lambda: {tp.topic: lead.leader for tp, lead in c.context.partition_leadership.items()}
                        == {"gone": 1, "kept": 1}, timeout=10)
        c.delete_topic("gone", None).result(10)
        assert c.is_deleting("gone")
        before = {tp.topic: lead for tp, lead in c.context.partition_leadership.items()}
        assert wait_for(lambda: c.heartbeat(1, epochs[1], want_shut_down=True) == (E.NONE, True), timeout=10)
        after = {tp.topic: lead for tp, lead in c.context.partition_leadership.items()}
        assert after["kept"].leader == 2 and after["kept"].isr == (2,)
        assert after["gone"] == before["gone"]
