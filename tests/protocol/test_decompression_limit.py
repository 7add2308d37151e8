"""Decompression with a limit: what a produced batch's records may decompress to is bounded, and a
compression bomb is refused before the bytes it stands for are held."""

from __future__ import annotations

import tracemalloc
import zlib

import cramjam
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalite.protocol.records import Compression, DecompressedTooLarge
from kafkalite.protocol.records.compression import XERIAL_MAGIC, compress, decompress

MiB = 1 << 20
CODECS = [Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD]


def bomb(codec: Compression, size: int) -> bytes:
    """``size`` zero bytes compressed, built a MiB at a time (never ``size`` bytes in memory),
    except raw snappy, which has no streaming form: its length header claims ``size`` instead."""
    zero = bytes(MiB)
    if codec is Compression.GZIP:
        c = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        return b"".join(c.compress(zero) for _ in range(size // MiB)) + c.flush()
    if codec is Compression.LZ4:
        lz4 = cramjam.lz4.Compressor(block_linked=False)
        for _ in range(size // MiB):
            lz4.compress(zero)
        return bytes(lz4.finish())
    if codec is Compression.ZSTD:
        z = cramjam.zstd.Compressor()
        for _ in range(size // MiB):
            z.compress(zero)
        return bytes(z.finish())
    # Raw snappy: a uvarint of the decompressed length, then one small literal.
    n, head = size, bytearray()
    while n >= 0x80:
        head.append(n & 0x7F | 0x80)
        n >>= 7
    head.append(n)
    return bytes(head) + bytes(cramjam.snappy.compress_raw(b"x"))[1:]


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name)
def test_a_bomb_is_refused_holding_no_more_than_the_limit(codec):
    data = bomb(codec, 512 * MiB)
    assert len(data) < 4 * MiB
    tracemalloc.start()
    try:
        with pytest.raises(DecompressedTooLarge):
            decompress(codec, data, limit=4 * MiB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3 * 4 * MiB  # the limit, give or take one doubling of the output buffer


def test_a_xerial_snappy_bomb_is_refused_by_its_blocks_lengths():
    blocks = bytes(compress(Compression.SNAPPY, bytes(2 * MiB)))
    assert blocks.startswith(XERIAL_MAGIC)
    with pytest.raises(DecompressedTooLarge):
        decompress(Compression.SNAPPY, blocks, limit=MiB)
    assert decompress(Compression.SNAPPY, blocks, limit=2 * MiB) == bytes(2 * MiB)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(CODECS), st.binary(max_size=3000), st.integers(0, 200_000))
def test_within_the_limit_is_decompressed_exactly_and_one_byte_less_is_refused(codec, chunk, repeat):
    data = (chunk * (repeat // max(1, len(chunk)) + 1))[:repeat] if chunk else bytes(repeat)
    packed = compress(codec, data)
    assert decompress(codec, packed, limit=len(data)) == data
    assert decompress(codec, packed) == data
    if data:
        with pytest.raises(DecompressedTooLarge):
            decompress(codec, packed, limit=len(data) - 1)


def test_bad_data_is_still_a_compression_error_not_too_large():
    from kafkalite.protocol.records import CompressionError

    for codec in CODECS:
        with pytest.raises(CompressionError) as info:
            decompress(codec, b"\x00garbage that is no codec's data" * 3, limit=MiB)
        assert not isinstance(info.value, DecompressedTooLarge), codec
