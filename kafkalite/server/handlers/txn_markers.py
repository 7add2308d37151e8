"""WriteTxnMarkers: a transaction coordinator has this partition leader end a transaction in its
partitions (Kafka's KafkaApis.handleWriteTxnMarkersRequest).

Each marker (producer id and epoch, COMMIT or ABORT, the coordinator's epoch) is appended to each
of its partitions as a control batch (records/control.py's build_marker_batch) by the coordinator
(AppendOrigin.COORDINATOR: the only origin allowed control batches) with acks=all; the request is
answered from the produce purgatory once the high watermark covers every marker appended, or
with REQUEST_TIMED_OUT for those it does not cover after ``timeout_ms`` (request.timeout.ms, as
Kafka's). Errors are per partition, as Kafka's: UNKNOWN_TOPIC_OR_PARTITION (no replica here),
NOT_LEADER_OR_FOLLOWER, INVALID_PRODUCER_EPOCH (a marker older than the producer's epoch),
TRANSACTION_COORDINATOR_FENCED (an older coordinator epoch than the producer's last marker),
NOT_ENOUGH_REPLICAS(_AFTER_APPEND).

A marker that reached a partition of ``__consumer_offsets`` ends the producer's transactional
offsets in that partition's groups (GroupCoordinator.complete_transaction, Kafka's
onTransactionCompleted), after the append, before the answer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from kafkalite.common.errors import ApiError
from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import write_txn_markers
from kafkalite.protocol.records.control import ControlRecordType, EndTransactionMarker, build_marker_batch
from kafkalite.storage.log import AppendOrigin

from ..coordinator.group_coordinator import GroupCoordinator
from ..coordinator.offsets_topic import OFFSETS_TOPIC
from ..purgatory import DelayedOperation
from ..replication.replica_manager import ReplicaManager, partition_key
from ..responses import respond

log = logging.getLogger("kafkalite.server.handlers.txn_markers")

SendResponse = Callable[[Response], None]
R = write_txn_markers.RESPONSE
MarkerResult = R["markers"]
TopicResult = MarkerResult["topics"]
PartitionResult = TopicResult["partitions"]


class _Written(NamedTuple):
    """A marker appended to a partition, waiting for the high watermark to pass ``required``."""

    topic: str
    result: Any  # its PartitionResult
    required: int
    producer_id: int
    commit: bool


class TxnMarkerApis:
    def __init__(self, replica_manager: ReplicaManager, send_response: SendResponse,
                 group_coordinator: GroupCoordinator | None, timeout_ms: int) -> None:
        self.replica_manager = replica_manager
        self.send_response = send_response
        self.group_coordinator = group_coordinator  # told of markers in __consumer_offsets
        self.timeout_ms = timeout_ms

    def write_txn_markers(self, request: Request) -> Response | None:
        self.write_markers(request.body, lambda body: self.send_response(respond(request, body)))
        return None

    def write_markers(self, body: Any, done: Callable[[Any], None]) -> None:
        """A WriteTxnMarkers request's ``body``: ``done(response body)`` once every marker is
        written (from the produce purgatory, or at once). What the request does, and what a
        transaction coordinator of this broker calls for the partitions this broker leads (no
        round trip through its own listener)."""
        rm = self.replica_manager
        now = int(time.time() * 1000)
        markers = []
        written: list[_Written] = []
        for m in body.markers:
            commit = bool(m.transaction_result)
            marker = EndTransactionMarker(ControlRecordType.COMMIT if commit else ControlRecordType.ABORT,
                                          m.coordinator_epoch)
            topics = []
            for t in m.topics:
                results = []
                for index in t.partition_indexes:
                    result = PartitionResult(partition_index=index, error_code=E.NONE)
                    results.append(result)
                    if (t.name, index) not in rm.partitions:
                        # Kafka's getMagic: no replica here at all.
                        result.error_code = E.UNKNOWN_TOPIC_OR_PARTITION
                        continue
                    batch = build_marker_batch(marker, m.producer_id, m.producer_epoch, timestamp=now)
                    try:
                        info, _ = rm.append_to_leader(t.name, index, bytearray(batch), -1,
                                                      origin=AppendOrigin.COORDINATOR)
                    except ApiError as e:
                        result.error_code = e.code
                        log.debug("Marker of producer %d to %s-%d refused: %s", m.producer_id, t.name, index,
                                  e.message)
                        continue
                    written.append(_Written(t.name, result, info.last_offset + 1, m.producer_id, commit))
                topics.append(TopicResult(name=t.name, partitions=results))
            markers.append(MarkerResult(producer_id=m.producer_id, topics=topics))
        answer = R(markers=markers)
        if not written:
            done(answer)
            return
        operation = DelayedMarkers(self.timeout_ms, answer, written, self, done)
        rm.produce_purgatory.try_complete_else_watch(
            operation, sorted({partition_key(w.topic, w.result.partition_index) for w in written}, key=str))

    def markers_written(self, written: list[_Written]) -> None:
        """The markers that reached __consumer_offsets end their transactions' offsets there."""
        coordinator = self.group_coordinator
        if coordinator is None:
            return
        for w in written:
            if w.topic == OFFSETS_TOPIC and w.result.error_code == E.NONE:
                try:
                    coordinator.complete_transaction(w.result.partition_index, w.producer_id, w.commit)
                except Exception:  # Kafka logs it: the marker is written whatever the groups make of it
                    log.exception("Ending the transaction of producer %d in %s-%d failed", w.producer_id,
                                  OFFSETS_TOPIC, w.result.partition_index)


class DelayedMarkers(DelayedOperation):
    """A WriteTxnMarkers waiting for the high watermark of each partition it appended to (Kafka's
    DelayedProduce for the coordinator's append)."""

    def __init__(self, timeout_ms: int, body: Any, written: list[_Written], apis: TxnMarkerApis,
                 done: Callable[[Any], None]) -> None:
        super().__init__(max(timeout_ms, 0))
        self.body, self.apis, self.done = body, apis, done
        self.written = written
        self.waiting = list(written)

    def _pending(self) -> list[_Written]:
        rm = self.apis.replica_manager
        left = []
        for w in self.waiting:
            partition = rm.partitions.get((w.topic, w.result.partition_index))
            if partition is None or not partition.is_leader:
                w.result.error_code = E.NOT_LEADER_OR_FOLLOWER
                continue
            reached, error = partition.required_offset_reached(w.required)
            if not reached:
                left.append(w)
            elif error != E.NONE:
                w.result.error_code = error
        self.waiting = left
        return left

    def try_complete(self) -> bool:
        if self._pending():
            return False
        return self.force_complete()

    def on_complete(self) -> None:
        for w in self._pending():
            w.result.error_code = E.REQUEST_TIMED_OUT
        self.apis.markers_written(self.written)
        self.done(self.body)

    def on_expiration(self) -> None:
        pass  # on_complete answered REQUEST_TIMED_OUT for what was still waiting
