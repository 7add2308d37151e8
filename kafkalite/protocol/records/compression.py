"""The codecs of a batch's records section (attributes bits 0-2): gzip from the standard library's
zlib; snappy, lz4 and zstd from cramjam (one maintained wheel, as aiokafka uses).

Only the records section is compressed; the 61-byte header stays plain. Nothing here is called
unless someone asks for the records (decode_records) or builds a batch (build_batch).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from typing import overload

import cramjam

from .batch import Buffer, Compression
from .errors import CompressionError, DecompressedTooLarge, UnsupportedCompressionError

# Java's snappy-java SnappyOutputStream framing, which Kafka's Java client writes and every
# client reads: magic, version 1, compatible version 1, then (int32 length, raw snappy block)*.
XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
XERIAL_BLOCK_SIZE = 32 * 1024  # snappy-java's default block size
_INT32 = struct.Struct(">i")

_GZIP_WBITS = 16 + zlib.MAX_WBITS  # gzip header and trailer, not zlib's


def compress(codec: Compression, data: Buffer, level: int | None = None) -> bytes:
    """The records section ``data`` compressed as clients do (xerial snappy, independent lz4
    blocks as KIP-57 requires); ``level`` None is each codec's default."""
    if codec is Compression.NONE:
        return bytes(data)
    if codec is Compression.GZIP:
        c = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION if level is None else level,
                             zlib.DEFLATED, _GZIP_WBITS)
        return c.compress(data) + c.flush()
    if codec is Compression.SNAPPY:
        return _xerial_compress(data)
    if codec is Compression.LZ4:
        lz4 = cramjam.lz4.Compressor(level=level, block_linked=False)
        lz4.compress(bytes(data))  # its streaming compressor takes only bytes
        return bytes(lz4.finish())
    if codec is Compression.ZSTD:
        return bytes(cramjam.zstd.compress(data, level=level))
    raise UnsupportedCompressionError(f"unknown compression codec {codec!r}", 0)


@overload
def decompress(codec: Compression, data: Buffer, limit: None = None) -> bytes: ...


@overload
def decompress(codec: Compression, data: Buffer, limit: int) -> bytes | bytearray: ...


def decompress(codec: Compression, data: Buffer, limit: int | None = None) -> bytes | bytearray:
    """The records section ``data`` decompressed; CompressionError (offset within ``data``) if it
    is not valid data for the codec, truncated data included. Snappy may be xerial-framed (Java
    and kafka-python) or raw (librdkafka). With ``limit``, DecompressedTooLarge for more than
    ``limit`` bytes, raised before more than about ``limit`` bytes are held: a few compressed
    bytes can stand for gigabytes."""
    try:
        if codec is Compression.NONE:
            return bytes(data)
        if codec is Compression.GZIP:
            return _gzip_decompress(data, limit)
        if codec is Compression.SNAPPY:
            if bytes(data[:8]) == XERIAL_MAGIC:
                return _xerial_decompress(data, limit)
            if limit is not None:
                _check_size(cramjam.snappy.decompress_raw_len(data), limit)  # from its header
            return bytes(cramjam.snappy.decompress_raw(data))
        if codec is Compression.LZ4:
            if limit is None:
                return bytes(cramjam.lz4.decompress(data))
            return _bounded(cramjam.lz4.decompress_into, data, limit)
        if codec is Compression.ZSTD:
            if limit is None:
                return bytes(cramjam.zstd.decompress(data))
            return _bounded(cramjam.zstd.decompress_into, data, limit)
    except (cramjam.DecompressionError, zlib.error) as e:
        raise CompressionError(f"bad {codec.name.lower()} data: {e}", 0) from None
    raise UnsupportedCompressionError(f"unknown compression codec {codec!r}", 0)


def _too_large(limit: int) -> DecompressedTooLarge:
    return DecompressedTooLarge(f"the records decompress to more than {limit} bytes", 0)


def _check_size(size: int, limit: int) -> None:
    if size > limit:
        raise _too_large(limit)


def _bounded(decompress_into: Callable[[Buffer, bytearray], int], data: Buffer, limit: int) -> bytearray:
    """Decompress into a buffer that starts at 8x the input and doubles, up to ``limit``:
    cramjam fails a decompression that does not fit (it writes nothing past the buffer)."""
    size = min(limit, max(65536, 8 * len(data)))
    while True:
        out = bytearray(size)
        try:
            n = decompress_into(data, out)
        except cramjam.DecompressionError as e:
            if "whole buffer" not in str(e):
                raise
            if size >= limit:
                raise _too_large(limit) from None
            size = min(limit, 2 * size)
            continue
        del out[n:]
        return out


def _gzip_decompress(data: Buffer, limit: int | None = None) -> bytes:
    # Several gzip members in a row are one stream (as Java's GZIPInputStream reads them).
    out = []
    rest = bytes(data)
    produced = 0
    while True:
        d = zlib.decompressobj(_GZIP_WBITS)
        if limit is None:
            out.append(d.decompress(rest))
        else:  # one byte past what may still come out tells a member over the limit
            out.append(d.decompress(rest, limit - produced + 1))
            produced += len(out[-1])
            _check_size(produced, limit)
        if not d.eof:
            raise CompressionError("truncated gzip data", len(data))
        rest = d.unused_data
        if not rest:
            return b"".join(out)


def _xerial_compress(data: Buffer) -> bytes:
    out = bytearray(_XERIAL_HEADER)
    view = memoryview(data)
    for start in range(0, len(view), XERIAL_BLOCK_SIZE):
        block = cramjam.snappy.compress_raw(view[start : start + XERIAL_BLOCK_SIZE])
        out += _INT32.pack(len(block))
        out += block
    return bytes(out)


def _xerial_decompress(data: Buffer, limit: int | None = None) -> bytes:
    if len(data) < len(_XERIAL_HEADER):
        raise CompressionError("truncated xerial snappy header", len(data))
    out = bytearray()
    pos = len(_XERIAL_HEADER)
    while pos < len(data):
        if pos + 4 > len(data):
            raise CompressionError("truncated xerial snappy block length", pos)
        (n,) = _INT32.unpack_from(data, pos)
        pos += 4
        if n < 0 or pos + n > len(data):
            raise CompressionError(f"xerial snappy block of {n} bytes past the end", pos - 4)
        try:
            if limit is not None:
                _check_size(len(out) + cramjam.snappy.decompress_raw_len(data[pos : pos + n]), limit)
            out += cramjam.snappy.decompress_raw(data[pos : pos + n])
        except cramjam.DecompressionError as e:
            raise CompressionError(f"bad snappy block: {e}", pos) from None
        pos += n
    return bytes(out)
