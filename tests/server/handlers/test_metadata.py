"""Metadata answers reused while the metadata snapshot is the same (handlers/metadata.py): the
same bytes as a fresh answer, never across a metadata change, a listener, other topics or flags,
and not with an authorizer or for unknown topics."""

from __future__ import annotations

import uuid
from typing import Any

from kafkalite.common.endpoints import Endpoint
from kafkalite.network.request_channel import Request, SendResponse
from kafkalite.protocol import ApiKey, decode_response
from kafkalite.protocol.headers import REQUEST_HEADER
from kafkalite.protocol.messages import metadata
from kafkalite.server.apis import SERVED_BY_KEY
from kafkalite.server.authorizer import AllowAll
from kafkalite.server.checks import Checks
from kafkalite.server.handlers.metadata import MetadataApis
from kafkalite.server.kafka_apis import KafkaApis
from kafkalite.server.metadata_cache import BrokerInfo, MetadataCache, PartitionInfo, Snapshot, TopicInfo

LISTENERS = (Endpoint("PLAINTEXT", "127.0.0.1", 9092, "PLAINTEXT"),
             Endpoint("INTERNAL", "127.0.0.1", 9093, "PLAINTEXT"))
PARTS = {p: PartitionInfo(p, 1, 0, (1,), (1,)) for p in range(3)}


def cache(topics: int) -> MetadataCache:
    c = MetadataCache("cluster-id-for-the-tests-0000", 1, {1: BrokerInfo(1, LISTENERS)})
    add_topics(c, range(topics))
    return c


def add_topics(c: MetadataCache, numbers: range) -> None:
    c.update(lambda s: Snapshot(s.cluster_id, 1, s.brokers, {**s.topics, **{
        f"t{n}": TopicInfo(f"t{n}", uuid.UUID(int=n + 1), PARTS) for n in numbers}}))


def apis(c: MetadataCache, checks: Checks | None = None) -> tuple[KafkaApis, MetadataApis]:
    area = MetadataApis(c)
    return KafkaApis(area, served=[SERVED_BY_KEY[ApiKey.METADATA]],
                     checks=checks if checks is not None else Checks(c)), area


def request(version: int = 12, topics: list[str] | None = None, listener: str = "PLAINTEXT",
            correlation_id: int = 7, **flags: Any) -> Request:
    T = metadata.REQUEST["topics"]
    body = metadata.REQUEST(topics=None if topics is None else [T(name=n) for n in topics], **flags)
    header = REQUEST_HEADER(request_api_key=3, request_api_version=version,
                            correlation_id=correlation_id, client_id="test")
    return Request(processor=0, connection_id="c", listener=listener, security_protocol="PLAINTEXT",
                   header=header, body=body, size=0, client_address="127.0.0.1",
                   client_software_name="x", client_software_version="1", privileged=False)


def answer(k: KafkaApis, r: Request) -> bytes:
    response = k.handle(r)
    assert isinstance(response, SendResponse)
    return bytes(response.payload)  # type: ignore[arg-type]


def fresh(c: MetadataCache, r: Request) -> bytes:
    """The answer of handlers that never answered anything before."""
    return answer(apis(c)[0], r)


def test_a_reused_answer_is_the_fresh_answer_with_its_correlation_id():
    c = cache(10)
    k, area = apis(c)
    for version in (3, 8, 9, 12):
        for n, topics in enumerate((None, ["t1", "t3"])):
            first = answer(k, request(version, topics, correlation_id=1))
            again = answer(k, request(version, topics, correlation_id=2 + n))
            assert first == fresh(c, request(version, topics, correlation_id=1))
            assert again == fresh(c, request(version, topics, correlation_id=2 + n))
    assert area.answers_reused == 8


def test_a_metadata_change_is_seen_at_once():
    c = cache(2)
    k, area = apis(c)
    before = answer(k, request())
    add_topics(c, range(2, 4))
    after = answer(k, request())
    assert after == fresh(c, request()) and after != before
    names = {t.name for t in decode_response(after[4:], 3, 12)[1].topics}
    assert names == {"t0", "t1", "t2", "t3"}
    assert area.answers_reused == 0


def test_listeners_topics_and_flags_are_answered_apart():
    c = cache(4)
    k, area = apis(c)
    cases: list[dict[str, Any]] = [
        dict(listener="PLAINTEXT"), dict(listener="INTERNAL"), dict(topics=["t1"]), dict(topics=["t2"]),
        dict(include_topic_authorized_operations=True),
        dict(version=10, include_cluster_authorized_operations=True)]
    for case in cases + cases:  # (a request is handled once: the checks leave their hooks on it)
        assert answer(k, request(**case)) == fresh(c, request(**case))
    assert area.answers_reused == len(cases)
    ports = {decode_response(answer(k, request(**case))[4:], 3, 12)[1].brokers[0].port for case in cases[:2]}
    assert ports == {9092, 9093}


def test_unknown_topics_and_old_versions_are_answered_each_time():
    c = cache(1)
    k, area = apis(c)
    for case in (dict(topics=["t0", "nope"], allow_auto_topic_creation=False), dict(version=2)):
        answer(k, request(**case))
        assert answer(k, request(**case)) == fresh(c, request(**case))
    assert area.answers_reused == 0


class Authorizer(AllowAll):
    """An authorizer that allows everything: still not ALLOW_ALL, so answers may differ by
    principal and none is kept."""


def test_no_answer_is_kept_with_an_authorizer():
    c = cache(3)
    k, area = apis(c, Checks(c, lambda: Authorizer()))
    answer(k, request())
    answer(k, request())
    assert area.answers_reused == 0


class Quotas:
    """Client quotas that throttle every answer by 25 ms."""

    def on_response(self, request: Request, body: Any) -> None:
        body.throttle_time_ms = 25


def test_a_reused_answer_carries_its_own_throttle_time():
    c = cache(3)
    k, area = apis(c)
    answer(k, request())
    k.quotas = Quotas()
    for version in (9, 12, 3):  # flexible header (one more byte) and not
        if version == 3:
            k.quotas = None
            answer(k, request(version))
            k.quotas = Quotas()
        got = decode_response(answer(k, request(version))[4:], 3, version)[1]
        assert got.throttle_time_ms == 25
    assert area.answers_reused == 2  # v12 and v3 reused; v9 throttled at first: not kept
