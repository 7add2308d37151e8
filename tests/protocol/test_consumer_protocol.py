"""The consumer protocol embedded in JoinGroup metadata and SyncGroup assignments: every version
round-trips, later versions read as v3, and bad bytes are a DecodeError (never another error)."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalite.protocol import consumer_protocol as cp
from kafkalite.protocol.errors import DecodeError

names = st.text(max_size=8)
tps = st.lists(st.tuples(names, st.lists(st.integers(-2**31, 2**31 - 1), max_size=4).map(tuple)),
               max_size=4).map(tuple)
user_data = st.none() | st.binary(max_size=8)


@given(st.lists(names, max_size=4).map(tuple), user_data, tps, st.integers(-2**31, 2**31 - 1),
       st.none() | names, st.integers(0, 3))
def test_subscriptions_round_trip_at_every_version(topics, data, owned, generation, rack, version):
    full = cp.Subscription(topics, data, owned, generation, rack)
    decoded = cp.decode_subscription(cp.encode_subscription(full, version))
    expected = cp.Subscription(topics, data, owned if version >= 1 else (),
                               generation if version >= 2 else -1, rack if version >= 3 else None)
    assert decoded == expected
    assert cp.version_of(cp.encode_subscription(full, version)) == version


@given(tps, user_data, st.integers(0, 3))
def test_assignments_round_trip_at_every_version(partitions, data, version):
    a = cp.AssignmentData(partitions, data)
    assert cp.decode_assignment(cp.encode_assignment(a, version)) == a


def test_a_later_version_reads_as_the_latest_and_an_empty_assignment_is_none():
    data = cp.encode_subscription(cp.Subscription(("t",), rack_id="r"), 3)
    assert cp.decode_subscription(struct.pack(">h", 7) + data[2:] + b"later fields").rack_id == "r"
    assert cp.decode_assignment(b"") == cp.AssignmentData(())


@given(st.binary(max_size=40))
def test_bad_bytes_are_a_decode_error(data):
    for decode in (cp.decode_subscription, cp.decode_assignment):
        try:
            decode(data)
        except DecodeError:
            pass


@pytest.mark.parametrize("data", [b"\xff\xff", b"\x00\x00\x00\x00\x00\x01\x00\x05ab"])
def test_a_negative_version_or_truncated_bytes_are_refused(data):
    with pytest.raises(DecodeError):
        cp.decode_subscription(data)
