"""One client connection as a Processor holds it (Kafka's KafkaChannel): the socket, the frames
read but not yet handed over, the send in progress and the mute state."""

from __future__ import annotations

import collections
import socket

from kafkalite.protocol import FrameDecoder

from .mute import MUTE, UNMUTE, MuteEvent, MuteState, next_state
from .sasl import SaslAuthenticator
from .tls import TlsTransport


class Connection:
    __slots__ = (
        "client_software_name",
        "client_software_version",
        "closing",
        "control_send",
        "decoder",
        "events",
        "held",
        "held_partial",
        "id",
        "last_active",
        "listener",
        "local",
        "mute_state",
        "pending",
        "principal",
        "remote",
        "sasl",
        "send_buffer",
        "sock",
        "tls",
    )

    def __init__(
        self, sock: socket.socket, conn_id: str, listener: str, max_request_size: int,
        local: tuple[str, int], remote: tuple[str, int],
    ) -> None:
        self.sock = sock
        self.id = conn_id
        self.listener = listener
        self.local = local
        self.remote = remote
        self.decoder = FrameDecoder(max_request_size)
        # Whole request frames read from the socket but not yet handed to the handlers: a client
        # may pipeline many; they wait here while the connection is muted.
        self.pending: collections.deque[bytes] = collections.deque()
        self.send_buffer: memoryview | None = None
        self.mute_state = MuteState.NOT_MUTED
        self.closing = False  # the peer closed its side; deliver what is buffered, then close
        self.events = 0  # selector interest currently registered
        self.last_active = 0  # monotonic ns of the last read or completed send
        self.client_software_name = "unknown"
        self.client_software_version = "unknown"
        # Bytes counted for this connection in the memory pool (queued.max.request.bytes): its
        # frames read but not yet parsed, plus the declared size of the one being read.
        self.held = 0
        self.held_partial = 0
        # Security (SSL and SASL listeners): the TLS state; the SASL state until authenticated;
        # whether the bytes in send_buffer are TLS's or SASL's own, answering no request.
        self.tls: TlsTransport | None = None
        self.sasl: SaslAuthenticator | None = None
        self.control_send = False
        self.principal = "User:ANONYMOUS"

    @property
    def muted(self) -> bool:
        return self.mute_state is not MuteState.NOT_MUTED

    def mute(self) -> None:
        self.mute_state = MUTE.get(self.mute_state, self.mute_state)

    def maybe_unmute(self) -> bool:
        """Unmute a plainly MUTED connection; True if it is unmuted now."""
        self.mute_state = UNMUTE.get(self.mute_state, self.mute_state)
        return self.mute_state is MuteState.NOT_MUTED

    def handle_event(self, event: MuteEvent) -> None:
        self.mute_state = next_state(self.mute_state, event)

    @property
    def ready(self) -> bool:
        """Has a whole request to hand over now."""
        return bool(self.pending) and self.mute_state is MuteState.NOT_MUTED

    @property
    def remote_ip(self) -> str:
        return self.remote[0]
