"""The ReplicatedLog, its snapshots and the quorum-state file on disk, across restarts; the roles
table; the LeaderChange control record."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from kafkalite.protocol import error_codes as ec
from kafkalite.raft.config import QuorumConfig
from kafkalite.raft.control import LeaderChangeMessage, decode_leader_change, encode_leader_change
from kafkalite.raft.log import ReplicatedLog, ValidKind
from kafkalite.raft.messages import Entry, OffsetAndEpoch, VoteRequest, VoteResponse
from kafkalite.raft.node import RaftNode
from kafkalite.raft.quorum_state import ElectionState, QuorumStateStore
from kafkalite.raft.roles import IllegalTransitionError, Role, check_transition


def node_at(directory: str, node_id: int = 1, voters: tuple[int, ...] = (1, 2, 3)) -> RaftNode:
    return RaftNode(node_id, voters, "c", ReplicatedLog(directory), QuorumStateStore(directory),
                    QuorumConfig(), 0.0, random.Random(1))


def test_entries_survive_a_restart_and_a_torn_tail_is_cut(tmp_path: Path) -> None:
    d = str(tmp_path)
    log = ReplicatedLog(d)
    log.append([Entry(0, 1, b"a"), Entry(1, 1, b"b", True), Entry(2, 3, b"c")])
    log.truncate_to(2)
    log.append([Entry(2, 4, b"d")])
    with open(os.path.join(d, "entries.log"), "ab") as f:
        f.write(b"\x00\x00\x00\x40torn")
    again = ReplicatedLog(d)
    assert again.read(0) == [Entry(0, 1, b"a"), Entry(1, 1, b"b", True), Entry(2, 4, b"d")]
    assert again.end_offset_for_epoch(2) == OffsetAndEpoch(2, 1)
    assert again.end_offset_for_epoch(4) == OffsetAndEpoch(3, 4)
    assert os.path.getsize(os.path.join(d, "entries.log")) == again._file_size


def test_snapshot_files_and_log_start_survive_a_restart(tmp_path: Path) -> None:
    d = str(tmp_path)
    log = ReplicatedLog(d)
    log.append([Entry(i, 1 + i // 3, bytes([i])) for i in range(6)])
    log.create_snapshot(OffsetAndEpoch(3, 1), b"first")
    log.create_snapshot(OffsetAndEpoch(5, 2), b"second")
    names = sorted(os.listdir(d))
    assert "00000000000000000005-0000000002.checkpoint" in names
    assert not any(n.startswith("00000000000000000003") for n in names)  # older snapshots go
    again = ReplicatedLog(d)
    assert (again.start_offset, again.end_offset) == (5, 6)
    assert again.latest_snapshot() == (OffsetAndEpoch(5, 2), b"second")
    assert again.validate(2, 1) == (ValidKind.SNAPSHOT, OffsetAndEpoch(5, 2))
    assert again.validate(5, 1)[0] is ValidKind.SNAPSHOT  # epoch older than the snapshot's
    assert again.validate(6, 2) == (ValidKind.VALID, OffsetAndEpoch(6, 2))
    with open(os.path.join(d, "00000000000000000009-0000000002.checkpoint.part"), "wb") as f:
        f.write(b"half")
    ReplicatedLog(d)
    assert not any(n.endswith(".part") for n in os.listdir(d))


def test_validate_offset_and_epoch_diverging() -> None:
    log = ReplicatedLog(None)
    log.append([Entry(i, e, b"") for i, e in enumerate([1, 1, 3, 3, 5])])
    assert log.validate(0, 0) == (ValidKind.VALID, OffsetAndEpoch(0, 0))
    assert log.validate(4, 3) == (ValidKind.VALID, OffsetAndEpoch(4, 3))
    assert log.validate(5, 3) == (ValidKind.DIVERGING, OffsetAndEpoch(4, 3))
    assert log.validate(3, 2) == (ValidKind.DIVERGING, OffsetAndEpoch(2, 1))
    assert log.validate(9, 5) == (ValidKind.DIVERGING, OffsetAndEpoch(5, 5))
    follower = ReplicatedLog(None)
    follower.append([Entry(i, e, b"") for i, e in enumerate([1, 1, 2, 2, 2])])
    assert follower.truncate_to_end_offset(OffsetAndEpoch(2, 1)) == 2


def test_quorum_state_file_is_kafkas_json(tmp_path: Path) -> None:
    store = QuorumStateStore(str(tmp_path))
    assert store.read() is None
    store.write(ElectionState(5, 2, 3))
    data = json.loads((tmp_path / "quorum-state").read_text())
    assert data == {"leaderId": 2, "leaderEpoch": 5, "votedId": 3,
                    "votedDirectoryId": "AAAAAAAAAAAAAAAAAAAAAA", "data_version": 1}
    (tmp_path / "quorum-state").write_text(json.dumps(
        {"clusterId": "", "leaderId": 1, "leaderEpoch": 2, "votedId": -1, "appliedOffset": 0,
         "currentVoters": [], "data_version": 0}))
    assert store.read() == ElectionState(2, 1, -1)


def test_a_vote_survives_a_restart(tmp_path: Path) -> None:
    node = node_at(str(tmp_path))
    out: list[object] = []
    node.handle_request(0.0, 2, VoteRequest("c", 4, 2, 0, 0, 1), out.append)
    assert isinstance(out[0], VoteResponse) and out[0].vote_granted
    again = node_at(str(tmp_path))
    assert (again.role, again.epoch, again.voted_id) == (Role.UNATTACHED, 4, 2)
    out.clear()
    again.handle_request(0.0, 3, VoteRequest("c", 4, 3, 0, 0, 1), out.append)
    assert isinstance(out[0], VoteResponse) and out[0].error == ec.NONE and not out[0].vote_granted


def test_startup_roles_follow_kafkas_quorum_state_initialize(tmp_path: Path) -> None:
    d = str(tmp_path)
    store = QuorumStateStore(d)
    store.write(ElectionState(3, 1, 1))
    assert (node_at(d).role, node_at(d).epoch) == (Role.RESIGNED, 3)  # a leader comes back resigned
    store.write(ElectionState(4, -1, 1))
    assert (node_at(d).role, node_at(d).epoch) == (Role.CANDIDATE, 4)  # voted for itself
    store.write(ElectionState(4, 2, -1))
    assert (node_at(d).role, node_at(d).leader_id) == (Role.FOLLOWER, 2)
    ReplicatedLog(d).append([Entry(0, 9, b"x")])
    assert (node_at(d).role, node_at(d).epoch) == (Role.UNATTACHED, 9)  # the log's epoch is newer


def test_a_sole_voter_leads_again_after_a_restart_with_its_log(tmp_path: Path) -> None:
    d = str(tmp_path)
    node = node_at(d, voters=(1,))
    node.append(0.0, [b"a"])
    node.create_snapshot(OffsetAndEpoch(2, 1), b"state")
    node.append(0.0, [b"b"])
    again = node_at(d, voters=(1,))
    assert again.is_leader and again.epoch == 2 and again.log_start_offset == 2
    assert [e.data for e in again.read_committed(2, 10) if not e.control] == [b"b"]
    assert again.latest_snapshot() == (OffsetAndEpoch(2, 1), b"state")


def test_roles_table() -> None:
    check_transition(Role.UNATTACHED, Role.PROSPECTIVE, 3, 3, False)
    check_transition(Role.PROSPECTIVE, Role.CANDIDATE, 3, 4, False)
    check_transition(Role.CANDIDATE, Role.LEADER, 4, 4, False)
    check_transition(Role.LEADER, Role.RESIGNED, 4, 4, False)
    check_transition(Role.RESIGNED, Role.UNATTACHED, 4, 5, False)
    check_transition(Role.UNATTACHED, Role.CANDIDATE, 0, 1, True)
    for source, target, epoch, new in [
        (Role.UNATTACHED, Role.CANDIDATE, 0, 1),  # only after a pre-vote
        (Role.FOLLOWER, Role.LEADER, 1, 1),
        (Role.PROSPECTIVE, Role.CANDIDATE, 1, 3),
        (Role.LEADER, Role.UNATTACHED, 2, 2),
        (Role.FOLLOWER, Role.FOLLOWER, 2, 2),
        (Role.UNATTACHED, Role.UNATTACHED, 2, 1),
        (Role.RESIGNED, Role.PROSPECTIVE, 2, 2),
    ]:
        with pytest.raises(IllegalTransitionError):
            check_transition(source, target, epoch, new, False)


def test_leader_change_message_round_trip() -> None:
    message = LeaderChangeMessage(2, (1, 2, 3), (2, 3))
    data = encode_leader_change(message)
    assert data[:6] == b"\x00\x00\x00\x00\x00\x02" and data[6] == 4  # compact array of 3
    assert decode_leader_change(data) == message
