"""Kafka's TransactionMarkerChannelManager: the COMMIT/ABORT markers of ended transactions,
sent as WriteTxnMarkers v1 to the leader of each partition over the inter-broker listener, until
every partition has acknowledged; then the coordinator writes CompleteCommit/CompleteAbort
(``MarkerRequest.on_written``).

The markers of partitions this broker leads are written in-process when the broker gives a
``local_writer`` (the WriteTxnMarkers handler's own logic, the same request and answer, acks=all,
answered from the produce purgatory): at once, in the thread that asked, with no round trip
through this broker's listener and no sender thread between. Kafka sends those over the network
too; what differs is only how soon the transaction completes (the window in which its producer's
next AddPartitionsToTxn is answered CONCURRENT_TRANSACTIONS and backs off).

One thread and one queue per destination broker (``TxnMarkerSenderThread-{node}-{destination}``,
one request in flight, the queued markers of many transactions in it, as the controller's
RequestSendThreads), and one thread (``TxnMarkerSenderThread-{node}``) that retries what could
not be sent: partitions whose leader is unknown or moved, retriable errors (Kafka's
TransactionMarkerRequestCompletionHandler), writes to retry later. A partition that no longer
exists is dropped (its topic was deleted); INVALID_PRODUCER_EPOCH or TRANSACTION_COORDINATOR_FENCED
stop the transaction's markers (a newer coordinator or producer owns it); the markers of a
``__transaction_state`` partition this broker no longer leads are dropped.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kafkalite.clients import BlockingClient
from kafkalite.clients.security import PLAINTEXT, ClientSecurity
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import write_txn_markers

from ...metadata_cache import MetadataCache
from .coordinator import MarkerRequest, TopicPartition

# (WriteTxnMarkers request body, done(response body)): the handler's logic, in-process.
LocalWriter = Callable[[Any, Callable[[Any], None]], None]

log = logging.getLogger("kafkalite.server.coordinator.transaction.markers")

WRITE_TXN_MARKERS_VERSION = 1
RETRY_BACKOFF_S = 0.1  # Kafka's retry of a marker batch after an error
MAX_MARKERS_PER_REQUEST = 500
RETRIABLE = frozenset({E.UNKNOWN_TOPIC_OR_PARTITION, E.NOT_LEADER_OR_FOLLOWER, E.NOT_ENOUGH_REPLICAS,
                       E.NOT_ENOUGH_REPLICAS_AFTER_APPEND, E.REQUEST_TIMED_OUT, E.KAFKA_STORAGE_ERROR,
                       E.NETWORK_EXCEPTION, E.UNKNOWN_SERVER_ERROR})
STOP_SENDING = frozenset({E.INVALID_PRODUCER_EPOCH, E.TRANSACTION_COORDINATOR_FENCED})
DROP_PARTITION = frozenset({E.UNSUPPORTED_FOR_MESSAGE_FORMAT, E.UNSUPPORTED_VERSION})


@dataclass(eq=False)
class _Pending:
    request: MarkerRequest
    remaining: set[TopicPartition] = field(default_factory=set)
    cancelled: bool = False


class TransactionMarkerChannelManager:
    def __init__(self, node_id: int, metadata_cache: MetadataCache, listener: str | None,
                 timeout: float = 30.0, local_writer: LocalWriter | None = None,
                 security: ClientSecurity = PLAINTEXT) -> None:
        """``listener``: the inter-broker listener, where partition leaders are reached;
        ``local_writer``: writes the markers of the partitions this broker leads (else they go
        over the listener too; the broker sets it once its handlers exist)."""
        self.node_id = node_id
        self.metadata_cache = metadata_cache
        self.listener = listener
        self.security = security  # how to connect to ``listener``
        self.timeout = timeout
        self.local_writer = local_writer
        self._lock = threading.Lock()
        self._pending: dict[str, _Pending] = {}
        self._senders: dict[int, _DestinationSender] = {}
        self._retries: list[tuple[_Pending, TopicPartition]] = []
        self._later: list[Callable[[], None]] = []
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._retry_thread = threading.Thread(target=self._run_retries,
                                              name=f"TxnMarkerSenderThread-{node_id}", daemon=True)
        self.markers_sent = 0  # partitions acknowledged (tests, operators)

    def start(self) -> None:
        self._retry_thread.start()

    def shutdown(self, timeout: float = 5.0) -> None:
        self._stopping.set()
        self._wake.set()
        with self._lock:
            senders = list(self._senders.values())
        for sender in senders:
            sender.stop()
        for sender in senders:
            sender.join(timeout)
        if self._retry_thread.is_alive():
            self._retry_thread.join(timeout)

    # --- what the coordinator calls -----------------------------------------------------------

    def add_markers(self, request: MarkerRequest) -> None:
        pending = _Pending(request, set(request.partitions))
        with self._lock:
            old = self._pending.pop(request.transactional_id, None)
            if old is not None:
                old.cancelled = True
            self._pending[request.transactional_id] = pending
        local: list[tuple[_Pending, TopicPartition]] = []
        for tp in request.partitions:
            self._route(pending, tp, local)
        self._write_local(local)

    def remove_for_partition(self, index: int) -> None:
        """The __transaction_state partition ``index`` left (or is loaded again): its markers go."""
        with self._lock:
            for txn_id, pending in list(self._pending.items()):
                if pending.request.txn_partition == index:
                    pending.cancelled = True
                    del self._pending[txn_id]

    def retry_later(self, fn: Callable[[], None]) -> None:
        with self._lock:
            self._later.append(fn)
        self._wake.set()

    @property
    def pending_transactions(self) -> int:
        with self._lock:
            return len(self._pending)

    # --- routing ------------------------------------------------------------------------------

    def _leader_address(self, tp: TopicPartition) -> tuple[int, str, int] | bool | None:
        """(leader, host, port); None while unknown; False if the partition no longer exists."""
        snap = self.metadata_cache.snapshot
        topic = snap.topics.get(tp[0])
        if topic is None or tp[1] not in topic.partitions:
            return False
        leader = topic.partitions[tp[1]].leader
        broker = snap.brokers.get(leader)
        endpoint = broker.endpoint(self.listener) if broker is not None and self.listener else None
        if endpoint is None:
            return None
        return leader, endpoint.host, endpoint.port

    def _route(self, pending: _Pending, tp: TopicPartition, local: list[tuple[_Pending, TopicPartition]]
               ) -> None:
        """Queue the marker for its leader's sender, or add it to ``local`` (this broker leads
        the partition: for ``_write_local``)."""
        if pending.cancelled or self._stopping.is_set():
            return
        if self.local_writer is not None and self._leader(tp) == self.node_id:
            local.append((pending, tp))
            return
        where = self._leader_address(tp)
        if where is False:
            log.info("Dropping the marker of %s for %s-%d: the partition no longer exists",
                     pending.request.transactional_id, *tp)
            self.partition_done(pending, tp)
            return
        if where is None or where is True:  # (True is never returned)
            self._retry(pending, tp)
            return
        leader, host, port = where
        with self._lock:
            sender = self._senders.get(leader)
            if sender is None:
                sender = self._senders[leader] = _DestinationSender(self, leader)
                sender.start()
        sender.queue.put((pending, tp, host, port))

    def _leader(self, tp: TopicPartition) -> int | None:
        topic = self.metadata_cache.snapshot.topics.get(tp[0])
        info = topic.partitions.get(tp[1]) if topic is not None else None
        return info.leader if info is not None else None

    def _write_local(self, items: list[tuple[_Pending, TopicPartition]]) -> None:
        """The markers of partitions this broker leads, as one WriteTxnMarkers handled
        in-process; answered as a sent one is (``_answer``), errors retried the same way."""
        writer = self.local_writer
        if not items or writer is None:
            return
        body, pendings = _request_body(items)

        def done(response: Any) -> None:
            _answer(self, items, pendings, response)

        try:
            writer(body, done)
        except Exception:  # as a failed send: every marker again, later
            log.exception("Writing the markers of partitions this broker leads failed; retrying")
            for pending, tp in items:
                self.answered(pending, tp, E.UNKNOWN_SERVER_ERROR)

    def _retry(self, pending: _Pending, tp: TopicPartition) -> None:
        with self._lock:
            self._retries.append((pending, tp))
        self._wake.set()

    def _run_retries(self) -> None:
        while not self._stopping.is_set():
            self._wake.wait()
            if self._stopping.wait(RETRY_BACKOFF_S):
                return
            with self._lock:
                self._wake.clear()
                retries, self._retries = self._retries, []
                later, self._later = self._later, []
            local: list[tuple[_Pending, TopicPartition]] = []
            for pending, tp in retries:
                self._route(pending, tp, local)
            self._write_local(local)
            for fn in later:
                try:
                    fn()
                except Exception:
                    log.exception("A retried transaction write failed")

    # --- answers ------------------------------------------------------------------------------

    def partition_done(self, pending: _Pending, tp: TopicPartition) -> None:
        with self._lock:
            pending.remaining.discard(tp)
            finished = not pending.remaining and not pending.cancelled
            if finished:
                pending.cancelled = True  # once
                if self._pending.get(pending.request.transactional_id) is pending:
                    del self._pending[pending.request.transactional_id]
        if finished:
            pending.request.on_written()

    def stop_sending(self, pending: _Pending, why: str) -> None:
        log.warning("Stopping the markers of %s: %s", pending.request.transactional_id, why)
        with self._lock:
            pending.cancelled = True
            if self._pending.get(pending.request.transactional_id) is pending:
                del self._pending[pending.request.transactional_id]

    def answered(self, pending: _Pending, tp: TopicPartition, error: int) -> None:
        if pending.cancelled:
            return
        if error == E.NONE:
            self.markers_sent += 1
            self.partition_done(pending, tp)
        elif error in STOP_SENDING:
            self.stop_sending(pending, f"{E.for_code(error).name} for {tp[0]}-{tp[1]}")
        elif error in DROP_PARTITION:
            log.warning("Dropping the marker of %s for %s-%d: %s", pending.request.transactional_id, *tp,
                        E.for_code(error).name)
            self.partition_done(pending, tp)
        else:
            if error not in RETRIABLE:
                log.error("Unexpected %s writing the marker of %s for %s-%d; retrying",
                          E.for_code(error).name, pending.request.transactional_id, *tp)
            self._retry(pending, tp)


class _DestinationSender(threading.Thread):
    """The markers for one broker: one WriteTxnMarkers in flight, what queued meanwhile in the
    next one."""

    def __init__(self, manager: TransactionMarkerChannelManager, destination: int) -> None:
        node_id = manager.node_id
        super().__init__(name=f"TxnMarkerSenderThread-{node_id}-{destination}", daemon=True)
        self.manager = manager
        self.destination = destination
        self.queue: queue.Queue[tuple[_Pending, TopicPartition, str, int] | None] = queue.Queue()
        self.client: BlockingClient | None = None
        self._stopped = False

    def stop(self) -> None:
        self._stopped = True
        self.queue.put(None)
        client = self.client
        if client is not None:
            client.close()

    def run(self) -> None:
        while not self._stopped:
            first = self.queue.get()
            if first is None:
                return
            items = [first]
            while len(items) < MAX_MARKERS_PER_REQUEST:
                try:
                    item = self.queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    return
                items.append(item)
            live = [it for it in items if not it[0].cancelled]
            if live:
                self._send(live)

    def _send(self, items: list[tuple[_Pending, TopicPartition, str, int]]) -> None:
        host, port = items[-1][2], items[-1][3]
        client = self.client
        if client is None or (client.host, client.port) != (host, port):
            if client is not None:
                client.close()
            client = self.client = BlockingClient(host, port, f"broker-{self.manager.node_id}-txn-markers",
                                                  self.manager.timeout, security=self.manager.security)
        body, pendings = _request_body([(pending, tp) for pending, tp, _, _ in items])
        try:
            response = client.send_and_receive(ApiKey.WRITE_TXN_MARKERS, WRITE_TXN_MARKERS_VERSION, body)
        except Exception as e:  # unreachable, closed, no such api: every marker again, later
            if not self._stopped:
                log.info("WriteTxnMarkers to broker %d failed (%s); retrying", self.destination, e)
                for pending, tp, _, _ in items:
                    self.manager.answered(pending, tp, E.NETWORK_EXCEPTION)
            return
        _answer(self.manager, [(pending, tp) for pending, tp, _, _ in items], pendings, response)


def _request_body(items: list[tuple[_Pending, TopicPartition]]) -> tuple[Any, list[_Pending]]:
    """One WriteTxnMarkers for ``items``: a marker per transaction, in the order of the list
    returned."""
    by_txn: dict[int, tuple[_Pending, dict[str, list[int]]]] = {}
    for pending, tp in items:
        _, topics = by_txn.setdefault(id(pending), (pending, {}))
        topics.setdefault(tp[0], []).append(tp[1])
    R = write_txn_markers.REQUEST
    M = R["markers"]
    markers = [M(producer_id=p.request.producer_id, producer_epoch=p.request.producer_epoch,
                 transaction_result=p.request.commit, coordinator_epoch=p.request.coordinator_epoch,
                 topics=[M["topics"](name=t, partition_indexes=sorted(set(ps)))
                         for t, ps in topics.items()])
               for p, topics in by_txn.values()]
    return R(markers=markers), [p for p, _ in by_txn.values()]


def _answer(manager: TransactionMarkerChannelManager, items: list[tuple[_Pending, TopicPartition]],
            pendings: list[_Pending], response: Any) -> None:
    """Each marker's answer to ``manager``; NETWORK_EXCEPTION (retried) for any not answered."""
    answered: set[tuple[int, TopicPartition]] = set()
    for i, result in enumerate(response.markers):
        # Kafka answers the markers in request order; a producer id matches them otherwise.
        candidates = [p for p in pendings if p.request.producer_id == result.producer_id]
        if i < len(pendings) and pendings[i].request.producer_id == result.producer_id:
            candidates.insert(0, pendings[i])
        if not candidates:
            continue
        pending = candidates[0]
        for t in result.topics:
            for p in t.partitions:
                answered.add((id(pending), (t.name, p.partition_index)))
                manager.answered(pending, (t.name, p.partition_index), p.error_code)
    for pending, tp in items:
        if (id(pending), tp) not in answered:
            manager.answered(pending, tp, E.NETWORK_EXCEPTION)
