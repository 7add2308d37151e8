"""One client connection as a Processor holds it (Kafka's KafkaChannel), doing no I/O.

Like h11's Connection, the channel is a state machine that bytes go through: the Processor reads
the socket and gives the channel what it read (``receive``), and writes what the channel has
queued (``send_buffer``), telling it how much the socket took (``sent``). In between, the channel
unwraps and wraps TLS (its transport: plain, or TLS over memory BIOs), cuts whole request frames
and keeps them until they are handed over (``pending``), keeps the bytes still to be written and
knows when a response has gone out whole, moves its mute state by the table in mute.py
(``handle``, the one place it changes) and carries the SASL authenticator until authentication
succeeds. So it can be driven, and tested, without a socket.

What it queues to send is a run of parts: bytes, and on a plaintext channel the FileSlices of a
SplicedFrame (Fetch records), which the Processor sends with ``os.sendfile`` so that records never
pass through Python. A TLS channel reads the slices and wraps their bytes: encryption needs them
in memory (Kafka's SslTransportLayer copies there too).
"""

from __future__ import annotations

import collections
import logging
import socket
import ssl
import time

from kafkalite.common.file_slice import FileSlice
from kafkalite.protocol import FrameDecoder, SplicedFrame

from .mute import IllegalMuteTransition, MuteState, MuteStep
from .principal import NoMatchingRule, SslPrincipalMapper
from .sasl import SaslAuthenticator, Step
from .tls import TlsTransport

log = logging.getLogger("kafkalite.network.channel")

NOT_MUTED = MuteState.NOT_MUTED

# What goes out: bytes as they go on the wire, or a file's bytes for sendfile (plaintext only).
Part = bytes | memoryview | FileSlice


def part_size(part: Part) -> int:
    """The bytes ``part`` puts on the wire (``len()`` of a FileSlice, a tuple, would be 3)."""
    return part.size if type(part) is FileSlice else len(part)


class KafkaChannel:
    __slots__ = (
        "client_software_name",
        "client_software_version",
        "closing",
        "counts_memory",
        "decoder",
        "events",
        "held",
        "held_partial",
        "id",
        "last_active",
        "mute_state",
        "pending",
        "principal",
        "principal_mapper",
        "remote_ip",
        "response_end",
        "sasl",
        "sasl_mechanism",
        "send_buffer",
        "send_rest",
        "session_expiry_ns",
        "sock",
        "tls",
    )

    def __init__(
        self, sock: socket.socket, channel_id: str, remote_ip: str, max_request_size: int, *,
        tls: TlsTransport | None = None, sasl: SaslAuthenticator | None = None,
        counts_memory: bool = False, principal_mapper: SslPrincipalMapper | None = None,
    ) -> None:
        # The Processor's socket for this channel, kept here so that one lookup finds both; the
        # channel itself never reads or writes it.
        self.sock = sock
        self.id = channel_id
        self.remote_ip = remote_ip
        self.decoder = FrameDecoder(max_request_size)
        # Whole request frames read but not yet handed to the handlers: a client may pipeline
        # many; they wait here while the channel is muted.
        self.pending: collections.deque[bytearray] = collections.deque()
        # What to write: the part to write now (bytes as they go on the wire, TLS records on a TLS
        # channel, or a FileSlice), the parts after it, and how many of all those bytes end the
        # response among them (0: none, only TLS's or SASL's own bytes). One response at a time:
        # the channel stays muted until it is sent.
        self.send_buffer: Part | None = None
        self.send_rest: collections.deque[Part] = collections.deque()
        self.response_end = 0
        self.mute_state = NOT_MUTED  # changed by handle() only
        self.closing = False  # the peer closed its side; deliver what is buffered, then close
        # The Processor's bookkeeping: the selector interest registered, and the time (monotonic
        # ns) of the last read or write, for idle expiry.
        self.events = 0
        self.last_active = 0
        self.client_software_name = "unknown"
        self.client_software_version = "unknown"
        # With a memory pool (queued.max.request.bytes): the bytes it counts for this channel,
        # its frames read but not yet parsed plus the declared size of the one being read.
        self.counts_memory = counts_memory
        self.held = 0
        self.held_partial = 0
        # Security (SSL and SASL listeners): the TLS state; the SASL state until authenticated.
        self.tls = tls
        self.sasl = sasl
        self.principal = "User:ANONYMOUS"
        self.principal_mapper = principal_mapper  # ssl.principal.mapping.rules; None: DEFAULT
        # After SASL authentication: its mechanism, and when its session ends (monotonic ns; None
        # without connections.max.reauth.ms or an expiring credential, KIP-368).
        self.sasl_mechanism: str | None = None
        self.session_expiry_ns: int | None = None

    # --- the mute state -------------------------------------------------------------------------

    def handle(self, step: MuteStep) -> MuteState:
        """Move the mute state by ``step``'s row of the table; the state it is in now. Raises
        IllegalMuteTransition (the state is unchanged) if the step is not allowed now."""
        state = step.next_state.get(self.mute_state)
        if state is None:
            raise IllegalMuteTransition(self.mute_state, step)
        self.mute_state = state
        return state

    # --- receiving ------------------------------------------------------------------------------

    def receive(self, data: bytes) -> int:
        """Take bytes read from the socket (not empty): whole frames go to ``pending``.

        Returns how many more bytes the memory pool must count for this channel (negative: fewer
        now); always 0 unless the channel ``counts_memory``. Raises DecodeError for a frame size
        over the limit or negative, and ssl.SSLError for a failed handshake or a corrupt record
        (the TLS alert, if any, is queued to send first).
        """
        if self.tls is not None:
            data = self._unwrap(data)
        self.decoder.feed(data)
        return self._take_frames()

    def body_view(self) -> memoryview | None:
        """Where to read the rest of the large request being received, in place (plaintext
        only: TLS records are decrypted first); None when there is none."""
        return self.decoder.body_view() if self.tls is None else None

    def received_in_place(self, n: int) -> int:
        """``n`` bytes were read into :meth:`body_view`; as :meth:`receive`."""
        self.decoder.body_received(n)
        return self._take_frames()

    def _take_frames(self) -> int:
        decoder = self.decoder
        if not self.counts_memory:
            self.pending.extend(decoder.frames())
            return 0
        frames = list(decoder.frames())
        self.pending.extend(frames)
        # Whole frames are counted at their size; the frame begun is counted at its declared size
        # as soon as its size is read (it was counted so already if begun by an earlier read).
        partial = decoder.partial_size
        delta = sum(map(len, frames)) + partial - self.held_partial
        self.held += delta
        self.held_partial = partial
        return delta

    def _unwrap(self, data: bytes) -> bytes:
        tls = self.tls
        assert tls is not None
        handshaking = not tls.ready
        try:
            plain = tls.unwrap(data)
        finally:
            # Handshake messages, alerts, session tickets: out before anything queued later.
            out = tls.output()
            if out:
                self._queue(out, False)
        if handshaking and tls.ready:
            subject = tls.peer_subject()
            if subject is not None:
                mapper = self.principal_mapper
                try:
                    self.principal = "User:" + (mapper.name(subject) if mapper is not None else subject)
                except NoMatchingRule as e:  # Kafka fails the connection (KafkaException)
                    raise ssl.SSLError(f"Failed to map name for '{subject}' based on SSL principal "
                                       f"mapping rules: {e}") from None
            log.debug("SSL handshake with %s done (%s, %s)", self.id, tls.version, self.principal)
        return plain

    # --- sending --------------------------------------------------------------------------------

    def write(self, plaintext: bytes | memoryview | SplicedFrame, answers_request: bool = True) -> None:
        """Queue ``plaintext`` to go out after what is queued already (wrapped on TLS).
        ``answers_request``: it is a response, and its last byte going out completes its send;
        False for SASL's own bytes (a bare token), which answer no request. A SplicedFrame whose
        file was truncated under it raises EOFError on a TLS channel (where it is read here)."""
        if type(plaintext) is SplicedFrame:
            self._write_spliced(plaintext, answers_request)
            return
        data = plaintext if self.tls is None else self.tls.wrap(plaintext)
        if self.send_buffer is None:  # the common case: nothing queued
            self.send_buffer = data
            if answers_request:
                self.response_end = len(data)
        else:
            self._queue(data, answers_request)

    def _write_spliced(self, frame: SplicedFrame, answers_request: bool) -> None:
        if self.tls is not None:
            self.write(frame.to_bytes(), answers_request)  # encrypted in memory: read, then wrapped
            return
        if self.send_buffer is None:
            parts = iter(frame.parts)
            self.send_buffer = next(parts)
            self.send_rest.extend(parts)
            if answers_request:
                self.response_end = frame.size
            return
        for part in frame.parts:
            self._queue(part, False)
        if answers_request:
            self.response_end = self.queued_bytes

    def _queue(self, data: Part, answers_request: bool) -> None:
        # Bytes after bytes are joined into one part: one send for both.
        rest = self.send_rest
        last = rest[-1] if rest else self.send_buffer
        if last is None:
            self.send_buffer = data
        elif type(last) is FileSlice or type(data) is FileSlice:
            rest.append(data)
        elif rest:
            rest[-1] = bytes(last) + data
        else:
            self.send_buffer = bytes(last) + data
        if answers_request:
            self.response_end = self.queued_bytes

    @property
    def queued_bytes(self) -> int:
        """The bytes queued to send, the FileSlices' included."""
        if self.send_buffer is None:
            return 0
        return part_size(self.send_buffer) + sum(map(part_size, self.send_rest))

    def sent(self, n: int) -> bool:
        """The socket took the first ``n`` bytes of ``send_buffer`` (the part to write now; the
        next part becomes it once this one is all taken): True if that completed the response
        queued (only once per response)."""
        buffer = self.send_buffer
        assert buffer is not None
        end = self.response_end
        if type(buffer) is FileSlice:
            if n == buffer.size:
                rest = self.send_rest
                self.send_buffer = rest.popleft() if rest else None
            elif n:
                self.send_buffer = FileSlice(buffer.fd, buffer.position + n, buffer.size - n)
        elif n == len(buffer):
            rest = self.send_rest
            self.send_buffer = rest.popleft() if rest else None
        elif n:
            self.send_buffer = memoryview(buffer)[n:]
        if end:
            if n >= end:
                self.response_end = 0
                return True
            self.response_end = end - n
        return False

    def drop_send(self) -> bool:
        """The socket failed: what is queued will never go out. True if a response was in it."""
        answered = self.response_end > 0
        self.send_buffer = None
        self.send_rest.clear()
        self.response_end = 0
        return answered

    # --- SASL -----------------------------------------------------------------------------------

    def authenticate(self, api_key: int, api_version: int, body: object) -> Step:
        """A request while not yet authenticated (``sasl`` is set): the authenticator's step.
        Raises IllegalSaslState for a request not allowed now. Once authentication succeeds the
        authenticator goes (``sasl`` None): from then on requests go to the handlers."""
        assert self.sasl is not None
        step = self.sasl.on_request(api_key, api_version, body)
        self._maybe_authenticated()
        return step

    def authenticate_token(self, token: bytes) -> Step:
        """A bare SASL token (after a v0 SaslHandshake), as :meth:`authenticate`."""
        assert self.sasl is not None
        step = self.sasl.on_token(token)
        self._maybe_authenticated()
        return step

    def _maybe_authenticated(self) -> None:
        sasl = self.sasl
        if sasl is not None and sasl.complete:
            self.principal = sasl.principal or self.principal
            self.sasl_mechanism = sasl.mechanism
            lifetime = sasl.session_lifetime_ms
            self.session_expiry_ns = time.monotonic_ns() + lifetime * 1_000_000 if lifetime else None
            self.sasl = None

    def session_expired(self, now_ns: int) -> bool:
        """The SASL session's lifetime is over (the client did not re-authenticate in time)."""
        return self.session_expiry_ns is not None and now_ns > self.session_expiry_ns
