"""``kafkalite bench groups``: how fast a consumer group forms and rebalances, and how many
OffsetCommits one coordinator answers, kafkalite against librdkafka's mock cluster in one run.

The members are raw protocol clients (kafkalite's BlockingClient, one connection and thread
each), so that what is timed is the coordinator, not a client library's timers:

- form: N members send JoinGroup at once (v5: MEMBER_ID_REQUIRED, then again with the id); the
  leader's SyncGroup carries an assignment; the time from the first JoinGroup until every
  member's SyncGroup is answered (the group is Stable);
- rebalance: one member sends LeaveGroup; the others, heartbeating every ``--heartbeat-ms``,
  get REBALANCE_IN_PROGRESS, join again and sync: the time from the LeaveGroup until all are
  synced again;
- commits: one member commits one partition's offset again and again (OffsetCommit v7, one in
  flight), for ``--seconds``: commits per second. On kafkalite each commit is a record appended
  to ``__consumer_offsets`` and answered once committed (acks=all). Then ``--committers``
  connections commit for one group at once, each with one commit in flight: the commits of
  several clients to one partition of ``__consumer_offsets``.

The broker runs with ``group.initial.rebalance.delay.ms=0`` (as ``kafkalite cluster`` does).
Forming and rebalancing are measured on kafkalite only: the mock's rebalances run on fixed
timers (its first one waits its own initial delay, 3 s, each later one at least 100 ms:
rdkafka_mock_cgrp.c), so its times would measure those timers, and its SyncGroup v3 answer
carries a null assignment that Kafka's spec does not allow (kafkalite's codec refuses it). The
mock is the peer for OffsetCommit.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable

from kafkalite.clients import BlockingClient
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import (
    find_coordinator,
    heartbeat,
    join_group,
    leave_group,
    offset_commit,
    sync_group,
)

from .data import servers, tasks
from .figures import median, millis
from .markdown import machine, write_section

HOST = "127.0.0.1"
Say = Callable[[str], None]
SESSION_MS, REBALANCE_MS = 30000, 60000


def coordinator_of(port: int, group: str) -> int:
    """The port of ``group``'s coordinator (FindCoordinator v2, retried while it is being made)."""
    R = find_coordinator.REQUEST
    client = BlockingClient(HOST, port, "bench-groups", 10)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            answer = client.send_and_receive(ApiKey.FIND_COORDINATOR, 2, R(key=group, key_type=0))
            if answer.error_code == E.NONE:
                return int(answer.port)
            time.sleep(0.05)
        raise RuntimeError(f"no coordinator for {group}")
    finally:
        client.close()


class Member:
    def __init__(self, port: int, group: str, index: int) -> None:
        self.client = BlockingClient(HOST, port, f"bench-member-{index}", 90)
        self.group, self.member_id, self.generation = group, "", -1
        self.leader = False
        self.members: list[str] = []
        self.synced: tuple[int, float, bool] = (-1, 0.0, False)
        self.error: BaseException | None = None
        self.stop = False  # this member leaves: its thread stops
        self.lock = threading.Lock()  # one request at a time on its connection

    def join(self) -> None:
        R = join_group.REQUEST
        protocol = R["protocols"](name="range", metadata=b"\x00\x00\x00\x00\x00\x01\x00\x01t\xff\xff\xff\xff")
        while True:
            answer = self.client.send_and_receive(ApiKey.JOIN_GROUP, 5, R(
                group_id=self.group, session_timeout_ms=SESSION_MS, rebalance_timeout_ms=REBALANCE_MS,
                member_id=self.member_id, group_instance_id=None, protocol_type="consumer",
                protocols=[protocol]))
            if answer.error_code == E.MEMBER_ID_REQUIRED:
                self.member_id = answer.member_id
                continue
            if answer.error_code != E.NONE:
                raise RuntimeError(f"JoinGroup: {E.for_code(answer.error_code).name}")
            self.member_id, self.generation = answer.member_id, answer.generation_id
            self.leader = answer.leader == answer.member_id
            self.members = [m.member_id for m in answer.members]
            return

    def sync(self) -> int:
        R = sync_group.REQUEST
        assignments = ([R["assignments"](member_id=m, assignment=b"a") for m in self.members]
                       if self.leader else [])
        answer = self.client.send_and_receive(ApiKey.SYNC_GROUP, 3, R(
            group_id=self.group, generation_id=self.generation, member_id=self.member_id,
            group_instance_id=None, assignments=assignments))
        return int(answer.error_code)

    def heartbeat(self) -> int:
        answer = self.client.send_and_receive(ApiKey.HEARTBEAT, 3, heartbeat.REQUEST(
            group_id=self.group, generation_id=self.generation, member_id=self.member_id,
            group_instance_id=None))
        return int(answer.error_code)

    def join_and_sync(self) -> None:
        while True:
            self.join()
            if self.sync() == E.NONE:
                return

    def live(self, stop: threading.Event, heartbeat_s: float) -> None:
        """Join and sync, then heartbeat until ``stop``; join again when a rebalance begins.
        ``synced``: (generation, when its SyncGroup was answered, whether a heartbeat since said
        no rebalance is under way)."""
        try:
            while not stop.is_set() and not self.stop:
                with self.lock:
                    if self.stop:
                        return
                    self.join_and_sync()
                    self.synced = (self.generation, time.perf_counter(), False)
                while not stop.is_set() and not self.stop:
                    with self.lock:
                        if self.stop:
                            return
                        error = self.heartbeat()
                    if error == E.REBALANCE_IN_PROGRESS:
                        break
                    if error != E.NONE:
                        raise RuntimeError(f"Heartbeat: {E.for_code(error).name}")
                    if not self.synced[2]:
                        self.synced = (self.synced[0], self.synced[1], True)
                    stop.wait(heartbeat_s)
        except BaseException as e:
            self.error = e

    def leave(self) -> None:
        R = leave_group.REQUEST
        self.client.send_and_receive(ApiKey.LEAVE_GROUP, 3, R(group_id=self.group, members=[
            R["members"](member_id=self.member_id, group_instance_id=None)]))

    def close(self) -> None:
        self.client.close()


def form_and_rebalance(port: int, size: int, heartbeat_ms: int, group: str) -> tuple[float, float]:
    """Seconds for ``size`` members to form a Stable group, then for the rest to be Stable again
    after one leaves. Members live as clients do: after their SyncGroup they heartbeat every
    ``heartbeat_ms`` and join again on REBALANCE_IN_PROGRESS (with no initial rebalance delay a
    group's first members form a generation that the later ones then rebalance)."""
    coordinator = coordinator_of(port, group)
    members = [Member(coordinator, group, i) for i in range(size)]
    stop = threading.Event()
    threads = [threading.Thread(target=m.live, args=(stop, heartbeat_ms / 1000), daemon=True)
               for m in members]
    try:
        start = time.perf_counter()
        for t in threads:
            t.start()
        formed = _until_stable(members, 0) - start
        if size < 2:
            return formed, float("nan")
        generation = members[0].synced[0]
        leaving = next(m for m in members if not m.leader)
        leaving.stop = True
        rest = [m for m in members if m is not leaving]
        start = time.perf_counter()
        with leaving.lock:
            leaving.leave()
        return formed, _until_stable(rest, generation) - start
    finally:
        stop.set()
        for t in threads:
            t.join(30)
        for m in members:
            m.close()


def _until_stable(members: list[Member], after_generation: int, timeout: float = 120) -> float:
    """When the last member synced, once every member has synced one generation (above
    ``after_generation``) and heard from a heartbeat since that no rebalance is under way."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = [m.synced for m in members]
        if any(m.error for m in members):
            raise next(m.error for m in members if m.error)
        generations = {g for g, _, confirmed in states if confirmed}
        if len(generations) == 1 and all(c for _, _, c in states) and min(generations) > after_generation:
            return max(at for _, at, _ in states)
        time.sleep(0.005)
    raise RuntimeError(f"the group did not become stable in {timeout:g} s")


def commits_per_second(port: int, seconds: float, group: str, committers: int = 1) -> float:
    """OffsetCommits per second of ``committers`` connections at once, each with one commit in
    flight, all for ``group`` (commits of a group without members, generation -1: one partition of
    __consumer_offsets takes them all, where a coordinator can batch its appends)."""
    coordinator = coordinator_of(port, group)
    counts = [0] * committers
    errors: list[BaseException] = []
    clients = [BlockingClient(HOST, coordinator, f"bench-commits-{i}", 30) for i in range(committers)]
    start = time.perf_counter()
    deadline = start + seconds

    def commit(i: int) -> None:
        R = offset_commit.REQUEST
        T, P = R["topics"], R["topics"]["partitions"]
        n = 0
        try:
            while time.perf_counter() < deadline:
                partition = P(partition_index=0, committed_offset=n, committed_leader_epoch=-1,
                              committed_metadata="")
                body = R(group_id=group, generation_id_or_member_epoch=-1, member_id="",
                         group_instance_id=None, topics=[T(name="t", partitions=[partition])])
                answer = clients[i].send_and_receive(ApiKey.OFFSET_COMMIT, 7, body)
                error = answer.topics[0].partitions[0].error_code
                if error != E.NONE:
                    raise RuntimeError(f"OffsetCommit: {E.for_code(error).name}")
                n += 1
        except BaseException as e:
            errors.append(e)
        counts[i] = n

    try:
        if committers == 1:
            commit(0)
        else:
            threads = [threading.Thread(target=commit, args=(i,), daemon=True) for i in range(committers)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(seconds + 60)
        if errors:
            raise errors[0]
        return sum(counts) / (time.perf_counter() - start)
    finally:
        for c in clients:
            c.close()


def run(sizes: list[int], seconds: float, rounds: int, heartbeat_ms: int, pin: bool, write_md: str | None,
        command: str, say: Say = print, committers: int = 8) -> str:
    form: dict[tuple[str, int], list[float]] = {}
    rebalance: dict[tuple[str, int], list[float]] = {}
    commits: dict[str, list[float]] = {}
    parallel: dict[str, list[float]] = {}
    for r in range(rounds):
        for kind in (("kafkalite", "mock") if r % 2 == 0 else ("mock", "kafkalite")):
            overrides = ("group.initial.rebalance.delay.ms=0",) if kind == "kafkalite" else ()
            with servers.started(kind, pin=pin, overrides=overrides) as server:
                for size in sizes if kind == "kafkalite" else ():
                    f, b = form_and_rebalance(server.port, size, heartbeat_ms, f"g{size}-{r}")
                    form.setdefault((kind, size), []).append(f)
                    rebalance.setdefault((kind, size), []).append(b)
                    say(f"round {r + 1}/{rounds} {kind} {size} members: formed in {f * 1000:,.0f} ms, "
                        f"rebalanced in {b * 1000:,.0f} ms")
                tasks.prepare_topic(server.port, kind, "t")  # commits are for partitions that exist
                rate = commits_per_second(server.port, seconds, f"committer-{r}")
                commits.setdefault(kind, []).append(rate)
                say(f"round {r + 1}/{rounds} {kind}: {rate:,.0f} OffsetCommits/s")
                if committers > 1:
                    rate = commits_per_second(server.port, seconds, f"committers-{r}", committers)
                    parallel.setdefault(kind, []).append(rate)
                    say(f"round {r + 1}/{rounds} {kind}, {committers} committers: {rate:,.0f} "
                        f"OffsetCommits/s")
    body = _section(sizes, form, rebalance, commits, seconds, rounds, heartbeat_ms, command, parallel,
                    committers)
    if write_md:
        write_section(write_md, "groups", body)
        say(f"wrote {write_md}")
    return body




def _section(sizes: list[int], form: dict, rebalance: dict, commits: dict, seconds: float, rounds: int,
             heartbeat_ms: int, command: str, parallel: dict | None = None, committers: int = 1) -> str:
    text = (f"## Consumer groups: forming, rebalancing, committing\n\nCommand: `{command}`  \n"
            f"Machine: {machine()}.  \nMeasured: {time.strftime('%Y-%m-%d %H:%M')}. {rounds} rounds, "
            f"servers in turn (order reversed every other round), medians; raw protocol members "
            f"(JoinGroup v5, SyncGroup v3, Heartbeat v3 every {heartbeat_ms} ms, OffsetCommit v7), one "
            f"connection each; kafkalite with group.initial.rebalance.delay.ms=0.\n\n")
    text += ("| members | form: first JoinGroup to all synced, ms | rebalance: LeaveGroup to all synced "
             "again, ms |\n| ---: | ---: | ---: |\n")
    for size in sizes:
        formed, rebalanced = median(form[("kafkalite", size)]), median(rebalance[("kafkalite", size)])
        text += f"| {size} | {millis(formed)} | {millis(rebalanced)} |\n"
    k, m = statistics.median(commits["kafkalite"]), statistics.median(commits["mock"])
    text += (f"\n| OffsetCommit, one in flight, {seconds:g} s | commits/s |\n| --- | ---: |\n"
             f"| kafkalite (appended to __consumer_offsets, acks=all) | {k:,.0f} |\n"
             f"| mock (kept in memory) | {m:,.0f} |\n\nkafkalite / mock: {k / m:.2f}x the commits.\n")
    if parallel:
        kp, mp = statistics.median(parallel["kafkalite"]), statistics.median(parallel["mock"])
        text += (f"\n| OffsetCommit, {committers} connections of one group at once, one in flight each, "
                 f"{seconds:g} s | commits/s |\n| --- | ---: |\n"
                 f"| kafkalite | {kp:,.0f} |\n| mock | {mp:,.0f} |\n\n"
                 f"kafkalite / mock: {kp / mp:.2f}x the commits.\n")
    return text
