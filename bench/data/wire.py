"""Raw Produce and Fetch on kafkalite's protocol package, fast enough not to be what is measured:
a request frame is encoded once and sent many times with N in flight on one connection, and
responses are read with ``recv_into`` into one buffer that is reused. Produce responses are small
and decoded whole (every error code is checked); a Fetch response's records are located in place
(``fetch_records``), never copied, and checked by length and first offset."""

from __future__ import annotations

import array
import math
import socket
import struct
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from kafkalite.protocol import decode_body, decode_response, encode_request
from kafkalite.protocol.messages import create_topics, fetch, list_offsets, metadata, produce
from kafkalite.protocol.primitives import read_uvarint
from kafkalite.protocol.records import Record, build_batch

PRODUCE, FETCH, LIST_OFFSETS, METADATA, CREATE_TOPICS = 0, 1, 2, 3, 19
# The newest versions both kafkalite and the mock serve (the mock: Produce 0-10, Fetch 0-16; Fetch
# 12 is the last that names topics, so no topic id has to be looked up first).
PRODUCE_VERSION = 9
FETCH_VERSION = 12
CLIENT_ID = "kafkalite-bench"

_SIZE = struct.Struct(">i")
_OFFSET = struct.Struct(">q")
_FETCH_HEAD = struct.Struct(">ihi")  # throttle_time_ms, error_code, session_id
_PARTITION_HEAD = struct.Struct(">ihqqq")  # index, error_code, high watermark, LSO, log start


class WireError(RuntimeError):
    """A server answered a benchmark request with an error or with other records than expected."""


def record_batch(message_bytes: int, count: int) -> bytes:
    """One uncompressed RecordBatch v2 of ``count`` records with ``message_bytes``-byte values
    (no key), timestamped now."""
    value = (bytes(range(256)) * (message_bytes // 256 + 1))[:message_bytes]
    records = [Record(offset_delta=i, timestamp_delta=0, key=None, value=value) for i in range(count)]
    return build_batch(records, base_timestamp=int(time.time() * 1000))


def produce_frame(topic: str, partition: int, batch: bytes, acks: int = 1, correlation_id: int = 1) -> bytes:
    R = produce.REQUEST
    body = R(transactional_id=None, acks=acks, timeout_ms=30000, topic_data=[
        R["topic_data"](name=topic, partition_data=[R["topic_data"]["partition_data"](
            index=partition, records=batch)])])
    return encode_request(PRODUCE, PRODUCE_VERSION, correlation_id, CLIENT_ID, body)


def fetch_frame(topic: str, partition: int, offset: int, max_bytes: int, correlation_id: int = 1) -> bytes:
    """A full fetch (no session) that answers at once with what there is, up to ``max_bytes``."""
    R = fetch.REQUEST
    part = R["topics"]["partitions"](partition=partition, fetch_offset=offset, partition_max_bytes=max_bytes)
    body = R(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=max_bytes, isolation_level=0,
             topics=[R["topics"](topic=topic, partitions=[part])])
    return encode_request(FETCH, FETCH_VERSION, correlation_id, CLIENT_ID, body)


def produce_errors(payload: Any) -> list[int]:
    """The non-zero error codes of a Produce response."""
    _, response = decode_response(bytes(payload), PRODUCE, PRODUCE_VERSION)
    return [p.error_code for t in response.responses for p in t.partition_responses if p.error_code]


def _skip_tags(buf: Any, pos: int) -> int:
    n, pos = read_uvarint(buf, pos)
    for _ in range(n):
        _, pos = read_uvarint(buf, pos)
        size, pos = read_uvarint(buf, pos)
        pos += size
    return pos


def fetch_records(payload: Any) -> tuple[int, int, int]:
    """(error code, position, length) of the records of a Fetch v12 response for one partition,
    read in place: the top-level error if any, else the partition's."""
    pos = _skip_tags(payload, 4)  # correlation id, then the response header's tagged fields
    _, error, _ = _FETCH_HEAD.unpack_from(payload, pos)
    pos += _FETCH_HEAD.size
    if error:
        return error, pos, 0
    topics, pos = read_uvarint(payload, pos)
    if topics != 2:
        raise WireError(f"a fetch of one partition answered for {topics - 1} topics")
    name_length, pos = read_uvarint(payload, pos)
    pos += name_length - 1
    partitions, pos = read_uvarint(payload, pos)
    if partitions != 2:
        raise WireError(f"a fetch of one partition answered for {partitions - 1} partitions")
    _, error, _, _, _ = _PARTITION_HEAD.unpack_from(payload, pos)
    pos += _PARTITION_HEAD.size
    aborted, pos = read_uvarint(payload, pos)
    pos += max(aborted - 1, 0) * 17  # producer id, first offset, empty tags
    pos += 4  # preferred read replica
    length, pos = read_uvarint(payload, pos)
    return error, pos, max(length - 1, 0)


class Connection:
    """One blocking connection whose responses land in a buffer reused for every frame."""

    def __init__(self, host: str, port: int, buffer_bytes: int = 8 << 20, timeout: float = 60.0) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buf = bytearray(buffer_bytes)
        self._view = memoryview(self._buf)
        self._start = self._end = 0

    def close(self) -> None:
        self._view.release()
        self.sock.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _fill(self, need: int) -> None:
        """Read until ``need`` bytes from ``_start`` are buffered."""
        if self._start + need > len(self._buf):
            left = self._end - self._start
            if need > len(self._buf):
                self._view.release()
                bigger = bytearray(max(need, 2 * len(self._buf)))
                bigger[:left] = self._buf[self._start:self._end]
                self._buf, self._view = bigger, memoryview(bigger)
            else:
                self._buf[:left] = self._buf[self._start:self._end]
            self._start, self._end = 0, left
        while self._end - self._start < need:
            n = self.sock.recv_into(self._view[self._end:])
            if not n:
                raise ConnectionError("the server closed the connection")
            self._end += n

    def frame(self) -> memoryview:
        """The next response's payload (correlation id onwards), valid until the next call."""
        self._fill(4)
        (size,) = _SIZE.unpack_from(self._buf, self._start)
        self._fill(4 + size)
        start = self._start + 4
        self._start = start + size
        return self._view[start:start + size]

    def call(self, frame: bytes, api_key: int, version: int) -> Any:
        """Send a request of a flexible version, return its response's body."""
        self.sock.sendall(frame)
        payload = bytes(self.frame())
        # Trailing bytes are let be: the mock's Metadata v12 answer has one.
        return decode_body(api_key, version, payload, _skip_tags(payload, 4), response=True, strict=False)


class Throughput(NamedTuple):
    requests: int
    record_bytes: int
    seconds: float

    @property
    def mb_per_second(self) -> float:
        return self.record_bytes / self.seconds / 1e6


def pipelined_produce(conn: Connection, frame: bytes, record_bytes: int, depth: int,
                      seconds: float | None = None, requests: int | None = None,
                      on_response: Callable[[int], None] | None = None) -> Throughput:
    """Send ``frame`` with ``depth`` in flight for ``seconds`` or ``requests`` in all (what comes
    first); every response is decoded and must carry no error."""
    deadline = time.perf_counter() + seconds if seconds is not None else math.inf
    limit = requests if requests is not None else math.inf
    sent = done = 0
    start = time.perf_counter()
    while True:
        while sent - done < depth and sent < limit and time.perf_counter() < deadline:
            conn.sock.sendall(frame)
            sent += 1
        if sent == done:
            break
        errors = produce_errors(conn.frame())
        if errors:
            raise WireError(f"Produce answered with error codes {errors}")
        done += 1
        if on_response is not None:
            on_response(done)
    return Throughput(done, done * record_bytes, time.perf_counter() - start)


def round_trips(conn: Connection, frame: bytes, seconds: float, at_most: int = 1_000_000) -> array.array:
    """One request at a time for ``seconds``: each round trip in ns."""
    out = array.array("q")
    now = time.perf_counter_ns
    deadline = now() + int(seconds * 1e9)
    while len(out) < at_most:
        t = now()
        if t >= deadline:
            break
        conn.sock.sendall(frame)
        errors = produce_errors(conn.frame())
        out.append(now() - t)
        if errors:
            raise WireError(f"Produce answered with error codes {errors}")
    return out


class FetchStep(NamedTuple):
    frame: bytes
    offset: int  # the first batch's base offset the response must carry
    size: int  # the records' length it must carry


def fetch_plan(topic: str, partition: int, batch_records: int, batch_bytes: int, batches: int,
               per_fetch: int = 1, first_batch: int = 0) -> list[FetchStep]:
    """Fetches reading ``batches`` identical batches (``batch_records`` records, ``batch_bytes``
    bytes each, as the raw producer writes them) ``per_fetch`` at a time: their offsets are known
    before any answer, so the fetches can be pipelined."""
    steps = []
    for i in range(first_batch, first_batch + batches, per_fetch):
        n = min(per_fetch, first_batch + batches - i)
        steps.append(FetchStep(fetch_frame(topic, partition, i * batch_records, n * batch_bytes),
                               i * batch_records, n * batch_bytes))
    return steps


def _cycle(plan: list[FetchStep], once: bool) -> Iterator[FetchStep]:
    while True:
        yield from plan
        if once:
            return


def pipelined_fetch(conn: Connection, plan: list[FetchStep], depth: int,
                    seconds: float | None = None) -> Throughput:
    """Fetch along ``plan`` with ``depth`` in flight: once through it, or round and round it for
    ``seconds``. Each response must carry exactly the records planned."""
    steps = _cycle(plan, seconds is None)
    deadline = time.perf_counter() + seconds if seconds is not None else math.inf
    pending: list[FetchStep] = []
    done = received = 0
    start = time.perf_counter()
    while True:
        while len(pending) < depth and time.perf_counter() < deadline:
            step = next(steps, None)
            if step is None:
                break
            conn.sock.sendall(step.frame)
            pending.append(step)
        if not pending:
            break
        expected = pending.pop(0)
        payload = conn.frame()
        error, pos, length = fetch_records(payload)
        if error:
            raise WireError(f"Fetch at offset {expected.offset} answered with error code {error}")
        first = _OFFSET.unpack_from(payload, pos)[0] if length >= 8 else None
        if length != expected.size or first != expected.offset:
            raise WireError(f"Fetch at offset {expected.offset} answered {length} bytes from offset "
                            f"{first}, not {expected.size} bytes")
        done += 1
        received += length
    return Throughput(done, received, time.perf_counter() - start)


def create_topic(conn: Connection, topic: str, partitions: int = 1, timeout: float = 30.0) -> None:
    """CreateTopics v7 (retried while the controller is not ready), then wait until partition 0
    answers ListOffsets: kafkalite's way."""
    R = create_topics.REQUEST
    request = encode_request(CREATE_TOPICS, 7, 1, CLIENT_ID, R(topics=[R["topics"](
        name=topic, num_partitions=partitions, replication_factor=1, assignments=[], configs=[])],
        timeout_ms=30000))
    deadline = time.monotonic() + timeout
    while True:
        (result,) = conn.call(request, CREATE_TOPICS, 7).topics
        if result.error_code in (0, 36):  # created, or TOPIC_ALREADY_EXISTS from a retry
            break
        if time.monotonic() > deadline:
            raise WireError(f"CreateTopics {topic}: error {result.error_code} {result.error_message}")
        time.sleep(0.1)
    wait_for_partition(conn, topic, deadline)


def auto_create_topic(conn: Connection, topic: str, timeout: float = 30.0) -> None:
    """Metadata naming the topic with auto-creation allowed, then wait for partition 0: the
    mock's way (it serves no CreateTopics; it creates 4 partitions, the benchmarks use one)."""
    R = metadata.REQUEST
    request = encode_request(METADATA, 12, 1, CLIENT_ID, R(
        topics=[R["topics"](topic_id=uuid.UUID(int=0), name=topic)], allow_auto_topic_creation=True,
        include_topic_authorized_operations=False))
    conn.call(request, METADATA, 12)
    wait_for_partition(conn, topic, time.monotonic() + timeout)


def log_end_offset(conn: Connection, topic: str, partition: int = 0) -> tuple[int, int]:
    """(error code, latest offset) of a partition, by ListOffsets v7."""
    R = list_offsets.REQUEST
    request = encode_request(LIST_OFFSETS, 7, 1, CLIENT_ID, R(replica_id=-1, isolation_level=0, topics=[
        R["topics"](name=topic, partitions=[R["topics"]["partitions"](partition_index=partition,
                                                                      timestamp=-1)])]))
    (t,) = conn.call(request, LIST_OFFSETS, 7).topics
    (p,) = t.partitions
    return p.error_code, p.offset


def wait_for_partition(conn: Connection, topic: str, deadline: float) -> None:
    while True:
        error, _ = log_end_offset(conn, topic)
        if error == 0:
            return
        if time.monotonic() > deadline:
            raise WireError(f"{topic}-0 not ready: ListOffsets error {error}")
        time.sleep(0.1)
