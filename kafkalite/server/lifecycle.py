"""A broker's membership (the client side): register with the controller, then heartbeat.

The controller is found through the broker's ControllerNodeProvider (controller_node.py): the
voters of controller.quorum.voters (or controller.quorum.bootstrap.servers), the active one learned
from its control requests; a controller that does not answer or answers NOT_CONTROLLER makes the
next request go to the next voter.
Registration returns the broker epoch, which fences requests from older incarnations; a heartbeat
that the controller refuses (it restarted, or thinks the broker dead) makes the broker register
again and get a new epoch.

Controlled shutdown (KRaft's way): ``controlled_shutdown`` makes the heartbeats say
``want_shut_down``, sent every 50 ms from then on, until the controller answers
``should_shut_down`` (it has moved this broker's leaderships away) or the time given is up.

A broker that has never joined a cluster and has no cluster.id configured first asks the
controller's Metadata for the cluster id and adopts it (``on_cluster_id`` keeps it in
meta.properties). A broker of another cluster is refused with INCONSISTENT_CLUSTER_ID: that is not
worth retrying, so ``on_fatal`` gets one line naming both ids.

Each heartbeat (v1) names the broker's offline log dirs (``offline_log_dirs``: their
directory.id), as KRaft brokers do; a dir that fails sends a heartbeat at once
(``propagate_directory_failure``, Kafka's BrokerLifecycleManager.propagateDirectoryFailure). The
controller moves the leadership of the partitions on that dir away.
"""

from __future__ import annotations

import logging
import ssl
import threading
import uuid
from collections.abc import Callable
from typing import Any

from kafkalite.clients import AuthenticationError
from kafkalite.clients.security import PLAINTEXT, ClientSecurity
from kafkalite.common.endpoints import SECURITY_PROTOCOL_IDS
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import broker_heartbeat, broker_registration, metadata

from .controller_node import ControllerClient, ControllerNodeProvider, as_provider

log = logging.getLogger("kafkalite.server.lifecycle")

REGISTRATION_VERSION = 3
HEARTBEAT_VERSION = 1
METADATA_VERSION = 12
RETRY = 0.1  # seconds between failed attempts
AUTH_RETRY = 1.0  # seconds between attempts the controller refused to authenticate
SHUTDOWN_POLL = 0.05  # seconds between heartbeats that ask to shut down


class BrokerLifecycleManager(threading.Thread):
    def __init__(self, node_id: int, cluster_id: str | None,
                 controller: ControllerNodeProvider | tuple[str, int],
                 endpoints: list[Any], rack: str | None, heartbeat_interval_ms: int,
                 on_registered: Callable[[int], None], timeout: float = 5.0,
                 on_cluster_id: Callable[[str], None] = lambda _: None,
                 on_fatal: Callable[[str], None] = lambda _: None,
                 offline_log_dirs: Callable[[], list[uuid.UUID]] = lambda: [],
                 security: ClientSecurity = PLAINTEXT) -> None:
        super().__init__(name=f"broker-{node_id}-lifecycle-manager", daemon=True)
        self.node_id = node_id
        self.cluster_id = cluster_id
        self.endpoints = endpoints
        self.rack = rack
        self.interval = heartbeat_interval_ms / 1000
        self.on_registered = on_registered
        self.on_cluster_id = on_cluster_id
        self.on_fatal = on_fatal
        self.offline_log_dirs = offline_log_dirs
        self.client = ControllerClient(as_provider(controller), f"broker-{node_id}", timeout,
                                       security=security)
        self.incarnation = uuid.uuid4()
        self.broker_epoch = -1
        self.registered = threading.Event()
        self._stopping = threading.Event()
        self._want_shut_down = False
        self.shut_down_allowed = threading.Event()  # the controller answered should_shut_down
        self._wake = threading.Event()  # ends the wait between heartbeats early
        self._auth_failure = ""  # the last authentication failure logged

    def controlled_shutdown(self, timeout: float) -> bool:
        """Ask the controller to move this broker's leaderships; whether it said to go ahead
        within ``timeout`` seconds (not registered: nothing to move, True at once)."""
        if not self.registered.is_set() or not self.is_alive():
            return True
        self._want_shut_down = True
        self._wake.set()
        return self.shut_down_allowed.wait(timeout)

    def propagate_directory_failure(self) -> None:
        """Send the next heartbeat now: it names the dir that just failed."""
        self._wake.set()

    def shutdown(self, timeout: float = 5.0) -> None:
        self._stopping.set()
        self._wake.set()
        self.client.close()
        if self.is_alive():
            self.join(timeout)

    @property
    def controller(self) -> tuple[str, int]:
        """The address of the controller registrations and heartbeats go to now."""
        return self.client.node.address

    def run(self) -> None:
        while not self._stopping.is_set():
            try:
                if self.cluster_id is None:
                    self._adopt_cluster_id()
                elif self.broker_epoch < 0:
                    self._register()
                else:
                    self._heartbeat()
            except (AuthenticationError, ssl.SSLError) as e:
                # Wrong credentials or an untrusted certificate do not mend by retrying fast: said
                # once per distinct message (Kafka's NetworkClient logs an authentication failure,
                # TLS's included, at error level).
                if str(e) != self._auth_failure:
                    self._auth_failure = str(e)
                    log.error("Broker %d cannot register with the controller at %s:%d: %s",
                              self.node_id, *self.controller, e)
                self.client.disconnect()
                self._stopping.wait(AUTH_RETRY)
            except Exception as e:
                log.debug("Broker %d cannot reach the controller: %s", self.node_id, e)
                self.client.disconnect()
                self._stopping.wait(RETRY)

    def _controller_cluster_id(self) -> str | None:
        request = metadata.REQUEST(topics=[])
        response = self.client.send_and_receive(ApiKey.METADATA, METADATA_VERSION, request)
        return response.cluster_id

    def _adopt_cluster_id(self) -> None:
        cluster_id = self._controller_cluster_id()
        if cluster_id is None:
            self._stopping.wait(RETRY)
            return
        log.info("Broker %d joins cluster %s (the controller's at %s:%d)", self.node_id, cluster_id,
                 *self.controller)
        self.on_cluster_id(cluster_id)
        self.cluster_id = cluster_id

    def _register(self) -> None:
        R = broker_registration.REQUEST
        listeners = [R["listeners"](name=e.name, host=e.host, port=e.port,
                                    security_protocol=SECURITY_PROTOCOL_IDS.get(e.security_protocol, 0))
                     for e in self.endpoints]
        request = R(broker_id=self.node_id, cluster_id=self.cluster_id, incarnation_id=self.incarnation,
                    listeners=listeners, features=[], rack=self.rack,
                    previous_broker_epoch=self.broker_epoch)
        response = self.client.send_and_receive(ApiKey.BROKER_REGISTRATION, REGISTRATION_VERSION, request)
        if response.error_code == E.INCONSISTENT_CLUSTER_ID:
            theirs = self._controller_cluster_id()
            self._stopping.set()
            self.on_fatal(f"broker {self.node_id} belongs to cluster {self.cluster_id}, but the "
                          f"controller at {self.controller[0]}:{self.controller[1]} runs cluster "
                          f"{theirs}")
            return
        if response.error_code == E.NOT_CONTROLLER:  # no voter is active yet (an election)
            self._stopping.wait(RETRY)
            return
        if response.error_code != E.NONE:
            log.warning("Broker %d: registration refused (%s); retrying", self.node_id,
                        E.BY_CODE[response.error_code].name)
            self._stopping.wait(max(self.interval, RETRY))
            return
        self.broker_epoch = response.broker_epoch
        log.info("Broker %d registered with the controller, broker epoch %d", self.node_id,
                 self.broker_epoch)
        self.on_registered(self.broker_epoch)
        self.registered.set()

    def _heartbeat(self) -> None:
        want = self._want_shut_down
        request = broker_heartbeat.REQUEST(broker_id=self.node_id, broker_epoch=self.broker_epoch,
                                           current_metadata_offset=0, want_fence=False,
                                           want_shut_down=want, offline_log_dirs=self.offline_log_dirs())
        response = self.client.send_and_receive(ApiKey.BROKER_HEARTBEAT, HEARTBEAT_VERSION, request)
        if response.error_code == E.NOT_CONTROLLER:
            # No voter is active (an election): the epoch stays, the next active controller
            # knows it from the metadata log.
            self._stopping.wait(RETRY)
            return
        if response.error_code != E.NONE:
            log.info("Broker %d: heartbeat refused (%s); registering again", self.node_id,
                     E.BY_CODE[response.error_code].name)
            self.broker_epoch = -1
            self.registered.clear()
            return
        if want and response.should_shut_down and not self.shut_down_allowed.is_set():
            log.info("Broker %d: the controller has moved its leaderships; shutting down", self.node_id)
            self.shut_down_allowed.set()
        self._wake.wait(SHUTDOWN_POLL if want else self.interval)
        self._wake.clear()
