"""Share groups' __consumer_offsets records (key versions 9-15, Kafka's ShareGroup*Key/Value
JSON): a key's bytes as Kafka writes them, and every value round-trips."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalite.protocol import coordinator_records as cr
from kafkalite.protocol.errors import DecodeError

from .strategies import struct_value


def test_keys_are_the_version_then_the_group_and_member():
    assert cr.encode_share_key(cr.ShareRecordKey(cr.SHARE_GROUP_METADATA, "g")) == b"\x00\x0b\x00\x01g"
    member = cr.encode_share_key(cr.ShareRecordKey(cr.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT, "g", "m"))
    assert member == b"\x00\x0e\x00\x01g\x00\x01m"
    assert cr.decode_share_key(member) == cr.ShareRecordKey(14, "g", "m")
    # Other keys are not share group records.
    assert cr.decode_share_key(cr.encode_key(cr.GroupKey("g"))) is None


def test_a_value_is_v0_flexible():
    metadata = cr.share_value_struct(cr.SHARE_GROUP_METADATA)
    value = cr.encode_share_value(cr.SHARE_GROUP_METADATA, metadata.cls(epoch=7))
    assert value == b"\x00\x00" + struct.pack(">i", 7) + b"\x00"  # version 0, Epoch, no tagged fields
    with pytest.raises(DecodeError):
        cr.decode_share_value(cr.SHARE_GROUP_METADATA, b"\x00\x01" + value[2:])


@pytest.mark.parametrize("version", list(cr.SHARE_GROUP_KEY_VERSIONS))
@given(data=st.data(), group=st.text(max_size=10), member=st.text(max_size=10))
def test_share_group_records_round_trip(version, data, group, member):
    key = cr.ShareRecordKey(version, group, member if version in (10, 13, 14) else None)
    assert cr.decode_share_key(cr.encode_share_key(key)) == key
    value = data.draw(struct_value(cr.share_value_struct(version), 0))
    assert cr.decode_share_value(version, cr.encode_share_value(version, value)) == value
