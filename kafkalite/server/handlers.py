"""Request handlers (Kafka's KafkaApis): one function per api key, dispatched from a table.

A handler gets a Request and returns the Response for the Processor: usually a SendResponse with
the whole encoded frame. Anything that goes wrong in a handler closes that connection only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from kafkalite.common.uuids import ZERO_UUID
from kafkalite.network.request_channel import CloseConnectionResponse, Request, Response, SendResponse
from kafkalite.protocol import encode_response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import (
    api_versions,
    leader_and_isr,
    metadata,
    sasl_authenticate,
    sasl_handshake,
    stop_replica,
    update_metadata,
)

from . import api_versions as supported
from .admin import AdminApis
from .metadata_cache import MetadataCache, Snapshot
from .replica_manager import NO_EPOCH, ReplicaManager, update_metadata_partitions
from .responses import respond

log = logging.getLogger("kafkalite.server.handlers")

AUTHORIZED_OPERATIONS_OMITTED = -2147483648  # Kafka's "not requested"
# Api keys whose handlers may wait: on the controller, or for its answer to show in the metadata cache.
MAY_BLOCK = frozenset({19, 20, 62})


class KafkaApis:
    def __init__(self, metadata_cache: MetadataCache, node_id: int,
                 replica_manager: ReplicaManager | None = None, controller: Any = None,
                 apis_for: Callable[[str, bool], dict] | None = None) -> None:
        self.metadata_cache = metadata_cache
        # (listener, privileged) -> served apis: the table the Processors check requests against.
        self.apis_for = apis_for or (
            lambda listener, privileged: supported.apis_for(listener, privileged, controller is not None))
        self.node_id = node_id
        self.replica_manager = replica_manager or ReplicaManager(node_id, metadata_cache)
        self.admin = AdminApis(controller, metadata_cache)
        self.handlers: dict[int, Callable[[Request], Response]] = {
            3: self.handle_metadata,
            4: self.handle_leader_and_isr,
            5: self.handle_stop_replica,
            6: self.handle_update_metadata,
            17: self.handle_sasl_handshake,
            18: self.handle_api_versions,
            36: self.handle_sasl_authenticate,
            19: self.admin.create_topics,
            20: self.admin.delete_topics,
            62: self.admin.broker_registration,
            63: self.admin.broker_heartbeat,
        }
        self._api_versions_bodies: dict[tuple[str, bool, int], bytes] = {}

    def handle(self, request: Request) -> Response:
        handler = self.handlers.get(request.api_key)
        if handler is None:
            log.warning("No handler for api key %d from %s; closing it", request.api_key,
                        request.connection_id)
            return CloseConnectionResponse(request)
        try:
            return handler(request)
        except Exception:  # one bad request closes its connection, nothing more
            log.exception("Error handling %s from %s; closing it", request.header, request.connection_id)
            return CloseConnectionResponse(request)

    # --- SASL after authentication, or on a listener without it -------------------------------

    def handle_sasl_handshake(self, request: Request) -> Response:
        # Kafka's KafkaApis: the network layer answers these while a connection authenticates;
        # one reaching the handlers comes too late (or on a listener without SASL).
        body = sasl_handshake.RESPONSE(error_code=E.ILLEGAL_SASL_STATE, mechanisms=[])
        return respond(request, body)

    def handle_sasl_authenticate(self, request: Request) -> Response:
        body = sasl_authenticate.RESPONSE(
            error_code=E.ILLEGAL_SASL_STATE,
            error_message="SaslAuthenticate request received after successful authentication")
        return respond(request, body)

    # --- ApiVersions --------------------------------------------------------------------------

    def handle_api_versions(self, request: Request) -> Response:
        if request.body is None:
            # A version we do not know: Kafka answers in v0 with UNSUPPORTED_VERSION and only its
            # own ApiVersions range, so that the client can retry with a version we support.
            body = api_versions.RESPONSE(
                error_code=E.UNSUPPORTED_VERSION,
                api_keys=[api_versions.RESPONSE["api_keys"](18, *_range(supported.DATA_PLANE[18]))],
            )
            return SendResponse(request, encode_response(18, 0, request.correlation_id, body),
                                E.UNSUPPORTED_VERSION)
        return SendResponse(request, self._api_versions_frame(request))

    def _api_versions_frame(self, request: Request) -> bytes:
        key = (request.listener, request.privileged, request.api_version)
        body = self._api_versions_bodies.get(key)
        if body is None:
            # The answer only depends on the listener and the version: built once.
            item = api_versions.RESPONSE["api_keys"]
            table = self.apis_for(request.listener, request.privileged)
            value = api_versions.RESPONSE(
                error_code=0, throttle_time_ms=0,
                api_keys=[item(k, *_range(v)) for k, v in table.items()],
            )
            body = encode_response(18, request.api_version, 0, value)[8:]
            self._api_versions_bodies[key] = body
        frame = bytearray((len(body) + 4).to_bytes(4, "big"))
        frame += request.correlation_id.to_bytes(4, "big", signed=True)
        frame += body
        return bytes(frame)

    # --- control requests (privileged listener only; the Processor enforces it) ---------------

    def handle_leader_and_isr(self, request: Request) -> Response:
        req, version = request.body, request.api_version
        if version < 2:
            states = [(s.topic_name, ZERO_UUID, s) for s in req.ungrouped_partition_states]
        else:
            states = [(t.topic_name, t.topic_id, s) for t in req.topic_states for s in t.partition_states]
        error, results = self.replica_manager.become_leader_or_follower(
            req.controller_epoch, req.broker_epoch, states)
        R = leader_and_isr.RESPONSE
        if version < 5:
            body = R(error_code=error, partition_errors=[
                R["partition_errors"](topic_name=r.topic, partition_index=r.index, error_code=r.error_code)
                for r in results])
        else:
            by_topic: dict = {}
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
            count = len(update_metadata_partitions(request.body, request.api_version))
            log.debug("Applied UpdateMetadata (controller epoch %d, %d partitions)",
                      request.body.controller_epoch, count)
        return respond(request, update_metadata.RESPONSE(error_code=error))

    # --- Metadata -----------------------------------------------------------------------------

    def handle_metadata(self, request: Request) -> Response:
        snap = self.metadata_cache.snapshot
        version = request.api_version
        req = request.body
        R = metadata.RESPONSE
        brokers = []
        for b in sorted(snap.brokers.values(), key=lambda b: b.id):
            e = b.endpoint(request.listener)
            if e is not None:
                brokers.append(R["brokers"](node_id=b.id, host=e.host, port=e.port, rack=b.rack))
        topics = [self._topic_metadata(snap, name, topic_id, version)
                  for name, topic_id in self._requested_topics(snap, req, version)]
        body = R(
            throttle_time_ms=0, brokers=brokers, cluster_id=snap.cluster_id,
            controller_id=snap.controller_id, topics=topics,
            cluster_authorized_operations=AUTHORIZED_OPERATIONS_OMITTED,
        )
        return respond(request, body)

    @staticmethod
    def _requested_topics(snap: Snapshot, req, version: int):
        if req.topics is None or (version == 0 and not req.topics):
            # Null asks for every topic (v1+); in v0 an empty list does.
            return [(name, None) for name in sorted(snap.topics)]
        return [(t.name, t.topic_id if t.name is None else None) for t in req.topics]

    @staticmethod
    def _topic_metadata(snap: Snapshot, name, topic_id, version: int):
        T = metadata.RESPONSE["topics"]
        P = T["partitions"]
        topic = snap.topics.get(name) if name is not None else snap.topic_by_id(topic_id)
        if topic is None:
            code = E.UNKNOWN_TOPIC_OR_PARTITION if name is not None else E.UNKNOWN_TOPIC_ID
            unknown = T(error_code=code, name=name, partitions=[],
                        topic_authorized_operations=AUTHORIZED_OPERATIONS_OMITTED)
            if topic_id is not None:
                unknown.topic_id = topic_id
            return unknown
        partitions = []
        for p in sorted(topic.partitions.values(), key=lambda p: p.index):
            leader_known = p.leader >= 0 and p.leader in snap.brokers
            partitions.append(P(
                error_code=E.NONE if leader_known else E.LEADER_NOT_AVAILABLE,
                partition_index=p.index, leader_id=p.leader if leader_known else -1,
                # -1: kafkalite has no logs, so it must not invite OffsetForLeaderEpoch requests.
                leader_epoch=-1, replica_nodes=list(p.replicas), isr_nodes=list(p.isr),
                offline_replicas=list(p.offline_replicas),
            ))
        return T(error_code=E.NONE, name=topic.name, topic_id=topic.topic_id, is_internal=False,
                 partitions=partitions, topic_authorized_operations=AUTHORIZED_OPERATIONS_OMITTED)


def _range(v) -> tuple[int, int]:
    return v.low, v.high
