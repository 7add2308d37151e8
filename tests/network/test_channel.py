"""KafkaChannel without a socket: bytes in as reads would bring them, bytes out as a socket would
take them (partial writes), TLS against Python's own client over memory BIOs, the mute steps and
SASL, with hypothesis choosing the splits and the order of events."""

from __future__ import annotations

import itertools
import ssl
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalite.network.channel import KafkaChannel
from kafkalite.network.mute import (
    ON_AUTHENTICATION_FAILED,
    ON_REQUEST,
    ON_RESPONSE_SENT,
    ON_THROTTLE_ENDED,
    ON_THROTTLE_STARTED,
    IllegalMuteTransition,
    MuteState,
)
from kafkalite.network.sasl import SASL_AUTHENTICATE, SASL_HANDSHAKE, SaslAuthenticator
from kafkalite.network.tls import TlsTransport
from kafkalite.protocol import DecodeError
from kafkalite.protocol.messages import sasl_authenticate, sasl_handshake

from .test_mute import spelled_out

MAX = 1000


def channel(**kwargs) -> KafkaChannel:
    return KafkaChannel(None, "c", "127.0.0.1", MAX, **kwargs)  # type: ignore[arg-type]


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    """``data`` cut at the given offsets (any order, repeats allowed), as reads might bring it."""
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


PAYLOADS = st.lists(st.binary(min_size=0, max_size=200), min_size=1, max_size=8)
CUTS = st.lists(st.integers(0, 10_000), max_size=12)


# --- receiving ----------------------------------------------------------------------------------

@given(PAYLOADS, CUTS)
def test_frames_come_out_whole_and_in_order_however_the_reads_split_them(payloads, cuts):
    c = channel()
    for chunk in split(b"".join(map(frame, payloads)), cuts):
        assert c.receive(chunk) == 0  # counts no memory unless asked to
    assert list(c.pending) == payloads


@given(PAYLOADS, CUTS)
def test_memory_counted_is_the_frames_pending_plus_the_declared_size_of_the_one_begun(payloads, cuts):
    c = channel(counts_memory=True)
    wire = b"".join(map(frame, payloads))
    counted = 0
    for chunk in split(wire, cuts):
        counted += c.receive(chunk)
        begun = c.decoder.partial_size
        assert counted == c.held == sum(map(len, c.pending)) + begun
    assert list(c.pending) == payloads and c.held_partial == 0


@pytest.mark.parametrize("size", [MAX + 1, -1])
def test_a_frame_size_over_the_limit_or_negative_raises_before_its_body(size):
    c = channel()
    with pytest.raises(DecodeError):
        c.receive(struct.pack(">i", size))
    assert not c.pending


# --- sending ------------------------------------------------------------------------------------

WRITES = st.one_of(
    st.tuples(st.just("response"), st.integers(1, 300)),
    st.tuples(st.just("own bytes"), st.integers(1, 300)),
    st.tuples(st.just("sent"), st.floats(0, 1)),
)


@given(st.lists(WRITES, max_size=40))
def test_partial_writes_complete_each_response_once_when_its_last_byte_goes(events):
    """Responses (one at a time, as a muted channel has) and bytes of the channel's own (SASL
    tokens) in any order, taken by the socket a part at a time: the wire gets every byte in
    order, and ``sent`` says True exactly when a response's last byte has been taken."""
    c = channel()
    written, wire = b"", b""
    response_end = None  # offset in ``written`` where the queued response ends
    completions = expected = 0
    for kind, arg in events:
        if kind == "response" and response_end is None:
            data = bytes([len(written) % 251]) * arg
            c.write(data)
            written += data
            response_end = len(written)
        elif kind == "own bytes":
            data = bytes([len(written) % 251]) * arg
            c.write(data, answers_request=False)
            written += data
        elif kind == "sent" and c.send_buffer is not None:
            n = int(len(c.send_buffer) * arg)
            wire += bytes(c.send_buffer[:n])
            done = c.sent(n)
            completions += done
            if response_end is not None and len(wire) >= response_end:
                expected += 1
                response_end = None
            assert completions == expected
        assert written.startswith(wire)
        assert bytes(c.send_buffer or b"") == written[len(wire):]
    if c.send_buffer is not None:
        completions += c.sent(len(c.send_buffer))
        expected += response_end is not None
    assert completions == expected and c.send_buffer is None


def test_a_failed_socket_drops_the_queue_and_says_whether_a_response_was_in_it():
    c = channel()
    c.write(b"token", answers_request=False)
    assert c.drop_send() is False and c.send_buffer is None
    c.write(b"response")
    assert c.sent(3) is False
    assert c.drop_send() is True and c.send_buffer is None
    c.write(b"next")
    assert c.sent(4) is True


# --- the mute state -----------------------------------------------------------------------------

STEPS = st.sampled_from([ON_REQUEST, ON_RESPONSE_SENT, ON_THROTTLE_STARTED, ON_THROTTLE_ENDED,
                         ON_AUTHENTICATION_FAILED])


@given(st.lists(STEPS, max_size=30))
def test_the_mute_state_moves_only_by_legal_steps(steps):
    c = channel()
    for step in steps:
        before = c.mute_state
        after = spelled_out(before, step)
        if after is None:
            with pytest.raises(IllegalMuteTransition):
                c.handle(step)
            assert c.mute_state is before
        else:
            assert c.handle(step) is after is c.mute_state


def test_a_request_and_its_response_mute_and_unmute():
    c = channel()
    c.receive(frame(b"one") + frame(b"two"))
    assert c.handle(ON_REQUEST) is MuteState.MUTED_AND_RESPONSE_PENDING
    c.write(b"answer")
    assert c.sent(6) and c.handle(ON_RESPONSE_SENT) is MuteState.NOT_MUTED
    assert list(c.pending) == [b"one", b"two"]


# --- TLS ----------------------------------------------------------------------------------------


class Peer:
    """Python's TLS client over memory BIOs, wired to a channel by the test."""

    def __init__(self, context: ssl.SSLContext) -> None:
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = context.wrap_bio(self.incoming, self.outgoing, server_hostname="127.0.0.1")

    def take(self, c: KafkaChannel, fraction: float = 1.0) -> bool:
        """Take (part of) what the channel has queued, as a socket would; True if that completed
        a response."""
        if c.send_buffer is None:
            return False
        n = max(1, int(len(c.send_buffer) * fraction))
        self.incoming.write(bytes(c.send_buffer[:n]))
        return c.sent(n)

    def read_all(self) -> bytes:
        out = b""
        while True:
            try:
                out += self.tls.read(65536)
            except ssl.SSLWantReadError:
                return out


def handshake(c: KafkaChannel, peer: Peer, fraction: float = 1.0) -> None:
    for _ in range(200):
        try:
            peer.tls.do_handshake()
            if c.tls.ready:  # type: ignore[union-attr]
                return
        except ssl.SSLWantReadError:
            pass
        sent = peer.outgoing.read()
        if sent:
            assert c.receive(sent) == 0 and not c.pending
        assert not peer.take(c, fraction)  # handshake bytes complete no response
    raise AssertionError("the handshake did not finish")


def tls_channel(contexts: tuple[ssl.SSLContext, ssl.SSLContext]) -> tuple[KafkaChannel, Peer]:
    """A TLS channel and its peer, handshake done and the server's session tickets taken."""
    server, client = contexts
    c = channel(tls=TlsTransport(server))
    peer = Peer(client)
    handshake(c, peer)
    while c.send_buffer is not None:  # session tickets, if any
        peer.take(c)
    return c, peer


@given(st.floats(0.05, 1), st.binary(min_size=1, max_size=5000), st.binary(min_size=1, max_size=5000))
def test_tls_handshake_bytes_then_a_request_and_its_response_in_parts(contexts, fraction, request,
                                                                      response):
    server, client = contexts
    c = channel(tls=TlsTransport(server))
    peer = Peer(client)
    handshake(c, peer, fraction)
    peer.tls.write(frame(request))
    c.receive(peer.outgoing.read())
    assert list(c.pending) == [request]
    c.write(frame(response))
    completions = 0
    while c.send_buffer is not None:
        completions += peer.take(c, fraction)
    assert completions == 1
    assert peer.read_all() == frame(response)


def test_a_corrupt_tls_record_raises_with_the_alert_queued(contexts):
    c, _ = tls_channel(contexts)
    with pytest.raises(ssl.SSLError):
        c.receive(b"\x17\x03\x03\x00\x20" + b"\x00" * 32)  # application data that does not decrypt
    assert c.send_buffer is not None and c.response_end == 0


def test_a_failed_handshake_raises(contexts):
    server, _ = contexts
    c = channel(tls=TlsTransport(server))
    with pytest.raises(ssl.SSLError):
        c.receive(b"GET / HTTP/1.1\r\n\r\n")
    assert not c.tls.ready  # type: ignore[union-attr]


# --- SASL ---------------------------------------------------------------------------------------

def test_sasl_goes_once_authenticated_and_the_principal_stays():
    c = channel(sasl=SaslAuthenticator(["PLAIN"], {"alice": "secret"}))
    assert c.authenticate(SASL_HANDSHAKE, 1, sasl_handshake.REQUEST(mechanism="PLAIN")).error_code == 0
    assert c.sasl is not None and c.principal == "User:ANONYMOUS"
    step = c.authenticate(SASL_AUTHENTICATE, 1,
                          sasl_authenticate.REQUEST(auth_bytes=b"\0alice\0secret"))
    assert step.error_code == 0 and not step.failed
    assert c.sasl is None and c.principal == "User:alice"


def test_a_failed_sasl_token_keeps_the_authenticator():
    c = channel(sasl=SaslAuthenticator(["PLAIN"], {"alice": "secret"}))
    c.authenticate(SASL_HANDSHAKE, 0, sasl_handshake.REQUEST(mechanism="PLAIN"))
    step = c.authenticate_token(b"\0alice\0wrong")
    assert step.failed and c.sasl is not None and c.principal == "User:ANONYMOUS"
