"""CreateTopics and DeleteTopics: requests a broker passes to its controller. A broker without the
controller role answers NOT_CONTROLLER, as Kafka does, so that clients go to the controller
named in Metadata.

Topic requests answer once this broker's own metadata cache shows the change (the controller
sends it UpdateMetadata over a socket like any broker), or REQUEST_TIMED_OUT after the request's
timeout: a client that gets an answer can then see the topic in Metadata."""

from __future__ import annotations

import functools
from typing import Any

from kafkalite.common.errors import ApiError
from kafkalite.network.request_channel import Request, SendResponse
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import create_topics, delete_topics

from ..metadata_cache import MetadataCache, Snapshot
from ..responses import respond


class TopicApis:
    def __init__(self, controller: Any, metadata_cache: MetadataCache) -> None:
        self.controller = controller  # None on a broker without the controller role
        self.cache = metadata_cache

    # --- CreateTopics -------------------------------------------------------------------------

    def create_topics(self, request: Request) -> SendResponse:
        req = request.body
        R = create_topics.RESPONSE
        results = []
        created: list[tuple[Any, int]] = []
        for topic in req.topics:
            result = R["topics"](name=topic.name, error_code=E.NONE, error_message=None)
            if self.controller is None:
                result.error_code = E.NOT_CONTROLLER
                result.error_message = E.BY_CODE[E.NOT_CONTROLLER].message
            else:
                assignment = {a.partition_index: list(a.broker_ids) for a in topic.assignments} or None
                if assignment and (topic.num_partitions != -1 or topic.replication_factor != -1):
                    result.error_code = E.INVALID_REQUEST
                    result.error_message = ("Both numPartitions or replicationFactor and replicasAssignments "
                                            "were set. Both cannot be used at the same time.")
                else:
                    try:
                        topic_id, layout = self.controller.create_topic(
                            topic.name, topic.num_partitions, topic.replication_factor, assignment,
                            req.validate_only)
                    except ApiError as e:
                        result.error_code, result.error_message = e.code, e.message
                    else:
                        result.num_partitions = len(layout)
                        result.replication_factor = len(next(iter(layout.values())))
                        result.configs = []
                        if not req.validate_only:
                            result.topic_id = topic_id
                            created.append((result, len(layout)))
            results.append(result)
        for result, count in created:
            if not self.cache.wait_until(functools.partial(_visible, name=result.name, partitions=count),
                                         req.timeout_ms / 1000):
                result.error_code = E.REQUEST_TIMED_OUT
                result.error_message = "The topic was created but its metadata did not arrive in time."
        return respond(request, R(throttle_time_ms=0, topics=results))

    # --- DeleteTopics -------------------------------------------------------------------------

    def delete_topics(self, request: Request) -> SendResponse:
        req, version = request.body, request.api_version
        R = delete_topics.RESPONSE
        wanted = ([(t.name, t.topic_id if t.name is None else None) for t in req.topics] if version >= 6
                  else [(name, None) for name in req.topic_names])
        results, deleted = [], []
        for name, topic_id in wanted:
            result = R["responses"](name=name, error_code=E.NONE)
            if topic_id is not None:
                result.topic_id = topic_id
            if self.controller is None:
                result.error_code = E.NOT_CONTROLLER
            else:
                try:
                    result.name = self.controller.delete_topic(name, topic_id)
                    deleted.append(result)
                except ApiError as e:
                    result.error_code, result.error_message = e.code, e.message
            results.append(result)
        for result in deleted:
            if not self.cache.wait_until(functools.partial(_gone, name=result.name),
                                         req.timeout_ms / 1000):
                result.error_code = E.REQUEST_TIMED_OUT
        return respond(request, R(throttle_time_ms=0, responses=results))


def _visible(snap: Snapshot, name: str, partitions: int) -> bool:
    """The topic is in this broker's metadata with all its partitions led."""
    topic = snap.topics.get(name)
    return topic is not None and len(topic.partitions) == partitions and all(
        p.leader >= 0 for p in topic.partitions.values())


def _gone(snap: Snapshot, name: str) -> bool:
    return name not in snap.topics
