"""One partition this broker hosts (Kafka's Partition): its log, who leads it in which epoch, its
replicas and ISR, and the high watermark derived from them.

The leader appends (``append_records_to_leader``, saying who appends: a client, or a coordinator
writing transaction markers and its own records) and serves reads, with the log's high watermark
and last stable offset; a follower takes neither (NOT_LEADER_OR_FOLLOWER) and appends what its
replica fetcher brings (``append_as_follower``), its high watermark the leader's capped by its own
log end. Leader-epoch checks follow Kafka's
``Partition.checkCurrentLeaderEpoch``: an older epoch in a request is FENCED_LEADER_EPOCH, a newer
one UNKNOWN_LEADER_EPOCH, -1 skips the check.

The leader learns each follower's log end offset from its fetches (``update_follower_fetch_state``,
Kafka's Replica.updateFetchState, which also tracks when the follower was last caught up). From
that it keeps the ISR as Kafka does:

- **high watermark** = the lowest log end offset over the *maximal* ISR (the ISR the controller
  holds together with a change proposed and not yet answered, KIP-497), the leader's included;
  it does not advance while the ISR is smaller than ``min.insync.replicas``;
- **expand**: a follower outside the ISR whose log end reached the high watermark and the start
  of the leader's epoch is proposed back in (``maybe_expand_isr``, on each of its fetches);
- **shrink**: an ISR follower not caught up to the leader's log end for ``replica.lag.time.max.ms``
  is proposed out (``maybe_shrink_isr``, on the ReplicaManager's isr-expiration schedule).

A proposal goes to the controller as AlterPartition (``alter_isr``, given by the ReplicaManager);
one at a time per partition, and nothing else is proposed until its answer
(``on_alter_partition_answer``) or a new leader epoch clears it.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import NamedTuple, Protocol

from kafkalite.common.errors import ApiError
from kafkalite.protocol import error_codes as E
from kafkalite.storage.log import AppendOrigin, FetchIsolation, Log, LogAppendInfo
from kafkalite.storage.segment import FileSlice

NO_LEADER_EPOCH = -1  # "do not check" in requests (current_leader_epoch)

# (partition, proposed ISR): sends an AlterPartition for it; the answer comes back through
# Partition.on_alter_partition_answer.
AlterIsr = Callable[["Partition", tuple[int, ...]], None]


class IsrChangeListener(Protocol):
    """Told of each ISR change the controller answered (Kafka's IsrChangeListener): the
    ReplicaManager counts them as IsrExpandsPerSec, IsrShrinksPerSec, FailedIsrUpdatesPerSec."""

    def mark_expand(self) -> None: ...

    def mark_shrink(self) -> None: ...

    def mark_failed(self) -> None: ...


def monotonic_ms() -> int:
    return time.monotonic_ns() // 1_000_000


class PartitionState(NamedTuple):
    """What LeaderAndIsr said of the partition (the ISR as the controller last answered)."""

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


class FollowerState:
    """The leader's view of one follower (Kafka's Replica)."""

    __slots__ = ("last_caught_up_ms", "last_fetch_leader_log_end_offset", "last_fetch_ms", "log_end_offset")

    def __init__(self, now_ms: int, leader_log_end_offset: int, in_sync: bool) -> None:
        self.log_end_offset = -1  # unknown until its first fetch
        # An ISR member gets the benefit of the doubt from the start of the leadership.
        self.last_caught_up_ms = now_ms if in_sync else 0
        self.last_fetch_leader_log_end_offset = leader_log_end_offset
        self.last_fetch_ms = now_ms

    def update(self, fetch_offset: int, now_ms: int, leader_log_end_offset: int) -> None:
        # Caught up now if it asks for the log end; caught up at its last fetch if it asks for
        # what was the log end then (Replica.updateFetchState).
        if fetch_offset >= leader_log_end_offset:
            self.last_caught_up_ms = max(self.last_caught_up_ms, now_ms)
        elif fetch_offset >= self.last_fetch_leader_log_end_offset:
            self.last_caught_up_ms = max(self.last_caught_up_ms, self.last_fetch_ms)
        self.log_end_offset = fetch_offset
        self.last_fetch_leader_log_end_offset = leader_log_end_offset
        self.last_fetch_ms = now_ms


def not_leader(topic: str, index: int, node_id: int) -> ApiError:
    return ApiError(E.NOT_LEADER_OR_FOLLOWER,
                    f"Leader not local for partition {topic}-{index} on broker {node_id}")


class Partition:
    def __init__(self, topic: str, index: int, topic_id: uuid.UUID, log: Log, node_id: int,
                 state: PartitionState, alter_isr: AlterIsr | None,
                 replica_lag_time_max_ms: int,  # replica.lag.time.max.ms
                 now_ms: Callable[[], int] = monotonic_ms,
                 isr_changes: IsrChangeListener | None = None) -> None:
        self.topic, self.index, self.topic_id = topic, index, topic_id
        self.isr_changes = isr_changes
        self.log = log
        self.node_id = node_id
        self.state = state
        self.alter_isr = alter_isr
        self.replica_lag_time_max_ms = replica_lag_time_max_ms
        self._now_ms = now_ms
        # Kafka's leaderIsrUpdateLock: appends and reads take it shared in Kafka; one lock here,
        # held briefly (the log has its own lock for the file work).
        self._lock = threading.RLock()
        self.followers: dict[int, FollowerState] = {}
        self.pending_isr: tuple[int, ...] | None = None  # proposed to the controller, not answered
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

    @property
    def isr(self) -> tuple[int, ...]:
        return self.state.isr

    @property
    def replicas(self) -> tuple[int, ...]:
        return self.state.replicas

    @property
    def maximal_isr(self) -> frozenset[int]:
        """The ISR for the high watermark: the controller's with a pending change's added."""
        pending = self.pending_isr
        return frozenset(self.state.isr) | frozenset(pending or ())

    @property
    def min_insync_replicas(self) -> int:
        return self.log.config.min_insync_replicas

    @property
    def under_min_isr(self) -> bool:
        return len(self.state.isr) < self.min_insync_replicas

    def make_leader_or_follower(self, state: PartitionState) -> None:
        """Apply a new state from LeaderAndIsr."""
        with self._lock:
            self.state = state
            self.pending_isr = None  # a new leader epoch: a proposal of the old one is void
            if state.leader == self.node_id:
                self._become_leader(state)
            else:
                self.followers.clear()

    def _become_leader(self, state: PartitionState) -> None:
        # A new leader epoch starts at the log end (Partition.makeLeader): OffsetForLeaderEpoch
        # answers the previous epochs' ends from it.
        self.log.maybe_assign_epoch_start_offset(state.leader_epoch, self.log.log_end_offset)
        now, end = self._now_ms(), self.log.log_end_offset
        self.followers = {r: FollowerState(now, end, r in state.isr)
                          for r in state.replicas if r != self.node_id}
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

    # --- append and high watermark (leader) ---------------------------------------------------

    def append_records_to_leader(self, records: bytearray | memoryview, required_acks: int = 1,
                                 origin: AppendOrigin = AppendOrigin.CLIENT) -> LogAppendInfo:
        """Append as leader (the log's checks for ``origin``); the high watermark may move."""
        with self._lock:
            if not self.is_leader:
                raise not_leader(self.topic, self.index, self.node_id)
            if required_acks == -1 and self.under_min_isr:
                raise ApiError(E.NOT_ENOUGH_REPLICAS,
                               f"The size of the current ISR {set(self.state.isr)} is insufficient to "
                               f"satisfy the min.isr requirement of {self.min_insync_replicas} for "
                               f"partition {self.topic}-{self.index}")
            info = self.log.append_as_leader(records, self.state.leader_epoch, origin)
            self.maybe_increment_high_watermark()
            return info

    def maybe_increment_high_watermark(self) -> bool:
        """HW = the lowest log end offset over the maximal ISR, the leader's own included, held
        while the ISR is below min.insync.replicas; whether it moved. A follower whose log end is
        not known yet holds it."""
        with self._lock:
            if not self.is_leader or self.under_min_isr:
                return False
            lowest = self.log.log_end_offset
            for replica in self.maximal_isr:
                if replica != self.node_id:
                    follower = self.followers.get(replica)
                    lowest = min(lowest, follower.log_end_offset if follower is not None else -1)
            if lowest <= self.log.high_watermark:
                return False
            self.log.update_high_watermark(lowest)
            return True

    def required_offset_reached(self, required_offset: int) -> tuple[bool, int]:
        """acks=all (Kafka's checkEnoughReplicasReachOffset): whether the high watermark covers
        everything below ``required_offset``, and the error to answer then (the ISR shrank below
        min.insync.replicas after the append: NOT_ENOUGH_REPLICAS_AFTER_APPEND)."""
        if self.log.high_watermark < required_offset:
            return False, E.NONE
        return True, E.NOT_ENOUGH_REPLICAS_AFTER_APPEND if self.under_min_isr else E.NONE

    # --- followers, seen from the leader ------------------------------------------------------

    def followers_yet_to_fetch(self) -> list[int]:
        """The followers that have not fetched this partition since this leadership began."""
        return [r for r, f in list(self.followers.items()) if f.log_end_offset < 0]

    def update_follower_fetch_state(self, replica_id: int, fetch_offset: int) -> bool:
        """A follower's fetch from ``fetch_offset`` (its log end); whether the high watermark
        moved. May propose the follower back into the ISR."""
        with self._lock:
            follower = self.followers.get(replica_id)
            if not self.is_leader or follower is None:
                return False
            follower.update(fetch_offset, self._now_ms(), self.log.log_end_offset)
            self.maybe_expand_isr(replica_id)
            return self.maybe_increment_high_watermark()

    def maybe_expand_isr(self, replica_id: int) -> None:
        """Propose a follower back into the ISR once its log end reached the high watermark and
        the start of this leader's epoch (Partition.maybeExpandIsr)."""
        with self._lock:
            if self.pending_isr is not None or replica_id in self.state.isr:
                return
            follower = self.followers.get(replica_id)
            if follower is None:
                return
            end = follower.log_end_offset
            epoch_start = self.log.leader_epoch_cache.start_offset_of(self.state.leader_epoch)
            if end >= self.log.high_watermark and (epoch_start is None or end >= epoch_start):
                self._propose(tuple(self.state.isr) + (replica_id,))

    def out_of_sync_replicas(self, now_ms: int | None = None) -> tuple[int, ...]:
        """ISR followers not caught up to the log end for replica.lag.time.max.ms."""
        now = self._now_ms() if now_ms is None else now_ms
        with self._lock:
            return tuple(r for r in self.state.isr if r != self.node_id and r in self.followers
                         and now - self.followers[r].last_caught_up_ms > self.replica_lag_time_max_ms)

    def maybe_shrink_isr(self, now_ms: int | None = None) -> bool:
        """Propose the ISR without its out-of-sync followers; whether anything was proposed."""
        with self._lock:
            if not self.is_leader or self.pending_isr is not None:
                return False
            out = self.out_of_sync_replicas(now_ms)
            if not out:
                return False
            self._propose(tuple(r for r in self.state.isr if r not in out))
            return True

    def _propose(self, new_isr: tuple[int, ...]) -> None:
        if self.alter_isr is None:
            return
        self.pending_isr = new_isr
        self.alter_isr(self, new_isr)

    def on_alter_partition_answer(self, error_code: int, leader_epoch: int, isr: tuple[int, ...],
                                  partition_epoch: int) -> bool:
        """The controller's answer to the pending proposal; whether the high watermark moved.
        An error clears the proposal (a later fetch or expiration check proposes again)."""
        with self._lock:
            if self.pending_isr is None:
                return False
            self.pending_isr = None
            listener = self.isr_changes
            if error_code != E.NONE and listener is not None:
                listener.mark_failed()
            if error_code != E.NONE or leader_epoch != self.state.leader_epoch or not self.is_leader:
                return False
            before = set(self.state.isr)
            self.state = self.state._replace(isr=isr, partition_epoch=partition_epoch)
            if listener is not None:  # as Kafka marks them: once the controller committed the change
                if set(isr) - before:
                    listener.mark_expand()
                elif before - set(isr):
                    listener.mark_shrink()
            return self.maybe_increment_high_watermark()

    # --- follower -----------------------------------------------------------------------------

    def append_as_follower(self, records: bytes | bytearray | memoryview, leader_high_watermark: int,
                           leader_log_start_offset: int) -> LogAppendInfo | None:
        """Append the leader's batches as they are (ReplicaFetcherThread.processPartitionData);
        the follower's high watermark is the leader's capped by its own log end."""
        with self._lock:
            if self.is_leader:
                raise not_leader(self.topic, self.index, self.node_id)
            info = self.log.append_as_follower(records) if len(records) else None
            log = self.log
            log.update_high_watermark(min(leader_high_watermark, log.log_end_offset))
            if log.log_start_offset < leader_log_start_offset <= log.high_watermark:
                log.maybe_increment_log_start_offset(leader_log_start_offset)
            return info

    def truncate_to(self, offset: int) -> None:
        """Cut the log at ``offset`` (a follower's truncation), under the lock a move's swap takes."""
        with self._lock:
            self.log.truncate_to(offset)

    def truncate_fully_and_start_at(self, offset: int) -> None:
        with self._lock:
            self.log.truncate_fully_and_start_at(offset)

    # --- read ---------------------------------------------------------------------------------

    def read(self, fetch_offset: int, max_bytes: int, isolation: FetchIsolation,
             min_one_message: bool, current_leader_epoch: int = NO_LEADER_EPOCH) -> ReadResult:
        """Whole batches from ``fetch_offset`` (Kafka's readRecords); OffsetOutOfRangeError outside
        the log, leader errors as ``check_leader``."""
        self.check_leader(current_leader_epoch)
        log = self.log
        records = log.read(fetch_offset, max_bytes, isolation, min_one_message)
        # Read after the records: offsets that moved meanwhile still cover them.
        return ReadResult(records, log.high_watermark, log.last_stable_offset, log.log_start_offset,
                          log.log_end_offset)

    def diverging_epoch(self, last_fetched_epoch: int, fetch_offset: int) -> tuple[int, int] | None:
        """For a fetch that names the epoch of its last batch (v12+): where the fetcher's log
        leaves this one, as (epoch, end offset), or None when it agrees (Kafka's
        Partition.fetchRecords: the end offset of that epoch here is below the fetch offset, or
        the largest epoch here up to it is another)."""
        found = self.log.end_offset_for_epoch(last_fetched_epoch)
        if found is None:
            return None
        end_offset, epoch = found
        if epoch != last_fetched_epoch or end_offset < fetch_offset:
            return epoch, end_offset
        return None

    def __repr__(self) -> str:
        return (f"Partition({self.topic}-{self.index}, leader={self.state.leader}, "
                f"epoch={self.state.leader_epoch}, isr={list(self.state.isr)})")
