"""Kafka's AddPartitionsToTxnManager (KIP-890 part 1), the partition leader's side: before a
transactional batch is appended, ask the transaction coordinator whether its partition is in the
producer's transaction (AddPartitionsToTxn v5, VerifyOnly), so that a late or hanging write of an
aborted transaction cannot open a new one. For a Produce v12+ (KIP-890 part 2: a transaction
version 2 producer sends no AddPartitionsToTxn of its own) the partitions are instead added to the
transaction (VerifyOnly false; Kafka's TransactionSupportedOperation.ADD_PARTITION), the
coordinator's one answer standing for each of them. Gated by transaction.partition.verification.enable
(default true). Kafka verifies only when the producer has no transaction open on the partition
already (the caller's check).

The coordinator is the leader of ``partition_for(transactional id)`` of ``__transaction_state``.
When it is this broker, it is asked directly; otherwise through one thread per coordinator node
(``AddPartitionsToTxnSenderThread-{node}-{coordinator}``) on the inter-broker listener, one request
in flight, the verifications queued meanwhile batched in the next one. A verification of an id
already queued replaces it (the older one answered INVALID_PRODUCER_EPOCH if its epoch is lower,
else NETWORK_EXCEPTION, retriable), as Kafka's.

``done`` gets the partitions that failed, with the code Produce answers (nothing for a partition
verified): Kafka's mapping (PRODUCER_FENCED -> INVALID_PRODUCER_EPOCH, TRANSACTION_ABORTABLE ->
INVALID_TXN_STATE below Produce v11, a top-level CLUSTER_AUTHORIZATION_FAILED -> INVALID_TXN_STATE)
and ReplicaManager's (CONCURRENT_TRANSACTIONS, NETWORK_EXCEPTION and the COORDINATOR_* errors ->
NOT_ENOUGH_REPLICAS, which every client retries without a metadata refresh).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from kafkalite.clients import BlockingClient
from kafkalite.clients.security import PLAINTEXT, ClientSecurity
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import add_partitions_to_txn

from ...metadata_cache import MetadataCache
from .coordinator import TransactionCoordinator
from .log_records import TRANSACTION_STATE_TOPIC, partition_for
from .versions import TransactionVersion

log = logging.getLogger("kafkalite.server.coordinator.transaction.verification")

TopicPartition = tuple[str, int]
VerifyCallback = Callable[[dict[TopicPartition, int]], None]
ADD_PARTITIONS_VERSION = 5  # the newest, as Kafka's AddPartitionsToTxnRequest.Builder.forBroker
FIRST_PRODUCE_WITH_ABORTABLE = 11  # Produce v11+ clients know TRANSACTION_ABORTABLE
FIRST_PRODUCE_ADDING_PARTITIONS = 12  # Produce v12+: the leader adds the partitions (KIP-890 part 2)
RETRY_AS_NOT_ENOUGH_REPLICAS = frozenset({E.CONCURRENT_TRANSACTIONS, E.NETWORK_EXCEPTION,
                                          E.COORDINATOR_LOAD_IN_PROGRESS, E.COORDINATOR_NOT_AVAILABLE,
                                          E.NOT_COORDINATOR})


def produce_error(code: int, produce_version: int) -> int:
    """A coordinator's answer as Produce answers it."""
    if code == E.PRODUCER_FENCED:
        return E.INVALID_PRODUCER_EPOCH
    if code == E.TRANSACTION_ABORTABLE and produce_version < FIRST_PRODUCE_WITH_ABORTABLE:
        return E.INVALID_TXN_STATE
    if code == E.CLUSTER_AUTHORIZATION_FAILED:
        return E.INVALID_TXN_STATE
    if code in RETRY_AS_NOT_ENOUGH_REPLICAS:
        return E.NOT_ENOUGH_REPLICAS
    return code


@dataclass
class _Verification:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    partitions: list[TopicPartition]
    produce_version: int
    done: VerifyCallback

    @property
    def add(self) -> bool:
        """Add the partitions to the transaction rather than only verify them."""
        return self.produce_version >= FIRST_PRODUCE_ADDING_PARTITIONS

    def fail(self, code: int) -> None:
        error = produce_error(code, self.produce_version)
        self.done({tp: error for tp in self.partitions})

    def answer(self, errors: dict[TopicPartition, int]) -> None:
        self.done({tp: produce_error(c, self.produce_version) for tp, c in errors.items() if c != E.NONE})


class AddPartitionsToTxnManager:
    def __init__(self, node_id: int, metadata_cache: MetadataCache, listener: str | None,
                 num_partitions: int, local: TransactionCoordinator | None = None,
                 enabled: bool = True, timeout: float = 30.0,
                 security: ClientSecurity = PLAINTEXT) -> None:
        """``num_partitions``: transaction.state.log.num.partitions; ``local``: this broker's
        coordinator, asked directly when it leads the id's partition."""
        self.node_id = node_id
        self.metadata_cache = metadata_cache
        self.listener = listener
        self.security = security  # how to connect to ``listener``
        self.num_partitions = num_partitions
        self.local = local
        self.enabled = enabled  # transaction.partition.verification.enable
        self.timeout = timeout
        self._lock = threading.Lock()
        self._senders: dict[int, _VerifySender] = {}
        self._stopped = False

    def verify(self, transactional_id: str, producer_id: int, producer_epoch: int,
               partitions: list[TopicPartition], done: VerifyCallback,
               produce_version: int = FIRST_PRODUCE_WITH_ABORTABLE) -> None:
        """``done({partition: error})`` with the partitions not verified (empty: append), from
        whichever thread has the answer (at once when verification is off)."""
        v = _Verification(transactional_id, producer_id, producer_epoch, list(partitions), produce_version,
                          done)
        if not self.enabled or not v.partitions:
            done({})
            return
        where = self._coordinator(transactional_id)
        if where is None:
            v.fail(E.COORDINATOR_NOT_AVAILABLE)
            return
        node, host, port = where
        if node == self.node_id and self.local is not None:
            if v.add:
                self.local.handle_add_partitions(transactional_id, producer_id, producer_epoch, v.partitions,
                                                 lambda code: v.fail(code) if code else done({}),
                                                 TransactionVersion.TV_2)
            else:
                self.local.handle_verify_partitions(transactional_id, producer_id, producer_epoch,
                                                    v.partitions, v.answer)
            return
        with self._lock:
            if self._stopped:
                stopped = True
            else:
                stopped = False
                sender = self._senders.get(node)
                if sender is None:
                    sender = self._senders[node] = _VerifySender(self, node)
                    sender.start()
                sender.add(v, host, port)
        if stopped:
            v.fail(E.NETWORK_EXCEPTION)

    def _coordinator(self, transactional_id: str) -> tuple[int, str, int] | None:
        snap = self.metadata_cache.snapshot
        topic = snap.topics.get(TRANSACTION_STATE_TOPIC)
        if topic is None:
            return None
        count = len(topic.partitions) or self.num_partitions
        info = topic.partitions.get(partition_for(transactional_id, count))
        if info is None or info.leader < 0:
            return None
        broker = snap.brokers.get(info.leader)
        endpoint = broker.endpoint(self.listener) if broker is not None and self.listener else None
        if endpoint is None:
            return None
        return info.leader, endpoint.host, endpoint.port

    def shutdown(self, timeout: float = 5.0) -> None:
        with self._lock:
            self._stopped = True
            senders = list(self._senders.values())
        for sender in senders:
            sender.stop()
        for sender in senders:
            sender.join(timeout)


class _VerifySender(threading.Thread):
    def __init__(self, manager: AddPartitionsToTxnManager, coordinator: int) -> None:
        node_id = manager.node_id
        super().__init__(name=f"AddPartitionsToTxnSenderThread-{node_id}-{coordinator}", daemon=True)
        self.manager = manager
        self.coordinator = coordinator
        self._cond = threading.Condition()
        self._queued: dict[str, _Verification] = {}
        self._address: tuple[str, int] = ("", 0)
        self._stopping = False
        self.client: BlockingClient | None = None

    def add(self, v: _Verification, host: str, port: int) -> None:
        replaced = None
        with self._cond:
            old = self._queued.get(v.transactional_id)
            if old is not None:
                if old.producer_epoch > v.producer_epoch:
                    replaced, v = v, old  # the new one is the stale one
                    code = E.INVALID_PRODUCER_EPOCH
                else:
                    replaced = old
                    code = (E.INVALID_PRODUCER_EPOCH if old.producer_epoch < v.producer_epoch
                            else E.NETWORK_EXCEPTION)
            self._queued[v.transactional_id] = v
            self._address = (host, port)
            self._cond.notify()
        if replaced is not None:
            replaced.fail(code)

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify()
        client = self.client
        if client is not None:
            client.close()

    def run(self) -> None:
        while True:
            with self._cond:
                while not self._queued and not self._stopping:
                    self._cond.wait()
                batch, self._queued = self._queued, {}
                stopping, (host, port) = self._stopping, self._address
            if stopping:
                for v in batch.values():
                    v.fail(E.NETWORK_EXCEPTION)
                return
            self._send(list(batch.values()), host, port)

    def _send(self, batch: list[_Verification], host: str, port: int) -> None:
        client = self.client
        if client is None or (client.host, client.port) != (host, port):
            if client is not None:
                client.close()
            client = self.client = BlockingClient(host, port, f"broker-{self.manager.node_id}-verification",
                                                  self.manager.timeout, security=self.manager.security)
        R = add_partitions_to_txn.REQUEST
        T = R["transactions"]
        txns = []
        for v in batch:
            topics: dict[str, list[int]] = {}
            for topic, index in v.partitions:
                topics.setdefault(topic, []).append(index)
            txns.append(T(transactional_id=v.transactional_id, producer_id=v.producer_id,
                          producer_epoch=v.producer_epoch, verify_only=not v.add,
                          topics=[T["topics"](name=t, partitions=ps) for t, ps in topics.items()]))
        try:
            response = client.send_and_receive(ApiKey.ADD_PARTITIONS_TO_TXN, ADD_PARTITIONS_VERSION,
                                               R(transactions=txns))
        except Exception as e:
            log.info("AddPartitionsToTxn to broker %d failed: %s", self.coordinator, e)
            for v in batch:
                v.fail(E.NETWORK_EXCEPTION)
            return
        if response.error_code != E.NONE:
            for v in batch:
                v.fail(response.error_code)
            return
        by_id: dict[str, _Verification | None] = {v.transactional_id: v for v in batch}
        for result in response.results_by_transaction:
            found = by_id.pop(result.transactional_id, None)
            if found is None:
                continue
            found.answer({(t.name, p.partition_index): p.partition_error_code
                      for t in result.topic_results for p in t.results_by_partition})
        for left in by_id.values():
            if left is not None:
                left.fail(E.NETWORK_EXCEPTION)
