"""What the log refuses, as ApiErrors carrying the Kafka error code a response would carry
(the exceptions' names are Kafka's)."""

from __future__ import annotations

from kafkalite.common.errors import ApiError
from kafkalite.protocol.error_codes import BY_NAME


class OffsetOutOfRangeError(ApiError):
    """A read or truncation at an offset outside [log start offset, log end offset]."""

    def __init__(self, message: str) -> None:
        super().__init__(BY_NAME["OFFSET_OUT_OF_RANGE"].code, message)


class RecordTooLargeError(ApiError):
    """A batch larger than max.message.bytes (Kafka's RecordTooLargeException)."""

    def __init__(self, message: str) -> None:
        super().__init__(BY_NAME["MESSAGE_TOO_LARGE"].code, message)


class RecordBatchTooLargeError(ApiError):
    """An append larger than segment.bytes: no segment could hold it."""

    def __init__(self, message: str) -> None:
        super().__init__(BY_NAME["RECORD_LIST_TOO_LARGE"].code, message)


class InvalidRecordError(ApiError):
    """A record the log's settings forbid: one without a key in a compacted log (Kafka's
    InvalidRecordException from LogValidator)."""

    def __init__(self, message: str) -> None:
        super().__init__(BY_NAME["INVALID_RECORD"].code, message)


class UnexpectedAppendOffsetError(ApiError):
    """A follower's append whose first offset is below the log end offset."""

    def __init__(self, message: str, first_offset: int, last_offset: int) -> None:
        super().__init__(BY_NAME["UNKNOWN_SERVER_ERROR"].code, message)
        self.first_offset = first_offset
        self.last_offset = last_offset


class InvalidProducerEpochError(ApiError):
    """An idempotent batch whose producer epoch is older than the producer's current one: a zombie
    producer fenced by a newer InitProducerId (Kafka's InvalidProducerEpochException)."""

    def __init__(self, message: str) -> None:
        super().__init__(BY_NAME["INVALID_PRODUCER_EPOCH"].code, message)


class OutOfOrderSequenceError(ApiError):
    """An idempotent batch whose first sequence does not follow the producer's last one, or a new
    epoch not starting at sequence 0 (Kafka's OutOfOrderSequenceException)."""

    def __init__(self, message: str) -> None:
        super().__init__(BY_NAME["OUT_OF_ORDER_SEQUENCE_NUMBER"].code, message)


class CorruptSnapshotError(Exception):
    """A producer state snapshot that cannot be read (unknown version, CRC mismatch, bad length):
    it is deleted and the state rebuilt from the log (Kafka's CorruptSnapshotException)."""


class InvalidOffsetError(ValueError):
    """An index append that is not above the index's last entry (a bug in the caller, as in Kafka)."""


class CorruptIndexError(Exception):
    """An index file that cannot be right (size not a multiple of its entry size, offsets below its
    base): the segment is recovered and the index rebuilt."""


class CorruptAbortedTxnError(CorruptIndexError):
    """A transaction index entry that cannot be read: fewer than its 34 bytes, or a version other
    than 0 (Kafka's KafkaException "Unexpected aborted transaction version"). A CorruptIndexError,
    what the log loader recovers a segment from."""


class InvalidTxnStateError(ApiError):
    """A non-transactional batch from a producer whose transaction is open in the partition
    (Kafka's InvalidTxnStateException from ProducerAppendInfo)."""

    def __init__(self, message: str) -> None:
        super().__init__(BY_NAME["INVALID_TXN_STATE"].code, message)


class TransactionCoordinatorFencedError(ApiError):
    """A transaction marker from a coordinator epoch older than the last one the producer's
    markers carried: a coordinator that lost its __transaction_state partition (Kafka's
    TransactionCoordinatorFencedException)."""

    def __init__(self, message: str) -> None:
        super().__init__(BY_NAME["TRANSACTION_COORDINATOR_FENCED"].code, message)
