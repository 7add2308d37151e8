"""Big-endian building blocks for hand-built golden bytes (the spec's primitive encodings)."""

from __future__ import annotations

import struct

import pytest

from kafkalite.protocol import decode_body, encode_body


def i8(v: int) -> bytes:
    return struct.pack(">b", v)


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


def s16(text: str) -> bytes:
    """A non-flexible string: int16 length, then UTF-8."""
    return i16(len(text)) + text.encode()


TRUE, FALSE = b"\x01", b"\x00"
NO_TAGS = b"\x00"  # empty tagged-field section of a flexible struct


def kp_case(api_key, versions, response, value, kp_classes, kp_kwargs, name):
    """One pytest param per version of a golden case built by kafka-python's hand-written class
    for that version (``kp_classes[v](**kp_kwargs)``): the same value for every version."""
    return [
        pytest.param(api_key, v, response, value, kp_classes[v](**kp_kwargs),
                     id=f"{name}-v{v}-{'response' if response else 'request'}")
        for v in versions
    ]


def check_kp_golden(api_key, version, response, value, kp) -> None:
    """kafkalite writes kafka-python's bytes, reads them to the same value, and kafka-python
    reads kafkalite's bytes back."""
    expected = kp.encode()
    assert encode_body(api_key, version, value, response=response) == expected
    assert decode_body(api_key, version, expected, response=response) == value
    assert type(kp).decode(encode_body(api_key, version, value, response=response)).to_object() \
        == kp.to_object()
