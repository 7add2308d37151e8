"""Golden bytes, by hand from Kafka 3.9's message specs, for the data path versions kio does not
have (Produce 0-2, Fetch 0-3, ListOffsets 0, OffsetForLeaderEpoch 0-1), and a flexible Fetch
response carrying a real record batch in its compact ``records``.

Non-flexible: strings int16 length, arrays int32 count, bytes int32 length (-1 null). Flexible:
uvarint(length + 1), and a tagged-field section (0x00 when empty) at the end of every struct.
"""

from __future__ import annotations

import pytest

from kafkalite.protocol import decode_body, encode_body
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import fetch, list_offsets, offset_for_leader_epoch, produce
from kafkalite.protocol.records import Record, build_batch, decode_records

from .golden_bytes import NO_TAGS, i16, i32, i64, s16

BATCH = build_batch([Record(0, 0, b"k", b"v", (("h", b"x"),))], 0, base_timestamp=1_700_000_000_000)

CASES = [
    pytest.param(
        ApiKey.PRODUCE, 2, False,
        produce.REQUEST(acks=1, timeout_ms=1500, topic_data=[produce.TOPIC_PRODUCE_DATA(
            name="t", partition_data=[produce.PARTITION_PRODUCE_DATA(index=3, records=BATCH)])]),
        # no transactional_id before v3
        i16(1) + i32(1500) + i32(1) + s16("t") + i32(1) + i32(3) + i32(len(BATCH)) + BATCH,
        id="Produce-v2-request",
    ),
    pytest.param(
        ApiKey.PRODUCE, 0, False,
        produce.REQUEST(acks=0, timeout_ms=0, topic_data=[produce.TOPIC_PRODUCE_DATA(
            name="t", partition_data=[produce.PARTITION_PRODUCE_DATA(index=0, records=None)])]),
        i16(0) + i32(0) + i32(1) + s16("t") + i32(1) + i32(0) + i32(-1),
        id="Produce-v0-request-null-records",
    ),
    pytest.param(
        ApiKey.PRODUCE, 2, True,
        produce.RESPONSE(throttle_time_ms=7, responses=[produce.TOPIC_PRODUCE_RESPONSE(
            name="t", partition_responses=[produce.PARTITION_PRODUCE_RESPONSE(
                index=3, error_code=0, base_offset=42, log_append_time_ms=-1)])]),
        # responses first, throttle time (v1+) last; log append time v2+
        i32(1) + s16("t") + i32(1) + i32(3) + i16(0) + i64(42) + i64(-1) + i32(7),
        id="Produce-v2-response",
    ),
    pytest.param(
        ApiKey.FETCH, 3, False,
        fetch.REQUEST(replica_id=-1, max_wait_ms=500, min_bytes=1, max_bytes=1024, topics=[
            fetch.FETCH_TOPIC(topic="t", partitions=[fetch.FETCH_PARTITION(
                partition=0, fetch_offset=5, partition_max_bytes=512)])]),
        i32(-1) + i32(500) + i32(1) + i32(1024) + i32(1) + s16("t") + i32(1)
        + i32(0) + i64(5) + i32(512),
        id="Fetch-v3-request",
    ),
    pytest.param(
        ApiKey.FETCH, 0, True,
        fetch.RESPONSE(responses=[fetch.FETCHABLE_TOPIC_RESPONSE(topic="t", partitions=[
            fetch.PARTITION_DATA(partition_index=0, error_code=0, high_watermark=1, records=BATCH)])]),
        i32(1) + s16("t") + i32(1) + i32(0) + i16(0) + i64(1) + i32(len(BATCH)) + BATCH,
        id="Fetch-v0-response",
    ),
    pytest.param(
        ApiKey.FETCH, 12, True,
        fetch.RESPONSE(throttle_time_ms=0, error_code=0, session_id=0, responses=[
            fetch.FETCHABLE_TOPIC_RESPONSE(topic="t", partitions=[fetch.PARTITION_DATA(
                partition_index=0, error_code=0, high_watermark=1, last_stable_offset=1,
                log_start_offset=0, aborted_transactions=None, preferred_read_replica=-1,
                records=BATCH)])]),
        i32(0) + i16(0) + i32(0)
        + b"\x02" + b"\x02t"  # one topic, compact "t"
        + b"\x02" + i32(0) + i16(0) + i64(1) + i64(1) + i64(0)
        + b"\x00"  # aborted transactions: null compact array
        + i32(-1)
        + bytes([len(BATCH) + 1]) + BATCH  # compact records (a batch under 127 bytes)
        + NO_TAGS + NO_TAGS + NO_TAGS,
        id="Fetch-v12-response",
    ),
    pytest.param(
        ApiKey.LIST_OFFSETS, 0, False,
        list_offsets.REQUEST(replica_id=-1, topics=[list_offsets.LIST_OFFSETS_TOPIC(
            name="t", partitions=[list_offsets.LIST_OFFSETS_PARTITION(
                partition_index=2, timestamp=-1, max_num_offsets=1)])]),
        i32(-1) + i32(1) + s16("t") + i32(1) + i32(2) + i64(-1) + i32(1),
        id="ListOffsets-v0-request",
    ),
    pytest.param(
        ApiKey.LIST_OFFSETS, 0, True,
        list_offsets.RESPONSE(topics=[list_offsets.LIST_OFFSETS_TOPIC_RESPONSE(
            name="t", partitions=[list_offsets.LIST_OFFSETS_PARTITION_RESPONSE(
                partition_index=2, error_code=0, old_style_offsets=[10, 0])])]),
        # v0 answers with an array of offsets, no timestamp/offset pair
        i32(1) + s16("t") + i32(1) + i32(2) + i16(0) + i32(2) + i64(10) + i64(0),
        id="ListOffsets-v0-response",
    ),
    pytest.param(
        ApiKey.OFFSET_FOR_LEADER_EPOCH, 0, True,
        offset_for_leader_epoch.RESPONSE(topics=[offset_for_leader_epoch.OFFSET_FOR_LEADER_TOPIC_RESULT(
            topic="t", partitions=[offset_for_leader_epoch.EPOCH_END_OFFSET(
                error_code=0, partition=1, end_offset=99)])]),
        # no leader epoch before v1, no throttle time before v2
        i32(1) + s16("t") + i32(1) + i16(0) + i32(1) + i64(99),
        id="OffsetForLeaderEpoch-v0-response",
    ),
    pytest.param(
        ApiKey.OFFSET_FOR_LEADER_EPOCH, 1, False,
        offset_for_leader_epoch.REQUEST(topics=[offset_for_leader_epoch.OFFSET_FOR_LEADER_TOPIC(
            topic="t", partitions=[offset_for_leader_epoch.OFFSET_FOR_LEADER_PARTITION(
                partition=1, leader_epoch=4)])]),
        # no replica id (v3+), no current leader epoch (v2+)
        i32(1) + s16("t") + i32(1) + i32(1) + i32(4),
        id="OffsetForLeaderEpoch-v1-request",
    ),
]


@pytest.mark.parametrize(("api_key", "version", "response", "value", "expected"), CASES)
def test_golden(api_key, version, response, value, expected):
    assert encode_body(api_key, version, value, response=response) == expected
    assert decode_body(api_key, version, expected, response=response) == value


def test_records_come_back_as_the_batch_bytes():
    resp = decode_body(ApiKey.FETCH, 12, CASES[5].values[4], response=True)
    records = resp.responses[0].partitions[0].records
    assert records == BATCH
    assert decode_records(records) == [Record(0, 0, b"k", b"v", (("h", b"x"),))]


@pytest.mark.parametrize("version", [3, 9])  # int32-length and compact records
def test_produced_records_decode_as_a_writable_view_into_the_frame(version):
    """What lets the broker check, stamp and write a batch where it was received: the records of
    a Produce decoded from a bytearray are a view into it, no copy; from bytes, a read-only one."""
    body = encode_body(ApiKey.PRODUCE, version, produce.REQUEST(
        acks=1, timeout_ms=1, topic_data=[produce.TOPIC_PRODUCE_DATA(
            name="t", partition_data=[produce.PARTITION_PRODUCE_DATA(index=0, records=BATCH)])]))
    frame = bytearray(body)
    records = decode_body(ApiKey.PRODUCE, version, frame).topic_data[0].partition_data[0].records
    assert type(records) is memoryview and not records.readonly and records == BATCH
    records[0] = 0xFF  # writes through to the frame
    assert frame[body.index(BATCH)] == 0xFF
    records.release()
    ro = decode_body(ApiKey.PRODUCE, version, bytes(body)).topic_data[0].partition_data[0].records
    assert type(ro) is memoryview and ro.readonly and ro == BATCH
