"""A bare server that only answers, to measure the load generators against: what a client reaches
here is its own ceiling on this machine, so a broker measured below that figure is the limit, not
the client. One thread, one selectors loop, canned responses built once with kafkalite's codec:
ApiVersions (only the four apis below), Metadata (every topic asked for has one partition, led
here), Produce (a canned answer naming the benchmark's topic; the records are received and dropped
without being looked at), Fetch (``partition_max_bytes`` worth of one canned batch, at least one,
its base offset set to the offset asked for; sent from the same bytes each time with ``sendmsg``,
no copy). Its log holds LOG_BATCHES such batches (0: endless), so that a consumer sees the same
log end as on the servers it is compared with, and does not prefetch past it.
Run as ``python -m kafkalite_bench.data.bare_server PORT TOPIC MESSAGE_BYTES BATCH_RECORDS LOG_BATCHES``.
"""

from __future__ import annotations

import collections
import selectors
import signal
import socket
import struct
import sys
import uuid
from typing import Any

from kafkalite.protocol import decode_request, encode_response
from kafkalite.protocol.messages import api_versions, fetch, metadata, produce

from .wire import FETCH, METADATA, PRODUCE, record_batch

API_VERSIONS = 18
SERVED = {API_VERSIONS: (0, 3), METADATA: (0, 12), PRODUCE: (3, 9), FETCH: (4, 12)}
UNSUPPORTED_VERSION = 35
ENDLESS = 1 << 62  # the high watermark of an endless log: consumers never reach it

_SIZE = struct.Struct(">i")
_HEADER = struct.Struct(">hhi")  # api key, api version, correlation id
_CORRELATION = struct.Struct(">i")
_OFFSET = struct.Struct(">q")


def _encoded(api_key: int, version: int, body: Any) -> bytes:
    """A response frame with correlation id 0, as bytes (its records are bytes, never file slices,
    so the codec gives bytes; ``to_bytes`` covers a codec that hands back a spliced frame)."""
    frame = encode_response(api_key, version, 0, body)
    return frame if isinstance(frame, bytes) else frame.to_bytes()


class Canned:
    """payload -> the buffers of its response frame."""

    def __init__(self, port: int, topic: str, message_bytes: int, batch_records: int,
                 log_batches: int = 0) -> None:
        self.port, self.topic = port, topic
        self.batch = record_batch(message_bytes, batch_records)
        self.batch_records = batch_records
        self.high_watermark = log_batches * batch_records if log_batches else ENDLESS
        self._tail = memoryview(self.batch)[8:]  # all but the base offset, which is not in the CRC
        self._frames: dict[Any, bytes] = {}
        self._topic_id = uuid.uuid4()

    def _frame(self, key: Any, build: Any) -> Any:
        frame = self._frames.get(key)
        if frame is None:
            frame = self._frames[key] = build()
        return frame

    @staticmethod
    def _with_correlation(frame: bytes, correlation_id: int) -> bytes:
        out = bytearray(frame)
        _CORRELATION.pack_into(out, 4, correlation_id)
        return bytes(out)

    def respond(self, payload: memoryview) -> list[Any]:
        key, version, correlation_id = _HEADER.unpack_from(payload, 0)
        low_high = SERVED.get(key)
        if low_high is None:
            raise ValueError(f"api {key} is not served here")
        if key == API_VERSIONS:
            served = low_high[0] <= version <= low_high[1]
            frame = self._frame((key, version if served else 0), lambda: self._api_versions(
                version if served else 0, 0 if served else UNSUPPORTED_VERSION))
            return [self._with_correlation(frame, correlation_id)]
        if not low_high[0] <= version <= low_high[1]:
            raise ValueError(f"api {key} v{version} is not served here")
        if key == PRODUCE:
            return [self._with_correlation(self._frame((key, version), lambda: self._produce(version)),
                                           correlation_id)]
        if key == METADATA:
            _, body = decode_request(bytes(payload))
            names = tuple(t.name for t in body.topics or ()) or (self.topic,)
            frame = self._frame((key, version, names), lambda: self._metadata(version, names))
            return [self._with_correlation(frame, correlation_id)]
        return self._fetch(version, correlation_id, bytes(payload))

    def _api_versions(self, version: int, error: int) -> bytes:
        R = api_versions.RESPONSE
        keys = [R["api_keys"](api_key=k, min_version=lo, max_version=hi) for k, (lo, hi) in SERVED.items()]
        return _encoded(API_VERSIONS, version, R(
            error_code=error, api_keys=keys, throttle_time_ms=0, supported_features=[],
            finalized_features_epoch=-1, finalized_features=[], zk_migration_ready=False))

    def _produce(self, version: int) -> bytes:
        R = produce.RESPONSE
        T, P = R["responses"], R["responses"]["partition_responses"]
        return _encoded(PRODUCE, version, R(responses=[T(name=self.topic, partition_responses=[
            P(index=0, error_code=0, base_offset=0, log_append_time_ms=-1, log_start_offset=0,
              record_errors=[], error_message=None)])], throttle_time_ms=0))

    def _metadata(self, version: int, names: tuple[str, ...]) -> bytes:
        R = metadata.RESPONSE
        T, P = R["topics"], R["topics"]["partitions"]
        return _encoded(METADATA, version, R(
            throttle_time_ms=0,
            brokers=[R["brokers"](node_id=1, host="127.0.0.1", port=self.port, rack=None)],
            cluster_id="kafkalite-bench-bare-server", controller_id=1,
            topics=[T(error_code=0, name=n, topic_id=self._topic_id, is_internal=False, partitions=[
                P(error_code=0, partition_index=0, leader_id=1, leader_epoch=-1, replica_nodes=[1],
                  isr_nodes=[1], offline_replicas=[])]) for n in names]))

    def _fetch_frame(self, version: int, batches: int) -> tuple[bytes, bytes]:
        """The frame before and after the records of a response carrying ``batches`` batches."""
        R = fetch.RESPONSE
        T, P = R["responses"], R["responses"]["partitions"]
        records = self.batch * batches
        frame = _encoded(FETCH, version, R(
            throttle_time_ms=0, error_code=0, session_id=0, responses=[T(topic=self.topic, partitions=[
                P(partition_index=0, error_code=0, high_watermark=self.high_watermark,
                  last_stable_offset=self.high_watermark, log_start_offset=0, aborted_transactions=None,
                  preferred_read_replica=-1, records=records)])]))
        if not batches:
            return frame, b""
        at = frame.index(records)
        return frame[:at], frame[at + len(records):]

    def _fetch(self, version: int, correlation_id: int, payload: bytes) -> list[Any]:
        _, body = decode_request(payload)
        part = body.topics[0].partitions[0]
        limit = min(part.partition_max_bytes, body.max_bytes) if version >= 3 else part.partition_max_bytes
        batches = max(1, limit // len(self.batch))
        batches = max(0, min(batches, (self.high_watermark - part.fetch_offset) // self.batch_records))
        before, after = self._frame((FETCH, version, batches), lambda: self._fetch_frame(version, batches))
        out: list[Any] = [self._with_correlation(before, correlation_id)]
        for i in range(batches):
            out += [_OFFSET.pack(part.fetch_offset + i * self.batch_records), self._tail]
        out.append(after)
        return out


class _Connection:
    __slots__ = ("buf", "end", "out", "sock", "start", "view")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = bytearray(4 << 20)
        self.view = memoryview(self.buf)
        self.start = self.end = 0
        self.out: collections.deque[Any] = collections.deque()


def serve(port: int, canned: Canned) -> None:
    sel = selectors.DefaultSelector()
    listener = socket.create_server(("127.0.0.1", port), backlog=128)
    listener.setblocking(False)
    sel.register(listener, selectors.EVENT_READ, None)

    def close(c: _Connection) -> None:
        sel.unregister(c.sock)
        c.view.release()
        c.sock.close()

    def flush(c: _Connection) -> None:
        while c.out:
            try:
                sent = c.sock.sendmsg(list(c.out)[:256])
            except BlockingIOError:
                break
            while c.out and sent >= len(c.out[0]):  # empty buffers go too
                sent -= len(c.out.popleft())
            if sent:
                c.out[0] = memoryview(c.out[0])[sent:]
        sel.modify(c.sock, selectors.EVENT_READ | (selectors.EVENT_WRITE if c.out else 0), c)

    def readable(c: _Connection) -> None:
        if c.end == len(c.buf):  # full: move the partial frame to the front, or grow
            left = c.end - c.start
            if c.start == 0:
                c.view.release()
                c.buf += bytes(len(c.buf))
                c.view = memoryview(c.buf)
            else:
                c.buf[:left] = c.buf[c.start:c.end]
                c.start, c.end = 0, left
        try:
            n = c.sock.recv_into(c.view[c.end:])
        except BlockingIOError:
            return
        except ConnectionError:
            n = 0
        if not n:
            close(c)
            return
        c.end += n
        while c.end - c.start >= 4:
            (size,) = _SIZE.unpack_from(c.buf, c.start)
            if c.end - c.start < 4 + size:
                if 4 + size > len(c.buf) - c.start and c.start:
                    left = c.end - c.start
                    c.buf[:left] = c.buf[c.start:c.end]
                    c.start, c.end = 0, left
                break
            try:
                c.out.extend(canned.respond(c.view[c.start + 4:c.start + 4 + size]))
            except ValueError as e:
                print(f"bare server: {e}; closing the connection", file=sys.stderr, flush=True)
                close(c)
                return
            c.start += 4 + size
        if c.start == c.end:
            c.start = c.end = 0
        flush(c)

    while True:
        for key, events in sel.select():
            if key.data is None:
                try:
                    sock, _ = listener.accept()
                except BlockingIOError:
                    continue
                sock.setblocking(False)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sel.register(sock, selectors.EVENT_READ, _Connection(sock))
                continue
            c = key.data
            if events & selectors.EVENT_WRITE:
                flush(c)
            if events & selectors.EVENT_READ and c.sock.fileno() >= 0:
                readable(c)


def main() -> None:
    port, topic, message_bytes, batch_records, log_batches = sys.argv[1:6]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    serve(int(port), Canned(int(port), topic, int(message_bytes), int(batch_records), int(log_batches)))


if __name__ == "__main__":
    main()
