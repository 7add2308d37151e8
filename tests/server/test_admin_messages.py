"""DescribeConfigs and CreatePartitions as declared (kafkalite/protocol/messages) against kio,
generated from Kafka's own specs: the same fields in every version, and the same bytes both ways
(the oracle of tests/protocol/test_kio_oracle.py, for these two apis)."""

from __future__ import annotations

import struct

import pytest

pytest.importorskip("kio")

from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalite.protocol import decode_body, encode_body
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import BY_KEY, describe_configs

from ..protocol.kio_bridge import (
    kafkalite_to_dict,
    kio_compatible_value,
    kio_decode,
    kio_encode,
    kio_entity,
    kio_to_dict,
    oracle_cases,
    to_kio,
)
from ..protocol.test_kio_oracle import _same_fields

APIS = [BY_KEY[ApiKey.DESCRIBE_CONFIGS], BY_KEY[ApiKey.CREATE_PARTITIONS]]
CASES = [pytest.param(a, v, r, id=f"{a.name}-v{v}-{'response' if r else 'request'}")
         for a, v, r in oracle_cases(APIS)]


def test_every_version_kio_has_is_covered():
    # kio has no DescribeConfigs v0: test_describe_configs_v0_bytes checks that one.
    versions = {(c.values[0].name, c.values[1]) for c in CASES}
    expected = {("DescribeConfigs", v) for v in range(1, 5)} | {("CreatePartitions", v) for v in range(4)}
    assert versions == expected


def test_describe_configs_v0_bytes():
    """v0 from the spec: an entry has is_default and neither a source nor synonyms."""
    R = describe_configs.RESPONSE
    entry = R["results"]["configs"](name="a", value=None, read_only=True, is_default=True, is_sensitive=True,
                                    config_source=4, synonyms=[R["results"]["configs"]["synonyms"]()])
    body = R(throttle_time_ms=1, results=[R["results"](error_code=0, error_message=None, resource_type=4,
                                                       resource_name="1", configs=[entry])])
    expected = (struct.pack(">ii", 1, 1) + struct.pack(">hh", 0, -1) + b"\x04"  # throttle, results, error
                + struct.pack(">h", 1) + b"1" + struct.pack(">i", 1)  # resource name, one entry
                + struct.pack(">h", 1) + b"a" + struct.pack(">h", -1)  # name, null value
                + b"\x01\x01\x01")  # read only, is default, sensitive
    assert encode_body(ApiKey.DESCRIBE_CONFIGS, 0, body, response=True) == expected
    back = decode_body(ApiKey.DESCRIBE_CONFIGS, 0, expected, response=True)
    assert back.results[0].configs[0].is_default and back.results[0].configs[0].config_source == -1


@pytest.mark.parametrize(("api", "version", "response"), CASES)
def test_same_fields_as_kio(api, version, response):
    entity = kio_entity(api.key, version, response)
    struct = api.response if response else api.request
    assert _same_fields(struct, entity, version, entity.__name__) == []


@pytest.mark.parametrize(("api", "version", "response"), CASES)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_same_bytes_as_kio_both_ways(api, version, response, data):
    struct = api.response if response else api.request
    entity_type = kio_entity(api.key, version, response)
    value = data.draw(kio_compatible_value(struct, version, entity_type))
    encoded = encode_body(api.key, version, value, response=response)
    entity = to_kio(value, entity_type)
    assert encoded == kio_encode(entity)
    assert kio_to_dict(kio_decode(entity_type, encoded)) == kafkalite_to_dict(value, version)
    decoded = decode_body(api.key, version, encoded, response=response)
    assert kafkalite_to_dict(decoded, version) == kio_to_dict(entity)
