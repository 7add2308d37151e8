"""A broker's membership (the client side): register with the controller, then heartbeat.

The controller is found through controller.quorum.bootstrap.servers (host:port of its privileged
listener). Registration returns the broker epoch, which fences requests from older incarnations;
a heartbeat that the controller refuses (it restarted, or thinks the broker dead) makes the
broker register again and get a new epoch.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from typing import Any

from kafkalite.controller.network_client import BlockingClient
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import broker_heartbeat, broker_registration

from .listeners import SECURITY_PROTOCOL_IDS

log = logging.getLogger("kafkalite.server.lifecycle")

REGISTRATION_VERSION = 3
HEARTBEAT_VERSION = 1
RETRY = 0.1  # seconds between failed attempts


class BrokerLifecycleManager(threading.Thread):
    def __init__(self, node_id: int, cluster_id: str, controller: tuple[str, int],
                 endpoints: list[Any], rack: str | None, heartbeat_interval_ms: int,
                 on_registered: Callable[[int], None], timeout: float = 5.0) -> None:
        super().__init__(name=f"broker-{node_id}-lifecycle-manager", daemon=True)
        self.node_id = node_id
        self.cluster_id = cluster_id
        self.endpoints = endpoints
        self.rack = rack
        self.interval = heartbeat_interval_ms / 1000
        self.on_registered = on_registered
        self.client = BlockingClient(controller[0], controller[1], f"broker-{node_id}", timeout)
        self.incarnation = uuid.uuid4()
        self.broker_epoch = -1
        self.registered = threading.Event()
        self._stopping = threading.Event()

    def shutdown(self, timeout: float = 5.0) -> None:
        self._stopping.set()
        self.client.close()
        if self.is_alive():
            self.join(timeout)

    def run(self) -> None:
        while not self._stopping.is_set():
            try:
                if self.broker_epoch < 0:
                    self._register()
                else:
                    self._heartbeat()
            except Exception as e:
                log.debug("Broker %d cannot reach the controller: %s", self.node_id, e)
                self.client.close()
                self._stopping.wait(RETRY)

    def _register(self) -> None:
        R = broker_registration.REQUEST
        listeners = [R["listeners"](name=e.listener, host=e.host, port=e.port,
                                    security_protocol=SECURITY_PROTOCOL_IDS.get(e.security_protocol, 0))
                     for e in self.endpoints]
        request = R(broker_id=self.node_id, cluster_id=self.cluster_id, incarnation_id=self.incarnation,
                    listeners=listeners, features=[], rack=self.rack,
                    previous_broker_epoch=self.broker_epoch)
        response = self.client.send_and_receive(62, REGISTRATION_VERSION, request)
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
        request = broker_heartbeat.REQUEST(broker_id=self.node_id, broker_epoch=self.broker_epoch,
                                           current_metadata_offset=0, want_fence=False,
                                           want_shut_down=False)
        response = self.client.send_and_receive(63, HEARTBEAT_VERSION, request)
        if response.error_code != E.NONE:
            log.info("Broker %d: heartbeat refused (%s); registering again", self.node_id,
                     E.BY_CODE[response.error_code].name)
            self.broker_epoch = -1
            self.registered.clear()
            return
        self._stopping.wait(self.interval)
