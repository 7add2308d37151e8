"""meta.properties: which cluster (and node) a log directory belongs to, as in Kafka's storage.

Kafka writes ``version``, ``cluster.id``, ``node.id`` and ``directory.id`` into ``meta.properties``
at the top of each log directory and refuses to start when they disagree with the configuration.
kafkalite does the same in every dir of log.dirs (``directory.id``, a random UUID made once per
dir and kept, is what the broker's heartbeat names a dir by when it goes offline: BrokerHeartbeat's
OfflineLogDirs). A dir that cannot be written is skipped here: the log manager takes it offline.
Where the cluster id comes from, in order:

1. ``meta.properties``, if a directory has already joined a cluster; a configured ``cluster.id``
   that differs is refused (:class:`ClusterIdMismatch`, one line naming both ids and the file);
2. the configured ``cluster.id``;
3. for a node that runs the controller, a new random id;
4. otherwise none yet: the broker adopts the controller's id at its first registration (as brokers
   did when the id lived with the controller in ZooKeeper) and then keeps it here.
"""

from __future__ import annotations

import logging
import os
import uuid
from pathlib import Path

from kafkalite.common.properties import format_properties, parse_properties
from kafkalite.common.uuids import new_base64_uuid, uuid_from_base64
from kafkalite.storage.volume import FILES, Volume

FILE_NAME = "meta.properties"

log = logging.getLogger("kafkalite.server.meta_properties")


class ClusterIdMismatch(Exception):
    """A log directory that belongs to another cluster than the one this node was asked to join."""

    def __init__(self, path: str, stored: str, other: str, source: str) -> None:
        super().__init__(
            f"{path} says this node belongs to cluster {stored}, but {source} is {other}: a node "
            f"belongs to one cluster; use another log.dirs, or delete {path} to let it join {other}")
        self.path, self.stored, self.other = path, stored, other


def new_cluster_id() -> str:
    """A new cluster id: a random Kafka UUID (kafka-storage random-uuid)."""
    return new_base64_uuid()


def path_for(log_dirs: list[str]) -> str:
    return os.path.join(log_dirs[0], FILE_NAME)


def _read(log_dir: str, volume: Volume) -> dict[str, str] | None:
    try:
        text = volume.read_bytes(Path(log_dir) / FILE_NAME).decode("utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:  # an unreadable dir: the log manager takes it offline
        log.warning("Cannot read %s: %s", Path(log_dir) / FILE_NAME, e)
        return None
    return parse_properties(text)


def stored_cluster_id(log_dirs: list[str], volume: Volume = FILES) -> str | None:
    """The cluster id of the first dir that has one."""
    for log_dir in log_dirs:
        props = _read(log_dir, volume)
        if props and props.get("cluster.id"):
            return props["cluster.id"]
    return None


def directory_id(log_dir: str, volume: Volume = FILES) -> uuid.UUID | None:
    """The dir's ``directory.id``, None if it has none (yet)."""
    props = _read(log_dir, volume)
    value = props.get("directory.id") if props else None
    if not value:
        return None
    try:
        return uuid_from_base64(value)
    except ValueError:
        return None


def write(log_dirs: list[str], cluster_id: str, node_id: int, volume: Volume = FILES) -> None:
    """Write each dir's meta.properties whole (a temporary file renamed over it: never half a
    file), keeping the dir's directory.id or making one."""
    for log_dir in log_dirs:
        props = _read(log_dir, volume) or {}
        dir_id = props.get("directory.id") or new_base64_uuid()
        text = format_properties({"version": "1", "cluster.id": cluster_id, "node.id": str(node_id),
                                  "directory.id": dir_id})
        try:
            volume.mkdir(Path(log_dir))
            volume.write_atomically(Path(log_dir) / FILE_NAME, text.encode("utf-8"))
        except OSError as e:
            log.warning("Cannot write %s: %s", Path(log_dir) / FILE_NAME, e)


def resolve(log_dirs: list[str], node_id: int, configured: str | None, generate: bool,
            volume: Volume = FILES) -> str | None:
    """This node's cluster id (see the module's docstring), written to meta.properties when new;
    None when it is to be adopted from the controller."""
    stored = stored_cluster_id(log_dirs, volume)
    if stored is not None:
        if configured is not None and configured != stored:
            raise ClusterIdMismatch(path_for(log_dirs), stored, configured, "cluster.id")
        return stored
    cluster_id = configured or (new_cluster_id() if generate else None)
    if cluster_id is not None:
        write(log_dirs, cluster_id, node_id, volume)
    return cluster_id
