"""__transaction_state records: the bytes Kafka writes (TransactionLogKey/Value.json spelled out
here), a round trip of every transit, and partition_for."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalite.protocol import transaction_records as tr
from kafkalite.protocol.errors import DecodeError
from kafkalite.server.coordinator.transaction import log_records as lr
from kafkalite.server.coordinator.transaction.metadata import TxnTransitMetadata
from kafkalite.server.coordinator.transaction.state import TransactionState
from kafkalite.server.coordinator.transaction.versions import TransactionVersion

S = TransactionState


def test_status_numbers_are_kafkas():
    assert [lr.STATUS[s] for s in (S.EMPTY, S.ONGOING, S.PREPARE_COMMIT, S.PREPARE_ABORT, S.COMPLETE_COMMIT,
                                   S.COMPLETE_ABORT, S.DEAD, S.PREPARE_EPOCH_FENCE)] == list(range(8))


def test_key_bytes():
    assert lr.key_bytes("tx") == b"\x00\x00" + b"\x00\x02tx"
    assert tr.decode_key(b"\x00\x00\x00\x02tx") == "tx"
    with pytest.raises(DecodeError):
        tr.decode_key(b"\x00\x01\x00\x02tx")
    with pytest.raises(DecodeError):
        tr.decode_key(b"\x00\x00\x00\x05tx")


def transit(state: S = S.ONGOING, **kw) -> TxnTransitMetadata:
    base = dict(producer_id=5, prev_producer_id=4, next_producer_id=-1, producer_epoch=1,
                last_producer_epoch=0,
                txn_timeout_ms=60000, state=state, topic_partitions=frozenset({("t", 2), ("t", 0)}),
                txn_start_timestamp=9, txn_last_update_timestamp=10,
                client_transaction_version=TransactionVersion.TV_2)
    base.update(kw)
    return TxnTransitMetadata(**base)  # type: ignore[arg-type]


def test_value_v0_bytes():
    head = struct.pack(">hqhib", 0, 5, 1, 60000, 1)
    partitions = struct.pack(">i", 1) + b"\x00\x01t" + struct.pack(">iii", 2, 0, 2)
    assert lr.value_bytes(transit(), TransactionVersion.TV_0) == head + partitions + struct.pack(">qq", 10, 9)


def test_value_v1_bytes_with_tagged_fields():
    head = struct.pack(">hqhib", 1, 5, 1, 60000, 1)
    # compact array (n + 1), compact string, compact int32 array, the struct's empty tagged fields
    partitions = b"\x02" + b"\x02t" + b"\x03" + struct.pack(">ii", 0, 2) + b"\x00"
    # tagged fields: 2 of them (NextProducerId -1 is the default, not written): tag 0 = 4, tag 2 = 2
    tags = b"\x02" + b"\x00\x08" + struct.pack(">q", 4) + b"\x02\x02" + struct.pack(">h", 2)
    expected = head + partitions + struct.pack(">qq", 10, 9) + tags
    assert lr.value_bytes(transit(), TransactionVersion.TV_2) == expected


def test_empty_writes_null_partitions():
    e = transit(S.EMPTY, topic_partitions=frozenset(), txn_start_timestamp=-1)
    assert lr.value_bytes(e, TransactionVersion.TV_0)[17:21] == b"\xff\xff\xff\xff"
    assert lr.value_bytes(e, TransactionVersion.TV_1)[17:18] == b"\x00"
    with pytest.raises(ValueError):
        lr.value_bytes(transit(S.EMPTY), TransactionVersion.TV_0)


def test_tombstone_unknown_status_and_bad_versions():
    assert lr.read(lr.key_bytes("x"), None) == lr.TxnTombstone("x")
    bad = bytearray(lr.value_bytes(transit(), TransactionVersion.TV_0))
    bad[16] = 9
    with pytest.raises(lr.UnknownTransactionStatus):
        lr.read(lr.key_bytes("x"), bytes(bad))
    with pytest.raises(DecodeError):
        lr.read(lr.key_bytes("x"), b"\x00\x02" + bytes(bad[2:]))
    with pytest.raises(DecodeError):
        lr.read(lr.key_bytes("x"), bytes(bad[:-3]))
    with pytest.raises(DecodeError):
        lr.read(lr.key_bytes("x"), b"\x00")


def test_partition_for_is_javas():
    # "a".hashCode() == 97; "polygenelubricants".hashCode() == Integer.MIN_VALUE, which Utils.abs maps to 0
    assert lr.partition_for("a", 50) == 97 % 50
    assert lr.partition_for("polygenelubricants", 50) == 0
    # String.hashCode over UTF-16 code units: s[0]*31^2 + s[1]*31 + s[2]
    h = (0xFFFF * 31 * 31 + 0xFFFF * 31 + 0xFFFF) & 0xFFFFFFFF
    assert lr.partition_for("\uffff" * 3, 1000) == h % 1000
    assert all(0 <= lr.partition_for(str(i), 7) < 7 for i in range(100))


ids = st.integers(0, 2**63 - 1)
transits = st.builds(
    TxnTransitMetadata,
    producer_id=ids, prev_producer_id=st.integers(-1, 2**63 - 1), next_producer_id=st.integers(-1, 2**63 - 1),
    producer_epoch=st.integers(0, 2**15 - 1), last_producer_epoch=st.just(-1),
    txn_timeout_ms=st.integers(1, 2**31 - 1), state=st.sampled_from([s for s in S if s is not S.EMPTY]),
    topic_partitions=st.frozensets(st.tuples(st.text(min_size=1, max_size=6), st.integers(0, 2**31 - 1)),
                                   max_size=6),
    txn_start_timestamp=st.integers(-1, 2**62), txn_last_update_timestamp=st.integers(-1, 2**62),
    client_transaction_version=st.sampled_from(list(TransactionVersion)))


@given(st.text(max_size=30), transits, st.sampled_from(list(TransactionVersion)), st.booleans())
def test_round_trip(transactional_id, t, level, empty):
    if empty:
        t = TxnTransitMetadata(**{**t.__dict__, "state": S.EMPTY, "topic_partitions": frozenset()})
    record = lr.read(lr.key_bytes(transactional_id), lr.value_bytes(t, level))
    assert isinstance(record, lr.TxnRecord) and record.transactional_id == transactional_id
    m = record.metadata
    assert (m.producer_id, m.producer_epoch, m.txn_timeout_ms, m.state, m.topic_partitions,
            m.txn_start_timestamp, m.txn_last_update_timestamp) == (
        t.producer_id, t.producer_epoch, t.txn_timeout_ms, t.state, t.topic_partitions,
        t.txn_start_timestamp, t.txn_last_update_timestamp)
    assert m.last_producer_epoch == -1 and m.pending_state is None
    if level.log_value_version == 1:
        assert (m.prev_producer_id, m.next_producer_id, m.client_transaction_version) == (
            t.prev_producer_id, t.next_producer_id, t.client_transaction_version)
    else:  # v0 keeps none of them
        assert (m.prev_producer_id, m.next_producer_id, m.client_transaction_version) == (-1, -1, 0)
