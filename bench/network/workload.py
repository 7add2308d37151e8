"""What every server in the network benchmark answers, built once with kafkalite's own handlers
so that kafkalite and its peers send byte-identical responses: ApiVersions v3, and Metadata v12
for all topics with T topics in the cache."""

from __future__ import annotations

import uuid

from kafkalite.common.endpoints import Endpoint
from kafkalite.network.request_channel import Request
from kafkalite.protocol import ApiKey, decode_request, decode_request_header, encode_request
from kafkalite.protocol.messages import api_versions, metadata
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
}


def metadata_cache(topics: int, port: int) -> MetadataCache:
    me = BrokerInfo(1, (Endpoint("PLAINTEXT", "127.0.0.1", port, "PLAINTEXT"),))
    cache = MetadataCache("kafkalite-bench-cluster-id00", 1, {1: me})
    parts = {p: PartitionInfo(p, 1, 0, (1,), (1,)) for p in range(3)}
    cache.update(lambda s: Snapshot(s.cluster_id, 1, s.brokers, {
        f"topic-{t:04d}": TopicInfo(f"topic-{t:04d}", uuid.UUID(int=t + 1), parts) for t in range(topics)}))
    return cache


def request_frames(mix: str, count: int) -> list[bytes]:
    """``count`` request frames for ``mix`` ("apiversions", "metadata" or "mixed")."""
    kinds = ["apiversions", "metadata"] if mix == "mixed" else [mix]
    return [encode_request(*REQUESTS[kinds[i % len(kinds)]][:2], i, "bench",
                           REQUESTS[kinds[i % len(kinds)]][2]) for i in range(count)]


class Responder:
    """payload -> response frame, through kafkalite's KafkaApis (the peers' request handler)."""

    def __init__(self, topics: int, port: int) -> None:
        # Only the apis the load generator sends (REQUESTS), with the broker's own handlers;
        # Metadata creates no topic.
        served = [SERVED_BY_KEY[ApiKey(key)] for key, _, _ in REQUESTS.values()]
        versions = ApiVersionsApis(lambda name, privileged: apis_for(name, privileged, advertised=True))
        self.apis = KafkaApis(versions, MetadataApis(metadata_cache(topics, port)), served=served)

    def __call__(self, payload: bytes | bytearray) -> bytes:
        """The answer to one request frame (a FrameDecoder's frames are bytearrays)."""
        header, body = decode_request(payload)
        request = Request(processor=0, connection_id="peer", listener="PLAINTEXT",
                          security_protocol="PLAINTEXT", header=header, body=body, size=len(payload),
                          client_address="127.0.0.1", client_software_name="bench",
                          client_software_version="1", privileged=False)
        return self.apis.handle(request).payload  # type: ignore[union-attr]


__all__ = ["REQUESTS", "Responder", "decode_request_header", "metadata_cache", "request_frames"]
