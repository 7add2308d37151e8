"""RaftManager: the thread that drives one node's RaftNode over real connections (Kafka's
KafkaRaftManager with its KafkaRaftClientDriver and network channel).

One thread (``kafka-raft-io-thread``) owns the RaftNode: every call into it happens there, fed by
a queue of events (inbound requests from the server's handlers, responses and failures from the
senders, appends, snapshots, describes). Each turn it runs the node's timers (``poll``), hands the
requests the node wants sent to the senders, gives the listener what became committed, fires leader
changes, and completes or fails append futures; then it sleeps until the node's next deadline or
the next event.

One sender thread per other voter (``kafka-raft-outbound-request-thread-<id>``) sends that voter's
requests one at a time over a BlockingClient to its controller listener (with the ClientSecurity
the broker config gives), each bounded by ``controller.quorum.request.timeout.ms``; an error or no
answer in time is the node's ``handle_failure``.

The listener (the controller) is called on the manager thread only: ``handle_commit`` with the
committed data entries in order, each once (control entries are not given); ``handle_load_snapshot``
when the node's log starts past what was given (a snapshot fetched from the leader, or found at
startup); ``handle_leader_change`` when the leader or epoch changes, the node itself being named
leader only once everything below its epoch start offset has been given (Kafka's
ListenerContext.maybeFireLeaderChange).
"""

from __future__ import annotations

import concurrent.futures
import functools
import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from kafkalite.clients.blocking import BlockingClient
from kafkalite.clients.security import PLAINTEXT, ClientSecurity
from kafkalite.common.errors import ApiError
from kafkalite.protocol import ApiKey
from kafkalite.protocol import error_codes as E

from .config import QuorumConfig
from .log import ReplicatedLog
from .messages import NO_LEADER, Entry, OffsetAndEpoch, QuorumInfo, Request, Response
from .node import NotLeaderError, RaftNode
from .quorum_state import QuorumStateStore
from .wire import (
    WrongPartition,
    check_describe_quorum,
    describe_quorum_response,
    error_response,
    request_from_wire,
    request_to_wire,
    response_from_wire,
    response_to_wire,
    source_of,
)

log = logging.getLogger("kafkalite.raft.manager")

MAX_ENTRIES_PER_COMMIT = 1000  # entries read for one handle_commit call
MAX_IDLE_S = 1.0  # the longest the manager thread sleeps without looking at the node
Event = Callable[[float], None]


class RaftListener(Protocol):
    """The state machine (the controller); called on the manager thread."""

    def handle_commit(self, entries: list[Entry]) -> None: ...

    def handle_load_snapshot(self, snapshot_id: OffsetAndEpoch, payload: bytes) -> None: ...

    def handle_leader_change(self, leader_id: int, epoch: int) -> None: ...


class _Stop:
    pass


_STOP = _Stop()


def _failed(node: RaftNode, dst: int, request: Request, now: float) -> None:
    node.handle_failure(now, dst, request)


def _answered(node: RaftNode, dst: int, request: Request, response: Response, now: float) -> None:
    node.handle_response(now, dst, request, response)


class _Sender:
    """The requests to one other voter, one at a time, on a thread of its own."""

    def __init__(self, manager: RaftManager, voter_id: int, host: str, port: int, security: ClientSecurity,
                 timeout_s: float) -> None:
        self.manager = manager
        self.voter_id = voter_id
        self.client = BlockingClient(host, port, f"raft-client-{manager.node_id}", timeout_s,
                                     security=security)
        self.queue: queue.Queue[Request | _Stop] = queue.Queue()
        self.thread = threading.Thread(target=self._run, daemon=True,
                                       name=f"kafka-raft-outbound-request-thread-{voter_id}")

    def send(self, request: Request) -> None:
        self.queue.put(request)

    def _run(self) -> None:
        node, dst = self.manager.node, self.voter_id
        while True:
            request = self.queue.get()
            if isinstance(request, _Stop):
                return
            key, version, body = request_to_wire(request)
            try:
                answer = self.client.send_and_receive(key, version, body)
                response = response_from_wire(key, version, answer)
            except Exception as e:  # refused, timed out, closed, malformed: the node retries
                self.client.close()
                if self.manager.running:
                    log.debug("[RaftManager id=%d] %s to voter %d failed: %s", self.manager.node_id,
                              type(request).__name__, self.voter_id, e)
                self.manager.post(functools.partial(_failed, node, dst, request))
                continue
            self.manager.post(functools.partial(_answered, node, dst, request, response))

    def stop(self, deadline: float) -> None:
        """Let what is queued go (a resigning leader's EndQuorumEpoch) until ``deadline``
        (time.monotonic), then close the connection (which wakes a blocked receive) and end the
        thread."""
        if self.thread.is_alive():
            self.thread.join(max(deadline - time.monotonic(), 0.0))
        self.client.close()
        if self.thread.is_alive():
            self.thread.join(5.0)
        self.client.close()


class RaftManager:
    def __init__(self, node_id: int, voters: Mapping[int, tuple[str, int]], cluster_id: str,
                 directory: str | None, config: QuorumConfig, listener: RaftListener | None,
                 security: ClientSecurity = PLAINTEXT, clock: Callable[[], float] = time.monotonic) -> None:
        """``voters``: every voter's controller listener (host, port), this node's included;
        ``directory``: the ``__cluster_metadata-0`` directory (None: in memory); ``listener``: the
        state machine, which may be set (``self.listener``) after construction, before ``startup``."""
        if node_id not in voters:
            raise ValueError(f"node {node_id} is not one of the voters {sorted(voters)}")
        self.node_id = node_id
        self.voters = dict(voters)
        self.cluster_id = cluster_id
        self.config = config
        self.listener = listener
        self.security = security
        self._clock = clock
        self.node = RaftNode(node_id, list(voters), cluster_id, ReplicatedLog(directory),
                             QuorumStateStore(directory), config, clock())
        self._inbox: queue.Queue[Event | _Stop] = queue.Queue()
        self._senders = {v: _Sender(self, v, host, port, security, config.request_timeout_ms / 1000)
                         for v, (host, port) in self.voters.items() if v != node_id}
        self._thread = threading.Thread(target=self._run, daemon=True, name="kafka-raft-io-thread")
        self._lock = threading.Lock()
        self.running = False
        self._stopped = False
        self._applied = 0  # the next offset the listener gets
        self._fired: tuple[int, int] | None = None  # the last leader change told the listener
        self._leader = (NO_LEADER, 0)
        self._pending: list[tuple[int, int, concurrent.futures.Future[int]]] = []  # (last offset, epoch, f)
        self._gauges: dict[str, float] = {}

    # --- lifecycle ----------------------------------------------------------------------------

    def _listener(self) -> RaftListener:
        assert self.listener is not None  # startup checked it
        return self.listener

    def startup(self) -> None:
        if self.listener is None:
            raise ValueError("RaftManager.startup: no listener (the state machine) was set")
        with self._lock:
            if self.running or self._stopped:
                return
            self.running = True
        for s in self._senders.values():
            s.thread.start()
        self._thread.start()
        log.info("[RaftManager id=%d] Started with voters %s", self.node_id, sorted(self.voters))

    def shutdown(self) -> None:
        """Graceful: a leader resigns (EndQuorumEpoch to the others) before the threads stop."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            was_running, self.running = self.running, False
        if was_running:
            self._inbox.put(self._resign)
            self._inbox.put(_STOP)
            self._thread.join(10.0)
        deadline = time.monotonic() + (self.config.request_timeout_ms / 1000 if was_running else 0.0)
        for s in self._senders.values():
            s.queue.put(_STOP)
        for s in self._senders.values():
            s.stop(deadline)
        self._fail_pending("the Raft manager shut down")
        log.info("[RaftManager id=%d] Shut down", self.node_id)

    def _resign(self, now: float) -> None:
        if self.node.is_leader:
            log.info("[RaftManager id=%d] Resigning as leader of epoch %d", self.node_id, self.node.epoch)
            self.node.resign(now)
            self._send(self.node.poll(now))

    # --- events -------------------------------------------------------------------------------

    def post(self, event: Event) -> None:
        """Run ``event(now)`` on the manager thread (dropped once it has stopped)."""
        self._inbox.put(event)

    def _on_manager_thread(self) -> bool:
        return threading.current_thread() is self._thread

    def _call(self, event: Callable[[float], Any], timeout: float = 10.0) -> Any:
        """``event(now)`` on the manager thread, its result here."""
        if self._on_manager_thread():
            return event(self._clock())
        if not self.running:
            raise ApiError(E.BROKER_NOT_AVAILABLE, "the Raft manager is not running")
        done: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def run(now: float) -> None:
            try:
                done.set_result(event(now))
            except BaseException as e:
                done.set_exception(e)
        self.post(run)
        return done.result(timeout)

    # --- the api ------------------------------------------------------------------------------

    @property
    def leader(self) -> tuple[int, int]:
        """(leader id, epoch) as the node last knew them."""
        return self._leader

    def append(self, records: list[bytes]) -> concurrent.futures.Future[int]:
        """The last offset of ``records`` once committed and given to handle_commit; ApiError
        NOT_CONTROLLER if this node does not lead, or its epoch ends first."""
        future: concurrent.futures.Future[int] = concurrent.futures.Future()

        def run(now: float) -> None:
            try:
                last = self.node.append(now, records)
            except NotLeaderError as e:
                future.set_exception(ApiError(E.NOT_CONTROLLER, f"not the leader (leader {e.leader_id}, "
                                                                f"epoch {e.epoch})"))
                return
            except Exception as e:  # the log could not take them (a disk error): the write fails now
                log.exception("[RaftManager id=%d] Append of %d records failed", self.node_id, len(records))
                future.set_exception(ApiError(E.KAFKA_STORAGE_ERROR, f"the metadata log refused them: {e}"))
                return
            self._pending.append((last, self.node.epoch, future))
        if not self.running:
            future.set_exception(ApiError(E.NOT_CONTROLLER, "the Raft manager is not running"))
        elif self._on_manager_thread():
            run(self._clock())
        else:
            self.post(run)
        return future

    def handle_request(self, api_key: int, version: int, body: Any, reply: Callable[[Any], None]) -> None:
        """A request from another node (any thread); ``reply`` gets the wire response body."""
        if not self.running:
            reply(error_response(api_key, version, E.BROKER_NOT_AVAILABLE))
            return
        if api_key == ApiKey.DESCRIBE_QUORUM:
            try:
                check_describe_quorum(body)
            except WrongPartition:
                reply(error_response(api_key, version, E.INVALID_REQUEST))
                return
            self.post(lambda now: reply(self._describe_answer(now)))
            return
        try:
            request = request_from_wire(api_key, version, body, self.cluster_id)
        except WrongPartition:
            reply(error_response(api_key, version, E.INVALID_REQUEST))
            return
        src = source_of(request)

        def answer(response: Response) -> None:
            reply(response_to_wire(api_key, version, response))
        self.post(lambda now: self.node.handle_request(now, src, request, answer))

    def _describe_answer(self, now: float) -> Any:
        if not self.node.is_leader:
            return describe_quorum_response(None, E.NOT_LEADER_OR_FOLLOWER)
        return describe_quorum_response(self.node.describe(now))

    def describe_quorum(self) -> QuorumInfo:
        """The leader's view of the quorum; ApiError NOT_LEADER_OR_FOLLOWER elsewhere."""
        def run(now: float) -> QuorumInfo:
            if not self.node.is_leader:
                raise ApiError(E.NOT_LEADER_OR_FOLLOWER, f"node {self.node_id} is not the leader")
            info: QuorumInfo = self.node.describe(now)
            return info
        result: QuorumInfo = self._call(run)
        return result

    def create_snapshot(self, snapshot_id: OffsetAndEpoch, payload: bytes) -> None:
        self._call(lambda now: self.node.create_snapshot(snapshot_id, payload))

    def metrics(self) -> dict[str, float]:
        """Kafka's raft-metrics gauges, as of the manager thread's last turn."""
        return dict(self._gauges)

    # --- the manager thread -------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._turn(self._clock())
            while True:
                wait = min(max(self.node.next_deadline() - self._clock(), 0.0), MAX_IDLE_S)
                try:
                    event = self._inbox.get(timeout=wait)
                except queue.Empty:
                    event = None
                while event is not None:
                    if isinstance(event, _Stop):
                        return
                    self._run_event(event)
                    try:
                        event = self._inbox.get_nowait()
                    except queue.Empty:
                        event = None
                self._turn(self._clock())
        except Exception:
            log.exception("[RaftManager id=%d] The Raft thread failed", self.node_id)
            self.running = False

    def _run_event(self, event: Event) -> None:
        try:
            event(self._clock())
        except Exception:
            log.exception("[RaftManager id=%d] Error in a Raft event", self.node_id)

    def _turn(self, now: float) -> None:
        self._send(self.node.poll(now))
        self._deliver()
        self._maybe_fire_leader_change()
        self._settle_appends()
        node = self.node
        self._leader = (self._acting_leader(), node.epoch)
        self._gauges = {"current-leader": node.leader_id, "current-epoch": node.epoch,
                        "current-vote": node.voted_id, "high-watermark": node.high_watermark,
                        "log-end-offset": node.log_end_offset, "log-start-offset": node.log_start_offset}

    def _send(self, requests: list[tuple[int, Request]]) -> None:
        for dst, request in requests:
            sender = self._senders.get(dst)
            if sender is None:
                log.warning("[RaftManager id=%d] No connection to %d for %s", self.node_id, dst,
                            type(request).__name__)
                self.post(functools.partial(_failed, self.node, dst, request))
            else:
                sender.send(request)

    def _deliver(self) -> None:
        node = self.node
        if node.log_start_offset > self._applied:
            snapshot = node.latest_snapshot()
            if snapshot is not None and snapshot[0].offset > self._applied:
                snapshot_id, payload = snapshot
                log.info("[RaftManager id=%d] Loading snapshot %s", self.node_id, snapshot_id)
                self._listener().handle_load_snapshot(snapshot_id, payload)
                self._applied = snapshot_id.offset
        while self._applied < node.high_watermark:
            entries = node.read_committed(self._applied, MAX_ENTRIES_PER_COMMIT)
            if not entries:
                break
            data = [e for e in entries if not e.control]
            if data:
                self._listener().handle_commit(data)
            self._applied = entries[-1].offset + 1

    def _acting_leader(self) -> int:
        """The leader as the state machine may act on it: a Resigned node (a leader that resigned,
        is shutting down, or restarted after leading) names itself in its election state but does
        not lead."""
        node = self.node
        return node.leader_id if node.leader_id != self.node_id or node.is_leader else NO_LEADER

    def _maybe_fire_leader_change(self) -> None:
        node = self.node
        current = (self._acting_leader(), node.epoch)
        if current == self._fired:
            return
        if current[0] == self.node_id and self._applied < node.epoch_start_offset:
            return  # not until the new leader has replayed everything committed before its epoch
        self._fired = current
        log.info("[RaftManager id=%d] Leader change: leader %d, epoch %d", self.node_id, *current)
        self._listener().handle_leader_change(*current)

    def _settle_appends(self) -> None:
        if not self._pending:
            return
        still = []
        node = self.node
        for last, epoch, future in self._pending:
            if last < self._applied:
                future.set_result(last)
            elif not node.is_leader or node.epoch != epoch:
                future.set_exception(ApiError(E.NOT_CONTROLLER, f"epoch {epoch} ended before offset {last} "
                                                                "was committed"))
            else:
                still.append((last, epoch, future))
        self._pending = still

    def _fail_pending(self, why: str) -> None:
        pending, self._pending = self._pending, []
        for _last, _epoch, future in pending:
            if not future.done():
                future.set_exception(ApiError(E.NOT_CONTROLLER, why))
