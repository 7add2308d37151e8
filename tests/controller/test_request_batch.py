"""ControllerBrokerRequestBatch: Kafka's ControllerChannelManagerTest cases, against a recording sender
(the sendRequest seam Kafka's MockControllerBrokerRequestBatch overrides)."""

from __future__ import annotations

import dataclasses
import logging
import uuid
from typing import Any

import pytest

from kafkalite.common.endpoints import Endpoint
from kafkalite.common.metadata_version import parse_ibp
from kafkalite.common.uuids import ZERO_UUID
from kafkalite.controller.context import (
    ControllerBroker,
    ControllerContext,
    LeaderIsrAndControllerEpoch,
    TopicPartition,
)
from kafkalite.controller.request_batch import (
    LEADER_AND_ISR,
    STOP_REPLICA,
    UPDATE_METADATA,
    ControllerBrokerRequestBatch,
    IllegalStateError,
    leader_and_isr_version,
    stop_replica_version,
    update_metadata_version,
)
from kafkalite.protocol import decode_body, encode_body
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import leader_and_isr as lair
from kafkalite.protocol.messages import stop_replica as sr
from kafkalite.protocol.messages import update_metadata as um

CONTROLLER_ID = 1
CONTROLLER_EPOCH = 1


# Kafka's MetadataVersion.VERSIONS (IBP_0_8_0 .. IBP_3_9_IV0), in order.
_RELEASES = [
    ("0.8.0", 0), ("0.8.1", 0), ("0.8.2", 0), ("0.9.0", 0), ("0.10.0", 2), ("0.10.1", 3), ("0.10.2", 1),
    ("0.11.0", 3), ("1.0", 1), ("1.1", 1), ("2.0", 2), ("2.1", 3), ("2.2", 2), ("2.3", 2), ("2.4", 2),
    ("2.5", 1), ("2.6", 1), ("2.7", 3), ("2.8", 2), ("3.0", 2), ("3.1", 1), ("3.2", 1), ("3.3", 4),
    ("3.4", 1), ("3.5", 3), ("3.6", 3), ("3.7", 5), ("3.8", 1), ("3.9", 1),
]
ALL_IBPS = [r if n == 0 else f"{r}-IV{i}" for r, n in _RELEASES for i in range(max(n, 1))]
LATEST = "3.9"


def at_least(ibp: str, threshold: str) -> bool:
    return ALL_IBPS.index(ibp) >= ALL_IBPS.index(threshold)


def expected_lair_version(ibp: str) -> int:
    for threshold, version in [("3.4-IV0", 7), ("3.2-IV0", 6), ("2.8-IV1", 5), ("2.4-IV1", 4),
                               ("2.4-IV0", 3), ("2.2-IV0", 2), ("1.0-IV0", 1)]:
        if at_least(ibp, threshold):
            return version
    return 0


def expected_um_version(ibp: str) -> int:
    for threshold, version in [("3.4-IV0", 8), ("2.8-IV1", 7), ("2.4-IV1", 6), ("2.2-IV0", 5),
                               ("1.0-IV0", 4), ("0.10.2-IV0", 3), ("0.10.0-IV1", 2), ("0.9.0", 1)]:
        if at_least(ibp, threshold):
            return version
    return 0


def expected_sr_version(ibp: str) -> int:
    for threshold, version in [("3.4-IV0", 4), ("2.6-IV0", 3), ("2.4-IV1", 2), ("2.2-IV0", 1)]:
        if at_least(ibp, threshold):
            return version
    return 0


# --- fixtures ---------------------------------------------------------------------------------------


@dataclasses.dataclass
class Sent:
    broker: int
    api_key: int
    version: int
    request: Any
    callback: Any


class RecordingBatch(ControllerBrokerRequestBatch):
    def __init__(self, context: ControllerContext, ibp: str = LATEST, **kwargs: Any) -> None:
        self.sent: list[Sent] = []
        self.events: list[tuple] = []
        super().__init__(context, self.record, ibp, CONTROLLER_ID,
                         on_leader_and_isr_response=lambda r, b: self.events.append(("lair", b, r)),
                         on_update_metadata_response=lambda r, b: self.events.append(("um", b, r)),
                         on_stop_replica_response=lambda r, b, errs: self.events.append(("sr", b, r, errs)),
                         **kwargs)

    def record(self, broker: int, api_key: int, version: int, request: Any, callback: Any) -> None:
        self.sent.append(Sent(broker, api_key, version, request, callback))

    def sent_to(self, broker: int, api_key: int | None = None) -> list[Sent]:
        return [s for s in self.sent if s.broker == broker and (api_key is None or s.api_key == api_key)]

    @property
    def brokers(self) -> set[int]:
        return {s.broker for s in self.sent}


def broker(broker_id: int, epoch: int = 1, **extra: int) -> ControllerBroker:
    endpoints = [Endpoint("PLAINTEXT", "localhost", 9900 + broker_id, "PLAINTEXT")]
    endpoints += [Endpoint(name, "localhost", port, "SSL") for name, port in extra.items()]
    return ControllerBroker(broker_id, epoch, tuple(endpoints), None)


def init_context(brokers=(1, 2, 3), num_partitions=2, replication_factor=3,
                 topics=("foo", "bar")) -> ControllerContext:
    """Kafka's initContext: brokers with epoch 1, topics with random ids, round-robin replicas."""
    ctx = ControllerContext()
    ctx.set_live_brokers(broker(b) for b in brokers)
    leader_index = 0
    for topic in topics:
        ctx.add_topic(topic, uuid.uuid4())
        for p in range(num_partitions):
            replicas = [brokers[(i + leader_index) % len(brokers)] for i in range(replication_factor)]
            ctx.update_partition_replica_assignment(TopicPartition(topic, p), replicas)
            leader_index += 1
    return ctx


def leader_and_isr(leader: int, isr=(), leader_epoch=0, recovery=0) -> LeaderIsrAndControllerEpoch:
    return LeaderIsrAndControllerEpoch(leader, leader_epoch, tuple(isr), 0, CONTROLLER_EPOCH, recovery)


PARTITIONS = {
    TopicPartition("foo", 0): leader_and_isr(1, [1, 2]),
    TopicPartition("foo", 1): leader_and_isr(2, [2, 3]),
    TopicPartition("bar", 1): leader_and_isr(3, [1, 3]),
}


def roundtrip(s: Sent) -> Any:
    return decode_body(s.api_key, s.version, encode_body(s.api_key, s.version, s.request))


def lair_states(request: Any, version: int) -> dict[TopicPartition, Any]:
    if version < 2:
        return {TopicPartition(p.topic_name, p.partition_index): p
                for p in request.ungrouped_partition_states}
    return {TopicPartition(t.topic_name, p.partition_index): p
            for t in request.topic_states for p in t.partition_states}


def um_states(request: Any, version: int) -> dict[TopicPartition, Any]:
    if version < 5:
        return {TopicPartition(p.topic_name, p.partition_index): p
                for p in request.ungrouped_partition_states}
    return {TopicPartition(t.topic_name, p.partition_index): p
            for t in request.topic_states for p in t.partition_states}


def sr_states(request: Any, version: int) -> dict[TopicPartition, tuple[int, bool]]:
    """(leader epoch, delete) per partition; below v3 the epoch is not sent (-1) and the delete flag
    is the request's."""
    if version == 0:
        return {TopicPartition(p.topic_name, p.partition_index): (-1, request.delete_partitions)
                for p in request.ungrouped_partitions}
    if version < 3:
        return {TopicPartition(t.name, i): (-1, request.delete_partitions)
                for t in request.topics for i in t.partition_indexes}
    return {TopicPartition(t.topic_name, p.partition_index): (p.leader_epoch, p.delete_partition)
            for t in request.topic_states for p in t.partition_states}


def expected_sr_states(partitions: dict[TopicPartition, tuple[int, bool]], version: int,
                       queued_for_deletion=()) -> dict[TopicPartition, tuple[int, bool]]:
    """Kafka's partitionStates helper: (leader epoch, delete); the epoch is -2 for topics queued for
    deletion and only exists from v3."""
    out = {}
    for tp, (epoch, delete) in partitions.items():
        if version < 3:
            out[tp] = (-1, delete)
        else:
            out[tp] = (-2 if tp.topic in queued_for_deletion else epoch, delete)
    return out


def sr_response(request: Any, version: int, error: int = E.NONE) -> Any:
    return sr.RESPONSE(error_code=E.NONE, partition_errors=[
        sr.STOP_REPLICA_PARTITION_ERROR(topic_name=tp.topic, partition_index=tp.partition, error_code=error)
        for tp in sr_states(request, version)])


def apply_stop_replica_callbacks(batch: RecordingBatch, broker_id: int) -> None:
    for s in batch.sent_to(broker_id, STOP_REPLICA):
        if s.callback is not None:
            s.callback(sr_response(s.request, s.version))


# --- LeaderAndIsr -----------------------------------------------------------------------------------


def test_leader_and_isr_request_sent():
    ctx = init_context()
    batch = RecordingBatch(ctx)
    batch.new_batch()
    for tp, info in PARTITIONS.items():
        ctx.put_partition_leadership(tp, info)
        batch.add_leader_and_isr_request_for_brokers([2], tp, info, [1, 2, 3], is_new=False)
    batch.send_requests_to_brokers(CONTROLLER_EPOCH)

    lairs, ums = batch.sent_to(2, LEADER_AND_ISR), batch.sent_to(2, UPDATE_METADATA)
    assert len(lairs) == 1 and len(ums) == 1
    assert [s.api_key for s in batch.sent_to(2)] == [LEADER_AND_ISR, UPDATE_METADATA]
    # The partitions' UpdateMetadata goes to every live or shutting-down broker.
    assert batch.brokers == {1, 2, 3}
    assert all(s.api_key == UPDATE_METADATA for s in batch.sent if s.broker != 2)
    s = lairs[0]
    req = s.request
    assert s.version == 7
    assert req.controller_id == CONTROLLER_ID and req.controller_epoch == CONTROLLER_EPOCH
    assert req.broker_epoch == 1 and req.type == 0 and req.is_kraft_controller is False
    states = lair_states(req, s.version)
    assert set(states) == set(PARTITIONS)
    assert {tp: st.leader for tp, st in states.items()} == {tp: i.leader for tp, i in PARTITIONS.items()}
    assert {tp: st.isr for tp, st in states.items()} == {tp: list(i.isr) for tp, i in PARTITIONS.items()}
    assert all(st.replicas == [1, 2, 3] and st.is_new is False for st in states.values())
    assert {t.topic_name: t.topic_id for t in req.topic_states} == ctx.topic_ids
    assert [(ll.broker_id, ll.host_name, ll.port) for ll in req.live_leaders] == [
        (1, "localhost", 9901), (2, "localhost", 9902), (3, "localhost", 9903)]

    # The response reaches the handler with the broker it came from.
    response = lair.RESPONSE(error_code=E.NONE, topics=[
        lair.LEADER_AND_ISR_TOPIC_ERROR(topic_id=t.topic_id, partition_errors=[
            lair.LEADER_AND_ISR_PARTITION_ERROR(partition_index=p.partition_index, error_code=E.NONE)
            for p in t.partition_states]) for t in req.topic_states])
    s.callback(response)
    assert batch.events == [("lair", 2, response)]
    assert {ctx_name for ctx_name, tid in ctx.topic_ids.items()
            if tid in {t.topic_id for t in response.topics}} == {"foo", "bar"}


def test_leader_and_isr_request_is_new():
    ctx = init_context()
    batch = RecordingBatch(ctx)
    tp = TopicPartition("foo", 0)
    info = leader_and_isr(1, [1, 2])
    ctx.put_partition_leadership(tp, info)
    batch.new_batch()
    batch.add_leader_and_isr_request_for_brokers([2], tp, info, [1, 2, 3], is_new=True)
    batch.add_leader_and_isr_request_for_brokers([2], tp, info, [1, 2, 3], is_new=False)
    batch.send_requests_to_brokers(CONTROLLER_EPOCH)

    lairs, ums = batch.sent_to(2, LEADER_AND_ISR), batch.sent_to(2, UPDATE_METADATA)
    assert len(lairs) == 1 and len(ums) == 1
    states = lair_states(lairs[0].request, lairs[0].version)
    assert list(states) == [tp]
    assert states[tp].is_new is True


def test_leader_and_isr_request_sent_to_live_or_shutting_down_brokers():
    ctx = init_context()
    batch = RecordingBatch(ctx)
    ctx.shutting_down_broker_ids.add(2)  # 2 is shutting down, 3 is dead
    ctx.remove_live_brokers({3})
    tp = TopicPartition("foo", 0)
    info = leader_and_isr(1, [1, 2])
    ctx.put_partition_leadership(tp, info)
    batch.new_batch()
    batch.add_leader_and_isr_request_for_brokers([1, 2, 3], tp, info, [1, 2, 3], is_new=False)
    batch.send_requests_to_brokers(CONTROLLER_EPOCH)

    assert batch.events == []
    assert batch.brokers == {1, 2}
    for broker_id in (1, 2):
        lairs, ums = batch.sent_to(broker_id, LEADER_AND_ISR), batch.sent_to(broker_id, UPDATE_METADATA)
        assert len(lairs) == 1 and len(ums) == 1
        assert list(lair_states(lairs[0].request, lairs[0].version)) == [tp]


def test_leader_and_isr_negative_broker_ids_are_ignored():
    ctx = init_context()
    batch = RecordingBatch(ctx)
    tp = TopicPartition("foo", 0)
    info = leader_and_isr(1, [1])
    ctx.put_partition_leadership(tp, info)
    batch.new_batch()
    batch.add_leader_and_isr_request_for_brokers([-1, 2], tp, info, [1, 2, 3], is_new=False)
    assert set(batch.leader_and_isr_request_map) == {2}
    # ... and the UpdateMetadata for the partition goes to every live or shutting-down broker.
    assert batch.update_metadata_request_broker_set == {1, 2, 3}
    batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    assert [(s.broker, s.api_key) for s in batch.sent] == [
        (2, LEADER_AND_ISR), (1, UPDATE_METADATA), (2, UPDATE_METADATA), (3, UPDATE_METADATA)]


def _lair_follows_ibp(ibp: str, expected: int) -> None:
    ctx = init_context()
    batch = RecordingBatch(ctx, ibp)
    tp = TopicPartition("foo", 0)
    recovering = at_least(parse_ibp_name(ibp), "3.2-IV0")
    info = leader_and_isr(1, [1, 2], recovery=1 if recovering else 0)
    ctx.put_partition_leadership(tp, info)
    batch.new_batch()
    batch.add_leader_and_isr_request_for_brokers([2], tp, info, [1, 2, 3], is_new=False)
    batch.send_requests_to_brokers(CONTROLLER_EPOCH)

    lairs = batch.sent_to(2, LEADER_AND_ISR)
    assert len(lairs) == 1
    assert lairs[0].version == expected, f"IBP {ibp} should use version {expected}"
    decoded = roundtrip(lairs[0])
    expected_recovery = 1 if recovering else 0
    for request in (lairs[0].request, decoded):
        states = lair_states(request, expected).values()
        assert [s.leader_recovery_state for s in states] == [expected_recovery]
    if expected >= 5:
        assert decoded.topic_states[0].topic_id == ctx.topic_ids["foo"]
    elif expected >= 2:
        assert lairs[0].request.topic_states[0].topic_id == ctx.topic_ids["foo"]
        assert decoded.topic_states[0].topic_id == ZERO_UUID
    else:
        assert decoded.topic_states == [] and len(decoded.ungrouped_partition_states) == 1


def parse_ibp_name(ibp: str) -> str:
    """The MetadataVersion a short IBP string means (its release's last internal version)."""
    if ibp in ALL_IBPS:
        return ibp
    return [v for v in ALL_IBPS if v == ibp or v.startswith(ibp + "-IV")][-1]


def test_leader_and_isr_inter_broker_protocol_version():
    _lair_follows_ibp(LATEST, 7)
    for ibp in ALL_IBPS:
        _lair_follows_ibp(ibp, expected_lair_version(ibp))


def test_short_ibp_strings_mean_the_release_s_last_internal_version():
    cases = {"3.9": (7, 8, 4), "3.4": (7, 8, 4), "3.3": (6, 7, 3), "2.8": (5, 7, 3), "2.4": (4, 6, 2),
             "2.2": (2, 5, 1), "1.0": (1, 4, 0), "0.10.2": (0, 3, 0), "0.10.0": (0, 2, 0), "0.9.0": (0, 1, 0),
             "0.8.2": (0, 0, 0), "3.9.1": (7, 8, 4), "0.10.2.1": (0, 3, 0), "2.8-IV0": (4, 6, 3)}
    for ibp, versions in cases.items():
        got = (leader_and_isr_version(ibp), update_metadata_version(ibp), stop_replica_version(ibp))
        assert got == versions, ibp
    for bad in ("", "3", "4.0", "3.9-IV1", "0.8.0-IV0", "2.8.1-IV0", "latest"):
        with pytest.raises(ValueError):
            parse_ibp(bad)
    with pytest.raises(ValueError):
        RecordingBatch(init_context(), "9.9")


def test_leader_and_isr_live_leaders_use_the_inter_broker_listener():
    ctx = ControllerContext()
    ctx.set_live_brokers([broker(1, INTERNAL=19001), broker(2)])
    ctx.add_topic("foo", uuid.uuid4(), {0: [1, 2], 1: [2, 1]})
    batch = RecordingBatch(ctx, inter_broker_listener="INTERNAL")
    batch.new_batch()
    for p, leader in ((0, 1), (1, 2)):
        tp = TopicPartition("foo", p)
        ctx.put_partition_leadership(tp, leader_and_isr(leader, [1, 2]))
        batch.add_leader_and_isr_request_for_brokers([1], tp, ctx.partition_leadership[tp], [1, 2], False)
    batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    (s,) = batch.sent_to(1, LEADER_AND_ISR)
    # Broker 2 has no INTERNAL listener: its first endpoint is used.
    assert [(ll.broker_id, ll.port) for ll in s.request.live_leaders] == [(1, 19001), (2, 9902)]


def test_leader_and_isr_carries_each_broker_s_epoch_and_the_update_type():
    ctx = ControllerContext()
    ctx.set_live_brokers([broker(1, epoch=10), broker(2, epoch=20)])
    ctx.add_topic("foo", uuid.uuid4(), {0: [1, 2]})
    tp = TopicPartition("foo", 0)
    ctx.put_partition_leadership(tp, leader_and_isr(1, [1, 2]))
    batch = RecordingBatch(ctx)
    batch.new_batch()
    batch.set_update_type(2)
    batch.add_leader_and_isr_request_for_brokers([1, 2], tp, ctx.partition_leadership[tp], [1, 2], False)
    batch.send_requests_to_brokers(7)
    assert {s.broker: (s.request.broker_epoch, s.request.type, s.request.controller_epoch)
            for s in batch.sent if s.api_key == LEADER_AND_ISR} == {1: (10, 2, 7), 2: (20, 2, 7)}
    assert {s.broker: s.request.broker_epoch for s in batch.sent if s.api_key == UPDATE_METADATA} == {
        1: 10, 2: 20}
    assert batch.update_type == 0  # reset after sending


# --- UpdateMetadata ---------------------------------------------------------------------------------


def test_update_metadata_request_sent():
    ctx = init_context()
    batch = RecordingBatch(ctx)
    for tp, info in PARTITIONS.items():
        ctx.put_partition_leadership(tp, info)
    batch.new_batch()
    batch.add_update_metadata_request_for_brokers([2], PARTITIONS)
    batch.send_requests_to_brokers(CONTROLLER_EPOCH)

    ums = batch.sent_to(2, UPDATE_METADATA)
    assert len(ums) == 1 and batch.brokers == {2}
    s = ums[0]
    req = s.request
    assert s.version == 8
    states = um_states(req, s.version)
    assert len(states) == 3
    assert {tp: st.leader for tp, st in states.items()} == {tp: i.leader for tp, i in PARTITIONS.items()}
    assert {tp: st.isr for tp, st in states.items()} == {tp: list(i.isr) for tp, i in PARTITIONS.items()}
    assert len(req.topic_states) == 2
    for t in req.topic_states:
        assert t.topic_id == ctx.topic_ids[t.topic_name]
    assert req.controller_id == CONTROLLER_ID and req.controller_epoch == CONTROLLER_EPOCH
    assert req.broker_epoch == 1
    assert {b.id for b in req.live_brokers} == {1, 2, 3}

    s.callback(um.RESPONSE(error_code=E.STALE_BROKER_EPOCH))
    assert len(batch.events) == 1
    kind, broker_id, response = batch.events[0]
    assert (kind, broker_id, response.error_code) == ("um", 2, E.STALE_BROKER_EPOCH)


def test_update_metadata_does_not_include_partitions_without_leader_and_isr():
    ctx = init_context()
    batch = RecordingBatch(ctx)
    batch.new_batch()
    batch.add_update_metadata_request_for_brokers([2], PARTITIONS)
    batch.send_requests_to_brokers(CONTROLLER_EPOCH)

    assert batch.events == [] and batch.brokers == {2}
    (s,) = batch.sent_to(2, UPDATE_METADATA)
    assert um_states(s.request, s.version) == {}
    assert {b.id for b in s.request.live_brokers} == {1, 2, 3}


def test_update_metadata_request_during_topic_deletion():
    ctx = init_context()
    batch = RecordingBatch(ctx)
    for tp, info in PARTITIONS.items():
        ctx.put_partition_leadership(tp, info)
    ctx.queue_topic_deletion({"foo"})
    batch.new_batch()
    batch.add_update_metadata_request_for_brokers([2], PARTITIONS)
    batch.send_requests_to_brokers(CONTROLLER_EPOCH)

    (s,) = batch.sent_to(2, UPDATE_METADATA)
    states = um_states(s.request, s.version)
    assert len(states) == 3
    assert all(st.leader == -2 for tp, st in states.items() if tp.topic == "foo")
    assert {tp: st.leader for tp, st in states.items() if tp.topic == "bar"} == {
        tp: i.leader for tp, i in PARTITIONS.items() if tp.topic == "bar"}
    assert {tp: st.isr for tp, st in states.items()} == {tp: list(i.isr) for tp, i in PARTITIONS.items()}
    assert {b.id for b in s.request.live_brokers} == {1, 2, 3}


def test_update_metadata_includes_live_or_shutting_down_brokers():
    ctx = init_context()
    batch = RecordingBatch(ctx)
    ctx.shutting_down_broker_ids.add(2)  # 2 is shutting down, 3 is dead
    ctx.remove_live_brokers({3})
    batch.new_batch()
    batch.add_update_metadata_request_for_brokers([1, 2, 3], ())
    batch.send_requests_to_brokers(CONTROLLER_EPOCH)

    assert batch.brokers == {1, 2}
    for broker_id in (1, 2):
        (s,) = batch.sent_to(broker_id, UPDATE_METADATA)
        assert um_states(s.request, s.version) == {}
        assert {b.id for b in s.request.live_brokers} == {1, 2}


def test_update_metadata_offline_replicas_and_broker_endpoints():
    ctx = init_context()
    ctx.update_broker_metadata(dataclasses.replace(broker(3, SSL=9993), rack="r3"))
    ctx.shutting_down_broker_ids.add(2)  # not live: its replicas count as offline
    ctx.replicas_on_offline_dirs[1] = {TopicPartition("foo", 0)}
    tp = TopicPartition("foo", 0)
    ctx.put_partition_leadership(tp, leader_and_isr(3, [1, 2, 3]))
    batch = RecordingBatch(ctx)
    batch.new_batch()
    batch.add_update_metadata_request_for_brokers([1], [tp])
    batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    (s,) = batch.sent_to(1, UPDATE_METADATA)
    (state,) = um_states(s.request, s.version).values()
    assert state.replicas == ctx.partition_replica_assignment(tp)
    assert sorted(state.offline_replicas) == [1, 2]
    b3 = next(b for b in s.request.live_brokers if b.id == 3)
    assert b3.rack == "r3"
    assert [(e.listener, e.host, e.port, e.security_protocol) for e in b3.endpoints] == [
        ("PLAINTEXT", "localhost", 9903, 0), ("SSL", "localhost", 9993, 1)]


def _um_follows_ibp(ibp: str, expected: int) -> None:
    ctx = init_context()
    batch = RecordingBatch(ctx, ibp)
    batch.new_batch()
    batch.add_update_metadata_request_for_brokers([2], ())
    batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    assert batch.events == [] and batch.brokers == {2}
    versions = [s.version for s in batch.sent_to(2, UPDATE_METADATA)]
    assert versions and all(v == expected for v in versions), (
        f"IBP {ibp} should use version {expected}, but found versions {versions}")


def test_update_metadata_inter_broker_protocol_version():
    _um_follows_ibp(LATEST, 8)
    for ibp in ALL_IBPS:
        _um_follows_ibp(ibp, expected_um_version(ibp))


# --- StopReplica ------------------------------------------------------------------------------------


def _leader_and_delete(spec: dict[TopicPartition, tuple[int, bool]], ctx: ControllerContext,
                       batch: RecordingBatch, brokers=(2,)) -> dict[TopicPartition, tuple[int, bool]]:
    """Kafka's LeaderAndDelete(leader, delete): record leadership (epoch 0) and add a StopReplica."""
    expected = {}
    for tp, (leader, delete) in spec.items():
        ctx.put_partition_leadership(tp, leader_and_isr(leader))
        batch.add_stop_replica_request_for_brokers(list(brokers), tp, delete)
        expected[tp] = (0, delete)
    return expected


def test_stop_replica_request_sent():
    ctx = init_context()
    batch = RecordingBatch(ctx)
    batch.new_batch()
    expected = _leader_and_delete({TopicPartition("foo", 0): (1, False), TopicPartition("foo", 1): (2, False),
                                   TopicPartition("bar", 1): (3, False)}, ctx, batch)
    batch.send_requests_to_brokers(CONTROLLER_EPOCH)

    assert batch.events == [] and batch.brokers == {2}
    (s,) = batch.sent_to(2)
    assert s.api_key == STOP_REPLICA and s.version == 4
    assert sr_states(s.request, s.version) == expected
    assert s.request.broker_epoch == 1 and s.request.controller_id == CONTROLLER_ID
    apply_stop_replica_callbacks(batch, 2)
    assert batch.events == []


def test_stop_replica_request_with_already_defined_deleted_partition():
    ctx = init_context()
    batch = RecordingBatch(ctx)
    tp = TopicPartition("foo", 0)
    ctx.put_partition_leadership(tp, leader_and_isr(1, [1, 2]))
    batch.new_batch()
    batch.add_stop_replica_request_for_brokers([2], tp, delete_partition=True)
    batch.add_stop_replica_request_for_brokers([2], tp, delete_partition=False)
    batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    (s,) = batch.sent_to(2, STOP_REPLICA)
    assert sr_states(s.request, s.version) == {tp: (0, True)}


def test_stop_replica_without_leadership_sends_no_epoch():
    ctx = init_context()
    batch = RecordingBatch(ctx)
    batch.new_batch()
    batch.add_stop_replica_request_for_brokers([2], TopicPartition("foo", 0), False)
    batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    (s,) = batch.sent_to(2, STOP_REPLICA)
    assert sr_states(s.request, s.version) == {TopicPartition("foo", 0): (-1, False)}


def _sr_while_queued_for_deletion(ibp: str) -> None:
    ctx = init_context()
    batch = RecordingBatch(ctx, ibp)
    ctx.queue_topic_deletion({"foo"})  # queued, not begun
    batch.new_batch()
    expected = _leader_and_delete({TopicPartition("foo", 0): (1, True), TopicPartition("foo", 1): (2, True),
                                   TopicPartition("bar", 1): (3, True)}, ctx, batch)
    batch.send_requests_to_brokers(CONTROLLER_EPOCH)

    assert batch.events == [] and batch.brokers == {2}
    (s,) = batch.sent_to(2)
    assert s.api_key == STOP_REPLICA
    assert sr_states(s.request, s.version) == expected_sr_states(expected, s.version, {"foo"})
    apply_stop_replica_callbacks(batch, 2)
    assert batch.events == []  # no events: deletion has not started


def test_stop_replica_requests_while_topic_queued_for_deletion():
    for ibp in ALL_IBPS:
        _sr_while_queued_for_deletion(ibp)


def _sr_while_deletion_started(ibp: str, delete: bool) -> None:
    ctx = init_context()
    batch = RecordingBatch(ctx, ibp)
    ctx.queue_topic_deletion({"foo"})
    ctx.begin_topic_deletion({"foo"})
    batch.new_batch()
    expected = _leader_and_delete({TopicPartition("foo", 0): (1, delete),
                                   TopicPartition("foo", 1): (2, delete),
                                   TopicPartition("bar", 1): (3, delete)}, ctx, batch)
    batch.send_requests_to_brokers(CONTROLLER_EPOCH)

    assert batch.events == [] and batch.brokers == {2}
    (s,) = batch.sent_to(2)
    assert sr_states(s.request, s.version) == expected_sr_states(expected, s.version, {"foo"})
    apply_stop_replica_callbacks(batch, 2)
    if delete:
        # The response of a deleting StopReplica reports the deleted topic's partitions only.
        assert len(batch.events) == 1
        kind, broker_id, _, errors = batch.events[0]
        assert (kind, broker_id) == ("sr", 2)
        assert errors == {TopicPartition("foo", 0): E.NONE, TopicPartition("foo", 1): E.NONE}
    else:
        assert batch.events == []


def test_stop_replica_requests_while_topic_deletion_started():
    for ibp in ALL_IBPS:
        _sr_while_deletion_started(ibp, delete=True)


def test_stop_replica_request_without_delete_partition_while_topic_deletion_started():
    for ibp in ALL_IBPS:
        _sr_while_deletion_started(ibp, delete=False)


def _mixed_delete(ibp: str, expected_version: int) -> None:
    ctx = init_context()
    batch = RecordingBatch(ctx, ibp)
    batch.new_batch()
    deleted = _leader_and_delete({TopicPartition("foo", 0): (1, True), TopicPartition("foo", 1): (2, True)},
                                 ctx, batch)
    kept = _leader_and_delete({TopicPartition("bar", 0): (1, False), TopicPartition("bar", 1): (2, False)},
                              ctx, batch)
    batch.send_requests_to_brokers(CONTROLLER_EPOCH)

    assert batch.events == [] and batch.brokers == {2}
    sent = batch.sent_to(2)
    assert all(s.api_key == STOP_REPLICA and s.version == expected_version for s in sent)
    if expected_version >= 3:
        (s,) = sent
        assert sr_states(s.request, s.version) == expected_sr_states({**deleted, **kept}, s.version)
        assert s.callback is not None
    else:
        first, second = sent  # delete=true first, with a callback; then delete=false, without
        assert sr_states(first.request, first.version) == expected_sr_states(deleted, first.version)
        assert sr_states(second.request, second.version) == expected_sr_states(kept, second.version)
        assert first.request.delete_partitions is True and second.request.delete_partitions is False
        assert first.callback is not None and second.callback is None


def test_mixed_delete_and_not_delete_stop_replica_requests():
    _mixed_delete(LATEST, 4)
    for ibp in ALL_IBPS:
        _mixed_delete(ibp, expected_sr_version(ibp))


def test_stop_replica_groups_by_broker():
    ctx = init_context()
    batch = RecordingBatch(ctx)
    batch.new_batch()
    expected = _leader_and_delete({TopicPartition("foo", 0): (1, False), TopicPartition("foo", 1): (2, False),
                                   TopicPartition("bar", 1): (3, False)}, ctx, batch, brokers=(2, 3))
    batch.send_requests_to_brokers(CONTROLLER_EPOCH)

    assert batch.events == [] and batch.brokers == {2, 3}
    for broker_id in (2, 3):
        (s,) = batch.sent_to(broker_id)
        assert sr_states(s.request, s.version) == expected
        # grouped by topic: one topic state per topic
        assert sorted(t.topic_name for t in s.request.topic_states) == ["bar", "foo"]
        apply_stop_replica_callbacks(batch, broker_id)
        assert batch.events == []


def test_stop_replica_sent_only_to_live_and_shutting_down_brokers():
    ctx = init_context()
    batch = RecordingBatch(ctx)
    ctx.shutting_down_broker_ids.add(2)  # 2 is shutting down, 3 is dead
    ctx.remove_live_brokers({3})
    batch.new_batch()
    expected = _leader_and_delete({TopicPartition("foo", 0): (1, False), TopicPartition("foo", 1): (2, False),
                                   TopicPartition("bar", 1): (3, False)}, ctx, batch, brokers=(2, 3))
    batch.send_requests_to_brokers(CONTROLLER_EPOCH)

    assert batch.events == [] and batch.brokers == {2}
    (s,) = batch.sent_to(2)
    assert sr_states(s.request, s.version) == expected


def _sr_follows_ibp(ibp: str, expected: int) -> None:
    ctx = init_context(topics=("foo",))
    batch = RecordingBatch(ctx, ibp)
    tp = TopicPartition("foo", 0)
    ctx.put_partition_leadership(tp, leader_and_isr(1, [1, 2]))
    batch.new_batch()
    batch.add_stop_replica_request_for_brokers([2], tp, delete_partition=False)
    batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    assert batch.events == [] and batch.brokers == {2}
    versions = [s.version for s in batch.sent_to(2, STOP_REPLICA)]
    assert versions and all(v == expected for v in versions), (
        f"IBP {ibp} should use version {expected}, but found versions {versions}")


def test_stop_replica_inter_broker_protocol_version():
    _sr_follows_ibp(LATEST, 4)
    for ibp in ALL_IBPS:
        _sr_follows_ibp(ibp, expected_sr_version(ibp))


# --- batch lifecycle --------------------------------------------------------------------------------


def test_new_batch_raises_while_the_previous_one_is_not_empty():
    ctx = init_context()
    tp = TopicPartition("foo", 0)
    info = leader_and_isr(1, [1, 2])
    ctx.put_partition_leadership(tp, info)
    fills = [
        lambda b: b.add_leader_and_isr_request_for_brokers([2], tp, info, [1, 2, 3], False),
        lambda b: b.add_stop_replica_request_for_brokers([2], tp, False),
        lambda b: b.add_update_metadata_request_for_brokers([2]),
    ]
    for fill in fills:
        batch = RecordingBatch(ctx)
        batch.new_batch()
        fill(batch)
        with pytest.raises(IllegalStateError, match="might be lost"):
            batch.new_batch()
        batch.clear()
        batch.new_batch()
        assert batch.is_empty and batch.sent == []
    # After a successful send the batch is empty again.
    batch = RecordingBatch(ctx)
    batch.new_batch()
    fills[0](batch)
    batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    batch.new_batch()


def test_send_failure_logs_what_is_left_and_raises_illegal_state(caplog):
    ctx = init_context()
    tp = TopicPartition("foo", 0)
    info = leader_and_isr(1, [1, 2])
    ctx.put_partition_leadership(tp, info)
    failure = ConnectionError("boom")
    sent: list[tuple[int, int]] = []

    def sender(broker_id, api_key, version, request, callback):
        if api_key == UPDATE_METADATA:
            raise failure
        sent.append((broker_id, api_key))

    batch = ControllerBrokerRequestBatch(ctx, sender, LATEST, CONTROLLER_ID)
    batch.new_batch()
    batch.add_leader_and_isr_request_for_brokers([2], tp, info, [1, 2, 3], False)
    batch.add_stop_replica_request_for_brokers([3], tp, False)
    with caplog.at_level(logging.ERROR, logger="kafkalite.controller.request_batch"):
        with pytest.raises(IllegalStateError) as raised:
            batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    assert raised.value.__cause__ is failure
    assert sent == [(2, LEADER_AND_ISR)]  # LeaderAndIsr went; nothing after the failure did
    messages = [r.getMessage() for r in caplog.records]
    assert not any("leader and isr" in m for m in messages)  # sent and cleared: nothing to report
    assert any("metadata update requests to brokers [1, 2, 3]" in m for m in messages)
    assert any("stop replica requests" in m for m in messages)
    # What was not sent stays: the next batch refuses to start until the controller clears it.
    assert batch.update_metadata_request_broker_set and batch.stop_replica_request_map
    with pytest.raises(IllegalStateError):
        batch.new_batch()
    batch.clear()
    batch.new_batch()


def test_send_failure_in_leader_and_isr_keeps_the_leader_and_isr_map(caplog):
    ctx = init_context()
    tp = TopicPartition("foo", 0)
    info = leader_and_isr(1, [1, 2])
    ctx.put_partition_leadership(tp, info)

    def sender(broker_id, api_key, version, request, callback):
        raise RuntimeError("queue closed")

    batch = ControllerBrokerRequestBatch(ctx, sender, LATEST, CONTROLLER_ID)
    batch.new_batch()
    batch.add_leader_and_isr_request_for_brokers([2], tp, info, [1, 2, 3], False)
    with caplog.at_level(logging.ERROR, logger="kafkalite.controller.request_batch"):
        with pytest.raises(IllegalStateError):
            batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    assert set(batch.leader_and_isr_request_map) == {2}
    assert any("leader and isr requests" in r.getMessage() for r in caplog.records)


# --- every request encodes at its version -----------------------------------------------------------

REPRESENTATIVE_IBPS = ["0.8.2", "0.9.0", "0.10.0-IV0", "0.10.0", "0.10.2", "1.0", "2.2", "2.4-IV0", "2.4",
                       "2.6", "2.8-IV0", "2.8", "3.0", "3.2", "3.3", "3.4", "3.7", "3.9"]


@pytest.mark.parametrize("ibp", REPRESENTATIVE_IBPS)
def test_every_request_encodes_at_its_version(ibp):
    ctx = ControllerContext()
    ctx.set_live_brokers([broker(1), dataclasses.replace(broker(2, SSL=9992), rack="rack-2"),
                          dataclasses.replace(broker(3, epoch=5), rack=None)])
    ctx.add_topic("foo", uuid.uuid4(), {0: [1, 2, 3], 1: [2, 3, 1]})
    ctx.add_topic("bar", uuid.uuid4(), {0: [3, 1, 2]})
    ctx.add_topic("gone", uuid.uuid4(), {0: [1, 2]})
    ctx.shutting_down_broker_ids.add(3)
    for tp in ctx.all_partitions:
        replicas = ctx.partition_replica_assignment(tp)
        info = LeaderIsrAndControllerEpoch(replicas[0], 4, tuple(replicas), 9, 2, 1)
        ctx.put_partition_leadership(tp, info)
    ctx.queue_topic_deletion({"gone"})
    ctx.begin_topic_deletion({"gone"})

    batch = RecordingBatch(ctx, ibp)
    batch.new_batch()
    for tp in sorted(ctx.all_partitions):
        if tp.topic == "gone":
            batch.add_stop_replica_request_for_brokers(ctx.partition_replica_assignment(tp), tp, True)
        else:
            replicas = ctx.partition_replica_assignment(tp)
            batch.add_leader_and_isr_request_for_brokers(replicas, tp, ctx.partition_leadership[tp], replicas,
                                                         is_new=tp.partition == 0)
    batch.add_stop_replica_request_for_brokers([1], TopicPartition("bar", 0), False)
    batch.add_update_metadata_request_for_brokers([1, 2, 3], ctx.all_partitions)
    batch.send_requests_to_brokers(3)

    versions = {LEADER_AND_ISR: leader_and_isr_version(ibp), UPDATE_METADATA: update_metadata_version(ibp),
                STOP_REPLICA: stop_replica_version(ibp)}
    assert {s.api_key for s in batch.sent} == set(versions)
    for s in batch.sent:
        assert s.version == versions[s.api_key]
        data = encode_body(s.api_key, s.version, s.request)
        decoded = decode_body(s.api_key, s.version, data)
        assert encode_body(s.api_key, s.version, decoded) == data
        assert decoded.controller_id == CONTROLLER_ID and decoded.controller_epoch == 3
        if s.api_key == LEADER_AND_ISR:
            assert lair_states(decoded, s.version).keys() == lair_states(s.request, s.version).keys()
            assert {ll.broker_id for ll in decoded.live_leaders} <= {1, 2, 3}
        elif s.api_key == UPDATE_METADATA:
            states = um_states(decoded, s.version)
            assert set(states) == ctx.all_partitions
            assert all(st.leader == -2 for tp, st in states.items() if tp.topic == "gone")
            assert {b.id for b in decoded.live_brokers} == {1, 2, 3}
        else:
            assert sr_states(decoded, s.version) == sr_states(s.request, s.version)
