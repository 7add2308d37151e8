"""Transactions: InitProducerId with a transactional id (producers.py hands it here),
AddPartitionsToTxn (a producer's v0-3, a partition leader's batched v4+ with VerifyOnly),
AddOffsetsToTxn, EndTxn, DescribeTransactions and ListTransactions (Kafka's KafkaApis handlers
of the transaction coordinator's requests), translated to and from TransactionCoordinator calls.

Every answer but Describe/List comes from a callback, once the coordinator's write to
``__transaction_state`` is committed: the handler thread returns at once. Versions that predate
PRODUCER_FENCED see INVALID_PRODUCER_EPOCH instead (InitProducerId < 4, the others < 2), as Kafka
rewrites it. No authorizer: every request is allowed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import (
    add_offsets_to_txn,
    add_partitions_to_txn,
    describe_transactions,
    end_txn,
    init_producer_id,
    list_transactions,
)
from kafkalite.protocol.records.batch import NO_PRODUCER_EPOCH, NO_PRODUCER_ID

from ..coordinator.offsets_topic import OFFSETS_TOPIC
from ..coordinator.offsets_topic import partition_for as group_partition_for
from ..coordinator.transaction.coordinator import TransactionCoordinator
from ..coordinator.transaction.metadata import ProducerIdAndEpoch
from ..coordinator.transaction.versions import TransactionVersion
from ..metadata_cache import MetadataCache
from ..responses import respond

TopicPartition = tuple[str, int]


def fenced_as(error: int, version: int, first_with_fenced: int) -> int:
    """PRODUCER_FENCED for a version that knows it, else INVALID_PRODUCER_EPOCH."""
    if error == E.PRODUCER_FENCED and version < first_with_fenced:
        return E.INVALID_PRODUCER_EPOCH
    return error


def init_transactional_producer_id(coordinator: TransactionCoordinator | None, request: Request,
                                   send_response: Callable[[Response], None]) -> Response | None:
    """InitProducerId with a transactional id (the caller checked the id/epoch pair)."""
    body, version = request.body, request.api_version

    def answer(error: int, producer_id: int = NO_PRODUCER_ID, epoch: int = NO_PRODUCER_EPOCH) -> Response:
        return respond(request, init_producer_id.RESPONSE(
            throttle_time_ms=0, error_code=fenced_as(error, version, 4), producer_id=producer_id,
            producer_epoch=epoch))

    if coordinator is None:
        return answer(E.COORDINATOR_NOT_AVAILABLE)
    expected = None
    if version >= 3 and body.producer_id != NO_PRODUCER_ID:
        expected = ProducerIdAndEpoch(body.producer_id, body.producer_epoch)
    coordinator.handle_init_producer_id(
        body.transactional_id, body.transaction_timeout_ms, expected,
        lambda error, producer_id, epoch: send_response(answer(error, producer_id, epoch)))
    return None


class _Gather:
    """Answers of several callbacks, then one response."""

    def __init__(self, count: int, finish: Callable[[], None]) -> None:
        self._left = count
        self._lock = threading.Lock()
        self._finish = finish
        if count == 0:
            finish()

    def one_done(self) -> None:
        with self._lock:
            self._left -= 1
            last = self._left == 0
        if last:
            self._finish()


class TransactionApis:
    def __init__(self, coordinator: TransactionCoordinator | None, send_response: Callable[[Response], None],
                 metadata_cache: MetadataCache | None = None, offsets_partitions: int = 50) -> None:
        """``offsets_partitions``: offsets.topic.num.partitions (AddOffsetsToTxn adds the group's)."""
        self.coordinator = coordinator  # None: a KafkaApis without a broker
        self.send_response = send_response
        self.metadata_cache = metadata_cache
        self.offsets_partitions = offsets_partitions

    # --- AddPartitionsToTxn -----------------------------------------------------------------

    def add_partitions_to_txn(self, request: Request) -> Response | None:
        if request.api_version >= 4:
            return self._add_partitions_batched(request)
        body, version = request.body, request.api_version
        R = add_partitions_to_txn.RESPONSE
        TR = R["results_by_topic_v3_and_below"]
        wanted = [(t.name, list(t.partitions)) for t in body.v3_and_below_topics]

        def answer(errors: dict[TopicPartition, int]) -> Response:
            return respond(request, R(throttle_time_ms=0, results_by_topic_v3_and_below=[
                TR(name=name, results_by_partition=[TR["results_by_partition"](
                    partition_index=p, partition_error_code=fenced_as(errors[(name, p)], version, 2))
                    for p in dict.fromkeys(ps)]) for name, ps in wanted]))

        partitions = {(name, p) for name, ps in wanted for p in ps}
        unknown = self._unknown(partitions)
        if unknown:  # nothing is added: the others were not attempted
            return answer({tp: E.UNKNOWN_TOPIC_OR_PARTITION if tp in unknown
                           else E.OPERATION_NOT_ATTEMPTED for tp in partitions})
        if self.coordinator is None:
            return answer({tp: E.COORDINATOR_NOT_AVAILABLE for tp in partitions})
        self.coordinator.handle_add_partitions(
            body.v3_and_below_transactional_id, body.v3_and_below_producer_id,
            body.v3_and_below_producer_epoch, partitions,
            lambda error: self.send_response(answer({tp: error for tp in partitions})))
        return None

    def _unknown(self, partitions: set[TopicPartition]) -> set[TopicPartition]:
        if self.metadata_cache is None:
            return set()
        topics = self.metadata_cache.snapshot.topics
        return {(t, p) for t, p in partitions if t not in topics or p not in topics[t].partitions}

    def _add_partitions_batched(self, request: Request) -> Response | None:
        """v4+: a partition leader's batch; VerifyOnly checks, the others add."""
        body = request.body
        R = add_partitions_to_txn.RESPONSE
        TR = R["results_by_transaction"]
        txns = list(body.transactions)
        results: list[dict[TopicPartition, int]] = [{} for _ in txns]

        def finish() -> None:
            self.send_response(respond(request, R(throttle_time_ms=0, error_code=E.NONE,
                                                  results_by_transaction=[
                TR(transactional_id=t.transactional_id, topic_results=[
                    TR["topic_results"](name=topic.name, results_by_partition=[
                        TR["topic_results"]["results_by_partition"](
                            partition_index=p, partition_error_code=results[i].get((topic.name, p), E.NONE))
                        for p in dict.fromkeys(topic.partitions)])
                    for topic in t.topics])
                for i, t in enumerate(txns)])))

        gather = _Gather(len(txns), finish)
        for i, t in enumerate(txns):
            partitions = [(topic.name, p) for topic in t.topics for p in topic.partitions]

            def every(error: int, i: int = i, partitions: list[TopicPartition] = partitions) -> None:
                results[i] = {tp: error for tp in partitions}
                gather.one_done()

            def each(errors: dict[TopicPartition, int], i: int = i) -> None:
                results[i] = errors
                gather.one_done()

            if self.coordinator is None:
                every(E.COORDINATOR_NOT_AVAILABLE)
            elif t.verify_only:
                self.coordinator.handle_verify_partitions(t.transactional_id, t.producer_id, t.producer_epoch,
                                                          partitions, each)
            else:
                # A partition leader adding for a Produce v12+ (KIP-890 part 2): Kafka's coordinator
                # takes v4+ as from a transaction version 2 client.
                self.coordinator.handle_add_partitions(t.transactional_id, t.producer_id, t.producer_epoch,
                                                       partitions, every, TransactionVersion.TV_2)
        return None

    # --- AddOffsetsToTxn ------------------------------------------------------------------------

    def add_offsets_to_txn(self, request: Request) -> Response | None:
        body, version = request.body, request.api_version

        def answer(error: int) -> Response:
            return respond(request, add_offsets_to_txn.RESPONSE(throttle_time_ms=0,
                                                                error_code=fenced_as(error, version, 2)))

        if self.coordinator is None:
            return answer(E.COORDINATOR_NOT_AVAILABLE)
        partition = (OFFSETS_TOPIC, group_partition_for(body.group_id, self.offsets_partitions))
        self.coordinator.handle_add_partitions(body.transactional_id, body.producer_id, body.producer_epoch,
                                               {partition}, lambda error: self.send_response(answer(error)))
        return None

    # --- EndTxn ---------------------------------------------------------------------------------

    def end_txn(self, request: Request) -> Response | None:
        body, version = request.body, request.api_version

        def answer(error: int, producer_id: int = NO_PRODUCER_ID, epoch: int = NO_PRODUCER_EPOCH) -> Response:
            return respond(request, end_txn.RESPONSE(
                throttle_time_ms=0, error_code=fenced_as(error, version, 2), producer_id=producer_id,
                producer_epoch=epoch))

        if self.coordinator is None:
            return answer(E.COORDINATOR_NOT_AVAILABLE)
        # Kafka takes an EndTxn above v4 for a transaction version 2 client (KIP-890 part 2).
        client_version = TransactionVersion.TV_2 if version > 4 else TransactionVersion.TV_0
        self.coordinator.handle_end_txn(
            body.transactional_id, body.producer_id, body.producer_epoch, body.committed, client_version,
            lambda error, producer_id, epoch: self.send_response(answer(error, producer_id, epoch)))
        return None

    # --- DescribeTransactions / ListTransactions ------------------------------------------------

    def describe_transactions(self, request: Request) -> Response:
        R = describe_transactions.RESPONSE
        S = R["transaction_states"]
        ids = list(request.body.transactional_ids)
        if self.coordinator is None:
            found: list[Any] = [None] * len(ids)
        else:
            found = list(self.coordinator.describe(ids))
        states = []
        for txn_id, d in zip(ids, found, strict=True):
            if d is None:
                states.append(S(error_code=E.COORDINATOR_NOT_AVAILABLE, transactional_id=txn_id,
                                transaction_state="",
                                transaction_timeout_ms=0, transaction_start_time_ms=-1, producer_id=-1,
                                producer_epoch=-1, topics=[]))
                continue
            states.append(S(error_code=d.error, transactional_id=txn_id, transaction_state=d.state,
                            transaction_timeout_ms=d.timeout_ms, transaction_start_time_ms=d.start_time_ms,
                            producer_id=d.producer_id, producer_epoch=d.producer_epoch,
                            topics=[S["topics"](topic=t, partitions=ps) for t, ps in d.partitions.items()]))
        return respond(request, R(throttle_time_ms=0, transaction_states=states))

    def list_transactions(self, request: Request) -> Response:
        body, version = request.body, request.api_version
        R = list_transactions.RESPONSE
        if self.coordinator is None:
            return respond(request, R(throttle_time_ms=0, error_code=E.COORDINATOR_NOT_AVAILABLE,
                                      unknown_state_filters=[], transaction_states=[]))
        error, unknown, listed = self.coordinator.list_transactions(
            list(body.state_filters), list(body.producer_id_filters),
            body.duration_filter if version >= 1 else -1,
            body.transactional_id_pattern if version >= 2 else None)
        return respond(request, R(throttle_time_ms=0, error_code=error, unknown_state_filters=unknown,
                                  transaction_states=[R["transaction_states"](
                                      transactional_id=t.transactional_id, producer_id=t.producer_id,
                                      transaction_state=t.state) for t in listed]))
