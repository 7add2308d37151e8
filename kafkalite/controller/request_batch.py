"""Batches of controller-to-broker requests (Kafka's AbstractControllerBrokerRequestBatch).

A controller operation opens a batch (``new_batch``), adds partition state changes for brokers and
sends everything at the end (``send_requests_to_brokers``): per broker one LeaderAndIsr, then one
UpdateMetadata, then the StopReplica request(s), through ``sender``, the seam Kafka's
ControllerChannelManager.sendRequest is: ``sender(broker_id, api_key, version, request, callback)``.

Kafka's rules, kept as they are:

- broker ids below 0 are ignored;
- a LeaderAndIsr entry also queues an UpdateMetadata for that partition to every live or
  shutting-down broker; ``is_new`` is sticky within a batch;
- StopReplica: ``delete_partition`` is sticky; the leader epoch sent is -2 when the topic is queued
  for deletion, else the partition's leader epoch, or -1 if it has none;
- UpdateMetadata leaves out partitions without a leader yet and sends leader -2 for topics queued
  for deletion; one set of partition states goes to every broker of the batch; it lists every live
  or shutting-down broker;
- requests go only to brokers that are live or shutting down (registered); others are skipped;
- request versions follow ``inter.broker.protocol.version`` (see ``leader_and_isr_version`` etc.);
- StopReplica v3+: one request per broker with per-partition delete flags and epochs; below v3
  two: the delete=true partitions first (with a callback), then the delete=false ones;
- a failure while sending logs what is left in the batch and raises IllegalStateError; what was
  not sent stays in the batch, so ``new_batch`` refuses until ``clear()``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from kafkalite.common.endpoints import SECURITY_PROTOCOL_IDS
from kafkalite.common.leader_and_isr import (
    INITIAL_LEADER_EPOCH,
    INITIAL_PARTITION_EPOCH,
    LEADER_DURING_DELETE,
)
from kafkalite.common.metadata_version import IbpKey, parse_ibp
from kafkalite.common.uuids import ZERO_UUID
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import leader_and_isr as lair
from kafkalite.protocol.messages import stop_replica as sr
from kafkalite.protocol.messages import update_metadata as um

from .context import (
    LEADER_RECOVERY_RECOVERED,
    ControllerBroker,
    ControllerContext,
    LeaderIsrAndControllerEpoch,
    TopicPartition,
)

log = logging.getLogger("kafkalite.controller.request_batch")
state_change_log = logging.getLogger("kafkalite.state.change")

LEADER_AND_ISR = ApiKey.LEADER_AND_ISR
STOP_REPLICA = ApiKey.STOP_REPLICA
UPDATE_METADATA = ApiKey.UPDATE_METADATA

# Kafka's AbstractControlRequest.Type (LeaderAndIsr v5+, UpdateMetadata v8+).
TYPE_UNKNOWN = 0
TYPE_INCREMENTAL = 1
TYPE_FULL = 2


Callback = Callable[[Any], None]
Sender = Callable[[int, int, int, Any, Callable[[Any], None] | None], None]


class IllegalStateError(RuntimeError):
    """Kafka's IllegalStateException: a batch used out of order, or a send that failed."""


# --- inter.broker.protocol.version --------------------------------------------------------------

_IBP_0_9_0 = parse_ibp("0.9.0")
_IBP_0_10_0_IV1 = parse_ibp("0.10.0-IV1")
_IBP_0_10_2_IV0 = parse_ibp("0.10.2-IV0")
_IBP_1_0_IV0 = parse_ibp("1.0-IV0")
_IBP_2_2_IV0 = parse_ibp("2.2-IV0")
_IBP_2_4_IV0 = parse_ibp("2.4-IV0")
_IBP_2_4_IV1 = parse_ibp("2.4-IV1")
_IBP_2_6_IV0 = parse_ibp("2.6-IV0")
_IBP_2_8_IV1 = parse_ibp("2.8-IV1")
_IBP_3_2_IV0 = parse_ibp("3.2-IV0")
_IBP_3_4_IV0 = parse_ibp("3.4-IV0")


def _pick(ibp: IbpKey, table: Sequence[tuple[IbpKey, int]]) -> int:
    for at_least, version in table:
        if ibp >= at_least:
            return version
    return 0


def leader_and_isr_version(ibp: str) -> int:
    return _pick(parse_ibp(ibp), [
        (_IBP_3_4_IV0, 7), (_IBP_3_2_IV0, 6), (_IBP_2_8_IV1, 5), (_IBP_2_4_IV1, 4), (_IBP_2_4_IV0, 3),
        (_IBP_2_2_IV0, 2), (_IBP_1_0_IV0, 1),
    ])


def update_metadata_version(ibp: str) -> int:
    return _pick(parse_ibp(ibp), [
        (_IBP_3_4_IV0, 8), (_IBP_2_8_IV1, 7), (_IBP_2_4_IV1, 6), (_IBP_2_2_IV0, 5), (_IBP_1_0_IV0, 4),
        (_IBP_0_10_2_IV0, 3), (_IBP_0_10_0_IV1, 2), (_IBP_0_9_0, 1),
    ])


def stop_replica_version(ibp: str) -> int:
    return _pick(parse_ibp(ibp), [
        (_IBP_3_4_IV0, 4), (_IBP_2_6_IV0, 3), (_IBP_2_4_IV1, 2), (_IBP_2_2_IV0, 1),
    ])


# --- the batch ------------------------------------------------------------------------------------


class ControllerBrokerRequestBatch:
    """Collects LeaderAndIsr, UpdateMetadata and StopReplica state for brokers and sends them.

    Responses reach ``handle_leader_and_isr_response(response, broker_id)``,
    ``handle_update_metadata_response(response, broker_id)`` and
    ``handle_stop_replica_response(response, broker_id, partition_errors)`` (the latter only with
    the errors of partitions deleted from topics whose deletion is in progress, and only when there
    are some); each calls the matching ``on_*`` callable if one was given.
    """

    def __init__(
        self,
        context: ControllerContext,
        sender: Sender,
        inter_broker_protocol_version: str,
        controller_id: int,
        *,
        inter_broker_listener: str = "PLAINTEXT",
        on_leader_and_isr_response: Callable[[Any, int], None] | None = None,
        on_update_metadata_response: Callable[[Any, int], None] | None = None,
        on_stop_replica_response: Callable[[Any, int, dict[TopicPartition, int]], None] | None = None,
    ) -> None:
        self.context = context
        self.sender = sender
        self.controller_id = controller_id
        self.inter_broker_listener = inter_broker_listener
        self.inter_broker_protocol_version = inter_broker_protocol_version
        self.on_leader_and_isr_response = on_leader_and_isr_response
        self.on_update_metadata_response = on_update_metadata_response
        self.on_stop_replica_response = on_stop_replica_response

        self.leader_and_isr_request_map: dict[int, dict[TopicPartition, Any]] = {}
        self.stop_replica_request_map: dict[int, dict[TopicPartition, Any]] = {}
        self.update_metadata_request_broker_set: set[int] = set()
        self.update_metadata_request_partition_info_map: dict[TopicPartition, Any] = {}
        self.update_type = TYPE_UNKNOWN

    @property
    def inter_broker_protocol_version(self) -> str:
        return self._ibp

    @inter_broker_protocol_version.setter
    def inter_broker_protocol_version(self, value: str) -> None:
        ibp = parse_ibp(value)  # validates before anything changes
        self._ibp = value
        self._recovery_state_supported = ibp >= _IBP_3_2_IV0
        self.leader_and_isr_version = leader_and_isr_version(value)
        self.update_metadata_version = update_metadata_version(value)
        self.stop_replica_version = stop_replica_version(value)

    # --- lifecycle ----------------------------------------------------------------------------

    def new_batch(self) -> None:
        """Start a batch; IllegalStateError if the previous one still holds anything."""
        if self.leader_and_isr_request_map:
            raise IllegalStateError(
                "Controller to broker state change requests batch is not empty while creating a new one. "
                f"Some LeaderAndIsr state changes {self.leader_and_isr_request_map} might be lost")
        if self.stop_replica_request_map:
            raise IllegalStateError(
                "Controller to broker state change requests batch is not empty while creating a new one. "
                f"Some StopReplica state changes {self.stop_replica_request_map} might be lost")
        if self.update_metadata_request_broker_set:
            raise IllegalStateError(
                "Controller to broker state change requests batch is not empty while creating a new one. "
                "Some UpdateMetadata state changes to brokers "
                f"{sorted(self.update_metadata_request_broker_set)} with partition info "
                f"{self.update_metadata_request_partition_info_map} might be lost")

    def set_update_type(self, update_type: int) -> None:
        """The LeaderAndIsr ``type`` (v5+) of this batch: TYPE_UNKNOWN (default), _INCREMENTAL, _FULL."""
        self.update_type = update_type

    def clear(self) -> None:
        self.leader_and_isr_request_map.clear()
        self.stop_replica_request_map.clear()
        self.update_metadata_request_broker_set.clear()
        self.update_metadata_request_partition_info_map.clear()
        self.update_type = TYPE_UNKNOWN

    @property
    def is_empty(self) -> bool:
        return not (self.leader_and_isr_request_map or self.stop_replica_request_map
                    or self.update_metadata_request_broker_set)

    # --- adding -------------------------------------------------------------------------------

    def add_leader_and_isr_request_for_brokers(
        self,
        broker_ids: Iterable[int],
        tp: TopicPartition,
        leader_isr_and_controller_epoch: LeaderIsrAndControllerEpoch,
        replica_assignment: Sequence[int],
        is_new: bool,
        *,
        adding_replicas: Sequence[int] = (),
        removing_replicas: Sequence[int] = (),
    ) -> None:
        tp = TopicPartition(*tp)
        info = leader_isr_and_controller_epoch
        for broker_id in broker_ids:
            if broker_id < 0:
                continue
            states = self.leader_and_isr_request_map.setdefault(broker_id, {})
            previous = states.get(tp)
            already_new = previous is not None and previous.is_new
            states[tp] = lair.LEADER_AND_ISR_PARTITION_STATE(
                topic_name=tp.topic,
                partition_index=tp.partition,
                controller_epoch=info.controller_epoch,
                leader=info.leader,
                leader_epoch=info.leader_epoch,
                isr=list(info.isr),
                partition_epoch=info.partition_epoch,
                replicas=list(replica_assignment),
                adding_replicas=list(adding_replicas),
                removing_replicas=list(removing_replicas),
                is_new=is_new or already_new,
                leader_recovery_state=(info.leader_recovery_state if self._recovery_state_supported
                                       else LEADER_RECOVERY_RECOVERED),
            )
        self.add_update_metadata_request_for_brokers(
            sorted(self.context.live_or_shutting_down_broker_ids), [tp])

    def add_stop_replica_request_for_brokers(self, broker_ids: Iterable[int], tp: TopicPartition,
                                             delete_partition: bool) -> None:
        tp = TopicPartition(*tp)
        # -2 when the topic is queued for deletion (overriding any epoch), else the leader epoch or -1.
        leader_epoch = self.context.leader_epoch(tp)
        for broker_id in broker_ids:
            if broker_id < 0:
                continue
            states = self.stop_replica_request_map.setdefault(broker_id, {})
            previous = states.get(tp)
            already_delete = previous is not None and previous.delete_partition
            states[tp] = sr.STOP_REPLICA_PARTITION_STATE(
                partition_index=tp.partition,
                leader_epoch=leader_epoch,
                delete_partition=already_delete or delete_partition,
            )

    def add_update_metadata_request_for_brokers(self, broker_ids: Iterable[int],
                                                partitions: Iterable[TopicPartition] = ()) -> None:
        """UpdateMetadata to ``broker_ids`` with the current state of ``partitions`` (those that have
        a leader; leader -2 for topics queued for deletion)."""
        self.update_metadata_request_broker_set.update(b for b in broker_ids if b >= 0)
        ctx = self.context
        for raw in partitions:
            tp = TopicPartition(*raw)
            info = ctx.partition_leadership.get(tp)
            if info is None:
                log.info("Leader not yet assigned for partition %s. Skip sending UpdateMetadataRequest.", tp)
                continue
            replicas = ctx.partition_replica_assignment(tp)
            offline = [r for r in replicas if not ctx.is_replica_online(r, tp)]
            if ctx.is_topic_queued_up_for_deletion(tp.topic):
                # Kafka's LeaderAndIsr.duringDelete(isr): leader -2, initial leader and partition epochs.
                leader, leader_epoch, partition_epoch = (
                    LEADER_DURING_DELETE, INITIAL_LEADER_EPOCH, INITIAL_PARTITION_EPOCH)
            else:
                leader, leader_epoch, partition_epoch = info.leader, info.leader_epoch, info.partition_epoch
            self.update_metadata_request_partition_info_map[tp] = um.UPDATE_METADATA_PARTITION_STATE(
                topic_name=tp.topic,
                partition_index=tp.partition,
                controller_epoch=info.controller_epoch,
                leader=leader,
                leader_epoch=leader_epoch,
                isr=list(info.isr),
                zk_version=partition_epoch,
                replicas=replicas,
                offline_replicas=offline,
            )

    # --- sending ------------------------------------------------------------------------------

    def send_requests_to_brokers(self, controller_epoch: int) -> None:
        try:
            self._send_leader_and_isr_requests(controller_epoch)
            self._send_update_metadata_requests(controller_epoch)
            self._send_stop_replica_requests(controller_epoch)
        except Exception as e:
            if self.leader_and_isr_request_map:
                log.error("Haven't been able to send leader and isr requests, current state of the map is "
                          "%s. Exception message: %r", self.leader_and_isr_request_map, e)
            if self.update_metadata_request_broker_set:
                log.error("Haven't been able to send metadata update requests to brokers %s, current state "
                          "of the partition info is %s. Exception message: %r",
                          sorted(self.update_metadata_request_broker_set),
                          self.update_metadata_request_partition_info_map, e)
            if self.stop_replica_request_map:
                log.error("Haven't been able to send stop replica requests, current state of the map is "
                          "%s. Exception message: %r", self.stop_replica_request_map, e)
            raise IllegalStateError(repr(e)) from e

    def _node(self, broker: ControllerBroker, listener: str, fallback: bool) -> tuple[str, int]:
        endpoint = broker.endpoint(listener)
        if endpoint is None and fallback and broker.endpoints:
            endpoint = broker.endpoints[0]
        if endpoint is None:
            raise LookupError(f"broker {broker.id} has no endpoint for listener {listener}")
        return endpoint.host, endpoint.port

    def _send_leader_and_isr_requests(self, controller_epoch: int) -> None:
        ctx = self.context
        version = self.leader_and_isr_version
        registered = ctx.live_or_shutting_down_broker_ids
        for broker_id, states in self.leader_and_isr_request_map.items():
            if broker_id not in registered:
                continue
            leader_ids = {s.leader for s in states.values()}
            become_leaders = sum(1 for s in states.values() if s.leader == broker_id)
            if state_change_log.isEnabledFor(logging.DEBUG):
                for tp, s in states.items():
                    kind = "become-leader" if s.leader == broker_id else "become-follower"
                    state_change_log.debug("Sending %s LeaderAndIsr request %s to broker %d for partition %s",
                                           kind, s, broker_id, tp)
            state_change_log.info("Sending LeaderAndIsr request to broker %d with %d become-leader and %d "
                                  "become-follower partitions", broker_id, become_leaders,
                                  len(states) - become_leaders)
            live_leaders = []
            for b in sorted(ctx.live_or_shutting_down_brokers, key=lambda b: b.id):
                if b.id in leader_ids:
                    host, port = self._node(b, self.inter_broker_listener, fallback=True)
                    live_leaders.append(
                        lair.LEADER_AND_ISR_LIVE_LEADER(broker_id=b.id, host_name=host, port=port))
            request = lair.REQUEST(
                controller_id=self.controller_id,
                is_kraft_controller=False,
                controller_epoch=controller_epoch,
                broker_epoch=ctx.broker_epoch(broker_id),
                type=self.update_type if version >= 5 else TYPE_UNKNOWN,
                live_leaders=live_leaders,
            )
            if version >= 2:
                request.topic_states = [
                    lair.LEADER_AND_ISR_TOPIC_STATE(
                        topic_name=topic, topic_id=ctx.topic_ids.get(topic, ZERO_UUID),
                        partition_states=parts)
                    for topic, parts in _group_by_topic(states).items()]
            else:
                request.ungrouped_partition_states = list(states.values())
            self.sender(broker_id, LEADER_AND_ISR, version, request, self._leader_and_isr_callback(broker_id))
        self.leader_and_isr_request_map.clear()
        self.update_type = TYPE_UNKNOWN

    def _leader_and_isr_callback(self, broker_id: int) -> Callback:
        return lambda response: self.handle_leader_and_isr_response(response, broker_id)

    def _update_metadata_callback(self, broker_id: int) -> Callback:
        return lambda response: self.handle_update_metadata_response(response, broker_id)

    def _um_broker(self, broker: ControllerBroker, version: int) -> Any:
        if version == 0:
            # v0 knows one plaintext host and port: the broker's PLAINTEXT listener.
            host, port = self._node(broker, "PLAINTEXT", fallback=False)
            endpoints = [um.UPDATE_METADATA_ENDPOINT(port=port, host=host, listener="PLAINTEXT",
                                                     security_protocol=SECURITY_PROTOCOL_IDS["PLAINTEXT"])]
            return um.UPDATE_METADATA_BROKER(id=broker.id, v0_host=host, v0_port=port, endpoints=endpoints,
                                             rack=broker.rack)
        endpoints = [
            um.UPDATE_METADATA_ENDPOINT(port=e.port, host=e.host, listener=e.name,
                                        security_protocol=SECURITY_PROTOCOL_IDS[e.security_protocol.upper()])
            for e in broker.endpoints]
        return um.UPDATE_METADATA_BROKER(id=broker.id, endpoints=endpoints, rack=broker.rack)

    def _send_update_metadata_requests(self, controller_epoch: int) -> None:
        ctx = self.context
        version = self.update_metadata_version
        state_change_log.info("Sending UpdateMetadata request to brokers %s for %d partitions",
                              sorted(self.update_metadata_request_broker_set),
                              len(self.update_metadata_request_partition_info_map))
        states = self.update_metadata_request_partition_info_map
        live_brokers = [self._um_broker(b, version)
                        for b in sorted(ctx.live_or_shutting_down_brokers, key=lambda b: b.id)]
        grouped = _group_by_topic(states)
        targets = self.update_metadata_request_broker_set & ctx.live_or_shutting_down_broker_ids
        for broker_id in sorted(targets):
            request = um.REQUEST(
                controller_id=self.controller_id,
                is_kraft_controller=False,
                controller_epoch=controller_epoch,
                broker_epoch=ctx.broker_epoch(broker_id),
                live_brokers=live_brokers,
            )
            if version >= 5:
                request.topic_states = [
                    um.UPDATE_METADATA_TOPIC_STATE(
                        topic_name=topic, topic_id=ctx.topic_ids.get(topic, ZERO_UUID),
                        partition_states=parts)
                    for topic, parts in grouped.items()]
            else:
                request.ungrouped_partition_states = list(states.values())
            self.sender(broker_id, UPDATE_METADATA, version, request,
                        self._update_metadata_callback(broker_id))
        self.update_metadata_request_broker_set.clear()
        self.update_metadata_request_partition_info_map.clear()

    def _stop_replica_callback(self, broker_id: int, is_partition_deleted: Callable[[TopicPartition], bool],
                               ) -> Callback:
        def callback(response: Any) -> None:
            errors: dict[TopicPartition, int] = {}
            for pe in response.partition_errors:
                tp = TopicPartition(pe.topic_name, pe.partition_index)
                if self.context.is_topic_deletion_in_progress(pe.topic_name) and is_partition_deleted(tp):
                    errors[tp] = pe.error_code
            if errors:
                self.handle_stop_replica_response(response, broker_id, errors)
        return callback

    def _stop_replica_request(self, version: int, controller_epoch: int, broker_epoch: int,
                              delete_partitions: bool, states: dict[TopicPartition, Any]) -> Any:
        request = sr.REQUEST(
            controller_id=self.controller_id,
            is_kraft_controller=False,
            controller_epoch=controller_epoch,
            broker_epoch=broker_epoch,
            delete_partitions=delete_partitions if version < 3 else False,
        )
        grouped = _group_by_topic(states)
        if version == 0:
            request.ungrouped_partitions = [
                sr.STOP_REPLICA_PARTITION_V0(topic_name=tp.topic, partition_index=tp.partition)
                for tp in states]
        elif version < 3:
            request.topics = [
                sr.STOP_REPLICA_TOPIC_V1(name=topic, partition_indexes=[s.partition_index for s in parts])
                for topic, parts in grouped.items()]
        else:
            request.topic_states = [sr.STOP_REPLICA_TOPIC_STATE(topic_name=topic, partition_states=parts)
                                    for topic, parts in grouped.items()]
        return request

    def _send_stop_replica_requests(self, controller_epoch: int) -> None:
        ctx = self.context
        version = self.stop_replica_version
        registered = ctx.live_or_shutting_down_broker_ids
        for broker_id, states in self.stop_replica_request_map.items():
            if broker_id not in registered:
                continue
            if state_change_log.isEnabledFor(logging.DEBUG):
                for tp, s in states.items():
                    state_change_log.debug("Sending StopReplica request %s to broker %d for partition %s",
                                           s, broker_id, tp)
            broker_epoch = ctx.broker_epoch(broker_id)
            if version >= 3:
                state_change_log.info("Sending StopReplica request for %d replicas to broker %d",
                                      len(states), broker_id)
                snapshot = dict(states)
                request = self._stop_replica_request(version, controller_epoch, broker_epoch, False, snapshot)
                self.sender(broker_id, STOP_REPLICA, version, request,
                            self._stop_replica_callback(broker_id, _deleted_in(snapshot)))
            else:
                with_delete = {tp: s for tp, s in states.items() if s.delete_partition}
                without_delete = {tp: s for tp, s in states.items() if not s.delete_partition}
                if with_delete:
                    state_change_log.info("Sending StopReplica request (delete = true) for %d replicas to "
                                          "broker %d", len(with_delete), broker_id)
                    request = self._stop_replica_request(version, controller_epoch, broker_epoch, True,
                                                         with_delete)
                    self.sender(broker_id, STOP_REPLICA, version, request,
                                self._stop_replica_callback(broker_id, lambda tp: True))
                if without_delete:
                    state_change_log.info("Sending StopReplica request (delete = false) for %d replicas to "
                                          "broker %d", len(without_delete), broker_id)
                    request = self._stop_replica_request(version, controller_epoch, broker_epoch, False,
                                                         without_delete)
                    self.sender(broker_id, STOP_REPLICA, version, request, None)
        self.stop_replica_request_map.clear()

    # --- responses ----------------------------------------------------------------------------

    def handle_leader_and_isr_response(self, response: Any, broker_id: int) -> None:
        if self.on_leader_and_isr_response is not None:
            self.on_leader_and_isr_response(response, broker_id)

    def handle_update_metadata_response(self, response: Any, broker_id: int) -> None:
        if self.on_update_metadata_response is not None:
            self.on_update_metadata_response(response, broker_id)

    def handle_stop_replica_response(self, response: Any, broker_id: int,
                                     partition_errors: dict[TopicPartition, int]) -> None:
        if self.on_stop_replica_response is not None:
            self.on_stop_replica_response(response, broker_id, partition_errors)


def _deleted_in(states: dict[TopicPartition, Any]) -> Callable[[TopicPartition], bool]:
    return lambda tp: tp in states and bool(states[tp].delete_partition)


def _group_by_topic(states: dict[TopicPartition, Any]) -> dict[str, list[Any]]:
    grouped: dict[str, list[Any]] = {}
    for tp, state in states.items():
        grouped.setdefault(tp.topic, []).append(state)
    return grouped
