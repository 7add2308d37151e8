"""The consumer protocol embedded in the classic group protocol (protocol type "consumer"):
ConsumerProtocolSubscription, a JoinGroup protocol's metadata, and ConsumerProtocolAssignment,
a SyncGroup member's assignment (clients/src/main/resources/common/message/ConsumerProtocol*.json).
Each is an int16 version then the fields of that version, not flexible:

- Subscription v0: Topics [string], UserData nullable bytes; v1+ OwnedPartitions
  [Topic string, Partitions [int32]]; v2+ GenerationId int32; v3+ RackId nullable string.
- Assignment v0-3: AssignedPartitions [Topic string, Partitions [int32]], UserData nullable bytes.

A version above 3 is read as 3 (the later versions only add fields, as Kafka's ConsumerProtocol
reads them); a negative version or truncated bytes are a DecodeError. The group coordinator reads
these when it moves a classic group's members into a consumer group (online migration) and
writes assignments for the classic members of a consumer group.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from .errors import DecodeError

LATEST_VERSION = 3
TopicPartitions = tuple[tuple[str, tuple[int, ...]], ...]


@dataclass(frozen=True)
class Subscription:
    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned_partitions: TopicPartitions = ()
    generation_id: int = -1
    rack_id: str | None = None


@dataclass(frozen=True)
class AssignmentData:
    partitions: TopicPartitions
    user_data: bytes | None = None


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = bytes(data), 0

    def _take(self, fmt: str) -> int:
        try:
            (value,) = struct.unpack_from(fmt, self.data, self.pos)
        except struct.error:
            raise DecodeError("consumer protocol bytes end too early", offset=self.pos) from None
        self.pos += struct.calcsize(fmt)
        return int(value)

    def int16(self) -> int:
        return self._take(">h")

    def int32(self) -> int:
        return self._take(">i")

    def raw(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise DecodeError("consumer protocol bytes end too early", offset=self.pos)
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def string(self) -> str:
        n = self.int16()
        if n < 0:
            raise DecodeError("a non-nullable string is null", offset=self.pos)
        try:
            return self.raw(n).decode()
        except UnicodeDecodeError:
            raise DecodeError("a string is not UTF-8", offset=self.pos) from None

    def nullable_string(self) -> str | None:
        n = self.int16()
        if n < 0:
            return None
        self.pos -= 2
        return self.string()

    def nullable_bytes(self) -> bytes | None:
        n = self.int32()
        return None if n < 0 else self.raw(n)

    def count(self) -> int:
        n = self.int32()
        if n < 0 or n > len(self.data):
            raise DecodeError(f"bad array length {n}", offset=self.pos)
        return n

    def topic_partitions(self) -> TopicPartitions:
        out = []
        for _ in range(self.count()):
            topic = self.string()
            out.append((topic, tuple(self.int32() for _ in range(self.count()))))
        return tuple(out)


def _version(r: _Reader) -> int:
    version = r.int16()
    if version < 0:
        raise DecodeError(f"consumer protocol version {version}", offset=0)
    return min(version, LATEST_VERSION)


def version_of(data: bytes) -> int:
    """The version a subscription or assignment was written with (Kafka's deserializeVersion)."""
    return _version(_Reader(data))


def decode_subscription(data: bytes) -> Subscription:
    r = _Reader(data)
    version = _version(r)
    topics = tuple(r.string() for _ in range(r.count()))
    user_data = r.nullable_bytes()
    owned: TopicPartitions = ()
    generation, rack = -1, None
    if version >= 1:
        owned = r.topic_partitions()
    if version >= 2:
        generation = r.int32()
    if version >= 3:
        rack = r.nullable_string()
    return Subscription(topics, user_data, owned, generation, rack)


def _string(s: str) -> bytes:
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def _nullable_string(s: str | None) -> bytes:
    return struct.pack(">h", -1) if s is None else _string(s)


def _nullable_bytes(b: bytes | None) -> bytes:
    return struct.pack(">i", -1) if b is None else struct.pack(">i", len(b)) + b


def _topic_partitions(tps: TopicPartitions) -> bytes:
    out = [struct.pack(">i", len(tps))]
    for topic, partitions in tps:
        out.append(_string(topic) + struct.pack(f">i{len(partitions)}i", len(partitions), *partitions))
    return b"".join(out)


def encode_subscription(s: Subscription, version: int = LATEST_VERSION) -> bytes:
    out = [struct.pack(">hi", version, len(s.topics)), *(_string(t) for t in s.topics),
           _nullable_bytes(s.user_data)]
    if version >= 1:
        out.append(_topic_partitions(s.owned_partitions))
    if version >= 2:
        out.append(struct.pack(">i", s.generation_id))
    if version >= 3:
        out.append(_nullable_string(s.rack_id))
    return b"".join(out)


def decode_assignment(data: bytes) -> AssignmentData:
    """An empty assignment (b"", what a member without one has) is no partitions."""
    if not data:
        return AssignmentData(())
    r = _Reader(data)
    _version(r)
    partitions = r.topic_partitions()
    return AssignmentData(partitions, r.nullable_bytes())


def encode_assignment(a: AssignmentData, version: int = LATEST_VERSION) -> bytes:
    return struct.pack(">h", max(0, min(version, LATEST_VERSION))) + _topic_partitions(a.partitions) + \
        _nullable_bytes(a.user_data)
