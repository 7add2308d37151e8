"""CreateTopics, CreatePartitions and DeleteTopics: requests a broker passes to its controller: to
the local one while it is active, else forwarded over the ControllerLink (its "topics" lane) to the
active controller's node, as Kafka 4's brokers forward them; without either (a broker given no
link) NOT_CONTROLLER, so that clients go to the controller named in Metadata.

A topic request is answered once the controller has handled it and this broker's own metadata
cache shows the change (the controller sends it UpdateMetadata over a socket like any broker),
or with REQUEST_TIMED_OUT for what is still missing after the request's timeout: a client that
gets an answer can then see the topic in Metadata. Meanwhile the request waits in the topic
purgatory (Kafka's DelayedCreatePartitions / DelayedDeleteTopics), not on a handler thread; the
controller's answer and every metadata change of a topic check the operations watching it.
"""

from __future__ import annotations

import concurrent.futures
import copy
from collections.abc import Callable
from typing import Any

from kafkalite.common.errors import ApiError
from kafkalite.common.uuids import ZERO_UUID
from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import create_partitions, create_topics, delete_topics

from ..client_quotas import ThrottlingQuotaExceeded
from ..controller_node import active
from ..forwarding import forward, forwarded, forwards
from ..metadata_cache import MetadataCache, Snapshot
from ..purgatory import DelayedOperation, DelayedOperationPurgatory
from ..responses import respond
from .configs import ConfigDescriber

SendResponse = Callable[[Response], None]


def topic_key(name: str) -> tuple[str, str]:
    """The purgatory key of a topic, checked whenever its metadata changes."""
    return ("topic", name)


def topic_id_key(topic_id: Any) -> tuple[str, Any]:
    """The key of a deletion by topic id (its name is known only once the controller answers)."""
    return ("topic-id", topic_id)


LANE = "topics"  # the ControllerLink lane forwarded topic requests take
FORWARDED = forwarded(LANE)
# A forwarded request waits at most this long for the controller's node (the link's own bound).
FORWARD_TIMEOUT_MS = 4000


class TopicApis:
    def __init__(self, controller: Any, metadata_cache: MetadataCache,
                 purgatory: DelayedOperationPurgatory, send_response: SendResponse,
                 describer: ConfigDescriber | None = None, link: Any = None,
                 wait_for_metadata: bool = True, node_listeners: frozenset[str] = frozenset()) -> None:
        self.controller = controller  # None on a broker without the controller role
        # False on a controller-only node: no metadata of its own to wait for (the broker that
        # forwarded the request waits for its own).
        self.wait_for_metadata = wait_for_metadata
        self.link = link  # the ControllerLink to the active controller (None: never forwards)
        self.node_listeners = node_listeners  # controller.listener.names: where forwarded ones come
        self.cache = metadata_cache
        self.purgatory = purgatory
        self.send_response = send_response
        self.describer = describer  # the configs CreateTopics v5+ shows (none without it)

    def on_metadata_change(self, before: Snapshot, after: Snapshot) -> None:
        """Check the requests waiting for the topics whose metadata changed."""
        old, new = before.topics, after.topics
        for name in old.keys() | new.keys():
            was = old.get(name)
            if was is not new.get(name):
                self.purgatory.check_and_complete(topic_key(name))
                if was is not None:
                    self.purgatory.check_and_complete(topic_id_key(was.topic_id))

    def _respond_or_wait(self, request: Request, body: Any, operation: _DelayedTopics) -> Response | None:
        """The response now when nothing waits for the controller; else None, and ``operation``
        waits in the purgatory, watched by its topics (by id for a deletion by id)."""
        if not operation.pending:
            return respond(request, body)
        # The controller's answers complete it too (on the controller's thread).
        for _, future in operation.pending:
            future.add_done_callback(lambda _: operation.safe_try_complete())
        keys = [topic_key(r.name) if r.name is not None else topic_id_key(r.topic_id)
                for r, _ in operation.pending]
        self.purgatory.try_complete_else_watch(operation, keys)
        return None

    # --- CreateTopics -------------------------------------------------------------------------

    def create_topics(self, request: Request) -> Response | None:
        req = request.body
        R = create_topics.RESPONSE
        results: list[Any] = []
        pending: list[tuple[Any, concurrent.futures.Future]] = []
        configs: dict[str, dict[str, str]] = {}
        body = R(throttle_time_ms=0, topics=results)
        charge = _mutation_charge(request, body, strict=request.api_version >= 6)
        controller = active(self.controller)
        remote = self._forward(request, "topics") if self._forwards(request, controller) else None
        for topic in req.topics:
            result = R["topics"](name=topic.name, error_code=E.NONE, error_message=None)
            if remote is not None:
                configs[topic.name] = {c.name: c.value for c in topic.configs}
                pending.append((result, remote.setdefault(topic.name, concurrent.futures.Future())))
            elif controller is None:
                result.error_code = E.NOT_CONTROLLER
                result.error_message = E.BY_CODE[E.NOT_CONTROLLER].message
            else:
                assignment = {a.partition_index: list(a.broker_ids) for a in topic.assignments} or None
                if assignment and (topic.num_partitions != -1 or topic.replication_factor != -1):
                    result.error_code = E.INVALID_REQUEST
                    result.error_message = ("Both numPartitions or replicationFactor and replicasAssignments "
                                            "were set. Both cannot be used at the same time.")
                else:
                    overrides = {c.name: c.value for c in topic.configs}
                    configs[topic.name] = overrides
                    pending.append((result, controller.create_topic(
                        topic.name, topic.num_partitions, topic.replication_factor, assignment,
                        req.validate_only, overrides, charge=charge)))
            results.append(result)
        if remote is not None:
            remote.send()
        return self._respond_or_wait(request, body, _DelayedCreateTopics(
            request, body, pending, req.validate_only, self, configs))

    # --- CreatePartitions ---------------------------------------------------------------------

    def create_partitions(self, request: Request) -> Response | None:
        req = request.body
        R = create_partitions.RESPONSE
        names = [t.name for t in req.topics]
        results: list[Any] = []
        pending: list[tuple[Any, concurrent.futures.Future]] = []
        counts: dict[str, int] = {}
        body = R(throttle_time_ms=0, results=results)
        charge = _mutation_charge(request, body, strict=request.api_version >= 3)
        controller = active(self.controller)
        remote = self._forward(request, "results") if self._forwards(request, controller) else None
        for topic in req.topics:
            result = R["results"](name=topic.name, error_code=E.NONE, error_message=None)
            if names.count(topic.name) > 1:
                result.error_code, result.error_message = E.INVALID_REQUEST, "Duplicate topic in request."
            elif remote is not None:
                counts[topic.name] = topic.count
                pending.append((result, remote.setdefault(topic.name, concurrent.futures.Future())))
            elif controller is None:
                result.error_code = E.NOT_CONTROLLER
                result.error_message = E.BY_CODE[E.NOT_CONTROLLER].message
            else:
                assignment = ([list(a.broker_ids) for a in topic.assignments]
                              if topic.assignments is not None else None)
                counts[topic.name] = topic.count
                pending.append((result, controller.create_partitions(
                    topic.name, topic.count, assignment, req.validate_only, charge=charge)))
            results.append(result)
        if remote is not None:
            remote.send()
        return self._respond_or_wait(request, body, _DelayedCreatePartitions(
            request, body, pending, req.validate_only, self, counts))

    # --- DeleteTopics -------------------------------------------------------------------------

    def delete_topics(self, request: Request) -> Response | None:
        req, version = request.body, request.api_version
        R = delete_topics.RESPONSE
        wanted = ([(t.name, t.topic_id if t.name is None else None) for t in req.topics] if version >= 6
                  else [(name, None) for name in req.topic_names])
        results: list[Any] = []
        pending: list[tuple[Any, concurrent.futures.Future]] = []
        body = R(throttle_time_ms=0, responses=results)
        charge = _mutation_charge(request, body, strict=version >= 5)
        controller = active(self.controller)
        remote = self._forward(request, "responses") if self._forwards(request, controller) else None
        for name, topic_id in wanted:
            result = R["responses"](name=name, error_code=E.NONE)
            if topic_id is not None:
                result.topic_id = topic_id
            if remote is not None:
                pending.append((result, remote.setdefault(name if name is not None else topic_id,
                                                          concurrent.futures.Future())))
            elif controller is None:
                result.error_code = E.NOT_CONTROLLER
            else:
                pending.append((result, controller.delete_topic(name, topic_id, charge=charge)))
            results.append(result)
        if remote is not None:
            remote.send()
        return self._respond_or_wait(request, body, _DelayedDeleteTopics(request, body, pending, False, self))


    # --- forwarding ------------------------------------------------------------------------------

    def _forwards(self, request: Request, controller: Any) -> bool:
        return forwards(request, controller, self.link, FORWARDED, self.node_listeners)

    def _forward(self, request: Request, results_field: str) -> _Forwarded:
        return _Forwarded(self.link, request, results_field)


class _Forwarded:
    """A topic request forwarded to the active controller's node: one future per topic (by name,
    or id for a deletion by id), each completing as the local controller's would (CreateTopics:
    (topic id, layout); CreatePartitions: None; DeleteTopics: the name) or failing with ApiError.
    The caller takes each topic's future (``setdefault``), then ``send``s."""

    def __init__(self, link: Any, request: Request, results_field: str) -> None:
        self.link = link
        self.api_key, self.version = request.api_key, request.api_version
        self.body = copy.copy(request.body)
        self.body.timeout_ms = min(self.body.timeout_ms, FORWARD_TIMEOUT_MS)
        self.results_field = results_field
        self.futures: dict[Any, concurrent.futures.Future] = {}

    def setdefault(self, key: Any, future: concurrent.futures.Future) -> concurrent.futures.Future:
        return self.futures.setdefault(key, future)

    def send(self) -> None:
        if self.futures:
            forward(self.link, LANE, self.api_key, self.version, self.body, ApiKey(self.api_key).name,
                    self._answered, self._failed)

    def _answered(self, response: Any) -> None:
        for r in getattr(response, self.results_field):
            future = self.futures.get(r.name) or self.futures.get(getattr(r, "topic_id", None))
            if future is None or future.done():
                continue
            if r.error_code != E.NONE:
                future.set_exception(ApiError(r.error_code, getattr(r, "error_message", None)
                                              or E.BY_CODE[r.error_code].message))
            elif self.api_key == ApiKey.CREATE_TOPICS:
                layout = {i: [-1] * max(1, r.replication_factor) for i in range(r.num_partitions)}
                future.set_result((getattr(r, "topic_id", None) or ZERO_UUID, layout))
            else:
                future.set_result(r.name)
        self._failed("no answer for it")

    def _failed(self, why: str) -> None:
        for future in self.futures.values():
            if not future.done():
                future.set_exception(ApiError(E.REQUEST_TIMED_OUT, f"The controller did not answer: {why}"))


class _DelayedTopics(DelayedOperation):
    """A topic request waiting for the controller's answers and then for this broker's metadata;
    ``pending``: (the topic's result in the response body, the controller's future); ``asked``:
    what the request asked of each topic beyond its name (CreateTopics: its overrides;
    CreatePartitions: its new partition count)."""

    def __init__(self, request: Request, body: Any, pending: list[tuple[Any, concurrent.futures.Future]],
                 validate_only: bool, apis: TopicApis, asked: dict[str, Any] | None = None) -> None:
        super().__init__(request.body.timeout_ms)
        self.request, self.body, self.pending = request, body, pending
        self.validate_only = validate_only
        self.apis = apis
        self.asked = asked or {}

    def try_complete(self) -> bool:
        snap = self.apis.cache.snapshot
        for result, future in self.pending:
            if not future.done():
                return False
            if future.exception() is None and not self._shown(snap, result, future):
                return False
        return self.force_complete()

    def on_complete(self) -> None:
        snap = self.apis.cache.snapshot
        for result, future in self.pending:
            if not future.done():
                result.error_code = E.REQUEST_TIMED_OUT
                result.error_message = "The controller did not answer in time."
                continue
            error = future.exception()
            if isinstance(error, ApiError):
                result.error_code, result.error_message = error.code, error.message
            elif error is not None:
                result.error_code = E.UNKNOWN_SERVER_ERROR
                result.error_message = f"The controller failed: {error}"
            else:
                self.fill(result, future.result())
                if not self._shown(snap, result, future):
                    result.error_code = E.REQUEST_TIMED_OUT
                    result.error_message = self.timed_out
        self.apis.send_response(respond(self.request, self.body))

    def on_expiration(self) -> None:
        pass  # on_complete has answered REQUEST_TIMED_OUT for what was missing

    def _shown(self, snap: Snapshot, result: Any, future: concurrent.futures.Future) -> bool:
        return self.validate_only or not self.apis.wait_for_metadata or self.shown(snap, result, future)

    timed_out: str | None = None  # the error message of a topic whose metadata did not arrive

    def fill(self, result: Any, value: Any) -> None:
        raise NotImplementedError

    def shown(self, snap: Snapshot, result: Any, future: concurrent.futures.Future) -> bool:
        raise NotImplementedError


class _DelayedCreateTopics(_DelayedTopics):
    timed_out = "The topic was created but its metadata did not arrive in time."

    def fill(self, result: Any, value: Any) -> None:
        topic_id, layout = value
        result.num_partitions = len(layout)
        result.replication_factor = len(next(iter(layout.values())))
        describer = self.apis.describer
        C = create_topics.RESPONSE["topics"]["configs"]
        # Every topic-level setting with its source, as Kafka's CreateTopics v5+ shows them.
        result.configs = [] if describer is None else [
            C(name=e.name, value=e.value, read_only=e.read_only, config_source=e.config_source,
              is_sensitive=e.is_sensitive)
            for e in describer.topic_entries(self.asked.get(result.name, {}))]
        if not self.validate_only:
            result.topic_id = topic_id

    def shown(self, snap: Snapshot, result: Any, future: concurrent.futures.Future) -> bool:
        """The topic is in this broker's metadata with all its partitions led."""
        _, layout = future.result()
        topic = snap.topics.get(result.name)
        return topic is not None and len(topic.partitions) == len(layout) and all(
            p.leader >= 0 for p in topic.partitions.values())


class _DelayedCreatePartitions(_DelayedTopics):
    timed_out = "The partitions were created but their metadata did not arrive in time."

    def fill(self, result: Any, value: Any) -> None:
        pass  # the response says nothing more than the error code

    def shown(self, snap: Snapshot, result: Any, future: concurrent.futures.Future) -> bool:
        """This broker's metadata has the topic's partitions up to the new count, all led."""
        topic = snap.topics.get(result.name)
        parts = topic.partitions if topic is not None else {}
        return all(p in parts and parts[p].leader >= 0 for p in range(self.asked[result.name]))


class _DelayedDeleteTopics(_DelayedTopics):

    def fill(self, result: Any, value: Any) -> None:
        result.name = value

    def shown(self, snap: Snapshot, result: Any, future: concurrent.futures.Future) -> bool:
        return future.result() not in snap.topics



def _mutation_charge(request: Request, body: Any, strict: bool) -> Callable[[int], None] | None:
    """controller_mutation_rate (KIP-599): what the controller calls with the partitions a topic
    creates or deletes once it has checked the topic (Kafka's applyPartitionChangeQuota). A strict
    request (the versions that know THROTTLING_QUOTA_EXCEEDED) finding the bucket empty is refused
    with it; a permissive one is accepted. The response's throttle time is the largest met."""
    quotas = request.quotas
    if quotas is None or quotas.exempt(request) or not quotas.controller_mutation.enabled:
        return None
    user, client_id = quotas.who(request)
    manager = quotas.controller_mutation

    def charge(permits: int) -> None:
        try:
            ms = manager.record_mutation(user, client_id, permits, strict)
        except ThrottlingQuotaExceeded as e:
            body.throttle_time_ms = max(body.throttle_time_ms, e.throttle_ms)
            manager.throttled(user, client_id, e.throttle_ms)
            message = E.BY_CODE[E.THROTTLING_QUOTA_EXCEEDED].message
            raise ApiError(E.THROTTLING_QUOTA_EXCEEDED, message) from None
        body.throttle_time_ms = max(body.throttle_time_ms, ms)

    return charge
