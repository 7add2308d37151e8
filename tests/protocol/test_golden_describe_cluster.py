"""DescribeCluster (key 60, versions 0-2, all flexible) by hand-built bytes for each version
(kio checks every version too: test_kio_oracle.py). Served at every version on every listener."""

from __future__ import annotations

import pytest

from kafkalite.protocol import decode_body, encode_body
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import BY_KEY, describe_cluster
from kafkalite.server.apis import SERVED_BY_KEY, apis_for

from .golden_bytes import FALSE, NO_TAGS, TRUE, i8, i32
from .test_golden_transactions import carray, cs

KEY = ApiKey.DESCRIBE_CLUSTER
VERSIONS = (0, 1, 2)
NULL = b"\x00"  # a null compact nullable string


def _roundtrip(version, value, expected, response=False):
    assert encode_body(KEY, version, value, response=response) == expected
    assert decode_body(KEY, version, expected, response=response) == value


def test_declared_and_served_on_every_listener():
    assert str(BY_KEY[KEY].versions) == "0-2"
    assert all(BY_KEY[KEY].is_flexible(v) for v in VERSIONS)
    assert str(SERVED_BY_KEY[KEY].versions) == "0-2"
    for privileged, controller in [(False, False), (True, False), (True, True)]:
        assert str(apis_for("PLAINTEXT", privileged, controller, frozenset())[KEY]) == "0-2"


@pytest.mark.parametrize("version", VERSIONS)
def test_request_by_hand(version):
    """v0: IncludeClusterAuthorizedOperations; v1 adds EndpointType (int8); v2 IncludeFencedBrokers."""
    request = describe_cluster.REQUEST(include_cluster_authorized_operations=True)
    assert (request.endpoint_type, request.include_fenced_brokers) == (1, False)
    expected = TRUE + (i8(1) if version >= 1 else b"") + (FALSE if version >= 2 else b"") + NO_TAGS
    _roundtrip(version, request, expected)
    if version >= 2:
        asked = describe_cluster.REQUEST(include_cluster_authorized_operations=False, endpoint_type=2,
                                         include_fenced_brokers=True)
        _roundtrip(version, asked, FALSE + i8(2) + TRUE + NO_TAGS)


@pytest.mark.parametrize("version", VERSIONS)
def test_response_by_hand(version):
    R = describe_cluster.RESPONSE
    B = describe_cluster.DESCRIBE_CLUSTER_BROKER
    response = R(throttle_time_ms=0, error_code=0, cluster_id="c1", controller_id=1, brokers=[
        B(broker_id=1, host="h", port=9092, rack="r1"), B(broker_id=2, host="g", port=9093)],
        cluster_authorized_operations=8096)
    assert (response.error_message, response.endpoint_type) == (None, 1)
    fenced = FALSE if version >= 2 else b""
    expected = (i32(0) + b"\x00\x00" + NULL + (i8(1) if version >= 1 else b"") + cs("c1") + i32(1)
                + carray(2)
                + i32(1) + cs("h") + i32(9092) + cs("r1") + fenced + NO_TAGS
                + i32(2) + cs("g") + i32(9093) + NULL + fenced + NO_TAGS
                + i32(8096) + NO_TAGS)
    _roundtrip(version, response, expected, response=True)


def test_error_response_defaults():
    """What Kafka's broker sends with an error: no brokers, controller -1, operations not asked."""
    response = describe_cluster.RESPONSE(throttle_time_ms=0, error_code=114, error_message="m",
                                         cluster_id="", brokers=[])
    assert (response.controller_id, response.cluster_authorized_operations) == (-1, -2147483648)
    _roundtrip(1, response, i32(0) + b"\x00\x72" + cs("m") + i8(1) + cs("") + i32(-1) + carray(0)
               + i32(-2147483648) + NO_TAGS, response=True)
