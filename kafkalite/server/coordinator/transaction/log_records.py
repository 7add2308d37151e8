"""A transactional id's metadata as the records of ``__transaction_state`` (Kafka's TransactionLog):
which partition holds an id, the bytes of a transit, and the metadata read back when a partition
is loaded. The byte layout is the protocol layer's (kafkalite/protocol/transaction_records.py);
this module maps states to the status numbers Kafka writes and back.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby

from kafkalite.common.java import partition_for_key
from kafkalite.protocol import transaction_records as records
from kafkalite.protocol.errors import DecodeError
from kafkalite.protocol.records.batch import NO_PRODUCER_EPOCH

from .metadata import TransactionMetadata, TxnTransitMetadata
from .state import TransactionState
from .versions import TransactionVersion

TRANSACTION_STATE_TOPIC = "__transaction_state"

S = TransactionState
# The TransactionStatus each state is written as (Kafka's TransactionState ids).
STATUS: dict[TransactionState, int] = {
    S.EMPTY: 0,
    S.ONGOING: 1,
    S.PREPARE_COMMIT: 2,
    S.PREPARE_ABORT: 3,
    S.COMPLETE_COMMIT: 4,
    S.COMPLETE_ABORT: 5,
    S.DEAD: 6,
    S.PREPARE_EPOCH_FENCE: 7,
}
STATE_OF_STATUS: dict[int, TransactionState] = {status: state for state, status in STATUS.items()}


class UnknownTransactionStatus(DecodeError):
    """A value whose TransactionStatus is not one of Kafka's states."""


def partition_for(transactional_id: str, num_partitions: int) -> int:
    """Kafka's TransactionStateManager.partitionFor: Utils.abs(transactionalId.hashCode) %
    transaction.state.log.num.partitions (Utils.abs maps Integer.MIN_VALUE to 0)."""
    return partition_for_key(transactional_id, num_partitions)


def key_bytes(transactional_id: str) -> bytes:
    return records.encode_key(transactional_id)


def value_bytes(transit: TxnTransitMetadata, version_level: TransactionVersion) -> bytes:
    """The value Kafka writes for ``transit`` when the cluster's transaction.version is
    ``version_level``: v0 below 1 (the previous and next producer ids and the client's version
    are not kept), v1 from 1. The partitions are null in Empty, grouped by topic otherwise."""
    if transit.state is S.EMPTY and transit.topic_partitions:
        raise ValueError(f"an Empty transaction with partitions cannot be written: {transit}")
    partitions = None
    if transit.state is not S.EMPTY:
        P = records.PARTITIONS_SCHEMA.cls
        ordered = sorted(transit.topic_partitions)
        partitions = [P(topic=topic, partition_ids=[p for _, p in group])
                      for topic, group in groupby(ordered, key=lambda tp: tp[0])]
    value = records.TRANSACTION_LOG_VALUE.cls(
        producer_id=transit.producer_id,
        previous_producer_id=transit.prev_producer_id,
        next_producer_id=transit.next_producer_id,
        producer_epoch=transit.producer_epoch,
        transaction_timeout_ms=transit.txn_timeout_ms,
        transaction_status=STATUS[transit.state],
        transaction_partitions=partitions,
        transaction_last_update_timestamp_ms=transit.txn_last_update_timestamp,
        transaction_start_timestamp_ms=transit.txn_start_timestamp,
        client_transaction_version=int(transit.client_transaction_version),
    )
    return records.encode_value(value, version_level.log_value_version)


@dataclass(frozen=True)
class TxnRecord:
    transactional_id: str
    metadata: TransactionMetadata


@dataclass(frozen=True)
class TxnTombstone:
    """The id expired (a null value)."""

    transactional_id: str


def read(key: bytes, value: bytes | None) -> TxnRecord | TxnTombstone:
    """A record of the log as the loader sees it (Kafka's TransactionLog.read). The last producer
    epoch is not written, so it reads as -1; the partitions of an Empty state are ignored.
    DecodeError (UnknownTransactionStatus for a status Kafka has not) for bytes that are not a
    record of this log."""
    transactional_id = records.decode_key(key)
    if value is None:
        return TxnTombstone(transactional_id)
    v = records.decode_value(value)
    state = STATE_OF_STATUS.get(v.transaction_status)
    if state is None:
        raise UnknownTransactionStatus(f"unknown transaction status {v.transaction_status}", offset=0,
                                       what="TransactionLogValue")
    partitions: frozenset[tuple[str, int]] = frozenset()
    if state is not S.EMPTY and v.transaction_partitions:
        partitions = frozenset((p.topic, i) for p in v.transaction_partitions for i in p.partition_ids)
    return TxnRecord(transactional_id, TransactionMetadata(
        transactional_id=transactional_id,
        producer_id=v.producer_id,
        prev_producer_id=v.previous_producer_id,
        next_producer_id=v.next_producer_id,
        producer_epoch=v.producer_epoch,
        last_producer_epoch=NO_PRODUCER_EPOCH,
        txn_timeout_ms=v.transaction_timeout_ms,
        state=state,
        topic_partitions=partitions,
        txn_start_timestamp=v.transaction_start_timestamp_ms,
        txn_last_update_timestamp=v.transaction_last_update_timestamp_ms,
        client_transaction_version=TransactionVersion.of(v.client_transaction_version),
    ))
