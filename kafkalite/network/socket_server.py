"""The SocketServer: per listener one Acceptor and its Processors, one RequestChannel per plane.

The control plane (control.plane.listener.name) has one Processor, its own request queue of 20
and (in the broker) one handler thread; it is started first so that the controller can always
reach the broker. Requests are read here and handed to whoever takes them from the channels: the
broker's handler pool, or a test acting as one.
"""

from __future__ import annotations

import logging
import ssl
import time
from collections.abc import Callable, Iterable

from kafkalite.common.endpoints import SASL_PROTOCOLS, TLS_PROTOCOLS, Endpoint
from kafkalite.metrics.components import socket_server_metrics
from kafkalite.metrics.registry import MetricsRegistry
from kafkalite.metrics.request_log import RequestLog
from kafkalite.protocol.schema import Versions

from .acceptor import Acceptor
from .memory_pool import MemoryPool
from .processor import Processor, ProcessorSettings
from .quotas import ConnectionQuotas
from .request_channel import RequestChannel
from .sasl import load_users
from .settings import SocketServerSettings
from .tls import server_context
from .turns import Turns

log = logging.getLogger("kafkalite.network.socket_server")

CONTROL_PLANE_QUEUE_SIZE = 20

# (listener name, privileged) -> {api key: versions served there}
ApiTable = Callable[[str, bool], dict[int, Versions]]


class SocketServer:
    def __init__(self, config: SocketServerSettings, apis_for: ApiTable,
                 request_log: RequestLog | None = None, metrics: MetricsRegistry | None = None) -> None:
        """``metrics``: the broker's registry: the SocketServer and its RequestChannels report
        there until ``shutdown``."""
        metrics = metrics or MetricsRegistry()
        self.config = config
        self.apis_for = apis_for
        # Processors and request handlers take turns at their Python work (see turns.py).
        self.turns = Turns()
        self.request_log = request_log  # the broker's (request.log.dir), given to every Processor
        self.quotas = ConnectionQuotas(
            config.max_connections, config.max_connections_per_ip,
            dict(config.max_connections_per_ip_overrides),
            protected_listener=config.inter_broker_listener_name if len(config.listeners) > 1 else None,
        )
        self.data_plane_request_channel = RequestChannel(config.queued_max_requests, "data-plane", metrics)
        # queued.max.request.bytes: one pool for the data plane's Processors (the control plane
        # has none, as in Kafka); -1, the default, counts nothing.
        pool_bytes = config.queued_max_request_bytes
        self.memory_pool: MemoryPool | None = MemoryPool(pool_bytes) if pool_bytes > 0 else None
        self.control_plane_listener = config.control_plane_listener_name
        self.control_plane_request_channel: RequestChannel | None = (
            RequestChannel(CONTROL_PLANE_QUEUE_SIZE, "control-plane", metrics)
            if self.control_plane_listener else None
        )
        self.acceptors: dict[str, Acceptor] = {}
        self.processors: list[Processor] = []
        self._next_processor_id = 0
        self._started = False
        # Loaded once, when the first listener that needs them is created.
        self._tls_context: ssl.SSLContext | None = None
        self._sasl_users: dict[str, str] | None = None
        self._metrics = metrics.register("socket-server", socket_server_metrics(self))

    # --- life cycle -------------------------------------------------------------------------

    def startup(self) -> None:
        """Bind every listener, then start the control plane first, then the data plane."""
        endpoints = sorted(self.config.listeners, key=lambda e: e.name != self.control_plane_listener)
        try:
            for endpoint in endpoints:
                self._create_listener(endpoint)
        except Exception:
            self.shutdown()
            raise
        for acceptor in self.acceptors.values():
            for p in acceptor.processors:
                p.start()
            acceptor.start()
        for acceptor in self.acceptors.values():
            acceptor.started.wait(5)
            for p in acceptor.processors:
                p.started.wait(5)
        self._started = True
        for endpoint in endpoints:
            a = self.acceptors[endpoint.name]
            log.info("Listening on %s://%s:%d (%s, %d processor%s)", endpoint.name, a.host, a.port,
                     "control plane" if endpoint.name == self.control_plane_listener else "data plane",
                     len(a.processors), "" if len(a.processors) == 1 else "s")

    def _create_listener(self, endpoint: Endpoint) -> None:
        cfg = self.config
        control = endpoint.name == self.control_plane_listener
        channel = self.control_plane_request_channel if control else self.data_plane_request_channel
        assert channel is not None
        privileged = endpoint.name == self.config.privileged_listener_name
        plane = "control-plane" if control else "data-plane"
        count = 1 if control else cfg.num_network_threads
        protocol = endpoint.security_protocol
        settings = ProcessorSettings(
            endpoint.name, protocol, self.apis_for(endpoint.name, privileged), privileged=privileged,
            max_request_size=cfg.socket_request_max_bytes,
            connections_max_idle_ms=cfg.connections_max_idle_ms,
            tls_context=self._tls() if protocol in TLS_PROTOCOLS else None,
            sasl_users=self._users() if protocol in SASL_PROTOCOLS else None,
            sasl_mechanisms=cfg.sasl_enabled_mechanisms,
            failed_authentication_delay_ms=cfg.failed_authentication_delay_ms,
        )
        pool = None if control else self.memory_pool  # the control plane's requests are not counted
        processors = []
        for _ in range(count):
            pid = self._next_processor_id
            self._next_processor_id += 1
            p = Processor(
                pid, settings, channel, self.quotas, turns=self.turns, request_log=self.request_log,
                memory_pool=pool,
                thread_name=f"{plane}-kafka-network-thread-{self.config.node_id}-{endpoint.name}-{protocol}-{pid}",
            )
            if pool is not None:
                pool.on_available.append(p.wakeup)
            channel.add_processor(p)
            processors.append(p)
            self.processors.append(p)
        self.acceptors[endpoint.name] = Acceptor(
            endpoint.name, endpoint.security_protocol, endpoint.host, endpoint.port, processors,
            self.quotas, plane=plane, send_buffer_bytes=cfg.socket_send_buffer_bytes,
            recv_buffer_bytes=cfg.socket_receive_buffer_bytes, backlog=cfg.socket_listen_backlog_size,
        )

    def _tls(self) -> ssl.SSLContext:
        if self._tls_context is None:
            self._tls_context = server_context(self.config.tls)
        return self._tls_context

    def _users(self) -> dict[str, str]:
        if self._sasl_users is None:
            assert self.config.sasl_plain_users_file is not None  # checked by the configuration
            self._sasl_users = load_users(self.config.sasl_plain_users_file)
        return self._sasl_users

    def bound_port(self, listener: str) -> int:
        return self.acceptors[listener].port

    def bound_address(self, listener: str) -> tuple[str, int]:
        a = self.acceptors[listener]
        return a.host, a.port

    @property
    def request_channels(self) -> list[RequestChannel]:
        channels = [self.data_plane_request_channel]
        if self.control_plane_request_channel is not None:
            channels.insert(0, self.control_plane_request_channel)
        return channels

    # --- faults a test injects (kafkalite.testing, server/faults/injector.py) ---------------------------

    def drop_connections(self, listeners: Iterable[str]) -> None:
        """Close every connection of these listeners now; they go on accepting."""
        for name in listeners:
            for p in self.acceptors[name].processors:
                p.drop_connections("dropped by an injected fault")

    def close_listener(self, name: str) -> None:
        """Stop accepting on ``name`` and close its socket and connections: to clients the broker
        is gone (connection refused) while its other listeners and threads go on."""
        acceptor = self.acceptors[name]
        acceptor.shutdown()
        for p in acceptor.processors:
            p.drop_connections("the listener was closed by an injected fault")

    def reopen_listener(self, name: str) -> None:
        """Bind ``name`` again on the port it had, with the same Processors."""
        old = self.acceptors[name]
        if old.is_alive():
            return
        cfg = self.config
        acceptor = Acceptor(
            old.listener, old.security_protocol, old.host, old.port, old.processors, self.quotas,
            plane=old.plane, send_buffer_bytes=cfg.socket_send_buffer_bytes,
            recv_buffer_bytes=cfg.socket_receive_buffer_bytes, backlog=cfg.socket_listen_backlog_size)
        self.acceptors[name] = acceptor
        acceptor.start()
        acceptor.started.wait(5)

    def stop_accepting(self) -> None:
        """First step of a graceful stop: no new connections, no new requests read."""
        for acceptor in self.acceptors.values():
            acceptor.shutdown()
        for p in self.processors:
            p.stop_reading()

    def wait_for_responses(self, timeout: float) -> bool:
        """Wait until every request taken has been answered (bounded); True if all were."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            busy = any(ch.request_queue_size for ch in self.request_channels) or any(
                p.inflight_responses or p.has_requests_with_handlers for p in self.processors)
            if not busy:
                return True
            time.sleep(0.01)
        return False

    def shutdown(self, timeout: float = 5.0) -> None:
        """Stop acceptors and processors, close every connection, join every thread."""
        for acceptor in self.acceptors.values():
            acceptor.shutdown(timeout)
        for p in self.processors:
            p.shutdown(timeout)
        self._metrics.close()
        for ch in self.request_channels:
            ch.clear()
            ch.close_metrics()
        stuck = [t.name for t in [*self.acceptors.values(), *self.processors] if t.is_alive()]
        if stuck:
            log.warning("Threads still alive after shutdown: %s", ", ".join(stuck))
