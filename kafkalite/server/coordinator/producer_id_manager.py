"""Cluster-unique producer ids for InitProducerId (Kafka's RPCProducerIdManager, KIP-730).

The controller hands each broker blocks of ids (AllocateProducerIds); the broker gives them out
one by one from its current block. Once 90% of the current block is given, the next one is asked
for in the background, so a steady stream of producers never waits. Asking is done by this
manager's own thread through a BlockingClient to the controller: a handler thread never waits on
the network. With no id left and no next block yet, ``generate`` raises ApiError
COORDINATOR_LOAD_IN_PROGRESS, which clients retry (Kafka answers that rather than
REQUEST_TIMED_OUT, which older clients treat as fatal).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from kafkalite.clients.security import PLAINTEXT, ClientSecurity
from kafkalite.common.errors import ApiError
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import allocate_producer_ids

from ..controller_node import ControllerClient, ControllerNodeProvider, as_provider

log = logging.getLogger("kafkalite.server.coordinator.producer_id_manager")

PREFETCH_THRESHOLD = 0.90  # Kafka's PidPrefetchThreshold
RETRY_BACKOFF = 0.05  # Kafka's RetryBackoffMs; doubled while the controller keeps refusing
MAX_RETRY_BACKOFF = 1.0
ALLOCATE_VERSION = 0
COORDINATOR_LOAD_IN_PROGRESS = E.BY_NAME["COORDINATOR_LOAD_IN_PROGRESS"].code


@dataclass
class ProducerIdsBlock:
    """Ids ``first`` .. ``first + size - 1``; ``next_id`` is the next one to give."""

    first: int
    size: int
    next_id: int = -1

    def __post_init__(self) -> None:
        if self.next_id < 0:
            self.next_id = self.first

    @property
    def last(self) -> int:
        return self.first + self.size - 1

    @property
    def prefetch_at(self) -> int:
        return self.first + int(self.size * PREFETCH_THRESHOLD)


class ProducerIdManager:
    def __init__(self, broker_id: int, broker_epoch: Callable[[], int],
                 controller: ControllerNodeProvider | tuple[str, int],
                 timeout: float = 5.0, security: ClientSecurity = PLAINTEXT) -> None:
        """``broker_epoch``: this broker's epoch from its registration, -1 while not registered
        (nothing is asked then: the controller would refuse it)."""
        self.broker_id = broker_id
        self.broker_epoch = broker_epoch
        self.client = ControllerClient(as_provider(controller), f"broker-{broker_id}-producer-ids",
                                       timeout, security=security)
        self._lock = threading.Lock()
        self._current: ProducerIdsBlock | None = None
        self._next: ProducerIdsBlock | None = None
        # Set while a next block is wanted and not there yet; the thread waits for it.
        self._wanted = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"broker-{broker_id}-producer-id-manager",
                                        daemon=True)
        # For tests and operators: blocks got, and requests that got none (refused, unreachable).
        self.blocks_received = 0
        self.failed_requests = 0

    def startup(self) -> None:
        # The first block is asked for at once (as soon as the broker is registered) rather than
        # on the first InitProducerId, so the first producer does not have to retry.
        self._wanted.set()
        self._thread.start()

    def shutdown(self, timeout: float = 5.0) -> None:
        with self._lock:  # not between the thread's look at _stopping and its clearing _wanted
            self._stopping.set()
            self._wanted.set()  # wakes the thread
        self.client.close()  # wakes it from a request the controller does not answer
        if self._thread.is_alive():
            self._thread.join(timeout)

    @property
    def has_next_block(self) -> bool:
        with self._lock:
            return self._next is not None

    def generate(self) -> int:
        """A producer id no broker of the cluster has given before; ApiError
        COORDINATOR_LOAD_IN_PROGRESS while this broker has none (never waits)."""
        with self._lock:
            block = self._current
            if block is None or block.next_id > block.last:
                if self._next is None:
                    self._wanted.set()
                    raise ApiError(COORDINATOR_LOAD_IN_PROGRESS,
                                   "Producer ID block is full. Waiting for next block")
                block = self._current = self._next
                self._next = None
            producer_id = block.next_id
            block.next_id += 1
            if producer_id >= block.prefetch_at and self._next is None:
                self._wanted.set()
            return producer_id

    # --- the thread that asks the controller ---------------------------------------------------

    def _run(self) -> None:
        backoff = RETRY_BACKOFF
        while True:
            self._wanted.wait()
            if self._stopping.is_set():
                return
            epoch = self.broker_epoch()
            if epoch < 0:
                self._stopping.wait(RETRY_BACKOFF)  # registration comes soon
                continue
            block = self._allocate(epoch, first_failure=backoff == RETRY_BACKOFF)
            if block is None:
                self.failed_requests += 1
                self._stopping.wait(backoff)
                backoff = min(backoff * 2, MAX_RETRY_BACKOFF)
                continue
            backoff = RETRY_BACKOFF
            with self._lock:
                self._next = block
                self.blocks_received += 1
                if not self._stopping.is_set():  # else the wake-up of shutdown would be lost
                    self._wanted.clear()

    def _allocate(self, epoch: int, first_failure: bool) -> ProducerIdsBlock | None:
        """The next block from the controller, or None (logged: a warning for the first failure
        of a run, then debug lines, as the thread retries until it gets one)."""
        say = log.warning if first_failure else log.debug
        request = allocate_producer_ids.REQUEST(broker_id=self.broker_id, broker_epoch=epoch)
        try:
            response = self.client.send_and_receive(ApiKey.ALLOCATE_PRODUCER_IDS, ALLOCATE_VERSION, request)
        except Exception as e:  # unreachable, closed or a bad answer: the client reconnects next time
            if not self._stopping.is_set():
                say("Broker %d cannot reach the controller at %s:%d for producer ids: %s", self.broker_id,
                    *self.client.node.address, e)
            return None
        if response.error_code != E.NONE:
            # STALE_BROKER_EPOCH: the lifecycle registers again and the epoch changes.
            say("Broker %d: the controller refused producer ids (%s); retrying", self.broker_id,
                E.for_code(response.error_code).name)
            return None
        first, size = response.producer_id_start, response.producer_id_len
        with self._lock:
            last_given = max((b.last for b in (self._current, self._next) if b is not None), default=-1)
        # Kafka's sanity checks: a block must be valid and above every id this broker has.
        if first < 0 or size <= 0 or first > 2**63 - 1 - size or first <= last_given:
            log.error("Broker %d: the controller gave an invalid producer id block (%d, %d ids; this "
                      "broker had up to %d)", self.broker_id, first, size, last_given)
            return None
        log.debug("Broker %d got producer ids %d-%d", self.broker_id, first, first + size - 1)
        return ProducerIdsBlock(first, size)
