"""Followers copy their leaders' logs: Kafka's ReplicaFetcherManager and ReplicaFetcherThread.

A broker runs ``num.replica.fetchers`` fetcher threads per source broker; a partition goes to
the thread ``hash(topic, partition) % num.replica.fetchers`` of its leader (Kafka's
getFetcherId). Each thread sends Fetch to its leader's inter-broker listener with this broker's
id as the replica id (so the leader reads up to its log end and learns this follower's log end
from the fetch offset), through the same blocking client and codec the controller uses, one
request in flight, and for each partition in the answer:

- appends the batches as they are (offsets and epochs the leader gave) and takes the leader's
  high watermark, capped by its own log end, and log start offset;
- truncates where the leader says the logs diverge (Fetch v12's ``diverging_epoch``, answered to
  the ``last_fetched_epoch`` each fetch names: KIP-595's truncation on fetch, used by Kafka since
  2.7 instead of a separate OffsetForLeaderEpoch round);
- on OFFSET_OUT_OF_RANGE asks the leader for its log end and start (ListOffsets as a replica) and
  truncates to the end, or starts over at the start;
- on a leadership error waits ``replica.fetch.backoff.ms`` for the controller's next word.

A partition throttled on the follower side (quota.py) that is not caught up is left out of a fetch
while the follower quota is exceeded (when no partition is left, the thread waits
``replica.fetch.backoff.ms``, as Kafka's does on an empty fetch); its fetched bytes are recorded.

A LeaderAndIsr that makes this broker a follower adds the partition at its log end
(``add_fetcher_for_partitions``); one that makes it leader, and StopReplica, remove it. A thread
that has no partition left stops; an answer for a partition whose fetch state changed meanwhile
(removed, or added again for another leader epoch) is dropped.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

from kafkalite.clients import BlockingClient
from kafkalite.common.errors import ApiError
from kafkalite.common.java import java_string_hash
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import fetch, list_offsets

from .partition import Partition
from .quota import ReplicationQuotaManager, is_throttled
from .settings import ReplicationSettings

log = logging.getLogger("kafkalite.server.replication.replica_fetcher")

FETCH_VERSION = 12  # the newest with topic names: last_fetched_epoch and diverging_epoch
LIST_OFFSETS_VERSION = 4  # with current_leader_epoch
EARLIEST, LATEST = -2, -1

TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class InitialFetchState:
    """Where a follower starts: its leader (id and inter-broker address) in which epoch, and the
    offset to fetch from (its log end)."""

    leader_id: int
    leader_address: tuple[str, int]
    leader_epoch: int
    fetch_offset: int


class PartitionFetchState:
    """One partition in a fetcher thread: the offset it fetches next, for which leader epoch, and
    until when it waits after an error. A new LeaderAndIsr replaces the object (so an answer to a
    fetch sent before is recognised as stale)."""

    __slots__ = ("delayed_until", "fetch_offset", "lag", "leader_epoch", "partition")

    def __init__(self, partition: Partition, leader_epoch: int, fetch_offset: int) -> None:
        self.partition = partition
        self.leader_epoch = leader_epoch
        self.fetch_offset = fetch_offset
        self.delayed_until = 0.0
        # The leader's high watermark minus the fetch offset after the last answer (None before
        # one): 0 is "in sync" for the throttle (Kafka's PartitionFetchState.isReplicaInSync).
        self.lag: int | None = None

    @property
    def in_sync(self) -> bool:
        return self.lag is not None and self.lag <= 0


def long_poll_ms(fetch_wait_max_ms: int, backoffs: Iterable[float]) -> int:
    """How long the leader may hold a fetch: replica.fetch.wait.max.ms, but not beyond the end of
    a partition's backoff (``backoffs``: seconds left of each), so that the partition joins the
    next fetch then rather than up to 500 ms later, when a first acks=all produce to it would be
    waiting. Kafka lets it wait."""
    return min([fetch_wait_max_ms, *(int(b * 1000) + 1 for b in backoffs)])


def fetcher_id(topic: str, index: int, num_fetchers: int) -> int:
    """Kafka's AbstractFetcherManager.getFetcherId: the same partition always to one thread."""
    return abs(31 * java_string_hash(topic) + index) % num_fetchers


class ReplicaFetcherThread(threading.Thread):
    def __init__(self, node_id: int, fetcher_id: int, leader_id: int, leader_address: tuple[str, int],
                 settings: ReplicationSettings, on_high_watermark: Callable[[Partition], None],
                 quota: ReplicationQuotaManager | None = None) -> None:
        super().__init__(name=f"ReplicaFetcherThread-{fetcher_id}-{leader_id}", daemon=True)
        self.node_id, self.leader_id, self.leader_address = node_id, leader_id, leader_address
        self.settings = settings
        self.quota = quota  # the follower side's replication throttle
        self.on_high_watermark = on_high_watermark
        self.client = BlockingClient(*leader_address, f"broker-{node_id}-fetcher-{fetcher_id}",
                                     settings.socket_timeout_ms / 1000,
                                     security=settings.inter_broker_security)
        self.partitions: dict[TopicPartition, PartitionFetchState] = {}
        self._lock = threading.Condition()
        self._running = True
        self._failing = False  # logged once per run of failed fetches
        self.fetches = 0  # answered fetch requests, for tests and metrics
        # Wraps the work on a partition's log files: an I/O error takes its log dir offline
        # (the ReplicaManager's storage_io); nothing by default.
        self.storage_io: Callable[[Partition, str], AbstractContextManager[None]] = \
            lambda partition, what: nullcontext()

    # --- called by the manager ----------------------------------------------------------------

    def add_partitions(self, states: dict[TopicPartition, PartitionFetchState]) -> None:
        with self._lock:
            self.partitions.update(states)
            self._lock.notify_all()

    def remove_partitions(self, keys: Iterable[TopicPartition]) -> None:
        with self._lock:
            for key in keys:
                self.partitions.pop(key, None)

    @property
    def partition_count(self) -> int:
        return len(self.partitions)

    def shutdown(self, timeout: float = 5.0) -> None:
        with self._lock:
            self._running = False
            self._lock.notify_all()
        self.client.close()  # wakes a fetch blocked on the leader
        if self.is_alive() and threading.current_thread() is not self:
            self.join(timeout)

    # --- the loop -------------------------------------------------------------------------------

    def run(self) -> None:
        try:
            while True:
                with self._lock:
                    if not self._running:
                        return
                    now = time.monotonic()
                    ready: dict[TopicPartition, PartitionFetchState] = {}
                    waits = []  # seconds left of each backed-off partition
                    for k, s in self.partitions.items():
                        if s.delayed_until <= now:
                            ready[k] = s
                        else:
                            waits.append(s.delayed_until - now)
                    if ready and self.quota is not None and not self.quota.unlimited:
                        ready = {k: s for k, s in ready.items() if not self._throttled(k, s)}
                    if not ready:
                        self._lock.wait(min(waits, default=self.settings.fetch_backoff_ms / 1000))
                        continue
                self._fetch(ready, long_poll_ms(self.settings.fetch_wait_max_ms, waits))
        except Exception:
            log.exception("%s stopped by an unexpected error", self.name)
        finally:
            self.client.close()

    def _throttled(self, key: TopicPartition, state: PartitionFetchState) -> bool:
        """Kafka's shouldFollowerThrottle, from the topic's current follower throttled replicas."""
        assert self.quota is not None
        throttled = state.partition.log.config.follower_replication_throttled_replicas
        return self.quota.should_throttle(throttled, key[1], self.node_id, state.in_sync)

    def _fetch(self, ready: dict[TopicPartition, PartitionFetchState], wait_ms: int) -> None:
        request = self._request(ready, wait_ms)
        try:
            response = self.client.send_and_receive(ApiKey.FETCH, FETCH_VERSION, request)
        except Exception as e:
            if self._running and not self._failing:
                log.warning("%s: fetch from broker %d at %s:%d failed (%s); retrying every %d ms",
                            self.name, self.leader_id, *self.leader_address, e,
                            self.settings.fetch_backoff_ms)
            self._failing = True
            self._delay(ready)
            return
        if self._failing:
            log.info("%s: fetching from broker %d again", self.name, self.leader_id)
            self._failing = False
        self.fetches += 1
        if response.error_code != E.NONE:
            log.warning("%s: fetch refused by broker %d: %s", self.name, self.leader_id,
                        E.for_code(response.error_code).name)
            self._delay(ready)
            return
        for topic in response.responses:
            for data in topic.partitions:
                key = (topic.topic, data.partition_index)
                sent = ready.get(key)
                with self._lock:
                    if sent is None or self.partitions.get(key) is not sent:
                        continue  # removed or replaced while the fetch was out
                    try:
                        with self.storage_io(sent.partition, "fetching into"):
                            self._process(key, sent, data)
                    except Exception as e:
                        log.error("%s: %s-%d: %s; retrying in %d ms", self.name, key[0], key[1], e,
                                  self.settings.fetch_backoff_ms)
                        self._delay({key: sent})

    def _request(self, ready: dict[TopicPartition, PartitionFetchState], wait_ms: int) -> Any:
        R = fetch.REQUEST
        topics: dict[str, list[Any]] = {}
        for (topic, index), s in ready.items():
            log_ = s.partition.log
            topics.setdefault(topic, []).append(R["topics"]["partitions"](
                partition=index, current_leader_epoch=s.leader_epoch, fetch_offset=s.fetch_offset,
                last_fetched_epoch=log_.latest_epoch if log_.latest_epoch is not None else -1,
                log_start_offset=log_.log_start_offset, partition_max_bytes=self.settings.fetch_max_bytes))
        return R(replica_id=self.node_id, max_wait_ms=wait_ms,
                 min_bytes=self.settings.fetch_min_bytes, max_bytes=self.settings.fetch_response_max_bytes,
                 isolation_level=0, session_id=0, session_epoch=-1,
                 topics=[R["topics"](topic=t, partitions=ps) for t, ps in topics.items()],
                 forgotten_topics_data=[], rack_id="")

    def _delay(self, states: dict[TopicPartition, PartitionFetchState]) -> None:
        until = time.monotonic() + self.settings.fetch_backoff_ms / 1000
        with self._lock:
            for key, s in states.items():
                if self.partitions.get(key) is s:
                    s.delayed_until = until

    # --- one partition's answer (with the lock) -------------------------------------------------

    def _process(self, key: TopicPartition, state: PartitionFetchState, data: Any) -> None:
        partition = state.partition
        code = data.error_code
        if code == E.NONE:
            diverging = data.diverging_epoch
            if diverging is not None and (diverging.epoch >= 0 or diverging.end_offset >= 0):
                self._truncate_on_divergence(state, diverging.epoch, diverging.end_offset)
                return
            records = data.records if data.records is not None else b""
            partition.append_as_follower(records, data.high_watermark, data.log_start_offset)
            state.fetch_offset = partition.log.log_end_offset
            state.lag = max(0, data.high_watermark - state.fetch_offset)
            quota = self.quota
            if records and quota is not None and not quota.unlimited:
                throttled = partition.log.config.follower_replication_throttled_replicas
                if is_throttled(throttled, key[1], self.node_id):
                    quota.record(len(records))
            self.on_high_watermark(partition)
        elif code == E.OFFSET_OUT_OF_RANGE:
            self._handle_out_of_range(key, state)
        elif code in (E.NOT_LEADER_OR_FOLLOWER, E.FENCED_LEADER_EPOCH, E.UNKNOWN_LEADER_EPOCH,
                      E.UNKNOWN_TOPIC_OR_PARTITION, E.UNKNOWN_TOPIC_ID, E.REPLICA_NOT_AVAILABLE):
            # The leader moved on (or has not heard of its epoch yet): wait for the controller.
            log.debug("%s: %s-%d: %s from broker %d", self.name, *key, E.for_code(code).name, self.leader_id)
            self._delay({key: state})
        else:
            log.warning("%s: %s-%d: %s from broker %d", self.name, *key, E.for_code(code).name,
                        self.leader_id)
            self._delay({key: state})

    def _truncate_on_divergence(self, state: PartitionFetchState, leader_epoch: int, leader_end: int) -> None:
        """Kafka's AbstractFetcherThread.getOffsetTruncationState: cut the log where it stops
        agreeing with the leader's; a fetch after it checks the next epoch down if needed."""
        log_ = state.partition.log
        if leader_end < 0:
            target = log_.high_watermark
        else:
            mine = log_.end_offset_for_epoch(leader_epoch)
            target = min(leader_end, log_.log_end_offset) if mine is None else min(leader_end, mine[0])
        log.info("%s: %s-%d diverges from the leader's log (its epoch %d ends at %d): truncating to %d",
                 self.name, log_.topic, log_.partition, leader_epoch, leader_end, target)
        state.partition.truncate_to(target)
        state.fetch_offset = state.partition.log.log_end_offset

    def _handle_out_of_range(self, key: TopicPartition, state: PartitionFetchState) -> None:
        """Kafka's handleOutOfRangeError: behind the leader's start, start over at it; ahead of
        its end (an unclean leader), truncate to it."""
        log_ = state.partition.log
        leader_end = self._leader_offset(key, state, LATEST)
        if leader_end < log_.log_end_offset:
            log.warning("%s: %s-%d is ahead of the leader's log end %d: truncating to it", self.name,
                        *key, leader_end)
            state.partition.truncate_to(leader_end)
        else:
            leader_start = self._leader_offset(key, state, EARLIEST)
            if leader_start > log_.log_end_offset:
                log.info("%s: %s-%d is behind the leader's log start %d: starting over there", self.name,
                         *key, leader_start)
                state.partition.truncate_fully_and_start_at(leader_start)
        state.fetch_offset = state.partition.log.log_end_offset

    def _leader_offset(self, key: TopicPartition, state: PartitionFetchState, timestamp: int) -> int:
        R = list_offsets.REQUEST
        request = R(replica_id=self.node_id, isolation_level=0, topics=[R["topics"](
            name=key[0], partitions=[R["topics"]["partitions"](
                partition_index=key[1], current_leader_epoch=state.leader_epoch, timestamp=timestamp)])])
        response = self.client.send_and_receive(ApiKey.LIST_OFFSETS, LIST_OFFSETS_VERSION, request)
        answer = response.topics[0].partitions[0]
        if answer.error_code != E.NONE:
            raise ApiError(answer.error_code, f"ListOffsets to broker {self.leader_id}")
        return int(answer.offset)


class ReplicaFetcherManager:
    """The fetcher threads of a broker, by (leader, fetcher id) (Kafka's ReplicaFetcherManager)."""

    def __init__(self, node_id: int, settings: ReplicationSettings,
                 on_high_watermark: Callable[[Partition], None] = lambda p: None,
                 quota: ReplicationQuotaManager | None = None) -> None:
        self.node_id = node_id
        self.settings = settings
        self.on_high_watermark = on_high_watermark
        self.quota = quota
        self.storage_io: Callable[[Partition, str], AbstractContextManager[None]] = \
            lambda partition, what: nullcontext()
        self._threads: dict[tuple[int, int], ReplicaFetcherThread] = {}
        self._lock = threading.Lock()
        self._closed = False

    def add_fetcher_for_partitions(
            self, partitions: dict[TopicPartition, tuple[Partition, InitialFetchState]]) -> None:
        with self._lock:
            if self._closed:
                return
            self._remove_locked(partitions)
            for (topic, index), (partition, initial) in partitions.items():
                fid = fetcher_id(topic, index, self.settings.num_replica_fetchers)
                thread = self._threads.get((initial.leader_id, fid))
                if thread is not None and thread.leader_address != initial.leader_address:
                    thread.shutdown(0)  # the leader moved to another address: a new connection
                    thread = None
                if thread is None or not thread.is_alive():
                    thread = ReplicaFetcherThread(self.node_id, fid, initial.leader_id,
                                                  initial.leader_address, self.settings,
                                                  self.on_high_watermark, self.quota)
                    thread.storage_io = self.storage_io
                    self._threads[(initial.leader_id, fid)] = thread
                    thread.start()
                thread.add_partitions({(topic, index): PartitionFetchState(partition, initial.leader_epoch,
                                                                           initial.fetch_offset)})
                log.info("Broker %d follows %s-%d from broker %d (epoch %d) from offset %d", self.node_id,
                         topic, index, initial.leader_id, initial.leader_epoch, initial.fetch_offset)

    def remove_fetcher_for_partitions(self, keys: Iterable[TopicPartition]) -> None:
        with self._lock:
            self._remove_locked(keys)

    def _remove_locked(self, keys: Iterable[TopicPartition]) -> None:
        keys = list(keys)
        for key_, thread in list(self._threads.items()):
            thread.remove_partitions(keys)
            if thread.partition_count == 0:  # Kafka's shutdownIdleFetcherThreads
                thread.shutdown(0)
                del self._threads[key_]

    def threads(self) -> list[ReplicaFetcherThread]:
        with self._lock:
            return list(self._threads.values())

    def fetching(self) -> dict[TopicPartition, int]:
        """Every partition being fetched, with the leader it is fetched from."""
        with self._lock:
            return {key: t.leader_id for t in self._threads.values() for key in list(t.partitions)}

    def shutdown(self, timeout: float = 5.0) -> None:
        with self._lock:
            self._closed = True
            threads = list(self._threads.values())
            self._threads.clear()
        for t in threads:
            t.shutdown(0)
        deadline = time.monotonic() + timeout
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))


__all__ = ["InitialFetchState", "ReplicaFetcherManager", "ReplicaFetcherThread", "ReplicationSettings",
           "fetcher_id"]
