"""DescribeTopicPartitions (KIP-966): topics and their partitions from this broker's
MetadataCache snapshot, a page at a time, as Kafka's DescribeTopicPartitionsRequestHandler and
KRaftMetadataCache.describeTopicResponse answer.

The topics asked for (none: every topic in the cluster) are taken in name order, from the
request's cursor (its topic, and in it its partition) on. At most ResponsePartitionLimit
partitions are answered, capped by max.request.partition.size.limit (and at least 1); where the
page stops, ``next_cursor`` names the topic and partition the next request starts at (a topic
that did not fit at all: its partition 0), null when everything was answered. A named topic that
does not exist answers UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION for an illegal name);
asking for every topic lists existing ones only. A cursor whose partition is negative, or whose
topic is not among those asked for (or, asking for all, not in the cluster), makes the request
INVALID_REQUEST, answered for each topic named (Kafka's getErrorResponse).

Partitions are answered as Metadata answers them (leader -1 when its broker is not registered,
replicas, ISR and offline replicas as the cache holds them), with no partition error: kafkalite
has no eligible leader replicas, so both ELR lists are empty, as Kafka answers without ELR.
There is no authorizer: authorized operations are Kafka's "not requested".
"""

from __future__ import annotations

from typing import Any

from kafkalite.common.errors import ApiError
from kafkalite.common.uuids import ZERO_UUID
from kafkalite.controller.assignment import validate_topic_name
from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.acl import AUTHORIZED_OPERATIONS_OMITTED
from kafkalite.protocol.messages import describe_topic_partitions as dtp

from ..metadata_cache import MetadataCache, Snapshot, TopicInfo
from ..responses import respond
from .metadata import INTERNAL_TOPICS, live_leader

# Kafka's Topic.isInternal
DEFAULT_PARTITION_LIMIT = 2000  # max.request.partition.size.limit

R = dtp.RESPONSE
T = R["topics"]
P = T["partitions"]


class TopicPartitionsApis:
    def __init__(self, metadata_cache: MetadataCache,
                 partition_limit: int = DEFAULT_PARTITION_LIMIT) -> None:
        self.metadata_cache = metadata_cache
        self.partition_limit = partition_limit  # max.request.partition.size.limit

    def describe_topic_partitions(self, request: Request) -> Response:
        snap = self.metadata_cache.snapshot
        req = request.body
        cursor = req.cursor
        cursor_topic = cursor.topic_name if cursor is not None else ""
        every_topic = not req.topics
        asked = snap.topics.keys() if every_topic else (t.name for t in req.topics)
        names = sorted({name for name in asked if name >= cursor_topic})
        if cursor is not None and (cursor.partition_index < 0 or cursor.topic_name not in names):
            return respond(request, R(throttle_time_ms=0, topics=[
                _topic_error(t.name, E.INVALID_REQUEST) for t in req.topics]))
        limit = max(min(self.partition_limit, req.response_partition_limit), 1)
        body = describe_page(snap, names, cursor, limit, every_topic)
        return respond(request, body)


def describe_page(snap: Snapshot, names: list[str], cursor: Any, limit: int, every_topic: bool) -> Any:
    """The response for ``names`` (sorted) from ``cursor`` on, at most ``limit`` partitions."""
    remaining = limit
    topics: list[Any] = []
    for name in names:
        if remaining == 0:
            # Every partition before this topic was answered: the next page starts with it.
            return R(throttle_time_ms=0, topics=topics,
                     next_cursor=dtp.CURSOR(topic_name=name, partition_index=0))
        topic = snap.topics.get(name)
        if topic is None:
            if not every_topic:
                topics.append(_topic_error(name, _unknown_topic_error(name)))
            continue
        start = cursor.partition_index if cursor is not None and name == cursor.topic_name else 0
        count = len(topic.partitions)
        upper = min(count, start + remaining)
        topics.append(T(error_code=E.NONE, name=name, topic_id=topic.topic_id,
                        is_internal=name in INTERNAL_TOPICS,
                        partitions=_partitions(snap, topic, start, upper),
                        topic_authorized_operations=AUTHORIZED_OPERATIONS_OMITTED))
        if upper < count:
            return R(throttle_time_ms=0, topics=topics,
                     next_cursor=dtp.CURSOR(topic_name=name, partition_index=upper))
        remaining -= len(topics[-1].partitions)
    return R(throttle_time_ms=0, topics=topics, next_cursor=None)


def _partitions(snap: Snapshot, topic: TopicInfo, start: int, upper: int) -> list[Any]:
    out = []
    for index in range(start, upper):
        p = topic.partitions.get(index)
        if p is None:
            continue
        out.append(P(error_code=E.NONE, partition_index=index, leader_id=live_leader(snap, p),
                     leader_epoch=p.leader_epoch, replica_nodes=list(p.replicas), isr_nodes=list(p.isr),
                     eligible_leader_replicas=[], last_known_elr=[],
                     offline_replicas=list(p.offline_replicas)))
    return out


def _unknown_topic_error(name: str) -> int:
    try:
        validate_topic_name(name)
    except ApiError:
        return E.INVALID_TOPIC_EXCEPTION
    return E.UNKNOWN_TOPIC_OR_PARTITION


def _topic_error(name: str, code: int) -> Any:
    return T(error_code=code, name=name, topic_id=ZERO_UUID, is_internal=name in INTERNAL_TOPICS,
             partitions=[], topic_authorized_operations=AUTHORIZED_OPERATIONS_OMITTED)
