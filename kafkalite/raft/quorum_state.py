"""The durable election state (Kafka's ElectionState) and its store, the ``quorum-state`` file
(FileQuorumStateStore): JSON of QuorumStateData v1 plus ``data_version``::

    {"leaderId":1,"leaderEpoch":5,"votedId":1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}

written to ``quorum-state.tmp``, fsynced and renamed over the old file (then the directory is
fsynced), so a vote is on disk before it is answered. A v0 file (clusterId, leaderId, leaderEpoch,
votedId, appliedOffset, currentVoters) is read too. ``directory`` None keeps it in memory."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from kafkalite.storage.volume import FILES, Volume

FILE_NAME = "quorum-state"
DATA_VERSION = 1
NO_ID = -1
ZERO_DIRECTORY_ID = "AAAAAAAAAAAAAAAAAAAAAA"  # Uuid.ZERO_UUID in base64, no voter directory id


@dataclass(frozen=True)
class ElectionState:
    epoch: int
    leader_id: int = NO_ID
    voted_id: int = NO_ID

    def to_json(self) -> str:
        return json.dumps({"leaderId": self.leader_id, "leaderEpoch": self.epoch, "votedId": self.voted_id,
                           "votedDirectoryId": ZERO_DIRECTORY_ID, "data_version": DATA_VERSION},
                          separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> ElectionState:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("quorum-state is not a JSON object")
        version = data.get("data_version", 0)
        if version not in (0, 1):
            raise ValueError(f"unknown quorum-state data_version {version}")
        return cls(int(data.get("leaderEpoch", 0)), int(data.get("leaderId", NO_ID)),
                   int(data.get("votedId", NO_ID)))


class QuorumStateStore:
    def __init__(self, directory: str | None, volume: Volume = FILES) -> None:
        self._path = Path(directory) / FILE_NAME if directory is not None else None
        self._volume = volume
        self._memory: ElectionState | None = None
        if directory is not None:
            volume.mkdir(Path(directory))

    def read(self) -> ElectionState | None:
        """The stored state, None when there is none yet."""
        if self._path is None:
            return self._memory
        try:
            text = self._volume.read_bytes(self._path).decode("utf-8")
        except FileNotFoundError:
            return None
        return ElectionState.from_json(text) if text.strip() else None

    def write(self, state: ElectionState) -> None:
        if self._path is None:
            self._memory = state
            return
        self._volume.write_atomically(self._path, state.to_json().encode("utf-8"))

    def clear(self) -> None:
        self._memory = None
        if self._path is not None:
            self._volume.unlink(self._path)
