"""One partition this broker hosts (Kafka's Partition): its log, who leads it in which epoch, its
replicas and ISR as the controller last said, and the high watermark derived from them.

The leader appends (``append_records_to_leader``) and serves reads; a follower takes neither
(NOT_LEADER_OR_FOLLOWER). The high watermark is the lowest log end offset over the ISR: with the
leader alone in the ISR it follows the leader's log end at once; followers' log end offsets are
learnt from their fetches (``update_follower_fetch_state``, used by replication), and until one is
known that follower holds the high watermark where it is. Leader-epoch checks follow Kafka's
``Partition.checkCurrentLeaderEpoch``: an older epoch in a request is FENCED_LEADER_EPOCH, a newer
one UNKNOWN_LEADER_EPOCH, -1 skips the check.
"""

from __future__ import annotations

import threading
import uuid
from typing import NamedTuple

from kafkalite.common.errors import ApiError
from kafkalite.protocol import error_codes as E
from kafkalite.storage.log import FetchIsolation, Log, LogAppendInfo
from kafkalite.storage.segment import FileSlice

NO_LEADER_EPOCH = -1  # "do not check" in requests (current_leader_epoch)


class PartitionState(NamedTuple):
    """What LeaderAndIsr said of the partition."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    replicas: tuple[int, ...]
    partition_epoch: int


class ReadResult(NamedTuple):
    """A read of the log with the offsets a Fetch response carries alongside."""

    records: FileSlice
    high_watermark: int
    last_stable_offset: int
    log_start_offset: int
    log_end_offset: int


def not_leader(topic: str, index: int, node_id: int) -> ApiError:
    return ApiError(E.NOT_LEADER_OR_FOLLOWER,
                    f"Leader not local for partition {topic}-{index} on broker {node_id}")


class Partition:
    def __init__(self, topic: str, index: int, topic_id: uuid.UUID, log: Log, node_id: int,
                 state: PartitionState) -> None:
        self.topic, self.index, self.topic_id = topic, index, topic_id
        self.log = log
        self.node_id = node_id
        self.state = state
        # Kafka's leaderIsrUpdateLock: appends and reads take it shared in Kafka; one lock here,
        # held briefly (the log has its own lock for the file work).
        self._lock = threading.RLock()
        self.follower_log_end_offsets: dict[int, int] = {}
        if state.leader == node_id:
            self._become_leader(state)

    # --- role ---------------------------------------------------------------------------------

    @property
    def is_leader(self) -> bool:
        return self.state.leader == self.node_id

    @property
    def leader(self) -> int:
        return self.state.leader

    @property
    def leader_epoch(self) -> int:
        return self.state.leader_epoch

    def make_leader_or_follower(self, state: PartitionState) -> None:
        """Apply a new state from LeaderAndIsr."""
        with self._lock:
            self.state = state
            if state.leader == self.node_id:
                self._become_leader(state)
            else:
                self.follower_log_end_offsets.clear()

    def _become_leader(self, state: PartitionState) -> None:
        # A new leader epoch starts at the log end (Partition.makeLeader): OffsetForLeaderEpoch
        # answers the previous epochs' ends from it.
        self.log.maybe_assign_epoch_start_offset(state.leader_epoch, self.log.log_end_offset)
        self.follower_log_end_offsets = {r: -1 for r in state.replicas if r != self.node_id}
        self.maybe_increment_high_watermark()

    def check_leader(self, current_leader_epoch: int = NO_LEADER_EPOCH) -> None:
        """Raise the error a request for a leader must get here, if any."""
        if not self.is_leader:
            raise not_leader(self.topic, self.index, self.node_id)
        self.check_leader_epoch(current_leader_epoch)

    def check_leader_epoch(self, current_leader_epoch: int) -> None:
        if current_leader_epoch == NO_LEADER_EPOCH:
            return
        epoch = self.state.leader_epoch
        if current_leader_epoch < epoch:
            raise ApiError(E.FENCED_LEADER_EPOCH,
                           f"The leader epoch in the request, {current_leader_epoch}, is older than "
                           f"the current one, {epoch}, of {self.topic}-{self.index}")
        if current_leader_epoch > epoch:
            raise ApiError(E.UNKNOWN_LEADER_EPOCH,
                           f"The leader epoch in the request, {current_leader_epoch}, is newer than "
                           f"the current one, {epoch}, of {self.topic}-{self.index}")

    # --- append and high watermark ------------------------------------------------------------

    def append_records_to_leader(self, records: bytearray | memoryview) -> LogAppendInfo:
        with self._lock:
            if not self.is_leader:
                raise not_leader(self.topic, self.index, self.node_id)
            info = self.log.append_as_leader(records, self.state.leader_epoch)
            self.maybe_increment_high_watermark()
            return info

    def maybe_increment_high_watermark(self) -> bool:
        """HW = the lowest log end offset in the ISR (the leader's own included); whether it
        moved. A follower whose log end is not known yet holds it."""
        with self._lock:
            if not self.is_leader:
                return False
            lowest = self.log.log_end_offset
            for replica in self.state.isr:
                if replica != self.node_id:
                    lowest = min(lowest, self.follower_log_end_offsets.get(replica, -1))
            if lowest <= self.log.high_watermark:
                return False
            self.log.update_high_watermark(lowest)
            return True

    def required_offset_reached(self, required_offset: int) -> bool:
        """acks=all: whether the high watermark covers everything below ``required_offset``."""
        return self.log.high_watermark >= required_offset

    # --- read ---------------------------------------------------------------------------------

    def read(self, fetch_offset: int, max_bytes: int, isolation: FetchIsolation,
             min_one_message: bool, current_leader_epoch: int = NO_LEADER_EPOCH) -> ReadResult:
        """Whole batches from ``fetch_offset`` (Kafka's readRecords); OffsetOutOfRangeError outside
        the log, leader errors as ``check_leader``."""
        self.check_leader(current_leader_epoch)
        log = self.log
        records = log.read(fetch_offset, max_bytes, isolation, min_one_message)
        # Read after the records: a high watermark that moved meanwhile still covers them.
        # Without transactions the last stable offset is the high watermark.
        hw = log.high_watermark
        return ReadResult(records, hw, hw, log.log_start_offset, log.log_end_offset)

    def __repr__(self) -> str:
        return (f"Partition({self.topic}-{self.index}, leader={self.state.leader}, "
                f"epoch={self.state.leader_epoch}, isr={list(self.state.isr)})")
