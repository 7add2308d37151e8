"""The Raft requests and responses as kafkalite's RaftNode sees them: plain values, no I/O and no
wire format. The RaftManager converts each to and from its Kafka api (Vote 52, BeginQuorumEpoch 53,
EndQuorumEpoch 54, Fetch 1 of ``__cluster_metadata``, FetchSnapshot 59, DescribeQuorum 55).

Offsets follow Kafka: ``end offset`` and ``high_watermark`` are exclusive (the next offset to be
written / the first not yet committed). An error is a kafkalite.protocol.error_codes code.
"""

from __future__ import annotations

from dataclasses import dataclass, field

METADATA_TOPIC = "__cluster_metadata"  # the metadata log's topic, partition 0
METADATA_PARTITION = 0
NO_LEADER = -1


@dataclass(frozen=True)
class Entry:
    """One record of the metadata log. ``control``: a Raft control record (LeaderChange), which
    the state machine never sees."""
    offset: int
    epoch: int
    data: bytes
    control: bool = False


@dataclass(frozen=True)
class OffsetAndEpoch:
    offset: int
    epoch: int


@dataclass(frozen=True)
class VoteRequest:
    cluster_id: str
    candidate_epoch: int  # the epoch the candidate campaigns in (a pre-vote: its epoch + 1)
    candidate_id: int
    last_offset_epoch: int
    last_offset: int  # the candidate's log end offset
    voter_id: int = -1  # the voter asked (v1+)
    pre_vote: bool = False  # KIP-996: non-binding, changes no state


@dataclass(frozen=True)
class VoteResponse:
    error: int
    leader_id: int
    leader_epoch: int
    vote_granted: bool


@dataclass(frozen=True)
class BeginQuorumEpochRequest:
    cluster_id: str
    leader_id: int
    leader_epoch: int
    voter_id: int = -1


@dataclass(frozen=True)
class BeginQuorumEpochResponse:
    error: int
    leader_id: int
    leader_epoch: int


@dataclass(frozen=True)
class EndQuorumEpochRequest:
    cluster_id: str
    leader_id: int
    leader_epoch: int
    preferred_successors: tuple[int, ...] = ()


@dataclass(frozen=True)
class EndQuorumEpochResponse:
    error: int
    leader_id: int
    leader_epoch: int


@dataclass(frozen=True)
class FetchRequest:
    cluster_id: str
    replica_id: int
    current_leader_epoch: int
    fetch_offset: int
    last_fetched_epoch: int
    max_wait_ms: int
    replica_epoch: int = -1  # the broker epoch of an observer; -1 for voters


@dataclass(frozen=True)
class FetchResponse:
    error: int
    leader_id: int
    leader_epoch: int
    high_watermark: int = -1
    log_start_offset: int = -1
    entries: tuple[Entry, ...] = ()
    diverging_epoch: OffsetAndEpoch | None = None  # (end offset, epoch): truncate there, refetch
    snapshot_id: OffsetAndEpoch | None = None  # fetch this snapshot first (the log starts after it)


@dataclass(frozen=True)
class FetchSnapshotRequest:
    cluster_id: str
    replica_id: int
    current_leader_epoch: int
    snapshot_id: OffsetAndEpoch
    position: int
    max_bytes: int = 0x7FFFFFFF


@dataclass(frozen=True)
class FetchSnapshotResponse:
    error: int
    leader_id: int
    leader_epoch: int
    snapshot_id: OffsetAndEpoch | None = None
    size: int = 0  # of the whole snapshot
    position: int = 0
    chunk: bytes = b""


@dataclass(frozen=True)
class ReplicaState:
    replica_id: int
    log_end_offset: int
    last_fetch_timestamp: int = -1  # ms since the epoch; -1 unknown
    last_caught_up_timestamp: int = -1


@dataclass(frozen=True)
class QuorumInfo:
    """DescribeQuorum's answer, from the leader."""
    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: tuple[ReplicaState, ...] = ()
    observers: tuple[ReplicaState, ...] = field(default_factory=tuple)


Request = VoteRequest | BeginQuorumEpochRequest | EndQuorumEpochRequest | FetchRequest | FetchSnapshotRequest
Response = (VoteResponse | BeginQuorumEpochResponse | EndQuorumEpochResponse | FetchResponse
            | FetchSnapshotResponse)
