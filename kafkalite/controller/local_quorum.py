"""A metadata quorum of one voter, for a node until the RaftManager (kafkalite/raft/manager.py) is
wired in its place: the same shape (``append``, ``leader``, ``create_snapshot``, ``startup``,
``shutdown``, a RaftListener told of commits and leadership), no network, no election.

Entries go to one file (``path``; None: memory), each one length-prefixed (offset, epoch, data)
and fsync'ed before ``append`` answers, so a restarted node replays them; every start is a new
epoch (kept in ``path + ".epoch"``). Snapshots are taken as given and not used: the whole log is
kept.
"""

from __future__ import annotations

import concurrent.futures
import os
import struct
import threading
from typing import Any

from kafkalite.common.errors import ApiError
from kafkalite.protocol import error_codes as E
from kafkalite.raft.messages import NO_LEADER, Entry, OffsetAndEpoch

_HEADER = struct.Struct(">Iqi")  # size of data, offset, epoch


class LocalQuorum:
    def __init__(self, node_id: int, path: str | None, listener: Any = None) -> None:
        self.node_id = node_id
        self.path = path
        self.listener = listener  # a RaftListener (the controller), set before startup
        self.leader: tuple[int, int] = (NO_LEADER, 0)
        self._next_offset = 0
        self._file: Any = None
        self._lock = threading.Lock()
        self.snapshots: list[OffsetAndEpoch] = []

    def startup(self) -> None:
        entries: list[Entry] = []
        epoch = 0
        if self.path is not None:
            os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
            entries = self._read()
            try:
                with open(self.path + ".epoch") as f:
                    epoch = int(f.read().strip() or 0)
            except FileNotFoundError:
                pass
            epoch = max([epoch, *(e.epoch for e in entries)]) + 1
            with open(self.path + ".epoch", "w") as f:
                f.write(str(epoch))
                f.flush()
                os.fsync(f.fileno())
            self._file = open(self.path, "ab")
        else:
            epoch = 1
        # Raft opens every epoch with a LeaderChange control record: its offset is skipped here.
        self._next_offset = (entries[-1].offset + 1 if entries else 0) + 1
        if entries:
            self.listener.handle_commit(entries)
        self.leader = (self.node_id, epoch)
        self.listener.handle_leader_change(self.node_id, epoch)

    def _read(self) -> list[Entry]:
        assert self.path is not None
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return []
        entries, pos = [], 0
        while pos + _HEADER.size <= len(data):
            size, offset, epoch = _HEADER.unpack_from(data, pos)
            end = pos + _HEADER.size + size
            if end > len(data):
                break  # a torn last write
            entries.append(Entry(offset, epoch, bytes(data[pos + _HEADER.size:end])))
            pos = end
        if pos != len(data):
            with open(self.path, "r+b") as f:
                f.truncate(pos)
        return entries

    def shutdown(self) -> None:
        with self._lock:
            self.leader = (NO_LEADER, self.leader[1])
            if self._file is not None:
                self._file.close()
                self._file = None

    def append(self, records: list[bytes]) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._lock:
            leader, epoch = self.leader
            if leader != self.node_id:
                future.set_exception(ApiError(E.NOT_CONTROLLER, E.BY_CODE[E.NOT_CONTROLLER].message))
                return future
            entries = [Entry(self._next_offset + i, epoch, data) for i, data in enumerate(records)]
            if self._file is not None:
                for e in entries:
                    self._file.write(_HEADER.pack(len(e.data), e.offset, e.epoch) + e.data)
                self._file.flush()
                os.fsync(self._file.fileno())
            self._next_offset += len(entries)
            self.listener.handle_commit(entries)
        future.set_result(entries[-1].offset if entries else self._next_offset - 1)
        return future

    def create_snapshot(self, snapshot_id: OffsetAndEpoch, payload: bytes) -> None:
        self.snapshots.append(snapshot_id)
