"""A fake of RaftManager's shape for the controller's unit tests: in memory, a quorum of one that
commits each append at once and tells its listener (handle_commit before the append's future
completes, as the RaftManager does). Each leader epoch opens with a control entry, as Raft's
LeaderChange record, so offsets of the state machine's records have gaps as in a real log.

``lose_leadership`` hands leadership to another node (the listener is told); ``elect`` takes it
back in a new epoch; ``fail_appends`` makes appends fail with NOT_CONTROLLER (an epoch that ends
before the commit) while leadership stays.

``MetadataLog``: the log alone, for the stores of the controls' tests.
"""

from __future__ import annotations

import concurrent.futures
import threading
from typing import Any

from kafkalite.common.errors import ApiError
from kafkalite.controller import records
from kafkalite.controller.store import ControllerStore
from kafkalite.protocol import error_codes as E
from kafkalite.raft.messages import NO_LEADER, Entry, OffsetAndEpoch


class FakeRaft:
    def __init__(self, node_id: int = 1, listener: Any = None) -> None:
        self.node_id = node_id
        self.listener = listener
        self.entries: list[Entry] = []
        self.leader: tuple[int, int] = (NO_LEADER, 0)
        self.snapshots: list[tuple[OffsetAndEpoch, bytes]] = []
        self.fail_appends = False
        self._lock = threading.RLock()

    @property
    def epoch(self) -> int:
        return self.leader[1]

    def startup(self) -> None:
        self.elect()

    def shutdown(self) -> None:
        pass

    def elect(self) -> None:
        """This node leads, in a new epoch."""
        with self._lock:
            epoch = self.epoch + 1
            self.entries.append(Entry(len(self.entries), epoch, b"", control=True))
            self.leader = (self.node_id, epoch)
        self.listener.handle_leader_change(self.node_id, epoch)

    def lose_leadership(self, new_leader: int = NO_LEADER) -> None:
        with self._lock:
            self.leader = (new_leader, self.epoch + 1)
        self.listener.handle_leader_change(new_leader, self.epoch)

    def append(self, records: list[bytes]) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._lock:
            if self.leader[0] != self.node_id or self.fail_appends:
                future.set_exception(ApiError(E.NOT_CONTROLLER, "not the leader"))
                return future
            start = len(self.entries)
            new = [Entry(start + i, self.epoch, data) for i, data in enumerate(records)]
            self.entries += new
            self.listener.handle_commit(new)
        future.set_result(new[-1].offset if new else start - 1)
        return future

    def create_snapshot(self, snapshot_id: OffsetAndEpoch, payload: bytes) -> None:
        self.snapshots.append((snapshot_id, payload))

    def records(self) -> list[Entry]:
        """Every committed entry the state machine sees (control ones left out)."""
        return [e for e in self.entries if not e.control]


class MetadataLog:
    """The metadata log without Raft or a controller: ``store()`` gives a ControllerStore whose
    writes commit at once (every store of this log applies them); a new ``store()`` replays the
    whole log, as a new active controller's image has it."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self._stores: list[ControllerStore] = []

    def _write(self, batch: list[Any]) -> int:
        start = len(self.entries)
        new = [Entry(start + i, 1, records.encode(r)) for i, r in enumerate(batch)]
        self.entries += new
        for store in self._stores:
            store.apply_entries(new)
        return new[-1].offset

    def store(self) -> ControllerStore:
        store = ControllerStore(self._write)
        store.apply_entries(self.entries)
        self._stores.append(store)
        return store

    def records(self) -> list[Any]:
        return [records.decode(e.data) for e in self.entries]
