"""DescribeLogDirs and AlterReplicaLogDirs: this broker's log dirs, the partitions' logs each
holds, and moving a replica to another dir, as Kafka's KafkaApis.handleDescribeLogDirsRequest /
handleAlterReplicaLogDirsRequest and ReplicaManager.describeLogDirs / alterReplicaLogDirs answer.

**DescribeLogDirs.** Every dir of ``log.dirs`` is listed, by its absolute path, in the configured
order. An offline dir (its log dir failed, storage/log_dir_failure.py) is answered
KAFKA_STORAGE_ERROR with no topics, as Kafka answers it. Under an online dir, one entry per topic
with a log in it, and in that entry the logs asked for: null Topics asks for every log the broker
has, named ones for those (topic, partition) pairs only. As Kafka answers, a topic with a log in
the dir but none of its partitions asked for is still listed, with no partitions; topics and
partitions the broker has no log of are absent. A partition's size is the bytes of all its
segments. Its offset lag (Kafka's getLogEndOffsetLag) is, for a current log, max(high watermark -
log end offset, 0) if the broker hosts the partition; for a future log (a replica being moved
here by AlterReplicaLogDirs, IsFutureKey true) the current log's end offset minus the future
log's; -1 (INVALID_OFFSET_LAG) for a log the broker keeps but does not host.

A dir's TotalBytes and UsableBytes (v4) are its file system's (statvfs: every block, and the
blocks an unprivileged user may still take, as Java's FileStore.getTotalSpace / getUsableSpace).
With log.storage=memory the logs are in memory files (storage/volume.py's MemoryVolume), which
have no capacity of their own: both are -1 (UNKNOWN_VOLUME_BYTES), not the figures of a disk the
logs are not on. A dir whose file system cannot be asked is answered KAFKA_STORAGE_ERROR too.

**AlterReplicaLogDirs.** Each partition named under a dir is to move there (ReplicaManager's
alter_replica_log_dirs): NONE once its future log is created (or it is there already),
LOG_DIR_NOT_FOUND for a path that is no dir of log.dirs, KAFKA_STORAGE_ERROR for an offline
destination or partition (or while any dir is offline: no future log is made then),
REPLICA_NOT_AVAILABLE for a partition this broker does not host (the dir is remembered: its log is
created there if it comes), INVALID_TOPIC_EXCEPTION if the future log's directory name would pass
255 characters. Answers are grouped by topic in the order asked.

There is no authorizer: DESCRIBE and ALTER on the CLUSTER are allowed, the top-level error (v3+)
is NONE.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import alter_replica_log_dirs as arld
from kafkalite.protocol.messages import describe_log_dirs as dld
from kafkalite.storage.checkpoint import TopicPartition
from kafkalite.storage.log import Log
from kafkalite.storage.volume import FileVolume

from ..replication.replica_manager import ReplicaManager
from ..responses import respond

R = dld.RESPONSE
RESULT = dld.DESCRIBE_LOG_DIRS_RESULT
TOPIC = dld.DESCRIBE_LOG_DIRS_TOPIC
PARTITION = dld.DESCRIBE_LOG_DIRS_PARTITION


def volume_bytes(path: Path) -> tuple[int, int]:
    """(total, usable) bytes of the file system ``path`` is on; OSError if it cannot be asked."""
    st = os.statvfs(path)
    return st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize


class LogDirApis:
    def __init__(self, replica_manager: ReplicaManager) -> None:
        self.replica_manager = replica_manager

    def describe_log_dirs(self, request: Request) -> Response:
        lm = self.replica_manager.log_manager
        logs = lm.all_logs()
        futures = lm.all_future_logs()
        topics = request.body.topics
        if topics is None:
            asked: set[TopicPartition] = set(logs) | set(futures)
        else:
            asked = {TopicPartition(t.topic, p) for t in topics for p in t.partitions}
        on_disk = isinstance(lm.volume, FileVolume)
        results = [self._describe_dir(path, logs, futures, asked, on_disk) for path in lm.log_dirs]
        return respond(request, R(throttle_time_ms=0, error_code=E.NONE, results=results))

    def _describe_dir(self, path: Path, logs: dict[TopicPartition, Log], futures: dict[TopicPartition, Log],
                      asked: set[TopicPartition], on_disk: bool) -> Any:
        lm = self.replica_manager.log_manager
        log_dir = str(path.absolute())
        if not lm.is_online(path):
            return RESULT(error_code=E.KAFKA_STORAGE_ERROR, log_dir=log_dir, topics=[])
        total = usable = dld.UNKNOWN_VOLUME_BYTES
        if on_disk:
            try:
                total, usable = volume_bytes(path)
            except OSError:
                return RESULT(error_code=E.KAFKA_STORAGE_ERROR, log_dir=log_dir, topics=[])
        here = [(tp, lg, False) for tp, lg in logs.items() if lg.dir.parent == path]
        here += [(tp, lg, True) for tp, lg in futures.items() if lg.dir.parent == path]
        by_topic: dict[str, list[Any]] = {}
        for tp, lg, future in sorted(here, key=lambda x: x[0]):
            partitions = by_topic.setdefault(tp.topic, [])
            if tp in asked:
                partitions.append(PARTITION(partition_index=tp.partition, partition_size=lg.size,
                                            offset_lag=self._offset_lag(tp, lg, future),
                                            is_future_key=future))
        return RESULT(error_code=E.NONE, log_dir=log_dir, topics=_topics(by_topic.items()),
                      total_bytes=total, usable_bytes=usable)

    def _offset_lag(self, tp: TopicPartition, lg: Log, future: bool) -> int:
        partition = self.replica_manager.partitions.get((tp.topic, tp.partition))
        if partition is None:  # a log the broker keeps but does not host (Kafka: no local log)
            return dld.INVALID_OFFSET_LAG
        if future:
            return partition.log.log_end_offset - lg.log_end_offset
        return max(partition.log.high_watermark - lg.log_end_offset, 0)

    def alter_replica_log_dirs(self, request: Request) -> Response:
        destinations: dict[tuple[str, int], str] = {}
        for d in request.body.dirs:
            for t in d.topics:
                for p in t.partitions:
                    destinations[(t.name, p)] = d.path
        codes = self.replica_manager.alter_replica_log_dirs(destinations)
        by_topic: dict[str, list[Any]] = {}
        for (topic, index), code in codes.items():
            by_topic.setdefault(topic, []).append(
                arld.ALTER_REPLICA_LOG_DIR_PARTITION_RESULT(partition_index=index, error_code=code))
        results = [arld.ALTER_REPLICA_LOG_DIR_TOPIC_RESULT(topic_name=topic, partitions=partitions)
                   for topic, partitions in by_topic.items()]
        return respond(request, arld.RESPONSE(throttle_time_ms=0, results=results))


def _topics(by_topic: Iterable[tuple[str, list[Any]]]) -> list[Any]:
    return [TOPIC(name=name, partitions=partitions) for name, partitions in by_topic]
