"""DescribeLogDirs (key 35, versions 0-4, flexible from 2) by hand-built bytes for each version
(kio checks v1-4 too: test_kio_oracle.py; kio, as Kafka 4.0, has no v0, which is v1's bytes).
Served at every version on every listener."""

from __future__ import annotations

import pytest

from kafkalite.protocol import decode_body, encode_body
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import BY_KEY, describe_log_dirs
from kafkalite.server.apis import SERVED_BY_KEY, apis_for

from .golden_bytes import FALSE, NO_TAGS, i16, i32, i64, s16
from .test_golden_transactions import carray, cs

KEY = ApiKey.DESCRIBE_LOG_DIRS
VERSIONS = (0, 1, 2, 3, 4)
KIO_VERSIONS = (1, 2, 3, 4)


def _roundtrip(version, value, expected, response=False):
    assert encode_body(KEY, version, value, response=response) == expected
    assert decode_body(KEY, version, expected, response=response) == value


def test_declared_and_served_on_every_listener():
    assert str(BY_KEY[KEY].versions) == "0-4"
    assert [BY_KEY[KEY].is_flexible(v) for v in VERSIONS] == [False, False, True, True, True]
    # Kafka 4.x removed v0 (KIP-896): declared for the codec's tests, not served.
    assert str(SERVED_BY_KEY[KEY].versions) == "1-4"
    for privileged, controller in [(False, False), (True, False), (True, True)]:
        assert str(apis_for("PLAINTEXT", privileged, controller, frozenset())[KEY]) == "1-4"


@pytest.mark.parametrize("version", VERSIONS)
def test_request_by_hand(version):
    """Topics is a nullable array: -1 (int32) / 0 (compact) for null, every partition."""
    T = describe_log_dirs.DESCRIBABLE_LOG_DIR_TOPIC
    every = describe_log_dirs.REQUEST()
    assert every.topics is None
    named = describe_log_dirs.REQUEST(topics=[T(topic="t", partitions=[0, 2])])
    if version < 2:
        _roundtrip(version, every, i32(-1))
        _roundtrip(version, named, i32(1) + s16("t") + i32(2) + i32(0) + i32(2))
    else:
        _roundtrip(version, every, b"\x00" + NO_TAGS)
        _roundtrip(version, named, carray(1) + cs("t") + carray(2) + i32(0) + i32(2) + NO_TAGS + NO_TAGS)


@pytest.mark.parametrize("version", VERSIONS)
def test_response_by_hand(version):
    """v3 adds the top-level ErrorCode; v4 each dir's TotalBytes and UsableBytes (before v4 they
    are not on the wire and read back as -1)."""
    D = describe_log_dirs
    total, usable = (1000, 400) if version >= 4 else (-1, -1)
    response = D.RESPONSE(throttle_time_ms=5, results=[
        D.DESCRIBE_LOG_DIRS_RESULT(error_code=0, log_dir="/d", total_bytes=total, usable_bytes=usable,
                                   topics=[
            D.DESCRIBE_LOG_DIRS_TOPIC(name="t", partitions=[
                D.DESCRIBE_LOG_DIRS_PARTITION(partition_index=1, partition_size=77, offset_lag=0,
                                              is_future_key=False)])]),
        D.DESCRIBE_LOG_DIRS_RESULT(error_code=56, log_dir="/e", topics=[])])
    assert response.error_code == 0
    assert (response.results[1].total_bytes, response.results[1].usable_bytes) == (-1, -1)
    partition = i32(1) + i64(77) + i64(0) + FALSE
    if version < 2:
        expected = (i32(5) + i32(2)
                    + i16(0) + s16("/d") + i32(1) + s16("t") + i32(1) + partition
                    + i16(56) + s16("/e") + i32(0))
    else:
        def volume(t, u):
            return i64(t) + i64(u) if version >= 4 else b""
        expected = (i32(5) + (i16(0) if version >= 3 else b"") + carray(2)
                    + i16(0) + cs("/d") + carray(1) + cs("t") + carray(1) + partition + NO_TAGS + NO_TAGS
                    + volume(1000, 400) + NO_TAGS
                    + i16(56) + cs("/e") + carray(0) + volume(-1, -1) + NO_TAGS
                    + NO_TAGS)
    _roundtrip(version, response, expected, response=True)


def test_top_level_error_code_v3():
    response = describe_log_dirs.RESPONSE(throttle_time_ms=0, error_code=31, results=[])
    _roundtrip(3, response, i32(0) + i16(31) + carray(0) + NO_TAGS, response=True)


def test_v0_is_v1():
    """kio has no v0: its bytes are v1's, both ways."""
    T = describe_log_dirs.DESCRIBABLE_LOG_DIR_TOPIC
    request = describe_log_dirs.REQUEST(topics=[T(topic="a", partitions=[3])])
    assert encode_body(KEY, 0, request) == encode_body(KEY, 1, request)
