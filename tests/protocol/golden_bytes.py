"""Big-endian building blocks for hand-built golden bytes (the spec's primitive encodings)."""

from __future__ import annotations

import struct


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
