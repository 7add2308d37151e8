"""The SocketServer: per listener one Acceptor and its Processors, one RequestChannel per plane.

The control plane (control.plane.listener.name) has one Processor, its own request queue of 20
and (in the broker) one handler thread; it is started first so that the controller can always
reach the broker. Requests are read here and handed to whoever takes them from the channels: the
broker's handler pool, or a test acting as one.

Reconfigured live (common/reconfigurable.py; the broker's DynamicBrokerConfig calls it):
num.network.threads (and ``listener.name.<listener>.num.network.threads``) grows or shrinks each
data-plane listener's Processors, a removed one handing its connections to the others without
losing or reordering a request (processor.py: ``retire``); max.connections,
max.connections.per.ip and its overrides go to the ConnectionQuotas; the ssl.* key and trust
stores and sasl.enabled.mechanisms (also per listener) apply to the listener's next connections,
a key store file changed at the same path included. See docs/architecture.md.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kafkalite.common.config_def import view
from kafkalite.common.endpoints import SASL_PROTOCOLS, TLS_PROTOCOLS, Endpoint
from kafkalite.common.errors import ConfigError
from kafkalite.metrics.components import socket_server_metrics
from kafkalite.metrics.registry import MetricsRegistry
from kafkalite.metrics.request_log import RequestLog
from kafkalite.protocol.schema import Versions

from .acceptor import Acceptor
from .memory_pool import MemoryPool
from .principal import SslPrincipalMapper
from .processor import Processor, ProcessorSettings
from .quotas import ConnectionQuotas
from .request_channel import Request, RequestChannel, Response
from .sasl import CredentialCache, load_users
from .settings import NETWORK_SETTINGS, SocketServerSettings, TlsSettings
from .tls import TlsConfigError, check_key_store, key_store_identity, server_context
from .turns import Turns

log = logging.getLogger("kafkalite.network.socket_server")

CONTROL_PLANE_QUEUE_SIZE = 20

# (listener name, privileged) -> {api key: versions served there}
ApiTable = Callable[[str, bool], dict[int, Versions]]

NUM_NETWORK_THREADS = "num.network.threads"
QUOTA_CONFIGS = ("max.connections", "max.connections.per.ip", "max.connections.per.ip.overrides")
# What a TLS listener's SSLContext is made of (Kafka's SslConfigs.RECONFIGURABLE_CONFIGS and the
# protocol settings, per-broker in Kafka's DynamicBrokerConfig).
SSL_CONFIGS = (
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.certificate.chain", "ssl.keystore.key",
    "ssl.key.password", "ssl.truststore.type", "ssl.truststore.location",
    "ssl.truststore.certificates", "ssl.client.auth", "ssl.enabled.protocols",
)
SASL_CONFIGS = ("sasl.enabled.mechanisms",)
_ROWS = {s.name: s for s in NETWORK_SETTINGS}


def listener_prefix(listener: str) -> str:
    """Kafka's ListenerName.configPrefix: ``listener.name.<name in lower case>.``."""
    return f"listener.name.{listener.lower()}."


def listener_value(values: Mapping[str, Any], listener: str, name: str) -> Any:
    """``listener.name.<listener>.<name>`` if set (parsed by ``name``'s row), else ``name``'s value."""
    raw = values.get(listener_prefix(listener) + name)
    if raw is None:
        return values[name]
    return _ROWS[name].parse(raw)


def check_thread_count(name: str, old: int, new: Any) -> None:
    """Kafka's rule for a thread pool resized live (DataPlaneAcceptor, DynamicThreadPool): at
    least 1, at least half and at most double the current count."""
    if new == old:
        return
    why = f"Dynamic thread count update validation failed for {name}={new}"
    if new <= 0:
        raise ConfigError(f"{why}, value should be at least 1", name)
    if new < old // 2:
        raise ConfigError(f"{why}, value should be at least half the current value {old}", name)
    if new > old * 2:
        raise ConfigError(f"{why}, value should not be greater than double the current value {old}", name)


def _file_stamp(path: str | None) -> tuple[int, int, int] | None:
    """What tells a key or trust store file changed at the same path (Kafka's SslFactory looks at
    its last modification time): modification time, size and inode (a file replaced by rename)."""
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


def _sans(names: frozenset[tuple[str, str]]) -> str:
    return "[" + ", ".join(f"{kind}:{value}" for kind, value in sorted(names)) + "]"


def _tls_stamps(tls: TlsSettings) -> tuple[Any, ...]:
    return (_file_stamp(tls.keystore_location), _file_stamp(tls.truststore_location))


@dataclasses.dataclass
class _Listener:
    """What new Processors of a listener are made with (num.network.threads grown)."""

    endpoint: Endpoint
    plane: str
    channel: RequestChannel
    pool: MemoryPool | None
    settings: ProcessorSettings
    tls: TlsSettings | None = None  # TLS listeners: the settings their SSLContext was made from
    tls_stamps: tuple[Any, ...] = ()
    tls_identity: tuple[str, frozenset[tuple[str, str]]] | None = None  # its certificate's DN, SANs


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
        self._answer_here: Callable[[Request], Response | None] | None = None  # see answer_here
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
        self.processors: list[Processor] = []  # every running one, retiring ones included
        # Processors that left (num.network.threads lowered): their request metrics still count.
        self.retired_processors: list[Processor] = []
        self._listeners: dict[str, _Listener] = {}
        self._next_processor_id = 0
        self._lock = threading.RLock()  # reconfigurations, and the processors list they change
        self._started = False
        # Loaded once, when the first listener that needs them is created.
        self._tls_context: ssl.SSLContext | None = None
        self._sasl_users: dict[str, str] | None = None
        # SCRAM users, filled by the controller's pushes (server/handlers/scram.py).
        self.credentials = CredentialCache()
        self._metrics = metrics.register("socket-server", socket_server_metrics(self))
        self.reconfigurable_configs = self._reconfigurable_configs()

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
            sasl_mechanisms=tuple(self._static(endpoint.name, "sasl.enabled.mechanisms")),
            sasl_credentials=self.credentials,
            connections_max_reauth_ms=self._static(endpoint.name, "connections.max.reauth.ms"),
            principal_mapper=(SslPrincipalMapper(cfg.ssl_principal_mapping_rules)
                              if protocol in TLS_PROTOCOLS else None),
            failed_authentication_delay_ms=cfg.failed_authentication_delay_ms,
        )
        pool = None if control else self.memory_pool  # the control plane's requests are not counted
        listener = self._listeners[endpoint.name] = _Listener(endpoint, plane, channel, pool, settings)
        if protocol in TLS_PROTOCOLS:
            listener.tls, listener.tls_stamps = cfg.tls, _tls_stamps(cfg.tls)
            listener.tls_identity = key_store_identity(cfg.tls)
        processors = [self._new_processor(listener) for _ in range(count)]
        self.acceptors[endpoint.name] = Acceptor(
            endpoint.name, endpoint.security_protocol, endpoint.host, endpoint.port, processors,
            self.quotas, plane=plane, send_buffer_bytes=cfg.socket_send_buffer_bytes,
            recv_buffer_bytes=cfg.socket_receive_buffer_bytes, backlog=cfg.socket_listen_backlog_size,
        )

    def answer_here(self, handle: Callable[[Request], Response | None]) -> None:
        """Let every Processor, now and later, answer the requests that need no handler
        (processor.ANSWERED_HERE) itself with ``handle`` (the broker's KafkaApis.handle_here)."""
        with self._lock:
            self._answer_here = handle
            for p in self.processors:
                p.answer_here = handle

    def _new_processor(self, listener: _Listener) -> Processor:
        """A Processor for ``listener``, with the next id, registered with its RequestChannel."""
        pid = self._next_processor_id
        self._next_processor_id += 1
        endpoint = listener.endpoint
        p = Processor(
            pid, listener.settings, listener.channel, self.quotas, turns=self.turns,
            request_log=self.request_log, memory_pool=listener.pool,
            thread_name=(f"{listener.plane}-kafka-network-thread-{self.config.node_id}-{endpoint.name}-"
                         f"{endpoint.security_protocol}-{pid}"),
        )
        p.answer_here = self._answer_here
        if listener.pool is not None:
            listener.pool.on_available.append(p.wakeup)
        listener.channel.add_processor(p)
        self.processors.append(p)
        return p

    def _tls(self) -> ssl.SSLContext:
        if self._tls_context is None:
            self._tls_context = server_context(self.config.tls)
        return self._tls_context

    def _static(self, listener: str, name: str) -> Any:
        """A setting as configured at startup, ``listener.name.<listener>.<name>`` first."""
        cfg = self.config
        values = {"sasl.enabled.mechanisms": cfg.sasl_enabled_mechanisms,
                  "connections.max.reauth.ms": cfg.connections_max_reauth_ms}
        return cfg.listener_overrides.get(listener_prefix(listener) + name, values[name])

    def _users(self) -> dict[str, str]:
        if self._sasl_users is None:
            path = self.config.sasl_plain_users_file  # required by the configuration with PLAIN
            self._sasl_users = load_users(path) if path is not None else {}
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
        names = set(listeners)
        for p in list(self.processors):
            if p.listener in names:
                p.drop_connections("dropped by an injected fault")

    def close_listener(self, name: str) -> None:
        """Stop accepting on ``name`` and close its socket and connections: to clients the broker
        is gone (connection refused) while its other listeners and threads go on."""
        acceptor = self.acceptors[name]
        acceptor.shutdown()
        for p in list(self.processors):
            if p.listener == name:
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
        with self._lock:
            processors = [*self.processors, *self.retired_processors]
        for p in processors:
            p.shutdown(timeout)
        self._metrics.close()
        for ch in self.request_channels:
            ch.clear()
            ch.close_metrics()
        stuck = [t.name for t in [*self.acceptors.values(), *processors] if t.is_alive()]
        if stuck:
            log.warning("Threads still alive after shutdown: %s", ", ".join(stuck))

    # --- live reconfiguration (common/reconfigurable.py) -------------------------------------------

    @property
    def data_plane_listeners(self) -> list[str]:
        return [name for name in self.acceptors if name != self.control_plane_listener]

    def _reconfigurable_configs(self) -> frozenset[str]:
        """The settings applied live: thread counts and limits, and each TLS or SASL listener's
        security settings, also as ``listener.name.<listener>.<setting>``."""
        names = {NUM_NETWORK_THREADS, *QUOTA_CONFIGS}
        for e in self.config.listeners:
            prefix = listener_prefix(e.name)
            own = []
            if e.name != self.control_plane_listener:
                own.append(NUM_NETWORK_THREADS)
            if e.security_protocol in TLS_PROTOCOLS:
                own += SSL_CONFIGS
            if e.security_protocol in SASL_PROTOCOLS:
                own += SASL_CONFIGS
            names.update(own)
            names.update(prefix + c for c in own)
        return frozenset(names)

    def processor_count(self, listener: str) -> int:
        """The listener's Processors taking connections (retiring ones not counted)."""
        return len(self.acceptors[listener].processors)

    def validate_reconfiguration(self, new: Mapping[str, Any]) -> None:
        """ConfigError naming the setting if ``new`` cannot be applied: a thread count outside
        Kafka's half/double rule, max.connections.per.ip 0 without overrides, a key or trust
        store that does not load."""
        with self._lock:
            for name in self.data_plane_listeners:
                prefixed = listener_prefix(name) + NUM_NETWORK_THREADS
                setting = prefixed if new.get(prefixed) is not None else NUM_NETWORK_THREADS
                check_thread_count(setting, self.processor_count(name),
                                   listener_value(new, name, NUM_NETWORK_THREADS))
            if new["max.connections.per.ip"] == 0 and not new["max.connections.per.ip.overrides"]:
                raise ConfigError("max.connections.per.ip can be set to zero only if "
                                  "max.connections.per.ip.overrides is set", "max.connections.per.ip")
            for name, listener in self._listeners.items():
                if listener.tls is None:
                    continue
                tls = self._tls_settings(new, name)
                if tls != listener.tls or _tls_stamps(tls) != listener.tls_stamps:
                    try:
                        check_key_store(tls)
                        server_context(tls)
                        self._check_compatible(name, listener, tls, new)
                    except TlsConfigError as e:
                        prefixed = listener_prefix(name) + e.setting  # the name the change used
                        setting = prefixed if new.get(prefixed) is not None else e.setting
                        raise ConfigError(f"Validation of dynamic config update of SSLFactory failed "
                                          f"for listener {name}: {e}", setting) from None

    @staticmethod
    def _check_compatible(name: str, listener: _Listener, tls: TlsSettings, new: Mapping[str, Any]) -> None:
        """Kafka's SslFactory checks of a new key and trust store: no trust store added where there
        was none, and the certificate keeps its distinguished name and subject alternative names
        unless ssl.allow.dn.changes / ssl.allow.san.changes."""
        assert listener.tls is not None
        had_trust = (listener.tls.truststore_location, listener.tls.truststore_certificates) != (None, None)
        if not had_trust and (tls.truststore_location, tls.truststore_certificates) != (None, None):
            raise TlsConfigError("Cannot add SSL truststore to an existing listener for which no "
                                 "truststore was configured.", "ssl.truststore.location")
        old, now = listener.tls_identity, key_store_identity(tls)
        if old is None or now is None:
            return
        setting = ("ssl.keystore.location" if tls.keystore_location is not None
                   else "ssl.keystore.certificate.chain")
        if not listener_value(new, name, "ssl.allow.dn.changes") and old[0].lower() != now[0].lower():
            raise TlsConfigError(f"Keystore DistinguishedName does not match:  existing={{alias=kafka, "
                                 f"DN={old[0]}}}, new={{alias=kafka, DN={now[0]}}}", setting)
        if not listener_value(new, name, "ssl.allow.san.changes") and not old[1] <= now[1]:
            raise TlsConfigError(f"Keystore SubjectAltNames do not match:  existing={{alias=kafka, "
                                 f"SAN={_sans(old[1])}}}, new={{alias=kafka, SAN={_sans(now[1])}}}", setting)

    def reconfigure(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        """Apply ``new`` (validated): thread counts, connection limits, security settings."""
        del old  # the current state is this SocketServer's own
        with self._lock:
            self.quotas.update(new["max.connections"], new["max.connections.per.ip"],
                               dict(new["max.connections.per.ip.overrides"]))
            for name, listener in self._listeners.items():
                self._reconfigure_security(name, listener, new)
            for name in self.data_plane_listeners:
                self.resize_processors(name, listener_value(new, name, NUM_NETWORK_THREADS))

    def _tls_settings(self, values: Mapping[str, Any], listener: str) -> TlsSettings:
        merged = {name: listener_value(values, listener, name) for name in SSL_CONFIGS}
        return view(TlsSettings, merged)

    def _reconfigure_security(self, name: str, listener: _Listener, new: Mapping[str, Any]) -> None:
        """New TLS and SASL settings for the listener's next connections; open ones go on as they are."""
        settings = listener.settings
        if listener.settings.sasl_users is not None:
            mechanisms = tuple(listener_value(new, name, "sasl.enabled.mechanisms"))
            if mechanisms != settings.sasl_mechanisms:
                settings = dataclasses.replace(settings, sasl_mechanisms=mechanisms)
        if listener.tls is not None:
            tls = self._tls_settings(new, name)
            stamps = _tls_stamps(tls)
            if tls != listener.tls or stamps != listener.tls_stamps:
                try:
                    context = server_context(tls)
                except TlsConfigError as e:  # changed since it was validated: keep the old one
                    log.error("Listener %s keeps its key store: %s", name, e)
                else:
                    settings = dataclasses.replace(settings, tls_context=context)
                    listener.tls, listener.tls_stamps = tls, stamps
                    listener.tls_identity = key_store_identity(tls)
                    log.info("Listener %s: new SSL connections use the key store %s", name,
                             tls.keystore_location or "ssl.keystore.key")
        if settings is not listener.settings:
            listener.settings = settings
            for p in self.processors:
                if p.listener == name:
                    p.settings = settings  # read when each new connection is registered

    def resize_processors(self, listener_name: str, count: int) -> None:
        """Kafka's Acceptor reconfigure: new Processors (next ids) started and taking connections,
        or the last ones retired: they stop taking connections and hand theirs to the others as
        each goes quiet (processor.py: ``retire``), and leave. Returns at once; a retiring
        Processor's thread ends when its last connection has moved."""
        with self._lock:
            acceptor = self.acceptors[listener_name]
            listener = self._listeners[listener_name]
            current = len(acceptor.processors)
            if count == current:
                return
            log.info("Resizing network thread pool size for %s listener from %d to %d",
                     listener_name, current, count)
            if count > current:
                added = [self._new_processor(listener) for _ in range(count - current)]
                for p in added:
                    p.start()
                for p in added:
                    p.started.wait(5)
                acceptor.add_processors(added)
                return
            def successors() -> list[Processor]:  # the listener's Processors at each hand-off
                return list(acceptor.processors)

            for p in acceptor.remove_processors(current - count):
                p.retire(successors, self._retired)

    def _retired(self, processor: Processor) -> None:
        """A retiring Processor's last step, on its thread: it leaves the books."""
        with self._lock:
            processor.request_channel.remove_processor(processor.id)
            pool = processor.memory_pool
            if pool is not None:  # a new list: the pool may be iterating the old one
                pool.on_available = [w for w in pool.on_available if w != processor.wakeup]
            if processor in self.processors:
                self.processors.remove(processor)
                self.retired_processors.append(processor)
