"""AlterConfigs (33, 0-2, flexible from 2), IncrementalAlterConfigs (44, 0-1, flexible from 1) and
ListConfigResources (74, 0-1, flexible from 0; KIP-1142) by hand-built bytes (kio checks every
version too: test_kio_oracle.py). Served at every declared version on every listener, at Kafka
4.1.1's ranges."""

from __future__ import annotations

import pytest

from kafkalite.protocol import decode_body, encode_body
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import BY_KEY
from kafkalite.protocol.messages import alter_configs as ac
from kafkalite.protocol.messages import incremental_alter_configs as iac
from kafkalite.protocol.messages import list_config_resources as lcr
from kafkalite.server.apis import SERVED_BY_KEY, apis_for

from .golden_bytes import NO_TAGS, i8, i16, i32, s16
from .test_golden_transactions import carray, cs

RANGES = {ApiKey.ALTER_CONFIGS: ("0-2", 2), ApiKey.INCREMENTAL_ALTER_CONFIGS: ("0-1", 1),
          ApiKey.LIST_CONFIG_RESOURCES: ("0-1", 0)}


def _roundtrip(key, version, value, expected, response=False):
    assert encode_body(key, version, value, response=response) == expected
    assert decode_body(key, version, expected, response=response) == value


@pytest.mark.parametrize("key", sorted(RANGES))
def test_declared_and_served_on_every_listener(key):
    versions, flexible_from = RANGES[key]
    api = BY_KEY[key]
    assert str(api.versions) == versions and str(SERVED_BY_KEY[key].versions) == versions
    assert [api.is_flexible(v) for v in range(api.versions.high + 1)] == [
        v >= flexible_from for v in range(api.versions.high + 1)]
    for privileged, controller in [(False, False), (True, False), (True, True)]:
        assert str(apis_for("PLAINTEXT", privileged, controller, frozenset())[key]) == versions


def test_key_74_is_list_config_resources():
    assert ApiKey(74).api_name == "ListConfigResources"


@pytest.mark.parametrize("version", [0, 1, 2])
def test_alter_configs_by_hand(version):
    R = ac.REQUEST
    request = R(validate_only=True, resources=[R["resources"](resource_type=2, resource_name="t", configs=[
        R["resources"]["configs"](name="retention.ms", value="1"),
        R["resources"]["configs"](name="x", value=None)])])
    response = ac.RESPONSE(throttle_time_ms=3, responses=[
        ac.RESPONSE["responses"](error_code=40, error_message="bad", resource_type=2, resource_name="t")])
    if version < 2:
        req = (i32(1) + i8(2) + s16("t") + i32(2) + s16("retention.ms") + s16("1") + s16("x") + i16(-1)
               + b"\x01")
        resp = i32(3) + i32(1) + i16(40) + s16("bad") + i8(2) + s16("t")
    else:
        req = (carray(1) + i8(2) + cs("t") + carray(2) + cs("retention.ms") + cs("1") + NO_TAGS
               + cs("x") + b"\x00" + NO_TAGS + NO_TAGS + b"\x01" + NO_TAGS)
        resp = i32(3) + carray(1) + i16(40) + cs("bad") + i8(2) + cs("t") + NO_TAGS + NO_TAGS
    _roundtrip(ApiKey.ALTER_CONFIGS, version, request, req)
    _roundtrip(ApiKey.ALTER_CONFIGS, version, response, resp, response=True)


@pytest.mark.parametrize("version", [0, 1])
def test_incremental_alter_configs_by_hand(version):
    R = iac.REQUEST
    request = R(validate_only=False, resources=[R["resources"](resource_type=4, resource_name="", configs=[
        R["resources"]["configs"](name="log.cleanup.policy", config_operation=iac.OP_APPEND, value="compact"),
        R["resources"]["configs"](name="log.retention.ms", config_operation=iac.OP_DELETE, value=None)])])
    if version == 0:
        req = (i32(1) + i8(4) + s16("") + i32(2) + s16("log.cleanup.policy") + i8(2) + s16("compact")
               + s16("log.retention.ms") + i8(1) + i16(-1) + b"\x00")
    else:
        req = (carray(1) + i8(4) + cs("") + carray(2) + cs("log.cleanup.policy") + i8(2) + cs("compact")
               + NO_TAGS + cs("log.retention.ms") + i8(1) + b"\x00" + NO_TAGS + NO_TAGS + b"\x00" + NO_TAGS)
    _roundtrip(ApiKey.INCREMENTAL_ALTER_CONFIGS, version, request, req)


@pytest.mark.parametrize("version", [0, 1])
def test_list_config_resources_by_hand(version):
    """v0 (ListClientMetricsResources) has no request fields and no resource type in the answer
    (it defaults to CLIENT_METRICS, 16); v1 adds both."""
    L = lcr
    request = L.REQUEST(resource_types=[2, 4] if version else [])
    response = L.RESPONSE(throttle_time_ms=0, error_code=0, config_resources=[
        L.RESPONSE["config_resources"](resource_name="t", resource_type=2 if version else 16)])
    if version == 0:
        req = NO_TAGS
        resp = i32(0) + i16(0) + carray(1) + cs("t") + NO_TAGS + NO_TAGS
    else:
        req = carray(2) + i8(2) + i8(4) + NO_TAGS
        resp = i32(0) + i16(0) + carray(1) + cs("t") + i8(2) + NO_TAGS + NO_TAGS
    _roundtrip(ApiKey.LIST_CONFIG_RESOURCES, version, request, req)
    _roundtrip(ApiKey.LIST_CONFIG_RESOURCES, version, response, resp, response=True)
