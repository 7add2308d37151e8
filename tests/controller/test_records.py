"""The metadata records: Kafka's MetadataRecordSerde frame (frame version 1, api key, version as
unsigned varints), round trips of every record kafkalite writes and of every version Kafka
declares, and refusals of what is not a record."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalite.controller import records as R
from kafkalite.protocol.errors import DecodeError
from kafkalite.protocol.schema import (
    BOOL,
    BYTES,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    STRING,
    UINT16,
    UUID,
    Array,
    Struct,
)

_VALUES = {
    INT8: st.integers(-(2 ** 7), 2 ** 7 - 1), INT16: st.integers(-(2 ** 15), 2 ** 15 - 1),
    INT32: st.integers(-(2 ** 31), 2 ** 31 - 1), INT64: st.integers(-(2 ** 63), 2 ** 63 - 1),
    UINT16: st.integers(0, 2 ** 16 - 1), BOOL: st.booleans(), STRING: st.text(max_size=8),
    BYTES: st.binary(max_size=8), UUID: st.uuids(), FLOAT64: st.floats(allow_nan=False),
}


def values_of(s: Struct, version: int) -> st.SearchStrategy:
    """A value of ``s`` with every field present in ``version`` drawn (others left default)."""
    fields = {}
    for f in s.fields:
        if (f.tag is None and version not in f.versions) or (f.tag is not None and version not in f.tagged):
            continue
        t = f.type
        if isinstance(t, Array):
            item = values_of(t.item, version) if isinstance(t.item, Struct) else _VALUES[t.item]
            strategy: st.SearchStrategy = st.lists(item, max_size=3)
        elif isinstance(t, Struct):
            strategy = values_of(t, version)
        else:
            strategy = _VALUES[t]
        if version in f.nullable:
            strategy = st.none() | strategy
        fields[f.name] = strategy
    return st.builds(s.cls, **fields)


def every_record_version() -> st.SearchStrategy:
    return st.sampled_from([(key, v) for key, (_, low, high, _) in sorted(R.RECORDS.items())
                            for v in range(low, high + 1)]).flatmap(
        lambda kv: st.tuples(st.just(kv[1]), values_of(R.RECORDS[kv[0]][0], kv[1])))


@settings(max_examples=300, deadline=None)
@given(every_record_version())
def test_every_version_of_every_record_round_trips(version_and_record):
    version, record = version_and_record
    data = R.encode(record, version)
    assert data[0] == R.FRAME_VERSION and R.decode(data) == record


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(sorted(R.RECORDS)).flatmap(
    lambda key: values_of(R.RECORDS[key][0], R.RECORDS[key][3])), max_size=6))
def test_written_versions_round_trip_as_a_snapshot_payload(records):
    assert R.decode_all(R.encode_all(records)) == records


def test_the_frame_is_kafkas():
    tid = uuid.UUID(int=1)
    data = R.encode(R.TOPIC_RECORD(name="t", topic_id=tid))
    # frame version 1, api key 2 (TopicRecord), version 0, compact string "t", the uuid, no tags
    assert data == bytes([1, 2, 0, 2]) + b"t" + tid.bytes + bytes([0])
    change = R.encode(R.PARTITION_CHANGE_RECORD(partition_id=0, topic_id=tid, leader=3))
    # PartitionChangeRecord (5): only the tagged Leader (tag 1, 4 bytes) is written.
    assert change == bytes([1, 5, 0]) + bytes(4) + tid.bytes + bytes([1, 1, 4, 0, 0, 0, 3])


@pytest.mark.parametrize("data", [
    bytes([0, 2, 0]),  # frame version 0
    bytes([1, 99, 0]),  # no such api key
    bytes([1, 2, 1]),  # TopicRecord has no version 1
    R.encode(R.NO_OP_RECORD()) + b"x",  # bytes after the record
])
def test_what_is_not_a_record_is_refused(data):
    with pytest.raises(DecodeError):
        R.decode(data)
