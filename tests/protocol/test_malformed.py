"""Random, truncated and mutated bytes raise only the documented DecodeError (or UnsupportedVersion
for a request naming an api/version the codec does not declare): never IndexError, struct.error,
a hang, or a huge allocation."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalite.protocol import (
    DecodeError,
    FrameDecoder,
    UnsupportedVersion,
    decode_body,
    decode_request,
    decode_request_header,
    decode_response,
    encode_body,
)

from .cases import body_cases
from .strategies import struct_value

CASES = body_cases()


def _decode_or_fail_cleanly(api, version, response, buf):
    try:
        decode_body(api.key, version, buf, response=response)
    except DecodeError as e:
        assert e.api_key == api.key and e.api_version == version
        assert 0 <= e.offset <= len(buf)


@pytest.mark.slow
@pytest.mark.parametrize(("api", "version", "response"), CASES)
@given(buf=st.binary(max_size=64))
def test_random_bytes(api, version, response, buf):
    _decode_or_fail_cleanly(api, version, response, buf)


@pytest.mark.slow
@pytest.mark.parametrize(("api", "version", "response"), CASES)
@given(data=st.data())
def test_truncated_and_mutated(api, version, response, data):
    struct_ = api.response if response else api.request
    value = data.draw(struct_value(struct_, version))
    good = encode_body(api.key, version, value, response=response)
    cut = data.draw(st.integers(0, max(len(good) - 1, 0)))
    if len(good):
        with pytest.raises(DecodeError):
            decode_body(api.key, version, good[:cut], response=response)
    mutated = bytearray(good)
    for _ in range(data.draw(st.integers(1, 4))):
        op = data.draw(st.sampled_from(["flip", "insert", "delete"]))
        at = data.draw(st.integers(0, len(mutated)))
        if op == "flip" and at < len(mutated):
            mutated[at] = data.draw(st.integers(0, 255))
        elif op == "insert":
            mutated[at:at] = data.draw(st.binary(min_size=1, max_size=4))
        elif at < len(mutated):
            del mutated[at]
    _decode_or_fail_cleanly(api, version, response, bytes(mutated))


@given(buf=st.binary(max_size=64))
def test_random_request_payloads(buf):
    try:
        decode_request(buf)
    except (DecodeError, UnsupportedVersion):
        pass


@given(buf=st.binary(max_size=40), version=st.integers(0, 2))
def test_random_request_headers(buf, version):
    try:
        _header, pos = decode_request_header(buf, header_version=version)
    except DecodeError as e:
        assert 0 <= e.offset <= len(buf)
    else:
        assert pos <= len(buf)


@given(buf=st.binary(max_size=40))
def test_random_response_payloads(buf):
    try:
        decode_response(buf, 18, 3)
    except DecodeError:
        pass


@given(chunks=st.lists(st.binary(max_size=30), max_size=10))
def test_random_frame_streams(chunks):
    decoder = FrameDecoder(max_size=1000)
    try:
        for chunk in chunks:
            decoder.feed(chunk)
            for payload in decoder.frames():
                assert len(payload) <= 1000
    except DecodeError:
        pass
    assert decoder.buffered <= 1004 + sum(len(c) for c in chunks)


@pytest.mark.parametrize("compact", [False, True])
def test_huge_declared_array_in_small_buffer_fails_fast(compact):
    # ApiVersionsResponse: error code, then the api_keys array claiming ~2**31 entries.
    if compact:
        body = struct.pack(">h", 0) + b"\xff\xff\xff\xff\x07"
        version = 3
    else:
        body = struct.pack(">hi", 0, 2**31 - 1)
        version = 0
    with pytest.raises(DecodeError, match="exceeds"):
        decode_body(18, version, body, response=True)


def test_error_names_api_version_and_offset():
    with pytest.raises(DecodeError) as info:
        # v1: error code, one complete api_keys entry, then a throttle time cut to 2 of 4 bytes.
        decode_body(18, 1, struct.pack(">hihhh", 0, 1, 18, 0, 4) + b"\x00\x00", response=True)
    e = info.value
    assert (e.api_key, e.api_version) == (18, 1)
    assert e.offset == 12
    assert "api_key=18" in str(e) and "offset=12" in str(e)


def test_unknown_api_and_version():
    with pytest.raises(UnsupportedVersion):
        decode_request(struct.pack(">hhi", 18, 99, 1) + b"\xff\xff")
    with pytest.raises(UnsupportedVersion):
        decode_request(struct.pack(">hhi", 9999, 0, 1) + b"\xff\xff")


def test_request_trailing_bytes_ignored_as_kafka_does_unless_strict():
    # librdkafka 2.16's Metadata v12 request, captured: three bytes follow the body.
    payload = bytes.fromhex("0003000c00000003000772646b61666b610000000000010000")
    header, body = decode_request(payload)
    assert (header.request_api_version, header.client_id, body.topics) == (12, "rdkafka", None)
    with pytest.raises(DecodeError, match="trailing"):
        decode_request(payload, strict=True)
