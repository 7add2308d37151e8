"""TxnOffsetCommit: a transactional producer commits a group's offsets inside its transaction
(KIP-98's consume-transform-produce; Kafka's KafkaApis.handleTxnOffsetCommitRequest), asked of
the group's coordinator after AddOffsetsToTxn put the group's partition of __consumer_offsets in
the transaction.

The offsets are appended as the producer's transactional batch and stay pending until the
transaction's marker (WriteTxnMarkers) reaches that partition (GroupCoordinator.commit_txn_offsets).
v3+ carries the member's generation, member id and instance id, checked when given (KIP-447);
a partition the metadata does not know is answered UNKNOWN_TOPIC_OR_PARTITION on its own, the
others get the commit's error. The answer waits for the append (acks=all).
"""

from __future__ import annotations

from collections.abc import Callable

from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import txn_offset_commit

from ..coordinator.group_coordinator import GroupCoordinator
from ..coordinator.results import NO_MEMBER
from ..metadata_cache import MetadataCache
from ..responses import respond
from .groups import requested_offsets

R = txn_offset_commit.RESPONSE
TopicResponse = R["topics"]
PartitionResponse = TopicResponse["partitions"]


class TxnOffsetApis:
    def __init__(self, coordinator: GroupCoordinator | None, send_response: Callable[[Response], None],
                 metadata_cache: MetadataCache | None = None) -> None:
        self.coordinator = coordinator
        self.send_response = send_response
        self.metadata_cache = metadata_cache

    def txn_offset_commit(self, request: Request) -> Response | None:
        body, version = request.body, request.api_version
        offsets, unknown = requested_offsets(body.topics, self.metadata_cache, with_leader_epoch=version >= 2)

        def answer(error: int) -> Response:
            return respond(request, R(throttle_time_ms=0, topics=[TopicResponse(name=t.name, partitions=[
                PartitionResponse(partition_index=p.partition_index,
                                  error_code=E.UNKNOWN_TOPIC_OR_PARTITION
                                  if (t.name, p.partition_index) in unknown else error)
                for p in t.partitions]) for t in body.topics]))

        if self.coordinator is None:
            return answer(E.COORDINATOR_NOT_AVAILABLE)
        if not offsets:
            return answer(E.NONE)
        member_id = body.member_id if version >= 3 else NO_MEMBER
        generation = body.generation_id if version >= 3 else -1
        instance_id = body.group_instance_id if version >= 3 else None
        self.coordinator.commit_txn_offsets(body.group_id, body.producer_id, body.producer_epoch, member_id,
                                            instance_id, generation, offsets,
                                            lambda error: self.send_response(answer(error)))
        return None
