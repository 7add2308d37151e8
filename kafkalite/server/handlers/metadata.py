"""Metadata: brokers (with their endpoint on the request's listener), the controller, and topics
with their partitions, from this broker's MetadataCache snapshot.

A topic named in the request that does not exist is created when the request allows it (v4+
``allow_auto_topic_creation``; always in v0-3) and auto.create.topics.enable is on (Kafka's
AutoTopicCreationManager): with this broker's num.partitions and default.replication.factor, by
the controller (on its own node directly, else through a CreateTopics request sent from a
background thread). The topic answers LEADER_NOT_AVAILABLE meanwhile, so that clients ask again;
INVALID_REPLICATION_FACTOR if there are fewer live brokers than the replication factor, as Kafka's
ZooKeeper-era creation answers. A name that is not a legal topic name answers
INVALID_TOPIC_EXCEPTION, with or without creation.
"""

from __future__ import annotations

import concurrent.futures
import logging
import struct
import threading
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from kafkalite.common.errors import ApiError
from kafkalite.controller.assignment import validate_topic_name
from kafkalite.network.request_channel import Request, Response, SendResponse
from kafkalite.protocol import APIS_BY_KEY
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.acl import AUTHORIZED_OPERATIONS_OMITTED
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import create_topics, metadata

from ..controller_node import active
from ..coordinator.offsets_topic import OFFSETS_TOPIC
from ..coordinator.settings import OffsetsTopicConfig
from ..coordinator.transaction.log_records import TRANSACTION_STATE_TOPIC
from ..coordinator.transaction.settings import TransactionConfig
from ..metadata_cache import MetadataCache, PartitionInfo, Snapshot
from ..responses import respond
from ..share_coordinator.coordinator import SHARE_GROUP_STATE_TOPIC
from ..share_coordinator.settings import ShareCoordinatorConfig
from ..topic_configs import ControllerLink

# Kafka's Topic.INTERNAL_TOPICS: flagged internal in Metadata and DescribeTopicPartitions (clients
# leave them out of pattern subscriptions).
INTERNAL_TOPICS = frozenset({OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC, SHARE_GROUP_STATE_TOPIC})

log = logging.getLogger("kafkalite.server.handlers.metadata")
METADATA_API = APIS_BY_KEY[ApiKey.METADATA]

CREATE_TOPICS_VERSION = 7
CREATE_TIMEOUT_MS = 3000  # how long the controller's node may wait for the new topic's metadata


class AutoTopicCreator:
    """Kafka's AutoTopicCreationManager: hands the creation of unknown topics to the controller
    without waiting for it. A topic whose creation is under way is not asked for again."""

    def __init__(self, num_partitions: int, replication_factor: int, controller: Any = None,
                 link: ControllerLink | None = None, offsets_topic: OffsetsTopicConfig | None = None,
                 transactions: TransactionConfig | None = None,
                 share_state: ShareCoordinatorConfig | None = None) -> None:
        self.num_partitions = num_partitions
        self.replication_factor = replication_factor
        self.controller = controller  # on the controller's node
        self.link = link  # elsewhere
        self.offsets_topic = offsets_topic or OffsetsTopicConfig()
        self.transactions = transactions or TransactionConfig()
        self.share_state = share_state or ShareCoordinatorConfig()
        self._lock = threading.Lock()
        self._in_flight: set[str] = set()

    def create(self, name: str, snap: Snapshot) -> int:
        """The error code the topic answers with now (after a valid name). The internal topics get
        their own partitions, configs and replication factor, capped here by the brokers
        registered now, whoever asks for them (FindCoordinator, or a Metadata request naming
        them): ``__consumer_offsets`` Kafka's offsets.topic.*, ``__transaction_state``
        transaction.state.log.*, ``__share_group_state`` share.coordinator.state.topic.* (their
        min.insync.replicas capped by the factor they get)."""
        configs: Mapping[str, str] = {}
        partitions, factor = self.num_partitions, self.replication_factor
        brokers = len(snap.brokers)
        if name == OFFSETS_TOPIC:
            offsets = self.offsets_topic
            partitions, configs = offsets.num_partitions, offsets.topic_configs()
            factor = offsets.replication_factor_for(brokers)
        elif name == TRANSACTION_STATE_TOPIC:
            txn = self.transactions
            partitions, configs = txn.num_partitions, txn.topic_configs(brokers)
            factor = txn.replication_factor_for(brokers)
        elif name == SHARE_GROUP_STATE_TOPIC:
            share = self.share_state
            partitions, configs = share.num_partitions, share.topic_configs(brokers)
            factor = share.replication_factor_for(brokers)
        if factor > brokers:
            return E.INVALID_REPLICATION_FACTOR
        with self._lock:
            if name in self._in_flight:
                return E.LEADER_NOT_AVAILABLE
            self._in_flight.add(name)
        try:
            future = self._submit(name, partitions, factor, configs)
        except RuntimeError:  # shutting down
            self._done(name)
            return E.LEADER_NOT_AVAILABLE
        future.add_done_callback(lambda f: self._finished(name, f))
        return E.LEADER_NOT_AVAILABLE

    def _submit(self, name: str, partitions: int, factor: int,
                configs: Mapping[str, str]) -> concurrent.futures.Future:
        if (controller := active(self.controller)) is not None:
            return controller.create_topic(name, partitions, factor, None, False, configs)
        if self.link is None:
            raise RuntimeError("no way to the controller")
        R = create_topics.REQUEST
        body = R(timeout_ms=CREATE_TIMEOUT_MS, validate_only=False, topics=[R["topics"](
            name=name, num_partitions=partitions, replication_factor=factor,
            configs=[R["topics"]["configs"](name=k, value=v) for k, v in configs.items()])])
        log.info("Sending the auto-creation of %s to the controller", name)
        return self.link.submit("creations", ApiKey.CREATE_TOPICS, CREATE_TOPICS_VERSION, body)

    def _finished(self, name: str, future: concurrent.futures.Future) -> None:
        self._done(name)
        error = future.exception()
        if isinstance(error, ApiError):
            code, message = error.code, error.message
        elif error is not None:
            log.warning("Auto-creation of topic %s failed: %s", name, error)
            return
        elif not hasattr(future.result(), "topics"):
            return  # the local controller's (topic id, assignment)
        else:
            topic = future.result().topics[0]
            code, message = topic.error_code, topic.error_message
        if code not in (E.NONE, E.TOPIC_ALREADY_EXISTS, E.REQUEST_TIMED_OUT):
            log.info("Auto-creation of topic %s refused: %s (%s)", name, E.for_code(code).name, message)

    def _done(self, name: str) -> None:
        with self._lock:
            self._in_flight.discard(name)


# (snapshot, the frame after the correlation id, error code, error counts)
_Kept = tuple[Snapshot, bytes, int, Mapping[int, int] | None]
ANSWERS_KEPT = 256  # distinct Metadata requests whose answers are kept per snapshot (then cleared)
_THROTTLE = struct.Struct(">i")
_FRAME_HEAD = struct.Struct(">ii")  # the frame's size, the correlation id


class _Throttle:
    """What the client quotas see of a cached answer: its throttle time, set if throttled."""

    __slots__ = ("throttle_time_ms",)

    def __init__(self) -> None:
        self.throttle_time_ms = 0


class MetadataApis:
    def __init__(self, metadata_cache: MetadataCache, auto_create: AutoTopicCreator | None = None,
                 node_id: int | None = None) -> None:
        self.metadata_cache = metadata_cache
        self.auto_create = auto_create  # None: auto.create.topics.enable=false
        self.node_id = node_id  # this broker (None: the controller id is told as the metadata has it)
        # Answers reused while the metadata snapshot is the same (snapshots never change): the
        # request's listener, version, topics and flags -> (snapshot, the frame after the
        # correlation id, error code, error counts). Only answers that are the same for every
        # principal (no authorizer: Denied.same_for_all) and change nothing (every topic known:
        # no auto-creation) are kept. ``answers_reused`` counts the hits (tests, benchmarks).
        self._answers: dict[tuple[Any, ...], _Kept] = {}
        self.answers_reused = 0

    def controller_id(self, snap: Snapshot) -> int:
        """The active controller if it is a live broker, else this broker (as Kafka's KRaft brokers
        name an alive broker: clients send their controller requests there, and it forwards them)."""
        if self.node_id is None or snap.controller_id in snap.brokers:
            return snap.controller_id
        return self.node_id

    def handle_metadata(self, request: Request) -> Response:
        snap = self.metadata_cache.snapshot
        version = request.api_version
        key = _answer_key(request)
        if key is not None:
            kept = self._answers.get(key)
            if kept is not None and kept[0] is snap:
                return self._reuse(request, kept)
        response, all_known = self._answer(request, snap)
        frame = response.payload
        if (key is not None and all_known and type(frame) is bytes
                and frame[8 + _header_size(version):12 + _header_size(version)] == b"\0\0\0\0"):
            # (throttle_time_ms 0: a throttled answer is not kept; a hit throttles on its own)
            if len(self._answers) >= ANSWERS_KEPT:
                self._answers = {}
            self._answers[key] = (snap, frame[8:], response.error_code, response.error_counts)
        return response

    def _reuse(self, request: Request, kept: _Kept) -> Response:
        """A kept answer with this request's correlation id, through the client quotas as
        ``respond`` would take it (their throttle time written in)."""
        self.answers_reused += 1
        _, rest, error_code, counts = kept
        frame = _FRAME_HEAD.pack(len(rest) + 4, request.correlation_id) + rest  # one copy of the answer
        if request.quotas is not None:
            throttle = _Throttle()
            request.quotas.on_response(request, throttle)
            if throttle.throttle_time_ms:
                throttled = bytearray(frame)
                at = 8 + _header_size(request.api_version)
                _THROTTLE.pack_into(throttled, at, throttle.throttle_time_ms)
                frame = bytes(throttled)
        return SendResponse(request, frame, error_code, counts)

    def _answer(self, request: Request, snap: Snapshot) -> tuple[SendResponse, bool]:
        """The answer, and whether every topic asked for was known."""
        version = request.api_version
        R = metadata.RESPONSE
        brokers = []
        for b in sorted(snap.brokers.values(), key=lambda b: b.id):
            e = b.endpoint(request.listener)
            if e is not None:
                brokers.append(R["brokers"](node_id=b.id, host=e.host, port=e.port, rack=b.rack))
        allow = version < 4 or request.body.allow_auto_topic_creation
        auto_create = self.auto_create if allow else None
        topics = [_topic_metadata(snap, name, topic_id, auto_create)
                  for name, topic_id in _requested_topics(snap, request.body, version)]
        body = R(
            throttle_time_ms=0, brokers=brokers, cluster_id=snap.cluster_id,
            controller_id=self.controller_id(snap), topics=topics,
            cluster_authorized_operations=AUTHORIZED_OPERATIONS_OMITTED,
        )
        return respond(request, body), not any(t.error_code for t in topics)


def _answer_key(request: Request) -> tuple[Any, ...] | None:
    """What a Metadata answer depends on besides the snapshot, or None if it may not be kept:
    before v3 (no throttle time to write in), or when the checks' overlay differs by principal
    (an authorizer) or a test's faults change it."""
    body, version = request.body, request.api_version
    if version < 3 or not getattr(request.injected, "same_for_all", False):
        return None
    # A topic by name, else by id (v10+): a str and a UUID never compare equal, and a name's
    # hash is cached where a UUID's is computed at every lookup.
    topics = None if body.topics is None else tuple(
        t.name if t.name is not None else t.topic_id for t in body.topics)
    return (request.listener, version, topics, getattr(body, "allow_auto_topic_creation", True),
            getattr(body, "include_cluster_authorized_operations", False),
            getattr(body, "include_topic_authorized_operations", False))


def _header_size(version: int) -> int:
    """Bytes of the response header after the correlation id: the empty tagged fields (v9+)."""
    return 1 if METADATA_API.is_flexible(version) else 0


def _requested_topics(snap: Snapshot, req: Any,
                      version: int) -> Iterable[tuple[str | None, uuid.UUID | None]]:
    if req.topics is None or (version == 0 and not req.topics):
        # Null asks for every topic (v1+); in v0 an empty list does.
        return [(name, None) for name in sorted(snap.topics)]
    return [(t.name, t.topic_id if t.name is None else None) for t in req.topics]


def _unknown_topic_error(snap: Snapshot, name: str, auto_create: AutoTopicCreator | None) -> int:
    try:
        validate_topic_name(name)
    except ApiError as e:
        return e.code
    return E.UNKNOWN_TOPIC_OR_PARTITION if auto_create is None else auto_create.create(name, snap)


def _topic_metadata(snap: Snapshot, name: str | None, topic_id: uuid.UUID | None,
                    auto_create: AutoTopicCreator | None = None) -> Any:
    T = metadata.RESPONSE["topics"]
    P = T["partitions"]
    topic = snap.topics.get(name) if name is not None else snap.topic_by_id(topic_id)  # type: ignore[arg-type]
    if topic is None:
        code = _unknown_topic_error(snap, name, auto_create) if name is not None else E.UNKNOWN_TOPIC_ID
        unknown = T(error_code=code, name=name, partitions=[],
                    topic_authorized_operations=AUTHORIZED_OPERATIONS_OMITTED)
        if topic_id is not None:
            unknown.topic_id = topic_id
        return unknown
    partitions = []
    for p in sorted(topic.partitions.values(), key=lambda p: p.index):
        leader = live_leader(snap, p)
        partitions.append(P(
            error_code=E.NONE if leader >= 0 else E.LEADER_NOT_AVAILABLE,
            partition_index=p.index, leader_id=leader,
            leader_epoch=p.leader_epoch, replica_nodes=list(p.replicas), isr_nodes=list(p.isr),
            offline_replicas=list(p.offline_replicas),
        ))
    # Clients leave internal topics out of pattern subscriptions (Kafka's Topic.isInternal).
    return T(error_code=E.NONE, name=topic.name, topic_id=topic.topic_id,
             is_internal=topic.name in INTERNAL_TOPICS, partitions=partitions,
             topic_authorized_operations=AUTHORIZED_OPERATIONS_OMITTED)


def live_leader(snap: Snapshot, p: PartitionInfo) -> int:
    """The partition's leader, or -1 (Kafka's NO_LEADER_ID) when it has none or its broker is not
    registered (also DescribeTopicPartitions')."""
    return p.leader if p.leader >= 0 and p.leader in snap.brokers else -1
