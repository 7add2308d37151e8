"""Kafka's LogDirFailureChannel: where an I/O error on a log dir is reported, once per dir.

Whatever touches a log dir's files and fails with an OSError (an append that rolls a segment, a
checkpoint, a flush, the load of the dir at start-up) reports the dir here; the first report of a
dir marks it offline and queues it for the broker's LogDirFailureHandler thread
(ReplicaManager.handle_log_dir_failure), later reports of the same dir are only logged at debug.
The caller answers the request at hand with KAFKA_STORAGE_ERROR (``KafkaStorageError``).
"""

from __future__ import annotations

import logging
import queue
import threading
from pathlib import Path

log = logging.getLogger("kafkalite.storage.log_dir_failure")


class KafkaStorageError(OSError):
    """An operation on a log dir that is offline, or that failed and took it offline (Kafka's
    KafkaStorageException: KAFKA_STORAGE_ERROR to the client)."""


class LogDirFailureChannel:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._offline: set[Path] = set()
        self._queue: queue.Queue[Path | None] = queue.Queue()  # None: wake-up (``wake``)

    def has_offline_log_dir(self, path: Path | str) -> bool:
        if not self._offline:  # no dir ever failed: every append and read asks, so no lock, no Path
            return False
        with self._lock:
            return Path(path) in self._offline

    def maybe_add_offline_log_dir(self, path: Path, message: str, error: BaseException | None = None) -> bool:
        """Report an I/O error on ``path``; whether this report took it offline (the first)."""
        path = Path(path)
        with self._lock:
            if path in self._offline:
                log.debug("%s (log dir %s is offline already)", message, path)
                return False
            self._offline.add(path)
        log.error("%s: log dir %s goes offline (%s)", message, path, error)
        self._queue.put(path)
        return True

    def take_next_offline_log_dir(self, timeout: float | None = None) -> Path | None:
        """The next dir gone offline, waiting up to ``timeout`` seconds; None if none came (or
        ``wake`` was called)."""
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None

    def wake(self) -> None:
        """End a ``take_next_offline_log_dir`` waiting now (it returns None): a stopping broker's
        handler thread then stops at once instead of at its next timeout."""
        self._queue.put(None)
