"""LeaderAndIsr, StopReplica and UpdateMetadata: the controller's requests, applied by the
ReplicaManager with Kafka's fencing (served on the privileged listener only; the Processor
enforces it). A LeaderAndIsr naming topics this broker has not met first learns their settings
from the controller (the topic config cache), so that a new log has its topic's settings from its
first byte; the controller sends the next request only after this answer, so the wait reorders
nothing. Each of them accepted tells the broker's ControllerNodeProvider which controller is active
(their controller id, at their controller epoch)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from kafkalite.common.leader_and_isr import NO_EPOCH
from kafkalite.common.uuids import ZERO_UUID
from kafkalite.network.request_channel import CloseConnectionResponse, Request, Response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import leader_and_isr, stop_replica, update_metadata

from ..controller_node import ControllerNodeProvider
from ..metadata_cache import update_metadata_partitions
from ..replication.replica_manager import ReplicaManager
from ..responses import respond
from ..topic_configs import TopicConfigCache

log = logging.getLogger("kafkalite.server.handlers.control")


class ControlApis:
    def __init__(self, replica_manager: ReplicaManager, topic_configs: TopicConfigCache,
                 send_response: Callable[[Response], None],
                 controller_nodes: ControllerNodeProvider | None = None) -> None:
        self.replica_manager = replica_manager
        self.controller_nodes = controller_nodes
        self.topic_configs = topic_configs
        self.send_response = send_response

    def handle_leader_and_isr(self, request: Request) -> Response | None:
        req = request.body
        states = req.ungrouped_partition_states if request.api_version < 2 else req.topic_states
        missing = self.topic_configs.missing(s.topic_name for s in states)
        if not missing:
            return self._apply_leader_and_isr(request)

        def answered(found: dict[str, dict[str, str] | None]) -> None:
            unanswered = [t for t in missing if t not in found]
            if unanswered:
                log.warning("Broker %d: no configs from the controller for %s; their new logs get the "
                            "broker's defaults until they are learned", self.replica_manager.node_id,
                            ", ".join(unanswered))
            try:
                response = self._apply_leader_and_isr(request)
            except Exception:  # as KafkaApis.handle does on a handler thread
                log.exception("Error handling %s from %s; closing it", request.header, request.connection_id)
                response = CloseConnectionResponse(request)
            self.send_response(response)

        self.topic_configs.fetch(missing, answered)
        return None

    def _apply_leader_and_isr(self, request: Request) -> Response:
        req, version = request.body, request.api_version
        if version < 2:
            states = [(s.topic_name, ZERO_UUID, s) for s in req.ungrouped_partition_states]
        else:
            states = [(t.topic_name, t.topic_id, s) for t in req.topic_states for s in t.partition_states]
        leaders = {x.broker_id: (x.host_name, x.port) for x in req.live_leaders}
        error, results = self.replica_manager.become_leader_or_follower(
            req.controller_epoch, req.broker_epoch, states, leaders)
        if error == E.NONE:
            self._learn(req)
        R = leader_and_isr.RESPONSE
        if version < 5:
            body = R(error_code=error, partition_errors=[
                R["partition_errors"](topic_name=r.topic, partition_index=r.index, error_code=r.error_code)
                for r in results])
        else:
            by_topic: dict[Any, list[Any]] = {}
            for r in results:
                by_topic.setdefault(r.topic_id, []).append(
                    R["partition_errors"](partition_index=r.index, error_code=r.error_code))
            body = R(error_code=error, topics=[R["topics"](topic_id=tid, partition_errors=errs)
                                               for tid, errs in by_topic.items()])
        return respond(request, body)

    def handle_stop_replica(self, request: Request) -> Response:
        req, version = request.body, request.api_version
        if version == 0:
            parts = [(p.topic_name, p.partition_index, NO_EPOCH, req.delete_partitions)
                     for p in req.ungrouped_partitions]
        elif version < 3:
            parts = [(t.name, i, NO_EPOCH, req.delete_partitions)
                     for t in req.topics for i in t.partition_indexes]
        else:
            parts = [(t.topic_name, p.partition_index, p.leader_epoch, p.delete_partition)
                     for t in req.topic_states for p in t.partition_states]
        error, results = self.replica_manager.stop_replicas(req.controller_epoch, req.broker_epoch, parts)
        R = stop_replica.RESPONSE
        body = R(error_code=error, partition_errors=[
            R["partition_errors"](topic_name=r.topic, partition_index=r.index, error_code=r.error_code)
            for r in results])
        return respond(request, body)

    def handle_update_metadata(self, request: Request) -> Response:
        error = self.replica_manager.update_metadata(request.body, request.api_version)
        if error == E.NONE:
            self._learn(request.body)
        if error == E.NONE and log.isEnabledFor(logging.DEBUG):
            count = len(update_metadata_partitions(request.body, request.api_version))
            log.debug("Applied UpdateMetadata (controller epoch %d, %d partitions)",
                      request.body.controller_epoch, count)
        return respond(request, update_metadata.RESPONSE(error_code=error))

    def _learn(self, req: Any) -> None:
        """The sender of an accepted control request is the active controller (of its epoch)."""
        if self.controller_nodes is not None:
            self.controller_nodes.learn(req.controller_id, req.controller_epoch)
