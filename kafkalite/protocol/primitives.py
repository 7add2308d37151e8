"""Kafka's primitive types: encoders append to a bytearray, decoders read ``(buf, pos)``.

Decoders return ``(value, new_pos)`` and raise :class:`DecodeError` on bad input. The generated
message codecs inline the fixed-size types as ``struct`` calls and call the variable-size helpers
here, so this module is both the reference for each type and the runtime the generated code uses.

A bytes field's value may be a FileSlice (Fetch records still in their segment): written into a
SpliceBuffer it costs its length prefix and a reference, not a copy. Into a plain bytearray it
raises SpliceNeeded, and the caller (codec.py) encodes again into a SpliceBuffer. Encoding always
starts with a plain bytearray because ``append``, which the generated code calls for every tag
section and short compact length, costs about twice as much on a subclass (CPython specialises
the call for the exact type): messages without slices, nearly all, pay nothing for them.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from typing import Any

from kafkalite.common.file_slice import FileSlice

from .errors import DecodeError

INT8 = struct.Struct(">b")
INT16 = struct.Struct(">h")
INT32 = struct.Struct(">i")
INT64 = struct.Struct(">q")
UINT16 = struct.Struct(">H")
FLOAT64 = struct.Struct(">d")
BOOL = struct.Struct(">?")


# Kafka rejects varints longer than 5 bytes (int) or 10 bytes (long); so do we.
_MAX_VARINT_BYTES = 5
_MAX_VARLONG_BYTES = 10


def write_uvarint(out: bytearray, n: int) -> None:
    if n < 0x80:
        out.append(n)
        return
    if n >> 32:
        raise ValueError(f"uvarint out of range: {n}")
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def read_uvarint(buf: bytes, pos: int, _limit: int = _MAX_VARINT_BYTES) -> tuple[int, int]:
    try:
        b = buf[pos]
    except IndexError:
        raise DecodeError("truncated varint", offset=pos) from None
    if b < 0x80:
        return b, pos + 1
    start = pos
    result = b & 0x7F
    shift = 7
    pos += 1
    while True:
        if pos - start >= _limit:
            raise DecodeError("varint too long", offset=start)
        try:
            b = buf[pos]
        except IndexError:
            raise DecodeError("truncated varint", offset=pos) from None
        result |= (b & 0x7F) << shift
        pos += 1
        if b < 0x80:
            return result, pos
        shift += 7


def write_varint(out: bytearray, n: int) -> None:
    if not -0x80000000 <= n <= 0x7FFFFFFF:
        raise ValueError(f"varint out of range: {n}")
    write_uvarint(out, ((n << 1) ^ (n >> 31)) & 0xFFFFFFFF)


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    z, pos = read_uvarint(buf, pos)
    return (z >> 1) ^ -(z & 1), pos


def write_varlong(out: bytearray, n: int) -> None:
    if not -0x8000000000000000 <= n <= 0x7FFFFFFFFFFFFFFF:
        raise ValueError(f"varlong out of range: {n}")
    z = ((n << 1) ^ (n >> 63)) & 0xFFFFFFFFFFFFFFFF
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)


def read_varlong(buf: bytes, pos: int) -> tuple[int, int]:
    z, pos = read_uvarint(buf, pos, _MAX_VARLONG_BYTES)
    return (z >> 1) ^ -(z & 1), pos


class SpliceNeeded(Exception):
    """A FileSlice met while encoding into a plain bytearray: encode again into a SpliceBuffer."""


class SpliceBuffer(bytearray):
    """An encode buffer that takes FileSlices by reference: ``slices`` lists, in order, where in
    the buffer each slice's bytes belong (the offset after its length prefix) and the slice."""

    __slots__ = ("slices",)

    def __init__(self, size: int = 0) -> None:
        super().__init__(size)
        self.slices: list[tuple[int, FileSlice]] = []


def _write_slice(out: bytearray, piece: FileSlice, compact: bool) -> None:
    size = piece.size
    if size and type(out) is not SpliceBuffer:
        raise SpliceNeeded
    if compact:
        write_uvarint(out, size + 1)
    else:
        out += INT32.pack(size)
    # An empty slice is empty bytes (the log's EMPTY has no file behind it): nothing to splice.
    if size and type(out) is SpliceBuffer:
        out.slices.append((len(out), piece))


def _take(buf: bytes, pos: int, n: int) -> int:
    end = pos + n
    if end > len(buf):
        raise DecodeError(f"truncated: need {n} bytes, have {len(buf) - pos}", offset=pos)
    return end


def write_string(out: bytearray, s: str | None, nullable: bool = False) -> None:
    if s is None:
        if not nullable:
            raise ValueError("null for a non-nullable string")
        out += b"\xff\xff"
        return
    b = s.encode()
    if len(b) > 0x7FFF:
        raise ValueError("string longer than 32767 bytes")
    out += INT16.pack(len(b))
    out += b


def read_string(buf: bytes, pos: int, nullable: bool = False) -> tuple[str | None, int]:
    (n,) = INT16.unpack_from(buf, pos) if pos + 2 <= len(buf) else _short(pos)
    pos += 2
    if n < 0:
        if n == -1 and nullable:
            return None, pos
        raise DecodeError(f"bad string length {n}", offset=pos - 2)
    end = _take(buf, pos, n)
    return _utf8(buf, pos, end), end


def write_compact_string(out: bytearray, s: str | None, nullable: bool = False) -> None:
    if s is None:
        if not nullable:
            raise ValueError("null for a non-nullable string")
        out.append(0)
        return
    b = s.encode()
    write_uvarint(out, len(b) + 1)
    out += b


def read_compact_string(buf: bytes, pos: int, nullable: bool = False) -> tuple[str | None, int]:
    start = pos
    n, pos = read_uvarint(buf, pos)
    if n == 0:
        if nullable:
            return None, pos
        raise DecodeError("null for a non-nullable string", offset=start)
    end = _take(buf, pos, n - 1)
    return _utf8(buf, pos, end), end


def write_bytes(out: bytearray, b: bytes | FileSlice | None, nullable: bool = False) -> None:
    if b is None:
        if not nullable:
            raise ValueError("null for non-nullable bytes")
        out += b"\xff\xff\xff\xff"
        return
    if type(b) is FileSlice:  # a tuple: len() would say 3
        _write_slice(out, b, False)
        return
    out += INT32.pack(len(b))
    out += b


def _bytes_span(buf: bytes, pos: int, nullable: bool) -> tuple[int, int]:
    """Where int32-length-prefixed bytes at ``pos`` lie: (start, end), or (-1, end) for null."""
    (n,) = INT32.unpack_from(buf, pos) if pos + 4 <= len(buf) else _short(pos)
    pos += 4
    if n < 0:
        if n == -1 and nullable:
            return -1, pos
        raise DecodeError(f"bad bytes length {n}", offset=pos - 4)
    return pos, _take(buf, pos, n)


def read_bytes(buf: bytes, pos: int, nullable: bool = False) -> tuple[bytes | None, int]:
    start, end = _bytes_span(buf, pos, nullable)
    return (None if start < 0 else bytes(buf[start:end])), end


def read_records(buf: bytes, pos: int, nullable: bool = False) -> tuple[memoryview | None, int]:
    """As read_bytes, but a view into ``buf`` (writable when ``buf`` is a bytearray): no copy."""
    start, end = _bytes_span(buf, pos, nullable)
    return (None if start < 0 else memoryview(buf)[start:end]), end


def write_compact_bytes(out: bytearray, b: bytes | FileSlice | None, nullable: bool = False) -> None:
    if b is None:
        if not nullable:
            raise ValueError("null for non-nullable bytes")
        out.append(0)
        return
    if type(b) is FileSlice:  # a tuple: len() would say 3
        _write_slice(out, b, True)
        return
    write_uvarint(out, len(b) + 1)
    out += b


def _compact_bytes_span(buf: bytes, pos: int, nullable: bool) -> tuple[int, int]:
    """Where uvarint(length + 1)-prefixed bytes at ``pos`` lie: (start, end), or (-1, end) for null."""
    start = pos
    n, pos = read_uvarint(buf, pos)
    if n == 0:
        if nullable:
            return -1, pos
        raise DecodeError("null for non-nullable bytes", offset=start)
    return pos, _take(buf, pos, n - 1)


def read_compact_bytes(buf: bytes, pos: int, nullable: bool = False) -> tuple[bytes | None, int]:
    start, end = _compact_bytes_span(buf, pos, nullable)
    return (None if start < 0 else bytes(buf[start:end])), end


def read_compact_records(buf: bytes, pos: int, nullable: bool = False) -> tuple[memoryview | None, int]:
    """As read_compact_bytes, but a view into ``buf``: no copy."""
    start, end = _compact_bytes_span(buf, pos, nullable)
    return (None if start < 0 else memoryview(buf)[start:end]), end


def read_array_length(
    buf: bytes, pos: int, compact: bool, nullable: bool, min_item_size: int
) -> tuple[int, int]:
    """Read an array's element count; -1 means null.

    A count that cannot fit in the bytes left (each element takes at least ``min_item_size``
    bytes) fails here, before anything is allocated for it.
    """
    start = pos
    if compact:
        n, pos = read_uvarint(buf, pos)
        n -= 1
    else:
        (n,) = INT32.unpack_from(buf, pos) if pos + 4 <= len(buf) else _short(pos)
        pos += 4
    if n < 0:
        if n == -1 and nullable:
            return -1, pos
        raise DecodeError(f"bad array length {n}", offset=start)
    if n * max(min_item_size, 1) > len(buf) - pos:
        raise DecodeError(f"array length {n} exceeds the {len(buf) - pos} bytes left", offset=start)
    return n, pos


def write_array_length(out: bytearray, n: int, compact: bool) -> None:
    """Write an element count; ``n == -1`` writes null."""
    if compact:
        write_uvarint(out, n + 1)
    else:
        out += INT32.pack(n)


_new_uuid = object.__new__
_set = object.__setattr__
_UNKNOWN_SAFETY = uuid.SafeUUID.unknown
_ZERO_BYTES = bytes(16)
_ZERO = uuid.UUID(int=0)


def uuid_from_bytes(b: bytes) -> uuid.UUID:
    """A uuid.UUID from 16 bytes, without UUID.__init__'s argument checks (a hot path when reading
    Metadata with topic ids); the same object uuid.UUID(bytes=b) gives. The zero id (a topic
    asked for by name, Metadata v10+) is one shared object: UUIDs are immutable."""
    if b == _ZERO_BYTES:
        return _ZERO
    u = _new_uuid(uuid.UUID)
    _set(u, "int", int.from_bytes(b, "big"))
    _set(u, "is_safe", _UNKNOWN_SAFETY)
    return u


def read_uuid(buf: bytes, pos: int) -> tuple[uuid.UUID, int]:
    end = _take(buf, pos, 16)
    return uuid_from_bytes(buf[pos:end]), end


def read_unknown_tags(buf: bytes, pos: int) -> tuple[dict, int]:
    """Read a tagged-field section keeping every field as raw bytes."""
    return read_tags(buf, pos, {})


TagReader = Callable[[Any, int], tuple[object, int]]


def read_tags(
    buf: bytes, pos: int, readers: dict[int, tuple[str, TagReader]]
) -> tuple[dict[int, object], int]:
    """Read a tagged-field section.

    ``readers`` maps known tags to (field name, reader). Returns a dict keyed by field name for
    known tags and by tag number (int) for unknown ones, whose raw bytes are kept so that they
    are written back unchanged. Each value is read from a view limited to its declared size, so
    a bad tagged field can never read past its own bytes.
    """
    count, pos = read_uvarint(buf, pos)
    if count > len(buf) - pos:
        raise DecodeError(f"tagged field count {count} exceeds the bytes left", offset=pos)
    found: dict = {}
    for _ in range(count):
        tag, pos = read_uvarint(buf, pos)
        size, pos = read_uvarint(buf, pos)
        end = _take(buf, pos, size)
        known = readers.get(tag)
        if known is None:
            found[tag] = bytes(buf[pos:end])
        else:
            name, reader = known
            view = memoryview(buf)[:end]
            try:
                value, used = reader(view, pos)
            finally:
                view.release()
            if used != end:
                raise DecodeError(f"tagged field {tag} used {used - pos} of {size} bytes", offset=pos)
            found[name] = value
        pos = end
    return found, pos


def write_tags(out: bytearray, fields: list[tuple[int, bytes]]) -> None:
    """Write a tagged-field section from (tag, encoded value) pairs in ascending tag order."""
    write_uvarint(out, len(fields))
    for tag, data in fields:
        write_uvarint(out, tag)
        write_uvarint(out, len(data))
        out += data


def _short(pos: int) -> Any:
    raise DecodeError("truncated", offset=pos)


def _utf8(buf: bytes, start: int, end: int) -> str:
    try:
        return str(buf[start:end], "utf-8")
    except UnicodeDecodeError as e:
        raise DecodeError(f"invalid UTF-8: {e.reason}", offset=start + e.start) from None
