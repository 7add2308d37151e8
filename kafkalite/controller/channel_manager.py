"""The controller's channel to the brokers (Kafka's ControllerChannelManager).

Per broker: a queue of items (api key, version, request, callback, enqueue time), a blocking
client and a non-daemon RequestSendThread named as Kafka names it. The thread takes one item at
a time and sends it until it gets a response: on any error it closes the connection, backs off
100 ms, reconnects and resends the same item, until the broker is removed. So requests to one
broker arrive in order and none is lost while the broker is down.
"""

from __future__ import annotations

import dataclasses
import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from kafkalite.clients import BlockingClient
from kafkalite.protocol.api_keys import ApiKey, api_name

log = logging.getLogger("kafkalite.controller.channel_manager")

BACKOFF = 0.1  # seconds, Kafka's 100 ms
# AlterConfigs carries the controller's pushes of dynamic configs (controller/configs.py),
# CreateAcls those of the ACLs (controller/acls.py).
CONTROL_APIS = frozenset({ApiKey.LEADER_AND_ISR, ApiKey.STOP_REPLICA, ApiKey.UPDATE_METADATA,
                          ApiKey.ALTER_CONFIGS, ApiKey.CREATE_ACLS, ApiKey.ALTER_USER_SCRAM_CREDENTIALS})

Callback = Callable[[Any], None]


@dataclasses.dataclass
class QueueItem:
    """``request`` is the request value or, as Kafka queues it, a builder called at send time."""

    api_key: int
    version: int
    request: Any
    callback: Callback | None
    enqueue_ns: int

    def build(self) -> Any:
        return self.request() if callable(self.request) else self.request


class RequestSendThread(threading.Thread):
    def __init__(self, controller_id: int, broker_id: int, items: queue.Queue[QueueItem | None],
                 client: BlockingClient, on_taken: Callable[[int, QueueItem], None]) -> None:
        super().__init__(name=f"Controller-{controller_id}-to-broker-{broker_id}-send-thread",
                         daemon=False)
        self.broker_id = broker_id
        self.items = items
        self.client = client
        self.on_taken = on_taken
        self._stopping = threading.Event()
        self.in_flight: QueueItem | None = None

    def initiate_shutdown(self) -> None:
        """Stop taking items and wake the thread (Kafka interrupts its blocking take)."""
        self._stopping.set()
        self.items.put(None)
        self.client.close()

    def shutdown(self, timeout: float = 5.0) -> None:
        self.initiate_shutdown()
        self.await_shutdown(timeout)

    def await_shutdown(self, timeout: float = 5.0) -> None:
        if self.is_alive() and threading.current_thread() is not self:
            self.join(timeout)

    def run(self) -> None:
        while not self._stopping.is_set():
            item = self.items.get()
            if item is None:
                return  # woken to stop
            self.in_flight = item
            self.on_taken(self.broker_id, item)
            response = self._send_until_answered(item)
            self.in_flight = None
            if response is None:
                return  # removed while sending
            if item.callback is not None:
                try:
                    item.callback(response)
                except Exception:
                    log.exception("Callback for a request to broker %d failed", self.broker_id)

    def _send_until_answered(self, item: QueueItem) -> Any:
        attempt = 0
        body = item.build()
        while not self._stopping.is_set():
            try:
                response = self.client.send_and_receive(item.api_key, item.version, body)
            except Exception as e:
                attempt += 1
                if attempt == 1 or attempt % 50 == 0:
                    log.warning("Controller's %s request to broker %d failed (%s); retrying "
                                "every %d ms", api_name(item.api_key), self.broker_id, e, BACKOFF * 1000)
                self.client.close()
                self._stopping.wait(BACKOFF)
                continue
            return response
        return None


@dataclasses.dataclass
class _BrokerState:
    endpoint: tuple[str, int]
    items: queue.Queue[QueueItem | None]  # None wakes the thread to stop
    thread: RequestSendThread
    client: BlockingClient


class ControllerChannelManager:
    def __init__(self, controller_id: int, socket_timeout_ms: int) -> None:
        self.controller_id = controller_id
        self.socket_timeout = socket_timeout_ms / 1000
        self._brokers: dict[int, _BrokerState] = {}
        self._lock = threading.Lock()
        self._started = False
        # Measured per broker (Kafka's RequestRateAndQueueTimeMs): requests taken from the queue
        # and the total time they waited there.
        self.sent: dict[int, int] = {}
        self.queue_time_ns: dict[int, int] = {}
        self.request_log: Any = None  # the broker's RequestLog: one line per request sent

    def startup(self, brokers: dict[int, tuple[str, int]]) -> None:
        """Add every broker, then start every thread (Kafka's order)."""
        with self._lock:
            for broker_id, endpoint in brokers.items():
                self._add(broker_id, endpoint)
            self._started = True
            for state in self._brokers.values():
                state.thread.start()

    def shutdown(self) -> None:
        with self._lock:
            states = list(self._brokers.values())
        for state in states:  # all woken first, so that they stop together
            state.thread.initiate_shutdown()
        for state in states:
            self.remove_broker(state.thread.broker_id)
        self._started = False

    def add_broker(self, broker_id: int, endpoint: tuple[str, int]) -> None:
        """Add a broker if absent (an existing one keeps its queue and thread)."""
        with self._lock:
            if broker_id in self._brokers:
                return
            state = self._add(broker_id, endpoint)
            if self._started:
                state.thread.start()

    def _add(self, broker_id: int, endpoint: tuple[str, int]) -> _BrokerState:
        items: queue.Queue[QueueItem | None] = queue.Queue()
        client = BlockingClient(endpoint[0], endpoint[1], f"controller-{self.controller_id}",
                                self.socket_timeout)
        thread = RequestSendThread(self.controller_id, broker_id, items, client, self._record)
        state = _BrokerState(endpoint, items, thread, client)
        self._brokers[broker_id] = state
        self.sent.setdefault(broker_id, 0)
        self.queue_time_ns.setdefault(broker_id, 0)
        return state

    def remove_broker(self, broker_id: int) -> None:
        """Stop the broker's thread, close its client, drop its queue and its metrics."""
        with self._lock:
            state = self._brokers.pop(broker_id, None)
        if state is None:
            return
        state.thread.shutdown()
        state.client.close()
        while True:
            try:
                state.items.get_nowait()
            except queue.Empty:
                break
        self.sent.pop(broker_id, None)
        self.queue_time_ns.pop(broker_id, None)

    def send_request(self, broker_id: int, api_key: int, version: int, request: Any,
                     callback: Callback | None = None) -> None:
        """Queue a control request for ``broker_id``; ValueError, before anything is queued, for
        an api that is not one (the send thread only ever sends control requests)."""
        if api_key not in CONTROL_APIS:
            raise ValueError(f"{api_name(api_key)} is not a control request")
        with self._lock:
            state = self._brokers.get(broker_id)
        if state is None:
            log.warning("Not sending %s request to broker %d, since it is offline",
                        api_name(api_key), broker_id)
            return
        state.items.put(QueueItem(api_key, version, request, callback, time.monotonic_ns()))

    def _record(self, broker_id: int, item: QueueItem) -> None:
        queued = time.monotonic_ns() - item.enqueue_ns
        self.sent[broker_id] = self.sent.get(broker_id, 0) + 1
        self.queue_time_ns[broker_id] = self.queue_time_ns.get(broker_id, 0) + queued
        if self.request_log is not None:
            self.request_log.append_controller(broker_id, item.api_key, item.version, queued)

    # --- measurements -------------------------------------------------------------------------

    def queue_size(self, broker_id: int) -> int:
        state = self._brokers.get(broker_id)
        if state is None:
            return 0
        return state.items.qsize() + (1 if state.thread.in_flight is not None else 0)

    @property
    def total_queue_size(self) -> int:
        return sum(self.queue_size(b) for b in list(self._brokers))

    @property
    def broker_ids(self) -> list[int]:
        return sorted(self._brokers)

    def thread_for(self, broker_id: int) -> RequestSendThread | None:
        state = self._brokers.get(broker_id)
        return state.thread if state else None
