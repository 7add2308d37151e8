"""Raw data-path requests for the client and hostile-payload tests: topics created with
CreateTopics, Produce / Fetch / ListOffsets built from the protocol's own messages, and the
partition's log read back batch by batch (the broker's own view, to hold clients' views against).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import create_topics as ct
from kafkalite.protocol.messages import fetch as fm
from kafkalite.protocol.messages import list_offsets as lo
from kafkalite.protocol.messages import produce as pm
from kafkalite.protocol.records import (
    Compression,
    Record,
    TimestampType,
    build_batch,
    decode_records,
    iter_batches,
)

from .wait import wait_for
from .wire_client import Client

PRODUCE, FETCH, LIST_OFFSETS, CREATE_TOPICS = 0, 1, 2, 19
LATEST, EARLIEST = -1, -2


class LogRecord(NamedTuple):
    """One record as the log holds it: what every client must read back."""

    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]


def create_topic(client: Client, name: str, partitions: int = 1, **configs: str) -> None:
    """CreateTopics v7, then wait until every partition answers ListOffsets (it is led here). A
    broker process just started may not be registered yet (no broker to place replicas on): the
    request is repeated while it says so."""
    R = ct.REQUEST
    topic = R["topics"](name=name, num_partitions=partitions, replication_factor=1, assignments=[],
                        configs=[R["topics"]["configs"](name=k.replace("_", "."), value=v)
                                 for k, v in configs.items()])
    results = []

    def created() -> bool:
        (result,) = client.call(CREATE_TOPICS, 7, R(topics=[topic], timeout_ms=30000)).topics
        results.append(result)
        return bool(result.error_code != E.INVALID_REPLICATION_FACTOR)

    assert wait_for(created, timeout=20, interval=0.05)
    assert results[-1].error_code == 0, (results[-1].error_code, results[-1].error_message)
    assert wait_for(lambda: all(list_offset(client, name, p, LATEST).error_code == 0
                                for p in range(partitions)), timeout=20)


def batch(values: list[bytes | None], *, keys: list[bytes | None] | None = None, timestamp: int = 0,
          compression: Compression = Compression.NONE) -> bytes:
    """A batch of records whose timestamps are ``timestamp`` + their index."""
    keys = keys if keys is not None else [None] * len(values)
    return build_batch([Record(offset_delta=i, timestamp_delta=i, key=k, value=v)
                        for i, (k, v) in enumerate(zip(keys, values, strict=True))],
                       base_timestamp=timestamp, compression=compression)


def produce_request(partitions: dict[tuple[str, int], bytes | None], acks: int = 1,
                    timeout_ms: int = 10000) -> Any:
    R = pm.REQUEST
    topics: dict[str, list[Any]] = {}
    for (topic, index), records in partitions.items():
        topics.setdefault(topic, []).append(R["topic_data"]["partition_data"](index=index, records=records))
    return R(transactional_id=None, acks=acks, timeout_ms=timeout_ms,
             topic_data=[R["topic_data"](name=t, partition_data=ps) for t, ps in topics.items()])


def produce(client: Client, topic: str, records: bytes | None, *, partition: int = 0, acks: int = 1,
            version: int = 9) -> Any:
    """One partition's produce; its partition response."""
    response = client.call(PRODUCE, version, produce_request({(topic, partition): records}, acks))
    (t,) = response.responses
    (p,) = t.partition_responses
    assert (t.name, p.index) == (topic, partition)
    return p


def fetch_request(partitions: list[tuple[str, int, int]], *, max_wait_ms: int = 0, min_bytes: int = 1,
                  max_bytes: int = 1 << 24, partition_max_bytes: int = 1 << 24, replica_id: int = -1) -> Any:
    """A full fetch (session 0, epoch -1) of ``(topic, partition, offset)`` in that order; a
    consumer's unless ``replica_id`` names a follower."""
    R = fm.REQUEST
    P = R["topics"]["partitions"]
    topics: list[Any] = []
    for topic, index, offset in partitions:
        part = P(partition=index, fetch_offset=offset, partition_max_bytes=partition_max_bytes)
        if topics and topics[-1].topic == topic:
            topics[-1].partitions.append(part)
        else:
            topics.append(R["topics"](topic=topic, partitions=[part]))
    return R(replica_id=replica_id, max_wait_ms=max_wait_ms, min_bytes=min_bytes, max_bytes=max_bytes,
             isolation_level=0, topics=topics)


def fetch_partitions(response: Any) -> list[tuple[str, Any]]:
    """``(topic, partition data)`` of a fetch response, in its order."""
    return [(t.topic, p) for t in response.responses for p in t.partitions]


def fetch_one(client: Client, topic: str, partition: int, offset: int, version: int = 12, **kw: Any) -> Any:
    ((name, p),) = fetch_partitions(client.call(FETCH, version,
                                                fetch_request([(topic, partition, offset)], **kw)))
    assert (name, p.partition_index) == (topic, partition)
    return p


def list_offset(client: Client, topic: str, partition: int, timestamp: int, version: int = 7) -> Any:
    R = lo.REQUEST
    req = R(replica_id=-1, isolation_level=0, topics=[R["topics"](name=topic, partitions=[
        R["topics"]["partitions"](partition_index=partition, timestamp=timestamp)])])
    (t,) = client.call(LIST_OFFSETS, version, req).topics
    (p,) = t.partitions
    return p


def log_end(client: Client, topic: str, partition: int = 0) -> int:
    p = list_offset(client, topic, partition, LATEST)
    assert p.error_code == 0, p.error_code
    return int(p.offset)


def decode_batches(records: bytes, partition: int) -> tuple[list[LogRecord], list[Compression]]:
    """The records of whole batches (offsets and timestamps resolved) and each batch's codec."""
    out, codecs = [], []
    for pos, header in iter_batches(records):
        codecs.append(header.compression)
        for r in decode_records(records, pos, header):
            ts = (header.max_timestamp if header.timestamp_type is TimestampType.LOG_APPEND_TIME
                  else header.base_timestamp + r.timestamp_delta)
            out.append(LogRecord(partition, header.base_offset + r.offset_delta, ts, r.key, r.value,
                                 tuple(r.headers)))
    return out, codecs


def read_log(client: Client, topic: str, partition: int = 0) -> tuple[list[LogRecord], list[Compression]]:
    """Every record from the log start to the high watermark, fetched batch by batch."""
    start = list_offset(client, topic, partition, EARLIEST).offset
    end = log_end(client, topic, partition)
    records: list[LogRecord] = []
    codecs: list[Compression] = []
    offset = start
    while offset < end:
        p = fetch_one(client, topic, partition, offset)
        assert p.error_code == 0, p.error_code
        got, batch_codecs = decode_batches(p.records, partition)
        assert got, f"no batch at offset {offset} below the high watermark {end}"
        records += [r for r in got if r.offset >= offset]  # a batch may begin below the fetch offset
        codecs += batch_codecs
        offset = got[-1].offset + 1
    return records, codecs


def fetch_raw(c: Client, topic: str, partition: int, offset: int, replica_id: int = -1) -> tuple[int, bytes]:
    """(error code, records) of a Fetch v11 of at most 1 MiB."""
    p = fetch_one(c, topic, partition, offset, version=11, replica_id=replica_id, max_bytes=1 << 20,
                  partition_max_bytes=1 << 20)
    return int(p.error_code), bytes(p.records or b"")


def read_all(c: Client, topic: str, partition: int, end: int) -> int:
    """Fetch a partition from offset 0 to ``end`` as a consumer does (a segment at most per
    fetch); the record bytes received."""
    offset, received = 0, 0
    while offset < end:
        code, records = fetch_raw(c, topic, partition, offset)
        assert code == E.NONE and records, (topic, partition, offset, code)
        received += len(records)
        offset = [h for _, h in iter_batches(records)][-1].next_offset
    return received


def create_topics_of(c: Client, partitions: dict[str, int]) -> None:
    """Several topics in one CreateTopics v7 ({name: partitions}, replication factor 1), all created
    at once (create_topic waits for one, repeating while no broker is registered)."""
    R = ct.REQUEST
    body = R(timeout_ms=10000, topics=[R["topics"](name=n, num_partitions=k, replication_factor=1)
                                       for n, k in partitions.items()])
    assert [t.error_code for t in c.call(CREATE_TOPICS, 7, body).topics] == [E.NONE] * len(partitions)
