"""A Processor thread (Kafka's SocketServer.Processor).

Each Processor owns a selector, its connections (a KafkaChannel each, channel.py) and a deque of
responses that handler threads fill. Only this thread touches its sockets: it reads them and
gives the bytes to the channels, and writes what the channels have queued; the channels do the
rest (TLS, frames, the mute state, SASL state) without I/O. Other threads hand it new connections
(bounded queue) and responses (deque) and wake it through an eventfd (waker.py). The loop runs Kafka's
steps in Kafka's order:

    configure_new_connections, process_new_responses, poll, process_completed_receives,
    process_completed_sends, process_disconnected, close_excess_connections

An error in any step for one connection closes that connection only; the Processor lives on.

A Processor leaves a listener that has fewer network threads (``retire``) without closing a
connection: it reads no new requests, lets each connection's request with the handlers be
answered and its response sent, and then hands the connection as it is (a KafkaChannel: socket,
requests read but not handed over, the frame begun, TLS and SASL state) to one of the listener's
remaining Processors (``adopt``), which goes on where it stopped. When it holds none the thread
ends. See docs/architecture.md ("Resizing the network threads").
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import logging
import os
import queue
import selectors
import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping, Sequence

from kafkalite.common.config_def import fields_from
from kafkalite.common.file_slice import FileSlice
from kafkalite.metrics.request_log import RequestLog
from kafkalite.metrics.request_metrics import RequestMetrics
from kafkalite.protocol import (
    DecodeError,
    ProtocolError,
    UnsupportedVersion,
    decode_request,
    decode_request_header,
    encode_response,
    peek_api,
)
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.schema import Versions

from .channel import KafkaChannel
from .memory_pool import MemoryPool
from .mute import (
    ON_AUTHENTICATION_FAILED,
    ON_REQUEST,
    ON_RESPONSE_SENT,
    ON_THROTTLE_ENDED,
    ON_THROTTLE_STARTED,
    MuteState,
)
from .principal import SslPrincipalMapper
from .quotas import ConnectionQuotas
from .request_channel import (
    NO_ERROR_COUNTS,
    CloseConnectionResponse,
    EndThrottlingResponse,
    NoOpResponse,
    Request,
    RequestChannel,
    Response,
    SendResponse,
    StartThrottlingResponse,
)
from .sasl import CredentialCache, IllegalSaslState, SaslAuthenticator, SaslSettings, Step
from .settings import NETWORK_SETTINGS
from .tls import TlsTransport
from .turns import Turns
from .waker import Waker

log = logging.getLogger("kafkalite.network.processor")

CONNECTION_QUEUE_SIZE = 20  # Kafka's ConnectionQueueSize
POLL_TIMEOUT = 0.3  # seconds, as Kafka's 300 ms
READ_SIZE = 65536
API_VERSIONS = ApiKey.API_VERSIONS
SASL_HANDSHAKE = ApiKey.SASL_HANDSHAKE
NOT_MUTED = MuteState.NOT_MUTED
# Requests answered on the Processor when the broker gives it a handler for them
# (``answer_here``): they need nothing of the handlers' state (ApiVersions' answer depends on
# the listener and version alone), so the hand-over to a handler thread and back, two thread
# switches, would be all their cost. Kafka 4 answers its own few network-layer requests there too.
ANSWERED_HERE = frozenset({ApiKey.API_VERSIONS})
EVENT_READ, EVENT_WRITE = selectors.EVENT_READ, selectors.EVENT_WRITE

_setting = fields_from(NETWORK_SETTINGS)  # a field whose default is the setting's


@dataclasses.dataclass(frozen=True, slots=True)
class ProcessorSettings:
    """What the Processors of one listener are told, from the broker's settings."""

    listener: str
    security_protocol: str
    # Api keys and versions served on this listener; anything else closes the connection.
    apis: Mapping[int, Versions]
    privileged: bool = False  # serves the controller's requests (LeaderAndIsr, ...)
    max_request_size: int = _setting("socket.request.max.bytes")
    connections_max_idle_ms: int = _setting("connections.max.idle.ms")
    # SSL and SASL_* listeners: every connection gets TLS state and/or a SASL authenticator.
    tls_context: ssl.SSLContext | None = None
    sasl_users: Mapping[str, str] | None = None
    sasl_mechanisms: tuple[str, ...] = _setting("sasl.enabled.mechanisms", tuple)
    # SCRAM users (the controller's pushes fill it) and KIP-368's connections.max.reauth.ms.
    sasl_credentials: CredentialCache | None = None
    connections_max_reauth_ms: int = _setting("connections.max.reauth.ms")
    # ssl.principal.mapping.rules for TLS client certificates (None: DEFAULT, the subject as it is).
    principal_mapper: SslPrincipalMapper | None = None
    failed_authentication_delay_ms: int = _setting("connection.failed.authentication.delay.ms")


class Processor(threading.Thread):
    def __init__(
        self,
        processor_id: int,
        settings: ProcessorSettings,
        request_channel: RequestChannel,
        quotas: ConnectionQuotas,
        *,
        turns: Turns | None = None,
        request_log: RequestLog | None = None,
        memory_pool: MemoryPool | None = None,
        thread_name: str | None = None,
    ) -> None:
        super().__init__(name=thread_name or f"kafka-network-thread-{settings.listener}-{processor_id}",
                         daemon=True)
        self.id = processor_id
        self.settings = settings
        self.listener = settings.listener
        self.request_channel = request_channel
        self.quotas = quotas
        self.turns = turns or Turns()  # held while running, given up to block (see turns.py)
        self.request_log = request_log  # request.log.dir: a line per completed request
        # The broker's handler for ANSWERED_HERE (KafkaApis.handle_here): a response, or None
        # to hand the request over as any other (a test's faults are active). None: all go over.
        self.answer_here: Callable[[Request], Response | None] | None = None
        # queued.max.request.bytes (data plane only, as in Kafka); None: nothing counted.
        self.memory_pool = memory_pool
        self._memory_muted: list[KafkaChannel] = []  # stopped reading while the pool was empty
        self.idle_ns = settings.connections_max_idle_ms * 1_000_000
        self.failed_auth_delay_ns = settings.failed_authentication_delay_ms * 1_000_000
        # Failed authentications waiting out the delay: (due ns, connection, answer or None).
        self._auth_failures: list[tuple[int, KafkaChannel, SendResponse | None]] = []
        self._has_turn = False

        # New sockets with the peer's IP (counted in the quotas under that IP).
        self.new_connections: queue.Queue[tuple[socket.socket, str]] = queue.Queue(
            CONNECTION_QUEUE_SIZE)
        self._responses: collections.deque[Response] = collections.deque()
        self._selector = selectors.DefaultSelector()
        self._waker = Waker()
        # Wake-ups: the waker written only when the loop is blocked in (or entering) its
        # poll, and one byte until the loop drains it. A busy loop takes new responses and
        # connections before its next poll anyway (see poll and _drain_wakeups for the order).
        self._polling = False
        self._woken = False
        self._wake_handler = False  # requests handed over since the last poll
        self._selector.register(self._waker, EVENT_READ, None)

        self.connections: dict[str, KafkaChannel] = {}
        # Unmuted connections holding whole requests not yet handed over: the only ones the loop
        # looks at for buffered work, so that a poll costs nothing per idle or muted connection.
        self._ready: dict[KafkaChannel, None] = {}
        self._now = time.monotonic_ns()  # the clock, read once per poll
        self._next_idle_check = 0
        self._inflight: dict[str, SendResponse] = {}
        self._completed_receives: list[tuple[KafkaChannel, bytearray]] = []
        self._completed_sends: list[KafkaChannel] = []
        self._disconnected: list[tuple[KafkaChannel, str]] = []
        self._drop_why: str | None = None  # set by another thread: close every connection (drop_connections)
        self._index = itertools.count()
        self._running = True
        self._accepting_requests = True
        # Leaving the listener (retire): where its connections go (the listener's Processors
        # then), told when it has none left, and those handed to it by a retiring one.
        self._successors: Callable[[], Sequence[Processor]] | None = None
        self._on_retired: Callable[[Processor], None] | None = None
        self._next_successor = 0
        self._adopted: collections.deque[KafkaChannel] = collections.deque()
        self._adopt_lock = threading.Lock()
        self._ended = False  # takes no more connections (adopt refuses)
        self.connections_handed_off = 0
        self.connections_adopted = 0
        self.started = threading.Event()
        # Counters read by metrics and tests (written by this thread only).
        self.idle_ns_total = 0
        self.expired_connections_killed = 0
        self.failed_authentications = 0
        self.successful_authentications = 0
        self.successful_reauthentications = 0
        self.expired_connections_killed = 0  # Kafka's expired-connections-killed-count (KIP-368)
        # Requests handed to the handlers and answers taken back.
        self.requests_handed_over = 0
        self.answers_taken = 0
        self.connections_created = 0
        self.connections_closed = 0
        # Kafka's RequestMetrics for the requests this Processor completes (its own shard).
        self.request_metrics = RequestMetrics()

    # --- called from other threads ------------------------------------------------------------

    def accept(self, sock: socket.socket, ip: str, may_block: bool) -> bool:
        """Queue a new connection; with ``may_block`` wait for room (the Acceptor's last try)."""
        while True:
            try:
                self.new_connections.put((sock, ip), block=may_block, timeout=POLL_TIMEOUT)
                break
            except queue.Full:
                if not may_block or not self._running:
                    return False
        self.wakeup()
        return True

    def wait_for_room(self, timeout: float) -> None:
        """Wait (at most ``timeout``) until the new-connection queue has room or the thread stops."""
        q = self.new_connections
        with q.not_full:
            if len(q.queue) >= q.maxsize and self._running:
                q.not_full.wait(timeout)

    @property
    def is_running(self) -> bool:
        return self._running

    def enqueue_responses(self, responses: list[Response]) -> None:
        """Responses from one handler batch: one hand-off and at most one wake-up."""
        now = time.monotonic_ns()
        for response in responses:
            response.request.response_enqueue_ns = now
        self._responses.extend(responses)
        self.wakeup()

    def wakeup(self) -> None:
        if self._polling and not self._woken:
            self._woken = True
            self._waker.wake()

    def drop_connections(self, why: str) -> None:
        """Close every connection at the loop's next turn (a fault a test injects: clients see
        their connections cut and reconnect); the listener goes on accepting."""
        self._drop_why = why
        self.wakeup()

    def stop_reading(self) -> None:
        """Hand no more requests over (graceful shutdown); responses still go out."""
        self._accepting_requests = False
        self.wakeup()

    def retire(self, successors: Callable[[], Sequence[Processor]],
               on_retired: Callable[[Processor], None] | None = None) -> None:
        """Leave the listener without closing a connection: read no more requests, and hand each
        connection, once its request with the handlers is answered and the response sent, to one
        of ``successors()`` (asked at each hand-off: the listener's Processors then); the thread
        ends when none is left and calls ``on_retired``. The Acceptor must have stopped giving it
        connections first."""
        self._successors = successors
        self._on_retired = on_retired
        self._accepting_requests = False
        self.wakeup()

    @property
    def retiring(self) -> bool:
        return self._successors is not None

    def adopt(self, conn: KafkaChannel) -> bool:
        """Take over a connection a retiring Processor hands over (quiet: nothing with the
        handlers, nothing being sent); False if this one has ended."""
        with self._adopt_lock:
            if self._ended:
                return False
            self._adopted.append(conn)
        self.wakeup()
        return True

    def shutdown(self, timeout: float = 5.0) -> None:
        self._running = False
        self.wakeup()
        if self.is_alive():
            self.join(timeout)

    @property
    def response_queue_size(self) -> int:
        return len(self._responses)

    @property
    def has_requests_with_handlers(self) -> bool:
        return self.requests_handed_over > self.answers_taken

    @property
    def inflight_responses(self) -> int:
        return len(self._inflight) + len(self._responses)

    # --- the loop ---------------------------------------------------------------------------

    def run(self) -> None:
        self.started.set()
        self._take_turn()
        try:
            while self._running:
                try:
                    self.configure_new_connections()
                    self.process_new_responses()
                    if self._completed_sends:
                        # Responses the socket took whole: their connections unmute now, so
                        # that the poll below may block (one loop a request fewer).
                        self.process_completed_sends()
                    if self._auth_failures:
                        self.complete_failed_authentications()
                    if self._successors is not None:  # retiring: connections that went quiet leave
                        self.hand_off_connections()
                    self.poll()
                    self.process_completed_receives()
                    pool = self.memory_pool
                    if self._memory_muted and pool is not None and not pool.out_of_memory:
                        self._unmute_for_memory()
                    self.process_completed_sends()
                    self.process_disconnected()
                    self.close_excess_connections()
                except Exception:
                    log.exception("Processor %d got an unexpected error", self.id)
        finally:
            with self._adopt_lock:
                self._ended = True
            self._close_all()
            self._give_turn()
            if self._on_retired is not None:
                self._on_retired(self)

    def configure_new_connections(self) -> None:
        if self._drop_why is not None:
            why, self._drop_why = self._drop_why, None
            for conn in list(self.connections.values()):
                self._close(conn, why)
        if self._adopted:
            self._take_adopted()
        if not self.new_connections.queue:  # (no lock for the common case: nothing new)
            return
        for _ in range(CONNECTION_QUEUE_SIZE):  # at most 20 per iteration, as Kafka
            try:
                sock, ip = self.new_connections.get_nowait()
            except queue.Empty:
                return
            try:
                self._register(sock)
            except Exception as e:
                log.warning("Processor %d could not register a connection from %s: %s", self.id, ip, e)
                self._close_raw(sock)
                self.quotas.dec(self.listener, ip)

    def _sasl_settings(self) -> SaslSettings:
        s = self.settings
        assert s.sasl_users is not None
        return SaslSettings(s.sasl_mechanisms, s.sasl_users, s.sasl_credentials, s.connections_max_reauth_ms)

    def _register(self, sock: socket.socket) -> None:
        s = self.settings
        local = sock.getsockname()[:2]
        remote = sock.getpeername()[:2]
        # Kafka's connection id: localIp:localPort-remoteIp:remotePort-processorId-index.
        conn_id = f"{local[0]}:{local[1]}-{remote[0]}:{remote[1]}-{self.id}-{next(self._index)}"
        conn = KafkaChannel(
            sock, conn_id, remote[0], s.max_request_size,
            tls=TlsTransport(s.tls_context) if s.tls_context is not None else None,
            sasl=SaslAuthenticator(self._sasl_settings()) if s.sasl_users is not None else None,
            counts_memory=self.memory_pool is not None, principal_mapper=s.principal_mapper,
        )
        conn.last_active = time.monotonic_ns()
        self.connections[conn_id] = conn
        self.connections_created += 1
        self._set_interest(conn, EVENT_READ)

    def process_new_responses(self) -> None:
        responses = self._responses
        now = time.monotonic_ns()
        connections = self.connections
        while responses:
            response = responses.popleft()
            request = response.request
            request.response_dequeue_ns = now
            conn = connections.get(request.connection_id)
            kind = type(response)
            if kind is not StartThrottlingResponse and kind is not EndThrottlingResponse:
                self.answers_taken += 1
            if conn is None:
                log.debug("Processor %d: connection %s is gone, dropping its response",
                          self.id, request.connection_id)
                continue
            try:
                if kind is SendResponse:  # the common case, without a match
                    self._inflight[conn.id] = response  # type: ignore[assignment]
                    conn.write(response.payload)  # type: ignore[attr-defined]
                    self._write(conn)
                else:
                    self._handle_response(conn, response)
            except Exception as e:
                self._close(conn, f"error while processing a response: {e!r}")

    def _handle_response(self, conn: KafkaChannel, response: Response) -> None:
        # The rest of the closed family of responses (SendResponse is written by the caller).
        match response:
            case NoOpResponse():
                self._completed(response.request, 0, 0, NO_ERROR_COUNTS, time.monotonic_ns())
                if conn.handle(ON_RESPONSE_SENT) is NOT_MUTED:
                    self._unmuted(conn)
            case CloseConnectionResponse():
                self._completed(response.request, 0, 0, NO_ERROR_COUNTS, time.monotonic_ns())
                self._close(conn, "the request handler asked to close it")
            case StartThrottlingResponse():
                conn.handle(ON_THROTTLE_STARTED)
            case EndThrottlingResponse():
                if conn.handle(ON_THROTTLE_ENDED) is NOT_MUTED:
                    self._unmuted(conn)
            case _:
                raise TypeError(f"unknown response kind {type(response).__name__}")

    def _write(self, conn: KafkaChannel) -> None:
        """The one write path: write what the channel has queued, part after part, as much as
        the socket takes now; the rest goes when the socket turns writable (poll). Bytes go with
        send, FileSlices (Fetch records) with sendfile straight from their file (Kafka's
        FileRecords.transferTo), never through Python."""
        sock = conn.sock
        buffer = conn.send_buffer
        while buffer is not None:
            try:
                if type(buffer) is FileSlice:
                    sent = os.sendfile(sock.fileno(), buffer.fd, buffer.position, buffer.size)
                    if not sent:  # the end of the file came first: it was truncated under us
                        self._close(conn, f"its response's records file ended {buffer.size} bytes "
                                          "short (truncated during the send)", level=logging.WARNING)
                        return
                    whole = sent == buffer.size
                else:
                    sent = sock.send(buffer)
                    whole = sent == len(buffer)
            except (BlockingIOError, InterruptedError):
                sent, whole = 0, False
            except OSError as e:
                if type(buffer) is FileSlice and not isinstance(e, ConnectionError):
                    # The file's side failed, not the peer's.
                    self._close(conn, f"could not send records from their file: {e}",
                                level=logging.WARNING)
                else:
                    self._send_failed(conn, e)
                return
            if conn.sent(sent):
                self._completed_sends.append(conn)
            if not whole:
                break  # the socket is full: the rest when it turns writable
            buffer = conn.send_buffer
        conn.last_active = self._now
        if conn.send_buffer is None:
            if conn.events & EVENT_WRITE:
                self._set_interest(conn, conn.events & ~EVENT_WRITE)
        elif not conn.events & EVENT_WRITE:
            self._set_interest(conn, conn.events | EVENT_WRITE)

    def _send_failed(self, conn: KafkaChannel, error: OSError) -> None:
        if conn.drop_send() and conn.pending:
            # The peer is gone (a muted connection may not have read its FIN yet) but had sent
            # more requests: they are still handed over, as in Kafka's graceful close; this
            # response has nobody to go to.
            conn.closing = True
            self._set_interest(conn, conn.events & ~EVENT_WRITE)
            self._completed_sends.append(conn)
        else:
            self._disconnected.append((conn, f"send failed: {error}"))

    def _poll_timeout(self) -> float:
        # Called with _polling set: whatever another thread queued before seeing the flag is seen
        # here, and whatever it queues after is announced by a wake-up.
        if self._responses or not self._running or self._drop_why is not None or self._adopted:
            return 0.0
        # (A look at the Queue's deque, without its lock: only this thread takes from it.)
        if self.new_connections.queue or self._completed_sends or self._disconnected:
            # Completed sends unmute connections after this poll, and those may hold whole
            # requests already read: no socket event would end a blocking poll for them.
            return 0.0
        if self._accepting_requests and self._ready:
            return 0.0  # whole requests already buffered: no socket event will announce them
        if self._auth_failures:
            due = min(f[0] for f in self._auth_failures)
            return max(0.0, min(POLL_TIMEOUT, (due - time.monotonic_ns()) / 1e9))
        return POLL_TIMEOUT

    def poll(self) -> None:
        if self._wake_handler:
            self._wake_handler = False
            self.request_channel.wake_handler()
        self._polling = True
        timeout = self._poll_timeout()
        start = time.monotonic_ns()
        self._give_turn()
        try:
            events = self._selector.select(timeout)
        finally:
            self._take_turn()
        self._polling = False
        self._now = now = time.monotonic_ns()
        self.idle_ns_total += now - start
        connections = self.connections
        for key, mask in events:
            conn = key.data
            if conn is None:
                self._drain_wakeups()
                continue
            if conn.id not in connections:
                continue
            try:
                if mask & EVENT_WRITE and conn.send_buffer is not None:
                    self._write(conn)
                if mask & EVENT_READ and conn.id in connections:
                    pool = self.memory_pool
                    if pool is not None and pool.out_of_memory and not conn.held_partial:
                        # Kafka's Selector: no memory for a new request, so no reading, except
                        # by connections already in the middle of one (their bytes are counted).
                        self._set_interest(conn, conn.events & ~EVENT_READ)
                        self._memory_muted.append(conn)
                    elif (conn.mute_state is not NOT_MUTED and conn.pending
                          and sum(map(len, conn.pending)) >= READ_SIZE):
                        # Muted connections keep their read interest, so muting and unmuting cost
                        # no selector call, and read ahead up to one read's worth of requests;
                        # past that, the rest stays in the kernel until the connection unmutes.
                        self._set_interest(conn, conn.events & ~EVENT_READ)
                    else:
                        self._read(conn)
            except Exception as e:
                self._close(conn, f"error during poll: {e!r}")
        # One whole request per unmuted connection per poll: strict per-connection order.
        if self._accepting_requests and self._ready:
            completed = self._completed_receives
            for conn in self._ready:
                if conn.mute_state is NOT_MUTED and conn.pending:
                    completed.append((conn, conn.pending.popleft()))  # muted on hand-over
            self._ready.clear()
        if now >= self._next_idle_check:
            self._expire_idle()

    def _drain_wakeups(self) -> None:
        # Drain first, clear second: a wake-up sent in between leaves its byte unread, so the next
        # select returns at once. The other order could eat that byte with the flag still set,
        # and later wake-ups would be skipped until the poll timed out.
        self._waker.drain()
        self._woken = False

    def _read(self, conn: KafkaChannel) -> None:
        # The rest of a large request is read straight into its own buffer (one copy, not three).
        view = conn.body_view()
        try:
            if view is None:
                data = conn.sock.recv(READ_SIZE)
                n = len(data)
            else:
                n = conn.sock.recv_into(view)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as e:
            if not conn.pending:
                self._disconnected.append((conn, f"read failed: {e}"))
                return
            n = 0  # reset by a peer that had already sent whole requests: still hand them over
        finally:
            if view is not None:
                view.release()
        if not n:
            self._peer_closed(conn)
            return
        conn.last_active = self._now
        try:
            held = conn.receive(data) if view is None else conn.received_in_place(n)
        except DecodeError as e:
            # Oversized or negative frame size: Kafka's InvalidReceiveException.
            self._close(conn, str(e))
            return
        except ssl.SSLError as e:
            self._tls_failed(conn, e)
            return
        if held:
            self._count_memory(held)
        if conn.pending and conn.mute_state is NOT_MUTED:
            self._ready[conn] = None
        tls = conn.tls
        if tls is not None:
            if conn.send_buffer is not None:
                self._write(conn)  # TLS's own bytes (handshake, tickets)
            if tls.closed and conn.id in self.connections:
                self._peer_closed(conn)

    def _peer_closed(self, conn: KafkaChannel) -> None:
        """The peer closed its side: hand over what is buffered, answer it if the peer still
        reads, then close (Kafka's graceful close)."""
        conn.closing = True
        self._set_interest(conn, conn.events & ~EVENT_READ)
        if not conn.pending and conn.mute_state is NOT_MUTED:
            self._disconnected.append((conn, "closed by the peer"))

    def _tls_failed(self, conn: KafkaChannel, error: ssl.SSLError) -> None:
        """A failed handshake (counted as a failed authentication) or a corrupt record: the
        alert goes out if the socket takes it now, and the connection closes."""
        assert conn.tls is not None
        handshaking = not conn.tls.ready
        if conn.send_buffer is not None:
            self._write(conn)
        if handshaking:
            self.failed_authentications += 1
        what = "SSL handshake failed" if handshaking else "SSL error"
        self._close(conn, f"failed authentication with {conn.remote_ip} ({what}: {error})")

    def _count_memory(self, delta: int) -> None:
        """A read changed what the pool holds for a connection by ``delta`` bytes."""
        assert self.memory_pool is not None
        if delta > 0:
            self.memory_pool.take(delta)
        else:
            self.memory_pool.release(-delta)

    def _unmute_for_memory(self) -> None:
        """Memory is back: the connections stopped for it read again."""
        muted, self._memory_muted = self._memory_muted, []
        for conn in muted:
            if conn.id in self.connections and not conn.closing:
                self._set_interest(conn, conn.events | EVENT_READ)

    def process_completed_receives(self) -> None:
        receives, self._completed_receives = self._completed_receives, []
        if not receives:
            return
        batch: list[Request] = []
        answered: list[Response] = []
        answer_here = self.answer_here
        pool = self.memory_pool
        for conn, payload in receives:
            if conn.id not in self.connections:
                continue  # its bytes went back to the pool when it closed
            # Every step closes this connection only on error: the rest of the poll's requests
            # are still handed over (and their connections, muted below, answered).
            try:
                if pool is not None:  # parsed below: Kafka releases a request's buffer then
                    conn.held -= len(payload)
                    pool.release(len(payload))
                if conn.sasl is not None and conn.sasl.raw_tokens:
                    self._sasl_token(conn, bytes(payload))  # a bare token, rare: as bytes
                    continue
                try:
                    request = self._parse(conn, payload)
                except (ProtocolError, ValueError) as e:
                    self._close(conn, f"error while parsing a request: {e}")
                    continue
                if request is None:
                    continue
                if conn.sasl is None and conn.session_expiry_ns is not None:
                    if request.api_key == SASL_HANDSHAKE:  # KIP-368: re-authentication begins
                        assert conn.sasl_mechanism is not None
                        conn.sasl = SaslAuthenticator(self._sasl_settings(),
                                                      previous=(conn.principal, conn.sasl_mechanism))
                    elif conn.session_expired(self._now):
                        self.expired_connections_killed += 1
                        self._close(conn, "its SASL session expired without re-authentication")
                        continue
                # Muted before the hand-over; the response that unmutes it is handled by this thread.
                conn.handle(ON_REQUEST)
                if conn.sasl is not None and not self._authenticate(conn, request):
                    continue
                if answer_here is not None and request.api_key in ANSWERED_HERE:
                    # The connection was unmuted (it is only read from then): nothing of it is
                    # with the handlers or being sent, so answering now keeps its order.
                    response = self._handle_here(answer_here, request)
                    if response is not None:
                        answered.append(response)
                        continue
            except Exception as e:
                self._close(conn, f"unexpected error with a received request: {e!r}")
                continue
            batch.append(request)
        if answered:
            # Written as the handlers' answers are, counted and timed the same way.
            self._responses.extend(answered)
            self.process_new_responses()
        # The whole poll's requests in one hand-off. Blocks while the request queue is full
        # (back-pressure), but not past shutdown. The handler is woken just before this thread
        # next blocks in its poll: woken now, it would only take turns with this thread for the
        # GIL at each of the system calls still to come in this loop.
        while batch and self._running:
            try:
                taken = self.request_channel.send_requests(batch, timeout=0, wake=False)
            except queue.Full:
                self.request_channel.wake_handler()
                self._give_turn()  # the handlers need turns to make room
                try:
                    taken = self.request_channel.send_requests(batch, timeout=POLL_TIMEOUT,
                                                               wake=False)
                except queue.Full:
                    continue
                finally:
                    self._take_turn()
            self.requests_handed_over += taken
            self._wake_handler = True
            del batch[:taken]

    def _handle_here(self, answer_here: Callable[[Request], Response | None],
                     request: Request) -> Response | None:
        """A request of ANSWERED_HERE answered on this thread, with the handlers' own code and
        time stamps; None: it goes to the handlers after all."""
        request.dequeue_ns = time.monotonic_ns()
        try:
            response = answer_here(request)
        except Exception:  # as a handler thread: one bad request closes its connection
            log.exception("Unexpected error handling a request; closing its connection")
            response = CloseConnectionResponse(request)
        if response is None:
            return None
        request.api_local_complete_ns = request.response_enqueue_ns = time.monotonic_ns()
        self.requests_handed_over += 1  # and taken back by process_new_responses
        return response

    def _parse(self, conn: KafkaChannel, payload: bytearray) -> Request | None:
        s = self.settings
        api_key, version = peek_api(payload)
        served = s.apis.get(api_key)
        if served is None:
            self._close(conn, f"api key {api_key} is not served on listener {s.listener}")
            return None
        if not served.low <= version <= served.high:
            if api_key != API_VERSIONS:
                raise UnsupportedVersion(api_key, version)
            # Answered anyway (v0 error body); its header is v2 from v3 on (flexible).
            header, _ = decode_request_header(payload, header_version=2 if version >= 3 else 1)
            body = None
        else:
            header, body = decode_request(payload)
            if api_key == API_VERSIONS and version >= 3:
                conn.client_software_name = body.client_software_name
                conn.client_software_version = body.client_software_version
        return Request(
            processor=self.id, connection_id=conn.id, listener=s.listener,
            security_protocol=s.security_protocol, header=header, body=body,
            size=len(payload), client_address=conn.remote_ip,
            client_software_name=conn.client_software_name,
            client_software_version=conn.client_software_version, privileged=s.privileged,
            principal=conn.principal, start_ns=self._now,
        )

    # --- SASL -----------------------------------------------------------------------------------

    def _authenticate(self, conn: KafkaChannel, request: Request) -> bool:
        """A request of a connection not yet authenticated: True if it goes on to the handlers
        (ApiVersions); SaslHandshake and SaslAuthenticate are answered here, as in Kafka's
        network layer, and anything else closes the connection."""
        assert conn.sasl is not None
        reauthenticating = conn.sasl.reauthenticating
        try:
            step = conn.authenticate(request.api_key, request.api_version, request.body)
        except IllegalSaslState as e:
            self._close(conn, f"failed authentication with {conn.remote_ip} ({e})")
            return False
        if step.handlers:
            return True
        frame = encode_response(request.api_key, request.api_version, request.correlation_id,
                                step.body)
        response = SendResponse(request, frame, step.error_code)
        if step.failed:
            self._authentication_failed(conn, step, response)
        else:
            self._answer_here(conn, response)
            self._maybe_authenticated(conn, reauthenticating)
        return False

    def _sasl_token(self, conn: KafkaChannel, token: bytes) -> None:
        """A bare SASL token (after a v0 SaslHandshake): answered with a bare token, or, when it
        fails, by closing the connection after the delay (v0 has no way to say why)."""
        try:
            step = conn.authenticate_token(bytes(token))
        except IllegalSaslState as e:
            self._close(conn, f"failed authentication with {conn.remote_ip} ({e})")
            return
        if step.failed:
            conn.handle(ON_AUTHENTICATION_FAILED)  # nothing more of it goes to the handlers
            self._authentication_failed(conn, step, None)
            return
        conn.write(len(step.token).to_bytes(4, "big") + step.token, answers_request=False)
        self._write(conn)
        self._maybe_authenticated(conn)

    def _maybe_authenticated(self, conn: KafkaChannel, reauthenticating: bool = False) -> None:
        if conn.sasl is None:  # the channel let its authenticator go: it has succeeded
            if reauthenticating:
                self.successful_reauthentications += 1
            else:
                self.successful_authentications += 1
            log.debug("Connection %s %sauthenticated as %s", conn.id, "re-" if reauthenticating else "",
                      conn.principal)

    def _answer_here(self, conn: KafkaChannel, response: SendResponse) -> None:
        """Send a response made on this thread, as if the handlers had made it."""
        request = response.request
        request.dequeue_ns = request.api_local_complete_ns = time.monotonic_ns()
        self._inflight[conn.id] = response
        conn.write(response.payload)
        self._write(conn)

    def _authentication_failed(self, conn: KafkaChannel, step: Step,
                               response: SendResponse | None) -> None:
        """Kafka's delayed close on failed authentication: the answer (if any) goes out after
        connection.failed.authentication.delay.ms, then the connection closes. Logged once."""
        self.failed_authentications += 1
        log.info("Failed authentication with %s on listener %s (%s)", conn.remote_ip, self.listener,
                 step.reason)
        self._set_interest(conn, conn.events & ~EVENT_READ)
        self._auth_failures.append((self._now + self.failed_auth_delay_ns, conn, response))

    def complete_failed_authentications(self) -> None:
        """Answer and close the failed authentications whose delay is over."""
        now = time.monotonic_ns()
        due = [f for f in self._auth_failures if f[0] <= now]
        if not due:
            return
        self._auth_failures = [f for f in self._auth_failures if f[0] > now]
        for _, conn, response in due:
            if conn.id not in self.connections:
                continue
            conn.pending.clear()  # nothing it sent after the failure is answered
            conn.closing = True  # closed once the answer is out (see _unmuted)
            if response is None:
                self._close(conn, "failed authentication", level=logging.DEBUG)
            else:
                self._answer_here(conn, response)

    # --- completed sends, disconnections, excess connections --------------------------------------

    def process_completed_sends(self) -> None:
        sends, self._completed_sends = self._completed_sends, []
        if not sends:
            return
        connections, inflight = self.connections, self._inflight
        completed, now = self._completed, time.monotonic_ns()
        for conn in sends:
            if conn.id not in connections:
                continue
            try:
                response = inflight.pop(conn.id, None)
                if response is None:
                    raise RuntimeError(f"send for {conn.id} completed with no response in flight")
                completed(response.request, len(response.payload), response.error_code,
                          response.error_counts, now)
                if conn.handle(ON_RESPONSE_SENT) is NOT_MUTED:
                    self._unmuted(conn)
            except Exception as e:
                self._close(conn, f"error after a completed send: {e!r}")

    def process_disconnected(self) -> None:
        gone, self._disconnected = self._disconnected, []
        for conn, reason in gone:
            if conn.id in self.connections:
                try:
                    self._close(conn, reason, level=logging.DEBUG)
                except Exception:
                    log.exception("Processor %d: error closing %s", self.id, conn.id)

    def close_excess_connections(self) -> None:
        if self.connections and self.quotas.max_connections_exceeded(self.listener):
            oldest = min(self.connections.values(), key=_last_active)  # least recently active
            self._close(oldest, "over max.connections")

    # --- leaving the listener (retire) and taking connections over (adopt) -------------------------

    def hand_off_connections(self) -> None:
        """Retiring: hand every quiet connection to a successor; end the loop once none is left
        (nor any connection queued by the Acceptor before it stopped choosing this one)."""
        for conn in list(self.connections.values()):
            if conn.mute_state is NOT_MUTED and conn.send_buffer is None and conn.id not in self._inflight:
                self._hand_off(conn)
        if self.connections or self.new_connections.queue or self._auth_failures:
            return
        with self._adopt_lock:
            if self._adopted:
                return  # a retiring neighbour's hand-off raced with ours: next loop
            self._ended = True
        self._running = False
        log.info("Processor %d handed its connections over (%d) and leaves listener %s", self.id,
                 self.connections_handed_off, self.listener)

    def _hand_off(self, conn: KafkaChannel) -> None:
        """Give a quiet connection (no request with the handlers, nothing being sent) to one of
        the successors, round robin; closed if none takes it (they are all shutting down)."""
        assert self._successors is not None
        # Out of this Processor's selector and books; its counts in the quotas stay.
        self.connections.pop(conn.id)
        self._ready.pop(conn, None)
        if conn in self._memory_muted:
            self._memory_muted.remove(conn)
        if conn.events:
            self._selector.unregister(conn.sock)
            conn.events = 0
        successors = [p for p in self._successors() if p is not self]
        for _ in range(len(successors)):
            target = successors[self._next_successor % len(successors)]
            self._next_successor += 1
            if target.adopt(conn):
                self.connections_handed_off += 1
                return
        self.connections[conn.id] = conn
        self._close(conn, "no network thread is left to take it over")

    def _take_adopted(self) -> None:
        """Register the connections handed over by a retiring Processor, in the state they left
        it: requests already read are handed over from here, in order, and the frame begun goes
        on with the next read."""
        while self._adopted:
            conn = self._adopted.popleft()
            self.connections[conn.id] = conn
            self.connections_adopted += 1
            if conn.pending:
                self._ready[conn] = None
            if conn.closing:  # the peer had closed: what it sent is answered, then it closes
                if not conn.pending:
                    self._disconnected.append((conn, "closed by the peer"))
                continue
            self._set_interest(conn, EVENT_READ)

    # --- helpers ----------------------------------------------------------------------------

    def _unmuted(self, conn: KafkaChannel) -> None:
        """The connection was just unmuted: its buffered requests are ready, and it reads again."""
        if conn.pending:
            self._ready[conn] = None
        if conn.closing:
            if not conn.pending:
                self._close(conn, "closed by the peer", level=logging.DEBUG)
            return
        if not conn.events & EVENT_READ:
            self._set_interest(conn, conn.events | EVENT_READ)

    def _completed(self, request: Request, response_bytes: int, error_code: int,
                   error_counts: Mapping[int, int] | None, now_ns: int) -> None:
        """A request's outcome is final: Kafka's updateRequestMetrics and request logger.
        ``error_counts``: every error code the response carried (None: ``error_code`` alone)."""
        times = self.request_metrics.complete(request, now_ns, response_bytes, error_code, error_counts)
        if self.request_log is not None:
            self.request_log.append(request, times, response_bytes, error_code, error_counts, now_ns)

    def _take_turn(self) -> None:
        self._has_turn = self.turns.acquire()

    def _give_turn(self) -> None:
        if self._has_turn:
            self._has_turn = False
            self.turns.release()

    def _expire_idle(self) -> None:
        """Close connections idle past connections.max.idle.ms. Kafka keeps an LRU map and checks
        its head every poll; a scan every tenth of the idle time (at most every second) finds
        the same connections without paying an LRU update per read and send."""
        now = self._now
        self._next_idle_check = now + min(self.idle_ns // 10, 1_000_000_000)
        cutoff = now - self.idle_ns
        for conn in [c for c in self.connections.values() if c.last_active < cutoff]:
            self.expired_connections_killed += 1
            self._close(conn, "idle for longer than connections.max.idle.ms", level=logging.DEBUG)

    def _set_interest(self, conn: KafkaChannel, events: int) -> None:
        if events == conn.events:
            return
        if conn.events == 0:
            self._selector.register(conn.sock, events, conn)
        elif events == 0:
            self._selector.unregister(conn.sock)
        else:
            self._selector.modify(conn.sock, events, conn)
        conn.events = events

    def _close(self, conn: KafkaChannel, reason: str, level: int = logging.INFO) -> None:
        """Close one connection, once, and log why once."""
        if self.connections.pop(conn.id, None) is None:
            return
        self.connections_closed += 1
        if conn.held and self.memory_pool is not None:
            self.memory_pool.release(conn.held)  # its unparsed frames and the partial one
            conn.held = conn.held_partial = 0
        log.log(level, "Closing connection %s on listener %s: %s", conn.id, self.listener, reason)
        self._ready.pop(conn, None)
        self._inflight.pop(conn.id, None)
        if conn.events:
            try:
                self._selector.unregister(conn.sock)
            except (KeyError, ValueError):
                pass
            conn.events = 0
        self._close_raw(conn.sock)
        self.quotas.dec(self.listener, conn.remote_ip)

    @staticmethod
    def _close_raw(sock: socket.socket) -> None:
        try:
            sock.close()
        except OSError:
            pass

    def _close_all(self) -> None:
        while self._adopted:  # handed over but not taken: registered only to be closed
            conn = self._adopted.popleft()
            self.connections[conn.id] = conn
        for conn in list(self.connections.values()):
            self._close(conn, "the processor is shutting down", level=logging.DEBUG)
        while True:
            try:
                sock, ip = self.new_connections.get_nowait()
            except queue.Empty:
                break
            self._close_raw(sock)
            self.quotas.dec(self.listener, ip)
        self._selector.close()
        self._waker.close()


def _last_active(conn: KafkaChannel) -> int:
    return conn.last_active
