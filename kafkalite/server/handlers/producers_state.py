"""DescribeProducers: the producers a partition leader knows of (KIP-664, Kafka's
ReplicaManager.activeProducerState, what kafka-transactions.sh describe-producers shows): for each
partition its producers' id, epoch, last sequence, last timestamp, the coordinator epoch of their
last marker and the first offset of their open transaction (-1: none). Only the leader answers:
a follower NOT_LEADER_OR_FOLLOWER, a partition not hosted here UNKNOWN_TOPIC_OR_PARTITION (or
NOT_LEADER_OR_FOLLOWER when the metadata knows it)."""

from __future__ import annotations

from typing import Any

from kafkalite.common.errors import ApiError
from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import describe_producers

from ..replication.replica_manager import ReplicaManager
from ..responses import respond

R = describe_producers.RESPONSE
TopicResponse = R["topics"]
PartitionResponse = TopicResponse["partitions"]
ProducerState = PartitionResponse["active_producers"]


class ProducerStateApis:
    def __init__(self, replica_manager: ReplicaManager) -> None:
        self.replica_manager = replica_manager

    def describe_producers(self, request: Request) -> Response:
        topics = []
        for t in request.body.topics:
            topics.append(TopicResponse(name=t.name, partitions=[
                self._partition(t.name, index) for index in t.partition_indexes]))
        return respond(request, R(throttle_time_ms=0, topics=topics))

    def _partition(self, topic: str, index: int) -> Any:
        try:
            partition = self.replica_manager.get_leader_partition(topic, index)
        except ApiError as e:
            return PartitionResponse(partition_index=index, error_code=e.code, error_message=e.message,
                                     active_producers=[])
        producers = partition.log.producer_state.active_producers()
        states = [ProducerState(producer_id=pid, producer_epoch=entry.producer_epoch,
                                last_sequence=entry.last_seq, last_timestamp=entry.last_timestamp,
                                coordinator_epoch=entry.coordinator_epoch,
                                current_txn_start_offset=entry.current_txn_first_offset)
                  for pid, entry in sorted(producers.items())]
        return PartitionResponse(partition_index=index, error_code=E.NONE, error_message=None,
                                 active_producers=states)
