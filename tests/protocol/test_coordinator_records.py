"""__consumer_offsets records: the bytes Kafka writes (its JSON specs, spelled out here) and back."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalite.protocol import coordinator_records as cr
from kafkalite.protocol.errors import DecodeError


def test_offset_commit_key_and_value_v3_bytes():
    key = cr.encode_key(cr.OffsetKey("g", "t", 7))
    assert key == b"\x00\x01" + b"\x00\x01g" + b"\x00\x01t" + struct.pack(">i", 7)
    value = cr.encode_offset_value(cr.OFFSET_COMMIT_VALUE.cls(offset=42, leader_epoch=3, metadata="m",
                                                              commit_timestamp=1000))
    assert value == b"\x00\x03" + struct.pack(">qi", 42, 3) + b"\x00\x01m" + struct.pack(">q", 1000)
    assert cr.decode_key(key) == cr.OffsetKey("g", "t", 7)
    decoded = cr.decode_offset_value(value)
    assert (decoded.offset, decoded.leader_epoch, decoded.metadata, decoded.commit_timestamp) == (
        42, 3, "m", 1000)


def test_offset_commit_value_v1_carries_an_expiry_and_v0_key_reads():
    v1 = b"\x00\x01" + struct.pack(">q", 5) + b"\x00\x00" + struct.pack(">qq", 10, 20)
    decoded = cr.decode_offset_value(v1)
    assert (decoded.offset, decoded.leader_epoch, decoded.commit_timestamp, decoded.expire_timestamp) == (
        5, -1, 10, 20)
    assert cr.decode_key(b"\x00\x00\x00\x01g\x00\x01t\x00\x00\x00\x01") == cr.OffsetKey("g", "t", 1)


@given(st.text(max_size=20), st.integers(-1, 2**31 - 1), st.one_of(st.none(), st.text(max_size=10)),
       st.lists(st.tuples(st.text(max_size=8), st.none() | st.text(max_size=8), st.binary(max_size=30),
                          st.binary(max_size=30)), max_size=4))
def test_group_metadata_round_trips(group, generation, protocol, members):
    M = cr.MEMBER_METADATA.cls
    value = cr.GROUP_METADATA_VALUE.cls(
        protocol_type="consumer", generation=generation, protocol=protocol,
        leader=members[0][0] if members else None, current_state_timestamp=123,
        members=[M(member_id=m, group_instance_id=i, client_id="c", client_host="/127.0.0.1",
                   rebalance_timeout=300000, session_timeout=45000, subscription=s, assignment=a)
                 for m, i, s, a in members])
    data = cr.encode_group_value(value)
    assert data[:2] == b"\x00\x03"
    assert cr.decode_group_value(data) == value
    assert cr.decode_key(cr.encode_key(cr.GroupKey(group))) == cr.GroupKey(group)


def test_unknown_versions_are_refused():
    with pytest.raises(DecodeError):
        cr.decode_key(b"\x00\x05\x00\x01g")
    with pytest.raises(DecodeError):
        cr.decode_offset_value(b"\x00\x09")
