"""Record batches for the storage and partition tests, built by kafka-python's DefaultRecordBatchBuilder (an
independent implementation of Kafka's format)."""

from __future__ import annotations

from kafka.record.default_records import DefaultRecordBatchBuilder


def batch(count: int = 1, timestamp: int = 1_000, value_size: int = 10, base_offset: int = 0, epoch: int = 0,
          timestamps: list[int] | None = None, compression: int = 0, producer_id: int = -1,
          producer_epoch: int = -1, base_sequence: int = -1, key: bytes | None = None) -> bytearray:
    """One batch of ``count`` records (``compression``: Kafka's codec id); record i has timestamp
    ``timestamp + i`` unless ``timestamps`` gives them. An idempotent producer's batch when
    ``producer_id`` >= 0."""
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=compression, is_transactional=False, producer_id=producer_id,
        producer_epoch=producer_epoch, base_sequence=base_sequence, batch_size=1 << 24,
    )
    for i in range(count):
        ts = timestamps[i] if timestamps else timestamp + i
        builder.append(i, timestamp=ts, key=key, value=bytes([i % 256]) * value_size, headers=[])
    buf = builder.build()
    # base offset and leader epoch lie outside the CRC; stamp them as a broker would
    buf[0:8] = base_offset.to_bytes(8, "big", signed=True)
    buf[12:16] = epoch.to_bytes(4, "big", signed=True)
    return buf


def idempotent(producer_id: int, producer_epoch: int, base_sequence: int, count: int = 1,
               timestamp: int = 1_000, value_size: int = 10) -> bytearray:
    """A batch of an idempotent producer, offsets and leader epoch unset (as a client sends it)."""
    return batch(count, timestamp=timestamp, value_size=value_size, epoch=-1, producer_id=producer_id,
                 producer_epoch=producer_epoch, base_sequence=base_sequence)
