"""Where a broker finds the active controller (Kafka's ControllerNodeProvider).

The controller quorum's voters (controller.quorum.voters: ``{id: (host, port)}``), or, without
voters, controller.quorum.bootstrap.servers, are the candidates. One ``ControllerNodeProvider`` per
broker says which of them is believed active; every sender to the controller (the lifecycle's
registration and heartbeats, the ControllerLink's lanes, the AlterPartition manager, the producer
id manager) asks it before each request, through a ``ControllerClient`` of its own:

- the active controller's id is learned from the control requests it sends (UpdateMetadata and
  LeaderAndIsr carry its id and epoch; the highest epoch wins, as the controller epoch is the
  quorum's Raft epoch), or from the local RaftManager on a node that is a voter;
- a candidate that does not answer (connection refused or lost, no answer in time) or answers
  NOT_CONTROLLER is dropped as the active one and the next voter is tried, as Kafka's
  NodeToControllerRequestThread forgets the controller on a disconnect or NOT_CONTROLLER and
  asks again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from kafkalite.clients import BlockingClient
from kafkalite.clients.security import PLAINTEXT, ClientSecurity
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.error_counts import error_counts

log = logging.getLogger("kafkalite.server.controller_node")

NO_CONTROLLER = -1


class ControllerNode(NamedTuple):
    id: int  # -1: a bootstrap server whose node id is not known
    host: str
    port: int

    @property
    def address(self) -> tuple[str, int]:
        return self.host, self.port


class ControllerNodeProvider:
    """The controller believed active, among the voters (or bootstrap servers); thread safe."""

    def __init__(self, voters: Mapping[int, tuple[str, int]],
                 bootstrap_servers: Sequence[tuple[str, int]] = ()) -> None:
        if not voters and not bootstrap_servers:
            raise ValueError("no controller voters and no bootstrap servers")
        self._candidates = ([ControllerNode(i, h, p) for i, (h, p) in voters.items()] if voters
                            else [ControllerNode(NO_CONTROLLER, h, p) for h, p in bootstrap_servers])
        self._by_id = {c.id: c for c in self._candidates if c.id != NO_CONTROLLER}
        self._lock = threading.Lock()
        self._index = 0  # the candidate tried while the active one is not known
        self._active = NO_CONTROLLER
        self._epoch = -1  # the highest controller epoch learned

    @property
    def voters(self) -> dict[int, tuple[str, int]]:
        return {i: c.address for i, c in self._by_id.items()}

    @property
    def candidates(self) -> int:
        """How many controllers there are to try."""
        return len(self._candidates)

    @property
    def active_id(self) -> int:
        """The id of the controller believed active, -1 when it is not known."""
        return self._active

    @property
    def epoch(self) -> int:
        return self._epoch

    def current(self) -> ControllerNode:
        """The controller to send the next request to: the active one if known, else a candidate."""
        with self._lock:
            node = self._by_id.get(self._active)
            return node if node is not None else self._candidates[self._index]

    def learn(self, controller_id: int, controller_epoch: int) -> bool:
        """The controller ``controller_id`` is active in ``controller_epoch`` (a control request it
        sent, or the local quorum's leader); ignored for an older epoch. Whether it was taken."""
        with self._lock:
            if controller_epoch < self._epoch:
                return False
            changed = controller_id != self._active
            self._epoch = controller_epoch
            self._active = controller_id if controller_id in self._by_id else NO_CONTROLLER
            if self._active != NO_CONTROLLER:
                self._index = self._candidates.index(self._by_id[self._active])
        if changed:
            log.info("The active controller is now %d (epoch %d)", controller_id, controller_epoch)
        return True

    def failed(self, node: ControllerNode) -> None:
        """``node`` did not answer or is not the active controller: the next candidate is tried
        (nothing changes if another sender has moved on already)."""
        with self._lock:
            if node.id != NO_CONTROLLER and node.id == self._active:
                self._active = NO_CONTROLLER
            elif self._active != NO_CONTROLLER or self._candidates[self._index] != node:
                return
            position = self._candidates.index(node) if node in self._candidates else self._index
            self._index = (position + 1) % len(self._candidates)


def not_controller(api_key: int, version: int, response: Any) -> bool:
    """Whether a response says NOT_CONTROLLER anywhere (Kafka's check of errorCounts)."""
    return E.NOT_CONTROLLER in error_counts(api_key, version, response)


class ControllerClient:
    """One sender's connection to the active controller: a BlockingClient to the node the provider
    names, moved to the next voter on a failure or NOT_CONTROLLER. Used by one thread at a time."""

    def __init__(self, provider: ControllerNodeProvider, client_id: str, timeout: float,
                 security: ClientSecurity = PLAINTEXT) -> None:
        self.provider = provider
        self.client_id = client_id
        self.timeout = timeout
        self.security = security
        self._client: BlockingClient | None = None
        self._node: ControllerNode | None = None
        self._lock = threading.Lock()
        self._closed = False

    @property
    def node(self) -> ControllerNode:
        """The controller the last request went to (else the one the next goes to)."""
        return self._node or self.provider.current()

    def send_and_receive(self, api_key: int, version: int, body: Any, attempts: int | None = None) -> Any:
        """Send ``body`` to the controller believed active; on a connection failure or a
        NOT_CONTROLLER answer move on to the next one, up to ``attempts`` controllers (every
        candidate once by default). The last failure is raised, or the last NOT_CONTROLLER answer
        returned."""
        tries = attempts if attempts is not None else self.provider.candidates
        for attempt in range(max(1, tries)):
            node = self.provider.current()
            client = self._client_for(node)
            try:
                response = client.send_and_receive(api_key, version, body)
            except OSError as e:
                self.provider.failed(node)
                log.debug("%s: controller %d at %s:%d failed: %s", self.client_id, node.id, node.host,
                          node.port, e)
                if self._closed or attempt == tries - 1:
                    raise
                continue
            if not_controller(api_key, version, response):
                self.provider.failed(node)
                if attempt < tries - 1:
                    continue
            return response
        raise AssertionError("unreachable")

    def _client_for(self, node: ControllerNode) -> BlockingClient:
        with self._lock:
            if self._closed:
                raise ConnectionAbortedError(f"{self.client_id}: closed")
            client = self._client
            if client is None or self._node != node:
                if client is not None:
                    client.close()
                client = self._client = BlockingClient(node.host, node.port, self.client_id, self.timeout,
                                                       security=self.security)
                self._node = node
            return client

    def close(self) -> None:
        """Closes the connection (a blocked request fails at once); later requests fail."""
        with self._lock:
            self._closed = True
            client = self._client
        if client is not None:
            client.close()

    def disconnect(self) -> None:
        """Closes the connection; the next request opens a new one."""
        with self._lock:
            client = self._client
        if client is not None:
            client.close()


def as_provider(controller: ControllerNodeProvider | tuple[str, int]) -> ControllerNodeProvider:
    """A provider as is; one address as a provider of that one controller."""
    if isinstance(controller, ControllerNodeProvider):
        return controller
    return ControllerNodeProvider({}, [controller])


def active(controller: Any) -> Any:
    """The local controller while it is the active one (its node leads the quorum), else None:
    handlers act through it only then, and otherwise forward or answer NOT_CONTROLLER."""
    return controller if controller is not None and controller.is_active else None
