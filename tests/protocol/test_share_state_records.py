"""__share_group_state records: the bytes Kafka's share coordinator writes and back."""

from __future__ import annotations

import struct
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalite.protocol import share_state_records as sr
from kafkalite.protocol.errors import DecodeError

from .strategies import struct_value


def test_key_bytes_carry_the_record_type_as_version():
    tid = uuid.UUID(int=5)
    snap = sr.encode_key(True, "g", tid, 3)
    assert snap == b"\x00\x00" + b"\x00\x01g" + tid.bytes + struct.pack(">i", 3)
    update = sr.encode_key(False, "g", tid, 3)
    assert update[:2] == b"\x00\x01" and update[2:] == snap[2:]
    assert sr.decode_key(snap) == sr.RecordKey(True, "g", tid, 3)
    assert sr.decode_key(update) == sr.RecordKey(False, "g", tid, 3)


def test_snapshot_value_bytes():
    B = sr.STATE_BATCH.cls
    value = sr.SHARE_SNAPSHOT_VALUE.cls(snapshot_epoch=1, state_epoch=2, leader_epoch=3, start_offset=10,
                                        state_batches=[B(first_offset=10, last_offset=12, delivery_state=2,
                                                         delivery_count=1)])
    data = sr.encode_value(True, value)
    # version, uint16, int32, int32, int64, compact array (n+1), batch, the batch's and the value's tags
    assert data == (b"\x00\x00" + struct.pack(">Hiiq", 1, 2, 3, 10) + b"\x02"
                    + struct.pack(">qqbh", 10, 12, 2, 1) + b"\x00" + b"\x00")
    assert sr.decode_value(True, data) == value


@given(st.booleans(), st.text(max_size=20), st.uuids(), st.integers(-(2**31), 2**31 - 1))
def test_keys_round_trip(snapshot, group, topic_id, partition):
    assert sr.decode_key(sr.encode_key(snapshot, group, topic_id, partition)) == sr.RecordKey(
        snapshot, group, topic_id, partition)


@pytest.mark.parametrize("snapshot", [True, False])
@given(data=st.data())
def test_values_round_trip(snapshot, data):
    value = data.draw(struct_value(sr.SHARE_SNAPSHOT_VALUE if snapshot else sr.SHARE_UPDATE_VALUE, 0))
    assert sr.decode_value(snapshot, sr.encode_value(snapshot, value)) == value


@pytest.mark.parametrize("data", [b"", b"\x00", b"\x00\x02\x00\x01g", b"\x00\x00\x00\x01g" + bytes(16)
                                  + struct.pack(">i", 1) + b"x"])
def test_bad_keys_are_decode_errors(data):
    with pytest.raises(DecodeError):
        sr.decode_key(data)


def test_unknown_value_version_is_a_decode_error():
    with pytest.raises(DecodeError):
        sr.decode_value(True, b"\x00\x01\x00")
