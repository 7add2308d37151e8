"""RaftNode's rules one at a time: vote grants and their errors, pre-vote, the election path,
BeginQuorumEpoch/EndQuorumEpoch, Fetch validation, long polls, divergence and truncation, the high
watermark, check-quorum, fetch timeouts, snapshots and FetchSnapshot."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kafkalite.protocol import error_codes as ec
from kafkalite.raft.config import QuorumConfig
from kafkalite.raft.control import decode_leader_change
from kafkalite.raft.log import ReplicatedLog
from kafkalite.raft.messages import (
    NO_LEADER,
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    EndQuorumEpochRequest,
    Entry,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    OffsetAndEpoch,
    Request,
    Response,
    VoteRequest,
    VoteResponse,
)
from kafkalite.raft.node import (
    INVALID_VOTER_KEY,
    POSITION_OUT_OF_RANGE,
    SNAPSHOT_NOT_FOUND,
    NotLeaderError,
    RaftNode,
)
from kafkalite.raft.quorum_state import ElectionState, QuorumStateStore
from kafkalite.raft.roles import Role

from .sim import Network

CID = "cluster"
CONFIG = QuorumConfig()


def make(node_id: int = 1, voters: tuple[int, ...] = (1, 2, 3), log: ReplicatedLog | None = None,
         store: QuorumStateStore | None = None, now: float = 0.0, seed: int = 0) -> RaftNode:
    return RaftNode(node_id, voters, CID, log or ReplicatedLog(None), store or QuorumStateStore(None),
                    CONFIG, now, random.Random(seed))


def ask(node: RaftNode, request: Request, src: int = 2, now: float = 0.0) -> Response:
    out: list[Response] = []
    node.handle_request(now, src, request, out.append)
    assert len(out) == 1
    return out[0]


def log_with(epochs: list[int]) -> ReplicatedLog:
    log = ReplicatedLog(None)
    log.append([Entry(i, e, f"e{i}".encode()) for i, e in enumerate(epochs)])
    return log


def elect(node: RaftNode, now: float = 5.0) -> float:
    """Drive ``node`` (of voters 1, 2, 3) to leadership; the time it got there."""
    sent = node.poll(now)
    assert node.role is Role.PROSPECTIVE
    for dst, req in sent:
        node.handle_response(now, dst, req, VoteResponse(ec.NONE, NO_LEADER, node.epoch, True))
    sent = node.poll(now)
    assert node.role is Role.CANDIDATE
    for dst, req in sent:
        node.handle_response(now, dst, req, VoteResponse(ec.NONE, NO_LEADER, node.epoch, True))
    assert node.is_leader
    return now


def vote(epoch: int = 1, candidate: int = 2, last_epoch: int = 0, last_offset: int = 0,
         pre: bool = False, voter: int = 1, cluster: str = CID) -> VoteRequest:
    return VoteRequest(cluster, epoch, candidate, last_epoch, last_offset, voter, pre)


def fetch(offset: int, last_epoch: int, epoch: int = 1, replica: int = 2, wait: int = 0,
          cluster: str = CID) -> FetchRequest:
    return FetchRequest(cluster, replica, epoch, offset, last_epoch, wait)


# ----- votes ---------------------------------------------------------------------------------------
def test_an_unattached_voter_grants_an_up_to_date_candidate_and_persists_the_vote() -> None:
    store = QuorumStateStore(None)
    node = make(store=store)
    r = ask(node, vote(epoch=1, candidate=2))
    assert isinstance(r, VoteResponse) and r.vote_granted and r.error == ec.NONE
    assert (node.role, node.epoch, node.voted_id) == (Role.UNATTACHED, 1, 2)
    assert store.read() == ElectionState(1, -1, 2)
    again = ask(node, vote(epoch=1, candidate=2))  # the same candidate again
    assert isinstance(again, VoteResponse) and again.vote_granted
    refused = ask(node, vote(epoch=1, candidate=3))
    assert isinstance(refused, VoteResponse) and not refused.vote_granted


def test_a_candidate_with_a_shorter_or_older_log_gets_no_vote() -> None:
    node = make(log=log_with([1, 1, 2]))
    assert node.epoch == 2
    shorter = ask(node, vote(epoch=3, last_epoch=2, last_offset=2))
    older = ask(node, vote(epoch=3, candidate=3, last_epoch=1, last_offset=10))
    assert isinstance(shorter, VoteResponse) and not shorter.vote_granted
    assert isinstance(older, VoteResponse) and not older.vote_granted
    longer = ask(node, vote(epoch=3, last_epoch=2, last_offset=3))
    assert isinstance(longer, VoteResponse) and longer.vote_granted


@pytest.mark.parametrize("request_, error", [
    (vote(cluster="other"), ec.INCONSISTENT_CLUSTER_ID),
    (vote(last_offset=-1), ec.INVALID_REQUEST),
    (vote(epoch=1, last_epoch=1), ec.INVALID_REQUEST),  # last epoch >= candidate epoch
    (vote(candidate=-1), ec.INVALID_REQUEST),
    (vote(voter=3), INVALID_VOTER_KEY),
])
def test_vote_errors(request_: VoteRequest, error: int) -> None:
    node = make()
    r = ask(node, request_)
    assert isinstance(r, VoteResponse) and r.error == error and not r.vote_granted


def test_a_vote_for_an_older_epoch_is_fenced() -> None:
    node = make()
    ask(node, vote(epoch=5, candidate=2))
    r = ask(node, vote(epoch=4, candidate=3))
    assert isinstance(r, VoteResponse) and r.error == ec.FENCED_LEADER_EPOCH and r.leader_epoch == 5


def test_a_pre_vote_changes_no_state() -> None:
    store = QuorumStateStore(None)
    node = make(store=store)
    r = ask(node, vote(epoch=1, pre=True))  # a prospective in our epoch, 0
    assert isinstance(r, VoteResponse) and r.vote_granted
    assert (node.epoch, node.voted_id, store.read()) == (0, -1, None)


def test_a_pre_vote_from_a_later_epoch_teaches_that_epoch_and_casts_no_vote() -> None:
    node = make()
    r = ask(node, vote(epoch=7, pre=True))  # the prospective is in epoch 6 already
    assert isinstance(r, VoteResponse) and r.vote_granted
    assert (node.role, node.epoch, node.voted_id, node.leader_id) == (Role.UNATTACHED, 6, -1, NO_LEADER)


def test_leaders_and_followers_that_hear_from_their_leader_refuse_pre_votes() -> None:
    node = make()
    elect(node)
    r = ask(node, vote(epoch=node.epoch + 1, last_epoch=node.epoch, last_offset=100, pre=True))
    assert isinstance(r, VoteResponse) and not r.vote_granted and node.is_leader
    follower = make(node_id=2)
    ask(follower, BeginQuorumEpochRequest(CID, 1, 1, 2), src=1)
    req = vote(epoch=2, candidate=3, last_epoch=1, last_offset=100, pre=True, voter=2)
    granted = ask(follower, req, src=3)
    assert isinstance(granted, VoteResponse) and granted.vote_granted  # never fetched yet
    [(dst, f)] = follower.poll(0.1)
    follower.handle_response(0.1, dst, f, FetchResponse(ec.NONE, 1, 1, 1, 0, (Entry(0, 1, b"", True),)))
    refused = ask(follower, req, src=3)
    assert isinstance(refused, VoteResponse) and not refused.vote_granted


def test_a_standard_vote_of_a_higher_epoch_makes_a_leader_unattached() -> None:
    node = make()
    elect(node)
    r = ask(node, vote(epoch=node.epoch + 1, last_epoch=node.epoch, last_offset=node.log_end_offset))
    assert isinstance(r, VoteResponse) and r.vote_granted
    assert node.role is Role.UNATTACHED and node.voted_id == 2


# ----- elections -----------------------------------------------------------------------------------
def test_election_timeout_pre_vote_vote_leader() -> None:
    node = make()
    assert node.role is Role.UNATTACHED and node.epoch == 0
    deadline = node.next_deadline()
    assert 1.0 <= deadline < 2.0  # electionTimeoutMs + random(electionTimeoutMs)
    assert node.poll(deadline - 0.001) == []
    sent = node.poll(deadline)
    assert node.role is Role.PROSPECTIVE and node.epoch == 0
    assert sorted(d for d, _ in sent) == [2, 3]
    assert all(isinstance(r, VoteRequest) and r.pre_vote and r.candidate_epoch == 1 for _, r in sent)
    dst, req = sent[0]
    node.handle_response(deadline, dst, req, VoteResponse(ec.NONE, NO_LEADER, 0, True))
    assert node.role is Role.CANDIDATE and node.epoch == 1 and node.voted_id == 1
    votes = node.poll(deadline)
    assert all(isinstance(r, VoteRequest) and not r.pre_vote and r.candidate_epoch == 1 for _, r in votes)
    dst, req = votes[0]
    node.handle_response(deadline, dst, req, VoteResponse(ec.NONE, NO_LEADER, 1, True))
    assert node.is_leader and node.epoch_start_offset == 0
    [leader_change] = node.log.read(0)
    assert leader_change.control and decode_leader_change(leader_change.data).leader_id == 1
    assert node.high_watermark == -1  # not committed until a majority holds it
    begins = node.poll(deadline)
    assert sorted(d for d, _ in begins) == [2, 3]
    assert all(isinstance(r, BeginQuorumEpochRequest) and r.leader_epoch == 1 for _, r in begins)


def test_a_lost_pre_vote_goes_back_to_unattached_in_the_same_epoch() -> None:
    node = make()
    sent = node.poll(node.next_deadline())
    for dst, req in sent:
        node.handle_response(3.0, dst, req, VoteResponse(ec.NONE, NO_LEADER, 0, False))
    assert node.role is Role.UNATTACHED and node.epoch == 0


def test_a_candidate_that_loses_backs_off_then_runs_a_pre_vote_again() -> None:
    node = make()
    t = node.next_deadline()
    for dst, req in node.poll(t):
        node.handle_response(t, dst, req, VoteResponse(ec.NONE, NO_LEADER, 0, True))
    assert node.role is Role.CANDIDATE
    for dst, req in node.poll(t):
        node.handle_response(t, dst, req, VoteResponse(ec.NONE, NO_LEADER, 1, False))
    node.poll(t)
    assert node.role is Role.CANDIDATE
    backoff = node.next_deadline() - t
    assert 0 <= backoff <= CONFIG.election_backoff_max_ms / 1000
    node.poll(t + backoff)
    assert node.role is Role.PROSPECTIVE and node.epoch == 1


def test_a_response_with_a_higher_epoch_and_leader_makes_a_follower() -> None:
    node = make()
    t = node.next_deadline()
    dst, req = node.poll(t)[0]
    node.handle_response(t, dst, req, VoteResponse(ec.NONE, 3, 4, False))
    assert (node.role, node.epoch, node.leader_id) == (Role.FOLLOWER, 4, 3)


def test_the_only_voter_leads_at_once() -> None:
    node = make(voters=(1,))
    assert node.is_leader and node.epoch == 1 and node.high_watermark == 1
    assert node.append(0.0, [b"a", b"b"]) == 2
    assert node.high_watermark == 3
    assert [e.data for e in node.read_committed(1, 10)] == [b"a", b"b"]


def test_append_on_a_non_leader_raises() -> None:
    node = make()
    ask(node, BeginQuorumEpochRequest(CID, 2, 3, 1))
    with pytest.raises(NotLeaderError) as info:
        node.append(0.0, [b"x"])
    assert (info.value.leader_id, info.value.epoch) == (2, 3)


# ----- BeginQuorumEpoch / EndQuorumEpoch ------------------------------------------------------------
def test_begin_quorum_epoch() -> None:
    node = make()
    r = ask(node, BeginQuorumEpochRequest(CID, 2, 3, 1))
    assert r == BeginQuorumEpochResponse(ec.NONE, 2, 3)
    assert (node.role, node.epoch, node.leader_id) == (Role.FOLLOWER, 3, 2)
    assert ask(node, BeginQuorumEpochRequest(CID, 3, 2, 1)) == BeginQuorumEpochResponse(
        ec.FENCED_LEADER_EPOCH, 2, 3)
    r2 = ask(node, BeginQuorumEpochRequest(CID, 3, 4, 2))
    assert isinstance(r2, BeginQuorumEpochResponse) and r2.error == INVALID_VOTER_KEY
    r3 = ask(node, BeginQuorumEpochRequest("x", 3, 4, 1))
    assert isinstance(r3, BeginQuorumEpochResponse) and r3.error == ec.INCONSISTENT_CLUSTER_ID


def test_begin_quorum_epoch_is_resent_until_acknowledged() -> None:
    node = make()
    t = elect(node)
    begins = dict(node.poll(t))
    node.handle_failure(t, 2, begins[2])
    node.handle_response(t, 3, begins[3], BeginQuorumEpochResponse(ec.NONE, 1, node.epoch))
    assert node.poll(t) == []
    again = node.poll(t + CONFIG.retry_backoff_ms / 1000)
    assert [d for d, r in again if isinstance(r, BeginQuorumEpochRequest)] == [2]


def test_end_quorum_epoch_successors_back_off_by_position() -> None:
    first, second = make(node_id=2), make(node_id=3)
    for node in (first, second):
        ask(node, BeginQuorumEpochRequest(CID, 1, 1, node.node_id), src=1)
        ask(node, EndQuorumEpochRequest(CID, 1, 1, (2, 3)), src=1)
    first.poll(0.0)
    assert first.role is Role.PROSPECTIVE
    second.poll(0.0)
    assert second.role is Role.FOLLOWER
    # strictExponentialElectionBackoffMs(1, 2) = min(max, (max >> 1) << 0)
    assert second.next_deadline() == pytest.approx((CONFIG.election_backoff_max_ms >> 1) / 1000)


def test_resign_sends_end_quorum_epoch_with_the_most_caught_up_first() -> None:
    node = make()
    t = elect(node)
    node.append(t, [b"x"])
    ask(node, fetch(2, 1, epoch=node.epoch, replica=3), src=3, now=t)
    node.resign(t)
    assert node.role is Role.RESIGNED and node.epoch == 1
    ends = node.poll(t)
    assert {d for d, _ in ends} == {2, 3}
    assert all(isinstance(r, EndQuorumEpochRequest) and r.preferred_successors == (3, 2) for _, r in ends)


# ----- Fetch ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("request_, error", [
    (fetch(0, 0, wait=-1), ec.INVALID_REQUEST),
    (fetch(-1, 0), ec.INVALID_REQUEST),
    (fetch(0, 2, epoch=1), ec.INVALID_REQUEST),  # last fetched epoch above the leader epoch
    (fetch(0, 0, epoch=0), ec.FENCED_LEADER_EPOCH),
    (fetch(0, 0, epoch=2), ec.UNKNOWN_LEADER_EPOCH),
    (fetch(0, 0, cluster="x"), ec.INCONSISTENT_CLUSTER_ID),
])
def test_fetch_errors(request_: FetchRequest, error: int) -> None:
    node = make()
    elect(node)
    r = ask(node, request_)
    assert isinstance(r, FetchResponse) and r.error == error


def test_only_the_leader_serves_fetch() -> None:
    node = make()
    ask(node, BeginQuorumEpochRequest(CID, 2, 1, 1))
    r = ask(node, fetch(0, 0))
    assert isinstance(r, FetchResponse) and (r.error, r.leader_id, r.leader_epoch) == (
        ec.NOT_LEADER_OR_FOLLOWER, 2, 1)


def test_high_watermark_is_the_majority_end_offset_above_the_epoch_start() -> None:
    node = make(voters=(1, 2, 3, 4, 5), log=log_with([1, 1]))
    t = node.next_deadline()
    for dst, req in node.poll(t):
        node.handle_response(t, dst, req, VoteResponse(ec.NONE, NO_LEADER, 1, True))
    for dst, req in node.poll(t):
        node.handle_response(t, dst, req, VoteResponse(ec.NONE, NO_LEADER, 2, True))
    node.poll(t)
    assert node.is_leader and node.epoch_start_offset == 2
    node.append(t, [b"a", b"b"])  # end offset 5
    ask(node, fetch(2, 1, epoch=2, replica=2), src=2, now=t)
    ask(node, fetch(2, 1, epoch=2, replica=3), src=3, now=t)
    assert node.high_watermark == -1  # the majority holds 2, not above the epoch start
    ask(node, fetch(4, 2, epoch=2, replica=2), src=2, now=t)
    assert node.high_watermark == -1  # 5, 4, 2, -1, -1: index 2 is 2
    ask(node, fetch(5, 2, epoch=2, replica=3), src=3, now=t)
    assert node.high_watermark == 4  # 5, 5, 4, -1, -1
    assert node.describe(t).high_watermark == 4


def test_a_fetch_from_a_diverged_follower_gets_the_diverging_epoch_and_the_follower_truncates() -> None:
    leader = make(log=log_with([1, 1, 3, 3]))  # epoch 3 from the log
    t = elect(leader)
    assert leader.epoch == 4
    r = ask(leader, fetch(5, 2, epoch=4), now=t)
    assert isinstance(r, FetchResponse) and r.diverging_epoch == OffsetAndEpoch(2, 1) and not r.entries
    follower = make(node_id=2, log=log_with([1, 1, 2, 2, 2]))
    ask(follower, BeginQuorumEpochRequest(CID, 1, 4, 2), src=1, now=t)
    [(dst, req)] = follower.poll(t)
    assert isinstance(req, FetchRequest) and (req.fetch_offset, req.last_fetched_epoch) == (5, 2)
    follower.handle_response(t, dst, req, r)
    assert follower.log_end_offset == 2 and follower.log.last_epoch == 1
    [(dst, req)] = follower.poll(t)
    assert isinstance(req, FetchRequest)
    r2 = ask(leader, req, now=t)
    assert isinstance(r2, FetchResponse) and [e.offset for e in r2.entries] == [2, 3, 4]
    follower.handle_response(t, dst, req, r2)
    assert [e.epoch for e in follower.log.read(0)] == [1, 1, 3, 3, 4]


def test_a_fetch_at_the_end_waits_for_new_entries_or_its_max_wait() -> None:
    node = make()
    t = elect(node)
    out: list[Response] = []
    node.handle_request(t, 2, fetch(1, 1, wait=500), out.append)  # moves the HW: answered at once
    assert len(out) == 1 and isinstance(out[0], FetchResponse) and out[0].high_watermark == 1
    node.handle_request(t, 2, fetch(1, 1, wait=500), out.append)
    assert len(out) == 1 and node.next_deadline() <= t + 0.5
    node.append(t + 0.1, [b"new"])
    assert len(out) == 2 and isinstance(out[1], FetchResponse)
    assert [e.data for e in out[1].entries] == [b"new"]
    node.handle_request(t, 2, fetch(2, 1, wait=500), out.append)  # moves the HW again
    assert len(out) == 3 and isinstance(out[2], FetchResponse) and out[2].high_watermark == 2
    node.handle_request(t, 2, fetch(2, 1, wait=500), out.append)
    assert len(out) == 3
    node.poll(t + 0.5)
    assert len(out) == 4 and isinstance(out[3], FetchResponse) and out[3].entries == ()


def test_a_parked_fetch_is_answered_when_the_leader_loses_its_epoch() -> None:
    node = make()
    t = elect(node)
    out: list[Response] = []
    ask(node, fetch(1, 1), now=t)
    node.handle_request(t, 2, fetch(1, 1, wait=500), out.append)
    assert out == []
    ask(node, BeginQuorumEpochRequest(CID, 3, 2, 1), src=3)
    assert len(out) == 1 and isinstance(out[0], FetchResponse) and out[0].error == ec.FENCED_LEADER_EPOCH


def test_check_quorum_makes_a_leader_without_fetches_resign() -> None:
    node = make()
    t = elect(node)
    node.poll(t + 2.9)
    assert node.is_leader
    ask(node, fetch(1, 1, replica=2), now=t + 2.9)  # one other voter: a majority of 3
    node.poll(t + 4.0)
    assert node.is_leader
    node.poll(t + 2.9 + 3.0)
    assert node.role is Role.RESIGNED
    node.poll(node.next_deadline() + 10)
    assert node.role is Role.UNATTACHED and node.epoch == 2


def test_a_follower_without_successful_fetches_becomes_prospective() -> None:
    node = make()
    ask(node, BeginQuorumEpochRequest(CID, 2, 1, 1))
    assert node.next_deadline() == pytest.approx(0.0)  # its first Fetch
    [(dst, req)] = node.poll(0.0)
    node.handle_failure(1.0, dst, req)
    node.poll(1.9)
    assert node.role is Role.FOLLOWER
    node.poll(2.0)
    assert node.role is Role.PROSPECTIVE and node.leader_id == 2 and node.epoch == 1


# ----- snapshots -----------------------------------------------------------------------------------
def test_snapshot_trims_the_log_and_a_fetch_below_it_gets_the_snapshot_id() -> None:
    node = make(voters=(1,))
    node.append(0.0, [b"a", b"b", b"c"])
    with pytest.raises(ValueError):
        node.create_snapshot(OffsetAndEpoch(5, 1), b"too far")
    node.create_snapshot(OffsetAndEpoch(3, 1), b"state")
    assert node.log_start_offset == 3 and node.latest_snapshot() == (OffsetAndEpoch(3, 1), b"state")
    with pytest.raises(ValueError):
        node.read_committed(0, 10)
    assert [e.data for e in node.read_committed(3, 10)] == [b"c"]


def test_fetch_snapshot_is_served_in_chunks_with_kafkas_errors() -> None:
    node = make()
    t = elect(node)
    node.append(t, [b"a"])
    ask(node, fetch(2, 1), now=t)
    assert node.high_watermark == 2
    node.create_snapshot(OffsetAndEpoch(2, 1), b"0123456789")
    r = ask(node, fetch(0, 0), now=t)
    assert isinstance(r, FetchResponse) and r.snapshot_id == OffsetAndEpoch(2, 1)
    chunks, pos = b"", 0
    while True:
        c = ask(node, FetchSnapshotRequest(CID, 2, 1, OffsetAndEpoch(2, 1), pos, 7), now=t)
        assert isinstance(c, FetchSnapshotResponse) and c.error == ec.NONE and c.position == pos
        chunks += c.chunk
        pos += len(c.chunk)
        if pos >= c.size:
            break
    assert chunks.endswith(b"0123456789")
    missing = ask(node, FetchSnapshotRequest(CID, 2, 1, OffsetAndEpoch(1, 1), 0), now=t)
    assert isinstance(missing, FetchSnapshotResponse) and missing.error == SNAPSHOT_NOT_FOUND
    beyond = ask(node, FetchSnapshotRequest(CID, 2, 1, OffsetAndEpoch(2, 1), pos), now=t)
    assert isinstance(beyond, FetchSnapshotResponse) and beyond.error == POSITION_OUT_OF_RANGE
    fenced = ask(node, FetchSnapshotRequest(CID, 2, 0, OffsetAndEpoch(2, 1), 0), now=t)
    assert isinstance(fenced, FetchSnapshotResponse) and fenced.error == ec.FENCED_LEADER_EPOCH


def test_a_new_follower_loads_the_leaders_snapshot_and_continues_from_it() -> None:
    net = Network(3, seed=7, config=QuorumConfig(fetch_snapshot_max_bytes=16))
    try:
        assert net.run_until(lambda: net.leader() is not None)
        leader = net.leader()
        assert leader is not None
        lagging = next(i for i in net.ids if i != leader.node_id)
        net.crash(lagging)
        for k in range(20):
            leader.append(net.now, [f"record-{k}".encode()])
        assert net.run_until(lambda: leader.high_watermark == leader.log_end_offset)
        snapshot_id = net.snapshot(leader.node_id)
        assert snapshot_id is not None and leader.log_start_offset == snapshot_id.offset
        leader.append(net.now, [b"after"])
        net.volume.rmtree(Path(str(net.logs[lagging].directory)))  # a new, empty replica
        follower = net.start(lagging)
        assert net.run_until(lambda: follower.high_watermark == leader.high_watermark
                             and follower.log_end_offset == leader.log_end_offset)
        assert follower.latest_snapshot() == leader.latest_snapshot()
        assert follower.log_start_offset == snapshot_id.offset
        assert net.committed_entries(lagging) == net.committed_entries(leader.node_id)
    finally:
        net.close()
