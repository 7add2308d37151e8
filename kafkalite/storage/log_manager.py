"""The logs of every ``log.dirs`` entry (Kafka's LogManager): loading them at start-up, creating
and deleting partitions' logs, the per-dir checkpoint files, the clean shutdown marker, and the
periodic work the broker schedules (retention, flushing rolled segments, checkpoints); it starts
no thread of its own.

Each log dir holds, besides the partitions' directories::

    recovery-point-offset-checkpoint   offsets below which each log is known to be on disk
    log-start-offset-checkpoint        each log's start offset (moved by retention, DeleteRecords)
    replication-offset-checkpoint      each log's high watermark
    .kafka_cleanshutdown               present only between a clean shutdown and the next start

Start-up with the marker trusts every segment; without it, each log re-reads its segments from
its recovery point (Log's recovery). Either way the marker is deleted once the dir's logs are
loaded, so a crash from then on is seen as unclean.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path

from kafkalite.storage.checkpoint import CleanShutdownFile, OffsetCheckpointFile, TopicPartition
from kafkalite.storage.cleaner import LogCleaner
from kafkalite.storage.config import CleanerConfig, LogConfig
from kafkalite.storage.files import (
    DELETE_DIR_SUFFIX,
    LOG_START_OFFSET_CHECKPOINT_FILE,
    RECOVERY_POINT_CHECKPOINT_FILE,
    REPLICATION_OFFSET_CHECKPOINT_FILE,
    delete_dir_name,
    parse_partition_dir_name,
    partition_dir_name,
)
from kafkalite.storage.log import Log, wall_clock_ms
from kafkalite.storage.producer_state import DEFAULT_PRODUCER_ID_EXPIRATION_MS
from kafkalite.storage.volume import FILES, Volume

log = logging.getLogger("kafkalite.storage.log_manager")


class _LogDir:
    """One log dir and its checkpoint files."""

    def __init__(self, path: Path, volume: Volume) -> None:
        self.path = path
        self.recovery_points = OffsetCheckpointFile(path / RECOVERY_POINT_CHECKPOINT_FILE, volume)
        self.log_start_offsets = OffsetCheckpointFile(path / LOG_START_OFFSET_CHECKPOINT_FILE, volume)
        self.high_watermarks = OffsetCheckpointFile(path / REPLICATION_OFFSET_CHECKPOINT_FILE, volume)
        self.clean_shutdown = CleanShutdownFile(path, volume)


class LogManager:
    """The logs of ``log_dirs``, loaded at construction. ``config_for(topic)`` gives a topic's
    LogConfig (the defaults with its overrides) for logs found on disk; new logs may be given
    theirs. ``producer_id_expiration_ms`` is the broker's producer.id.expiration.ms; ``volume``
    where the files are (on disk unless told otherwise, volume.py)."""

    def __init__(
        self,
        log_dirs: Iterable[Path | str],
        config_for: Callable[[str], LogConfig] | None = None,
        now_ms: Callable[[], int] = wall_clock_ms,
        producer_id_expiration_ms: int = DEFAULT_PRODUCER_ID_EXPIRATION_MS,
        cleaner_config: CleanerConfig | None = None,
        volume: Volume = FILES,
    ) -> None:
        self.volume = volume
        self._dirs = [_LogDir(Path(d), volume) for d in log_dirs]
        if not self._dirs:
            raise ValueError("at least one log dir is needed")
        self._config_for = config_for or (lambda topic: LogConfig())
        self._now_ms = now_ms
        self._producer_id_expiration_ms = producer_id_expiration_ms
        self._lock = threading.Lock()
        self._logs: dict[TopicPartition, Log] = {}
        self._deleting: list[tuple[int, Log, Path]] = []  # (remove at ms, log, its renamed directory)
        self._dir_of: dict[TopicPartition, _LogDir] = {}
        for log_dir in self._dirs:
            self._load_dir(log_dir)
        # Kafka's LogManager owns the cleaner; its threads start with start_cleaner().
        self.cleaner = LogCleaner(cleaner_config or CleanerConfig(enable=False),
                                  lambda: {d.path: logs for d, logs in self._by_dir()}, now_ms, volume)

    def start_cleaner(self) -> None:
        """The log cleaner's threads (log.cleaner.enable, log.cleaner.threads)."""
        self.cleaner.startup()

    def _load_dir(self, log_dir: _LogDir) -> None:
        volume = self.volume
        volume.mkdir(log_dir.path)
        clean = log_dir.clean_shutdown.exists()
        recovery_points = log_dir.recovery_points.read()
        log_starts = log_dir.log_start_offsets.read()
        high_watermarks = log_dir.high_watermarks.read()
        if not clean:
            log.info(
                "No clean shutdown marker in %s: recovering its logs from their recovery points", log_dir.path
            )
        for child in sorted(volume.children(log_dir.path)):
            if not volume.is_dir(child):
                continue
            if child.name.endswith(DELETE_DIR_SUFFIX):  # deleted before the last stop: remove it now
                volume.rmtree(child)
                continue
            try:
                tp = TopicPartition(*parse_partition_dir_name(child.name))
            except ValueError:
                continue  # not a partition (Kafka's -delete and -future dirs, other state)
            if tp in self._logs:
                raise RuntimeError(f"Duplicate log directories for {tp.topic}-{tp.partition}: {child}")
            loaded = Log(
                child,
                self._config_for(tp.topic),
                log_start_offset=log_starts.get(tp, 0),
                recovery_point=recovery_points.get(tp, 0),
                had_clean_shutdown=clean,
                now_ms=self._now_ms,
                producer_id_expiration_ms=self._producer_id_expiration_ms,
                volume=volume,
            )
            loaded.update_high_watermark(high_watermarks.get(tp, 0))
            self._logs[tp] = loaded
            self._dir_of[tp] = log_dir
        log_dir.clean_shutdown.delete()

    # -- logs ------------------------------------------------------------------------------------

    @property
    def log_dirs(self) -> list[Path]:
        return [d.path for d in self._dirs]

    def get_log(self, topic: str, partition: int) -> Log | None:
        return self._logs.get(TopicPartition(topic, partition))

    def all_logs(self) -> dict[TopicPartition, Log]:
        with self._lock:
            return dict(self._logs)

    def get_or_create(self, topic: str, partition: int, config: LogConfig | None = None) -> Log:
        """The partition's log, created in the log dir with the fewest logs if there is none."""
        tp = TopicPartition(topic, partition)
        with self._lock:
            existing = self._logs.get(tp)
            if existing is not None:
                return existing
            counts = {id(d): 0 for d in self._dirs}
            for d in self._dir_of.values():
                counts[id(d)] += 1
            log_dir = min(self._dirs, key=lambda d: counts[id(d)])
            created = Log(
                log_dir.path / partition_dir_name(topic, partition),
                config or self._config_for(topic),
                had_clean_shutdown=True,  # nothing to recover in a new directory
                now_ms=self._now_ms,
                producer_id_expiration_ms=self._producer_id_expiration_ms,
                volume=self.volume,
            )
            self._logs[tp] = created
            self._dir_of[tp] = log_dir
            log.info("Created log for partition %s-%d in %s", topic, partition, log_dir.path)
            return created

    def set_producer_id_expiration_ms(self, ms: int) -> None:
        """producer.id.expiration.ms changed while running: every log, and those made later."""
        self._producer_id_expiration_ms = ms
        for partition_log in self.all_logs().values():
            partition_log.producer_id_expiration_ms = ms

    def update_config(self, topic: str, config: LogConfig) -> None:
        """New settings for every partition of ``topic`` (they apply from the next append or check)."""
        for tp, partition_log in self.all_logs().items():
            if tp.topic == topic:
                partition_log.config = config

    def delete(self, topic: str, partition: int) -> bool:
        """Take the partition's log away; whether there was one. As Kafka does, its directory is
        renamed ``<topic>-<partition>.<id>-delete`` at once and removed after file.delete.delay.ms
        (``delete_logs``): a response still sending from its files (sendfile) keeps valid file
        descriptors until then."""
        tp = TopicPartition(topic, partition)
        with self._lock:
            removed = self._logs.pop(tp, None)
            log_dir = self._dir_of.pop(tp, None)
        if removed is None or log_dir is None:
            return False
        self.cleaner.forget(log_dir.path, tp)
        renamed = removed.dir.with_name(delete_dir_name(topic, partition, uuid.uuid4().hex))
        self.volume.replace(removed.dir, renamed)
        with self._lock:
            self._deleting.append((self._now_ms() + removed.config.file_delete_delay_ms, removed, renamed))
        self._checkpoint_dir(log_dir)
        log.info("Deleted log for partition %s-%d in %s (files removed after %d ms)", topic, partition,
                 log_dir.path, removed.config.file_delete_delay_ms)
        return True

    def delete_logs(self, force: bool = False) -> int:
        """Remove the directories of deleted logs whose delay has passed (all with ``force``);
        how many (Kafka's kafka-delete-logs task)."""
        now = self._now_ms()
        with self._lock:
            due = [d for d in self._deleting if force or d[0] <= now]
            self._deleting = [d for d in self._deleting if not (force or d[0] <= now)]
        for _, removed, path in due:
            removed.close_handlers()
            self.volume.rmtree(path)
        return len(due)

    # -- the broker's periodic work -----------------------------------------------------------------

    def cleanup_logs(self) -> int:
        """Retention on every log (log.retention.check.interval.ms); the segments deleted."""
        return sum(partition_log.delete_old_segments() for partition_log in self.all_logs().values())

    def remove_expired_producers(self) -> int:
        """Forget, in every log, the producers idle for producer.id.expiration.ms (Kafka runs it
        every producer.id.expiration.check.interval.ms, its own task); how many."""
        now = self._now_ms()
        return sum(partition_log.remove_expired_producers(now) for partition_log in self.all_logs().values())

    def flush_rolled(self) -> None:
        """fsync the segments rolled since the last call and checkpoint the recovery points."""
        for partition_log in self.all_logs().values():
            partition_log.flush_rolled()
        self.checkpoint_recovery_offsets()

    def checkpoint_recovery_offsets(self) -> None:
        for log_dir, logs in self._by_dir():
            log_dir.recovery_points.write({tp: lg.recovery_point for tp, lg in logs.items()})

    def checkpoint_log_start_offsets(self) -> None:
        for log_dir, logs in self._by_dir():
            log_dir.log_start_offsets.write({tp: lg.log_start_offset for tp, lg in logs.items()})

    def checkpoint_high_watermarks(self) -> None:
        for log_dir, logs in self._by_dir():
            log_dir.high_watermarks.write({tp: lg.high_watermark for tp, lg in logs.items()})

    def _checkpoint_dir(self, log_dir: _LogDir) -> None:
        logs = {tp: lg for tp, lg in self.all_logs().items() if self._dir_of.get(tp) is log_dir}
        log_dir.recovery_points.write({tp: lg.recovery_point for tp, lg in logs.items()})
        log_dir.log_start_offsets.write({tp: lg.log_start_offset for tp, lg in logs.items()})
        log_dir.high_watermarks.write({tp: lg.high_watermark for tp, lg in logs.items()})

    def _by_dir(self) -> list[tuple[_LogDir, dict[TopicPartition, Log]]]:
        with self._lock:
            return [
                (d, {tp: lg for tp, lg in self._logs.items() if self._dir_of[tp] is d}) for d in self._dirs
            ]

    # -- shutdown --------------------------------------------------------------------------------

    def shutdown(self, broker_epoch: int = -1) -> None:
        """Kafka's clean shutdown: flush and close every log, write the checkpoints, then the
        marker that lets the next start skip recovery."""
        self.cleaner.shutdown()  # no round may swap segments into a closed log
        for partition_log in self.all_logs().values():
            partition_log.flush()
            partition_log.close()
        self.delete_logs(force=True)  # nothing sends from them any more
        for log_dir in self._dirs:
            self._checkpoint_dir(log_dir)
            log_dir.clean_shutdown.write(broker_epoch)
        log.info("Shut down the logs of %s cleanly", ", ".join(str(d.path) for d in self._dirs))
