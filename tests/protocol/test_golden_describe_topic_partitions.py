"""DescribeTopicPartitions v0 (KIP-966): bytes built by hand from Kafka's JSON (kio, which has the
api, is its oracle both ways in test_kio_oracle.py). Its two cursors are nullable structs, the
first in kafkalite's declarations: one byte, -1 for null, 1 before the struct."""

from __future__ import annotations

import uuid

import pytest

from kafkalite.protocol import decode_body, encode_body
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.errors import DecodeError
from kafkalite.protocol.messages import BY_KEY
from kafkalite.protocol.messages import describe_topic_partitions as dtp
from kafkalite.server.apis import SERVED_BY_KEY, apis_for

from .golden_bytes import FALSE, NO_TAGS, TRUE, i16, i32

KEY = ApiKey.DESCRIBE_TOPIC_PARTITIONS
API = BY_KEY[KEY]
NULL = b"\xff"
PRESENT = b"\x01"
TOPIC_ID = uuid.UUID("0123456789abcdef0123456789abcdef")


def cs(text: str) -> bytes:
    return bytes([len(text) + 1]) + text.encode()


def carray(n: int) -> bytes:
    return bytes([n + 1])


def ints(*values: int) -> bytes:
    return carray(len(values)) + b"".join(i32(v) for v in values)


def _roundtrip(value, expected, response=False):
    assert encode_body(KEY, 0, value, response=response) == expected
    assert decode_body(KEY, 0, expected, response=response) == value


def test_request_without_a_cursor():
    request = dtp.REQUEST(topics=[dtp.TOPIC_REQUEST(name="a"), dtp.TOPIC_REQUEST(name="bc")],
                          response_partition_limit=7)
    assert request.cursor is None
    _roundtrip(request, carray(2) + cs("a") + NO_TAGS + cs("bc") + NO_TAGS + i32(7) + NULL + NO_TAGS)


def test_request_defaults_and_a_cursor():
    request = dtp.REQUEST(cursor=dtp.CURSOR(topic_name="t", partition_index=3))
    assert request.response_partition_limit == 2000
    _roundtrip(request, carray(0) + i32(2000) + PRESENT + cs("t") + i32(3) + NO_TAGS + NO_TAGS)


def _partition(**kw):
    base = dict(error_code=0, partition_index=1, leader_id=2, leader_epoch=5, replica_nodes=[2, 3],
                isr_nodes=[2], eligible_leader_replicas=[], last_known_elr=None, offline_replicas=[3])
    return dtp.RESPONSE_PARTITION(**{**base, **kw})


PARTITION_BYTES = (i16(0) + i32(1) + i32(2) + i32(5) + ints(2, 3) + ints(2) + ints() + b"\x00"
                   + ints(3) + NO_TAGS)


def test_response_with_a_next_cursor():
    topic = dtp.RESPONSE_TOPIC(error_code=0, name="t", topic_id=TOPIC_ID, is_internal=True,
                               partitions=[_partition()])
    response = dtp.RESPONSE(throttle_time_ms=0, topics=[topic],
                            next_cursor=dtp.CURSOR(topic_name="t", partition_index=2))
    expected = (i32(0) + carray(1) + i16(0) + cs("t") + TOPIC_ID.bytes + TRUE + carray(1) + PARTITION_BYTES
                + i32(-2147483648) + NO_TAGS + PRESENT + cs("t") + i32(2) + NO_TAGS + NO_TAGS)
    _roundtrip(response, expected, response=True)


def test_response_unknown_topic_and_no_cursor():
    topic = dtp.RESPONSE_TOPIC(error_code=3, name="nope", topic_id=uuid.UUID(int=0), partitions=[])
    assert topic.is_internal is False and topic.topic_authorized_operations == -2147483648
    response = dtp.RESPONSE(throttle_time_ms=0, topics=[topic])
    expected = (i32(0) + carray(1) + i16(3) + cs("nope") + bytes(16) + FALSE + carray(0) + i32(-2147483648)
                + NO_TAGS + NULL + NO_TAGS)
    _roundtrip(response, expected, response=True)


def test_any_negative_marker_reads_as_null_and_a_truncated_cursor_fails():
    """Kafka reads the marker as a signed byte: any negative value is null."""
    body = carray(0) + i32(10) + b"\x80" + NO_TAGS
    assert decode_body(KEY, 0, body).cursor is None
    with pytest.raises(DecodeError):
        decode_body(KEY, 0, carray(0) + i32(10) + PRESENT + cs("t"))


@pytest.mark.parametrize(("privileged", "controller"), [(False, False), (True, False), (True, True)])
def test_served_at_v0_on_every_listener(privileged, controller):
    assert str(API.versions) == "0" and API.is_flexible(0)
    assert str(SERVED_BY_KEY[KEY].versions) == "0"
    assert KEY in apis_for("PLAINTEXT", privileged, controller, frozenset())
