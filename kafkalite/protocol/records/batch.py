"""Kafka's RecordBatch v2 header (magic 2): layout, parsing, validation and in-place stamping.

Layout (big-endian, 61 bytes, then the records)::

    baseOffset i64 | batchLength i32 | partitionLeaderEpoch i32 | magic i8 | crc u32 |
    attributes i16 | lastOffsetDelta i32 | baseTimestamp i64 | maxTimestamp i64 |
    producerId i64 | producerEpoch i16 | baseSequence i32 | recordsCount i32 | records...

``batchLength`` counts the bytes after itself, so a batch takes ``batchLength + 12`` bytes. The
CRC-32C covers attributes to the end of the batch: baseOffset and partitionLeaderEpoch lie outside
it, which is why a broker can stamp them in place without recomputing it. Nothing here copies the
batch or decompresses its records (records.py does that when asked).
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Iterator
from typing import NamedTuple

from crc32c import crc32c

from ..primitives import INT16, INT32, INT64
from .errors import CorruptRecordError, UnsupportedCompressionError

Buffer = bytes | bytearray | memoryview

MAGIC = 2
BATCH_HEADER_SIZE = 61
LOG_OVERHEAD = 12  # baseOffset + batchLength: the bytes batchLength does not count

BASE_OFFSET_OFFSET = 0
BATCH_LENGTH_OFFSET = 8
PARTITION_LEADER_EPOCH_OFFSET = 12
MAGIC_OFFSET = 16
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21  # the CRC covers from here to the end of the batch
LAST_OFFSET_DELTA_OFFSET = 23
BASE_TIMESTAMP_OFFSET = 27
MAX_TIMESTAMP_OFFSET = 35
PRODUCER_ID_OFFSET = 43
PRODUCER_EPOCH_OFFSET = 51
BASE_SEQUENCE_OFFSET = 53
RECORDS_COUNT_OFFSET = 57
RECORDS_OFFSET = 61

# The smallest batchLength: a header with no records.
MIN_BATCH_LENGTH = BATCH_HEADER_SIZE - LOG_OVERHEAD

# The smallest record: length, attributes, timestampDelta, offsetDelta, key length, value length
# and header count, one byte each. Bounds the count an uncompressed batch can claim.
MIN_RECORD_SIZE = 7

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1
NO_TIMESTAMP = -1

_HEADER = struct.Struct(">qiibIhiqqqhii")
assert _HEADER.size == BATCH_HEADER_SIZE
_UINT32 = struct.Struct(">I")

# attributes bits
COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_BIT = 0x08
TRANSACTIONAL_BIT = 0x10
CONTROL_BIT = 0x20
DELETE_HORIZON_BIT = 0x40


class Compression(enum.IntEnum):
    """The codec ids of attributes bits 0-2 (Kafka's CompressionType)."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


class TimestampType(enum.IntEnum):
    """Attributes bit 3 (Kafka's TimestampType ids)."""

    CREATE_TIME = 0
    LOG_APPEND_TIME = 1


class BatchHeader(NamedTuple):
    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def size(self) -> int:
        """Bytes the whole batch takes, header included."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def compression(self) -> Compression:
        """The codec; UnsupportedCompressionError (offset within the batch) for ids 5-7."""
        codec = self.attributes & COMPRESSION_MASK
        if codec > Compression.ZSTD:
            raise UnsupportedCompressionError(
                f"unknown compression codec id {codec}", ATTRIBUTES_OFFSET
            )
        return Compression(codec)

    @property
    def timestamp_type(self) -> TimestampType:
        if self.attributes & TIMESTAMP_TYPE_BIT:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_BIT)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_BIT)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & DELETE_HORIZON_BIT)


def read_header(buf: Buffer, pos: int = 0) -> BatchHeader:
    """The header of the batch at ``pos``, read without copying; nothing is checked but its size."""
    if pos < 0 or len(buf) - pos < BATCH_HEADER_SIZE:
        raise CorruptRecordError(
            f"truncated batch header: {max(len(buf) - pos, 0)} of {BATCH_HEADER_SIZE} bytes",
            pos,
        )
    return BatchHeader._make(_HEADER.unpack_from(buf, pos))


def compute_crc(buf: Buffer, pos: int, batch_length: int) -> int:
    """CRC-32C of the batch at ``pos`` from its attributes to its end."""
    end = pos + batch_length + LOG_OVERHEAD
    with memoryview(buf) as view:
        return crc32c(view[pos + ATTRIBUTES_OFFSET : end])


def check_crc(buf: Buffer, pos: int, header: BatchHeader) -> bool:
    """Whether the batch's stored CRC matches its bytes (the buffer must hold the whole batch)."""
    return compute_crc(buf, pos, header.batch_length) == header.crc


def validate_batch(buf: Buffer, pos: int = 0, exact_count: bool = True) -> BatchHeader:
    """Kafka's checks of one batch at ``pos``, without decompressing; its header if it passes.

    Raises CorruptRecordError for: a short buffer, batchLength below the header's or past the
    buffer, magic other than 2, an unknown codec, a CRC mismatch, a negative records count or one
    that disagrees with lastOffsetDelta (Kafka's LogValidator: count == lastOffsetDelta + 1, for a
    producer's batch; with ``exact_count`` False, as for a batch already in a log that the cleaner
    may have thinned, at most lastOffsetDelta + 1), and an uncompressed batch claiming more
    records than its bytes can hold.
    """
    if pos < 0 or len(buf) - pos < LOG_OVERHEAD:
        raise CorruptRecordError("truncated batch: no batch length", pos)
    (batch_length,) = INT32.unpack_from(buf, pos + BATCH_LENGTH_OFFSET)
    if batch_length < MIN_BATCH_LENGTH:
        raise CorruptRecordError(
            f"batch length {batch_length} below the minimum {MIN_BATCH_LENGTH}",
            pos + BATCH_LENGTH_OFFSET,
        )
    available = len(buf) - pos - LOG_OVERHEAD
    if batch_length > available:
        raise CorruptRecordError(
            f"batch length {batch_length} past the end of the buffer ({available} bytes left)",
            pos + BATCH_LENGTH_OFFSET,
        )
    header = read_header(buf, pos)
    if header.magic != MAGIC:
        raise CorruptRecordError(
            f"magic {header.magic}, only {MAGIC} is supported", pos + MAGIC_OFFSET
        )
    actual = compute_crc(buf, pos, batch_length)
    if actual != header.crc:
        raise CorruptRecordError(
            f"CRC mismatch: stored {header.crc:#010x}, computed {actual:#010x}",
            pos + CRC_OFFSET,
        )
    try:
        compression = header.compression
    except UnsupportedCompressionError as e:
        raise UnsupportedCompressionError(e.reason, pos + ATTRIBUTES_OFFSET) from None
    count = header.records_count
    if count < 0:
        raise CorruptRecordError(f"negative records count {count}", pos + RECORDS_COUNT_OFFSET)
    if (header.last_offset_delta != count - 1 or count == 0) if exact_count else (
            count > header.last_offset_delta + 1):
        raise CorruptRecordError(
            f"records count {count} does not match last offset delta {header.last_offset_delta}",
            pos + RECORDS_COUNT_OFFSET,
        )
    if compression is Compression.NONE:
        room = batch_length - MIN_BATCH_LENGTH
        if count > room // MIN_RECORD_SIZE:
            raise CorruptRecordError(
                f"records count {count} cannot fit in {room} bytes of records",
                pos + RECORDS_COUNT_OFFSET,
            )
    return header


def iter_batches(buf: Buffer, pos: int = 0) -> Iterator[tuple[int, BatchHeader]]:
    """``(position, header)`` of each whole batch from ``pos`` on, stopping at a partial tail.

    Only the framing is checked (a batchLength too small to hold a header raises
    CorruptRecordError, since nothing after it can be found); validate each batch separately.
    """
    end = len(buf)
    while end - pos >= LOG_OVERHEAD:
        (batch_length,) = INT32.unpack_from(buf, pos + BATCH_LENGTH_OFFSET)
        if batch_length < MIN_BATCH_LENGTH:
            raise CorruptRecordError(
                f"batch length {batch_length} below the minimum {MIN_BATCH_LENGTH}",
                pos + BATCH_LENGTH_OFFSET,
            )
        if batch_length > end - pos - LOG_OVERHEAD:
            return
        yield pos, BatchHeader._make(_HEADER.unpack_from(buf, pos))
        pos += batch_length + LOG_OVERHEAD


def stamp(
    buf: bytearray | memoryview, pos: int, base_offset: int, partition_leader_epoch: int
) -> None:
    """Write baseOffset and partitionLeaderEpoch in place; both lie outside the CRC."""
    INT64.pack_into(buf, pos + BASE_OFFSET_OFFSET, base_offset)
    INT32.pack_into(buf, pos + PARTITION_LEADER_EPOCH_OFFSET, partition_leader_epoch)


def set_max_timestamp(
    buf: bytearray | memoryview, pos: int, timestamp_type: TimestampType, max_timestamp: int
) -> None:
    """Set the timestamp type and maxTimestamp in place and recompute the CRC they are under
    (Kafka's DefaultRecordBatch.setMaxTimestamp, used for LogAppendTime topics)."""
    (attributes,) = INT16.unpack_from(buf, pos + ATTRIBUTES_OFFSET)
    if timestamp_type is TimestampType.LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_BIT
    else:
        attributes &= ~TIMESTAMP_TYPE_BIT
    INT16.pack_into(buf, pos + ATTRIBUTES_OFFSET, attributes)
    INT64.pack_into(buf, pos + MAX_TIMESTAMP_OFFSET, max_timestamp)
    (batch_length,) = INT32.unpack_from(buf, pos + BATCH_LENGTH_OFFSET)
    _UINT32.pack_into(buf, pos + CRC_OFFSET, compute_crc(buf, pos, batch_length))
