"""The idempotent and transactional producers of one partition (Kafka's ProducerStateManager, with
ProducerAppendInfo, ProducerStateEntry and BatchMetadata): for each producer id, its epoch, the
sequence and offset ranges of its last five batches, and the first offset of its open transaction.
The leader checks every batch that carries a producer id against them: an epoch older than the
producer's is fenced, a first sequence that does not follow the last one is out of order, and a
retry of one of the five (a producer has at most five requests in flight) is a duplicate, answered
with the offsets the batch got the first time.

Transactions: a producer's first transactional batch opens a transaction at its first offset; a
COMMIT or ABORT marker (a control batch, protocol/records/control.py) closes it, giving a
CompletedTxn (first offset, marker offset, aborted or not). A marker of an older producer epoch is
fenced, one of an older coordinator epoch too (TransactionCoordinatorFencedError); a marker for a
producer with nothing open is fine (Kafka's appendEndTxnMarker) and completes nothing. The
manager keeps the open transactions by first offset, and the completed ones until the high
watermark passes their marker ("unreplicated"): the first of them all is the first unstable
offset, below which read_committed consumers may read (the log's last stable offset). An aborted
transaction's entry in the ``.txnindex`` carries ``last_stable_offset(completed)``: the first
offset of the earliest transaction of another producer still open, or the marker's offset + 1.
Who checks what follows the AppendOrigin: a client's batches are checked fully, a coordinator's
(transaction markers, transactional offset commits) for epochs only, a replica's not at all.

The state is a function of the log's batch headers (producer id, epoch, sequences, offsets, max
timestamp): replaying them without checks, as a follower and the loader do, gives it back. A
snapshot ``<offset>.snapshot`` holds it as of an offset, so that loading replays only the headers
after the latest one. The Log decides when to take, keep and load them.

A snapshot file is Kafka's (ProducerStateManager.writeSnapshot, version 1), big-endian::

    version int16 | crc uint32 (CRC-32C of everything after it) | count int32 | count entries of
    producer_id int64 | epoch int16 | last_sequence int32 | last_offset int64 |
    offset_delta int32 | timestamp int64 | coordinator_epoch int32 | current_txn_first_offset int64

``current_txn_first_offset`` is the producer's open transaction's first offset (-1: none), so the
transactions open at the snapshot's offset are open again after a restart or a truncation.
Kafka writes one entry per producer, for its last batch. kafkalite writes one per cached batch,
oldest first, the last one carrying the producer's last timestamp as Kafka's does: Kafka loading
such a file keeps each producer id's last entry (a map put), which is the entry it would have
written itself, while kafkalite gets the five batches back, so that retries are still recognised
after a restart.
"""

from __future__ import annotations

import bisect
import enum
import logging
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from crc32c import crc32c

from kafkalite.protocol.primitives import INT32
from kafkalite.protocol.records import BatchHeader
from kafkalite.protocol.records.batch import NO_PRODUCER_EPOCH, NO_SEQUENCE, NO_TIMESTAMP, Buffer
from kafkalite.protocol.records.control import ControlRecordType, EndTransactionMarker, read_end_txn_marker
from kafkalite.protocol.records.records import decode_records
from kafkalite.storage.config import LogSchedule
from kafkalite.storage.errors import (
    CorruptSnapshotError,
    InvalidProducerEpochError,
    InvalidTxnStateError,
    OutOfOrderSequenceError,
    TransactionCoordinatorFencedError,
)
from kafkalite.storage.files import (
    PRODUCER_SNAPSHOT_FILE_SUFFIX,
    offset_from_file_name,
    producer_snapshot_file,
)
from kafkalite.storage.volume import FILES, Volume

log = logging.getLogger("kafkalite.storage.producer_state")

NUM_BATCHES_TO_RETAIN = 5
# producer.id.expiration.ms's default, from its row (storage/config.py)
DEFAULT_PRODUCER_ID_EXPIRATION_MS = LogSchedule().producer_id_expiration_ms
INT32_MAX = 2**31 - 1

SNAPSHOT_VERSION = 1
_SNAPSHOT_VERSION_AND_CRC = struct.Struct(">hI")  # the CRC covers what follows: count and entries
_SNAPSHOT_HEADER = struct.Struct(">hIi")  # version, crc, entry count
_ENTRY = struct.Struct(">qhiqiqiq")
NO_COORDINATOR_EPOCH = -1
NO_TXN_FIRST_OFFSET = -1


class AppendOrigin(enum.Enum):
    """Who appends (Kafka's AppendOrigin), which decides what is checked: a client's batches fully
    (epochs, sequences, duplicates; no control batch), a coordinator's (transaction markers, its
    own transactional writes) for epochs only, a replica's (and the log's own replays) not at all."""

    CLIENT = "client"
    COORDINATOR = "coordinator"
    REPLICATION = "replication"


class CompletedTxn(NamedTuple):
    """A transaction a marker ended (Kafka's CompletedTxn): ``last_offset`` is the marker's."""

    producer_id: int
    first_offset: int
    last_offset: int
    is_aborted: bool


@dataclass(slots=True)
class TxnMetadata:
    """A transaction of the partition, open (``last_offset`` None) or ended by the marker at
    ``last_offset`` but not yet below the high watermark (Kafka's TxnMetadata)."""

    producer_id: int
    first_offset: int
    last_offset: int | None = None


def read_marker(data: Buffer, pos: int, header: BatchHeader) -> EndTransactionMarker | None:
    """The transaction marker of the control batch at ``pos`` in ``data``; None if the batch holds
    no record (the cleaner emptied it: Kafka ignores such a batch). ControlRecordError if it is
    another control record."""
    for record in decode_records(data, pos, header):
        return read_end_txn_marker(record)
    return None


def increment_sequence(sequence: int, increment: int) -> int:
    """``sequence + increment``, wrapping past the int32 maximum to 0 (Kafka's incrementSequence)."""
    if sequence > INT32_MAX - increment:
        return increment - (INT32_MAX - sequence) - 1
    return sequence + increment


def decrement_sequence(sequence: int, decrement: int) -> int:
    """``sequence - decrement``, wrapping below 0 to the int32 maximum (Kafka's decrementSequence)."""
    if sequence < decrement:
        return INT32_MAX - (decrement - sequence) + 1
    return sequence - decrement


def last_sequence(header: BatchHeader) -> int:
    """The sequence of the batch's last record (NO_SEQUENCE if the batch has none)."""
    if header.base_sequence == NO_SEQUENCE:
        return NO_SEQUENCE
    return increment_sequence(header.base_sequence, header.last_offset_delta)


def in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


class BatchMetadata(NamedTuple):
    """One appended batch of a producer (Kafka's BatchMetadata)."""

    last_seq: int
    last_offset: int
    offset_delta: int  # last offset - first offset, which is also last sequence - first sequence
    timestamp: int  # the batch's max timestamp

    @property
    def first_seq(self) -> int:
        return decrement_sequence(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


@dataclass(slots=True)
class ProducerStateEntry:
    """A producer's state in the partition (Kafka's ProducerStateEntry)."""

    producer_id: int
    producer_epoch: int = NO_PRODUCER_EPOCH
    batches: list[BatchMetadata] = field(default_factory=list)  # oldest first, at most five
    last_timestamp: int = NO_TIMESTAMP
    coordinator_epoch: int = NO_COORDINATOR_EPOCH  # only transaction markers set it
    current_txn_first_offset: int = NO_TXN_FIRST_OFFSET  # the open transaction's first offset

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    @property
    def last_data_offset(self) -> int:
        """The last offset of the producer's last data batch, -1 if none in this epoch."""
        return self.batches[-1].last_offset if self.batches else -1

    def copy(self) -> ProducerStateEntry:
        return ProducerStateEntry(
            self.producer_id,
            self.producer_epoch,
            list(self.batches),
            self.last_timestamp,
            self.coordinator_epoch,
            self.current_txn_first_offset,
        )

    def maybe_update_epoch(self, epoch: int) -> None:
        if epoch != self.producer_epoch:
            self.batches.clear()  # sequences start over in a new epoch
            self.producer_epoch = epoch

    def add_batch(self, epoch: int, batch: BatchMetadata) -> None:
        self.maybe_update_epoch(epoch)
        if len(self.batches) == NUM_BATCHES_TO_RETAIN:
            del self.batches[0]
        self.batches.append(batch)
        self.last_timestamp = batch.timestamp

    def find_duplicate(self, epoch: int, first_seq: int, last_seq: int) -> BatchMetadata | None:
        """The cached batch of this epoch with exactly this sequence range, if any."""
        if epoch != self.producer_epoch:
            return None
        for batch in self.batches:
            if batch.last_seq == last_seq and batch.first_seq == first_seq:
                return batch
        return None


class ProducerAppendInfo:
    """What one append does to the producers it carries (Kafka's ProducerAppendInfo, for all of
    them at once): each batch is checked against the state as the append's earlier batches left
    it; ProducerStateManager.update applies the result once the batches are written, and
    complete_txn each transaction a marker ended."""

    def __init__(self, manager: ProducerStateManager, origin: AppendOrigin) -> None:
        self._current = manager.producers
        self._partition = manager.topic_partition
        self.origin = origin
        self._validate = origin is not AppendOrigin.REPLICATION  # epochs and coordinator epochs
        self._check_sequences = origin is AppendOrigin.CLIENT
        self.entries: dict[int, ProducerStateEntry] = {}
        self.started: list[TxnMetadata] = []  # transactions this append opened

    def append(
        self, header: BatchHeader, first_offset: int, marker: EndTransactionMarker | None = None
    ) -> CompletedTxn | None:
        """Add a batch of ``header.producer_id`` whose offsets start at ``first_offset``; a control
        batch comes with its ``marker`` (None: an emptied control batch, ignored). The transaction
        a marker ends, if the producer had one open. When validating: InvalidProducerEpochError,
        OutOfOrderSequenceError, InvalidTxnStateError or TransactionCoordinatorFencedError, the
        state unchanged."""
        producer_id = header.producer_id
        if header.is_control and marker is None:
            return None
        current = self._current.get(producer_id)
        updated = self.entries.get(producer_id)
        if updated is None:
            updated = current.copy() if current is not None else ProducerStateEntry(producer_id)
        epoch = header.producer_epoch
        if self._validate:
            self._check_epoch(updated, epoch, first_offset)
        completed = None
        if marker is not None:
            completed = self._append_end_txn_marker(
                updated, marker, epoch, first_offset, header.max_timestamp
            )
        else:
            if self._check_sequences:
                self._check_sequence(current, updated, epoch, header.base_sequence, first_offset)
            open_txn = updated.current_txn_first_offset != NO_TXN_FIRST_OFFSET
            if open_txn and not header.is_transactional and self._validate:
                raise InvalidTxnStateError(
                    f"Expected transactional write from producer {producer_id} at offset {first_offset} "
                    f"in partition {self._partition}"
                )
            delta = header.last_offset_delta
            metadata = BatchMetadata(last_sequence(header), first_offset + delta, delta, header.max_timestamp)
            updated.add_batch(epoch, metadata)
            if not open_txn and header.is_transactional:
                updated.current_txn_first_offset = first_offset  # a transaction begins
                self.started.append(TxnMetadata(producer_id, first_offset))
        self.entries[producer_id] = updated
        return completed

    def _append_end_txn_marker(
        self,
        updated: ProducerStateEntry,
        marker: EndTransactionMarker,
        epoch: int,
        offset: int,
        timestamp: int,
    ) -> CompletedTxn | None:
        """Kafka's appendEndTxnMarker: only a transaction with data completes (a marker of nothing
        open leaves the last stable offset and the .txnindex alone)."""
        if self._validate and updated.coordinator_epoch > marker.coordinator_epoch:
            raise TransactionCoordinatorFencedError(
                f"Invalid coordinator epoch for producer {updated.producer_id} at offset {offset} in "
                f"partition {self._partition}: {marker.coordinator_epoch} (zombie), "
                f"{updated.coordinator_epoch} (current)"
            )
        completed = None
        if updated.current_txn_first_offset != NO_TXN_FIRST_OFFSET:
            completed = CompletedTxn(
                updated.producer_id,
                updated.current_txn_first_offset,
                offset,
                marker.type is ControlRecordType.ABORT,
            )
        updated.maybe_update_epoch(epoch)
        updated.current_txn_first_offset = NO_TXN_FIRST_OFFSET
        updated.coordinator_epoch = marker.coordinator_epoch
        updated.last_timestamp = timestamp
        return completed

    def _check_epoch(self, updated: ProducerStateEntry, epoch: int, offset: int) -> None:
        if epoch < updated.producer_epoch:
            raise InvalidProducerEpochError(
                f"Epoch of producer {updated.producer_id} at offset {offset} in {self._partition} is "
                f"{epoch}, which is smaller than the last seen epoch {updated.producer_epoch}"
            )

    def _check_sequence(
        self,
        current: ProducerStateEntry | None,
        updated: ProducerStateEntry,
        epoch: int,
        first_seq: int,
        offset: int,
    ) -> None:
        if epoch != updated.producer_epoch:
            if first_seq != 0 and updated.producer_epoch != NO_PRODUCER_EPOCH:
                raise OutOfOrderSequenceError(
                    f"Invalid sequence number for new epoch of producer {updated.producer_id} at offset "
                    f"{offset} in partition {self._partition}: {epoch} (request epoch), {first_seq} "
                    f"(seq. number), {updated.producer_epoch} (current producer epoch)"
                )
        # A producer without state (new, or forgotten after producer.id.expiration.ms) may start anywhere.
        elif not (
            current is None
            or current.producer_epoch == NO_PRODUCER_EPOCH
            or in_sequence(updated.last_seq, first_seq)
        ):
            raise OutOfOrderSequenceError(
                f"Out of order sequence number for producer {updated.producer_id} at offset {offset} in "
                f"partition {self._partition}: {first_seq} (incoming seq. number), {updated.last_seq} "
                "(current end sequence number)"
            )


class ProducerStateManager:
    """The producers of the partition whose log is in ``directory``, and its snapshot files. Not
    thread-safe: the Log calls it under its lock."""

    def __init__(
        self,
        directory: Path,
        topic_partition: str,
        producer_id_expiration_ms: int = DEFAULT_PRODUCER_ID_EXPIRATION_MS,
        volume: Volume = FILES,
    ) -> None:
        self.dir = directory
        self.volume = volume
        self.topic_partition = topic_partition
        self.producer_id_expiration_ms = producer_id_expiration_ms
        self.producers: dict[int, ProducerStateEntry] = {}
        # By first offset, in its order: open transactions, and those ended by a marker the high
        # watermark has not passed yet (Kafka's ongoingTxns and unreplicatedTxns).
        self._ongoing: dict[int, TxnMetadata] = {}
        self._unreplicated: dict[int, TxnMetadata] = {}
        self._snapshots = sorted(
            offset_from_file_name(p.name)
            for p in volume.children(directory)
            if p.name.endswith(PRODUCER_SNAPSHOT_FILE_SUFFIX)
            and p.name.removesuffix(PRODUCER_SNAPSHOT_FILE_SUFFIX).isdigit()
        )

    # -- state -----------------------------------------------------------------------------------

    def last_entry(self, producer_id: int) -> ProducerStateEntry | None:
        return self.producers.get(producer_id)

    def last_offsets(self) -> dict[int, int]:
        """Each producer's last batch's last offset (what the log cleaner must keep)."""
        return {pid: e.batches[-1].last_offset for pid, e in self.producers.items() if e.batches}

    def active_producers(self) -> dict[int, ProducerStateEntry]:
        """A copy of every producer's entry (DescribeProducers' view)."""
        return {pid: entry.copy() for pid, entry in self.producers.items()}

    def find_duplicate(self, header: BatchHeader) -> BatchMetadata | None:
        """The batch already appended that ``header``'s batch retries, if it is one of the five
        cached of its producer's current epoch."""
        entry = self.producers.get(header.producer_id)
        if entry is None or header.is_control:
            return None
        return entry.find_duplicate(header.producer_epoch, header.base_sequence, last_sequence(header))

    def prepare_update(self, origin: AppendOrigin) -> ProducerAppendInfo:
        return ProducerAppendInfo(self, origin)

    def update(self, info: ProducerAppendInfo) -> None:
        """Apply an append's producers and the transactions it opened (then ``complete_txn`` each
        transaction its markers ended)."""
        self.producers.update(info.entries)
        for txn in info.started:
            _insert_sorted(self._ongoing, txn.first_offset, txn)

    # -- transactions ------------------------------------------------------------------------------

    def complete_txn(self, completed: CompletedTxn) -> None:
        """Move an ended transaction from the open ones to the unreplicated ones."""
        txn = self._ongoing.pop(completed.first_offset, None)
        if txn is None:
            raise ValueError(
                f"Attempted to complete transaction {completed} on partition {self.topic_partition} "
                "which was not started"
            )
        txn.last_offset = completed.last_offset
        _insert_sorted(self._unreplicated, completed.first_offset, txn)

    def last_stable_offset(self, completed: CompletedTxn) -> int:
        """The last stable offset once ``completed`` ends: the first offset of the earliest open
        transaction of another producer, else the marker's offset + 1 (what its .txnindex entry
        records)."""
        for txn in self._ongoing.values():
            if txn.producer_id != completed.producer_id:
                return txn.first_offset
        return completed.last_offset + 1

    def on_high_watermark_updated(self, high_watermark: int) -> None:
        """Forget the ended transactions whose marker is below the high watermark."""
        self._remove_unreplicated(high_watermark)

    def on_log_start_offset_incremented(self, log_start_offset: int) -> None:
        self._remove_unreplicated(log_start_offset)

    def _remove_unreplicated(self, offset: int) -> None:
        if not self._unreplicated:  # the common case, at every high watermark move
            return
        for first, txn in list(self._unreplicated.items()):
            if txn.last_offset is not None and txn.last_offset < offset:
                del self._unreplicated[first]

    def first_unstable_offset(self) -> int | None:
        """The first offset of the earliest transaction open or ended above the high watermark."""
        firsts = [next(iter(d)) for d in (self._ongoing, self._unreplicated) if d]
        return min(firsts) if firsts else None

    def first_undecided_offset(self) -> int | None:
        """The first offset of the earliest open transaction."""
        return next(iter(self._ongoing), None)

    def ongoing_transactions(self) -> list[TxnMetadata]:
        """Copies of the open transactions, by first offset."""
        return [TxnMetadata(t.producer_id, t.first_offset, t.last_offset) for t in self._ongoing.values()]

    def unreplicated_transactions(self) -> list[TxnMetadata]:
        """Copies of the ended transactions the high watermark has not passed, by first offset."""
        txns = self._unreplicated.values()
        return [TxnMetadata(t.producer_id, t.first_offset, t.last_offset) for t in txns]

    def remove_expired_producers(self, now_ms: int) -> int:
        """Forget producers idle for producer.id.expiration.ms (by their last batch's timestamp)
        with no transaction open (Kafka's isProducerExpired); how many."""
        expired = [
            pid
            for pid, entry in self.producers.items()
            if entry.current_txn_first_offset == NO_TXN_FIRST_OFFSET
            and now_ms - entry.last_timestamp >= self.producer_id_expiration_ms
        ]
        for pid in expired:
            del self.producers[pid]
        if expired:
            log.info("Expired %d producer ids of %s", len(expired), self.topic_partition)
        return len(expired)

    # -- snapshots -------------------------------------------------------------------------------

    @property
    def snapshot_offsets(self) -> list[int]:
        return list(self._snapshots)

    def take_snapshot(self, offset: int) -> None:
        """Write the state as ``<offset>.snapshot``: the caller vouches that it is the state of the
        batches below ``offset``. A failure is logged only: a missing snapshot costs a longer
        replay at the next load, never a wrong state."""
        path = producer_snapshot_file(self.dir, offset)
        try:
            self.volume.write_atomically(path, encode_snapshot(self.producers.values()))
        except OSError as e:
            log.warning("Could not write the producer snapshot %s: %s", path, e)
            return
        index = bisect.bisect_left(self._snapshots, offset)
        if index == len(self._snapshots) or self._snapshots[index] != offset:
            self._snapshots.insert(index, offset)
        log.debug("Wrote a producer snapshot of %s at offset %d", self.topic_partition, offset)

    def load_latest_snapshot(self, at_most: int | None = None) -> int | None:
        """Replace the state by the latest snapshot's (at or below ``at_most`` if given) and return
        its offset; a snapshot that cannot be read is deleted (one warning) and the one before it
        tried. None, the state empty, when none is left. The transactions open at the snapshot's
        offset are open again; the ended ones are forgotten (replaying the batches after it
        completes them again)."""
        self._clear()
        while True:
            candidates = [s for s in self._snapshots if at_most is None or s <= at_most]
            if not candidates:
                return None
            offset = candidates[-1]
            path = producer_snapshot_file(self.dir, offset)
            try:
                self.producers.update(decode_snapshot(self.volume.read_bytes(path)))
                for entry in sorted(self.producers.values(), key=lambda e: e.current_txn_first_offset):
                    if entry.current_txn_first_offset != NO_TXN_FIRST_OFFSET:
                        first = entry.current_txn_first_offset
                        self._ongoing[first] = TxnMetadata(entry.producer_id, first)
                return offset
            except (CorruptSnapshotError, OSError) as e:
                log.warning("Ignoring the producer snapshot %s, which cannot be read: %s", path, e)
                self._delete_snapshot(offset)

    def delete_snapshots_below(self, offset: int) -> None:
        for snapshot in [s for s in self._snapshots if s < offset]:
            self._delete_snapshot(snapshot)

    def delete_snapshots_above(self, offset: int) -> None:
        for snapshot in [s for s in self._snapshots if s > offset]:
            self._delete_snapshot(snapshot)

    def remove_stray_snapshots(self, segment_base_offsets: Iterable[int]) -> None:
        """Keep the snapshots at segment base offsets and the latest one if it is past them all
        (a clean shutdown's); the others are superseded (Kafka's removeStraySnapshots)."""
        bases = set(segment_base_offsets)
        strays = [s for s in self._snapshots if s not in bases]
        if strays and bases and strays[-1] > max(bases):
            strays.pop()
        for snapshot in strays:
            self._delete_snapshot(snapshot)

    def truncate_fully(self) -> None:
        """Forget every producer and transaction and delete every snapshot (the log starts over
        empty)."""
        self._clear()
        for snapshot in list(self._snapshots):
            self._delete_snapshot(snapshot)

    def _clear(self) -> None:
        self.producers.clear()
        self._ongoing.clear()
        self._unreplicated.clear()

    def _delete_snapshot(self, offset: int) -> None:
        self._snapshots.remove(offset)
        self.volume.unlink(producer_snapshot_file(self.dir, offset))


def encode_snapshot(entries: Iterable[ProducerStateEntry]) -> bytes:
    """A snapshot file's bytes: one entry per cached batch, producers by id (see the module doc)."""
    body = bytearray(INT32.size)
    count = 0
    for entry in sorted(entries, key=lambda e: e.producer_id):
        # No batch yet in this epoch (a marker bumped it): Kafka's entry without a batch.
        batches = entry.batches or [BatchMetadata(NO_SEQUENCE, -1, 0, entry.last_timestamp)]
        for i, batch in enumerate(batches, start=1 - len(batches)):
            body += _ENTRY.pack(
                entry.producer_id,
                entry.producer_epoch,
                batch.last_seq,
                batch.last_offset,
                batch.offset_delta,
                entry.last_timestamp if i == 0 else batch.timestamp,
                entry.coordinator_epoch,
                entry.current_txn_first_offset,
            )
            count += 1
    INT32.pack_into(body, 0, count)
    return _SNAPSHOT_VERSION_AND_CRC.pack(SNAPSHOT_VERSION, crc32c(body)) + body


def decode_snapshot(data: bytes) -> dict[int, ProducerStateEntry]:
    """The producers of a snapshot file's bytes; CorruptSnapshotError if they cannot be right.
    Entries of one producer id and epoch add up (kafkalite's files); another epoch replaces them."""
    if len(data) < _SNAPSHOT_HEADER.size:
        raise CorruptSnapshotError(f"{len(data)} bytes, shorter than the {_SNAPSHOT_HEADER.size}-byte header")
    version, crc, count = _SNAPSHOT_HEADER.unpack_from(data)
    if version != SNAPSHOT_VERSION:
        raise CorruptSnapshotError(f"Snapshot contained an unknown file version {version}")
    computed = crc32c(memoryview(data)[_SNAPSHOT_VERSION_AND_CRC.size :])
    if crc != computed:
        raise CorruptSnapshotError(
            f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {crc}. Computed crc: {computed}"
        )
    if count < 0 or len(data) != _SNAPSHOT_HEADER.size + count * _ENTRY.size:
        raise CorruptSnapshotError(f"{count} entries do not fill {len(data)} bytes")
    producers: dict[int, ProducerStateEntry] = {}
    for values in _ENTRY.iter_unpack(memoryview(data)[_SNAPSHOT_HEADER.size :]):
        producer_id, epoch, last_seq, last_offset, offset_delta, timestamp, coordinator_epoch, txn_first = (
            values
        )
        entry = producers.get(producer_id)
        if entry is None or entry.producer_epoch != epoch:
            entry = producers[producer_id] = ProducerStateEntry(producer_id, epoch)
        if last_offset >= 0:
            entry.add_batch(epoch, BatchMetadata(last_seq, last_offset, offset_delta, timestamp))
        entry.last_timestamp = timestamp
        entry.coordinator_epoch = coordinator_epoch
        entry.current_txn_first_offset = txn_first
    return producers


def _insert_sorted(txns: dict[int, TxnMetadata], first_offset: int, txn: TxnMetadata) -> None:
    """Add to a dict kept in order of first offset (appends come in that order; a replay may not)."""
    out_of_order = bool(txns) and first_offset < next(reversed(txns))
    txns[first_offset] = txn
    if out_of_order:
        ordered = sorted(txns.items())
        txns.clear()
        txns.update(ordered)
