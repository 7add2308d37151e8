"""The Raft requests and responses (messages.py) to and from their Kafka api bodies.

Vote (52), BeginQuorumEpoch (53), EndQuorumEpoch (54), Fetch (1) and FetchSnapshot (59) of the
single partition ``__cluster_metadata-0``; DescribeQuorum (55) answers with a QuorumInfo. Fetch
names the topic by name up to v12 and by Kafka's fixed id of ``__cluster_metadata`` (Uuid(0, 1))
from v13; its records are v2 record batches (batches.py).

Errors go where Kafka's KafkaRaftClient puts them: INCONSISTENT_CLUSTER_ID and INVALID_REQUEST
for a request of another topic or partition in the top-level error code, any other in the
partition's. A request whose cluster id is null is taken as this cluster's (Kafka skips the
check). A request that is not of ``__cluster_metadata-0`` raises WrongPartition: the caller
answers ``error_response(..., INVALID_REQUEST)``.
"""

from __future__ import annotations

import uuid
from typing import Any

from kafkalite.common.errors import ApiError
from kafkalite.protocol import ApiKey
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import (
    begin_quorum_epoch,
    describe_quorum,
    end_quorum_epoch,
    fetch,
    fetch_snapshot,
    vote,
)

from .batches import as_bytes, decode_entries, encode_entries
from .messages import (
    METADATA_PARTITION,
    METADATA_TOPIC,
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    OffsetAndEpoch,
    QuorumInfo,
    ReplicaState,
    Request,
    Response,
    VoteRequest,
    VoteResponse,
)

METADATA_TOPIC_ID = uuid.UUID(int=1)  # Kafka's Topic.CLUSTER_METADATA_TOPIC_ID, Uuid(0L, 1L)

# The versions a RaftManager sends (the highest Kafka 4.1.1 serves on controller listeners; Fetch
# 17, the last before KIP-1166's follower high watermark).
VERSIONS: dict[int, int] = {
    ApiKey.VOTE: 2,
    ApiKey.BEGIN_QUORUM_EPOCH: 1,
    ApiKey.END_QUORUM_EPOCH: 1,
    ApiKey.FETCH: 17,
    ApiKey.FETCH_SNAPSHOT: 1,
    ApiKey.DESCRIBE_QUORUM: 2,
}
RAFT_APIS = frozenset(VERSIONS)
TOP_LEVEL_ERRORS = frozenset({E.INCONSISTENT_CLUSTER_ID, E.INVALID_REQUEST})
NO_DIRECTORY = uuid.UUID(int=0)


class WrongPartition(ValueError):
    """A request that is not of __cluster_metadata-0 (one topic, one partition)."""


# --- requests -----------------------------------------------------------------------------------

def api_key_of(request: Request) -> int:
    if isinstance(request, VoteRequest):
        return ApiKey.VOTE
    if isinstance(request, BeginQuorumEpochRequest):
        return ApiKey.BEGIN_QUORUM_EPOCH
    if isinstance(request, EndQuorumEpochRequest):
        return ApiKey.END_QUORUM_EPOCH
    if isinstance(request, FetchRequest):
        return ApiKey.FETCH
    return ApiKey.FETCH_SNAPSHOT


def request_to_wire(request: Request, version: int | None = None) -> tuple[int, int, Any]:
    """(api key, version, body) of ``request``, at ``version`` or the one a RaftManager sends."""
    key = api_key_of(request)
    v = VERSIONS[key] if version is None else version
    return key, v, _REQUEST_WRITERS[key](request, v)


def _vote_request(r: VoteRequest, version: int) -> Any:
    p = vote.REQUEST_PARTITION.cls(
        partition_index=METADATA_PARTITION, replica_epoch=r.candidate_epoch, replica_id=r.candidate_id,
        last_offset_epoch=r.last_offset_epoch, last_offset=r.last_offset, pre_vote=r.pre_vote)
    return vote.REQUEST.cls(cluster_id=r.cluster_id, voter_id=r.voter_id,
                            topics=[vote.REQUEST_TOPIC.cls(topic_name=METADATA_TOPIC, partitions=[p])])


def _begin_request(r: BeginQuorumEpochRequest, version: int) -> Any:
    p = begin_quorum_epoch.REQUEST_PARTITION.cls(
        partition_index=METADATA_PARTITION, leader_id=r.leader_id, leader_epoch=r.leader_epoch)
    return begin_quorum_epoch.REQUEST.cls(
        cluster_id=r.cluster_id, voter_id=r.voter_id,
        topics=[begin_quorum_epoch.REQUEST_TOPIC.cls(topic_name=METADATA_TOPIC, partitions=[p])])


def _end_request(r: EndQuorumEpochRequest, version: int) -> Any:
    p = end_quorum_epoch.REQUEST_PARTITION.cls(
        partition_index=METADATA_PARTITION, leader_id=r.leader_id, leader_epoch=r.leader_epoch,
        preferred_successors=list(r.preferred_successors),
        preferred_candidates=[end_quorum_epoch.REPLICA_INFO.cls(candidate_id=c)
                              for c in r.preferred_successors])
    return end_quorum_epoch.REQUEST.cls(
        cluster_id=r.cluster_id,
        topics=[end_quorum_epoch.REQUEST_TOPIC.cls(topic_name=METADATA_TOPIC, partitions=[p])])


def _fetch_request(r: FetchRequest, version: int) -> Any:
    F = fetch.REQUEST
    p = F["topics"]["partitions"].cls(
        partition=METADATA_PARTITION, current_leader_epoch=r.current_leader_epoch,
        fetch_offset=r.fetch_offset, last_fetched_epoch=r.last_fetched_epoch, log_start_offset=-1,
        partition_max_bytes=0x7FFFFFFF)
    topic = F["topics"].cls(topic=METADATA_TOPIC, topic_id=METADATA_TOPIC_ID, partitions=[p])
    state = fetch.REPLICA_STATE.cls(replica_id=r.replica_id, replica_epoch=r.replica_epoch)
    return F.cls(cluster_id=r.cluster_id, replica_id=r.replica_id, replica_state=state,
                 max_wait_ms=r.max_wait_ms, min_bytes=0, max_bytes=0x7FFFFFFF, isolation_level=0,
                 session_id=0, session_epoch=-1, topics=[topic], forgotten_topics_data=[], rack_id="")


def _fetch_snapshot_request(r: FetchSnapshotRequest, version: int) -> Any:
    S = fetch_snapshot
    p = S.REQUEST_PARTITION.cls(
        partition=METADATA_PARTITION, current_leader_epoch=r.current_leader_epoch,
        snapshot_id=S.SNAPSHOT_ID.cls(end_offset=r.snapshot_id.offset, epoch=r.snapshot_id.epoch),
        position=r.position)
    return S.REQUEST.cls(cluster_id=r.cluster_id, replica_id=r.replica_id, max_bytes=r.max_bytes,
                         topics=[S.REQUEST_TOPIC.cls(name=METADATA_TOPIC, partitions=[p])])


_REQUEST_WRITERS: dict[int, Any] = {
    ApiKey.VOTE: _vote_request,
    ApiKey.BEGIN_QUORUM_EPOCH: _begin_request,
    ApiKey.END_QUORUM_EPOCH: _end_request,
    ApiKey.FETCH: _fetch_request,
    ApiKey.FETCH_SNAPSHOT: _fetch_snapshot_request,
}


def _only_partition(topics: Any, name_of: Any, index_of: Any, version: int = 0,
                    by_id: bool = False) -> Any:
    if len(topics) != 1 or len(topics[0].partitions) != 1:
        raise WrongPartition("not one topic of one partition")
    t = topics[0]
    if by_id:
        if t.topic_id != METADATA_TOPIC_ID:
            raise WrongPartition(f"topic id {t.topic_id}")
    elif name_of(t) != METADATA_TOPIC:
        raise WrongPartition(f"topic {name_of(t)}")
    p = t.partitions[0]
    if index_of(p) != METADATA_PARTITION:
        raise WrongPartition(f"partition {index_of(p)}")
    return p


def request_from_wire(api_key: int, version: int, body: Any, cluster_id: str) -> Request:
    """The Raft request a body holds; ``cluster_id`` stands for a null one. WrongPartition for
    one not of __cluster_metadata-0."""
    cid = body.cluster_id if body.cluster_id is not None else cluster_id
    if api_key == ApiKey.VOTE:
        p = _only_partition(body.topics, lambda t: t.topic_name, lambda p: p.partition_index)
        return VoteRequest(cid, p.replica_epoch, p.replica_id, p.last_offset_epoch, p.last_offset,
                           body.voter_id if version >= 1 else -1, p.pre_vote if version >= 2 else False)
    if api_key == ApiKey.BEGIN_QUORUM_EPOCH:
        p = _only_partition(body.topics, lambda t: t.topic_name, lambda p: p.partition_index)
        return BeginQuorumEpochRequest(cid, p.leader_id, p.leader_epoch,
                                       body.voter_id if version >= 1 else -1)
    if api_key == ApiKey.END_QUORUM_EPOCH:
        p = _only_partition(body.topics, lambda t: t.topic_name, lambda p: p.partition_index)
        successors = (tuple(p.preferred_successors) if version == 0
                      else tuple(c.candidate_id for c in p.preferred_candidates))
        return EndQuorumEpochRequest(cid, p.leader_id, p.leader_epoch, successors)
    if api_key == ApiKey.FETCH:
        p = _only_partition(body.topics, lambda t: t.topic, lambda p: p.partition, by_id=version >= 13)
        if version >= 15:
            replica_id, replica_epoch = body.replica_state.replica_id, body.replica_state.replica_epoch
        else:
            replica_id, replica_epoch = body.replica_id, -1
        return FetchRequest(cid, replica_id, p.current_leader_epoch, p.fetch_offset, p.last_fetched_epoch,
                            body.max_wait_ms, replica_epoch)
    if api_key == ApiKey.FETCH_SNAPSHOT:
        p = _only_partition(body.topics, lambda t: t.name, lambda p: p.partition)
        return FetchSnapshotRequest(cid, body.replica_id, p.current_leader_epoch,
                                    OffsetAndEpoch(p.snapshot_id.end_offset, p.snapshot_id.epoch),
                                    p.position, body.max_bytes)
    raise ValueError(f"api key {api_key} is not a Raft request")


def source_of(request: Request) -> int:
    """The replica that sent ``request``."""
    if isinstance(request, VoteRequest):
        return request.candidate_id
    if isinstance(request, (BeginQuorumEpochRequest, EndQuorumEpochRequest)):
        return request.leader_id
    return request.replica_id


def is_metadata_fetch(version: int, body: Any) -> bool:
    """Whether a Fetch request body reads __cluster_metadata (what a controller listener hands
    to the RaftManager)."""
    for t in body.topics:
        if (t.topic_id == METADATA_TOPIC_ID) if version >= 13 else (t.topic == METADATA_TOPIC):
            return True
    return False


# --- responses ----------------------------------------------------------------------------------

def response_to_wire(api_key: int, version: int, response: Response) -> Any:
    return _RESPONSE_WRITERS[api_key](response, version)


def error_response(api_key: int, version: int, error: int) -> Any:
    """The body answering a request with a top-level ``error`` (no partitions)."""
    if api_key == ApiKey.VOTE:
        return vote.RESPONSE.cls(error_code=error, topics=[])
    if api_key == ApiKey.BEGIN_QUORUM_EPOCH:
        return begin_quorum_epoch.RESPONSE.cls(error_code=error, topics=[])
    if api_key == ApiKey.END_QUORUM_EPOCH:
        return end_quorum_epoch.RESPONSE.cls(error_code=error, topics=[])
    if api_key == ApiKey.FETCH:
        return fetch.RESPONSE.cls(throttle_time_ms=0, error_code=error, session_id=0, responses=[])
    if api_key == ApiKey.FETCH_SNAPSHOT:
        return fetch_snapshot.RESPONSE.cls(throttle_time_ms=0, error_code=error, topics=[])
    if api_key == ApiKey.DESCRIBE_QUORUM:
        return describe_quorum.RESPONSE.cls(error_code=error, topics=[])
    raise ValueError(f"api key {api_key} is not a Raft request")


def _split(error: int) -> tuple[int, int]:
    """(top-level, partition) error codes."""
    return (error, E.NONE) if error in TOP_LEVEL_ERRORS else (E.NONE, error)


def _vote_response(r: VoteResponse, version: int) -> Any:
    top, part = _split(r.error)
    if top:
        return error_response(ApiKey.VOTE, version, top)
    p = vote.RESPONSE_PARTITION.cls(partition_index=METADATA_PARTITION, error_code=part,
                                    leader_id=r.leader_id, leader_epoch=r.leader_epoch,
                                    vote_granted=r.vote_granted)
    return vote.RESPONSE.cls(error_code=E.NONE,
                             topics=[vote.RESPONSE_TOPIC.cls(topic_name=METADATA_TOPIC, partitions=[p])])


def _epoch_response(module: Any, key: int) -> Any:
    def write(r: BeginQuorumEpochResponse | EndQuorumEpochResponse, version: int) -> Any:
        top, part = _split(r.error)
        if top:
            return error_response(key, version, top)
        p = module.RESPONSE_PARTITION.cls(partition_index=METADATA_PARTITION, error_code=part,
                                          leader_id=r.leader_id, leader_epoch=r.leader_epoch)
        return module.RESPONSE.cls(
            error_code=E.NONE, topics=[module.RESPONSE_TOPIC.cls(topic_name=METADATA_TOPIC, partitions=[p])])
    return write


def _fetch_response(r: FetchResponse, version: int) -> Any:
    top, part = _split(r.error)
    if top:
        return error_response(ApiKey.FETCH, version, top)
    R = fetch.RESPONSE
    P = R["responses"]["partitions"]
    d = r.diverging_epoch
    diverging = (fetch.EPOCH_END_OFFSET.cls(epoch=d.epoch, end_offset=d.offset)
                 if d is not None else fetch.EPOCH_END_OFFSET.cls())
    snapshot = (fetch.SNAPSHOT_ID.cls(end_offset=r.snapshot_id.offset, epoch=r.snapshot_id.epoch)
                if r.snapshot_id is not None else fetch.SNAPSHOT_ID.cls())
    leader = fetch.LEADER_ID_AND_EPOCH.cls(leader_id=r.leader_id, leader_epoch=r.leader_epoch)
    p = P.cls(partition_index=METADATA_PARTITION, error_code=part, high_watermark=r.high_watermark,
              last_stable_offset=-1, log_start_offset=r.log_start_offset, diverging_epoch=diverging,
              current_leader=leader, snapshot_id=snapshot, aborted_transactions=None,
              preferred_read_replica=-1, records=encode_entries(r.entries))
    topic = R["responses"].cls(topic=METADATA_TOPIC, topic_id=METADATA_TOPIC_ID, partitions=[p])
    return R.cls(throttle_time_ms=0, error_code=E.NONE, session_id=0, responses=[topic], node_endpoints=[])


def _fetch_snapshot_response(r: FetchSnapshotResponse, version: int) -> Any:
    top, part = _split(r.error)
    if top:
        return error_response(ApiKey.FETCH_SNAPSHOT, version, top)
    S = fetch_snapshot
    sid = r.snapshot_id
    p = S.RESPONSE_PARTITION.cls(
        index=METADATA_PARTITION, error_code=part,
        snapshot_id=S.SNAPSHOT_ID.cls(end_offset=sid.offset if sid else -1, epoch=sid.epoch if sid else -1),
        current_leader=S.LEADER_ID_AND_EPOCH.cls(leader_id=r.leader_id, leader_epoch=r.leader_epoch),
        size=r.size, position=r.position, unaligned_records=r.chunk)
    return S.RESPONSE.cls(throttle_time_ms=0, error_code=E.NONE,
                          topics=[S.RESPONSE_TOPIC.cls(name=METADATA_TOPIC, partitions=[p])])


_RESPONSE_WRITERS: dict[int, Any] = {
    ApiKey.VOTE: _vote_response,
    ApiKey.BEGIN_QUORUM_EPOCH: _epoch_response(begin_quorum_epoch, ApiKey.BEGIN_QUORUM_EPOCH),
    ApiKey.END_QUORUM_EPOCH: _epoch_response(end_quorum_epoch, ApiKey.END_QUORUM_EPOCH),
    ApiKey.FETCH: _fetch_response,
    ApiKey.FETCH_SNAPSHOT: _fetch_snapshot_response,
}


def _response_partition(topics: Any, partitions: Any = lambda t: t.partitions) -> Any:
    for t in topics:
        for p in partitions(t):
            return p
    return None


def response_from_wire(api_key: int, version: int, body: Any) -> Response:
    """The Raft response a body holds (a top-level error, or no partition, as an error with no
    leader known)."""
    if api_key == ApiKey.FETCH:
        p = _response_partition(body.responses)
        if body.error_code or p is None:
            return FetchResponse(body.error_code or E.UNKNOWN_TOPIC_OR_PARTITION, -1, -1)
        diverging = (OffsetAndEpoch(p.diverging_epoch.end_offset, p.diverging_epoch.epoch)
                     if p.diverging_epoch.epoch >= 0 and p.diverging_epoch.end_offset >= 0 else None)
        snapshot = (OffsetAndEpoch(p.snapshot_id.end_offset, p.snapshot_id.epoch)
                    if p.snapshot_id.epoch >= 0 and p.snapshot_id.end_offset >= 0 else None)
        records = p.records
        entries = tuple(decode_entries(records)) if records is not None and len(records) else ()
        return FetchResponse(p.error_code, p.current_leader.leader_id, p.current_leader.leader_epoch,
                             p.high_watermark, p.log_start_offset, entries, diverging, snapshot)
    p = _response_partition(body.topics)
    if body.error_code or p is None:
        error = body.error_code or E.UNKNOWN_TOPIC_OR_PARTITION
        if api_key == ApiKey.VOTE:
            return VoteResponse(error, -1, -1, False)
        if api_key == ApiKey.BEGIN_QUORUM_EPOCH:
            return BeginQuorumEpochResponse(error, -1, -1)
        if api_key == ApiKey.END_QUORUM_EPOCH:
            return EndQuorumEpochResponse(error, -1, -1)
        return FetchSnapshotResponse(error, -1, -1)
    if api_key == ApiKey.VOTE:
        return VoteResponse(p.error_code, p.leader_id, p.leader_epoch, p.vote_granted)
    if api_key == ApiKey.BEGIN_QUORUM_EPOCH:
        return BeginQuorumEpochResponse(p.error_code, p.leader_id, p.leader_epoch)
    if api_key == ApiKey.END_QUORUM_EPOCH:
        return EndQuorumEpochResponse(p.error_code, p.leader_id, p.leader_epoch)
    if api_key == ApiKey.FETCH_SNAPSHOT:
        sid = p.snapshot_id
        return FetchSnapshotResponse(
            p.error_code, p.current_leader.leader_id, p.current_leader.leader_epoch,
            OffsetAndEpoch(sid.end_offset, sid.epoch) if sid.end_offset >= 0 and sid.epoch >= 0 else None,
            p.size, p.position, as_bytes(p.unaligned_records))
    raise ValueError(f"api key {api_key} is not a Raft response")


# --- DescribeQuorum -----------------------------------------------------------------------------

def _replica_state(s: ReplicaState) -> Any:
    return describe_quorum.REPLICA_STATE.cls(
        replica_id=s.replica_id, replica_directory_id=NO_DIRECTORY, log_end_offset=s.log_end_offset,
        last_fetch_timestamp=s.last_fetch_timestamp, last_caught_up_timestamp=s.last_caught_up_timestamp)


def describe_quorum_response(info: QuorumInfo | None, error: int = E.NONE, message: str | None = None) -> Any:
    """DescribeQuorum's answer: the leader's ``info``, or ``error`` (a partition error, as Kafka's
    NOT_LEADER_OR_FOLLOWER, when ``info`` is None)."""
    D = describe_quorum
    if info is None:
        p = D.RESPONSE_PARTITION.cls(partition_index=METADATA_PARTITION, error_code=error,
                                     error_message=message, leader_id=-1, leader_epoch=-1, high_watermark=-1)
    else:
        p = D.RESPONSE_PARTITION.cls(
            partition_index=METADATA_PARTITION, error_code=E.NONE, leader_id=info.leader_id,
            leader_epoch=info.leader_epoch, high_watermark=info.high_watermark,
            current_voters=[_replica_state(s) for s in info.voters],
            observers=[_replica_state(s) for s in info.observers])
    return D.RESPONSE.cls(error_code=E.NONE,
                          topics=[D.RESPONSE_TOPIC.cls(topic_name=METADATA_TOPIC, partitions=[p])])


def describe_quorum_request() -> Any:
    D = describe_quorum
    return D.REQUEST.cls(topics=[D.REQUEST_TOPIC.cls(
        topic_name=METADATA_TOPIC, partitions=[D.REQUEST_PARTITION.cls(partition_index=METADATA_PARTITION)])])


def check_describe_quorum(body: Any) -> None:
    """WrongPartition unless the request asks of __cluster_metadata-0."""
    _only_partition(body.topics, lambda t: t.topic_name, lambda p: p.partition_index)


def quorum_info_from_wire(body: Any) -> QuorumInfo:
    """The QuorumInfo of a DescribeQuorum response; ApiError for an error."""
    p = _response_partition(body.topics)
    error = body.error_code or (p.error_code if p is not None else E.UNKNOWN_TOPIC_OR_PARTITION)
    if error or p is None:
        raise ApiError(error, E.for_code(error).name)

    def state(s: Any) -> ReplicaState:
        return ReplicaState(s.replica_id, s.log_end_offset, s.last_fetch_timestamp,
                            s.last_caught_up_timestamp)
    return QuorumInfo(p.leader_id, p.leader_epoch, p.high_watermark,
                      tuple(state(s) for s in p.current_voters), tuple(state(s) for s in p.observers))
