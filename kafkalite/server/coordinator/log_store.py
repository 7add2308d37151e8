"""A coordinator's internal topic (``__consumer_offsets``, ``__transaction_state``), as Kafka's
coordinators use theirs: records appended to a partition this broker leads, answered once the
high watermark covers them (acks=all), and the whole partition read back when its leadership
arrives here, in a background thread per load.

Appends go through the replica manager like any produce, as one uncompressed batch (transactional
when a producer id is given: TxnOffsetCommit's), and wait in the produce purgatory: what a client
was told is stored survives the leader.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import NamedTuple

from kafkalite.common.errors import ApiError
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.records import BatchHeader, Record, build_batch, iter_batches
from kafkalite.protocol.records.batch import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, NO_SEQUENCE
from kafkalite.protocol.records.records import decode_records
from kafkalite.storage.log import AppendOrigin, FetchIsolation, Log

from ..purgatory import DelayedOperation
from ..replication.replica_manager import ReplicaManager, partition_key

log = logging.getLogger("kafkalite.server.coordinator")

KeyValue = tuple[bytes, bytes | None]


class ProducerFields(NamedTuple):
    """The producer a transactional append is written for (TxnOffsetCommit)."""

    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH
    base_sequence: int = NO_SEQUENCE


def translate_append_error(code: int, too_large: int) -> int:
    """What a coordinator tells its client of a failed append (Kafka's GroupMetadataManager and
    TransactionStateManager alike): the partition cannot take it now -> COORDINATOR_NOT_AVAILABLE,
    its leadership left -> NOT_COORDINATOR, too large -> ``too_large`` (each coordinator its own)."""
    if code in (E.UNKNOWN_TOPIC_OR_PARTITION, E.NOT_ENOUGH_REPLICAS, E.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
                E.REQUEST_TIMED_OUT):
        return E.COORDINATOR_NOT_AVAILABLE
    if code in (E.NOT_LEADER_OR_FOLLOWER, E.KAFKA_STORAGE_ERROR):
        return E.NOT_COORDINATOR
    if code in (E.MESSAGE_TOO_LARGE, E.RECORD_LIST_TOO_LARGE, E.INVALID_FETCH_SIZE):
        return too_large
    return code


class CoordinatorLog:
    """Appends to the partitions of ``topic`` this broker leads, each answered with a Kafka error
    code once committed (or failed); ``timeout_ms`` bounds the wait for the followers."""

    def __init__(self, replica_manager: ReplicaManager, topic: str, timeout_ms: int) -> None:
        self.replica_manager = replica_manager
        self.topic = topic
        self.timeout_ms = timeout_ms

    def append(self, index: int, records: list[KeyValue], done: Callable[[int], None],
               producer: ProducerFields | None = None,
               placed: Callable[[int], None] | None = None) -> None:
        """Append ``records`` (key, value or None) to partition ``index``; ``placed(base offset)``
        once the leader has them (a transaction's offsets and a regular commit are ordered by it),
        ``done(error)`` once the high watermark covers them or they failed (the replica manager's
        error, untranslated: each coordinator translates for its clients). Appended as the
        coordinator: a transactional batch is checked for its epoch only, as Kafka's."""
        p = producer or ProducerFields()
        batch = build_batch([Record(i, 0, key, value) for i, (key, value) in enumerate(records)],
                            base_timestamp=int(time.time() * 1000), producer_id=p.producer_id,
                            producer_epoch=p.producer_epoch, base_sequence=p.base_sequence,
                            is_transactional=producer is not None)
        rm = self.replica_manager
        try:
            info, partition = rm.append_to_leader(self.topic, index, bytearray(batch), -1,
                                                  origin=AppendOrigin.COORDINATOR)
        except ApiError as e:
            done(e.code)
            return
        if placed is not None:
            placed(info.first_offset)
        required = info.last_offset + 1
        reached, error = partition.required_offset_reached(required)
        if reached and partition.is_leader:
            # Committed by the append itself (an ISR of the leader alone): answered at once, as
            # the purgatory's first try would, without a waiting operation and its locks.
            done(error)
            return
        rm.produce_purgatory.try_complete_else_watch(
            DelayedStore(self.timeout_ms, rm, self.topic, index, required, done),
            [partition_key(self.topic, index)])


class DelayedStore(DelayedOperation):
    """A coordinator's append waiting for the high watermark (a DelayedProduce of one batch)."""

    def __init__(self, timeout_ms: int, rm: ReplicaManager, topic: str, index: int, required: int,
                 done: Callable[[int], None]) -> None:
        super().__init__(timeout_ms)
        self.rm, self.topic, self.index, self.required, self.done = rm, topic, index, required, done
        self.error = E.REQUEST_TIMED_OUT

    def try_complete(self) -> bool:
        partition = self.rm.partitions.get((self.topic, self.index))
        if partition is None or not partition.is_leader:
            self.error = E.NOT_LEADER_OR_FOLLOWER
            return self.force_complete()
        reached, error = partition.required_offset_reached(self.required)
        if reached:
            self.error = error
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        self.done(self.error)

    def on_expiration(self) -> None:
        pass


class LoggedBatch(NamedTuple):
    """A batch of a coordinator's log as loading reads it: its header (producer, control flag)
    and its records' (key, value)."""

    header: BatchHeader
    records: list[KeyValue]


LOAD_BUFFER_BYTES = 1 << 20  # read per round when loading (the group coordinator's)


def read_batches(log_: Log, buffer_bytes: int = LOAD_BUFFER_BYTES) -> Iterator[LoggedBatch]:
    """Every batch of the log from its start to its end, in offset order, control batches too,
    read ``buffer_bytes`` at a time (a larger batch whole)."""
    offset = log_.log_start_offset
    end = log_.log_end_offset
    while offset < end:
        data = log_.read(offset, buffer_bytes, FetchIsolation.LOG_END).read()
        if not data:
            break
        for pos, header in iter_batches(data):
            offset = header.next_offset
            yield LoggedBatch(header, [(r.key, r.value) for r in decode_records(data, pos, header)
                                       if r.key is not None])


def read_records(log_: Log, buffer_bytes: int = LOAD_BUFFER_BYTES) -> Iterator[KeyValue]:
    """Every (key, value) of the log's data batches, in offset order (control batches skipped)."""
    for batch in read_batches(log_, buffer_bytes):
        if not batch.header.is_control:
            yield from batch.records


class PartitionLoader:
    """Follows the leadership of ``topic``'s partitions: one this broker now leads is announced
    to ``begin`` at once and its log handed to ``load`` in a background thread (``thread_name``),
    one it no longer leads goes to ``unload`` at once (Kafka's onElection / onResignation)."""

    def __init__(self, replica_manager: ReplicaManager, topic: str, thread_name: str,
                 begin: Callable[[int], None], load: Callable[[int, Log], None],
                 unload: Callable[[int], None]) -> None:
        self.replica_manager = replica_manager
        self.topic = topic
        self.thread_name = thread_name
        self._begin, self._load_fn, self._unload = begin, load, unload
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def on_leadership(self, topic: str, index: int, leads: bool) -> None:
        if topic != self.topic:
            return
        if not leads:
            self._unload(index)
            return
        self._begin(index)
        thread = threading.Thread(target=self._load, args=(index,), name=self.thread_name, daemon=True)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def _load(self, index: int) -> None:
        partition = self.replica_manager.partitions.get((self.topic, index))
        if partition is None or not partition.is_leader:
            self._unload(index)
            return
        try:
            self._load_fn(index, partition.log)
        except Exception:
            log.exception("Loading %s-%d failed", self.topic, index)
            self._unload(index)

    def shutdown(self, timeout: float = 5.0) -> None:
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout)
