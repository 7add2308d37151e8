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

Several dirs (JBOD) are each first class: each has its own checkpoints and marker, the logs of
every dir are loaded at start-up, and a new partition goes to the online dir holding the fewest
logs, future ones included (Kafka's nextLogDirs), unless AlterReplicaLogDirs named a dir for it
before it existed here (``preferred_dirs``).

**Future logs** (AlterReplicaLogDirs, KIP-113): a partition being moved to another dir has,
besides its current log, a future log ``<topic>-<partition>.<uniqueId>-future`` in the
destination, which the ReplicaAlterLogDirsThread fills from the current log and then swaps in
(``replace_current_with_future``): the future directory is renamed to the partition's name and
the current log's directory is deleted as a deleted partition's is. Future logs are loaded at
start-up like the others and checkpointed in their dir; the cleaner leaves a partition with a
future log alone (Kafka pauses its cleaning).

**Failure**: an OSError on a dir's files (a checkpoint, a flush, a load, an append reported by the
ReplicaManager) goes to ``failure_channel`` (log_dir_failure.py), which takes the dir offline;
``handle_log_dir_failure`` then forgets its logs. An offline dir gets no new log and no more
checkpoints; a partition not found in the online dirs while some dir is offline is not created
again unless it is new (its log may be on the offline dir), as Kafka refuses it.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal, TypeVar

from kafkalite.storage.checkpoint import CleanShutdownFile, OffsetCheckpointFile, TopicPartition
from kafkalite.storage.cleaner import LogCleaner
from kafkalite.storage.config import CleanerConfig, LogConfig
from kafkalite.storage.files import (
    DELETE_DIR_SUFFIX,
    FUTURE_DIR_SUFFIX,
    LOG_START_OFFSET_CHECKPOINT_FILE,
    RECOVERY_POINT_CHECKPOINT_FILE,
    REPLICATION_OFFSET_CHECKPOINT_FILE,
    delete_dir_name,
    future_dir_name,
    parse_log_dir_name,
    parse_partition_dir_name,
    partition_dir_name,
)
from kafkalite.storage.log import Log, wall_clock_ms
from kafkalite.storage.log_dir_failure import KafkaStorageError, LogDirFailureChannel
from kafkalite.storage.producer_state import DEFAULT_PRODUCER_ID_EXPIRATION_MS
from kafkalite.storage.volume import FILES, Volume

log = logging.getLogger("kafkalite.storage.log_manager")

T = TypeVar("T")
# The controller quorum's metadata log lives in <log dir>/__cluster_metadata-0 (Kafka's
# KafkaRaftServer.MetadataTopic); the LogManager leaves it to the RaftManager.
METADATA_TOPIC = "__cluster_metadata"


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
    where the files are (on disk unless told otherwise, volume.py). A dir that cannot be loaded
    is offline from the start; KafkaStorageError if none can."""

    def __init__(
        self,
        log_dirs: Iterable[Path | str],
        config_for: Callable[[str], LogConfig] | None = None,
        now_ms: Callable[[], int] = wall_clock_ms,
        producer_id_expiration_ms: int = DEFAULT_PRODUCER_ID_EXPIRATION_MS,
        cleaner_config: CleanerConfig | None = None,
        volume: Volume = FILES,
        failure_channel: LogDirFailureChannel | None = None,
    ) -> None:
        self.volume = volume
        self._dirs = [_LogDir(Path(d), volume) for d in log_dirs]
        if not self._dirs:
            raise ValueError("at least one log dir is needed")
        self.failure_channel = failure_channel or LogDirFailureChannel()
        self._config_for = config_for or (lambda topic: LogConfig())
        self._now_ms = now_ms
        self._producer_id_expiration_ms = producer_id_expiration_ms
        self._lock = threading.Lock()
        self._logs: dict[TopicPartition, Log] = {}
        self._futures: dict[TopicPartition, Log] = {}  # future logs (AlterReplicaLogDirs)
        self._deleting: list[tuple[int, Log, Path]] = []  # (remove at ms, log, its renamed directory)
        self._dir_of: dict[TopicPartition, _LogDir] = {}
        self._future_dir_of: dict[TopicPartition, _LogDir] = {}
        # Where a partition not hosted yet goes when it comes (AlterReplicaLogDirs before it).
        self.preferred_dirs: dict[TopicPartition, Path] = {}
        for log_dir in self._dirs:
            try:
                self._load_dir(log_dir)
            except OSError as e:  # Kafka: the dir is offline, the others load
                self._drop_dir_logs(log_dir)
                self.failure_channel.maybe_add_offline_log_dir(
                    log_dir.path, f"Error while loading log dir {log_dir.path}", e)
        if not self.online_dirs:
            raise KafkaStorageError(
                f"Shutdown broker because all log dirs in {', '.join(str(d.path) for d in self._dirs)} "
                "have failed")
        # Kafka's LogManager owns the cleaner; its threads start with start_cleaner().
        self.cleaner = LogCleaner(cleaner_config or CleanerConfig(enable=False), self._cleanable,
                                  now_ms, volume)

    def start_cleaner(self) -> None:
        """The log cleaner's threads (log.cleaner.enable, log.cleaner.threads)."""
        self.cleaner.startup()

    def _load_dir(self, log_dir: _LogDir) -> None:
        volume = self.volume
        volume.mkdir(log_dir.path)
        if not volume.is_dir(log_dir.path):
            raise NotADirectoryError(20, "Not a directory", str(log_dir.path))
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
            future = child.name.endswith(FUTURE_DIR_SUFFIX)
            try:
                tp = TopicPartition(*(parse_log_dir_name(child.name) if future
                                      else parse_partition_dir_name(child.name)))
            except ValueError:
                continue  # not a partition (other state)
            if tp.topic == METADATA_TOPIC:
                continue  # the controller quorum's log (kafkalite.raft), not a topic's (Kafka's LogManager)
            logs, dirs = (self._futures, self._future_dir_of) if future else (self._logs, self._dir_of)
            if tp in logs:
                kind = "future log" if future else "log"
                raise RuntimeError(f"Duplicate {kind} directories for {tp.topic}-{tp.partition}: {child}")
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
            logs[tp] = loaded
            dirs[tp] = log_dir
            if future:
                log.info("Loaded the future log of %s-%d in %s: its move goes on", tp.topic, tp.partition,
                         log_dir.path)
        log_dir.clean_shutdown.delete()

    # -- dirs ------------------------------------------------------------------------------------

    @property
    def log_dirs(self) -> list[Path]:
        """Every dir of log.dirs, online or not, in the configured order."""
        return [d.path for d in self._dirs]

    @property
    def online_dirs(self) -> list[Path]:
        return [d.path for d in self._dirs if self.is_online(d.path)]

    @property
    def offline_dirs(self) -> list[Path]:
        return [d.path for d in self._dirs if not self.is_online(d.path)]

    def is_online(self, path: Path | str) -> bool:
        return not self.failure_channel.has_offline_log_dir(path)

    def find_dir(self, path: Path | str) -> Path | None:
        """The log dir ``path`` names (absolute or as configured), or None if it is none of them."""
        wanted = Path(path).absolute()
        for d in self._dirs:
            if d.path.absolute() == wanted:
                return d.path
        return None

    def _log_dir(self, path: Path) -> _LogDir:
        for d in self._dirs:
            if d.path == path:
                return d
        raise ValueError(f"{path} is not a log dir")

    def io(self, path: Path, what: str) -> DirIo:
        """Work on the files of log dir ``path``: an OSError (not already a KafkaStorageError)
        takes the dir offline and is raised as a KafkaStorageError (Kafka's
        maybeHandleIOException)."""
        return DirIo(self, path, what)

    def handle_log_dir_failure(self, path: Path) -> tuple[list[TopicPartition], list[TopicPartition]]:
        """Forget the logs of an offline dir (Kafka's LogManager.handleLogDirFailure): their files
        are closed, nothing more is written there. The (current, future) partitions it held."""
        log_dir = self._log_dir(path)
        current, future = self._drop_dir_logs(log_dir)
        for lg in [*current.values(), *future.values()]:
            try:
                lg.close_handlers()
            except OSError:
                pass
        log.warning("Logs for partitions %s are offline and logs for future partitions %s are offline "
                    "due to failure on log directory %s",
                    sorted(f"{t}-{p}" for t, p in current), sorted(f"{t}-{p}" for t, p in future), path)
        return list(current), list(future)

    def _drop_dir_logs(self, log_dir: _LogDir) -> tuple[dict[TopicPartition, Log], dict[TopicPartition, Log]]:
        with self._lock:
            current = {tp: self._logs.pop(tp) for tp, d in list(self._dir_of.items()) if d is log_dir}
            future = {tp: self._futures.pop(tp)
                      for tp, d in list(self._future_dir_of.items()) if d is log_dir}
            for tp in current:
                del self._dir_of[tp]
            for tp in future:
                del self._future_dir_of[tp]
        return current, future

    # -- logs ------------------------------------------------------------------------------------

    def get_log(self, topic: str, partition: int) -> Log | None:
        return self._logs.get(TopicPartition(topic, partition))

    def get_future_log(self, topic: str, partition: int) -> Log | None:
        return self._futures.get(TopicPartition(topic, partition))

    def all_logs(self) -> dict[TopicPartition, Log]:
        with self._lock:
            return dict(self._logs)

    def all_future_logs(self) -> dict[TopicPartition, Log]:
        with self._lock:
            return dict(self._futures)

    def dir_of(self, topic: str, partition: int, future: bool = False) -> Path | None:
        """The log dir of the partition's (future) log, None if there is none."""
        d = (self._future_dir_of if future else self._dir_of).get(TopicPartition(topic, partition))
        return d.path if d is not None else None

    def _next_log_dir(self) -> _LogDir:
        """The online dir with the fewest logs, future ones included (Kafka's nextLogDirs)."""
        online = [d for d in self._dirs if self.is_online(d.path)]
        if not online:
            raise KafkaStorageError("No log dir is online")
        counts = {id(d): 0 for d in online}
        for d in [*self._dir_of.values(), *self._future_dir_of.values()]:
            if id(d) in counts:
                counts[id(d)] += 1
        return min(online, key=lambda d: counts[id(d)])

    def get_or_create(self, topic: str, partition: int, config: LogConfig | None = None,
                      is_new: bool = True) -> Log:
        """The partition's log, created if there is none: in the dir AlterReplicaLogDirs named
        for it, else the online dir with the fewest logs. A partition that is not new is not
        created while some dir is offline (KafkaStorageError: its log may be there)."""
        tp = TopicPartition(topic, partition)
        with self._lock:
            existing = self._logs.get(tp)
            if existing is not None:
                return existing
            offline = self.offline_dirs
            if not is_new and offline:
                raise KafkaStorageError(
                    f"Can not create log for {topic}-{partition} because log directories "
                    f"{', '.join(map(str, offline))} are offline")
            preferred = self.preferred_dirs.pop(tp, None)
            log_dir = (self._log_dir(preferred) if preferred is not None and self.is_online(preferred)
                       else self._next_log_dir())
        with self.io(log_dir.path, f"creating the log of {topic}-{partition}"):
            created = Log(
                log_dir.path / partition_dir_name(topic, partition),
                config or self._config_for(topic),
                had_clean_shutdown=True,  # nothing to recover in a new directory
                now_ms=self._now_ms,
                producer_id_expiration_ms=self._producer_id_expiration_ms,
                volume=self.volume,
            )
        with self._lock:
            raced = self._logs.get(tp)
            if raced is not None:
                return raced
            self._logs[tp] = created
            self._dir_of[tp] = log_dir
        log.info("Created log for partition %s-%d in %s", topic, partition, log_dir.path)
        return created

    def get_or_create_future(self, topic: str, partition: int, path: Path) -> Log:
        """The partition's future log in dir ``path`` (created there if there is none; one in
        another dir is removed first: the destination changed)."""
        tp = TopicPartition(topic, partition)
        log_dir = self._log_dir(path)
        with self._lock:
            existing = self._futures.get(tp)
            if existing is not None and self._future_dir_of[tp] is log_dir:
                return existing
        if existing is not None:
            self.abort_future(topic, partition)
        with self.io(log_dir.path, f"creating the future log of {topic}-{partition}"):
            current = self._logs.get(tp)
            created = Log(
                log_dir.path / future_dir_name(topic, partition, uuid.uuid4().hex),
                current.config if current is not None else self._config_for(topic),
                had_clean_shutdown=True,
                now_ms=self._now_ms,
                producer_id_expiration_ms=self._producer_id_expiration_ms,
                volume=self.volume,
            )
        with self._lock:
            self._futures[tp] = created
            self._future_dir_of[tp] = log_dir
        log.info("Created the future log of %s-%d in %s", topic, partition, log_dir.path)
        return created

    def abort_future(self, topic: str, partition: int) -> bool:
        """Remove the partition's future log (its move is cancelled); whether there was one."""
        tp = TopicPartition(topic, partition)
        with self._lock:
            removed = self._futures.pop(tp, None)
            log_dir = self._future_dir_of.pop(tp, None)
        if removed is None or log_dir is None:
            return False
        self._schedule_delete(removed, log_dir, tp)
        log.info("Removed the future log of %s-%d from %s", topic, partition, log_dir.path)
        return True

    def replace_current_with_future(self, topic: str, partition: int) -> Log:
        """Kafka's replaceCurrentWithFutureLog: the future log becomes the partition's log,
        renamed ``<topic>-<partition>`` in its dir; the current log's directory is deleted as a
        deleted partition's is (renamed ``-delete`` at once, removed after file.delete.delay.ms).
        The caller holds off appends (the partition's lock) and has checked that the future log
        has everything the current one has. The new log, reopened from its renamed directory."""
        tp = TopicPartition(topic, partition)
        with self._lock:
            future = self._futures[tp]
            dest = self._future_dir_of[tp]
            current = self._logs.get(tp)
            source = self._dir_of.get(tp)
        with self.io(dest.path, f"swapping in the future log of {topic}-{partition}"):
            if current is not None:  # epochs begun with no batch yet (a leadership) are not copied
                latest = future.latest_epoch
                for entry in current.leader_epoch_cache.entries():
                    if latest is None or entry.epoch > latest:
                        future.maybe_assign_epoch_start_offset(entry.epoch, entry.start_offset)
            future.flush()
            future.close()
            target = dest.path / partition_dir_name(topic, partition)
            self.volume.replace(future.dir, target)
            self.volume.fsync_dir(dest.path)
            swapped = Log(target, future.config, log_start_offset=future.log_start_offset,
                          recovery_point=future.log_end_offset, had_clean_shutdown=True,
                          now_ms=self._now_ms, producer_id_expiration_ms=self._producer_id_expiration_ms,
                          volume=self.volume)
        if current is not None:
            swapped.update_high_watermark(current.high_watermark)
            swapped.maybe_increment_log_start_offset(current.log_start_offset)
        with self._lock:
            del self._futures[tp]
            del self._future_dir_of[tp]
            self._logs[tp] = swapped
            self._dir_of[tp] = dest
        if current is not None and source is not None:
            self._schedule_delete(current, source, tp)
        self._checkpoint_dir(dest)
        log.info("The log of %s-%d moved from %s to %s", topic, partition,
                 source.path if source is not None else "nowhere", dest.path)
        return swapped

    def set_producer_id_expiration_ms(self, ms: int) -> None:
        """producer.id.expiration.ms changed while running: every log, and those made later."""
        self._producer_id_expiration_ms = ms
        for partition_log in self.all_logs().values():
            partition_log.producer_id_expiration_ms = ms

    def update_config(self, topic: str, config: LogConfig) -> None:
        """New settings for every partition of ``topic`` (they apply from the next append or check)."""
        for tp, partition_log in [*self.all_logs().items(), *self.all_future_logs().items()]:
            if tp.topic == topic:
                partition_log.config = config

    def delete(self, topic: str, partition: int, checkpoint: bool = True) -> bool:
        """Take the partition's log (and future log) away; whether there was one. As Kafka does,
        its directory is renamed ``<topic>-<partition>.<id>-delete`` at once and removed after
        file.delete.delay.ms (``delete_logs``): a response still sending from its files
        (sendfile) keeps valid file descriptors until then. ``checkpoint=False``: the dir's
        offset checkpoints are left for the caller's ``checkpoint_dirs`` once it has deleted
        them all (Kafka's asyncDelete(checkpoint = false) in ReplicaManager.stopPartitions:
        one rewrite per dir, not one per partition)."""
        tp = TopicPartition(topic, partition)
        self.abort_future(topic, partition)
        self.preferred_dirs.pop(tp, None)
        with self._lock:
            removed = self._logs.pop(tp, None)
            log_dir = self._dir_of.pop(tp, None)
        if removed is None or log_dir is None:
            return False
        self._schedule_delete(removed, log_dir, tp, checkpoint)
        log.info("Deleted log for partition %s-%d in %s (files removed after %d ms)", topic, partition,
                 log_dir.path, removed.config.file_delete_delay_ms)
        return True

    def _schedule_delete(self, removed: Log, log_dir: _LogDir, tp: TopicPartition,
                         checkpoint: bool = True) -> None:
        self.cleaner.forget(log_dir.path, tp)
        renamed = removed.dir.with_name(delete_dir_name(tp.topic, tp.partition, uuid.uuid4().hex))
        with self.io(log_dir.path, f"deleting the log of {tp.topic}-{tp.partition}"):
            self.volume.replace(removed.dir, renamed)
        with self._lock:
            self._deleting.append((self._now_ms() + removed.config.file_delete_delay_ms, removed, renamed))
        if checkpoint:
            self._checkpoint_dir(log_dir)

    def checkpoint_dirs(self) -> None:
        """Every online dir's offset checkpoints rewritten (after deletions without them)."""
        for d in list(self._dirs):
            if self.is_online(d.path):
                self._checkpoint_dir(d)

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

    def _each_log(self, what: str, work: Callable[[Log], T]) -> list[T]:
        """``work`` on every current log, an OSError taking the log's dir offline (that log is
        skipped; the others go on)."""
        results: list[T] = []
        for tp, partition_log in self.all_logs().items():
            path = partition_log.dir.parent
            try:
                with self.io(path, f"{what} of {tp.topic}-{tp.partition}"):
                    results.append(work(partition_log))
            except KafkaStorageError:
                continue
        return results

    def cleanup_logs(self) -> int:
        """Retention on every log (log.retention.check.interval.ms); the segments deleted."""
        return sum(self._each_log("retention", Log.delete_old_segments))

    def remove_expired_producers(self) -> int:
        """Forget, in every log, the producers idle for producer.id.expiration.ms (Kafka runs it
        every producer.id.expiration.check.interval.ms, its own task); how many."""
        now = self._now_ms()
        return sum(partition_log.remove_expired_producers(now) for partition_log in self.all_logs().values())

    def flush_rolled(self) -> None:
        """fsync the segments rolled since the last call and checkpoint the recovery points."""
        self._each_log("flushing", Log.flush_rolled)
        self.checkpoint_recovery_offsets()

    def checkpoint_recovery_offsets(self) -> None:
        for log_dir, logs in self._by_dir():
            with self._checkpointing(log_dir, "the recovery points"):
                log_dir.recovery_points.write({tp: lg.recovery_point for tp, lg in logs.items()})

    def checkpoint_log_start_offsets(self) -> None:
        for log_dir, logs in self._by_dir():
            with self._checkpointing(log_dir, "the log start offsets"):
                log_dir.log_start_offsets.write({tp: lg.log_start_offset for tp, lg in logs.items()})

    def checkpoint_high_watermarks(self) -> None:
        for log_dir, logs in self._by_dir():
            with self._checkpointing(log_dir, "the high watermarks"):
                log_dir.high_watermarks.write({tp: lg.high_watermark for tp, lg in logs.items()})

    @contextmanager
    def _checkpointing(self, log_dir: _LogDir, what: str) -> Iterator[None]:
        try:
            with self.io(log_dir.path, f"writing the checkpoint of {what}"):
                yield
        except KafkaStorageError:
            pass  # the dir is offline (now or already): nothing to checkpoint there

    def _checkpoint_dir(self, log_dir: _LogDir) -> None:
        logs = dict(self._by_dir([log_dir]))[log_dir] if self.is_online(log_dir.path) else {}
        with self._checkpointing(log_dir, "every offset"):
            log_dir.recovery_points.write({tp: lg.recovery_point for tp, lg in logs.items()})
            log_dir.log_start_offsets.write({tp: lg.log_start_offset for tp, lg in logs.items()})
            log_dir.high_watermarks.write({tp: lg.high_watermark for tp, lg in logs.items()})

    def _by_dir(self, dirs: list[_LogDir] | None = None) -> list[tuple[_LogDir, dict[TopicPartition, Log]]]:
        """The logs of each online dir, current and future ones (which are never in the same dir)."""
        with self._lock:
            result = []
            for d in dirs if dirs is not None else self._dirs:
                if not self.is_online(d.path):
                    continue
                logs = {tp: lg for tp, lg in self._logs.items() if self._dir_of[tp] is d}
                logs.update({tp: lg for tp, lg in self._futures.items() if self._future_dir_of[tp] is d})
                result.append((d, logs))
            return result

    def _cleanable(self) -> dict[Path, dict[TopicPartition, Log]]:
        """What the cleaner may clean: the current logs of online dirs whose partition is not
        being moved (Kafka pauses the cleaning of a partition with a future log)."""
        with self._lock:
            moving = set(self._futures)
            return {d.path: {tp: lg for tp, lg in self._logs.items()
                             if self._dir_of[tp] is d and tp not in moving}
                    for d in self._dirs if self.is_online(d.path)}

    # -- shutdown --------------------------------------------------------------------------------

    def shutdown(self, broker_epoch: int = -1) -> None:
        """Kafka's clean shutdown: flush and close every log, write the checkpoints, then the
        marker that lets the next start skip recovery (online dirs only)."""
        self.cleaner.shutdown()  # no round may swap segments into a closed log
        for partition_log in [*self.all_logs().values(), *self.all_future_logs().values()]:
            try:
                with self.io(partition_log.dir.parent, "closing a log"):
                    partition_log.flush()
                    partition_log.close()
            except KafkaStorageError:
                partition_log.close_handlers()
        self.delete_logs(force=True)  # nothing sends from them any more
        for log_dir in self._dirs:
            if not self.is_online(log_dir.path):
                continue
            self._checkpoint_dir(log_dir)
            with self._checkpointing(log_dir, "the clean shutdown marker"):
                log_dir.clean_shutdown.write(broker_epoch)
        log.info("Shut down the logs of %s cleanly", ", ".join(str(d) for d in self.online_dirs))


class DirIo:
    """LogManager.io's context: a class rather than a generator, because every produce's append
    and every fetch's read enters one (a ``@contextmanager`` costs a generator and its frames)."""

    __slots__ = ("_manager", "_path", "_what")

    def __init__(self, manager: LogManager, path: Path, what: str) -> None:
        self._manager, self._path, self._what = manager, path, what

    def __enter__(self) -> None:
        if not self._manager.is_online(self._path):
            raise KafkaStorageError(f"{self._what}: log dir {self._path} is offline")

    def __exit__(self, typ: type[BaseException] | None, exc: BaseException | None,
                 tb: object) -> Literal[False]:
        if exc is None or isinstance(exc, KafkaStorageError) or not isinstance(exc, OSError):
            return False
        what, path = self._what, self._path
        channel = self._manager.failure_channel
        channel.maybe_add_offline_log_dir(path, f"Error while {what} in dir {path}", exc)
        raise KafkaStorageError(f"Error while {what} in dir {path}: {exc}") from exc
