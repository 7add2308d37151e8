"""DescribeConfigs v0, which kio (the oracle of test_kio_oracle.py, which checks versions 1-4)
lacks: its bytes built by hand from Kafka's spec."""

from __future__ import annotations

import struct

from kafkalite.protocol import decode_body, encode_body
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import describe_configs


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
