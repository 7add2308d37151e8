"""Primitive types against known encodings (Kafka's ByteUtilsTest vectors) and properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalite.protocol import primitives as P
from kafkalite.protocol.errors import DecodeError

VARINTS = [
    (0, "00"), (-1, "01"), (1, "02"), (63, "7e"), (-64, "7f"), (64, "8001"), (-65, "8101"),
    (8191, "fe7f"), (-8192, "ff7f"), (8192, "808001"), (2**31 - 1, "feffffff0f"),
    (-(2**31), "ffffffff0f"),
]


@pytest.mark.parametrize(("value", "hexed"), VARINTS)
def test_varint_known_vectors(value, hexed):
    out = bytearray()
    P.write_varint(out, value)
    assert out.hex() == hexed
    assert P.read_varint(bytes.fromhex(hexed), 0) == (value, len(hexed) // 2)


def test_varlong_extremes():
    for value, hexed in [(2**63 - 1, "feffffffffffffffff01"), (-(2**63), "ffffffffffffffffff01")]:
        out = bytearray()
        P.write_varlong(out, value)
        assert out.hex() == hexed
        assert P.read_varlong(bytes(out), 0) == (value, 10)


@given(st.integers(0, 2**32 - 1))
def test_uvarint_roundtrip(n):
    out = bytearray()
    P.write_uvarint(out, n)
    assert P.read_uvarint(bytes(out), 0) == (n, len(out))


@given(st.integers(-(2**63), 2**63 - 1))
def test_varlong_roundtrip(n):
    out = bytearray()
    P.write_varlong(out, n)
    assert P.read_varlong(bytes(out), 0) == (n, len(out))


def test_varint_too_long_and_truncated():
    with pytest.raises(DecodeError, match="too long"):
        P.read_uvarint(b"\xff\xff\xff\xff\xff\x01", 0)
    with pytest.raises(DecodeError, match="truncated"):
        P.read_uvarint(b"\xff\xff", 0)
    with pytest.raises(DecodeError, match="truncated"):
        P.read_uvarint(b"", 0)


@given(st.none() | st.text(max_size=40), st.booleans())
def test_strings_roundtrip(s, compact):
    out = bytearray()
    write = P.write_compact_string if compact else P.write_string
    read = P.read_compact_string if compact else P.read_string
    write(out, s, nullable=True)
    assert read(bytes(out), 0, nullable=True) == (s, len(out))


@given(st.none() | st.binary(max_size=40), st.booleans())
def test_bytes_roundtrip(b, compact):
    out = bytearray()
    write = P.write_compact_bytes if compact else P.write_bytes
    read = P.read_compact_bytes if compact else P.read_bytes
    write(out, b, nullable=True)
    assert read(bytes(out), 0, nullable=True) == (b, len(out))


def test_null_where_not_nullable_is_rejected():
    with pytest.raises(DecodeError):
        P.read_string(b"\xff\xff", 0, nullable=False)
    with pytest.raises(DecodeError):
        P.read_compact_string(b"\x00", 0, nullable=False)
    with pytest.raises(DecodeError):
        P.read_bytes(b"\xff\xff\xff\xff", 0, nullable=False)
    with pytest.raises(ValueError):
        P.write_string(bytearray(), None, nullable=False)


def test_invalid_utf8_and_short_string():
    with pytest.raises(DecodeError, match="UTF-8"):
        P.read_string(b"\x00\x02\xc3\x28", 0)
    with pytest.raises(DecodeError, match="truncated") as info:
        P.read_string(b"\x00\x09abc", 0)
    assert info.value.offset == 2


def test_huge_array_length_fails_before_allocating():
    # Two billion elements declared in a 4-byte buffer: rejected from the count alone.
    with pytest.raises(DecodeError, match="exceeds"):
        P.read_array_length(b"\x7f\xff\xff\xff", 0, compact=False, nullable=False, min_item_size=4)
    with pytest.raises(DecodeError, match="exceeds"):
        P.read_array_length(b"\xff\xff\xff\xff\x0f", 0, compact=True, nullable=False,
                            min_item_size=1)


def test_unknown_tags_kept_as_bytes():
    out = bytearray()
    P.write_tags(out, [(1, b"ab"), (300, b"")])
    assert P.read_unknown_tags(bytes(out), 0) == ({1: b"ab", 300: b""}, len(out))


@given(st.uuids())
def test_fast_uuid_is_the_same_uuid(u):
    fast = P.uuid_from_bytes(u.bytes)
    assert fast == u and hash(fast) == hash(u) and str(fast) == str(u)
    assert P.read_uuid(memoryview(u.bytes), 0) == (u, 16)
