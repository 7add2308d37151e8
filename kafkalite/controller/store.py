"""The controller's state on disk: an sqlite3 database under the first log dir.

Holds what must survive a controller restart: the controller epoch (bumped on every start), the
last broker epoch given (so epochs always grow), the first producer id of the next block (so no
producer id is given twice), and every topic with its id, replica assignment, leadership and
topic-level config overrides (CreateTopics' configs and AlterConfigs'; they go with the topic),
the dynamic broker configs (AlterConfigs of a broker id, or of '' for the cluster default), and
the partition reassignments in progress (the replicas being added and removed; the partition's
replicas row holds the whole transitional set), so that a restarted controller resumes them,
and the ACL bindings (CreateAcls / DeleteAcls: one row per binding, Kafka's codes).
Each change is one transaction. Only the controller's event thread writes it.
A write that fails (a full disk: sqlite3.OperationalError) rolls back and raises; the controller
decides what that means (see KafkaController._write_store).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import uuid
from collections.abc import Mapping

from kafkalite.common.scram import ScramCredential

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS topics (name TEXT PRIMARY KEY, topic_id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS partitions (
    topic TEXT NOT NULL REFERENCES topics(name) ON DELETE CASCADE,
    partition INTEGER NOT NULL,
    replicas TEXT NOT NULL,
    leader INTEGER NOT NULL,
    leader_epoch INTEGER NOT NULL,
    isr TEXT NOT NULL,
    partition_epoch INTEGER NOT NULL,
    PRIMARY KEY (topic, partition)
);
CREATE TABLE IF NOT EXISTS topic_configs (
    topic TEXT NOT NULL REFERENCES topics(name) ON DELETE CASCADE,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (topic, name)
);
CREATE TABLE IF NOT EXISTS broker_configs (
    broker TEXT NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (broker, name)
);
CREATE TABLE IF NOT EXISTS scram_credentials (
    user TEXT NOT NULL,
    mechanism INTEGER NOT NULL,
    salt BLOB NOT NULL,
    stored_key BLOB NOT NULL,
    server_key BLOB NOT NULL,
    iterations INTEGER NOT NULL,
    PRIMARY KEY (user, mechanism)
);
CREATE TABLE IF NOT EXISTS reassignments (
    topic TEXT NOT NULL REFERENCES topics(name) ON DELETE CASCADE,
    partition INTEGER NOT NULL,
    adding TEXT NOT NULL,
    removing TEXT NOT NULL,
    PRIMARY KEY (topic, partition)
);
CREATE TABLE IF NOT EXISTS acls (
    resource_type INTEGER NOT NULL,
    resource_name TEXT NOT NULL,
    pattern_type INTEGER NOT NULL,
    principal TEXT NOT NULL,
    host TEXT NOT NULL,
    operation INTEGER NOT NULL,
    permission_type INTEGER NOT NULL,
    PRIMARY KEY (resource_type, resource_name, pattern_type, principal, host, operation, permission_type)
);
"""

# (topic, partition) -> (adding replicas, removing replicas) of a reassignment in progress.
StoredReassignments = Mapping[tuple[str, int], tuple[tuple[int, ...], tuple[int, ...]]]


@dataclasses.dataclass(frozen=True, order=True)
class StoredPartition:
    topic: str
    partition: int
    replicas: tuple[int, ...]
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    partition_epoch: int


class ControllerStore:
    def __init__(self, directory: str | None) -> None:
        """``directory`` None: a database in memory (a broker with log.storage=memory), gone with
        the controller."""
        if directory is None:
            self.path = ":memory:"
        else:
            os.makedirs(directory, exist_ok=True)
            self.path = os.path.join(directory, "controller.db")
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA foreign_keys = ON")
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        self._db.close()

    def _get(self, key: str, default: int) -> int:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return int(row[0]) if row else default

    def _set(self, key: str, value: int) -> None:
        self._db.execute("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE "
                         "SET value = excluded.value", (key, value))

    def _increment(self, key: str) -> int:
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            value = self._get(key, 0) + 1
            self._set(key, value)
        return value

    def bump_controller_epoch(self) -> int:
        """The epoch for this controller's term: one above any before it."""
        return self._increment("controller_epoch")

    def next_broker_epoch(self) -> int:
        """A broker epoch above every one given before, across restarts."""
        return self._increment("broker_epoch")

    def allocate_producer_ids(self, size: int) -> int:
        """The first id of a new block of ``size`` producer ids; the block after it is on disk
        when this returns (Kafka's ProducerIdsRecord), so no id is given twice across restarts."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            first = self._get("next_producer_id", 0)
            self._set("next_producer_id", first + size)
        return first

    def next_producer_id(self) -> int:
        """The first id of the next block to be given (0 before any)."""
        return self._get("next_producer_id", 0)

    def create_topic(self, name: str, topic_id: uuid.UUID, partitions: list[StoredPartition],
                     configs: Mapping[str, str] | None = None) -> None:
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("INSERT INTO topics(name, topic_id) VALUES (?, ?)", (name, str(topic_id)))
            self._db.executemany(
                "INSERT INTO partitions VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(p.topic, p.partition, json.dumps(p.replicas), p.leader, p.leader_epoch,
                  json.dumps(p.isr), p.partition_epoch) for p in partitions])
            self._insert_configs({name: configs or {}})

    def add_partitions(self, partitions: list[StoredPartition]) -> None:
        """New partitions of existing topics (CreatePartitions)."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany(
                "INSERT INTO partitions VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(p.topic, p.partition, json.dumps(p.replicas), p.leader, p.leader_epoch,
                  json.dumps(p.isr), p.partition_epoch) for p in partitions])

    # The two config tables: (table, the column naming whose configs they are).
    _TOPICS = ("topic_configs", "topic")
    _BROKERS = ("broker_configs", "broker")

    def _insert_configs(self, configs: Mapping[str, Mapping[str, str]],
                        table: tuple[str, str] = _TOPICS) -> None:
        self._db.executemany(f"INSERT INTO {table[0]} VALUES (?, ?, ?)",
                             [(owner, name, value) for owner, props in configs.items()
                              for name, value in props.items()])

    def _replace_configs(self, table: tuple[str, str], owner: str, configs: Mapping[str, str]) -> None:
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(f"DELETE FROM {table[0]} WHERE {table[1]} = ?", (owner,))
            self._insert_configs({owner: configs}, table)

    def _load_configs(self, table: tuple[str, str]) -> dict[str, dict[str, str]]:
        configs: dict[str, dict[str, str]] = {}
        for owner, name, value in self._db.execute(
                f"SELECT {table[1]}, name, value FROM {table[0]} ORDER BY {table[1]}, name"):
            configs.setdefault(owner, {})[name] = value
        return configs

    def load_topic_configs(self) -> dict[str, dict[str, str]]:
        """Topic -> its config overrides (topics without any are left out)."""
        return self._load_configs(self._TOPICS)

    def set_topic_configs(self, topic: str, configs: Mapping[str, str]) -> None:
        """Replace the topic's overrides with ``configs`` (AlterConfigs, IncrementalAlterConfigs)."""
        self._replace_configs(self._TOPICS, topic, configs)

    def set_broker_configs(self, broker: str, configs: Mapping[str, str]) -> None:
        """Replace the dynamic configs of ``broker`` (an id, or '' for the cluster default)."""
        self._replace_configs(self._BROKERS, broker, configs)

    def load_broker_configs(self) -> dict[str, dict[str, str]]:
        """Broker ('' for the cluster default) -> its dynamic configs (those without any left out)."""
        return self._load_configs(self._BROKERS)

    def set_scram_credentials(self, user: str, credentials: Mapping[int, ScramCredential]) -> None:
        """Replace ``user``'s SCRAM credentials (mechanism type -> salted keys; empty: none)."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("DELETE FROM scram_credentials WHERE user = ?", (user,))
            self._db.executemany(
                "INSERT INTO scram_credentials VALUES (?, ?, ?, ?, ?, ?)",
                [(user, m, c.salt, c.stored_key, c.server_key, c.iterations) for m, c in credentials.items()])

    def load_scram_credentials(self) -> dict[str, dict[int, ScramCredential]]:
        """User -> mechanism type -> its salted keys."""
        out: dict[str, dict[int, ScramCredential]] = {}
        for user, m, salt, stored, server, iterations in self._db.execute(
                "SELECT user, mechanism, salt, stored_key, server_key, iterations FROM scram_credentials"):
            out.setdefault(user, {})[m] = ScramCredential(bytes(salt), bytes(stored), bytes(server),
                                                          iterations)
        return out

    # An ACL row: (resource type, resource name, pattern type, principal, host, operation,
    # permission type), the codes as Kafka's (controller/acls.py AclBinding).
    def add_acls(self, rows: list[tuple]) -> None:
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany("INSERT OR IGNORE INTO acls VALUES (?, ?, ?, ?, ?, ?, ?)",
                                 [tuple(int(v) if not isinstance(v, str) else v for v in r) for r in rows])

    def delete_acls(self, rows: list[tuple]) -> None:
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany(
                "DELETE FROM acls WHERE resource_type = ? AND resource_name = ? AND pattern_type = ? AND "
                "principal = ? AND host = ? AND operation = ? AND permission_type = ?",
                [tuple(int(v) if not isinstance(v, str) else v for v in r) for r in rows])

    def load_acls(self) -> list[tuple]:
        return list(self._db.execute("SELECT * FROM acls ORDER BY resource_type, resource_name, "
                                     "pattern_type, principal, host, operation, permission_type"))

    def update_partitions(self, partitions: list[StoredPartition]) -> None:
        if not partitions:
            return
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany(
                "UPDATE partitions SET replicas = ?, leader = ?, leader_epoch = ?, isr = ?, "
                "partition_epoch = ? WHERE topic = ? AND partition = ?",
                [(json.dumps(p.replicas), p.leader, p.leader_epoch, json.dumps(p.isr),
                  p.partition_epoch, p.topic, p.partition) for p in partitions])

    def update_reassignments(self, partitions: list[StoredPartition], started: StoredReassignments,
                             ended: list[tuple[str, int]]) -> None:
        """Partitions' new state with the reassignments that start (or change) and those that end,
        in one transaction."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany(
                "UPDATE partitions SET replicas = ?, leader = ?, leader_epoch = ?, isr = ?, "
                "partition_epoch = ? WHERE topic = ? AND partition = ?",
                [(json.dumps(p.replicas), p.leader, p.leader_epoch, json.dumps(p.isr),
                  p.partition_epoch, p.topic, p.partition) for p in partitions])
            self._db.executemany("DELETE FROM reassignments WHERE topic = ? AND partition = ?", ended)
            self._insert_reassignments(started)

    def _insert_reassignments(self, reassignments: StoredReassignments) -> None:
        self._db.executemany(
            "INSERT INTO reassignments VALUES (?, ?, ?, ?) ON CONFLICT(topic, partition) DO UPDATE "
            "SET adding = excluded.adding, removing = excluded.removing",
            [(t, p, json.dumps(list(adding)), json.dumps(list(removing)))
             for (t, p), (adding, removing) in reassignments.items()])

    def load_reassignments(self) -> dict[tuple[str, int], tuple[tuple[int, ...], tuple[int, ...]]]:
        """The reassignments in progress: (topic, partition) -> (adding, removing)."""
        return {(t, p): (tuple(json.loads(a)), tuple(json.loads(r))) for t, p, a, r in self._db.execute(
            "SELECT topic, partition, adding, removing FROM reassignments ORDER BY topic, partition")}

    def delete_topic(self, name: str) -> None:
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("DELETE FROM topics WHERE name = ?", (name,))

    def save_all(self, topics: dict[str, uuid.UUID], partitions: list[StoredPartition],
                 configs: Mapping[str, Mapping[str, str]] | None = None,
                 reassignments: StoredReassignments | None = None) -> None:
        """Replace every topic, partition, topic config and reassignment with these, in one
        transaction (the catch-up after writes failed: the store then holds exactly the
        controller's state)."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("DELETE FROM topics")
            self._db.executemany("INSERT INTO topics(name, topic_id) VALUES (?, ?)",
                                 [(name, str(tid)) for name, tid in topics.items()])
            self._db.executemany(
                "INSERT INTO partitions VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(p.topic, p.partition, json.dumps(p.replicas), p.leader, p.leader_epoch,
                  json.dumps(p.isr), p.partition_epoch) for p in partitions])
            self._insert_configs(configs or {})
            self._insert_reassignments(reassignments or {})

    def load(self) -> tuple[dict[str, uuid.UUID], list[StoredPartition]]:
        topics = {name: uuid.UUID(tid) for name, tid in self._db.execute("SELECT name, topic_id FROM topics")}
        parts = [
            StoredPartition(t, p, tuple(json.loads(r)), leader, epoch, tuple(json.loads(isr)), pe)
            for t, p, r, leader, epoch, isr, pe in self._db.execute(
                "SELECT topic, partition, replicas, leader, leader_epoch, isr, partition_epoch "
                "FROM partitions ORDER BY topic, partition")
        ]
        return topics, parts
