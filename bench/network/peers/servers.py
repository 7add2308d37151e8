"""The peers kafkalite is measured against: the same responses (workload.Responder), served
four other ways, and ``asyncio-bytes``, the floor for Python network I/O: asyncio answering
responses built once at start (one per api key and version the load generator sends), patching
only the correlation id, with no codec on the way. Run one as
``python -m kafkalite_bench.network.peers.servers KIND PORT TOPICS``."""

from __future__ import annotations

import asyncio
import os
import selectors
import signal
import socket
import socketserver
import struct
import sys
from collections.abc import Callable

from kafkalite.protocol import UNLIMITED_FRAME_SIZE, FrameDecoder

from ..workload import REQUESTS, Responder, request_frames

_SIZE = struct.Struct(">i")


def threaded(port: int, respond: Responder) -> None:
    """Thread per connection: the standard library's ThreadingTCPServer."""

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            sock = self.request
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            decoder = FrameDecoder(UNLIMITED_FRAME_SIZE)
            while True:
                data = sock.recv(65536)
                if not data:
                    return
                decoder.feed(data)
                out = b"".join(respond(p) for p in decoder.frames())
                if out:
                    sock.sendall(out)

    class Server(socketserver.ThreadingTCPServer):
        daemon_threads = True
        allow_reuse_address = True
        request_queue_size = 1024

    with Server(("127.0.0.1", port), Handler) as server:
        server.serve_forever()


async def _asyncio_main(port: int, respond: Callable[[bytes | bytearray], bytes]) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                size = _SIZE.unpack(await reader.readexactly(4))[0]
                writer.write(respond(await reader.readexactly(size)))
                if reader._buffer:  # type: ignore[attr-defined]  # pipelined: answer what is here first
                    continue
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


def asyncio_streams(port: int, respond: Responder) -> None:
    asyncio.run(_asyncio_main(port, respond))


class Precomputed:
    """payload -> response frame without the codec: the frame answered once by ``respond`` to
    each request the load generator sends, found by the request's bytes but its correlation id
    (two Metadata requests of one version may ask for different topics), with the request's
    correlation id put in (bytes 4-8 of a response frame, whatever its header version)."""

    def __init__(self, respond: Responder) -> None:
        self.frames: dict[bytes, bytes] = {}
        for frame in request_frames("all", len(REQUESTS)):
            payload = frame[4:]
            self.frames[payload[:4] + payload[8:]] = respond(payload)

    def __call__(self, payload: bytes | bytearray) -> bytes:
        frame = self.frames[bytes(payload[:4] + payload[8:])]
        return frame[:4] + payload[4:8] + frame[8:]


def asyncio_bytes(port: int, respond: Responder) -> None:
    asyncio.run(_asyncio_main(port, Precomputed(respond)))


def uvloop_streams(port: int, respond: Responder) -> None:
    import uvloop

    uvloop.run(_asyncio_main(port, respond))


def selectors_loop(port: int, respond: Responder) -> None:
    """One thread, one selector: read, answer, write."""
    sel = selectors.DefaultSelector()
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(1024)
    listener.setblocking(False)
    sel.register(listener, selectors.EVENT_READ, None)
    pending: dict[socket.socket, bytearray] = {}
    decoders: dict[socket.socket, FrameDecoder] = {}
    while True:
        for key, mask in sel.select():
            sock = key.fileobj
            if key.data is None:
                conn, _ = listener.accept()
                conn.setblocking(False)
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                decoders[conn] = FrameDecoder(UNLIMITED_FRAME_SIZE)
                pending[conn] = bytearray()
                sel.register(conn, selectors.EVENT_READ, "c")
                continue
            assert isinstance(sock, socket.socket)
            if mask & selectors.EVENT_READ:
                try:
                    data = sock.recv(65536)
                except ConnectionError:
                    data = b""
                if not data:
                    sel.unregister(sock)
                    sock.close()
                    decoders.pop(sock, None)
                    pending.pop(sock, None)
                    continue
                decoders[sock].feed(data)
                for p in decoders[sock].frames():
                    pending[sock] += respond(p)
            out = pending.get(sock)
            if out:
                try:
                    sent = sock.send(out)
                except BlockingIOError:
                    sent = 0
                del out[:sent]
                sel.modify(sock, selectors.EVENT_READ | (selectors.EVENT_WRITE if out else 0), "c")


KINDS = {"threaded": threaded, "asyncio": asyncio_streams, "asyncio-bytes": asyncio_bytes,
         "uvloop": uvloop_streams, "selectors": selectors_loop}

if __name__ == "__main__":
    kind, port, topics = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    # os._exit, not sys.exit: a SystemExit raised inside an event loop's shutdown can wait on
    # open connections (seen once in CI: 20 s without exiting); a peer has nothing to flush.
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    KINDS[kind](port, Responder(topics, port))
