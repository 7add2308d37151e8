"""Kafka's DefaultStatePersister and PersisterStateManager: the broker's side of the share
coordinator, implementing ``Persister`` (kafkalite/server/share/persister.py) for the
share-partitions this broker leads.

Each call finds the share coordinator of its key, the leader of the key's partition of
``__share_group_state`` in this broker's metadata (what FindCoordinator key type 2 answers;
the topic is created, through ``create_topic``, the first time it is missing), and sends it the
request (InitializeShareGroupState, ReadShareGroupState, WriteShareGroupState,
DeleteShareGroupState or ReadShareGroupStateSummary v0) over the inter-broker listener. When this
broker is the coordinator the request goes to its ShareCoordinator in-process: the same
coordinator code and answer, without the round trip. NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE,
COORDINATOR_LOAD_IN_PROGRESS and a peer that cannot be reached are retried (the metadata told
again each time, so a coordinator that moved is found) with a doubling backoff until
``retry_timeout_ms`` (share.coordinator.write.timeout.ms) has passed since the call; then the
last error is the answer.

One thread (``share-state-persister-{node}``) sends the requests and schedules the retries, one
request in flight per coordinator at a time; the callbacks run on it or on the thread that
completed a local write (never on the caller's, which Kafka's futures do not promise either).
The calls of one key are sent in the order they were made, each once the one before it is
answered, retries included: a write retried while its coordinator moves must not land after a
later write of the same records (the coordinator keeps the last state written of each offset,
so an acknowledged record would be persisted as available again).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from kafkalite.clients import BlockingClient
from kafkalite.clients.security import PLAINTEXT, ClientSecurity
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import (
    delete_share_group_state,
    initialize_share_group_state,
    read_share_group_state,
    read_share_group_state_summary,
    write_share_group_state,
)

from ..metadata_cache import MetadataCache
from ..share.persister import ReadStateResult, ShareStateKey, StateBatch, StateSummary
from .coordinator import SHARE_GROUP_STATE_TOPIC, ShareCoordinator, partition_for

log = logging.getLogger("kafkalite.server.share_coordinator.persister")

RETRIABLE = frozenset({E.NOT_COORDINATOR, E.COORDINATOR_NOT_AVAILABLE, E.COORDINATOR_LOAD_IN_PROGRESS,
                       E.NETWORK_EXCEPTION, E.REQUEST_TIMED_OUT})
INITIAL_BACKOFF_MS = 50
MAX_BACKOFF_MS = 1000
REQUEST_TIMEOUT_S = 5.0  # one request to a coordinator (the rest of the retry window if shorter)
VERSION = 0


@dataclass(frozen=True)
class _Kind:
    """One api as the persister uses it: the local call, the request, its result, the failure."""

    api: ApiKey
    local: Callable[[ShareCoordinator, ShareStateKey, tuple, Callable[[Any], None]], None]
    request: Callable[[ShareStateKey, tuple], Any]
    result: Callable[[Any], Any]  # the response's one partition -> what ``done`` gets
    failed: Callable[[int], Any]
    error: Callable[[Any], int]


def _topics(R: Any, key: ShareStateKey, **partition: Any) -> Any:
    T = R["topics"]
    return R(group_id=key.group_id, topics=[T(topic_id=uuid.UUID(bytes=key.topic_id), partitions=[
        T["partitions"](partition=key.partition, **partition)])])


def _only(response: Any) -> Any:
    """The one partition a response answers (ValueError if it answers none)."""
    for t in response.results:
        for p in t.partitions:
            return p
    raise ValueError("no partition in the answer")


def _code(result: Any) -> int:
    return result if isinstance(result, int) else result.error


def _batch_structs(B: Any, batches: list[StateBatch]) -> list[Any]:
    return [B(first_offset=b.first_offset, last_offset=b.last_offset, delivery_state=b.delivery_state,
              delivery_count=b.delivery_count) for b in batches]


INITIALIZE = _Kind(
    ApiKey.INITIALIZE_SHARE_GROUP_STATE,
    lambda c, key, a, done: c.initialize_state(key, a[0], a[1], done),
    lambda key, a: _topics(initialize_share_group_state.REQUEST, key, state_epoch=a[0], start_offset=a[1]),
    lambda p: p.error_code, lambda e: e, _code)
WRITE = _Kind(
    ApiKey.WRITE_SHARE_GROUP_STATE,
    lambda c, key, a, done: c.write_state(key, a[0], a[1], a[2], a[3], done),
    lambda key, a: _topics(write_share_group_state.REQUEST, key, state_epoch=a[0], leader_epoch=a[1],
                           start_offset=a[2], state_batches=_batch_structs(
                               write_share_group_state.STATE_BATCH.cls, a[3])),
    lambda p: p.error_code, lambda e: e, _code)
DELETE = _Kind(
    ApiKey.DELETE_SHARE_GROUP_STATE,
    lambda c, key, a, done: c.delete_state(key, done),
    lambda key, a: _topics(delete_share_group_state.REQUEST, key),
    lambda p: p.error_code, lambda e: e, _code)
READ = _Kind(
    ApiKey.READ_SHARE_GROUP_STATE,
    lambda c, key, a, done: c.read_state(key, a[0], done),
    lambda key, a: _topics(read_share_group_state.REQUEST, key, leader_epoch=a[0]),
    lambda p: ReadStateResult(p.error_code, p.state_epoch, p.start_offset, tuple(
        StateBatch(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
        for b in p.state_batches), p.error_message) if p.error_code == E.NONE
    else ReadStateResult(p.error_code, error_message=p.error_message),
    ReadStateResult, _code)
SUMMARY = _Kind(
    ApiKey.READ_SHARE_GROUP_STATE_SUMMARY,
    # v0's answer has no leader epoch: -1 from either path, so that a local answer equals a remote one.
    lambda c, key, a, done: c.read_summary(key, a[0], lambda r: done(replace(r, leader_epoch=-1))),
    lambda key, a: _topics(read_share_group_state_summary.REQUEST, key, leader_epoch=a[0]),
    lambda p: StateSummary(p.error_code, p.state_epoch, -1, p.start_offset, p.error_message)
    if p.error_code == E.NONE else StateSummary(p.error_code, error_message=p.error_message),
    StateSummary, _code)


def _answer(job: _Job, result: Any) -> None:
    """The caller's callback, once; its own failure logged, not the persister's."""
    try:
        job.done(result)
    except Exception:
        log.exception("The callback of %s for %s failed", job.kind.api.api_name, job.key)


@dataclass(order=True)
class _Job:
    due: float
    seq: int
    kind: _Kind = field(compare=False)
    key: ShareStateKey = field(compare=False)
    args: tuple = field(compare=False)
    done: Callable[[Any], None] = field(compare=False)
    deadline: float = field(compare=False)
    backoff_ms: int = field(default=INITIAL_BACKOFF_MS, compare=False)


class DefaultStatePersister:
    """The ``Persister`` over the share coordinators of the cluster (see the module's text)."""

    def __init__(self, node_id: int, metadata_cache: MetadataCache, listener: str | None,
                 retry_timeout_ms: int, local: ShareCoordinator | None = None,
                 create_topic: Callable[[], None] | None = None,
                 security: ClientSecurity = PLAINTEXT) -> None:
        self.node_id = node_id
        self.metadata_cache = metadata_cache
        self.listener = listener  # the inter-broker listener, where coordinators are reached
        self.retry_timeout_ms = retry_timeout_ms
        self.local = local
        self.create_topic = create_topic
        self.security = security
        self._lock = threading.Condition()
        self._jobs: list[_Job] = []
        # The keys with a call under way (sent, or waiting for its retry), and the calls of each
        # that wait for it, in call order.
        self._waiting: dict[ShareStateKey, deque[_Job]] = {}
        self._seq = itertools.count()
        self._clients: dict[int, BlockingClient] = {}
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name=f"share-state-persister-{node_id}",
                                        daemon=True)
        self.sent = 0  # requests sent over the network (tests, operators)

    def start(self) -> None:
        self._thread.start()

    def shutdown(self, timeout: float = 5.0) -> None:
        with self._lock:
            self._stopping = True
            jobs, self._jobs = self._jobs, []
            jobs += [job for queue in self._waiting.values() for job in queue]
            self._waiting.clear()
            self._lock.notify_all()
        for client in list(self._clients.values()):
            client.close()
        if self._thread.is_alive():
            self._thread.join(timeout)
        for job in jobs:
            _answer(job, job.kind.failed(E.COORDINATOR_NOT_AVAILABLE))

    # --- Persister ------------------------------------------------------------------------------------

    def initialize_state(self, key: ShareStateKey, state_epoch: int, start_offset: int,
                         done: Callable[[int], None]) -> None:
        self._add(INITIALIZE, key, (state_epoch, start_offset), done)

    def read_state(self, key: ShareStateKey, leader_epoch: int,
                   done: Callable[[ReadStateResult], None]) -> None:
        self._add(READ, key, (leader_epoch,), done)

    def write_state(self, key: ShareStateKey, state_epoch: int, leader_epoch: int, start_offset: int,
                    batches: list[StateBatch], done: Callable[[int], None]) -> None:
        self._add(WRITE, key, (state_epoch, leader_epoch, start_offset, list(batches)), done)

    def delete_state(self, key: ShareStateKey, done: Callable[[int], None]) -> None:
        self._add(DELETE, key, (), done)

    def read_summary(self, key: ShareStateKey, leader_epoch: int,
                     done: Callable[[StateSummary], None]) -> None:
        self._add(SUMMARY, key, (leader_epoch,), done)

    # --- the thread -----------------------------------------------------------------------------------

    def _add(self, kind: _Kind, key: ShareStateKey, args: tuple, done: Callable[[Any], None]) -> None:
        now = time.monotonic()
        job = _Job(now, next(self._seq), kind, key, args, done, now + self.retry_timeout_ms / 1000)
        with self._lock:
            queue = self._waiting.get(key)
            if queue is not None and not self._stopping:
                queue.append(job)  # sent once the key's earlier calls are answered
                return
            if not self._stopping:
                self._waiting[key] = deque()
        self._schedule(job)

    def _finish(self, job: _Job, result: Any) -> None:
        """Answer ``job``, then send the next call of its key."""
        _answer(job, result)
        with self._lock:
            queue = self._waiting.get(job.key)
            following = queue.popleft() if queue else None
            if following is None:
                self._waiting.pop(job.key, None)
        if following is not None:
            following.due = time.monotonic()
            following.seq = next(self._seq)
            self._schedule(following)

    def _schedule(self, job: _Job) -> None:
        with self._lock:
            stopping = self._stopping
            if not stopping:
                heapq.heappush(self._jobs, job)
                self._lock.notify_all()
        if stopping:
            _answer(job, job.kind.failed(E.COORDINATOR_NOT_AVAILABLE))

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._stopping and (not self._jobs or self._jobs[0].due > time.monotonic()):
                    wait = None if not self._jobs else max(0.0, self._jobs[0].due - time.monotonic())
                    self._lock.wait(wait)
                if self._stopping:
                    return
                job = heapq.heappop(self._jobs)
            try:
                self._attempt(job)
            except Exception:  # a bug here must not stop the persister: the job fails, logged
                log.exception("Sending %s for %s failed", job.kind.api.api_name, job.key)
                self._finish(job, job.kind.failed(E.UNKNOWN_SERVER_ERROR))

    def _attempt(self, job: _Job) -> None:
        where = self._coordinator(job.key)
        if isinstance(where, int):
            self._answered(job, job.kind.failed(where))
            return
        node, host, port = where
        if node == self.node_id and self.local is not None:
            job.kind.local(self.local, job.key, job.args, lambda result: self._answered(job, result))
            return
        remaining = max(0.1, job.deadline - time.monotonic())
        client = self._clients.get(node)
        if client is None or (client.host, client.port) != (host, port):
            if client is not None:
                client.close()
            client = self._clients[node] = BlockingClient(
                host, port, f"broker-{self.node_id}-share-state", min(REQUEST_TIMEOUT_S, remaining),
                security=self.security)
        client.timeout = min(REQUEST_TIMEOUT_S, remaining)
        try:
            self.sent += 1
            response = client.send_and_receive(job.kind.api, VERSION, job.kind.request(job.key, job.args))
            result = job.kind.result(_only(response))
        except Exception as e:  # unreachable, closed, answered nothing: retried while there is time
            log.info("%s to broker %d failed (%s)", job.kind.api.api_name, node, e)
            result = job.kind.failed(E.NETWORK_EXCEPTION)
        self._answered(job, result)

    def _coordinator(self, key: ShareStateKey) -> tuple[int, str, int] | int:
        """(node, host, port) of the key's coordinator, or the error to retry on."""
        snap = self.metadata_cache.snapshot
        topic = snap.topics.get(SHARE_GROUP_STATE_TOPIC)
        if topic is None:
            if self.create_topic is not None:
                self.create_topic()
            return E.COORDINATOR_NOT_AVAILABLE
        info = topic.partitions.get(partition_for(key, len(topic.partitions)))
        broker = snap.brokers.get(info.leader) if info is not None else None
        if broker is None:
            return E.COORDINATOR_NOT_AVAILABLE
        if broker.id == self.node_id and self.local is not None:
            return broker.id, "", -1
        endpoint = broker.endpoint(self.listener) if self.listener is not None else None
        if endpoint is None:
            return E.COORDINATOR_NOT_AVAILABLE
        return broker.id, endpoint.host, endpoint.port

    def _answered(self, job: _Job, result: Any) -> None:
        error = job.kind.error(result)
        now = time.monotonic()
        if error in RETRIABLE and now < job.deadline:
            job.due = min(job.deadline, now + job.backoff_ms / 1000)
            job.backoff_ms = min(MAX_BACKOFF_MS, job.backoff_ms * 2)
            job.seq = next(self._seq)
            self._schedule(job)
            return
        self._finish(job, result)
