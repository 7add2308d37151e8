"""Names of a log's files and directories, as Kafka's LogFileUtils and UnifiedLog spell them.

A partition lives in ``<log.dir>/<topic>-<partition>/``; each segment is a set of files named by
its base offset zero-padded to 20 digits, so that ``ls`` sorts them numerically.
"""

from __future__ import annotations

from pathlib import Path

LOG_FILE_SUFFIX = ".log"
INDEX_FILE_SUFFIX = ".index"
TIME_INDEX_FILE_SUFFIX = ".timeindex"
TXN_INDEX_FILE_SUFFIX = ".txnindex"
PRODUCER_SNAPSHOT_FILE_SUFFIX = ".snapshot"
DELETED_FILE_SUFFIX = ".deleted"
CLEANED_FILE_SUFFIX = ".cleaned"
SWAP_FILE_SUFFIX = ".swap"
TEMP_FILE_SUFFIX = ".tmp"

LEADER_EPOCH_CHECKPOINT_FILENAME = "leader-epoch-checkpoint"
RECOVERY_POINT_CHECKPOINT_FILE = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT_FILE = "log-start-offset-checkpoint"
REPLICATION_OFFSET_CHECKPOINT_FILE = "replication-offset-checkpoint"
CLEAN_SHUTDOWN_FILE_NAME = ".kafka_cleanshutdown"


def filename_prefix_from_offset(offset: int) -> str:
    """``offset`` zero-padded to 20 digits (Kafka's filenamePrefixFromOffset)."""
    return f"{offset:020d}"


def offset_from_file_name(name: str) -> int:
    """The base offset a segment file's name starts with."""
    return int(name[: name.index(".")])


def log_file(directory: Path, offset: int, suffix: str = "") -> Path:
    return directory / (filename_prefix_from_offset(offset) + LOG_FILE_SUFFIX + suffix)


def offset_index_file(directory: Path, offset: int, suffix: str = "") -> Path:
    return directory / (filename_prefix_from_offset(offset) + INDEX_FILE_SUFFIX + suffix)


def time_index_file(directory: Path, offset: int, suffix: str = "") -> Path:
    return directory / (filename_prefix_from_offset(offset) + TIME_INDEX_FILE_SUFFIX + suffix)


def transaction_index_file(directory: Path, offset: int, suffix: str = "") -> Path:
    """The segment's aborted transactions (LogFileUtils.transactionIndexFile)."""
    return directory / (filename_prefix_from_offset(offset) + TXN_INDEX_FILE_SUFFIX + suffix)


def producer_snapshot_file(directory: Path, offset: int) -> Path:
    """The producer state as of ``offset`` (LogFileUtils.producerSnapshotFile)."""
    return directory / (filename_prefix_from_offset(offset) + PRODUCER_SNAPSHOT_FILE_SUFFIX)


def partition_dir_name(topic: str, partition: int) -> str:
    """``<topic>-<partition>`` (UnifiedLog.logDirName)."""
    return f"{topic}-{partition}"


def parse_partition_dir_name(name: str) -> tuple[str, int]:
    """(topic, partition) from a directory name; the partition follows the last dash, since topic
    names may contain dashes (UnifiedLog.parseTopicPartitionName). Raises ValueError otherwise."""
    topic, dash, partition = name.rpartition("-")
    if not dash or not topic or not partition.isdigit():
        raise ValueError(f"{name!r} is not a partition directory name (topic-partition)")
    return topic, int(partition)


DELETE_DIR_SUFFIX = "-delete"  # a deleted partition's directory until it is removed (Kafka's)


def delete_dir_name(topic: str, partition: int, unique: str) -> str:
    """``<topic>-<partition>.<unique>-delete`` (LocalLog.logDeleteDirName)."""
    return f"{topic}-{partition}.{unique}{DELETE_DIR_SUFFIX}"


FUTURE_DIR_SUFFIX = "-future"  # a replica being moved to this log dir (AlterReplicaLogDirs, KIP-113)


def future_dir_name(topic: str, partition: int, unique: str) -> str:
    """``<topic>-<partition>.<unique>-future`` (LocalLog.logFutureDirName)."""
    return f"{topic}-{partition}.{unique}{FUTURE_DIR_SUFFIX}"


def parse_log_dir_name(name: str) -> tuple[str, int]:
    """(topic, partition) of a log's directory: ``<topic>-<partition>``, or a deleted or future
    log's ``<topic>-<partition>.<unique>-delete|-future`` (UnifiedLog.parseTopicPartitionName).
    Raises ValueError otherwise."""
    if name.endswith((DELETE_DIR_SUFFIX, FUTURE_DIR_SUFFIX)):
        base, dot, _ = name.rpartition(".")
        if not dot:
            raise ValueError(f"{name!r} is not a deleted or future log's directory name")
        name = base
    return parse_partition_dir_name(name)
