"""Moving a replica between this broker's log dirs (KIP-113): Kafka's ReplicaAlterLogDirsThread.

AlterReplicaLogDirs gives a partition a *future log* in the destination dir (storage/log_manager.py);
this thread fills it from the partition's current log, on the same broker, as a follower fills its
log from the leader: whole batches read from the current log's end of the future log (up to the
current log's end), appended as they are (``append_as_follower``: same offsets, epochs and
producer state), the future log's high watermark the current one's capped by its end. Before each
copy the future log is brought back into agreement with the current one where that one was
truncated meanwhile (a follower's truncation, an unclean leader): to the end of its latest epoch in
the current log (KIP-279), or started over at the current log start offset when retention or
DeleteRecords passed it.

When the future log has everything, it replaces the current log (Kafka's
maybeReplaceCurrentWithFutureReplica): under the partition's lock, which appends as leader and as
follower take, the last batches are copied and the logs swapped, so no record appended meanwhile
is lost. The current log's directory is then deleted as a deleted partition's is.

The copy is throttled to ``replica.alter.log.dirs.io.max.bytes.per.second`` (a dynamic,
cluster-wide broker setting: ``reconfigure`` applies a new value at once). One thread
(``ReplicaAlterLogDirsThread-0``) moves every partition, in turns of at most
replica.fetch.max.bytes each; it waits when there is nothing to move.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from kafkalite.common.errors import ConfigError
from kafkalite.storage.log import FetchIsolation, Log
from kafkalite.storage.log_dir_failure import KafkaStorageError
from kafkalite.storage.log_manager import LogManager

from .partition import Partition

log = logging.getLogger("kafkalite.server.replication.alter_log_dirs")

RATE_SETTING = "replica.alter.log.dirs.io.max.bytes.per.second"
UNLIMITED = 2**63 - 1
IDLE_WAIT = 1.0  # seconds between looks when nothing moves (woken at once by add)

TopicPartition = tuple[str, int]


class ReplicaAlterLogDirsThread(threading.Thread):
    """``partition_of(key)`` is the hosted Partition (None if no longer); ``on_swapped(key, log)``
    is told when a partition's log was replaced (the ReplicaManager then resumes cleaning and
    checkpoints). ``chunk_bytes``: the most one turn copies of a partition."""

    reconfigurable_configs = frozenset({RATE_SETTING})

    def __init__(self, log_manager: LogManager, partition_of: Callable[[TopicPartition], Partition | None],
                 chunk_bytes: int, max_bytes_per_second: int = UNLIMITED,
                 on_swapped: Callable[[TopicPartition], None] = lambda key: None) -> None:
        super().__init__(name="ReplicaAlterLogDirsThread-0", daemon=True)
        self.log_manager = log_manager
        self.partition_of = partition_of
        self.chunk_bytes = max(1, chunk_bytes)
        self.max_bytes_per_second = max_bytes_per_second
        self.on_swapped = on_swapped
        self._lock = threading.Lock()
        self._partitions: set[TopicPartition] = set()
        self._wake = threading.Event()
        self._halt = threading.Event()
        self._next_allowed = time.monotonic()  # the throttle: when the next byte may be copied
        self.bytes_copied = 0
        self.swaps = 0

    # --- what to move ---------------------------------------------------------------------------

    def add_partitions(self, keys: list[TopicPartition]) -> None:
        with self._lock:
            self._partitions.update(keys)
        self._wake.set()

    def remove_partitions(self, keys: list[TopicPartition]) -> None:
        with self._lock:
            self._partitions.difference_update(keys)

    def moving(self) -> list[TopicPartition]:
        with self._lock:
            return sorted(self._partitions)

    # --- Reconfigurable (replica.alter.log.dirs.io.max.bytes.per.second) ---------------------

    def validate_reconfiguration(self, new: Mapping[str, Any]) -> None:
        value = new.get(RATE_SETTING, UNLIMITED)
        if not isinstance(value, int) or value < 1:
            raise ConfigError(f"Invalid value {value} for configuration {RATE_SETTING}: "
                              "Value must be at least 1")

    def reconfigure(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        self.max_bytes_per_second = int(new.get(RATE_SETTING, UNLIMITED))
        self._next_allowed = time.monotonic()
        self._wake.set()

    # --- the thread -----------------------------------------------------------------------------

    def shutdown(self, timeout: float = 5.0) -> None:
        self._halt.set()
        self._wake.set()
        if self.is_alive():
            self.join(timeout)

    def run(self) -> None:
        while not self._halt.is_set():
            keys = self.moving()
            progressed = False
            for key in keys:
                if self._halt.is_set():
                    return
                try:
                    progressed |= self._move_once(key)
                except KafkaStorageError as e:  # a dir went offline: the failure handler takes over
                    log.warning("Moving %s-%d stopped: %s", *key, e)
                    self.remove_partitions([key])
                except Exception:
                    log.exception("Moving %s-%d failed; trying again", *key)
                    self._halt.wait(IDLE_WAIT)
            if not progressed:
                self._wake.wait(IDLE_WAIT)
                self._wake.clear()

    def _move_once(self, key: TopicPartition) -> bool:
        """One turn for one partition: copy a chunk, swap if caught up; whether anything moved."""
        lm = self.log_manager
        partition = self.partition_of(key)
        future = lm.get_future_log(*key)
        if partition is None or future is None:
            self.remove_partitions([key])
            return False
        current = partition.log
        with lm.io(future.dir.parent, f"moving {key[0]}-{key[1]}"):
            copied = self._copy(current, future, self._allowance())
        if copied:
            self._throttle(copied)
        if future.log_end_offset < current.log_end_offset and copied:
            return True  # more to copy: the swap is tried once caught up
        with partition._lock:  # no append (as leader or follower) while the logs are compared and swapped
            if lm.get_future_log(*key) is not future or partition.log is not current:
                return True
            with lm.io(future.dir.parent, f"moving {key[0]}-{key[1]}"):
                tail = self._copy(current, future, UNLIMITED)
                if future.log_end_offset != current.log_end_offset:
                    return bool(copied or tail)
                partition.log = lm.replace_current_with_future(*key)
        self.remove_partitions([key])
        self.swaps += 1
        self.on_swapped(key)
        return True

    def _allowance(self) -> int:
        """How many bytes this turn may copy (the throttle's rate, one chunk at most)."""
        rate = self.max_bytes_per_second
        return self.chunk_bytes if rate >= UNLIMITED else max(1, min(self.chunk_bytes, rate))

    def _copy(self, current: Log, future: Log, max_bytes: int) -> int:
        """Bring ``future`` into agreement with ``current`` and copy batches from its end, up to
        ``max_bytes`` (one batch at least); the bytes copied."""
        self._reconcile(current, future)
        copied = 0
        while future.log_end_offset < current.log_end_offset and copied < max_bytes:
            records = current.read(future.log_end_offset, min(max_bytes - copied, self.chunk_bytes),
                                   FetchIsolation.LOG_END, min_one_message=True)
            data = records.read() if records.size else b""
            if not data:
                break
            future.append_as_follower(data)
            copied += len(data)
        future.update_high_watermark(min(current.high_watermark, future.log_end_offset))
        self.bytes_copied += copied
        return copied

    @staticmethod
    def _reconcile(current: Log, future: Log) -> None:
        """Truncate the future log where it no longer agrees with the current one."""
        if future.log_end_offset < current.log_start_offset or (
                future.log_end_offset == 0 and current.log_start_offset > 0):
            future.truncate_fully_and_start_at(current.log_start_offset)
            return
        epoch = future.latest_epoch
        if epoch is not None:
            found = current.end_offset_for_epoch(epoch)
            if found is not None:
                end_offset, current_epoch = found
                if current_epoch != epoch or end_offset < future.log_end_offset:
                    future.truncate_to(min(end_offset, future.log_end_offset))
        if future.log_end_offset > current.log_end_offset:
            future.truncate_to(current.log_end_offset)

    def _throttle(self, copied: int) -> None:
        """Hold the copy to max_bytes_per_second (waiting on the stop event)."""
        rate = self.max_bytes_per_second
        if rate >= UNLIMITED:
            return
        now = time.monotonic()
        self._next_allowed = max(self._next_allowed, now) + copied / rate
        delay = self._next_allowed - now
        if delay > 0:
            self._halt.wait(delay)
