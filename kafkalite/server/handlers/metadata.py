"""Metadata: brokers (with their endpoint on the request's listener), the controller, and topics
with their partitions, from this broker's MetadataCache snapshot."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import metadata

from ..metadata_cache import MetadataCache, Snapshot
from ..responses import respond

AUTHORIZED_OPERATIONS_OMITTED = -2147483648  # Kafka's "not requested"


class MetadataApis:
    def __init__(self, metadata_cache: MetadataCache) -> None:
        self.metadata_cache = metadata_cache

    def handle_metadata(self, request: Request) -> Response:
        snap = self.metadata_cache.snapshot
        version = request.api_version
        R = metadata.RESPONSE
        brokers = []
        for b in sorted(snap.brokers.values(), key=lambda b: b.id):
            e = b.endpoint(request.listener)
            if e is not None:
                brokers.append(R["brokers"](node_id=b.id, host=e.host, port=e.port, rack=b.rack))
        topics = [_topic_metadata(snap, name, topic_id)
                  for name, topic_id in _requested_topics(snap, request.body, version)]
        body = R(
            throttle_time_ms=0, brokers=brokers, cluster_id=snap.cluster_id,
            controller_id=snap.controller_id, topics=topics,
            cluster_authorized_operations=AUTHORIZED_OPERATIONS_OMITTED,
        )
        return respond(request, body)


def _requested_topics(snap: Snapshot, req: Any,
                      version: int) -> Iterable[tuple[str | None, uuid.UUID | None]]:
    if req.topics is None or (version == 0 and not req.topics):
        # Null asks for every topic (v1+); in v0 an empty list does.
        return [(name, None) for name in sorted(snap.topics)]
    return [(t.name, t.topic_id if t.name is None else None) for t in req.topics]


def _topic_metadata(snap: Snapshot, name: str | None, topic_id: uuid.UUID | None) -> Any:
    T = metadata.RESPONSE["topics"]
    P = T["partitions"]
    topic = snap.topics.get(name) if name is not None else snap.topic_by_id(topic_id)  # type: ignore[arg-type]
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
            leader_epoch=p.leader_epoch, replica_nodes=list(p.replicas), isr_nodes=list(p.isr),
            offline_replicas=list(p.offline_replicas),
        ))
    return T(error_code=E.NONE, name=topic.name, topic_id=topic.topic_id, is_internal=False,
             partitions=partitions, topic_authorized_operations=AUTHORIZED_OPERATIONS_OMITTED)
