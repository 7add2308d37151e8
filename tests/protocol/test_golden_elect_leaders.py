"""ElectLeaders (key 43, versions 0-2, flexible from 2) by hand-built bytes for each version
(kio checks every version too: test_kio_oracle.py). Served at every version on every listener."""

from __future__ import annotations

import pytest

from kafkalite.protocol import decode_body, encode_body
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import BY_KEY, elect_leaders
from kafkalite.server.apis import SERVED_BY_KEY, apis_for

from .golden_bytes import NO_TAGS, i8, i16, i32, s16
from .test_golden_transactions import carray, cs

KEY = ApiKey.ELECT_LEADERS
VERSIONS = (0, 1, 2)
L = elect_leaders


def _roundtrip(version, value, expected, response=False):
    assert encode_body(KEY, version, value, response=response) == expected
    assert decode_body(KEY, version, expected, response=response) == value


def test_declared_and_served_on_every_listener():
    assert str(BY_KEY[KEY].versions) == "0-2"
    assert [BY_KEY[KEY].is_flexible(v) for v in VERSIONS] == [False, False, True]
    assert str(SERVED_BY_KEY[KEY].versions) == "0-2"
    for privileged, controller in [(False, False), (True, False), (True, True)]:
        assert str(apis_for("PLAINTEXT", privileged, controller, frozenset())[KEY]) == "0-2"


@pytest.mark.parametrize("version", VERSIONS)
def test_request_by_hand(version):
    """v1 puts ElectionType (int8) first; TopicPartitions is nullable (-1 / compact 0: every
    partition); TimeoutMs defaults to 60000."""
    every = L.REQUEST(election_type=L.PREFERRED if version == 0 else L.UNCLEAN)
    assert every.topic_partitions is None and every.timeout_ms == 60000
    named = L.REQUEST(election_type=L.PREFERRED, timeout_ms=5000,
                      topic_partitions=[L.TOPIC_PARTITIONS(topic="t", partitions=[0, 2])])
    etype = (lambda t: b"") if version == 0 else i8
    if version < 2:
        _roundtrip(version, every, etype(every.election_type) + i32(-1) + i32(60000))
        _roundtrip(version, named, etype(0) + i32(1) + s16("t") + i32(2) + i32(0) + i32(2) + i32(5000))
    else:
        _roundtrip(version, every, i8(1) + b"\x00" + i32(60000) + NO_TAGS)
        _roundtrip(version, named, i8(0) + carray(1) + cs("t") + carray(2) + i32(0) + i32(2) + NO_TAGS
                   + i32(5000) + NO_TAGS)


@pytest.mark.parametrize("version", VERSIONS)
def test_response_by_hand(version):
    """v1 adds the top-level ErrorCode; each partition's ErrorMessage is a nullable string."""
    response = L.RESPONSE(throttle_time_ms=7, replica_election_results=[
        L.REPLICA_ELECTION_RESULT(topic="t", partition_result=[
            L.PARTITION_RESULT(partition_id=0, error_code=0),
            L.PARTITION_RESULT(partition_id=1, error_code=80, error_message="no")])])
    assert response.error_code == 0
    assert response.replica_election_results[0].partition_result[0].error_message is None
    if version < 2:
        expected = (i32(7) + (i16(0) if version >= 1 else b"") + i32(1) + s16("t") + i32(2)
                    + i32(0) + i16(0) + i16(-1)
                    + i32(1) + i16(80) + s16("no"))
    else:
        expected = (i32(7) + i16(0) + carray(1) + cs("t") + carray(2)
                    + i32(0) + i16(0) + b"\x00" + NO_TAGS
                    + i32(1) + i16(80) + cs("no") + NO_TAGS
                    + NO_TAGS + NO_TAGS)
    _roundtrip(version, response, expected, response=True)


def test_top_level_error_code_v1():
    response = L.RESPONSE(throttle_time_ms=0, error_code=42, replica_election_results=[])
    _roundtrip(1, response, i32(0) + i16(42) + i32(0), response=True)
