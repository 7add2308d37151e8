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
        cr.decode_key(b"\x00\x63\x00\x01g")
    with pytest.raises(DecodeError):
        cr.decode_offset_value(b"\x00\x09")


# --- consumer groups (KIP-848), key versions 3-8 -------------------------------------------------

_uuids = st.uuids()
_tps = st.lists(st.builds(lambda t, ps: cr.CG_TOPIC_PARTITIONS.cls(topic_id=t, partitions=ps),
                          _uuids, st.lists(st.integers(0, 2**31 - 1), max_size=5)), max_size=3)


@given(st.sampled_from(sorted(cr.CONSUMER_GROUP_VALUES)), st.text(max_size=12), st.text(max_size=12))
def test_consumer_group_keys_round_trip(record, group, member):
    key = cr.ConsumerGroupKey(record, group, member if record in (5, 7, 8) else None)
    data = cr.encode_key(key)
    assert struct.unpack(">h", data[:2])[0] == record
    assert cr.decode_key(data) == key


def test_consumer_group_metadata_bytes():
    # Kafka's ConsumerGroupMetadataKey v3 (not flexible) and ConsumerGroupMetadataValue v0 (flexible:
    # an empty tag section after the epoch).
    assert cr.encode_key(cr.ConsumerGroupKey(3, "g")) == b"\x00\x03\x00\x01g"
    value = cr.encode_consumer_group_value(3, cr.CONSUMER_GROUP_METADATA_VALUE.cls(epoch=7))
    assert value == b"\x00\x00" + struct.pack(">i", 7) + b"\x00"
    assert cr.decode_consumer_group_value(3, value).epoch == 7


@given(st.integers(-2, 2**31 - 1), st.integers(-2, 2**31 - 1), st.sampled_from([0, 1, 2]), _tps, _tps)
def test_current_member_assignment_round_trips(epoch, previous, state, assigned, pending):
    V = cr.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE.cls
    value = V(member_epoch=epoch, previous_member_epoch=previous, state=state, assigned_partitions=assigned,
              partitions_pending_revocation=pending)
    assert cr.decode_consumer_group_value(8, cr.encode_consumer_group_value(8, value)) == value


@given(st.none() | st.text(max_size=8), st.lists(st.text(max_size=8), max_size=4),
       st.none() | st.text(max_size=8), st.integers(-1, 2**31 - 1),
       st.none() | st.sampled_from(["uniform", "range"]),
       st.booleans())
def test_member_metadata_round_trips(instance, topics, regex, timeout, assignor, classic):
    C = cr.CLASSIC_MEMBER_METADATA
    value = cr.CONSUMER_GROUP_MEMBER_METADATA_VALUE.cls(
        instance_id=instance, rack_id=None, client_id="c", client_host="/127.0.0.1",
        subscribed_topic_names=topics, subscribed_topic_regex=regex, rebalance_timeout_ms=timeout,
        server_assignor=assignor, classic_member_metadata=C.cls(
            session_timeout_ms=45000,
            supported_protocols=[C["supported_protocols"].cls(name="range", metadata=b"x")])
        if classic else None)
    assert cr.decode_consumer_group_value(5, cr.encode_consumer_group_value(5, value)) == value


@given(_tps, st.integers(0, 2**31 - 1))
def test_target_assignment_and_partition_metadata_round_trip(tps, epoch):
    member = cr.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE.cls(topic_partitions=tps)
    assert cr.decode_consumer_group_value(7, cr.encode_consumer_group_value(7, member)) == member
    meta = cr.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE.cls(assignment_epoch=epoch)
    assert cr.decode_consumer_group_value(6, cr.encode_consumer_group_value(6, meta)) == meta
    T = cr.CONSUMER_GROUP_PARTITION_METADATA_VALUE["topics"]
    topics = cr.CONSUMER_GROUP_PARTITION_METADATA_VALUE.cls(topics=[
        T.cls(topic_id=t.topic_id, topic_name="t", num_partitions=len(t.partitions),
              partition_metadata=[T["partition_metadata"].cls(partition=p, racks=[]) for p in t.partitions])
        for t in tps])
    assert cr.decode_consumer_group_value(4, cr.encode_consumer_group_value(4, topics)) == topics
