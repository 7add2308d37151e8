"""The Raft messages to and from their Kafka api bodies and back, through real bytes (raft/wire.py,
raft/batches.py): every field the RaftManager sends survives; entries travel as v2 record batches
(partition leader epoch = entry epoch, LeaderChange as a control batch)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalite.protocol import ApiKey, decode_body, encode_body
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.records import ControlRecordType, decode_control_key, decode_records, iter_batches
from kafkalite.raft import wire
from kafkalite.raft.batches import (
    decode_entries,
    encode_entries,
)
from kafkalite.raft.messages import (
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    Entry,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    OffsetAndEpoch,
    QuorumInfo,
    ReplicaState,
    VoteRequest,
    VoteResponse,
)

FAST = settings(max_examples=40, deadline=None)
i32 = st.integers(0, 2**31 - 1)
i64 = st.integers(0, 2**63 - 1)
ids = st.integers(-1, 1000)
cluster = st.text(min_size=1, max_size=22)
partition_errors = st.sampled_from([E.NONE, E.FENCED_LEADER_EPOCH, E.NOT_LEADER_OR_FOLLOWER,
                                    E.UNKNOWN_LEADER_EPOCH, E.BROKER_NOT_AVAILABLE])
offset_and_epoch = st.builds(OffsetAndEpoch, i64, i32)


@st.composite
def entries(draw):
    offset = draw(st.integers(0, 2**40))
    epoch = draw(st.integers(0, 100))
    out = []
    for _ in range(draw(st.integers(0, 12))):
        offset += draw(st.sampled_from([1, 1, 1, 5]))
        epoch += draw(st.sampled_from([0, 0, 0, 1]))
        out.append(Entry(offset, epoch, draw(st.binary(max_size=40)), draw(st.booleans())))
    return tuple(out)


requests = st.one_of(
    st.builds(VoteRequest, cluster, i32, ids, i32, i64, ids, st.booleans()),
    st.builds(BeginQuorumEpochRequest, cluster, ids, i32, ids),
    st.builds(EndQuorumEpochRequest, cluster, ids, i32, st.lists(i32, max_size=4).map(tuple)),
    st.builds(FetchRequest, cluster, ids, i32, i64, i32, i32, st.integers(-1, 2**40)),
    st.builds(FetchSnapshotRequest, cluster, ids, i32, offset_and_epoch, i64, i32),
)

responses = st.one_of(
    st.builds(VoteResponse, partition_errors, ids, i32, st.booleans()),
    st.builds(BeginQuorumEpochResponse, partition_errors, ids, i32),
    st.builds(EndQuorumEpochResponse, partition_errors, ids, i32),
    st.builds(FetchResponse, partition_errors, ids, i32, st.integers(-1, 2**50), st.integers(-1, 2**50),
              entries(), st.none() | offset_and_epoch, st.none() | offset_and_epoch),
    st.builds(FetchSnapshotResponse, partition_errors, ids, i32, st.none() | offset_and_epoch, i64, i64,
              st.binary(max_size=100)),
)


@FAST
@given(requests)
def test_every_request_survives_the_wire(request):
    key, version, body = wire.request_to_wire(request)
    assert key == wire.api_key_of(request)
    decoded = decode_body(key, version, encode_body(key, version, body))
    assert wire.request_from_wire(key, version, decoded, "other") == request


@FAST
@given(responses)
def test_every_response_survives_the_wire(response):
    key = {VoteResponse: ApiKey.VOTE, BeginQuorumEpochResponse: ApiKey.BEGIN_QUORUM_EPOCH,
           EndQuorumEpochResponse: ApiKey.END_QUORUM_EPOCH, FetchResponse: ApiKey.FETCH,
           FetchSnapshotResponse: ApiKey.FETCH_SNAPSHOT}[type(response)]
    version = wire.VERSIONS[key]
    body = wire.response_to_wire(key, version, response)
    decoded = decode_body(key, version, encode_body(key, version, body, response=True), response=True)
    assert wire.response_from_wire(key, version, decoded) == response


@given(st.sampled_from(sorted(wire.RAFT_APIS - {ApiKey.DESCRIBE_QUORUM})),
       st.sampled_from([E.INCONSISTENT_CLUSTER_ID, E.INVALID_REQUEST]))
def test_cluster_id_and_bad_partition_errors_are_top_level(key, error):
    version = wire.VERSIONS[key]
    body = wire.error_response(key, version, error)
    assert body.error_code == error
    decoded = decode_body(key, version, encode_body(key, version, body, response=True), response=True)
    assert wire.response_from_wire(key, version, decoded).error == error


def test_a_null_cluster_id_reads_as_this_clusters():
    key, version, body = wire.request_to_wire(BeginQuorumEpochRequest("c", 1, 2, 3))
    body.cluster_id = None
    assert wire.request_from_wire(key, version, body, "mine").cluster_id == "mine"


@given(st.sampled_from([12, 13, 15, 17, 18]))
def test_fetch_names_the_metadata_topic_by_name_then_by_kafkas_id(version):
    request = FetchRequest("c", 2, 5, 10, 4, 500)
    _, _, body = wire.request_to_wire(request, version)
    decoded = decode_body(ApiKey.FETCH, version, encode_body(ApiKey.FETCH, version, body))
    assert wire.is_metadata_fetch(version, decoded)
    if version >= 13:
        assert decoded.topics[0].topic_id == wire.METADATA_TOPIC_ID
    assert wire.request_from_wire(ApiKey.FETCH, version, decoded, "c").fetch_offset == 10


def test_a_request_of_another_partition_is_refused():
    _, version, body = wire.request_to_wire(VoteRequest("c", 2, 1, 1, 5))
    body.topics[0].partitions[0].partition_index = 1
    try:
        wire.request_from_wire(ApiKey.VOTE, version, body, "c")
    except wire.WrongPartition:
        pass
    else:
        raise AssertionError("accepted partition 1")


@FAST
@given(entries())
def test_entries_are_record_batches_stamped_with_their_epoch(es):
    buf = encode_entries(es)
    assert decode_entries(buf) == list(es)
    seen = []
    for pos, header in iter_batches(buf):
        records = decode_records(buf, pos, header)
        for r in records:
            e = next(e for e in es if e.offset == header.base_offset + r.offset_delta)
            assert header.partition_leader_epoch == e.epoch
            assert header.is_control == e.control
            if e.control:
                assert len(records) == 1
                assert decode_control_key(r.key).type is ControlRecordType.LEADER_CHANGE
            seen.append(e)
    assert seen == list(es)


def test_describe_quorum_answers_from_the_leader_and_refuses_elsewhere():
    info = QuorumInfo(1, 4, 17, (ReplicaState(1, 17, 1000, 1000), ReplicaState(2, 12)), (ReplicaState(9, 3),))
    for version in (0, 1, 2):
        body = wire.describe_quorum_response(info)
        data = encode_body(ApiKey.DESCRIBE_QUORUM, version, body, response=True)
        decoded = decode_body(ApiKey.DESCRIBE_QUORUM, version, data, response=True)
        got = wire.quorum_info_from_wire(decoded)
        assert (got.leader_id, got.leader_epoch, got.high_watermark) == (1, 4, 17)
        assert [s.log_end_offset for s in got.voters] == [17, 12]
        if version >= 1:
            assert got == info
    refused = wire.describe_quorum_response(None, E.NOT_LEADER_OR_FOLLOWER)
    try:
        wire.quorum_info_from_wire(refused)
    except Exception as e:  # ApiError
        assert e.code == E.NOT_LEADER_OR_FOLLOWER
    else:
        raise AssertionError("no error")
