"""Hostile input for a broker: random and mutated Kafka request frames, and the ways to write
them (whole, byte by byte, in pieces) and to end a connection (close, half-close, reset, read
then close). Pure functions of a ``random.Random``, so a run is reproduced by its seed; the
hypothesis test draws the same shapes through ``hypothesis.strategies.randoms``."""

from __future__ import annotations

import random
import struct

from kafkalite.protocol import ALL_APIS, encode_request

_SIZE = struct.Struct(">i")


def valid_frames() -> list[bytes]:
    """One request frame per api and version kafkalite knows, every field at its default."""
    return [encode_request(a.key, v, 7, "fuzz", a.request.cls())
            for a in ALL_APIS for v in range(a.versions.low, a.versions.high + 1)]


VALID = valid_frames()


def _framed(payload: bytes) -> bytes:
    return _SIZE.pack(len(payload)) + payload


def _random(rng: random.Random) -> bytes:
    return _framed(rng.randbytes(rng.randrange(0, 200)))


def _truncated(rng: random.Random) -> bytes:
    """A valid frame whose declared size is cut short inside its body (a short body)."""
    f = rng.choice(VALID)
    payload = f[4:rng.randrange(5, len(f) + 1)]
    return _framed(payload)


def _short_write(rng: random.Random) -> bytes:
    """The first bytes of a valid frame only: the broker waits for the rest."""
    f = rng.choice(VALID)
    return f[:rng.randrange(1, len(f))]


def _oversized(rng: random.Random) -> bytes:
    return _SIZE.pack(rng.choice([2**31 - 1, 104857601, 2**30])) + rng.randbytes(16)


def _negative_size(rng: random.Random) -> bytes:
    return _SIZE.pack(rng.choice([-1, -2**31, -rng.randrange(1, 1000)])) + rng.randbytes(8)


def _unknown_api(rng: random.Random) -> bytes:
    f = bytearray(rng.choice(VALID))
    struct.pack_into(">h", f, 4, rng.choice([-1, 0, 1, 2, 1000, 32767, rng.randrange(-32768, 32768)]))
    return bytes(f)


def _unknown_version(rng: random.Random) -> bytes:
    f = bytearray(rng.choice(VALID))
    struct.pack_into(">h", f, 6, rng.choice([-1, 99, 32767, rng.randrange(-32768, 32768)]))
    return bytes(f)


def _bit_flips(rng: random.Random) -> bytes:
    """Flipped bits anywhere after the size: broken headers, tagged fields, lengths, strings."""
    f = bytearray(rng.choice(VALID))
    for _ in range(rng.randrange(1, 6)):
        i = rng.randrange(4, len(f))
        f[i] ^= 1 << rng.randrange(8)
    return bytes(f)


HUGE = (b"\x7f\xff\xff\xff", b"\xff\xff\xff\xff", b"\xff\xff\xff\x7f", b"\x00\x0f\xff\xff")


def _huge_length(rng: random.Random) -> bytes:
    """A valid frame with 4 bytes somewhere after the header made a huge length (array, string,
    compact varint or tagged-field count)."""
    f = bytearray(rng.choice(VALID))
    if len(f) < 13:
        return bytes(f)
    i = rng.randrange(12, len(f) - 3)
    f[i:i + 4] = rng.choice(HUGE)
    return bytes(f)


def _trailing(rng: random.Random) -> bytes:
    """A valid request with bytes after its end (Kafka ignores them)."""
    f = rng.choice(VALID)
    return _framed(f[4:] + rng.randbytes(rng.randrange(1, 64)))


def _valid(rng: random.Random) -> bytes:
    return rng.choice(VALID)


MUTATIONS = {
    "random": _random, "truncated": _truncated, "short_write": _short_write, "oversized": _oversized,
    "negative_size": _negative_size, "unknown_api": _unknown_api, "unknown_version": _unknown_version,
    "bit_flips": _bit_flips, "huge_length": _huge_length, "trailing": _trailing, "valid": _valid,
}
WRITES = ("whole", "byte_by_byte", "pieces")
ENDINGS = ("close", "half_close", "reset", "read_then_close", "reset_before_answer")


def connection_plan(rng: random.Random, max_frames: int = 8) -> tuple[list[tuple[str, bytes]], str, str]:
    """What one hostile connection does: its frames (kind, bytes), how it writes them, how it ends."""
    frames = [(kind, MUTATIONS[kind](rng)) for kind in
              (rng.choice(list(MUTATIONS)) for _ in range(rng.randrange(1, max_frames + 1)))]
    return frames, rng.choice(WRITES), rng.choice(ENDINGS)
