"""ListOffsets, OffsetForLeaderEpoch and DeleteRecords: the offsets of a partition's log, asked of
its leader (Kafka's Partition.fetchOffsetForTimestamp, lastOffsetForLeaderEpoch and
deleteRecordsOnLeader).

ListOffsets' special timestamps: -1 latest (the high watermark; the last stable offset for
read_committed, isolation level 1 of v2+), -2 earliest (the log start offset), -3 the record with
the largest timestamp (v7+), -4 earliest local (v8+, the log start: no tiered storage), -5 latest
tiered (v9+, none: -1). A timestamp >= 0 finds the first record at or after it through the time
index, below what the consumer may fetch (the high watermark, or the last stable offset for
read_committed); none is offset -1 (Kafka's fetchOffsetForTimestamp).
"""

from __future__ import annotations

from kafkalite.common.errors import ApiError
from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import delete_records, list_offsets, offset_for_leader_epoch

from ..replication.partition import NO_LEADER_EPOCH, Partition
from ..replication.replica_manager import ReplicaManager
from ..responses import respond

LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED = -1, -2, -3, -4, -5
DEBUGGING_REPLICA_ID = -2  # may ask any replica, not only the leader (Kafka's)
NO_TIMESTAMP = -1
READ_COMMITTED = 1


class OffsetApis:
    def __init__(self, replica_manager: ReplicaManager) -> None:
        self.replica_manager = replica_manager

    def _partition(self, topic: str, index: int, replica_id: int, current_leader_epoch: int) -> Partition:
        rm = self.replica_manager
        if replica_id == DEBUGGING_REPLICA_ID:
            partition = rm.get_partition(topic, index)
            partition.check_leader_epoch(current_leader_epoch)
            return partition
        return rm.get_leader_partition(topic, index, current_leader_epoch)

    # --- ListOffsets --------------------------------------------------------------------------

    def list_offsets(self, request: Request) -> Response:
        req, version = request.body, request.api_version
        R = list_offsets.RESPONSE
        T = R["topics"]
        P = T["partitions"]
        topics = []
        for t in req.topics:
            results = []
            for p in t.partitions:
                result = P(partition_index=p.partition_index, error_code=E.NONE, old_style_offsets=[],
                           timestamp=NO_TIMESTAMP, offset=-1, leader_epoch=-1)
                try:
                    epoch = p.current_leader_epoch if version >= 4 else NO_LEADER_EPOCH
                    partition = self._partition(t.name, p.partition_index, req.replica_id, epoch)
                    timestamp, offset, leader_epoch = self._offset_for(
                        partition, p.timestamp, version, req.replica_id,
                        read_committed=version >= 2 and req.isolation_level == READ_COMMITTED)
                except ApiError as e:
                    result.error_code = e.code
                else:
                    result.timestamp, result.offset, result.leader_epoch = timestamp, offset, leader_epoch
                    if version == 0:
                        result.old_style_offsets = [offset] if offset >= 0 else []
                results.append(result)
            topics.append(T(name=t.name, partitions=results))
        return respond(request, R(throttle_time_ms=0, topics=topics))

    @staticmethod
    def _offset_for(partition: Partition, timestamp: int, version: int, replica_id: int,
                    read_committed: bool = False) -> tuple[int, int, int]:
        """(timestamp, offset, leader epoch) answering ``timestamp``."""
        log = partition.log
        # Consumers see below the high watermark (read_committed ones below the last stable
        # offset); replicas (and the debugging id) the whole log.
        if replica_id != -1:
            fetchable = log.log_end_offset
        elif read_committed:
            fetchable = log.last_stable_offset
        else:
            fetchable = log.high_watermark
        cache = log.leader_epoch_cache
        if timestamp == LATEST:
            return NO_TIMESTAMP, fetchable, partition.leader_epoch
        if timestamp in (EARLIEST, EARLIEST_LOCAL):
            start = log.log_start_offset
            epoch = cache.epoch_for_offset(start)
            return NO_TIMESTAMP, start, -1 if epoch is None else epoch
        if timestamp == LATEST_TIERED:
            return NO_TIMESTAMP, -1, -1
        if timestamp == MAX_TIMESTAMP:
            if version < 7:
                raise ApiError(E.UNSUPPORTED_VERSION, "MAX_TIMESTAMP needs ListOffsets v7+")
            found = log.fetch_max_timestamp()
        elif timestamp < 0:
            raise ApiError(E.INVALID_REQUEST, f"Unknown special timestamp {timestamp}")
        else:
            found = log.fetch_offset_by_timestamp(timestamp)
        if found is None or found.offset >= fetchable:
            return NO_TIMESTAMP, -1, -1
        epoch = found.leader_epoch if found.leader_epoch is not None else cache.epoch_for_offset(found.offset)
        return found.timestamp, found.offset, -1 if epoch is None else epoch

    # --- OffsetForLeaderEpoch -----------------------------------------------------------------

    def offset_for_leader_epoch(self, request: Request) -> Response:
        req, version = request.body, request.api_version
        R = offset_for_leader_epoch.RESPONSE
        T = R["topics"]
        P = T["partitions"]
        replica_id = req.replica_id if version >= 3 else DEBUGGING_REPLICA_ID
        topics = []
        for t in req.topics:
            results = []
            for p in t.partitions:
                result = P(error_code=E.NONE, partition=p.partition, leader_epoch=-1, end_offset=-1)
                try:
                    epoch = p.current_leader_epoch if version >= 2 else NO_LEADER_EPOCH
                    # Kafka asks the leader unless the debugging id asks (also the default of v0-2).
                    if replica_id == DEBUGGING_REPLICA_ID and version >= 3:
                        partition = self._partition(t.topic, p.partition, replica_id, epoch)
                    else:
                        partition = self.replica_manager.get_leader_partition(t.topic, p.partition, epoch)
                    found = partition.log.end_offset_for_epoch(p.leader_epoch)
                except ApiError as e:
                    result.error_code = e.code
                else:
                    if found is not None:
                        result.end_offset, result.leader_epoch = found
                results.append(result)
            topics.append(T(topic=t.topic, partitions=results))
        return respond(request, R(throttle_time_ms=0, topics=topics))

    # --- DeleteRecords ------------------------------------------------------------------------

    def delete_records(self, request: Request) -> Response:
        req = request.body
        R = delete_records.RESPONSE
        T = R["topics"]
        P = T["partitions"]
        topics = []
        for t in req.topics:
            results = []
            for p in t.partitions:
                result = P(partition_index=p.partition_index, low_watermark=-1, error_code=E.NONE)
                try:
                    result.low_watermark = self._delete_records(t.name, p.partition_index, p.offset)
                except ApiError as e:
                    result.error_code = e.code
                results.append(result)
            topics.append(T(name=t.name, partitions=results))
        return respond(request, R(throttle_time_ms=0, topics=topics))

    def _delete_records(self, topic: str, index: int, offset: int) -> int:
        partition = self.replica_manager.get_leader_partition(topic, index)
        log = partition.log
        target = log.high_watermark if offset == -1 else offset
        if target < 0 or target > log.high_watermark:
            raise ApiError(E.OFFSET_OUT_OF_RANGE, f"Cannot delete records of {topic}-{index} up to {offset}: "
                           f"the high watermark is {log.high_watermark}")
        # The segments wholly below the new start go at the next retention check, as in Kafka.
        log.maybe_increment_log_start_offset(target)
        # With replicas the low watermark is the lowest of theirs; replication keeps them (next).
        return log.log_start_offset
