"""The transaction apis (issue 27's wire format), by hand-built bytes where kio cannot check them:
WriteTxnMarkers v0 (Kafka 4.0 and kio dropped it), and the two shapes of AddPartitionsToTxn (a
producer's single transaction up to v3, the brokers' batch from v4, KIP-890). Every other version
is compared with kio (test_kio_oracle.py). Declared is not served: ApiVersions lists none of them.
"""

from __future__ import annotations

import pytest

from kafkalite.protocol import decode_body, encode_body
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import BY_KEY, add_partitions_to_txn, end_txn, write_txn_markers
from kafkalite.server.apis import SERVED_BY_KEY, apis_for

from .golden_bytes import FALSE, NO_TAGS, TRUE, i16, i32, i64, s16

TRANSACTION_APIS = (
    ApiKey.ADD_PARTITIONS_TO_TXN, ApiKey.ADD_OFFSETS_TO_TXN, ApiKey.END_TXN, ApiKey.WRITE_TXN_MARKERS,
    ApiKey.TXN_OFFSET_COMMIT, ApiKey.DESCRIBE_PRODUCERS, ApiKey.DESCRIBE_TRANSACTIONS,
    ApiKey.LIST_TRANSACTIONS,
)


def cs(text: str) -> bytes:
    """A compact string (flexible versions): uvarint length + 1, then UTF-8 (short strings only)."""
    return bytes([len(text) + 1]) + text.encode()


def carray(n: int) -> bytes:
    """A compact array's length (fewer than 127 items)."""
    return bytes([n + 1])


def _roundtrip(key, version, value, expected, response=False):
    assert encode_body(key, version, value, response=response) == expected
    assert decode_body(key, version, expected, response=response) == value


MARKER = write_txn_markers.WRITABLE_TXN_MARKER(
    producer_id=7, producer_epoch=2, transaction_result=True, coordinator_epoch=5,
    topics=[write_txn_markers.WRITABLE_TXN_MARKER_TOPIC(name="t", partition_indexes=[0, 3])])
MARKER_RESULT = write_txn_markers.WRITABLE_TXN_MARKER_RESULT(producer_id=7, topics=[
    write_txn_markers.WRITABLE_TXN_MARKER_TOPIC_RESULT(name="t", partitions=[
        write_txn_markers.WRITABLE_TXN_MARKER_PARTITION_RESULT(partition_index=3, error_code=47)])])


def test_write_txn_markers_v0_by_hand():
    """Markers: producer id, epoch, result (true = COMMIT), topics, then the coordinator epoch last."""
    request = write_txn_markers.REQUEST(markers=[MARKER])
    _roundtrip(ApiKey.WRITE_TXN_MARKERS, 0, request,
               i32(1) + i64(7) + i16(2) + TRUE + i32(1) + s16("t") + i32(2) + i32(0) + i32(3) + i32(5))
    response = write_txn_markers.RESPONSE(markers=[MARKER_RESULT])
    _roundtrip(ApiKey.WRITE_TXN_MARKERS, 0, response,
               i32(1) + i64(7) + i32(1) + s16("t") + i32(1) + i32(3) + i16(47), response=True)


def test_write_txn_markers_v1_is_v0_made_flexible():
    request = write_txn_markers.REQUEST(markers=[MARKER])
    _roundtrip(ApiKey.WRITE_TXN_MARKERS, 1, request,
               carray(1) + i64(7) + i16(2) + TRUE + carray(1) + cs("t") + carray(2) + i32(0) + i32(3)
               + NO_TAGS + i32(5) + NO_TAGS + NO_TAGS)
    response = write_txn_markers.RESPONSE(markers=[MARKER_RESULT])
    _roundtrip(ApiKey.WRITE_TXN_MARKERS, 1, response,
               carray(1) + i64(7) + carray(1) + cs("t") + carray(1) + i32(3) + i16(47) + NO_TAGS + NO_TAGS
               + NO_TAGS + NO_TAGS, response=True)


TOPIC = add_partitions_to_txn.ADD_PARTITIONS_TO_TXN_TOPIC(name="t", partitions=[1])
TOPIC_RESULT = add_partitions_to_txn.ADD_PARTITIONS_TO_TXN_TOPIC_RESULT(name="t", results_by_partition=[
    add_partitions_to_txn.ADD_PARTITIONS_TO_TXN_PARTITION_RESULT(partition_index=1, partition_error_code=51)])


@pytest.mark.parametrize("version", [0, 1, 2])
def test_add_partitions_to_txn_producer_versions_by_hand(version):
    request = add_partitions_to_txn.REQUEST(
        v3_and_below_transactional_id="tx", v3_and_below_producer_id=9, v3_and_below_producer_epoch=1,
        v3_and_below_topics=[TOPIC])
    _roundtrip(ApiKey.ADD_PARTITIONS_TO_TXN, version, request,
               s16("tx") + i64(9) + i16(1) + i32(1) + s16("t") + i32(1) + i32(1))
    response = add_partitions_to_txn.RESPONSE(throttle_time_ms=3,
                                              results_by_topic_v3_and_below=[TOPIC_RESULT])
    _roundtrip(ApiKey.ADD_PARTITIONS_TO_TXN, version, response,
               i32(3) + i32(1) + s16("t") + i32(1) + i32(1) + i16(51), response=True)


def test_add_partitions_to_txn_v4_batches_transactions_by_hand():
    """v4+ (brokers verifying for a produce, KIP-890): a batch of transactions, each with
    VerifyOnly; the response has a top-level error code and results by transaction."""
    tx = add_partitions_to_txn.ADD_PARTITIONS_TO_TXN_TRANSACTION(
        transactional_id="tx", producer_id=9, producer_epoch=1, verify_only=True, topics=[TOPIC])
    request = add_partitions_to_txn.REQUEST(transactions=[tx])
    expected = (carray(1) + cs("tx") + i64(9) + i16(1) + TRUE + carray(1) + cs("t") + carray(1) + i32(1)
                + NO_TAGS + NO_TAGS + NO_TAGS)
    for version in (4, 5):
        _roundtrip(ApiKey.ADD_PARTITIONS_TO_TXN, version, request, expected)
    result = add_partitions_to_txn.ADD_PARTITIONS_TO_TXN_RESULT(transactional_id="tx",
                                                                topic_results=[TOPIC_RESULT])
    response = add_partitions_to_txn.RESPONSE(throttle_time_ms=0, error_code=0,
                                              results_by_transaction=[result])
    _roundtrip(ApiKey.ADD_PARTITIONS_TO_TXN, 4, response,
               i32(0) + i16(0) + carray(1) + cs("tx") + carray(1) + cs("t") + carray(1) + i32(1) + i16(51)
               + NO_TAGS + NO_TAGS + NO_TAGS + NO_TAGS, response=True)


def test_end_txn_v5_response_adds_the_next_producer_id_and_epoch():
    response = end_txn.RESPONSE(throttle_time_ms=0, error_code=0, producer_id=12, producer_epoch=0)
    _roundtrip(ApiKey.END_TXN, 5, response, i32(0) + i16(0) + i64(12) + i16(0) + NO_TAGS, response=True)
    older = end_txn.RESPONSE(throttle_time_ms=0, error_code=0)
    assert (older.producer_id, older.producer_epoch) == (-1, -1)
    _roundtrip(ApiKey.END_TXN, 4, older, i32(0) + i16(0) + NO_TAGS, response=True)
    request = end_txn.REQUEST(transactional_id="tx", producer_id=12, producer_epoch=3, committed=False)
    _roundtrip(ApiKey.END_TXN, 0, request, s16("tx") + i64(12) + i16(3) + FALSE)


def test_declared_versions():
    assert {k: str(BY_KEY[k].versions) for k in TRANSACTION_APIS} == {
        ApiKey.ADD_PARTITIONS_TO_TXN: "0-5", ApiKey.ADD_OFFSETS_TO_TXN: "0-4", ApiKey.END_TXN: "0-5",
        ApiKey.WRITE_TXN_MARKERS: "0-1", ApiKey.TXN_OFFSET_COMMIT: "0-5", ApiKey.DESCRIBE_PRODUCERS: "0",
        ApiKey.DESCRIBE_TRANSACTIONS: "0", ApiKey.LIST_TRANSACTIONS: "0-2",
    }
    assert str(BY_KEY[ApiKey.INIT_PRODUCER_ID].versions) == "0-5"
    assert str(BY_KEY[ApiKey.FIND_COORDINATOR].versions) == "0-6"


@pytest.mark.parametrize(("privileged", "controller"), [(False, False), (True, False), (True, True)])
def test_served_at_every_declared_version_on_every_listener(privileged, controller):
    """ApiVersions lists each at every version declared, on a client listener and the
    inter-broker one alike (the coordinators send WriteTxnMarkers there); WriteTxnMarkers v0 is
    declared but not served (Kafka 4.x removed it, KIP-896)."""
    advertised = apis_for("PLAINTEXT", privileged, controller, frozenset())
    for key in TRANSACTION_APIS:
        expected = "1" if key == ApiKey.WRITE_TXN_MARKERS else str(BY_KEY[key].versions)
        assert str(SERVED_BY_KEY[key].versions) == expected
        assert key in advertised
