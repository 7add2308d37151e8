"""Whole messages: header + body, with and without the size prefix. No I/O here.

``encode_request`` / ``encode_response`` return a complete frame (int32 size, header, body);
``decode_request`` / ``decode_response`` take a frame's payload (without the size prefix), as the
frame decoder yields it. A response whose bytes fields hold FileSlices (Fetch records) comes back
as a SplicedFrame: its bytes and the slices in wire order, for the network layer to sendfile.
"""

from __future__ import annotations

import gc
import struct
from typing import Any, final

from kafkalite.common.file_slice import FileSlice

from . import headers as H
from .compiler import Decoder, Encoder, compile_struct
from .errors import DecodeError, EncodeError, UnsupportedVersion
from .messages import BY_KEY
from .primitives import SpliceBuffer, SpliceNeeded
from .schema import Api, Struct

_SIZE = struct.Struct(">i")
_KEY_VERSION = struct.Struct(">hh")
_ENCODE_ERRORS = (struct.error, TypeError, ValueError, AttributeError, OverflowError)
_cache: dict = {}

# Decoding a large body allocates thousands of lists and objects, all of them live: generation-0
# collections triggered meanwhile only re-scan them (about 40% of the decode time of a 1000-
# partition Metadata response). Above this size the collector is paused for the decode.
_GC_PAUSE_BYTES = 4096


def _decode_without_gc(dec: Decoder, buf: Any, pos: int) -> tuple[Any, int]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return dec(buf, pos)
    finally:
        if was_enabled:
            gc.enable()


def get_api(api_key: int) -> Api:
    a = BY_KEY.get(api_key)
    if a is None:
        raise UnsupportedVersion(api_key, -1)
    return a


def body_codec(api_key: int, version: int, response: bool) -> tuple[Encoder, Decoder]:
    """Encoder and decoder for one api's request or response body at ``version``."""
    key = (api_key, version, response)
    codec = _cache.get(key)
    if codec is None:
        a = get_api(api_key)
        if version not in a.versions:
            raise UnsupportedVersion(api_key, version)
        s = a.response if response else a.request
        codec = compile_struct(s, version, a.is_flexible(version), _cache)
        _cache[key] = codec
    return codec


def _header_codec(response: bool, version: int) -> tuple[Encoder, Decoder]:
    key = ("header", response, version)
    codec = _cache.get(key)
    if codec is None:
        if response:
            s: Struct = H.RESPONSE_HEADER
            flexible = version in H.RESPONSE_HEADER_FLEXIBLE
        else:
            s = H.REQUEST_HEADER
            flexible = version in H.REQUEST_HEADER_FLEXIBLE
        codec = compile_struct(s, version, flexible, _cache)
        _cache[key] = codec
    return codec


def encode_body(api_key: int, version: int, body: Any, response: bool = False) -> bytes:
    out = bytearray()
    try:
        _encode_into(out, api_key, version, body, response)
    except SpliceNeeded:
        raise _no_splicing(api_key, version, response) from None
    return bytes(out)


def _encode_into(out: bytearray, api_key: int, version: int, body: Any, response: bool) -> None:
    enc, _ = body_codec(api_key, version, response)
    try:
        enc(body, out)
    except _ENCODE_ERRORS as e:
        kind = "response" if response else "request"
        raise EncodeError(f"cannot encode api_key={api_key} v{version} {kind}: {e}") from e
    except SpliceNeeded:
        if type(out) is SpliceBuffer:  # a tagged field's own buffer met it: no way to splice
            raise _no_splicing(api_key, version, response) from None
        raise


def _no_splicing(api_key: int, version: int, response: bool) -> EncodeError:
    kind = "response" if response else "request"
    return EncodeError(f"cannot encode api_key={api_key} v{version} {kind}: a FileSlice goes only "
                       "into a response frame (encode_response), and not in a tagged field")


def decode_body(
    api_key: int, version: int, buf: Any, pos: int = 0, response: bool = False, strict: bool = True
) -> Any:
    """Decode a body from ``buf[pos:]``. With ``strict``, trailing bytes are an error; without it
    they are ignored, as Kafka's request parser ignores them (librdkafka sends some)."""
    _, dec = body_codec(api_key, version, response)
    try:
        if len(buf) - pos > _GC_PAUSE_BYTES:
            obj, end = _decode_without_gc(dec, buf, pos)
        else:
            obj, end = dec(buf, pos)
        if strict and end != len(buf):
            raise DecodeError(f"{len(buf) - end} trailing bytes", offset=end)
    except DecodeError as e:
        e.api_key, e.api_version = api_key, version
        raise
    return obj


def encode_request(
    api_key: int, version: int, correlation_id: int, client_id: str | None, body: Any
) -> bytes:
    """A complete request frame; the header version follows the api's flexible versions."""
    a = get_api(api_key)
    hv = H.request_header_version(a.is_flexible(version))
    out = bytearray(4)
    header = H.REQUEST_HEADER.cls(api_key, version, correlation_id, client_id)
    _header_codec(False, hv)[0](header, out)
    try:
        _encode_into(out, api_key, version, body, False)
    except SpliceNeeded:
        raise _no_splicing(api_key, version, False) from None
    _SIZE.pack_into(out, 0, len(out) - 4)
    return bytes(out)


@final  # so that ``type(x) is SplicedFrame`` narrows, as for FileSlice
class SplicedFrame:
    """A response frame with parts of it left in files: ``parts`` are bytes and FileSlices in the
    order they go on the wire, the first starting with the int32 size. ``len()`` is the whole
    frame's length, slices and size prefix included, as ``len()`` of a bytes frame is."""

    __slots__ = ("parts", "size")

    def __init__(self, parts: tuple[bytes | FileSlice, ...], size: int) -> None:
        self.parts = parts
        self.size = size

    def __len__(self) -> int:
        return self.size

    def to_bytes(self) -> bytes:
        """The frame as one bytes object, the slices read from their files (TLS, tests). Raises
        EOFError if a file ends before its slice does: a frame shorter than its size prefix
        says would garble every later response on the connection."""
        data = b"".join([p.read() if isinstance(p, FileSlice) else p for p in self.parts])
        if len(data) != self.size:
            raise EOFError(f"a file slice of a response frame is {self.size - len(data)} bytes short "
                           "(its file was truncated)")
        return data

    def __repr__(self) -> str:
        slices = sum(type(p) is FileSlice for p in self.parts)
        return f"SplicedFrame({self.size} bytes, {slices} file slices in {len(self.parts)} parts)"


def encode_response(api_key: int, version: int, correlation_id: int, body: Any) -> bytes | SplicedFrame:
    """A complete response frame (ApiVersions always with response header v0): bytes, or a
    SplicedFrame if a bytes field of ``body`` holds a FileSlice (Fetch records)."""
    a = get_api(api_key)
    hv = H.response_header_version(api_key, a.is_flexible(version))
    out = bytearray(4)
    out += _SIZE.pack(correlation_id)
    if hv >= 1:
        out.append(0)  # empty tagged fields
    try:
        _encode_into(out, api_key, version, body, True)
    except SpliceNeeded:
        # Met at the first slice, which in a Fetch response comes after a few dozen bytes: the
        # encoding starts again into a buffer that takes slices (see primitives.py for why not
        # always into one).
        return _encode_spliced(api_key, version, correlation_id, body, hv)
    _SIZE.pack_into(out, 0, len(out) - 4)
    return bytes(out)


def _encode_spliced(api_key: int, version: int, correlation_id: int, body: Any, hv: int) -> SplicedFrame:
    out = SpliceBuffer(4)
    out += _SIZE.pack(correlation_id)
    if hv >= 1:
        out.append(0)
    _encode_into(out, api_key, version, body, True)
    slices = out.slices
    size = len(out) + sum(piece.size for _, piece in slices)
    try:
        _SIZE.pack_into(out, 0, size - 4)  # the size prefix counts the slices' bytes
    except struct.error as e:
        raise EncodeError(f"a response frame of {size} bytes is too large") from e
    data = bytes(out)
    parts: list[bytes | FileSlice] = []
    start = 0
    for at, piece in slices:
        if at > start:
            parts.append(data[start:at])
        parts.append(piece)
        start = at
    if start < len(data):
        parts.append(data[start:])
    return SplicedFrame(tuple(parts), size)


def peek_api(payload: Any) -> tuple[int, int]:
    """The (api_key, api_version) a request payload starts with."""
    if len(payload) < 4:
        raise DecodeError("request shorter than its api key and version", offset=0, what="header")
    key, version = _KEY_VERSION.unpack_from(payload, 0)
    return key, version


def decode_request_header(payload: Any, header_version: int | None = None) -> tuple[Any, int]:
    """The request header and the offset of the body. The version follows the api unless given."""
    if header_version is None:
        api_key, version = peek_api(payload)
        a = BY_KEY.get(api_key)
        if a is None or version not in a.versions:
            raise UnsupportedVersion(api_key, version)
        header_version = H.request_header_version(a.is_flexible(version))
    try:
        return _header_codec(False, header_version)[1](payload, 0)
    except DecodeError as e:
        e.what = f"request header v{header_version}"
        raise


def decode_request(payload: Any, strict: bool = False) -> tuple[Any, Any]:
    """(header, body) of a request payload. Unknown api or version: UnsupportedVersion.

    Bytes after the body are ignored unless ``strict``, as in Kafka."""
    if len(payload) < 4:
        raise DecodeError("request shorter than its api key and version", offset=0, what="header")
    api_key, version = _KEY_VERSION.unpack_from(payload, 0)
    decoders = _request_decoders.get((api_key, version))
    if decoders is None:
        decoders = _request_decoders_for(api_key, version)
    header_dec, header_version, body_dec = decoders
    try:
        header, pos = header_dec(payload, 0)
    except DecodeError as e:
        e.what = f"request header v{header_version}"
        raise
    if strict or len(payload) - pos > _GC_PAUSE_BYTES:
        return header, decode_body(api_key, version, payload, pos, strict=strict)
    try:
        body, _ = body_dec(payload, pos)
    except DecodeError as e:
        e.api_key, e.api_version = api_key, version
        raise
    return header, body


# (api key, version) -> (header decoder, header version, body decoder): one lookup per request.
_request_decoders: dict[tuple[int, int], tuple[Decoder, int, Decoder]] = {}


def _request_decoders_for(api_key: int, version: int) -> tuple[Decoder, int, Decoder]:
    a = BY_KEY.get(api_key)
    if a is None or version not in a.versions:
        raise UnsupportedVersion(api_key, version)
    header_version = H.request_header_version(a.is_flexible(version))
    decoders = (_header_codec(False, header_version)[1], header_version,
                body_codec(api_key, version, False)[1])
    _request_decoders[(api_key, version)] = decoders
    return decoders


def decode_response(payload: Any, api_key: int, version: int, strict: bool = True) -> tuple[int, Any]:
    """(correlation id, body) of a response payload to a request of ``api_key`` v``version``;
    without ``strict``, bytes after the body are ignored, as Kafka's clients ignore them."""
    a = get_api(api_key)
    hv = H.response_header_version(api_key, a.is_flexible(version))
    try:
        header, pos = _header_codec(True, hv)[1](payload, 0)
    except DecodeError as e:
        e.what = f"response header v{hv}"
        e.api_key, e.api_version = api_key, version
        raise
    return header.correlation_id, decode_body(api_key, version, payload, pos, response=True, strict=strict)
