"""Produce: record batches appended to the partitions this broker leads (Kafka's
KafkaApis.handleProduceRequest and ReplicaManager.appendRecords).

Each partition's records are checked as Kafka's LogValidator checks them: exactly one RecordBatch
v2 (produce v3+), a right CRC-32C, lengths and counts that agree, records that frame (decompressed
for the check; each record's length, not its fields);
anything else is CORRUPT_MESSAGE (or INVALID_RECORD) for that partition and never reaches the log.
Versions 0-2 (message formats 0 and 1) are advertised, as Kafka 4.x does for old librdkafka
(KAFKA-18659), and not served: such a request closes the connection (server/apis.py). Version 13
names topics by id (KIP-516): an id this broker's metadata does not know is UNKNOWN_TOPIC_ID for
each of its partitions, as Kafka's KafkaApis answers.

acks: 0 has no response (a NoOp unmutes the connection; an error closes it, as Kafka does, so
the producer notices by the closed connection); 1 answers after the leader's append; -1 (all)
waits in the produce purgatory until the high watermark covers every appended batch, or
answers REQUEST_TIMED_OUT for what it does not cover after ``timeout_ms``.

Transactional batches (KIP-98) need the request's transactional id (else
TRANSACTIONAL_ID_AUTHORIZATION_FAILED, as Kafka answers without one); with a verifier
(``txn_verifier``: the transaction coordinator's AddPartitionsToTxnManager, KIP-890 part 1,
``transaction.partition.verification.enable``) their partitions are first checked to be in the
producer's ongoing transaction, and the append happens once it answered (from whichever thread
answers). The log refuses a stale epoch (INVALID_PRODUCER_EPOCH) or a non-transactional batch of
a producer with an open transaction (INVALID_TXN_STATE); clients may never write control batches.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Callable
from typing import Any, Protocol

from kafkalite.common.errors import ApiError
from kafkalite.network.request_channel import CloseConnectionResponse, NoOpResponse, Request, Response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import produce
from kafkalite.protocol.records import (
    LOG_OVERHEAD,
    MAGIC,
    BatchHeader,
    Compression,
    CorruptRecordError,
    DecompressedTooLarge,
    UnsupportedCompressionError,
    check_records,
    validate_batch,
)
from kafkalite.protocol.records.batch import (
    BATCH_LENGTH_OFFSET,
    COMPRESSION_MASK,
    MAGIC_OFFSET,
    RECORDS_COUNT_OFFSET,
    RECORDS_OFFSET,
    Buffer,
    read_header,
)
from kafkalite.storage.producer_state import NO_TXN_FIRST_OFFSET

from ..purgatory import DelayedOperation
from ..replication.replica_manager import ReplicaManager, partition_key
from ..responses import respond
from ..topic_metrics import BrokerTopicStats

log = logging.getLogger("kafkalite.server.handlers.produce")

SendResponse = Callable[[Response], None]
R = produce.RESPONSE
TopicResponse = R["responses"]
PartitionResponse = TopicResponse["partition_responses"]

TOPIC_IDS_VERSION = 13  # topics named by id (KIP-516)
# A compressed batch is decompressed whole to check its records' framing (Kafka streams it), so
# what it may decompress to is bounded: a few KiB of zstd can stand for gigabytes. Past the bound
# the answer is MESSAGE_TOO_LARGE, on which Kafka's producer splits the batch and retries.
MAX_DECOMPRESSED = 64 << 20
DECOMPRESSION_RATIO = 16  # a larger batch may decompress to this many times its size
MIN_RECORD_OVERHEAD = 14  # Kafka's LegacyRecord.RECORD_OVERHEAD_V0: a batch length below it is corrupt


def validate_records(records: Any) -> bytearray | memoryview:
    """The partition's records as a buffer the log may stamp in place, once checked: one
    whole, valid batch v2, not a control batch. Raises ApiError with
    Kafka's codes: INVALID_RECORD (not retried by producers) when there is no whole batch (null,
    empty, cut short), its magic is not 2, there is more than one, or its records count disagrees
    with lastOffsetDelta or its bytes, its baseOffset is not 0, it is a control batch, or it has a
    producer id without a sequence (ProduceRequest.validateRecords, LogValidator.validateBatch),
    or its records do not frame (recordsCount records whose lengths end exactly at the end, after
    decompression: a batch that cannot be split into its records would stop every consumer at
    it; Kafka's LogValidator also reads each record's fields, which in Python would cost several
    times the rest of the produce path); CORRUPT_MESSAGE for a bad CRC or a batch length below any header."""
    if not records or len(records) < LOG_OVERHEAD:
        raise ApiError(E.INVALID_RECORD,
                       "A produce request must have at least one record batch per partition.")
    (batch_length,) = struct.unpack_from(">i", records, BATCH_LENGTH_OFFSET)
    if batch_length >= MIN_RECORD_OVERHEAD:  # smaller is CORRUPT_MESSAGE in Kafka (validate_batch's)
        if batch_length > len(records) - LOG_OVERHEAD:
            raise ApiError(E.INVALID_RECORD, f"No whole record batch: its length {batch_length} is past "
                                             f"the {len(records) - LOG_OVERHEAD} bytes after it.")
        if records[MAGIC_OFFSET] != MAGIC:
            raise ApiError(E.INVALID_RECORD, f"Record batches must have magic {MAGIC}, not "
                                             f"{records[MAGIC_OFFSET]}.")
    try:
        header = validate_batch(records, 0)
    except UnsupportedCompressionError as e:
        raise ApiError(E.UNSUPPORTED_COMPRESSION_TYPE, str(e)) from None
    except CorruptRecordError as e:
        code = E.INVALID_RECORD if e.offset == RECORDS_COUNT_OFFSET else E.CORRUPT_MESSAGE
        raise ApiError(code, f"Invalid record batch: {e}") from None
    if header.size != len(records):
        # Kafka: "Produce requests with version 3 are only allowed to contain exactly one record batch"
        raise ApiError(E.INVALID_RECORD,
                       "A produce request must hold exactly one record batch per partition.")
    # Kafka's UnifiedLog.analyzeAndValidateRecords and LogValidator.validateBatch for a client's batch.
    if header.base_offset != 0:
        raise ApiError(E.INVALID_RECORD, f"The baseOffset of the record batch should be 0, not "
                                         f"{header.base_offset}.")
    if header.is_control:
        raise ApiError(E.INVALID_RECORD, "Clients are not allowed to write control records.")
    if header.producer_id >= 0 and header.base_sequence < 0:
        raise ApiError(E.INVALID_RECORD, f"Invalid sequence number {header.base_sequence} in a record "
                                         f"batch with producerId {header.producer_id}.")
    try:
        if header.attributes & COMPRESSION_MASK != Compression.NONE or not records_frame(
                records, header.records_count, RECORDS_OFFSET, header.size):
            check_records(records, 0, header, max(MAX_DECOMPRESSED, DECOMPRESSION_RATIO * len(records)))
    except DecompressedTooLarge as e:
        raise ApiError(E.MESSAGE_TOO_LARGE, f"The batch's records are too large to check: {e}") from None
    except CorruptRecordError as e:
        raise ApiError(E.INVALID_RECORD, f"Invalid records in the batch: {e}") from None
    # Decoded from a request frame (a bytearray), the records are a writable view into it: the
    # log stamps and writes them there. Read-only records (decoded from bytes) are copied once.
    if type(records) is memoryview and not records.readonly:
        return records
    return records if type(records) is bytearray else bytearray(records)


RUN_MIN = 8  # records the first check of a run covers; each next one twice as many
WALK_BETWEEN_RUNS = 64  # records walked one by one after a run broke


def records_frame(buf: Buffer, count: int, pos: int, end: int) -> bool:
    """True when the ``count`` uncompressed records from ``pos`` frame exactly up to ``end`` as
    protocol/records' ``check_records`` walks them: each one's length varint read where the one
    before ends, at least 1, within the records, and nothing left over. False says nothing more
    (the caller walks them for the error).

    The walk is a Python loop step per record, about 0.2 us: a millisecond and a half for the
    8,000 records of a 1 MB produce, most of such a produce's time on the broker. Records often
    come in runs of one size (fixed-size values: the offset and timestamp deltas change the size
    only at a few bounds, 64 and 8,192 records in); in a run the length prefixes are one
    record's bytes at every stride of its size, which a strided slice per prefix byte compares
    in C. After a record, runs of its size after it are checked, 8 records and then twice as
    many each time while they hold. Where a check fails after some held, the size changes within
    it (at such a bound): the run is halved until it holds or is gone, so the records up to the
    change cost a few comparisons, not a walk each; the record of the new size is walked and
    its runs checked. Where the first check fails, the next records are walked one by one for a
    while, so records of mixed sizes cost one failed comparison in 64. Prefixes of one or two
    bytes only (records up to 8,191 bytes): others are left to the walk."""
    left = count
    walk = 1  # records to walk before the next run check: 1 at first and after a run held
    with memoryview(buf) as view:
        try:
            while left > 0:
                walk = min(walk, left)
                for _ in range(walk):  # the walk's step
                    first = pos
                    z = buf[pos]
                    if z < 0x80:
                        pos += 1
                    else:
                        z2 = buf[pos + 1]
                        if z2 >= 0x80:
                            return False
                        z = (z & 0x7F) | (z2 << 7)
                        pos += 2
                    length = (z >> 1) ^ -(z & 1)
                    if length < 1 or pos + length > end:
                        return False
                    pos += length
                left -= walk
                stride = pos - first
                run = RUN_MIN
                walk = WALK_BETWEEN_RUNS
                held = False  # some run of this size held: a failed check is a size change
                while run:
                    stop = pos + run * stride
                    if (run > left or stop > end or view[pos:stop:stride] != bytes((buf[first],)) * run
                            or (stride - length == 2
                                and view[pos + 1:stop:stride] != bytes((buf[first + 1],)) * run)):
                        if not held:
                            break
                        run //= 2
                        continue
                    pos = stop
                    left -= run
                    run *= 2
                    walk = 1
                    held = True
        except IndexError:
            return False
    return pos == end


class TxnVerifier(Protocol):
    """What the produce path asks of the transaction coordinator's side (AddPartitionsToTxnManager)."""

    def verify(self, transactional_id: str, producer_id: int, producer_epoch: int,
               partitions: list[tuple[str, int]], done: Callable[[dict[tuple[str, int], int]], None],
               produce_version: int) -> None:
        """``done({partition: error})`` once known: the errors (Produce's codes for
        ``produce_version``) of the partitions not in the producer's ongoing transaction; from
        Produce v12 on, of the partitions that could not be added to it (KIP-890 part 2)."""


class _Entry:
    """One partition of a Produce request on its way: its result and its checked records."""

    __slots__ = ("header", "index", "records", "result", "topic")

    def __init__(self, topic: str, index: int, result: Any) -> None:
        self.topic, self.index, self.result = topic, index, result
        self.records: bytearray | memoryview | None = None  # None: refused already
        self.header: BatchHeader | None = None


class ProduceApis:
    def __init__(self, replica_manager: ReplicaManager, send_response: SendResponse,
                 topic_stats: BrokerTopicStats, txn_verifier: TxnVerifier | None = None,
                 verification_enabled: Callable[[], bool] = lambda: True) -> None:
        self.replica_manager = replica_manager
        self.send_response = send_response
        self.topic_stats = topic_stats
        # KIP-890's partition verification (None: none; the broker wires the coordinator's).
        self.txn_verifier = txn_verifier
        self.verification_enabled = verification_enabled  # transaction.partition.verification.enable

    def handle_produce(self, request: Request) -> Response | None:
        req, version = request.body, request.api_version
        acks = req.acks
        failure: tuple[int, str] | None = None
        if acks not in (0, 1, -1):
            failure = (E.INVALID_REQUIRED_ACKS, f"acks must be 0, 1 or -1, not {acks}.")
        topics = []
        names = []
        entries: list[_Entry] = []
        snap = self.replica_manager.metadata_cache.snapshot if version >= TOPIC_IDS_VERSION else None
        for t in req.topic_data:
            if snap is not None:
                info = snap.topic_by_id(t.topic_id)
                name = info.name if info is not None else None
            else:
                name = t.name
            names.append(name or "")
            results = []
            for p in t.partition_data:
                result = PartitionResponse(index=p.index, error_code=E.NONE, base_offset=-1,
                                           log_append_time_ms=-1, log_start_offset=-1, record_errors=[])
                results.append(result)
                entry = _Entry(name or "", p.index, result)
                entries.append(entry)
                try:
                    if name is None:
                        raise ApiError(E.UNKNOWN_TOPIC_ID, f"Unknown topic id {t.topic_id}.")
                    if failure is not None:
                        raise ApiError(*failure)
                    entry.records = validate_records(p.records)
                    entry.header = read_header(entry.records, 0)
                except ApiError as error:
                    _refuse(entry, error.code, error.message, request)
            if snap is not None:
                topics.append(TopicResponse(topic_id=t.topic_id, partition_responses=results))
            else:
                topics.append(TopicResponse(name=t.name, partition_responses=results))
        transactional = [e for e in entries if e.header is not None and e.header.is_transactional]
        if transactional and failure is None:
            if version >= 3 and req.transactional_id is None:
                # Kafka authorizes the transactional id first; without one the request is refused.
                for each in entries:
                    _refuse(each, E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                            "Transactional records need the producer's transactional id.", request)
                return self._append(request, entries, topics, names, failure)
            producers = {(t.header.producer_id, t.header.producer_epoch) for t in transactional if t.header}
            if len(producers) > 1:
                for each in transactional:
                    _refuse(each, E.INVALID_PRODUCER_ID_MAPPING,
                            "Transactional records contained more than one producer id.", request)
            elif self.txn_verifier is not None and self.verification_enabled():
                (producer_id, producer_epoch), = producers

                def verified(errors: dict[tuple[str, int], int]) -> None:
                    for t in transactional:
                        code = errors.get((t.topic, t.index), E.NONE)
                        if code != E.NONE:
                            _refuse(t, code, f"The transaction of producer {producer_id} could not be "
                                             f"verified to hold {t.topic}-{t.index}.", request)
                    response = self._append(request, entries, topics, names, failure)
                    if response is not None:
                        self.send_response(response)

                # As Kafka's log (hasOngoingTransaction): a partition where this producer's
                # transaction is open already needs no verification; only its first batch is asked.
                partitions = sorted({(t.topic, t.index) for t in transactional if not self._in_transaction(
                    t.topic, t.index, producer_id, producer_epoch)})
                if partitions:
                    self.txn_verifier.verify(req.transactional_id, producer_id, producer_epoch, partitions,
                                             verified, version)
                    return None
        return self._append(request, entries, topics, names, failure)

    @staticmethod
    def _produce_quota(request: Request) -> int:
        """producer_byte_rate on the request's size (Kafka's produce bandwidth quota): the
        throttle time in ms."""
        quotas = request.quotas
        if quotas is None or quotas.exempt(request) or not quotas.produce.enabled:
            return 0
        user, client_id = quotas.who(request)
        ms = quotas.produce.record(user, client_id, request.size)
        if ms > 0:
            quotas.produce.throttled(user, client_id, ms)
        return int(ms)

    def _in_transaction(self, topic: str, index: int, producer_id: int, producer_epoch: int) -> bool:
        partition = self.replica_manager.partitions.get((topic, index))
        if partition is None:
            return False
        entry = partition.log.producer_state.last_entry(producer_id)
        return (entry is not None and entry.producer_epoch == producer_epoch
                and entry.current_txn_first_offset != NO_TXN_FIRST_OFFSET)

    def _append(self, request: Request, entries: list[_Entry], topics: list[Any], names: list[str],
                failure: tuple[int, str] | None) -> Response | None:
        """The checked partitions appended, and the answer (None: it waits in the purgatory)."""
        req = request.body
        acks = req.acks
        rm = self.replica_manager
        waiting: list[tuple[Any, Any, int]] = []  # (topic, partition result, offset the HW must reach)
        errors = False
        for entry in entries:
            result = entry.result
            if entry.records is None:
                errors = True
                continue
            try:
                info, partition = rm.append_to_leader(entry.topic, entry.index, entry.records, acks)
            except ApiError as e:  # the log's refusals too (producer epoch, sequence, txn state)
                _refuse(entry, e.code, e.message, request)
                errors = True
                continue
            except ValueError as e:  # the log's own check of whole batches
                result.error_code, result.error_message = E.CORRUPT_MESSAGE, str(e)
                errors = True
                continue
            result.base_offset = info.first_offset
            result.log_start_offset = partition.log.log_start_offset
            if acks == -1:
                waiting.append((entry.topic, result, info.last_offset + 1))
        self.topic_stats.produced(request, req.topic_data, topics, served=failure is None, names=names)
        throttle_ms = self._produce_quota(request)
        if acks == 0:
            if errors:
                return CloseConnectionResponse(request)
            if throttle_ms > 0:  # no response to carry it: the connection is muted alone
                request.quotas.throttler.throttle(request, throttle_ms)
            return NoOpResponse(request)
        body = R(responses=topics, throttle_time_ms=throttle_ms)
        if not waiting:
            return respond(request, body)
        operation = DelayedProduce(req.timeout_ms, request, body, waiting, self)
        rm.produce_purgatory.try_complete_else_watch(
            operation, [partition_key(topic, result.index) for topic, result, _ in waiting])
        return None


def _refuse(entry: _Entry, code: int, message: str | None, request: Request) -> None:
    entry.records = None
    entry.result.error_code, entry.result.error_message = code, message
    log.debug("Produce to %s-%d from %s refused: %s", entry.topic, entry.index, request.connection_id,
              message)


class DelayedProduce(DelayedOperation):
    """An acks=all produce waiting for the high watermark of each partition it appended to
    (Kafka's DelayedProduce)."""

    def __init__(self, timeout_ms: int, request: Request, body: Any, waiting: list[tuple[str, Any, int]],
                 apis: ProduceApis) -> None:
        super().__init__(max(timeout_ms, 0))
        self.request, self.body, self.apis = request, body, apis
        self.waiting = waiting

    def _pending(self) -> list[tuple[str, Any, int]]:
        """The partitions still waiting; a partition whose leadership left is answered at once."""
        rm = self.apis.replica_manager
        left = []
        for topic, result, required in self.waiting:
            partition = rm.partitions.get((topic, result.index))
            if partition is None and (topic, result.index) in rm.offline_partitions:
                result.error_code = E.KAFKA_STORAGE_ERROR  # its log dir went offline meanwhile
                result.error_message = f"Partition {topic}-{result.index} is in an offline log directory"
            elif partition is None or not partition.is_leader:
                result.error_code = E.NOT_LEADER_OR_FOLLOWER
                result.error_message = f"Leader not local for partition {topic}-{result.index}"
            else:
                reached, error = partition.required_offset_reached(required)
                if not reached:
                    left.append((topic, result, required))
                elif error != E.NONE:
                    result.error_code = error
                    result.error_message = (f"The ISR of {topic}-{result.index} shrank below "
                                            f"min.insync.replicas after the append.")
        self.waiting = left
        return left

    def try_complete(self) -> bool:
        if self._pending():
            return False
        return self.force_complete()

    def on_complete(self) -> None:
        for _, result, _ in self._pending():
            result.error_code = E.REQUEST_TIMED_OUT
            result.error_message = "The high watermark did not reach the appended batch in time."
        self.apis.send_response(respond(self.request, self.body))

    def on_expiration(self) -> None:
        pass  # on_complete answered REQUEST_TIMED_OUT for what was still waiting
