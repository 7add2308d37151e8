"""What a leader keeps about its epoch (Kafka's LeaderState): each voter's end offset and fetch
times, the high watermark (the majority's end offset, accepted only above the epoch start offset
and never going back), BeginQuorumEpoch acknowledgements and the check-quorum timer (a leader no
majority fetched from within fetch.timeout.ms * 1.5 resigns)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from kafkalite.raft.messages import ReplicaState


@dataclass
class VoterProgress:
    end_offset: int = -1  # the offset of the voter's last valid Fetch (its log end offset)
    last_fetch: float | None = None
    last_caught_up: float | None = None


@dataclass
class LeaderState:
    node_id: int
    epoch: int
    voters: tuple[int, ...]
    epoch_start_offset: int
    check_quorum_timeout: float  # seconds
    now: float
    high_watermark: int = -1  # unknown until something of this epoch is committed
    progress: dict[int, VoterProgress] = field(default_factory=dict)
    unacknowledged: set[int] = field(default_factory=set)  # voters still to get BeginQuorumEpoch
    fetched_since_check: set[int] = field(default_factory=set)
    check_quorum_deadline: float = 0.0

    def __post_init__(self) -> None:
        self.progress = {v: VoterProgress() for v in self.voters if v != self.node_id}
        self.unacknowledged = set(self.progress)
        self.check_quorum_deadline = self.now + self.check_quorum_timeout

    @property
    def sole_voter(self) -> bool:
        return not self.progress

    def acknowledge(self, voter: int) -> None:
        self.unacknowledged.discard(voter)

    def record_fetch(self, voter: int, now: float) -> None:
        """A Fetch or FetchSnapshot of this epoch from ``voter``: counts for check-quorum."""
        if voter not in self.progress:
            return
        self.acknowledge(voter)
        self.progress[voter].last_fetch = now
        self.fetched_since_check.add(voter)
        if len(self.fetched_since_check) >= len(self.voters) // 2:  # a majority, the leader included
            self.fetched_since_check.clear()
            self.check_quorum_deadline = now + self.check_quorum_timeout

    def check_quorum_expired(self, now: float) -> bool:
        return not self.sole_voter and now >= self.check_quorum_deadline

    def update_end_offset(self, voter: int, end_offset: int, leader_end: int, now: float) -> None:
        p = self.progress.get(voter)
        if p is None:
            return
        p.end_offset = end_offset
        if end_offset >= leader_end:
            p.last_caught_up = now

    def maybe_update_high_watermark(self, leader_end: int) -> bool:
        """LeaderState.maybeUpdateHighWatermark: the end offset a majority holds (voters sorted
        descending, index n/2), if above the epoch start offset and the current value."""
        ends = sorted([leader_end, *(p.end_offset for p in self.progress.values())], reverse=True)
        majority_end = ends[len(ends) // 2]
        if majority_end > self.epoch_start_offset and majority_end > self.high_watermark:
            self.high_watermark = majority_end
            return True
        return False

    def successors(self) -> tuple[int, ...]:
        """The other voters, furthest end offset first (nonLeaderVotersByDescendingFetchOffset)."""
        return tuple(sorted(self.progress, key=lambda v: (-self.progress[v].end_offset, v)))

    def replica_states(self, leader_end: int, now: float,
                       voters: Collection[int]) -> tuple[ReplicaState, ...]:
        out = []
        for v in sorted(voters):
            if v == self.node_id:
                ms = int(now * 1000)
                out.append(ReplicaState(v, leader_end, ms, ms))
                continue
            p = self.progress.get(v, VoterProgress())
            out.append(ReplicaState(v, p.end_offset,
                                    -1 if p.last_fetch is None else int(p.last_fetch * 1000),
                                    -1 if p.last_caught_up is None else int(p.last_caught_up * 1000)))
        return tuple(out)
