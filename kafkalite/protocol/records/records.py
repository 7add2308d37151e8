"""The records inside a RecordBatch v2: decoding them (decompressing when the batch is compressed)
and building whole batches.

A record, with zigzag varints (varlong for the timestamp delta)::

    length varint | attributes i8 | timestampDelta varlong | offsetDelta varint |
    keyLength varint (-1 null) | key | valueLength varint (-1 null) | value |
    headersCount varint | (headerKeyLength varint | headerKey utf-8 |
                           headerValueLength varint (-1 null) | headerValue)*
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import NamedTuple

from crc32c import crc32c

from ..errors import DecodeError, EncodeError
from ..primitives import read_uvarint, read_varint, read_varlong, write_varint, write_varlong
from .batch import (
    ATTRIBUTES_OFFSET,
    BATCH_HEADER_SIZE,
    CONTROL_BIT,
    LOG_OVERHEAD,
    MAGIC,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    RECORDS_OFFSET,
    TIMESTAMP_TYPE_BIT,
    TRANSACTIONAL_BIT,
    BatchHeader,
    Buffer,
    Compression,
    TimestampType,
    read_header,
)
from .compression import compress, decompress
from .errors import CompressionError, CorruptRecordError, UnsupportedCompressionError

Header = tuple[str, bytes | None]

_HEADER_AFTER_CRC = struct.Struct(">hiqqqhii")  # attributes .. recordsCount
_HEADER_BEFORE_CRC = struct.Struct(">qiib")  # baseOffset .. magic


class Record(NamedTuple):
    """One record of a batch; its offset and timestamp are the batch's bases plus the deltas."""

    offset_delta: int
    timestamp_delta: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()
    attributes: int = 0  # unused by Kafka so far; kept as read


def _records_section(buf: Buffer, pos: int, header: BatchHeader | None) -> tuple[BatchHeader, int, int]:
    """The batch's header (read unless given) and where its records section starts and ends."""
    if header is None:
        header = read_header(buf, pos)
    end = pos + header.size
    if end > len(buf):
        raise CorruptRecordError(f"batch of {header.size} bytes past the end of the buffer", pos)
    return header, pos + RECORDS_OFFSET, end


def decode_records(buf: Buffer, pos: int = 0, header: BatchHeader | None = None) -> list[Record]:
    """The records of the batch at ``pos`` (its header read again unless given), decompressed if
    the batch is compressed. The batch is expected to be validated already (validate_batch); this
    checks what only reading the records can: each record's length and fields, exactly
    recordsCount records, and no bytes left over. CorruptRecordError (CompressionError for bad
    compressed data) otherwise."""
    header, start, end = _records_section(buf, pos, header)
    try:
        codec = header.compression
    except UnsupportedCompressionError as e:
        raise UnsupportedCompressionError(e.reason, pos + ATTRIBUTES_OFFSET) from None
    with memoryview(buf) as view:
        section = view[start:end]
        if codec is Compression.NONE:
            # One copy of the section: cheap next to building a Python object per record.
            return _decode(bytes(section), header.records_count, start)
        try:
            plain = decompress(codec, section)
        except CompressionError as e:
            raise CompressionError(e.reason, start + e.offset) from None
        try:
            return _decode(plain, header.records_count, 0)
        except CorruptRecordError as e:
            # Offsets in decompressed bytes mean nothing in the batch: name both.
            raise CorruptRecordError(
                f"{e.reason} (at byte {e.offset} of the decompressed records)", start
            ) from None


def check_records(buf: Buffer, pos: int = 0, header: BatchHeader | None = None,
                  max_decompressed: int | None = None) -> None:
    """The framing of a produced batch's records: decompressed if compressed, exactly
    recordsCount records, each one's length within the records, nothing left over, so that a
    consumer can split them. Less than Kafka's LogValidator, which also reads each record's
    fields: that costs a Python loop over every field of every record, several times the rest of
    the produce path. CorruptRecordError (CompressionError for bad compressed data) otherwise;
    DecompressedTooLarge for compressed records of more than ``max_decompressed`` bytes (Kafka
    streams them record by record; this check holds them whole)."""
    header, start, end = _records_section(buf, pos, header)
    codec = header.compression
    if codec is Compression.NONE:
        _walk(buf, header.records_count, start, end)  # in place: no copy of the records
        return
    with memoryview(buf) as view:
        try:
            section = decompress(codec, view[start:end], max_decompressed)
        except CompressionError as e:
            raise type(e)(e.reason, start + e.offset) from None
    _walk(section, header.records_count, 0, len(section))


def _walk(buf: Buffer, count: int, pos: int, n: int) -> None:
    """Hop from record to record by their lengths: ``count`` of them must end exactly at the end.
    The common one- and two-byte length varints are read inline (this runs once per produced
    record: a function call per varint would double the produce path's cost)."""
    try:
        for _ in range(count):
            z = buf[pos]
            if z < 0x80:
                pos += 1
            else:
                z2 = buf[pos + 1]
                if z2 < 0x80:
                    z = (z & 0x7F) | (z2 << 7)
                    pos += 2
                else:
                    z, pos = read_uvarint(buf, pos)  # type: ignore[arg-type]  # any buffer indexes
            length = (z >> 1) ^ -(z & 1)
            if length < 1 or pos + length > n:
                raise CorruptRecordError(f"record length {length} past the records", pos)
            pos += length
    except IndexError:
        raise CorruptRecordError("records cut short", pos) from None
    except DecodeError as e:
        if isinstance(e, CorruptRecordError):
            raise
        raise CorruptRecordError(f"bad record: {e.reason}", e.offset) from None
    if pos != n:
        raise CorruptRecordError(f"{n - pos} bytes after the last of {count} records", pos)


def _decode(buf: bytes, count: int, base: int) -> list[Record]:
    """``count`` records filling ``buf`` exactly; error offsets are ``base`` + position."""
    records = []
    pos = 0
    n = len(buf)
    try:
        for _ in range(count):
            length, pos = read_varint(buf, pos)
            stop = pos + length
            if length < 0 or stop > n:
                raise CorruptRecordError(f"record length {length} past the records", base + pos)
            attributes = buf[pos] - 256 if buf[pos] > 127 else buf[pos]  # an int8
            timestamp_delta, pos = read_varlong(buf, pos + 1)
            offset_delta, pos = read_varint(buf, pos)
            key, pos = _read_nullable(buf, pos, stop, base, "key")
            value, pos = _read_nullable(buf, pos, stop, base, "value")
            header_count, pos = read_varint(buf, pos)
            if header_count < 0 or header_count > stop - pos:
                raise CorruptRecordError(f"bad header count {header_count}", base + pos)
            headers = []
            for _ in range(header_count):
                hkey, pos = _read_nullable(buf, pos, stop, base, "header key")
                if hkey is None:
                    raise CorruptRecordError("null header key", base + pos)
                hvalue, pos = _read_nullable(buf, pos, stop, base, "header value")
                headers.append((_utf8(hkey, base + pos), hvalue))
            if pos != stop:
                raise CorruptRecordError(
                    f"record of {length} bytes holds {length - (stop - pos)}", base + pos
                )
            records.append(
                Record(offset_delta, timestamp_delta, key, value, tuple(headers), attributes)
            )
    except CorruptRecordError:
        raise
    except DecodeError as e:  # a varint the primitives rejected
        raise CorruptRecordError(e.reason, base + e.offset) from None
    except IndexError:
        raise CorruptRecordError("truncated record", base + pos) from None
    if pos != n:
        raise CorruptRecordError(
            f"{n - pos} bytes left after the {count} records the batch declares", base + pos
        )
    return records


def _read_nullable(buf: bytes, pos: int, stop: int, base: int, what: str) -> tuple[bytes | None, int]:
    length, pos = read_varint(buf, pos)
    if length < 0:
        if length == -1:
            return None, pos
        raise CorruptRecordError(f"bad {what} length {length}", base + pos)
    if pos + length > stop:
        raise CorruptRecordError(f"{what} of {length} bytes past the record", base + pos)
    return bytes(buf[pos : pos + length]), pos + length


def _utf8(b: bytes, offset: int) -> str:
    try:
        return b.decode()
    except UnicodeDecodeError:
        raise CorruptRecordError("header key is not UTF-8", offset) from None


def encode_record(out: bytearray, record: Record) -> None:
    """Append one record (length-prefixed) to ``out``; EncodeError for out-of-range fields."""
    body = bytearray()
    try:
        if not -128 <= record.attributes <= 127:
            raise ValueError(f"attributes {record.attributes} out of int8 range")
        body.append(record.attributes & 0xFF)
        write_varlong(body, record.timestamp_delta)
        write_varint(body, record.offset_delta)
        for b in (record.key, record.value):
            _write_nullable(body, b)
        write_varint(body, len(record.headers))
        for hkey, hvalue in record.headers:
            _write_nullable(body, hkey.encode())
            _write_nullable(body, hvalue)
        write_varint(out, len(body))
    except ValueError as e:
        raise EncodeError(f"record {record.offset_delta}: {e}") from None
    out += body


def _write_nullable(out: bytearray, b: bytes | None) -> None:
    if b is None:
        out.append(1)  # zigzag(-1)
        return
    write_varint(out, len(b))
    out += b


def build_batch(
    records: Sequence[Record],
    base_offset: int = 0,
    compression: Compression = Compression.NONE,
    *,
    base_timestamp: int = 0,
    max_timestamp: int | None = None,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
    is_transactional: bool = False,
    is_control: bool = False,
    level: int | None = None,
    last_offset_delta: int | None = None,
) -> bytes:
    """One whole RecordBatch v2 holding ``records`` (at least one), CRC included.

    lastOffsetDelta is the last record's offset delta unless given (the log cleaner keeps a
    batch's own, so that its last offset and a producer's sequences still follow from it);
    maxTimestamp defaults to the largest record timestamp (``base_timestamp`` + delta), as
    producers write it.
    """
    if not records:
        raise EncodeError("a batch holds at least one record")
    section = bytearray()
    for r in records:
        encode_record(section, r)
    payload = compress(compression, section, level)
    attributes = int(compression)
    if timestamp_type is TimestampType.LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_BIT
    if is_transactional:
        attributes |= TRANSACTIONAL_BIT
    if is_control:
        attributes |= CONTROL_BIT
    if max_timestamp is None:
        max_timestamp = base_timestamp + max(r.timestamp_delta for r in records)
    out = bytearray(BATCH_HEADER_SIZE)
    try:
        _HEADER_BEFORE_CRC.pack_into(
            out, 0, base_offset, BATCH_HEADER_SIZE - LOG_OVERHEAD + len(payload),
            partition_leader_epoch, MAGIC,
        )
        _HEADER_AFTER_CRC.pack_into(
            out, ATTRIBUTES_OFFSET, attributes,
            records[-1].offset_delta if last_offset_delta is None else last_offset_delta, base_timestamp,
            max_timestamp, producer_id, producer_epoch, base_sequence, len(records),
        )
    except struct.error as e:
        raise EncodeError(f"batch header: {e}") from None
    out += payload
    struct.pack_into(">I", out, ATTRIBUTES_OFFSET - 4, crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]))
    return bytes(out)
