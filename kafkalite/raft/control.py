"""Raft control records: the LeaderChange record (ControlRecordType 2) a leader appends at the
start of its epoch. Its value is Kafka's LeaderChangeMessage v0 (flexible): Version int16,
LeaderId int32, Voters [VoterId int32], GrantingVoters [VoterId int32], written with compact
arrays and empty tagged-field sections, as MemoryRecordsBuilder.appendLeaderChangeMessage does."""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass

LEADER_CHANGE = 2  # ControlRecordType
LEADER_CHANGE_VERSION = 0
CONTROL_KEY_VERSION = 0


def control_record_key(record_type: int = LEADER_CHANGE) -> bytes:
    """A control record's key: version int16 (0) and type int16."""
    return struct.pack(">hh", CONTROL_KEY_VERSION, record_type)


@dataclass(frozen=True)
class LeaderChangeMessage:
    leader_id: int
    voters: tuple[int, ...]
    granting_voters: tuple[int, ...]
    version: int = LEADER_CHANGE_VERSION


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _read_uvarint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
        if shift > 28:
            raise ValueError("varint too long")


def _voters(ids: Iterable[int]) -> bytes:
    items = list(ids)
    return _uvarint(len(items) + 1) + b"".join(struct.pack(">i", v) + b"\x00" for v in items)


def encode_leader_change(message: LeaderChangeMessage) -> bytes:
    return (struct.pack(">hi", message.version, message.leader_id) + _voters(message.voters)
            + _voters(message.granting_voters) + b"\x00")


def _skip_tags(data: bytes, pos: int) -> int:
    count, pos = _read_uvarint(data, pos)
    for _ in range(count):
        _tag, pos = _read_uvarint(data, pos)
        size, pos = _read_uvarint(data, pos)
        pos += size
    return pos


def _read_voters(data: bytes, pos: int) -> tuple[tuple[int, ...], int]:
    n, pos = _read_uvarint(data, pos)
    out = []
    for _ in range(max(0, n - 1)):
        if pos + 4 > len(data):
            raise ValueError("truncated LeaderChangeMessage")
        out.append(struct.unpack_from(">i", data, pos)[0])
        pos = _skip_tags(data, pos + 4)
    return tuple(out), pos


def decode_leader_change(data: bytes) -> LeaderChangeMessage:
    if len(data) < 6:
        raise ValueError("truncated LeaderChangeMessage")
    version, leader_id = struct.unpack_from(">hi", data, 0)
    voters, pos = _read_voters(data, 6)
    granting, pos = _read_voters(data, pos)
    _skip_tags(data, pos)
    return LeaderChangeMessage(leader_id, voters, granting, version)
