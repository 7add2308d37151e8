"""What every server in the network benchmark answers, built once with kafkalite's own handlers
so that kafkalite and its peers send byte-identical responses: ApiVersions v3, Metadata v12 for
all topics with T topics in the cache, Metadata v12 naming 10 topics, and a small Produce v9
(acks=1, one 100-byte record to topic-0000 partition 0; kafkalite appends it to its log, the
peers answer it as accepted at offset 0, the only bytes that differ)."""

from __future__ import annotations

import uuid

from kafkalite.common.endpoints import Endpoint
from kafkalite.network.request_channel import Request
from kafkalite.protocol import (
    ApiKey,
    decode_request,
    decode_request_header,
    encode_request,
    encode_response,
)
from kafkalite.protocol.messages import api_versions, metadata, produce
from kafkalite.protocol.records import Record, build_batch
from kafkalite.server.apis import SERVED_BY_KEY, apis_for
from kafkalite.server.handlers.api_versions import ApiVersionsApis
from kafkalite.server.handlers.metadata import MetadataApis
from kafkalite.server.kafka_apis import KafkaApis
from kafkalite.server.metadata_cache import (
    BrokerInfo,
    MetadataCache,
    PartitionInfo,
    Snapshot,
    TopicInfo,
)

REQUESTS = {
    "apiversions": (18, 3, api_versions.REQUEST(client_software_name="kafkalite-bench",
                                                 client_software_version="1")),
    "metadata": (3, 12, metadata.REQUEST(topics=None)),
    "metadata-10": (3, 12, metadata.REQUEST(topics=[
        metadata.REQUEST["topics"](name=f"topic-{t:04d}") for t in range(10)],
        allow_auto_topic_creation=False)),
    "produce": (0, 9, produce.REQUEST(acks=1, timeout_ms=30000, topic_data=[produce.TOPIC_PRODUCE_DATA(
        name="topic-0000", partition_data=[produce.PARTITION_PRODUCE_DATA(
            index=0, records=build_batch([Record(0, 0, None, b"x" * 100, ())],
                                         base_timestamp=1_700_000_000_000))])])),
}
# --mix: the requests each connection sends in turn. "all" is every request above (for the
# peers' precomputed answers).
MIXES = {
    "apiversions": ("apiversions",),
    "metadata": ("metadata",),
    "mixed": ("apiversions", "metadata"),
    # Issue 32's mix: Metadata for 10 topics and a small Produce, one each in turn.
    "metadata-produce": ("metadata-10", "produce"),
    "all": tuple(REQUESTS),
}
PRODUCE_TOPIC, PRODUCE_PARTITION = "topic-0000", 0


def metadata_cache(topics: int, port: int) -> MetadataCache:
    me = BrokerInfo(1, (Endpoint("PLAINTEXT", "127.0.0.1", port, "PLAINTEXT"),))
    cache = MetadataCache("kafkalite-bench-cluster-id00", 1, {1: me})
    parts = {p: PartitionInfo(p, 1, 0, (1,), (1,)) for p in range(3)}
    cache.update(lambda s: Snapshot(s.cluster_id, 1, s.brokers, {
        f"topic-{t:04d}": TopicInfo(f"topic-{t:04d}", uuid.UUID(int=t + 1), parts) for t in range(topics)}))
    return cache


def request_frames(mix: str, count: int) -> list[bytes]:
    """``count`` request frames for ``mix`` (a name in MIXES)."""
    kinds = MIXES[mix]
    return [encode_request(*REQUESTS[kinds[i % len(kinds)]][:2], i, "bench",
                           REQUESTS[kinds[i % len(kinds)]][2]) for i in range(count)]


class Responder:
    """payload -> response frame, through kafkalite's KafkaApis (the peers' request handler)."""

    def __init__(self, topics: int, port: int) -> None:
        # Only the apis the load generator sends (REQUESTS), with the broker's own handlers;
        # Metadata creates no topic.
        served = [SERVED_BY_KEY[ApiKey(key)] for key, _, _ in REQUESTS.values() if key != ApiKey.PRODUCE]
        versions = ApiVersionsApis(lambda name, privileged: apis_for(name, privileged, advertised=True))
        self.apis = KafkaApis(versions, MetadataApis(metadata_cache(topics, port)), served=served)

    def __call__(self, payload: bytes | bytearray) -> bytes:
        """The answer to one request frame (a FrameDecoder's frames are bytearrays)."""
        header, body = decode_request(payload)
        if header.request_api_key == ApiKey.PRODUCE:  # accepted, with no log behind it
            frame = encode_response(ApiKey.PRODUCE, header.request_api_version, header.correlation_id,
                                    produce_response(body))
            assert isinstance(frame, bytes)  # no records in a Produce answer
            return frame
        request = Request(processor=0, connection_id="peer", listener="PLAINTEXT",
                          security_protocol="PLAINTEXT", header=header, body=body, size=len(payload),
                          client_address="127.0.0.1", client_software_name="bench",
                          client_software_version="1", privileged=False)
        return self.apis.handle(request).payload  # type: ignore[union-attr]


def produce_response(body: object) -> object:
    """Every partition of a Produce request accepted at offset 0."""
    return produce.RESPONSE(throttle_time_ms=0, responses=[produce.TOPIC_PRODUCE_RESPONSE(
        name=t.name, partition_responses=[produce.PARTITION_PRODUCE_RESPONSE(
            index=p.index, error_code=0, base_offset=0, log_append_time_ms=-1, log_start_offset=0,
            record_errors=[]) for p in t.partition_data]) for t in body.topic_data])  # type: ignore[attr-defined]


__all__ = ["REQUESTS", "Responder", "decode_request_header", "metadata_cache", "request_frames"]
