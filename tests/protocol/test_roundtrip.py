"""Property tests: every message, every version, request and response, round-trips exactly
(through its frame: the body's codec and the header's, strict, from bytes and from a memoryview)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalite.protocol import (
    decode_body,
    decode_request,
    decode_response,
    encode_body,
    encode_request,
    encode_response,
)
from kafkalite.protocol.frames import UNLIMITED_FRAME_SIZE, FrameDecoder

from .cases import body_cases
from .strategies import struct_value

CASES = body_cases()


@pytest.mark.slow
@pytest.mark.parametrize(("api", "version", "response"), CASES)
@given(data=st.data())
def test_frame_roundtrip(api, version, response, data):
    """A body encoded into its frame decodes to the same value, every byte consumed (strict), from
    bytes and from a memoryview (as the network layer hands frames over)."""
    struct = api.response if response else api.request
    value = data.draw(struct_value(struct, version))
    corr = data.draw(st.integers(-(2**31), 2**31 - 1))
    decoder = FrameDecoder(UNLIMITED_FRAME_SIZE)
    if response:
        decoder.feed(encode_response(api.key, version, corr, value))
        (payload,) = decoder.frames()
        assert decode_response(payload, api.key, version) == (corr, value)
        assert decode_response(memoryview(payload), api.key, version) == (corr, value)
    else:
        client_id = data.draw(st.none() | st.text(max_size=10))
        decoder.feed(encode_request(api.key, version, corr, client_id, value))
        (payload,) = decoder.frames()
        header, body = decode_request(payload, strict=True)
        assert (header.request_api_key, header.request_api_version) == (api.key, version)
        assert (header.correlation_id, header.client_id) == (corr, client_id)
        assert body == value
        assert decode_request(memoryview(payload), strict=True) == (header, body)


@pytest.mark.parametrize(("api", "version", "response"), [c for c in CASES
                                                          if c.values[0].is_flexible(c.values[1])])
@pytest.mark.slow
@given(data=st.data())
def test_unknown_tagged_fields_are_skipped_and_kept(api, version, response, data):
    """A newer peer's tagged fields must not break decoding; they are written back unchanged."""
    struct = api.response if response else api.request
    value = data.draw(struct_value(struct, version))
    known = {f.tag for f in struct.fields if f.tag is not None}
    tags = data.draw(st.dictionaries(
        st.integers(0, 300).filter(lambda t: t not in known), st.binary(max_size=6), min_size=1,
        max_size=3))
    value.unknown_tags = tags
    encoded = encode_body(api.key, version, value, response=response)
    decoded = decode_body(api.key, version, encoded, response=response)
    assert decoded.unknown_tags == tags
    assert decoded == value


def test_tagged_fields_inside_a_fixed_size_array_element():
    """Arrays of fixed-size structs are read in one pass; an element with tagged fields takes the
    general path and keeps them."""
    from kafkalite.protocol.messages.api_versions import RESPONSE

    item = RESPONSE["api_keys"]
    value = RESPONSE(api_keys=[item(18, 0, 4), item(3, 0, 12, unknown_tags={7: b"x"}), item(1, 2, 3)])
    encoded = encode_body(18, 3, value, response=True)
    decoded = decode_body(18, 3, encoded, response=True)
    assert decoded == value
    assert decoded.api_keys[1].unknown_tags == {7: b"x"}
    assert decoded.api_keys[0].unknown_tags is None


@pytest.mark.parametrize("enabled", [True, False])
def test_large_decodes_restore_the_collectors_state(enabled):
    """Large bodies are decoded with the garbage collector paused (codec.py); whatever state the
    caller had is restored, also when decoding fails."""
    import gc

    from kafkalite.protocol import DecodeError
    from kafkalite.protocol.messages.api_versions import RESPONSE

    item = RESPONSE["api_keys"]
    big = encode_body(18, 3, RESPONSE(api_keys=[item(k % 100, 0, 1) for k in range(2000)]), response=True)
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        assert len(decode_body(18, 3, big, response=True).api_keys) == 2000
        assert gc.isenabled() is enabled
        with pytest.raises(DecodeError):
            decode_body(18, 3, big[:-3], response=True)
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()
