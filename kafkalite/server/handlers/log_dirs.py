"""DescribeLogDirs: this broker's log dirs and the partitions' logs each holds, as Kafka's
KafkaApis.handleDescribeLogDirsRequest and ReplicaManager.describeLogDirs answer.

Every dir of ``log.dirs`` is listed, by its absolute path, in the configured order. Under each, one
entry per topic with a log in it, and in that entry the logs asked for: null Topics asks for every
log the broker has, named ones for those (topic, partition) pairs only. As Kafka answers, a topic
with a log in the dir but none of its partitions asked for is still listed, with no partitions;
topics and partitions the broker has no log of are absent. A partition's size is the bytes of all
its segments; its offset lag is max(high watermark - log end offset, 0) for the log of a partition
the broker hosts (Kafka's getLogEndOffsetLag for a current replica), -1 (INVALID_OFFSET_LAG) for a
log it keeps but does not host. kafkalite has no future logs (AlterReplicaLogDirs is not served):
IsFutureKey is always false.

A dir's TotalBytes and UsableBytes (v4) are its file system's (statvfs: every block, and the
blocks an unprivileged user may still take, as Java's FileStore.getTotalSpace / getUsableSpace).
With log.storage=memory the logs are in memory files (storage/volume.py's MemoryVolume), which
have no capacity of their own: both are -1 (UNKNOWN_VOLUME_BYTES), not the figures of a disk the
logs are not on. A dir whose file system cannot be asked is answered KAFKA_STORAGE_ERROR with no
topics, as Kafka answers an offline dir (kafkalite takes no dir offline otherwise).

There is no authorizer: DESCRIBE on the CLUSTER is allowed, the top-level error (v3+) is NONE.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import error_codes as E
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
        topics = request.body.topics
        if topics is None:
            asked: set[TopicPartition] = set(logs)
        else:
            asked = {TopicPartition(t.topic, p) for t in topics for p in t.partitions}
        on_disk = isinstance(lm.volume, FileVolume)
        results = [self._describe_dir(path, logs, asked, on_disk) for path in lm.log_dirs]
        return respond(request, R(throttle_time_ms=0, error_code=E.NONE, results=results))

    def _describe_dir(self, path: Path, logs: dict[TopicPartition, Log], asked: set[TopicPartition],
                      on_disk: bool) -> Any:
        log_dir = str(path.absolute())
        total = usable = dld.UNKNOWN_VOLUME_BYTES
        if on_disk:
            try:
                total, usable = volume_bytes(path)
            except OSError:
                return RESULT(error_code=E.KAFKA_STORAGE_ERROR, log_dir=log_dir, topics=[])
        here = sorted(((tp, lg) for tp, lg in logs.items() if lg.dir.parent == path), key=lambda x: x[0])
        by_topic: dict[str, list[Any]] = {}
        for tp, lg in here:
            partitions = by_topic.setdefault(tp.topic, [])
            if tp in asked:
                partitions.append(PARTITION(partition_index=tp.partition, partition_size=lg.size,
                                            offset_lag=self._offset_lag(tp, lg), is_future_key=False))
        return RESULT(error_code=E.NONE, log_dir=log_dir, topics=_topics(by_topic.items()),
                      total_bytes=total, usable_bytes=usable)

    def _offset_lag(self, tp: TopicPartition, lg: Log) -> int:
        partition = self.replica_manager.partitions.get((tp.topic, tp.partition))
        if partition is None:  # a log the broker keeps but does not host (Kafka: no local log)
            return dld.INVALID_OFFSET_LAG
        return max(partition.log.high_watermark - lg.log_end_offset, 0)


def _topics(by_topic: Iterable[tuple[str, list[Any]]]) -> list[Any]:
    return [TOPIC(name=name, partitions=partitions) for name, partitions in by_topic]
