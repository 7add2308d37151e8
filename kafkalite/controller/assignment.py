"""Topic validation and replica assignment as Kafka does them without racks (Kafka's
Topic.validate and AdminUtils.assignReplicasToBrokersRackUnaware)."""

from __future__ import annotations

import random
import re

from kafkalite.common.errors import ApiError
from kafkalite.protocol import error_codes as E

MAX_NAME_LENGTH = 249
_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")


def validate_topic_name(name: str) -> None:
    if not name:
        raise ApiError(E.INVALID_TOPIC_EXCEPTION, "Topic name is illegal, it can't be empty")
    if name in (".", ".."):
        raise ApiError(E.INVALID_TOPIC_EXCEPTION, "Topic name cannot be \".\" or \"..\"")
    if len(name) > MAX_NAME_LENGTH:
        raise ApiError(E.INVALID_TOPIC_EXCEPTION,
                         f"Topic name is illegal, it can't be longer than {MAX_NAME_LENGTH} characters, "
                         f"topic name: {name}")
    if not _LEGAL.fullmatch(name):
        raise ApiError(E.INVALID_TOPIC_EXCEPTION,
                         f"Topic name \"{name}\" is illegal, it contains a character other than ASCII "
                         "alphanumerics, '.', '_' and '-'")


def assign_replicas(partitions: int, replication_factor: int, brokers: list[int],
                    rng: random.Random | None = None, fixed_start_index: int = -1) -> dict[int, list[int]]:
    """Partition -> replicas. The first replica of each partition goes round-robin from a random
    broker; the others follow at a shift that grows every time the partitions wrap around the
    brokers, so that leaders and followers both spread evenly."""
    if partitions <= 0:
        raise ApiError(E.INVALID_PARTITIONS, "Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise ApiError(E.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0.")
    if replication_factor > len(brokers):
        raise ApiError(E.INVALID_REPLICATION_FACTOR,
                         f"Replication factor: {replication_factor} larger than available brokers: "
                         f"{len(brokers)}.")
    rng = rng or random.Random()
    ids = sorted(brokers)
    n = len(ids)
    start = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    shift = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    result: dict[int, list[int]] = {}
    for p in range(partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start) % n
        replicas = [ids[first]]
        for j in range(replication_factor - 1):
            replicas.append(ids[(first + 1 + (shift + j) % (n - 1)) % n])
        result[p] = replicas
    return result
