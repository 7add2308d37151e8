"""A simulated network of RaftNodes for the tests: a virtual clock, messages that may be lost,
delayed, reordered or delivered twice, partitions, and crashes with restarts from each node's
directory (kept in a MemoryVolume, so a restarted node finds what it had written).

Every request a node sends ends once at the sender: with its response, or with handle_failure
after the request timeout (lost request or answer, partition, crashed peer), as the RaftManager's
connections do. A request delivered twice is handled twice; only the first answer reaches the
sender (the second one's correlation id is gone, as on a real connection)."""

from __future__ import annotations

import heapq
import itertools
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from kafkalite.raft.config import QuorumConfig
from kafkalite.raft.log import ReplicatedLog
from kafkalite.raft.messages import Entry, OffsetAndEpoch, Request, Response
from kafkalite.raft.node import RaftNode
from kafkalite.raft.quorum_state import QuorumStateStore
from kafkalite.storage.volume import MemoryVolume

CLUSTER_ID = "sim-cluster"


def snapshot_payload(entries: list[tuple[int, str, bool]]) -> bytes:
    return json.dumps(entries).encode()


def snapshot_entries(payload: bytes) -> list[tuple[int, str, bool]]:
    return [(int(e), str(d), bool(c)) for e, d, c in json.loads(payload)]


@dataclass(order=True)
class _Event:
    at: float
    seq: int
    action: Callable[[], None] = field(compare=False)


@dataclass
class _Pending:
    src: int
    incarnation: int
    dst: int
    request: Request
    deadline: float


class Network:
    def __init__(self, n: int, seed: int = 0, config: QuorumConfig | None = None,
                 directories: bool = True) -> None:
        self.ids = list(range(1, n + 1))
        self.config = config or QuorumConfig()
        self.rng = random.Random(seed)
        self.now = 0.0
        self.volume = MemoryVolume()
        self.directories = directories
        self.nodes: dict[int, RaftNode | None] = {}
        self.logs: dict[int, ReplicatedLog] = {}  # the last log of each node (a crashed one's too)
        self.stores: dict[int, QuorumStateStore] = {}
        self.incarnation = dict.fromkeys(self.ids, 0)
        self.loss = 0.0
        self.duplication = 0.0
        self.max_delay = 0.005
        self.blocked: set[tuple[int, int]] = set()
        self._events: list[_Event] = []
        self._seq = itertools.count()
        self._pending: dict[int, _Pending] = {}
        self._tokens = itertools.count()
        self.leaders: dict[int, int] = {}  # epoch -> the leader seen in it
        for i in self.ids:
            self.start(i)

    # ----- nodes ---------------------------------------------------------------------------------
    def start(self, i: int) -> RaftNode:
        if self.directories:
            directory: str | None = f"/sim/node-{i}/__cluster_metadata-0"
            log = ReplicatedLog(directory, self.volume)
            store = QuorumStateStore(directory, self.volume)
        else:  # in memory: a "restart" keeps the same objects, as a disk would keep the files
            log = self.logs.get(i) or ReplicatedLog(None)
            store = self.stores.get(i) or QuorumStateStore(None)
        node = RaftNode(i, self.ids, CLUSTER_ID, log, store, self.config, self.now,
                        random.Random(self.rng.random()))
        self.nodes[i], self.logs[i], self.stores[i] = node, log, store
        self.incarnation[i] += 1
        self._observe()
        return node

    def crash(self, i: int) -> None:
        self.nodes[i] = None
        self.incarnation[i] += 1
        for token in [t for t, p in self._pending.items() if p.src == i]:
            del self._pending[token]

    def alive(self) -> list[RaftNode]:
        return [n for n in self.nodes.values() if n is not None]

    def leader(self) -> RaftNode | None:
        leaders = [n for n in self.alive() if n.is_leader]
        return max(leaders, key=lambda n: n.epoch) if leaders else None

    # ----- network -------------------------------------------------------------------------------
    def partition(self, group: set[int]) -> None:
        """Cut ``group`` off from the others (both ways)."""
        self.blocked = {(a, b) for a in self.ids for b in self.ids
                        if a != b and ((a in group) != (b in group))}

    def heal(self) -> None:
        self.blocked = set()
        self.loss = self.duplication = 0.0

    def _schedule(self, delay: float, action: Callable[[], None]) -> None:
        heapq.heappush(self._events, _Event(self.now + delay, next(self._seq), action))

    def _delay(self) -> float:
        return self.rng.uniform(0.0005, max(0.0005, self.max_delay))

    def _lost(self, src: int, dst: int) -> bool:
        return (src, dst) in self.blocked or self.rng.random() < self.loss

    def _send(self, src: int, dst: int, request: Request) -> None:
        token = next(self._tokens)
        self._pending[token] = _Pending(src, self.incarnation[src], dst, request,
                                        self.now + self.config.request_timeout_ms / 1000)
        if self._lost(src, dst):
            return
        copies = 2 if self.rng.random() < self.duplication else 1
        for _ in range(copies):
            self._schedule(self._delay(), lambda: self._deliver_request(token, src, dst, request))

    def _deliver_request(self, token: int, src: int, dst: int, request: Request) -> None:
        node = self.nodes[dst]
        if node is None:
            return
        incarnation = self.incarnation[dst]
        answered = False

        def reply(response: Response) -> None:
            nonlocal answered
            assert not answered, "reply called twice"
            answered = True
            if self.incarnation[dst] != incarnation or self._lost(dst, src):
                return
            self._schedule(self._delay(), lambda: self._deliver_response(token, response))

        node.handle_request(self.now, src, request, reply)

    def _deliver_response(self, token: int, response: Response) -> None:
        pending = self._pending.pop(token, None)
        if pending is None or self.incarnation[pending.src] != pending.incarnation:
            return
        node = self.nodes[pending.src]
        assert node is not None
        node.handle_response(self.now, pending.dst, pending.request, response)

    def _expire(self) -> None:
        for token, p in list(self._pending.items()):
            if p.deadline <= self.now:
                del self._pending[token]
                node = self.nodes[p.src]
                if node is not None and self.incarnation[p.src] == p.incarnation:
                    node.handle_failure(self.now, p.dst, p.request)

    # ----- the clock -----------------------------------------------------------------------------
    def poll_all(self) -> None:
        for i, node in self.nodes.items():
            if node is None:
                continue
            for dst, request in node.poll(self.now):
                self._send(i, dst, request)
            if self.nodes[i] is node:
                assert node.next_deadline() > self.now, (i, node.role, node.next_deadline(), self.now)
        self._observe()

    def _next_time(self) -> float:
        t = min((n.next_deadline() for n in self.alive()), default=float("inf"))
        if self._events:
            t = min(t, self._events[0].at)
        if self._pending:
            t = min(t, min(p.deadline for p in self._pending.values()))
        return t

    def run(self, seconds: float, max_steps: int = 100_000) -> None:
        end = self.now + seconds
        self.poll_all()
        for _ in range(max_steps):
            t = self._next_time()
            if t > end:
                break
            self.now = max(self.now, t)
            while self._events and self._events[0].at <= self.now:
                heapq.heappop(self._events).action()
            self._expire()
            self.poll_all()
        else:
            raise AssertionError(f"more than {max_steps} steps in {seconds} s")
        self.now = end
        self.poll_all()

    def run_until(self, condition: Callable[[], bool], seconds: float = 60.0, step: float = 0.05) -> bool:
        waited = 0.0
        while not condition():
            if waited >= seconds:
                return False
            self.run(step)
            waited += step
        return True

    def _observe(self) -> None:
        for node in self.alive():
            if node.is_leader:
                seen = self.leaders.setdefault(node.epoch, node.node_id)
                assert seen == node.node_id, f"two leaders in epoch {node.epoch}: {seen}, {node.node_id}"

    # ----- the state machine's side ----------------------------------------------------------------
    def committed_entries(self, i: int) -> list[tuple[int, str, bool]]:
        """What node ``i`` holds as committed: its snapshot's entries then its committed log."""
        node = self.nodes[i]
        assert node is not None
        out: list[tuple[int, str, bool]] = []
        snap = node.latest_snapshot()
        if snap is not None:
            out = snapshot_entries(snap[1])
            assert len(out) == snap[0].offset
        start = node.log_start_offset
        assert len(out) == start, (i, len(out), start)
        out += [(e.epoch, e.data.hex(), e.control) for e in node.read_committed(start, 1 << 30)]
        return out

    def snapshot(self, i: int) -> OffsetAndEpoch | None:
        node = self.nodes[i]
        if node is None or node.high_watermark <= node.log_start_offset:
            return None
        entries = self.committed_entries(i)
        offset = node.high_watermark
        snapshot_id = OffsetAndEpoch(offset, entries[offset - 1][0])
        node.create_snapshot(snapshot_id, snapshot_payload(entries[:offset]))
        return snapshot_id

    def log_entries(self, i: int) -> list[Entry]:
        log = self.logs[i]
        return log.read(log.start_offset) if log.end_offset > log.start_offset else []

    def close(self) -> None:
        self.volume.close()
