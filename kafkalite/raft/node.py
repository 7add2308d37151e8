"""RaftNode: one voter of the KRaft quorum (Kafka's KafkaRaftClient + QuorumState, KIP-595 with
KIP-996 pre-vote and KIP-630 snapshots), with no I/O of its own and no clock: every call gets the
time ``now`` (seconds), and what it wants sent comes back from ``poll`` as (destination, request).

The driver (RaftManager) calls ``handle_request`` for each inbound request (``reply`` is called
exactly once: at once, or later for a parked Fetch), ``handle_response``/``handle_failure`` for the
outcome of each request ``poll`` gave it, and ``poll`` after each of those and at
``next_deadline()``. The node sends at most one request at a time to each destination.

Durability: the quorum-state file is written before a transition takes effect (a vote before it
is answered), entries are fsynced by the log before ``append`` returns or the next Fetch goes out.

The state machine reads committed entries with ``read_committed`` from the offset it has applied;
when that offset is below ``log_start_offset`` it first loads ``latest_snapshot()``.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from kafkalite.protocol import error_codes as ec
from kafkalite.raft.config import RETRY_BACKOFF_BASE_MS, QuorumConfig
from kafkalite.raft.control import LeaderChangeMessage, encode_leader_change
from kafkalite.raft.leader_state import LeaderState
from kafkalite.raft.log import ReplicatedLog, ValidKind
from kafkalite.raft.messages import (
    NO_LEADER,
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
    Request,
    Response,
    VoteRequest,
    VoteResponse,
)
from kafkalite.raft.quorum_state import NO_ID, ElectionState, QuorumStateStore
from kafkalite.raft.roles import Role, check_transition
from kafkalite.raft.snapshots import CorruptSnapshotError

log = logging.getLogger(__name__)

INFINITY = float("inf")
INVALID_VOTER_KEY = ec.BY_NAME["INVALID_VOTER_KEY"].code
SNAPSHOT_NOT_FOUND = ec.BY_NAME["SNAPSHOT_NOT_FOUND"].code
POSITION_OUT_OF_RANGE = ec.BY_NAME["POSITION_OUT_OF_RANGE"].code


class NotLeaderError(Exception):
    """``append`` on a node that is not the leader."""

    def __init__(self, leader_id: int, epoch: int) -> None:
        super().__init__(f"not the leader (leader {leader_id}, epoch {epoch})")
        self.leader_id = leader_id
        self.epoch = epoch


class SafetyError(RuntimeError):
    """A leader asked for what Raft forbids (truncating committed entries): a bug somewhere."""


@dataclass
class _ParkedFetch:
    src: int
    request: FetchRequest
    reply: Callable[[Response], None]
    deadline: float


@dataclass
class _SnapshotFetch:
    snapshot_id: OffsetAndEpoch
    data: bytearray
    size: int = -1


class RaftNode:
    def __init__(self, node_id: int, voters: Collection[int], cluster_id: str, log: ReplicatedLog,
                 quorum_state: QuorumStateStore, config: QuorumConfig, now: float,
                 rng: random.Random | None = None) -> None:
        if node_id not in voters:
            raise ValueError(f"node {node_id} is not one of the voters {sorted(voters)}")
        self.node_id = node_id
        self.voters: tuple[int, ...] = tuple(sorted(set(voters)))
        self.cluster_id = cluster_id
        self.log = log
        self.config = config
        self._store = quorum_state
        self._rng = rng if rng is not None else random.Random()
        self._role = Role.UNATTACHED
        self._epoch = 0
        self._leader_id = NO_LEADER
        self._voted_id = NO_ID
        self._committed = -1  # the high watermark this node knows (never goes back in a process)
        # per role
        self._election_deadline = INFINITY
        self._backoff_deadline: float | None = None
        self._fetch_deadline = INFINITY
        self._granted: set[int] = set()
        self._rejected: set[int] = set()
        self._retries = 0
        self._leader: LeaderState | None = None
        self._has_fetched = False  # a follower that fetched from its leader refuses pre-votes
        self._snapshot_fetch: _SnapshotFetch | None = None
        self._preferred: tuple[int, ...] = ()
        self._unacked_end: set[int] = set()
        # requests
        self._inflight: dict[int, Request] = {}
        self._retry_at: dict[int, float] = {}
        self._parked: list[_ParkedFetch] = []
        self._initialize(now)

    # ----- state ---------------------------------------------------------------------------------
    @property
    def epoch(self) -> int:
        return self._epoch

    @property
    def leader_id(self) -> int:
        return self._leader_id

    @property
    def role(self) -> Role:
        return self._role

    @property
    def voted_id(self) -> int:
        return self._voted_id

    @property
    def is_leader(self) -> bool:
        return self._role is Role.LEADER

    @property
    def high_watermark(self) -> int:
        """Exclusive: entries below it are committed. -1 while unknown (after a start)."""
        return self._committed

    @property
    def log_end_offset(self) -> int:
        return self.log.end_offset

    @property
    def log_start_offset(self) -> int:
        return self.log.start_offset

    @property
    def epoch_start_offset(self) -> int:
        """The leader's: the offset of the LeaderChange entry that opened its epoch; else -1."""
        return self._leader.epoch_start_offset if self._leader is not None else -1

    def describe(self, now: float) -> QuorumInfo:
        """DescribeQuorum's answer; voters' progress only on the leader."""
        if self._leader is None:
            return QuorumInfo(self._leader_id, self._epoch, self._committed)
        return QuorumInfo(self.node_id, self._epoch, self._leader.high_watermark,
                          self._leader.replica_states(self.log.end_offset, now, self.voters))

    def read_committed(self, start: int, max_entries: int) -> list[Entry]:
        """Committed entries (control ones included) from ``start``; ``start`` below the log start
        offset raises ValueError: load the latest snapshot first."""
        if start >= self._committed:
            return []
        return self.log.read(start, max_entries=max_entries, end=self._committed)

    def latest_snapshot(self) -> tuple[OffsetAndEpoch, bytes] | None:
        return self.log.latest_snapshot()

    def create_snapshot(self, snapshot_id: OffsetAndEpoch, payload: bytes) -> None:
        """The state machine's snapshot of everything below ``snapshot_id.offset``, which must be
        committed; the log then drops the entries it covers."""
        if snapshot_id.offset > self._committed:
            raise ValueError(f"snapshot {snapshot_id} is above the high watermark {self._committed}")
        self.log.create_snapshot(snapshot_id, payload)

    # ----- leader ----------------------------------------------------------------------------------
    def append(self, now: float, data: Sequence[bytes]) -> int:
        """Append records as the leader; the offset of the last one."""
        if self._leader is None:
            raise NotLeaderError(self._leader_id, self._epoch)
        if not data:
            raise ValueError("nothing to append")
        start = self.log.end_offset
        self.log.append([Entry(start + i, self._epoch, bytes(d)) for i, d in enumerate(data)])
        self._maybe_update_leader_hw()
        self._wake_parked(now)
        return self.log.end_offset - 1

    def resign(self, now: float) -> None:
        """Graceful: a leader stops leading and tells the others (EndQuorumEpoch), naming its most
        caught-up voters first as successors."""
        if self._leader is not None:
            self._transition(now, Role.RESIGNED, self._epoch, self.node_id,
                             preferred=self._leader.successors())

    # ----- timers ------------------------------------------------------------------------------
    def poll(self, now: float) -> list[tuple[int, Request]]:
        for parked in [p for p in self._parked if now >= p.deadline]:
            self._parked.remove(parked)
            self._answer_fetch(now, parked)
        for _ in range(4):  # transitions that lead to others at once (sole voter, won elections)
            if not self._run_timers(now):
                break
        return self._requests(now)

    def next_deadline(self) -> float:
        d = min((p.deadline for p in self._parked), default=INFINITY)
        role = self._role
        if role in (Role.UNATTACHED, Role.PROSPECTIVE, Role.RESIGNED):
            d = min(d, self._election_deadline)
        elif role is Role.CANDIDATE:
            d = min(d, self._backoff_deadline if self._backoff_deadline is not None
                    else self._election_deadline)
        elif role is Role.FOLLOWER:
            d = min(d, self._fetch_deadline)
        elif self._leader is not None and not self._leader.sole_voter:
            d = min(d, self._leader.check_quorum_deadline)
        for dst in self._destinations():
            if dst not in self._inflight:
                d = min(d, self._retry_at.get(dst, 0.0))
        return d

    def _run_timers(self, now: float) -> bool:
        """One step of the current role's timers; True when it changed role."""
        role = self._role
        if role is Role.UNATTACHED and now >= self._election_deadline:
            self._start_election(now)
            return True
        if role is Role.PROSPECTIVE:
            return self._check_prevote(now)
        if role is Role.CANDIDATE:
            if len(self._granted) >= self._majority():
                self._become_leader(now)
                return True
            if self._backoff_deadline is None and (self._lost() or now >= self._election_deadline):
                self._backoff_deadline = now + self._binary_backoff_ms(self._retries) / 1000
            if self._backoff_deadline is not None and now >= self._backoff_deadline:
                self._transition(now, Role.PROSPECTIVE, self._epoch)
                return True
            return False
        if role is Role.FOLLOWER and now >= self._fetch_deadline:
            self._transition(now, Role.PROSPECTIVE, self._epoch, self._leader_id)
            return True
        if role is Role.LEADER and self._leader is not None and self._leader.check_quorum_expired(now):
            log.info("node %s: no majority fetched within the check-quorum timeout; resigning", self.node_id)
            self._transition(now, Role.RESIGNED, self._epoch, self.node_id,
                             preferred=self._leader.successors())
            return True
        if role is Role.RESIGNED and now >= self._election_deadline:
            if self._sole_voter:
                self._start_election(now)
            else:
                self._transition(now, Role.UNATTACHED, self._epoch + 1)
            return True
        return False

    def _check_prevote(self, now: float) -> bool:
        if len(self._granted) >= self._majority():
            self._transition(now, Role.CANDIDATE, self._epoch + 1, voted_id=self.node_id)
            return True
        if self._lost() or now >= self._election_deadline:
            if self._leader_id != NO_LEADER:
                self._transition(now, Role.FOLLOWER, self._epoch, self._leader_id)
            else:
                self._transition(now, Role.UNATTACHED, self._epoch)
            return True
        return False

    def _start_election(self, now: float) -> None:
        if self._sole_voter:
            self._transition(now, Role.CANDIDATE, self._epoch + 1, voted_id=self.node_id)
            self._become_leader(now)
        else:
            self._transition(now, Role.PROSPECTIVE, self._epoch, self._leader_id)

    def _destinations(self) -> list[int]:
        role = self._role
        if role in (Role.PROSPECTIVE, Role.CANDIDATE):
            if self._backoff_deadline is not None:
                return []
            return [v for v in self.voters if v not in self._granted and v not in self._rejected]
        if role is Role.LEADER and self._leader is not None:
            return sorted(self._leader.unacknowledged)
        if role is Role.FOLLOWER:
            return [self._leader_id]
        if role is Role.RESIGNED:
            return sorted(self._unacked_end)
        return []

    def _requests(self, now: float) -> list[tuple[int, Request]]:
        out: list[tuple[int, Request]] = []
        for dst in self._destinations():
            if dst in self._inflight or now < self._retry_at.get(dst, 0.0):
                continue
            request = self._build_request(dst)
            self._inflight[dst] = request
            out.append((dst, request))
        return out

    def _build_request(self, dst: int) -> Request:
        role = self._role
        if role in (Role.PROSPECTIVE, Role.CANDIDATE):
            pre = role is Role.PROSPECTIVE
            return VoteRequest(self.cluster_id, self._epoch + 1 if pre else self._epoch, self.node_id,
                               self.log.last_epoch, self.log.end_offset, dst, pre)
        if role is Role.LEADER:
            return BeginQuorumEpochRequest(self.cluster_id, self.node_id, self._epoch, dst)
        if role is Role.RESIGNED:
            return EndQuorumEpochRequest(self.cluster_id, self.node_id, self._epoch, self._preferred)
        if self._snapshot_fetch is not None:
            fetch = self._snapshot_fetch
            return FetchSnapshotRequest(self.cluster_id, self.node_id, self._epoch, fetch.snapshot_id,
                                        len(fetch.data), self.config.fetch_snapshot_max_bytes)
        return FetchRequest(self.cluster_id, self.node_id, self._epoch, self.log.end_offset,
                            self.log.last_epoch, self.config.fetch_max_wait_ms)

    # ----- transitions ---------------------------------------------------------------------------
    @property
    def _sole_voter(self) -> bool:
        return self.voters == (self.node_id,)

    def _majority(self) -> int:
        return len(self.voters) // 2 + 1

    def _lost(self) -> bool:
        return len(self._rejected) > len(self.voters) - self._majority()

    def _random_election_timeout(self) -> float:
        ms = self.config.election_timeout_ms
        return (ms + self._rng.randrange(max(1, ms))) / 1000

    def _binary_backoff_ms(self, retries: int) -> int:
        """binaryExponentialElectionBackoffMs."""
        bound = 2 << min(20, max(0, retries - 1))
        return min(RETRY_BACKOFF_BASE_MS * self._rng.randrange(bound), self.config.election_backoff_max_ms)

    def _end_epoch_backoff_ms(self, preferred: Sequence[int]) -> int:
        """endEpochElectionBackoff: 0 for the first preferred successor (or one not listed), then
        strictly exponential in the position."""
        if self.node_id not in preferred:
            return 0
        pos = list(preferred).index(self.node_id)
        if pos == 0:
            return 0
        cap = self.config.election_backoff_max_ms
        return min(cap, (cap >> (len(preferred) - 1)) << (pos - 1))

    def _initialize(self, now: float) -> None:
        """QuorumState.initialize, then a sole voter elects itself."""
        stored = self._store.read() or ElectionState(0)
        log_epoch = self.log.last_epoch
        self._election_deadline = now + self._random_election_timeout()
        if stored.epoch < log_epoch:
            self._set(Role.UNATTACHED, log_epoch, NO_LEADER, NO_ID)
            self._store.write(ElectionState(log_epoch))
        elif stored.leader_id == self.node_id:
            self._set(Role.RESIGNED, stored.epoch, self.node_id, stored.voted_id)
            self._preferred = ()
            self._unacked_end = set(self.voters) - {self.node_id}
        elif stored.voted_id == self.node_id:
            self._set(Role.CANDIDATE, stored.epoch, NO_LEADER, self.node_id)
            self._granted, self._rejected, self._retries = {self.node_id}, set(), 1
        elif stored.leader_id != NO_LEADER and stored.leader_id in self.voters:
            self._set(Role.FOLLOWER, stored.epoch, stored.leader_id, stored.voted_id)
            self._fetch_deadline = now + self.config.fetch_timeout_ms / 1000
        else:
            self._set(Role.UNATTACHED, stored.epoch, NO_LEADER, stored.voted_id)
        log.info("node %s starts as %s in epoch %s", self.node_id, self._role.value, self._epoch)
        if self._sole_voter:
            if self._role is not Role.CANDIDATE:
                self._transition(now, Role.CANDIDATE, self._epoch + 1, voted_id=self.node_id)
            self._become_leader(now)

    def _set(self, role: Role, epoch: int, leader_id: int, voted_id: int) -> None:
        self._role, self._epoch, self._leader_id, self._voted_id = role, epoch, leader_id, voted_id

    def _transition(self, now: float, role: Role, epoch: int, leader_id: int = NO_LEADER,
                    voted_id: int | None = None, preferred: tuple[int, ...] = ()) -> None:
        check_transition(self._role, role, self._epoch, epoch, self._sole_voter)
        if voted_id is None:
            voted_id = self._voted_id if epoch == self._epoch else NO_ID
        if role is not Role.RESIGNED:  # durable first; Resigned lives in memory only
            self._store.write(ElectionState(epoch, leader_id, voted_id))
        log.info("node %s: %s epoch %s -> %s epoch %s (leader %s, voted %s)", self.node_id,
                 self._role.value, self._epoch, role.value, epoch, leader_id, voted_id)
        was_leader = self._leader is not None
        old_role = self._role
        self._set(role, epoch, leader_id, voted_id)
        self._leader = None
        self._inflight.clear()
        self._retry_at.clear()
        self._backoff_deadline = None
        self._snapshot_fetch = None
        self._has_fetched = False
        self._fetch_deadline = INFINITY
        self._election_deadline = INFINITY
        if role is Role.CANDIDATE:
            self._retries = self._retries + 1 if old_role is Role.PROSPECTIVE else 1
        elif role is Role.PROSPECTIVE and old_role is not Role.CANDIDATE:
            self._retries = 0  # a new election, not a candidate's retry
        if role in (Role.PROSPECTIVE, Role.CANDIDATE):
            self._granted, self._rejected = {self.node_id}, set()
        if role in (Role.UNATTACHED, Role.PROSPECTIVE, Role.CANDIDATE, Role.RESIGNED):
            self._election_deadline = now + self._random_election_timeout()
        if role is Role.FOLLOWER:
            self._fetch_deadline = now + self.config.fetch_timeout_ms / 1000
        if role is Role.RESIGNED:
            self._preferred = preferred
            self._unacked_end = set(self.voters) - {self.node_id}
        if was_leader or self._parked:
            self._wake_parked(now)  # answered with the new state (an error, now)

    def _become_leader(self, now: float) -> None:
        granted = tuple(sorted(self._granted))
        check_transition(self._role, Role.LEADER, self._epoch, self._epoch, self._sole_voter)
        self._store.write(ElectionState(self._epoch, self.node_id, self.node_id))
        log.info("node %s: leader of epoch %s", self.node_id, self._epoch)
        self._set(Role.LEADER, self._epoch, self.node_id, self.node_id)
        self._inflight.clear()
        self._retry_at.clear()
        self._backoff_deadline = None
        self._election_deadline = INFINITY
        start = self.log.end_offset
        self._leader = LeaderState(self.node_id, self._epoch, self.voters, start,
                                   self.config.check_quorum_timeout_ms / 1000, now)
        message = LeaderChangeMessage(self.node_id, self.voters, granted)
        self.log.append([Entry(start, self._epoch, encode_leader_change(message), control=True)])
        self._maybe_update_leader_hw()

    def _maybe_update_leader_hw(self) -> bool:
        if self._leader is None or not self._leader.maybe_update_high_watermark(self.log.end_offset):
            return False
        self._committed = max(self._committed, self._leader.high_watermark)
        return True

    def _learn(self, now: float, leader_id: int, epoch: int) -> bool:
        """maybeTransition: what another node says about the epoch and its leader; True when it
        made this node change role."""
        if leader_id == self.node_id:
            leader_id = NO_LEADER  # our own leadership we know better than anyone
        known = leader_id != NO_LEADER and leader_id in self.voters
        if epoch > self._epoch:
            if known:
                self._transition(now, Role.FOLLOWER, epoch, leader_id)
            else:
                self._transition(now, Role.UNATTACHED, epoch)
            return True
        if (epoch == self._epoch and known and self._leader_id == NO_LEADER
                and self._role in (Role.UNATTACHED, Role.PROSPECTIVE, Role.CANDIDATE)):
            self._transition(now, Role.FOLLOWER, epoch, leader_id)
            return True
        return False

    # ----- inbound requests ----------------------------------------------------------------------
    def handle_request(self, now: float, src: int, request: Request,
                       reply: Callable[[Response], None]) -> None:
        if isinstance(request, FetchRequest):
            self._handle_fetch(now, src, request, reply)
        elif isinstance(request, VoteRequest):
            reply(self._handle_vote(now, request))
        elif isinstance(request, BeginQuorumEpochRequest):
            reply(self._handle_begin(now, request))
        elif isinstance(request, EndQuorumEpochRequest):
            reply(self._handle_end(now, request))
        elif isinstance(request, FetchSnapshotRequest):
            reply(self._handle_fetch_snapshot(now, request))
        else:
            raise TypeError(f"not a Raft request: {request!r}")

    def _handle_vote(self, now: float, req: VoteRequest) -> VoteResponse:
        def answer(error: int, granted: bool = False) -> VoteResponse:
            return VoteResponse(error, self._leader_id, self._epoch, granted)

        if req.cluster_id != self.cluster_id:
            return answer(ec.INCONSISTENT_CLUSTER_ID)
        if req.last_offset < 0 or req.last_offset_epoch < 0 or req.last_offset_epoch >= req.candidate_epoch:
            return answer(ec.INVALID_REQUEST)
        if req.candidate_epoch < self._epoch:
            return answer(ec.FENCED_LEADER_EPOCH)
        if req.candidate_id < 0:
            return answer(ec.INVALID_REQUEST)
        if req.candidate_epoch > self._epoch and not req.pre_vote:
            self._transition(now, Role.UNATTACHED, req.candidate_epoch)
        elif req.pre_vote and req.candidate_epoch - 1 > self._epoch:
            # The prospective is already in a later epoch than ours (it ran an election we never
            # heard of and lost it): learn that epoch, as any higher epoch is learned. Else a leader
            # of an older epoch and a voter stuck above it never meet again: the voter's pre-votes
            # are refused by the up-to-date majority and nothing it hears names its epoch.
            self._transition(now, Role.UNATTACHED, req.candidate_epoch - 1)
        if req.voter_id not in (-1, self.node_id):
            return answer(INVALID_VOTER_KEY)
        up_to_date = (req.last_offset_epoch, req.last_offset) >= (self.log.last_epoch, self.log.end_offset)
        granted = (req.candidate_id in self.voters
                   and self._can_grant(req.candidate_id, up_to_date, req.pre_vote))
        if granted and not req.pre_vote and self._voted_id != req.candidate_id:
            self._transition(now, Role.UNATTACHED, self._epoch, voted_id=req.candidate_id)
        return answer(ec.NONE, granted)

    def _can_grant(self, candidate: int, up_to_date: bool, pre_vote: bool) -> bool:
        role = self._role
        if pre_vote:
            if role in (Role.UNATTACHED, Role.PROSPECTIVE, Role.CANDIDATE):
                return up_to_date
            if role is Role.FOLLOWER:
                return not self._has_fetched and up_to_date
            return False
        if role not in (Role.UNATTACHED, Role.PROSPECTIVE):
            return False
        if self._voted_id != NO_ID:
            return self._voted_id == candidate
        if self._leader_id != NO_LEADER:
            return False
        return up_to_date

    def _handle_begin(self, now: float, req: BeginQuorumEpochRequest) -> BeginQuorumEpochResponse:
        if req.cluster_id != self.cluster_id:
            return BeginQuorumEpochResponse(ec.INCONSISTENT_CLUSTER_ID, self._leader_id, self._epoch)
        if req.leader_epoch < self._epoch:
            return BeginQuorumEpochResponse(ec.FENCED_LEADER_EPOCH, self._leader_id, self._epoch)
        if req.voter_id not in (-1, self.node_id):
            return BeginQuorumEpochResponse(INVALID_VOTER_KEY, self._leader_id, self._epoch)
        if req.leader_id not in self.voters:
            return BeginQuorumEpochResponse(ec.INVALID_REQUEST, self._leader_id, self._epoch)
        self._learn(now, req.leader_id, req.leader_epoch)
        return BeginQuorumEpochResponse(ec.NONE, self._leader_id, self._epoch)

    def _handle_end(self, now: float, req: EndQuorumEpochRequest) -> EndQuorumEpochResponse:
        if req.cluster_id != self.cluster_id:
            return EndQuorumEpochResponse(ec.INCONSISTENT_CLUSTER_ID, self._leader_id, self._epoch)
        if req.leader_epoch < self._epoch:
            return EndQuorumEpochResponse(ec.FENCED_LEADER_EPOCH, self._leader_id, self._epoch)
        self._learn(now, req.leader_id, req.leader_epoch)
        if self._role is Role.FOLLOWER and self._leader_id == req.leader_id:
            backoff = self._end_epoch_backoff_ms(req.preferred_successors) / 1000
            self._fetch_deadline = min(self._fetch_deadline, now + backoff)
            self._has_fetched = False  # its leader is gone: pre-votes may be granted again
        return EndQuorumEpochResponse(ec.NONE, self._leader_id, self._epoch)

    def _leader_only_error(self, current_leader_epoch: int) -> int:
        """validateLeaderOnlyRequest."""
        if current_leader_epoch < self._epoch:
            return ec.FENCED_LEADER_EPOCH
        if current_leader_epoch > self._epoch:
            return ec.UNKNOWN_LEADER_EPOCH
        if self._leader is None:
            return ec.NOT_LEADER_OR_FOLLOWER
        return ec.NONE

    def _fetch_error(self, error: int) -> FetchResponse:
        return FetchResponse(error, self._leader_id, self._epoch)

    def _handle_fetch(self, now: float, src: int, req: FetchRequest,
                      reply: Callable[[Response], None]) -> None:
        if req.cluster_id != self.cluster_id:
            reply(self._fetch_error(ec.INCONSISTENT_CLUSTER_ID))
            return
        if (req.max_wait_ms < 0 or req.fetch_offset < 0 or req.last_fetched_epoch < 0
                or req.last_fetched_epoch > req.current_leader_epoch):
            reply(self._fetch_error(ec.INVALID_REQUEST))
            return
        parked = _ParkedFetch(src, req, reply, now + req.max_wait_ms / 1000)
        hw_before = self._leader.high_watermark if self._leader is not None else -1
        response = self._try_fetch(now, parked.request)
        moved = self._leader is not None and self._leader.high_watermark != hw_before
        if moved:
            self._wake_parked(now)  # the others learn the new high watermark
        if (response is None and not moved and req.max_wait_ms > 0):
            self._parked.append(parked)
            return
        reply(response if response is not None else self._fetch_answer(req))

    def _try_fetch(self, now: float, req: FetchRequest) -> FetchResponse | None:
        """The answer to a Fetch, or None when it found nothing to return yet (it may wait)."""
        error = self._leader_only_error(req.current_leader_epoch)
        if error != ec.NONE:
            return self._fetch_error(error)
        leader = self._leader
        assert leader is not None
        leader.record_fetch(req.replica_id, now)
        kind, where = self.log.validate(req.fetch_offset, req.last_fetched_epoch)
        if kind is ValidKind.SNAPSHOT:
            return FetchResponse(ec.NONE, self.node_id, self._epoch, leader.high_watermark,
                                 self.log.start_offset, snapshot_id=where)
        if kind is ValidKind.DIVERGING:
            return FetchResponse(ec.NONE, self.node_id, self._epoch, leader.high_watermark,
                                 self.log.start_offset, diverging_epoch=where)
        leader.update_end_offset(req.replica_id, req.fetch_offset, self.log.end_offset, now)
        self._maybe_update_leader_hw()
        if req.fetch_offset >= self.log.end_offset:
            return None
        return self._fetch_answer(req)

    def _fetch_answer(self, req: FetchRequest) -> FetchResponse:
        assert self._leader is not None
        entries = tuple(self.log.read(req.fetch_offset, max_bytes=self.config.fetch_max_bytes))
        return FetchResponse(ec.NONE, self.node_id, self._epoch, self._leader.high_watermark,
                             self.log.start_offset, entries)

    def _answer_fetch(self, now: float, parked: _ParkedFetch) -> None:
        response = self._try_fetch(now, parked.request)
        parked.reply(response if response is not None else self._fetch_answer(parked.request))

    def _wake_parked(self, now: float) -> None:
        parked, self._parked = self._parked, []
        for p in parked:
            self._answer_fetch(now, p)

    def _handle_fetch_snapshot(self, now: float, req: FetchSnapshotRequest) -> FetchSnapshotResponse:
        def answer(error: int) -> FetchSnapshotResponse:
            return FetchSnapshotResponse(error, self._leader_id, self._epoch)

        if req.cluster_id != self.cluster_id:
            return answer(ec.INCONSISTENT_CLUSTER_ID)
        error = self._leader_only_error(req.current_leader_epoch)
        if error != ec.NONE:
            return answer(error)
        assert self._leader is not None
        self._leader.record_fetch(req.replica_id, now)
        data = self.log.read_snapshot(req.snapshot_id)
        if data is None:
            return answer(SNAPSHOT_NOT_FOUND)
        if req.position < 0 or req.position >= len(data):
            return answer(POSITION_OUT_OF_RANGE)
        chunk = data[req.position:req.position + max(1, req.max_bytes)]
        return FetchSnapshotResponse(ec.NONE, self.node_id, self._epoch, req.snapshot_id, len(data),
                                     req.position, chunk)

    # ----- outcomes of our requests --------------------------------------------------------------
    def handle_failure(self, now: float, dst: int, request: Request) -> None:
        if self._inflight.get(dst) is request:
            del self._inflight[dst]
            self._retry_at[dst] = now + self.config.retry_backoff_ms / 1000

    def handle_response(self, now: float, dst: int, request: Request, response: Response) -> None:
        current = self._inflight.get(dst) is request
        if current:
            del self._inflight[dst]
        if self._learn(now, response.leader_id, response.leader_epoch) or not current:
            return
        if isinstance(response, VoteResponse) and isinstance(request, VoteRequest):
            self._on_vote(now, dst, request, response)
        elif isinstance(response, FetchResponse) and isinstance(request, FetchRequest):
            self._on_fetch(now, dst, request, response)
        elif isinstance(response, FetchSnapshotResponse) and isinstance(request, FetchSnapshotRequest):
            self._on_fetch_snapshot(now, dst, request, response)
        elif isinstance(response, BeginQuorumEpochResponse):
            if (response.error == ec.NONE and self._leader is not None
                    and response.leader_epoch == self._epoch):
                self._leader.acknowledge(dst)
            else:
                self._backoff(now, dst)
        elif isinstance(response, EndQuorumEpochResponse):
            if response.error == ec.NONE and self._role is Role.RESIGNED:
                self._unacked_end.discard(dst)
            else:
                self._backoff(now, dst)

    def _backoff(self, now: float, dst: int) -> None:
        self._retry_at[dst] = now + self.config.retry_backoff_ms / 1000

    def _on_vote(self, now: float, dst: int, req: VoteRequest, resp: VoteResponse) -> None:
        pre = self._role is Role.PROSPECTIVE
        expected_epoch = self._epoch + 1 if pre else self._epoch
        if (self._role not in (Role.PROSPECTIVE, Role.CANDIDATE) or req.pre_vote != pre
                or req.candidate_epoch != expected_epoch):
            return
        if resp.error != ec.NONE:
            self._backoff(now, dst)
            return
        (self._granted if resp.vote_granted else self._rejected).add(dst)
        self._run_timers(now)

    def _following(self, leader_id: int, epoch: int) -> bool:
        return self._role is Role.FOLLOWER and self._leader_id == leader_id and self._epoch == epoch

    def _on_fetch(self, now: float, dst: int, req: FetchRequest, resp: FetchResponse) -> None:
        if resp.error != ec.NONE or not self._following(resp.leader_id, resp.leader_epoch):
            self._backoff(now, dst)
            return
        if req.fetch_offset != self.log.end_offset or req.last_fetched_epoch != self.log.last_epoch:
            return  # the log moved since (a snapshot was loaded): ask again
        if resp.diverging_epoch is not None:
            offset = self.log.truncation_offset(resp.diverging_epoch)
            if offset < self._committed:
                raise SafetyError(f"node {self.node_id}: leader {dst}'s {resp.diverging_epoch} truncates "
                                  f"to {offset}, below the high watermark {self._committed}")
            if offset < self.log.end_offset:
                log.info("node %s: truncating to offset %s (leader %s's log diverges at %s)", self.node_id,
                         offset, dst, resp.diverging_epoch)
            self.log.truncate_to(offset)
        elif resp.snapshot_id is not None:
            self._snapshot_fetch = _SnapshotFetch(resp.snapshot_id, bytearray())
        else:
            entries = [e for e in resp.entries if e.offset >= self.log.end_offset]
            if entries and entries[0].offset != self.log.end_offset:
                self._backoff(now, dst)
                return
            self.log.append(entries)
            if resp.high_watermark >= 0:
                self._committed = max(self._committed, min(resp.high_watermark, self.log.end_offset))
        self._fetched(now)

    def _fetched(self, now: float) -> None:
        self._has_fetched = True
        self._fetch_deadline = now + self.config.fetch_timeout_ms / 1000

    def _on_fetch_snapshot(self, now: float, dst: int, req: FetchSnapshotRequest,
                           resp: FetchSnapshotResponse) -> None:
        fetch = self._snapshot_fetch
        if not self._following(resp.leader_id, resp.leader_epoch) or fetch is None:
            return
        if resp.error in (SNAPSHOT_NOT_FOUND, POSITION_OUT_OF_RANGE):
            self._snapshot_fetch = None  # the leader has a newer one: Fetch again to learn it
            return
        if resp.error != ec.NONE:
            self._backoff(now, dst)
            return
        if resp.snapshot_id != fetch.snapshot_id or resp.position != len(fetch.data) or not resp.chunk:
            self._snapshot_fetch = None
            return
        fetch.data += resp.chunk
        fetch.size = resp.size
        self._fetched(now)
        if len(fetch.data) < fetch.size:
            return
        self._snapshot_fetch = None
        latest = self.log.latest_snapshot_id()
        if latest is not None and latest.offset >= fetch.snapshot_id.offset:
            return
        try:
            self.log.install_snapshot(fetch.snapshot_id, bytes(fetch.data))
        except CorruptSnapshotError:
            log.warning("node %s: snapshot %s from %s does not check out; fetching again",
                        self.node_id, fetch.snapshot_id, dst)
            return
        self._committed = max(self._committed, fetch.snapshot_id.offset)
