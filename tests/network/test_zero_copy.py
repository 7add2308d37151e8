"""Fetch responses with records left in their files, over loopback: the Processor sends the records
with os.sendfile on plaintext connections (partial sends resumed where they stopped, the rest when
the socket turns writable), reads and encrypts them on TLS ones, and closes only the connection
whose file was truncated under a pending send."""

from __future__ import annotations

import logging
import os
import selectors
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme

from kafkalite.common.file_slice import FileSlice
from kafkalite.network.mute import MuteState
from kafkalite.network.processor import Processor
from kafkalite.network.request_channel import Request, SendResponse
from kafkalite.network.socket_server import SocketServer
from kafkalite.protocol import SplicedFrame, decode_response, encode_response
from kafkalite.protocol.messages import fetch
from tests.support.wait import wait_for
from tests.support.wire_client import Client

from .conftest import API_VERSIONS_V0, socket_server, take
from .test_processor import poll_until, processor_with_clients

pytestmark = pytest.mark.integration


FETCH, VERSION = fetch.FETCH.key, 12
Topic = fetch.RESPONSE["responses"]
Partition = Topic["partitions"]
# Far more than loopback sockets' buffers hold while the peer does not read (the sender's grows to
# net.ipv4.tcp_wmem's 4 MB at most; the receiver's only grows as the application reads).
BIG = 16 * 1024 * 1024


def fetch_frame(corr: int, *records: bytes | FileSlice) -> bytes | SplicedFrame:
    body = fetch.RESPONSE(responses=[Topic(topic="t", partitions=[
        Partition(partition_index=i, high_watermark=1, records=r) for i, r in enumerate(records)])])
    return encode_response(FETCH, VERSION, corr, body)


def wire(frame: bytes | SplicedFrame) -> bytes:
    return frame if type(frame) is bytes else frame.to_bytes()  # type: ignore[union-attr]


@pytest.fixture
def records(tmp_path: Path) -> Iterator[tuple[int, bytes]]:
    """A segment-like file of BIG random bytes then 1000 more, open for reading: (fd, its bytes)."""
    data = os.urandom(BIG + 1000)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDWR)
    try:
        yield fd, data
    finally:
        os.close(fd)


class SendfileSpy:
    """os.sendfile, watched: how many bytes it sent in how many calls, and an event set as soon
    as the socket could not take all it was offered (the peer is not reading)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        self.sent = 0
        self.blocked = threading.Event()
        real = os.sendfile

        def sendfile(out_fd: int, in_fd: int, offset: int | None, count: int) -> int:
            self.calls += 1
            try:
                n = real(out_fd, in_fd, offset, count)
            except BlockingIOError:
                self.blocked.set()
                raise
            self.sent += n
            if n < count:
                self.blocked.set()
            return n

        monkeypatch.setattr(os, "sendfile", sendfile)


@pytest.fixture
def completed(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """(correlation id, response bytes) of every request the Processors complete, as the request
    metrics and the request log are told."""
    done: list[tuple[int, int]] = []
    original = Processor._completed

    def recording(self: Processor, request: Request, response_bytes: int, *rest: object) -> None:
        done.append((request.correlation_id, response_bytes))
        original(self, request, response_bytes, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(Processor, "_completed", recording)
    return done


def answer_pipelined(server: SocketServer, client: Client, frames: list, blocked: threading.Event | None):
    """The client sends a request per frame at once; each is answered with its frame as it is
    handed over (one at a time: the connection is muted until the previous response is out), and
    each response received is the frame's bytes, in order. With ``blocked``: the first response
    is only read once the server's socket is full."""
    channel = server.data_plane_request_channel
    corrs = [client.send(18, 0, API_VERSIONS_V0) for _ in frames]
    for i, (corr, make) in enumerate(zip(corrs, frames, strict=True)):
        request = take(channel)
        assert request.correlation_id == corr
        frame = make(corr)
        channel.send_response(SendResponse(request, frame))
        if i == 0 and blocked is not None:
            assert blocked.wait(5), "the server's socket never filled"
        payload = client.receive_frame()
        assert payload == wire(frame)[4:]
        assert decode_response(payload, FETCH, VERSION)[0] == corr
        frames[i] = frame


def test_plaintext_records_go_with_sendfile_resumed_across_partial_sends(records, monkeypatch,
                                                                          completed):
    fd, _ = records
    sends = SendfileSpy(monkeypatch)
    frames = [
        lambda corr: fetch_frame(corr, FileSlice(fd, 0, BIG)),
        lambda corr: fetch_frame(corr, FileSlice(fd, BIG, 10), b"bytes", FileSlice(fd, BIG + 10, 990),
                                 FileSlice(fd, 5, 0), None),
        lambda corr: fetch_frame(corr, b"no slice at all"),
        lambda corr: fetch_frame(corr, FileSlice(fd, 123, 4567)),
    ]
    with socket_server() as server, Client("127.0.0.1", server.bound_port("PLAINTEXT")) as c:
        answer_pipelined(server, c, frames, sends.blocked)
        assert [type(f) for f in frames] == [SplicedFrame, SplicedFrame, bytes, SplicedFrame]
        assert wait_for(lambda: len(completed) == 4)
        # The request metrics and the request log count each whole frame, records included.
        assert [n for _, n in completed] == [len(f) for f in frames]
    assert sends.sent == BIG + 1000 + 4567
    assert sends.calls > 4  # the big slice took several sendfile calls, each resuming the last


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ssl.SSLContext]:
    ca = trustme.CA()
    keystore = tmp_path_factory.mktemp("pki") / "server.pem"
    ca.issue_cert("127.0.0.1").private_key_and_cert_chain_pem.write_to_path(str(keystore))
    client = ssl.create_default_context()
    ca.configure_trust(client)
    return keystore, client


def test_tls_reads_the_records_and_encrypts_them_without_sendfile(records, monkeypatch, completed, pki):
    fd, _ = records
    sends = SendfileSpy(monkeypatch)
    keystore, context = pki
    frames = [
        lambda corr: fetch_frame(corr, FileSlice(fd, 0, BIG // 2)),
        lambda corr: fetch_frame(corr, FileSlice(fd, BIG, 1000), b"bytes", FileSlice(fd, 77, 7)),
        lambda corr: fetch_frame(corr, b"no slice at all"),
    ]
    with socket_server(listeners="PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
                       ssl_keystore_location=str(keystore)) as server:
        c = Client("127.0.0.1", server.bound_port("SSL"))
        with c:
            c.sock = context.wrap_socket(c.sock, server_hostname="127.0.0.1")
            answer_pipelined(server, c, frames, None)
            assert wait_for(lambda: len(completed) == 3)
            assert [n for _, n in completed] == [len(f) for f in frames]
            # A slice past the end of its file cannot be read whole: the connection closes.
            corr = c.send(18, 0, API_VERSIONS_V0)
            request = take(server.data_plane_request_channel)
            server.data_plane_request_channel.send_response(
                SendResponse(request, fetch_frame(corr, FileSlice(fd, BIG + 990, 100))))
            assert c.closed_by_server()
            assert wait_for(lambda: server.quotas.total == 0)
    assert sends.calls == 0


def test_a_file_truncated_under_a_pending_send_closes_that_connection_only(records, monkeypatch,
                                                                           completed, caplog):
    fd, _ = records
    sends = SendfileSpy(monkeypatch)
    caplog.set_level(logging.INFO, logger="kafkalite.network")
    with socket_server() as server:
        port = server.bound_port("PLAINTEXT")
        with Client("127.0.0.1", port) as a, Client("127.0.0.1", port) as b:
            channel = server.data_plane_request_channel
            corr = a.send(18, 0, API_VERSIONS_V0, correlation_id=1000)  # not one of b's
            request = take(channel)
            channel.send_response(SendResponse(request, fetch_frame(corr, FileSlice(fd, 0, BIG))))
            assert sends.blocked.wait(5), "the server's socket never filled"
            os.ftruncate(fd, 1000)  # as a log truncated to an earlier offset
            assert a.closed_by_server()

            frames = [lambda corr: fetch_frame(corr, FileSlice(fd, 0, 1000)),
                      lambda corr: fetch_frame(corr, FileSlice(fd, 10, 20), FileSlice(fd, 500, 500))]
            answer_pipelined(server, b, frames, None)  # b is served as if nothing happened
            assert wait_for(lambda: server.quotas.total == 1)
            assert all(p.is_alive() for p in server.processors)
    truncated = [r for r in caplog.records if "truncated" in r.getMessage()]
    assert len(truncated) == 1 and truncated[0].levelno == logging.WARNING
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert corr not in [c for c, _ in completed]  # never counted as a completed response


def test_a_slice_the_socket_cannot_take_waits_for_writable_and_resumes_where_it_stopped(records):
    """The Processor's steps one at a time: the first write leaves the slice part sent and the
    connection waiting for writable in the selector; polls as the client reads send the rest."""
    fd, _ = records
    with processor_with_clients(1) as (p, channel, (client,)):
        corr = client.send(18, 0, API_VERSIONS_V0)
        poll_until(p, lambda: len(p._completed_receives) == 1)
        p.process_completed_receives()
        frame = fetch_frame(corr, FileSlice(fd, 0, BIG))
        assert isinstance(frame, SplicedFrame)
        channel.send_response(SendResponse(take(channel, timeout=0), frame))
        p.process_new_responses()
        (conn,) = p.connections.values()
        pending = conn.send_buffer
        assert type(pending) is FileSlice and pending.fd == fd
        assert 0 < pending.position < BIG and pending.position + pending.size == BIG
        assert conn.events & selectors.EVENT_WRITE and conn.response_end == conn.queued_bytes > pending.size
        received: list[bytes] = []
        reader = threading.Thread(target=lambda: received.append(client.receive_frame()))
        reader.start()  # the client reads the frame as it comes; the test polls the Processor
        try:
            poll_until(p, lambda: not reader.is_alive(), timeout=10)
        finally:
            reader.join()
        assert received == [frame.to_bytes()[4:]]
        p.process_completed_sends()
        assert conn.mute_state is MuteState.NOT_MUTED and not conn.events & selectors.EVENT_WRITE
        assert conn.send_buffer is None and conn.response_end == 0
